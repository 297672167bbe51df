//! Importing users' traffic files: one timestamp per line, or an nginx/Apache access log,
//! streamed in chunks of any size into sorted absolute times in µs.
//!
//! The caller reads the file (the core reads none) and hands its bytes to an [`Importer`] in
//! chunks of any size; lines may straddle chunks. [`parse`] does it in one go.
//!
//! # Formats
//!
//! - **`seconds`**: epoch seconds with an optional fraction, `1700000000.25`. Small numbers
//!   (relative times such as `0.5`) are valid too.
//! - **`ms`**: epoch milliseconds with an optional fraction, `1700000000250`.
//! - **`iso`**: ISO 8601, `YYYY-MM-DDTHH:MM:SS[.frac][Z|±HH:MM|±HHMM|±HH]`, with `T` or a
//!   space between date and time (`T` and `Z` in either case); no zone means UTC. Years
//!   1970 to 9999; invalid dates and times (February 30, month 13, hour 24, second 60) are
//!   malformed.
//! - **`access-log`**: nginx's and Apache's common and combined formats,
//!   `host ident user [10/Oct/2000:13:55:36 -0700] "GET /x HTTP/1.1" 200 2326 "referer" "agent"`
//!   (referer and user agent optional, bytes may be `-`, anything after them ignored). Quoted
//!   fields may contain escaped `\"`. The log's resolution is 1 s.
//! - **`auto`** (the default) decides on the first non-blank line that parses: a
//!   `[dd/Mon/yyyy:` anywhere in it means an access log, a `YYYY-MM-DD` start ISO 8601, and a
//!   number at least 10^11 milliseconds, any smaller number seconds. Every later line is read
//!   in that format.
//!
//! Numbers are converted exactly, with integer arithmetic; digits below 1 µs are dropped
//! (truncated). Every line is trimmed; blank lines and lines starting with `#` are skipped.
//! Times must fall from 1970-01-01T00:00:00Z to the end of 9999 (UTC). A line that does not
//! parse, is not UTF-8 or is longer than 64 KiB is *malformed*: counted, its first five kept
//! with the reason, and skipped. Of an over-long line at most 64 KiB is ever held.
//!
//! A [`Filter`] keeps only the access-log lines whose field equals a value exactly (`Host` is
//! the client address; in quoted fields `\"` and `\\` compare as `"` and `\`).
//!
//! The whole file is refused with an [`Error`] when it is empty, compressed (gzip, zip, zstd,
//! bzip2, xz), binary (a NUL byte in its first 64 KiB), has no valid timestamp (the message
//! names the first malformed line), when the filter keeps no line, or when it holds more than
//! [`MAX_REPLAY`] timestamps.

use crate::error::Error;
use crate::time::Micros;
use serde::{Deserialize, Serialize};

mod access;
mod detect;
mod epoch;
mod iso;
mod reason;
mod scan;
mod stream;
#[cfg(test)]
mod tests;

pub use iso::civil_from_days;

/// An access-log line's time (µs since the epoch, to the second), client and status, for
/// `fit`.
#[cfg(feature = "fit")]
pub(crate) fn access_line(line: &[u8]) -> Option<(Micros, &[u8], u16)> {
    let (t, fields) = access::parse_access(line).ok()?;
    let status = std::str::from_utf8(fields.status()).ok()?.parse().ok()?;
    Some((t, fields.host(), status))
}

/// A time as logs write one, in µs since the epoch: ISO 8601, or epoch seconds (with a
/// fraction) or milliseconds (12 digits and more), for `fit`.
#[cfg(feature = "fit")]
pub(crate) fn log_time(text: &[u8]) -> Option<Micros> {
    match detect::detect(text)? {
        Format::Iso8601 => iso::parse_iso(text).ok(),
        Format::Millis => epoch::parse_epoch(text, true).ok(),
        Format::Seconds => epoch::parse_epoch(text, false).ok(),
        _ => None,
    }
}
pub use stream::{parse, Importer};

/// The most replayed timestamps: 8 bytes each while simulated, 16 while a file is read into
/// them (the importer's list and the shared copy), so that reading the largest stays within
/// [`crate::sim::MEMORY_BUDGET`].
pub const MAX_REPLAY: usize = 25_000_000;
/// 10000-01-01T00:00:00Z in seconds since the epoch: the first time not accepted.
const END_SECS: u64 = 253_402_300_800;
/// The same in µs.
const END_US: u64 = END_SECS * 1_000_000;
/// The format names, as [`Format::from_name`] accepts them.
pub(crate) const FORMAT_NAMES: &str = "auto, seconds, ms, iso, access-log";
/// The field names, as [`Field::from_name`] accepts them.
pub(crate) const FIELD_NAMES: &str =
    "host, ident, user, method, path, request, status, bytes, referer, user-agent";

/// How the lines of a file are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Format {
    /// Decided on the first non-blank line that parses.
    #[default]
    #[serde(rename = "auto")]
    Auto,
    /// Epoch seconds, fractions allowed.
    #[serde(rename = "seconds")]
    Seconds,
    /// Epoch milliseconds, fractions allowed.
    #[serde(rename = "ms")]
    Millis,
    /// ISO 8601 date and time, with an optional zone.
    #[serde(rename = "iso")]
    Iso8601,
    /// nginx/Apache common or combined log format.
    #[serde(rename = "access-log")]
    AccessLog,
}

/// Every format a file can be read as.
pub const FORMATS: [Format; 5] = [
    Format::Auto,
    Format::Seconds,
    Format::Millis,
    Format::Iso8601,
    Format::AccessLog,
];

impl Format {
    /// The format with this name: `auto`, `seconds`, `ms`, `iso` or `access-log`.
    pub fn from_name(name: &str) -> Result<Format, Error> {
        FORMATS
            .into_iter()
            .find(|f| f.name() == name)
            .ok_or_else(|| Error::unknown("format", name, FORMAT_NAMES))
    }

    /// The name, as [`Format::from_name`] accepts it.
    pub fn name(self) -> &'static str {
        match self {
            Format::Auto => "auto",
            Format::Seconds => "seconds",
            Format::Millis => "ms",
            Format::Iso8601 => "iso",
            Format::AccessLog => "access-log",
        }
    }

    /// How a file in this format reads, for messages.
    pub(super) fn described(self) -> &'static str {
        match self {
            Format::Auto => "undecided",
            Format::Seconds => "epoch seconds",
            Format::Millis => "epoch milliseconds",
            Format::Iso8601 => "ISO 8601 times",
            Format::AccessLog => "an access log",
        }
    }
}

/// An access-log field a [`Filter`] can match.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Field {
    /// The client address (`$remote_addr`, `%h`).
    Host,
    /// The identd name, usually `-`.
    Ident,
    /// The authenticated user, `-` if none.
    User,
    /// The request's method, the first word of the request.
    Method,
    /// The request's path, its second word.
    Path,
    /// The whole request line, `GET /x HTTP/1.1`.
    Request,
    /// The status code.
    Status,
    /// The response size, or `-`.
    Bytes,
    /// The referer (combined format only).
    Referer,
    /// The user agent (combined format only).
    UserAgent,
}

/// Every access-log field.
pub const FIELDS: [Field; 10] = [
    Field::Host,
    Field::Ident,
    Field::User,
    Field::Method,
    Field::Path,
    Field::Request,
    Field::Status,
    Field::Bytes,
    Field::Referer,
    Field::UserAgent,
];

impl Field {
    /// The field with this name: `host`, `ident`, `user`, `method`, `path`, `request`,
    /// `status`, `bytes`, `referer` or `user-agent`.
    pub fn from_name(name: &str) -> Result<Field, Error> {
        FIELDS
            .into_iter()
            .find(|f| f.name() == name)
            .ok_or_else(|| Error::unknown("access-log field", name, FIELD_NAMES))
    }

    /// The name, as [`Field::from_name`] accepts it.
    pub fn name(self) -> &'static str {
        match self {
            Field::Host => "host",
            Field::Ident => "ident",
            Field::User => "user",
            Field::Method => "method",
            Field::Path => "path",
            Field::Request => "request",
            Field::Status => "status",
            Field::Bytes => "bytes",
            Field::Referer => "referer",
            Field::UserAgent => "user-agent",
        }
    }
}

/// Keeps only the access-log lines whose `field` is exactly `value`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Filter {
    /// The field compared.
    pub field: Field,
    /// The value it must equal.
    pub value: String,
}

/// How to import.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ImportOptions {
    /// The format, or [`Format::Auto`] to detect it.
    pub format: Format,
    /// Which access-log lines to keep; `None` keeps all.
    pub filter: Option<Filter>,
}

/// A malformed line, as reported back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BadLine {
    /// Its number, from 1.
    pub line: u64,
    /// Its text, trimmed, at most 120 characters, invalid UTF-8 replaced.
    pub text: String,
    /// What is wrong with it and what is accepted.
    pub reason: String,
}

/// The result of an import.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Imported {
    /// Absolute times in µs since the Unix epoch, sorted ascending.
    pub times: Vec<Micros>,
    /// The format used (the detected one when the options said [`Format::Auto`]).
    pub format: Format,
    /// What the import counted of its lines.
    pub counts: Counts,
}

/// What an import counts of the lines it reads: kept up as it reads, handed over at its end,
/// and shown as they are by the CLI's warning and the page's summary.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Counts {
    /// Lines read.
    pub lines: u64,
    /// Blank lines and `#` comments, skipped.
    pub blank: u64,
    /// Valid lines the filter dropped.
    pub filtered_out: u64,
    /// Malformed lines, skipped.
    pub malformed: u64,
    /// The first five malformed lines.
    pub first_malformed: Vec<BadLine>,
    /// Whether the input was out of order (the times are sorted all the same).
    pub reordered: bool,
}
