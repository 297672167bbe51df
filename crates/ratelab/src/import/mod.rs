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
use std::fmt;

/// The most replayed timestamps: 8 bytes each while simulated, 16 while a file is read into
/// them (the importer's list and the shared copy), so that reading the largest stays within
/// [`crate::sim::MEMORY_BUDGET`].
pub const MAX_REPLAY: usize = 25_000_000;
/// The longest line read; longer ones are malformed and never held whole.
const MAX_LINE: usize = 64 * 1024;
/// How far into the file a NUL byte means binary.
const SNIFF: usize = 64 * 1024;
/// How many malformed lines are kept, with their reasons.
const KEEP_BAD: usize = 5;
/// How much of a malformed line is kept, in characters.
const BAD_TEXT_CHARS: usize = 120;
/// 10000-01-01T00:00:00Z in seconds since the epoch: the first time not accepted.
const END_SECS: u64 = 253_402_300_800;
/// The same in µs.
const END_US: u64 = END_SECS * 1_000_000;
/// What a file should hold, for whole-file errors.
const ACCEPTED: &str =
    "one timestamp per line (epoch seconds, epoch ms or ISO 8601), or an access log";

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
    fn described(self) -> &'static str {
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

/// Imports a file fed in chunks of any size.
pub struct Importer {
    options: ImportOptions,
    /// The format lines are read in: the option, or the detected one once `Auto` decided.
    format: Format,
    /// The first 64 KiB, held until they can be checked for a compressed or binary file as
    /// a whole, so that the outcome never depends on how the input was split.
    head: Vec<u8>,
    /// Whether `head` has been checked and passed on.
    sniffed: bool,
    /// The start of a line that has not ended yet (at most `MAX_LINE` bytes).
    partial: Vec<u8>,
    /// Whether the rest of an over-long line is being skipped.
    skipping: bool,
    /// The most timestamps accepted (`MAX_REPLAY`; lowered by tests).
    max_times: usize,
    times: Vec<Micros>,
    previous: Micros,
    reordered: bool,
    lines: u64,
    blank: u64,
    filtered_out: u64,
    malformed: u64,
    first_malformed: Vec<BadLine>,
    /// The error that ended the import; every later call returns it.
    failed: Option<Error>,
}

impl fmt::Debug for Importer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Importer")
            .field("options", &self.options)
            .field("format", &self.format)
            .field("lines", &self.lines)
            .field("times", &self.times.len())
            .field("malformed", &self.malformed)
            .field("failed", &self.failed)
            .finish_non_exhaustive()
    }
}

/// Why a line is malformed: what is wrong, and what is accepted.
type Reason = &'static str;

const NOT_UTF8: Reason = "not UTF-8: expected UTF-8 text";
const TOO_LONG: Reason = "longer than 64 KiB: expected lines of at most 65536 bytes";
const NOT_TIMESTAMP: Reason =
    "not a timestamp: expected epoch seconds, epoch ms, an ISO 8601 time or an access-log line";
const NOT_SECONDS: Reason = "not a number of seconds: expected epoch seconds like 1700000000.25";
const NOT_MILLIS: Reason = "not a number of milliseconds: expected epoch ms like 1700000000250";
const NEGATIVE: Reason = "negative: expected a time counted from 1970-01-01 (the Unix epoch)";
const TOO_LATE: Reason = "after the year 9999: expected a time from 1970 to 9999";
const BEFORE_1970: Reason = "before 1970: expected a time from 1970-01-01T00:00:00Z on";
const NOT_ISO: Reason =
    "not an ISO 8601 time: expected YYYY-MM-DDTHH:MM:SS[.frac][Z|±HH:MM|±HHMM|±HH]";
const BAD_YEAR: Reason = "year out of range: expected 1970 to 9999";
const BAD_DATE: Reason = "no such date: expected a month 01-12 and a day that month has";
const BAD_CLOCK: Reason = "no such time of day: expected hours 00-23, minutes and seconds 00-59";
const BAD_ZONE: Reason = "bad time zone: expected Z, ±HH:MM, ±HHMM or ±HH, hours 00-23";
const NOT_ACCESS: Reason = "not an access-log line: expected host ident user [dd/Mon/yyyy:HH:MM:SS ±hhmm] \"request\" status bytes";
const BAD_CLF_TIME: Reason =
    "bad access-log time: expected [dd/Mon/yyyy:HH:MM:SS ±hhmm], like [10/Oct/2000:13:55:36 -0700]";
const UNCLOSED_QUOTE: Reason =
    "a quoted field is not closed: expected \"...\" with inner quotes as \\\"";
const BAD_STATUS: Reason = "bad status: expected three digits, like 200";
const BAD_BYTES: Reason = "bad response size: expected a number of bytes or -";

impl Importer {
    /// An importer with these options.
    pub fn new(options: ImportOptions) -> Importer {
        let mut importer = Importer {
            format: options.format,
            options,
            head: Vec::new(),
            sniffed: false,
            partial: Vec::new(),
            skipping: false,
            max_times: MAX_REPLAY,
            times: Vec::new(),
            previous: 0,
            reordered: false,
            lines: 0,
            blank: 0,
            filtered_out: 0,
            malformed: 0,
            first_malformed: Vec::new(),
            failed: None,
        };
        if let Err(e) = importer.check_filter() {
            importer.failed = Some(e);
        }
        importer
    }

    /// Reads the next chunk. Lines may straddle chunks; `\r\n` line ends are fine.
    ///
    /// An error ends the import: every later call returns it again.
    pub fn feed(&mut self, bytes: &[u8]) -> Result<(), Error> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let result = self.feed_inner(bytes);
        if let Err(e) = &result {
            self.failed = Some(e.clone());
        }
        result
    }

    /// Lines read so far, for progress.
    pub fn lines(&self) -> u64 {
        self.lines
    }

    /// Reads the last line, if it has no line end, and returns the sorted times.
    pub fn finish(mut self) -> Result<Imported, Error> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        if !self.sniffed {
            self.sniff()?;
        }
        if !self.skipping && !self.partial.is_empty() {
            let last = std::mem::take(&mut self.partial);
            self.line(&last)?;
        }
        if self.times.is_empty() {
            return Err(self.nothing_imported());
        }
        if self.reordered {
            self.times.sort_unstable();
        }
        Ok(Imported {
            times: self.times,
            format: self.format,
            lines: self.lines,
            blank: self.blank,
            filtered_out: self.filtered_out,
            malformed: self.malformed,
            first_malformed: self.first_malformed,
            reordered: self.reordered,
        })
    }

    fn feed_inner(&mut self, bytes: &[u8]) -> Result<(), Error> {
        if self.sniffed {
            return self.chunk(bytes);
        }
        let take = bytes.len().min(SNIFF - self.head.len());
        self.head.extend_from_slice(&bytes[..take]);
        if self.head.len() < SNIFF {
            return Ok(());
        }
        self.sniff()?;
        self.chunk(&bytes[take..])
    }

    /// Checks the first 64 KiB for a compressed file's magic number and for NUL bytes, drops
    /// a UTF-8 byte-order mark and passes the bytes on.
    fn sniff(&mut self) -> Result<(), Error> {
        self.sniffed = true;
        let head = std::mem::take(&mut self.head);
        let compressed = match head.as_slice() {
            [0x1f, 0x8b, ..] => Some(("gzip", "gunzip FILE")),
            [b'P', b'K', 3, 4, ..] => Some(("zip", "unzip FILE")),
            [0x28, 0xb5, 0x2f, 0xfd, ..] => Some(("zstd", "zstd -d FILE")),
            [b'B', b'Z', b'h', b'1'..=b'9', ..] => Some(("bzip2", "bunzip2 FILE")),
            [0xfd, b'7', b'z', b'X', ..] => Some(("xz", "unxz FILE")),
            _ => None,
        };
        if let Some((kind, command)) = compressed {
            return Err(Error::BadFile {
                problem: format!("is {kind}-compressed"),
                accepted: format!("plain text, so decompress it first ({command}) and give the result: {ACCEPTED}"),
            });
        }
        if let Some(i) = head.iter().position(|&b| b == 0) {
            return Err(Error::BadFile {
                problem: format!("is binary, not text (a NUL byte at byte {})", i + 1),
                accepted: ACCEPTED.to_owned(),
            });
        }
        let text = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(&head);
        self.chunk(text)
    }

    /// Splits a chunk into lines, carrying an unfinished one over.
    fn chunk(&mut self, mut bytes: &[u8]) -> Result<(), Error> {
        while !bytes.is_empty() {
            let newline = find_newline(bytes);
            if self.skipping {
                match newline {
                    Some(i) => {
                        self.skipping = false;
                        bytes = &bytes[i + 1..];
                        continue;
                    }
                    None => return Ok(()),
                }
            }
            match newline {
                Some(i) => {
                    let (line, rest) = (&bytes[..i], &bytes[i + 1..]);
                    if self.partial.is_empty() {
                        self.line(line)?;
                    } else {
                        let mut whole = std::mem::take(&mut self.partial);
                        if whole.len() + line.len() > MAX_LINE {
                            let room = MAX_LINE - whole.len();
                            whole.extend_from_slice(&line[..room]);
                            self.lines += 1;
                            self.bad(&whole, TOO_LONG);
                        } else {
                            whole.extend_from_slice(line);
                            self.line(&whole)?;
                        }
                        whole.clear();
                        self.partial = whole;
                    }
                    bytes = rest;
                }
                None => {
                    // The line goes on in the next chunk: hold at most MAX_LINE bytes of it.
                    if self.partial.capacity() < MAX_LINE {
                        self.partial.reserve_exact(MAX_LINE - self.partial.len());
                    }
                    if self.partial.len() + bytes.len() > MAX_LINE {
                        let room = MAX_LINE - self.partial.len();
                        self.partial.extend_from_slice(&bytes[..room]);
                        let start = std::mem::take(&mut self.partial);
                        self.lines += 1;
                        self.bad(&start, TOO_LONG);
                        self.partial = start;
                        self.partial.clear();
                        self.skipping = true;
                    } else {
                        self.partial.extend_from_slice(bytes);
                    }
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// Reads one whole line, without its `\n`.
    fn line(&mut self, raw: &[u8]) -> Result<(), Error> {
        self.lines += 1;
        if raw.len() > MAX_LINE {
            self.bad(&raw[..MAX_LINE], TOO_LONG);
            return Ok(());
        }
        let line = raw.trim_ascii();
        if line.is_empty() || line[0] == b'#' {
            self.blank += 1;
            return Ok(());
        }
        let parsed = match self.format {
            Format::Seconds => parse_epoch(line, false).map(Some),
            Format::Millis => parse_epoch(line, true).map(Some),
            Format::Iso8601 => parse_iso(line).map(Some),
            Format::AccessLog => self.access(line),
            Format::Auto => match detect(line) {
                None => Err(NOT_TIMESTAMP),
                Some(format) => {
                    let parsed = match format {
                        Format::AccessLog => self.access(line),
                        Format::Iso8601 => parse_iso(line).map(Some),
                        _ => parse_epoch(line, format == Format::Millis).map(Some),
                    };
                    if parsed.is_ok() {
                        self.format = format;
                        self.check_filter()?;
                    }
                    parsed
                }
            },
        };
        match parsed {
            Ok(Some(t)) => self.push(t),
            Ok(None) => {
                self.filtered_out += 1;
                Ok(())
            }
            Err(reason) => {
                // Only ASCII parses as a number or an ISO time, so a line that fails may
                // fail for its encoding first.
                let reason = if std::str::from_utf8(line).is_err() {
                    NOT_UTF8
                } else {
                    reason
                };
                self.bad(line, reason);
                Ok(())
            }
        }
    }

    /// An access-log line's time, or `None` when the filter drops it.
    fn access(&self, line: &[u8]) -> Result<Option<Micros>, Reason> {
        let (t, fields) = parse_access(line)?;
        if std::str::from_utf8(line).is_err() {
            return Err(NOT_UTF8);
        }
        match &self.options.filter {
            Some(filter) if !fields.matches(filter) => Ok(None),
            _ => Ok(Some(t)),
        }
    }

    fn push(&mut self, t: Micros) -> Result<(), Error> {
        if self.times.len() >= self.max_times {
            return Err(Error::TooLarge {
                what: "the replay".into(),
                detail: format!(
                    "more than {} timestamps (line {}); the most is {} (8 bytes each, 16 while read, within 512 MB), so split the file",
                    self.max_times, self.lines, self.max_times
                ),
            });
        }
        if t < self.previous {
            self.reordered = true;
        }
        self.previous = t;
        self.times.push(t);
        Ok(())
    }

    fn bad(&mut self, line: &[u8], reason: Reason) {
        self.malformed += 1;
        if self.first_malformed.len() < KEEP_BAD {
            let line = line.trim_ascii();
            let text = String::from_utf8_lossy(&line[..line.len().min(4 * BAD_TEXT_CHARS)])
                .chars()
                .take(BAD_TEXT_CHARS)
                .collect();
            self.first_malformed.push(BadLine {
                line: self.lines,
                text,
                reason: reason.to_owned(),
            });
        }
    }

    /// A filter applies to access logs only.
    fn check_filter(&self) -> Result<(), Error> {
        match (&self.options.filter, self.format) {
            (Some(filter), f) if f != Format::Auto && f != Format::AccessLog => {
                Err(Error::Invalid {
                    what: "filter".into(),
                    got: format!("{}:{}", filter.field.name(), filter.value),
                    accepted: format!(
                        "no filter for this file, which reads as {} (filters match access-log fields)",
                        f.described()
                    ),
                })
            }
            _ => Ok(()),
        }
    }

    /// Why a file gave no timestamp.
    fn nothing_imported(&self) -> Error {
        if let (Some(filter), true) = (&self.options.filter, self.filtered_out > 0) {
            return Error::BadFile {
                problem: format!(
                    "has no line with {} '{}' ({} valid access-log lines, all with other values)",
                    filter.field.name(),
                    shown(&filter.value),
                    self.filtered_out
                ),
                accepted: format!(
                    "a {} that occurs in the log, matched exactly",
                    filter.field.name()
                ),
            };
        }
        match self.first_malformed.first() {
            Some(bad) => Error::BadFile {
                problem: format!(
                    "has no valid timestamp ({} malformed line(s); line {}, '{}', is {})",
                    self.malformed,
                    bad.line,
                    shown(&bad.text),
                    bad.reason
                ),
                accepted: ACCEPTED.to_owned(),
            },
            None => Error::BadFile {
                problem: "is empty".into(),
                accepted: "one timestamp per line, or an access log".into(),
            },
        }
    }
}

/// Imports a whole file at once: [`Importer::feed`] once, then [`Importer::finish`].
pub fn parse(bytes: &[u8], options: ImportOptions) -> Result<Imported, Error> {
    let mut importer = Importer::new(options);
    importer.feed(bytes)?;
    importer.finish()
}

/// User text inside a one-line message: control characters escaped, long text cut.
fn shown(text: &str) -> String {
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == 60 {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The high bit of every zero byte of `x` (and perhaps of bytes after the first zero byte,
/// so only the lowest flag is to be trusted).
#[inline(always)]
fn zero_bytes(x: u64) -> u64 {
    x.wrapping_sub(ONES) & !x & HIGHS
}

/// The first byte equal to `a` or `b`, eight bytes at a time.
#[inline(always)]
fn find_either(s: &[u8], a: u8, b: u8) -> Option<usize> {
    let (wa, wb) = (ONES * u64::from(a), ONES * u64::from(b));
    let mut words = s.chunks_exact(8);
    let mut at = 0;
    for word in &mut words {
        let mut w = [0u8; 8];
        w.copy_from_slice(word);
        let w = u64::from_le_bytes(w);
        // The lowest flag of each mask is exact, so the lowest of both is the first match.
        let found = zero_bytes(w ^ wa) | zero_bytes(w ^ wb);
        if found != 0 {
            return Some(at + (found.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    words
        .remainder()
        .iter()
        .position(|&c| c == a || c == b)
        .map(|i| at + i)
}

/// The first `\n`.
fn find_newline(s: &[u8]) -> Option<usize> {
    find_either(s, b'\n', b'\n')
}

/// Which format a line looks like, for [`Format::Auto`].
fn detect(line: &[u8]) -> Option<Format> {
    if looks_like_access_log(line) {
        return Some(Format::AccessLog);
    }
    let digit = |i: usize| line.get(i).is_some_and(u8::is_ascii_digit);
    let dash = |i: usize| line.get(i) == Some(&b'-');
    if (0..4).all(digit) && dash(4) && (5..7).all(digit) && dash(7) && (8..10).all(digit) {
        return Some(Format::Iso8601);
    }
    let number = line.strip_prefix(b"-").unwrap_or(line);
    match number.first() {
        Some(b'0'..=b'9' | b'.') => {
            let digits = number.iter().take_while(|b| b.is_ascii_digit()).count();
            // At least 10^11, i.e. 12 digits after leading zeros.
            let significant = number[..digits].iter().skip_while(|&&b| b == b'0').count();
            Some(if significant >= 12 {
                Format::Millis
            } else {
                Format::Seconds
            })
        }
        _ => None,
    }
}

/// Whether the line has a `[dd/Mon/yyyy:`.
fn looks_like_access_log(line: &[u8]) -> bool {
    let Some(i) = line.iter().position(|&b| b == b'[') else {
        return false;
    };
    line.get(i + 1..i + 13).is_some_and(|d| {
        d[..2].iter().all(u8::is_ascii_digit)
            && d[2] == b'/'
            && d[3..6].iter().all(u8::is_ascii_alphabetic)
            && d[6] == b'/'
            && d[7..11].iter().all(u8::is_ascii_digit)
            && d[11] == b':'
    })
}

/// Powers of ten up to 10^6.
const POW10: [u64; 7] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000];

/// Parses epoch seconds (or milliseconds) with an optional fraction into µs, exactly:
/// `digits[.digits]` or `.digits`, digits below 1 µs dropped.
fn parse_epoch(s: &[u8], millis: bool) -> Result<Micros, Reason> {
    match s.strip_prefix(b"-") {
        None => parse_unsigned_epoch(s, millis),
        // A negative number is told apart from what is not a number at all.
        Some(rest) => Err(match parse_unsigned_epoch(rest, millis) {
            Ok(_) | Err(TOO_LATE) => NEGATIVE,
            Err(other) => other,
        }),
    }
}

/// [`parse_epoch`] without a sign.
fn parse_unsigned_epoch(s: &[u8], millis: bool) -> Result<Micros, Reason> {
    let (unit, places, not_a_number) = if millis {
        (1_000, 3, NOT_MILLIS)
    } else {
        (1_000_000, 6, NOT_SECONDS)
    };
    let mut i = 0;
    let mut int: u64 = 0;
    let mut huge = false;
    while let Some(&b) = s.get(i) {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        if int >= 1_000_000_000_000_000 {
            huge = true;
        } else {
            int = int * 10 + u64::from(d);
        }
        i += 1;
    }
    let int_digits = i;
    let mut frac: u64 = 0;
    let mut frac_digits = 0;
    if s.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while let Some(&b) = s.get(i) {
            let d = b.wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            if i - start < places {
                frac = frac * 10 + u64::from(d);
            }
            i += 1;
        }
        frac_digits = i - start;
    }
    if i != s.len() || int_digits + frac_digits == 0 {
        return Err(not_a_number);
    }
    frac *= POW10[places - frac_digits.min(places)];
    if huge || int >= END_US / unit {
        return Err(TOO_LATE);
    }
    Ok(int * unit + frac)
}

/// Two ASCII digits at `i` as a number.
#[inline]
fn two(s: &[u8], i: usize) -> Option<u32> {
    let a = s.get(i)?.wrapping_sub(b'0');
    let b = s.get(i + 1)?.wrapping_sub(b'0');
    (a <= 9 && b <= 9).then(|| u32::from(a) * 10 + u32::from(b))
}

/// Four ASCII digits at `i` as a number.
#[inline]
fn four(s: &[u8], i: usize) -> Option<u32> {
    Some(two(s, i)? * 100 + two(s, i + 2)?)
}

/// Parses `YYYY-MM-DDTHH:MM:SS[.frac][Z|±HH:MM|±HHMM|±HH]` into µs.
fn parse_iso(s: &[u8]) -> Result<Micros, Reason> {
    let at = |i: usize| s.get(i).copied().unwrap_or(0);
    let (Some(year), Some(month), Some(day), Some(hour), Some(minute), Some(second)) = (
        four(s, 0),
        two(s, 5),
        two(s, 8),
        two(s, 11),
        two(s, 14),
        two(s, 17),
    ) else {
        return Err(NOT_ISO);
    };
    if at(4) != b'-'
        || at(7) != b'-'
        || !matches!(at(10), b'T' | b't' | b' ')
        || at(13) != b':'
        || at(16) != b':'
    {
        return Err(NOT_ISO);
    }
    let mut i = 19;
    let mut micros: u64 = 0;
    if at(i) == b'.' {
        i += 1;
        let start = i;
        while let Some(&b) = s.get(i) {
            let d = b.wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            if i - start < 6 {
                micros = micros * 10 + u64::from(d);
            }
            i += 1;
        }
        let digits = i - start;
        if digits == 0 {
            return Err(NOT_ISO);
        }
        micros *= POW10[6 - digits.min(6)];
    }
    let offset: i64 = match at(i) {
        0 if i == s.len() => 0,
        b'Z' | b'z' if i + 1 == s.len() => 0,
        sign @ (b'+' | b'-') => {
            let hours = two(s, i + 1).ok_or(BAD_ZONE)?;
            let minutes = match s.len() - i {
                3 => 0,
                5 => two(s, i + 3).ok_or(BAD_ZONE)?,
                6 if at(i + 3) == b':' => two(s, i + 4).ok_or(BAD_ZONE)?,
                _ => return Err(BAD_ZONE),
            };
            if hours > 23 || minutes > 59 {
                return Err(BAD_ZONE);
            }
            let offset = i64::from(hours * 3600 + minutes * 60);
            if sign == b'-' {
                -offset
            } else {
                offset
            }
        }
        _ => return Err(NOT_ISO),
    };
    let secs = civil_seconds(year, month, day, hour, minute, second, offset)?;
    Ok(secs * 1_000_000 + micros)
}

/// Seconds since the epoch of a local date and time at a UTC offset, all checked.
fn civil_seconds(
    year: u32,
    month: u32,
    day: u32,
    hour: u32,
    minute: u32,
    second: u32,
    offset: i64,
) -> Result<u64, Reason> {
    if !(1970..=9999).contains(&year) {
        return Err(BAD_YEAR);
    }
    if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
        return Err(BAD_DATE);
    }
    if hour > 23 || minute > 59 || second > 59 {
        return Err(BAD_CLOCK);
    }
    let days = days_from_civil(i64::from(year), month, day);
    let secs = days * 86_400 + i64::from(hour * 3600 + minute * 60 + second) - offset;
    if secs < 0 {
        return Err(BEFORE_1970);
    }
    let secs = secs as u64;
    if secs >= END_SECS {
        return Err(TOO_LATE);
    }
    Ok(secs)
}

fn is_leap(year: u32) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400); // [0, 399]
    let mp = i64::from((month + 9) % 12); // March is 0
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1; // [0, 365]
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy; // [0, 146096]
    era * 146_097 + doe - 719_468
}

/// The fields of an access-log line, as written (quoted ones still escaped).
#[derive(Debug)]
struct Fields<'a> {
    host: &'a [u8],
    ident: &'a [u8],
    user: &'a [u8],
    request: &'a [u8],
    status: &'a [u8],
    bytes: &'a [u8],
    referer: Option<&'a [u8]>,
    user_agent: Option<&'a [u8]>,
}

impl Fields<'_> {
    fn matches(&self, filter: &Filter) -> bool {
        let want = filter.value.as_bytes();
        let mut words = self.request.split(|&b| b == b' ').filter(|w| !w.is_empty());
        match filter.field {
            Field::Host => self.host == want,
            Field::Ident => self.ident == want,
            Field::User => self.user == want,
            Field::Status => self.status == want,
            Field::Bytes => self.bytes == want,
            Field::Request => unescaped_eq(self.request, want),
            Field::Method => words.next().is_some_and(|w| unescaped_eq(w, want)),
            Field::Path => words.nth(1).is_some_and(|w| unescaped_eq(w, want)),
            Field::Referer => self.referer.is_some_and(|r| unescaped_eq(r, want)),
            Field::UserAgent => self.user_agent.is_some_and(|u| unescaped_eq(u, want)),
        }
    }
}

/// Whether a quoted field, with `\"` and `\\` read as `"` and `\`, equals `want`.
fn unescaped_eq(raw: &[u8], want: &[u8]) -> bool {
    if !raw.contains(&b'\\') {
        return raw == want;
    }
    let mut unescaped = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        match (raw[i], raw.get(i + 1)) {
            (b'\\', Some(&next @ (b'"' | b'\\'))) => {
                unescaped.push(next);
                i += 2;
            }
            (b, _) => {
                unescaped.push(b);
                i += 1;
            }
        }
    }
    unescaped == want
}

/// The bytes up to the next space, then past the spaces.
#[inline]
fn token<'a>(s: &'a [u8], i: &mut usize) -> &'a [u8] {
    let rest = &s[*i..];
    let end = find_either(rest, b' ', b' ').unwrap_or(rest.len());
    *i += end;
    skip_spaces(s, i);
    &rest[..end]
}

#[inline]
fn skip_spaces(s: &[u8], i: &mut usize) {
    while s.get(*i) == Some(&b' ') {
        *i += 1;
    }
}

/// A `"..."` field at `i`, its inner text still escaped, then past the spaces.
#[inline]
fn quoted<'a>(s: &'a [u8], i: &mut usize) -> Result<&'a [u8], Reason> {
    if s.get(*i) != Some(&b'"') {
        return Err(NOT_ACCESS);
    }
    let start = *i + 1;
    let mut j = start;
    loop {
        let rest = s.get(j..).ok_or(UNCLOSED_QUOTE)?;
        j += find_either(rest, b'"', b'\\').ok_or(UNCLOSED_QUOTE)?;
        if s[j] == b'"' {
            break;
        }
        j += 2; // a backslash and the character it escapes
    }
    *i = j + 1;
    skip_spaces(s, i);
    Ok(&s[start..j])
}

/// Parses a common or combined log line: its time and its fields.
fn parse_access(s: &[u8]) -> Result<(Micros, Fields<'_>), Reason> {
    let mut i = 0;
    let host = token(s, &mut i);
    let ident = token(s, &mut i);
    let user = token(s, &mut i);
    if ident.is_empty() || user.is_empty() || s.get(i) != Some(&b'[') {
        return Err(NOT_ACCESS);
    }
    let time = s.get(i + 1..i + 27).ok_or(BAD_CLF_TIME)?;
    if s.get(i + 27) != Some(&b']') {
        return Err(BAD_CLF_TIME);
    }
    let t = parse_clf_time(time)?;
    i += 28;
    skip_spaces(s, &mut i);
    let request = quoted(s, &mut i)?;
    let status = token(s, &mut i);
    if status.len() != 3 || !status.iter().all(u8::is_ascii_digit) {
        return Err(BAD_STATUS);
    }
    let bytes = token(s, &mut i);
    if bytes.is_empty() || (bytes != b"-" && !bytes.iter().all(u8::is_ascii_digit)) {
        return Err(BAD_BYTES);
    }
    let referer = if s.get(i) == Some(&b'"') {
        Some(quoted(s, &mut i)?)
    } else {
        None
    };
    let user_agent = if referer.is_some() && s.get(i) == Some(&b'"') {
        Some(quoted(s, &mut i)?)
    } else {
        None
    };
    // Anything after (nginx's $http_x_forwarded_for, timings) is not read.
    Ok((
        t,
        Fields {
            host,
            ident,
            user,
            request,
            status,
            bytes,
            referer,
            user_agent,
        },
    ))
}

/// Parses `10/Oct/2000:13:55:36 -0700` (exactly 26 bytes) into µs.
fn parse_clf_time(d: &[u8]) -> Result<Micros, Reason> {
    let (Some(day), Some(year), Some(hour), Some(minute), Some(second), Some(zh), Some(zm)) = (
        two(d, 0),
        four(d, 7),
        two(d, 12),
        two(d, 15),
        two(d, 18),
        two(d, 22),
        two(d, 24),
    ) else {
        return Err(BAD_CLF_TIME);
    };
    if d[2] != b'/'
        || d[6] != b'/'
        || d[11] != b':'
        || d[14] != b':'
        || d[17] != b':'
        || d[20] != b' '
    {
        return Err(BAD_CLF_TIME);
    }
    let month = match &d[3..6] {
        b"Jan" => 1,
        b"Feb" => 2,
        b"Mar" => 3,
        b"Apr" => 4,
        b"May" => 5,
        b"Jun" => 6,
        b"Jul" => 7,
        b"Aug" => 8,
        b"Sep" => 9,
        b"Oct" => 10,
        b"Nov" => 11,
        b"Dec" => 12,
        _ => return Err(BAD_CLF_TIME),
    };
    if zh > 23 || zm > 59 {
        return Err(BAD_ZONE);
    }
    let offset = i64::from(zh * 3600 + zm * 60);
    let offset = match d[21] {
        b'+' => offset,
        b'-' => -offset,
        _ => return Err(BAD_CLF_TIME),
    };
    Ok(civil_seconds(year, month, day, hour, minute, second, offset)? * 1_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde::de::value::Error as DeError;
    use serde::de::IntoDeserializer;

    const S: u64 = 1_000_000;

    fn opts(format: Format) -> ImportOptions {
        ImportOptions {
            format,
            filter: None,
        }
    }

    fn filtered(field: Field, value: &str) -> ImportOptions {
        ImportOptions {
            format: Format::Auto,
            filter: Some(Filter {
                field,
                value: value.into(),
            }),
        }
    }

    fn ok(text: &str, options: ImportOptions) -> Imported {
        parse(text.as_bytes(), options).unwrap_or_else(|e| panic!("{text:?}: {e}"))
    }

    fn err(bytes: &[u8], options: ImportOptions) -> String {
        match parse(bytes, options) {
            Ok(i) => panic!("{bytes:?} imported: {i:?}"),
            Err(e) => {
                let msg = e.to_string();
                assert!(!msg.contains('\n'), "not one line: {msg}");
                msg
            }
        }
    }

    /// The inverse of `days_from_civil` (Howard Hinnant's `civil_from_days`).
    fn civil_from_days(z: i64) -> (i64, u32, u32) {
        let z = z + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        let year = yoe + era * 400 + i64::from(month <= 2);
        (year, month, day)
    }

    /// Local date and time parts of `t` µs shifted by `offset` seconds.
    fn civil(t: Micros, offset: i64) -> (i64, u32, u32, u64, u64, u64, u64) {
        let local = (t / S) as i64 + offset;
        let (y, m, d) = civil_from_days(local.div_euclid(86_400));
        let s = local.rem_euclid(86_400) as u64;
        (y, m, d, s / 3600, s / 60 % 60, s % 60, t % S)
    }

    fn zone(offset: i64, style: u8) -> String {
        let sign = if offset < 0 { '-' } else { '+' };
        let (h, m) = (offset.abs() / 3600, offset.abs() / 60 % 60);
        match style % 4 {
            0 if offset == 0 => "Z".into(),
            3 if m == 0 => format!("{sign}{h:02}"),
            2 => format!("{sign}{h:02}{m:02}"),
            _ => format!("{sign}{h:02}:{m:02}"),
        }
    }

    fn iso(t: Micros, offset: i64, style: u8) -> String {
        let (y, mo, d, h, mi, s, us) = civil(t, offset);
        let sep = if style & 4 == 0 { 'T' } else { ' ' };
        format!(
            "{y:04}-{mo:02}-{d:02}{sep}{h:02}:{mi:02}:{s:02}.{us:06}{}",
            zone(offset, style)
        )
    }

    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];

    fn clf(t: Micros, offset: i64) -> String {
        let (y, mo, d, h, mi, s, _) = civil(t, offset);
        let sign = if offset < 0 { '-' } else { '+' };
        let (zh, zm) = (offset.abs() / 3600, offset.abs() / 60 % 60);
        format!(
            "{d:02}/{}/{y:04}:{h:02}:{mi:02}:{s:02} {sign}{zh:02}{zm:02}",
            MONTHS[mo as usize - 1]
        )
    }

    fn log_line(host: &str, time: &str, request: &str, status: u16, agent: &str) -> String {
        format!("{host} - - [{time}] \"{request}\" {status} 512 \"-\" \"{agent}\"\n")
    }

    #[test]
    fn format_and_field_names_round_trip() {
        for f in FORMATS {
            assert_eq!(Format::from_name(f.name()), Ok(f));
            assert_eq!(
                Format::deserialize(f.name().into_deserializer()),
                Ok::<_, DeError>(f)
            );
        }
        for f in FIELDS {
            assert_eq!(Field::from_name(f.name()), Ok(f));
            assert_eq!(
                Field::deserialize(f.name().into_deserializer()),
                Ok::<_, DeError>(f)
            );
        }
        let e = Format::from_name("csv").expect_err("csv").to_string();
        assert!(e.contains("csv") && e.contains("access-log"), "{e}");
        let e = Field::from_name("agent").expect_err("agent").to_string();
        assert!(e.contains("agent") && e.contains("user-agent"), "{e}");
    }

    #[test]
    fn seconds_exact_to_the_microsecond() {
        let i = ok(
            "1700000000.25\n1700000000\n0.5\n1700000000.1234567\n.5\n7.\n1700000000.000001\n",
            opts(Format::Auto),
        );
        assert_eq!(i.format, Format::Seconds);
        let mut want = vec![
            1_700_000_000 * S + 250_000,
            1_700_000_000 * S,
            500_000,
            1_700_000_000 * S + 123_456,
            500_000,
            7 * S,
            1_700_000_000 * S + 1,
        ];
        want.sort_unstable();
        assert_eq!(i.times, want);
        assert!(i.reordered);
        assert_eq!((i.lines, i.malformed, i.blank), (7, 0, 0));
        // Exactness where a float would round: 0.1 + 0.2 style fractions.
        let i = ok("0.3\n0.7\n9007199254.740993\n", opts(Format::Seconds));
        assert_eq!(i.times, [300_000, 700_000, 9_007_199_254_740_993]);
        assert!(!i.reordered);
    }

    #[test]
    fn millis_detected_from_the_size_and_exact() {
        let i = ok("1700000000123\n1700000000123.4567\n", opts(Format::Auto));
        assert_eq!(i.format, Format::Millis);
        assert_eq!(i.times, [1_700_000_000_123_000, 1_700_000_000_123_456]);
        // Just below 10^11 is still seconds; 10^11 itself is milliseconds.
        assert_eq!(
            ok("99999999999\n", opts(Format::Auto)).format,
            Format::Seconds
        );
        assert_eq!(
            ok("100000000000\n", opts(Format::Auto)).format,
            Format::Millis
        );
        // Explicit formats are not second-guessed.
        assert_eq!(ok("5\n", opts(Format::Millis)).times, [5_000]);
        assert_eq!(ok("1\n1700000000123\n", opts(Format::Seconds)).malformed, 1);
    }

    #[test]
    fn iso_with_zones_fractions_and_either_separator() {
        let base = 1_700_000_000 * S; // 2023-11-14T22:13:20Z
        let cases = [
            ("2023-11-14T22:13:20Z", base),
            ("2023-11-14t22:13:20z", base),
            ("2023-11-14 22:13:20", base),
            ("2023-11-14T22:13:20.5Z", base + 500_000),
            ("2023-11-14T22:13:20.1234569Z", base + 123_456),
            ("2023-11-15T00:13:20+02:00", base),
            ("2023-11-15T00:13:20+0200", base),
            ("2023-11-15T00:13:20+02", base),
            ("2023-11-14T16:43:20-05:30", base),
            ("2023-11-14T16:43:20.000001-0530", base + 1),
        ];
        let text: String = cases.iter().map(|(l, _)| format!("{l}\r\n")).collect();
        let i = ok(&text, opts(Format::Auto));
        assert_eq!(i.format, Format::Iso8601);
        let mut want: Vec<_> = cases.iter().map(|c| c.1).collect();
        want.sort_unstable();
        assert_eq!(i.times, want, "{:?}", i.first_malformed);
        // Leap day, and the first second.
        assert_eq!(
            ok("2024-02-29T00:00:00Z\n", opts(Format::Iso8601)).times,
            [(19_782 * 86_400) * S]
        );
        assert_eq!(
            ok("1970-01-01T00:00:00Z\n", opts(Format::Iso8601)).times,
            [0]
        );
    }

    #[test]
    fn iso_rejects_impossible_dates_and_times_with_a_reason() {
        let cases = [
            ("2023-02-29T00:00:00Z", "no such date"),
            ("2023-02-30T00:00:00Z", "no such date"),
            ("2023-13-01T00:00:00Z", "no such date"),
            ("2023-00-10T00:00:00Z", "no such date"),
            ("2023-04-31T00:00:00Z", "no such date"),
            ("2023-04-00T00:00:00Z", "no such date"),
            ("2023-04-01T24:00:00Z", "no such time"),
            ("2023-04-01T23:60:00Z", "no such time"),
            ("2023-04-01T23:59:60Z", "no such time"),
            ("2023-04-01T23:59:59+24:00", "bad time zone"),
            ("2023-04-01T23:59:59+01:60", "bad time zone"),
            ("2023-04-01T23:59:59+1", "bad time zone"),
            ("2023-04-01T23:59:59+01:0", "bad time zone"),
            ("2023-04-01T23:59:59.Z", "not an ISO 8601"),
            ("2023-04-01T23:59", "not an ISO 8601"),
            ("2023-04-01", "not an ISO 8601"),
            ("2023-04-01X23:59:59", "not an ISO 8601"),
            ("2023-04-01T23:59:59Zjunk", "not an ISO 8601"),
            ("1969-12-31T23:59:59Z", "year out of range"),
            ("1970-01-01T00:30:00+01:00", "before 1970"),
            ("9999-12-31T23:59:59-01:00", "after the year 9999"),
        ];
        let text: String = cases.iter().map(|(l, _)| format!("{l}\n")).collect();
        let mut importer = Importer::new(opts(Format::Iso8601));
        importer.feed(text.as_bytes()).expect("feeds");
        importer.feed(b"2023-04-01T00:00:00Z\n").expect("feeds");
        let i = importer.finish().expect("one valid line");
        assert_eq!(i.malformed, cases.len() as u64);
        assert_eq!(i.times.len(), 1);
        for (n, (line, reason)) in cases.iter().enumerate() {
            let mut one = Importer::new(opts(Format::Iso8601));
            one.feed(format!("{line}\n2023-04-01T00:00:00Z\n").as_bytes())
                .expect("feeds");
            let bad = &one.finish().expect("valid").first_malformed[0];
            assert_eq!(bad.line, 1);
            assert_eq!(&bad.text, line);
            assert!(bad.reason.contains(reason), "{n} {line}: {}", bad.reason);
            assert!(bad.reason.contains("expected"), "{}", bad.reason);
        }
        // Only the first five are kept.
        assert_eq!(i.first_malformed.len(), 5);
        assert_eq!(i.first_malformed[4].line, 5);
    }

    #[test]
    fn a_long_run_of_signs_is_one_malformed_line() {
        let text = format!("{}5\n1\n", "-".repeat(60_000));
        let i = ok(&text, opts(Format::Seconds));
        assert_eq!((i.times.len(), i.malformed), (1, 1));
        assert!(i.first_malformed[0].reason.contains("not a number"));
        assert_eq!(
            ok("-5\n1\n", opts(Format::Millis)).first_malformed[0].reason,
            NEGATIVE
        );
    }

    #[test]
    fn before_1970_and_negative_numbers_are_malformed() {
        let i = ok("-5\n-0.5\n-1700000000123\n12\n", opts(Format::Auto));
        assert_eq!(i.format, Format::Seconds);
        assert_eq!(i.times, [12 * S]);
        assert_eq!(i.malformed, 3);
        for bad in &i.first_malformed {
            assert!(bad.reason.contains("negative"), "{bad:?}");
        }
        let i = ok(
            "10\n99999999999999999999999\n253402300800\n253402300799.999999\n",
            opts(Format::Seconds),
        );
        assert_eq!(i.times, [10 * S, END_US - 1]);
        assert!(i.first_malformed[0].reason.contains("after the year 9999"));
        assert_eq!(i.malformed, 2);
    }

    const APACHE: &str =
        "127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] \"GET /apache_pb.gif HTTP/1.0\" 200 2326";

    #[test]
    fn access_logs_common_and_combined() {
        // The example of Apache's documentation: 2000-10-10T20:55:36Z.
        let want = (days_from_civil(2000, 10, 10) * 86_400 + 20 * 3600 + 55 * 60 + 36) as u64 * S;
        assert_eq!(want, 971_211_336 * S);
        let text = format!(
            "{APACHE}\n{APACHE} \"http://www.example.com/start.html\" \"Mozilla/4.08 [en] (Win98; I ;Nav)\"\n\
             10.0.0.2 - - [10/Oct/2000:20:55:37 +0000] \"GET /x HTTP/1.1\" 304 - \"-\" \"curl/8.0\" \"1.2.3.4\" 0.003\n"
        );
        let i = ok(&text, opts(Format::Auto));
        assert_eq!(i.format, Format::AccessLog);
        assert_eq!(i.times, [want, want, want + S], "{:?}", i.first_malformed);
        let bad = [
            "127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 20 2326",
            "127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 12a",
            "127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0 200 2326",
            "127.0.0.1 - frank [10/Foo/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 2326",
            "127.0.0.1 - frank [31/Nov/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 2326",
            "127.0.0.1 - frank [10/Oct/2000:13:55:36 -0760] \"GET / HTTP/1.0\" 200 2326",
            "127.0.0.1 - frank [10/Oct/2000:13:55:36] \"GET / HTTP/1.0\" 200 2326",
            "127.0.0.1 frank [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 2326",
            "127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] GET / 200 2326",
            "1700000000",
        ];
        let reasons = [
            "bad status",
            "bad response size",
            "not closed",
            "bad access-log time",
            "no such date",
            "bad time zone",
            "bad access-log time",
            "not an access-log line",
            "not an access-log line",
            "not an access-log line",
        ];
        for (line, reason) in bad.iter().zip(reasons) {
            let i = ok(&format!("{APACHE}\n{line}\n"), opts(Format::Auto));
            assert_eq!(i.malformed, 1, "{line}");
            let b = &i.first_malformed[0];
            assert_eq!((b.line, b.text.as_str()), (2, *line));
            assert!(b.reason.contains(reason), "{line}: {}", b.reason);
        }
    }

    #[test]
    fn escaped_quotes_inside_quoted_fields() {
        let line = r#"1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "GET /a\"b HTTP/1.1" 200 1 "-" "Agent \"quoted\" \\ end""#;
        let i = ok(line, filtered(Field::UserAgent, r#"Agent "quoted" \ end"#));
        assert_eq!(i.times.len(), 1, "{:?}", i.first_malformed);
        let i = ok(line, filtered(Field::Path, r#"/a"b"#));
        assert_eq!(i.times.len(), 1);
        let e = err(line.as_bytes(), filtered(Field::UserAgent, "Agent"));
        assert!(e.contains("no line with user-agent 'Agent'"), "{e}");
    }

    fn sample_log() -> String {
        let t = "14/Nov/2023:22:13:20 +0000";
        [
            log_line("10.0.0.1", t, "GET / HTTP/1.1", 200, "curl/8.0"),
            log_line(
                "10.0.0.2",
                t,
                "POST /login HTTP/1.1",
                401,
                "Mozilla/5.0 (X11)",
            ),
            log_line("10.0.0.1", t, "GET /api HTTP/1.1", 429, "Mozilla/5.0 (X11)"),
            log_line("10.0.0.10", t, "GET /api HTTP/1.1", 200, "curl/8.0"),
            log_line(
                "10.0.0.1",
                t,
                "HEAD /api HTTP/1.1",
                200,
                "Mozilla/5.0 (X11)",
            ),
        ]
        .concat()
    }

    #[test]
    fn filters_by_host_status_user_agent_and_request_parts() {
        let log = sample_log();
        let count = |field, value: &str| {
            let i = ok(&log, filtered(field, value));
            assert_eq!(i.lines, 5);
            assert_eq!(i.times.len() as u64 + i.filtered_out, 5);
            i.times.len()
        };
        assert_eq!(count(Field::Host, "10.0.0.1"), 3);
        assert_eq!(count(Field::Host, "10.0.0.10"), 1);
        assert_eq!(count(Field::Status, "200"), 3);
        assert_eq!(count(Field::Status, "429"), 1);
        assert_eq!(count(Field::UserAgent, "Mozilla/5.0 (X11)"), 3);
        assert_eq!(count(Field::UserAgent, "curl/8.0"), 2);
        assert_eq!(count(Field::Method, "GET"), 3);
        assert_eq!(count(Field::Path, "/api"), 3);
        assert_eq!(count(Field::Request, "POST /login HTTP/1.1"), 1);
        assert_eq!(count(Field::Referer, "-"), 5);
        assert_eq!(count(Field::User, "-"), 5);
        assert_eq!(count(Field::Bytes, "512"), 5);
        let e = err(log.as_bytes(), filtered(Field::Host, "10.0.0.9"));
        assert!(
            e.contains("no line with host '10.0.0.9'") && e.contains("5 valid"),
            "{e}"
        );
        // No referer or agent in the common format: a filter on them keeps nothing.
        let e = err(APACHE.as_bytes(), filtered(Field::Referer, "-"));
        assert!(e.contains("no line with referer"), "{e}");
    }

    #[test]
    fn a_filter_needs_an_access_log() {
        let e = err(b"1700000000\n", filtered(Field::Host, "1.2.3.4"));
        assert!(e.contains("filter") && e.contains("epoch seconds"), "{e}");
        let mut explicit = filtered(Field::Status, "200");
        explicit.format = Format::Iso8601;
        let e = err(b"2023-11-14T22:13:20Z\n", explicit);
        assert!(e.contains("status:200") && e.contains("ISO 8601"), "{e}");
    }

    #[test]
    fn comments_blank_lines_crlf_and_whitespace() {
        let i = ok(
            "\u{feff}# exported\r\n\r\n  1.5  \r\n\t2\r\n   \r\n# 3\r\n4",
            opts(Format::Auto),
        );
        assert_eq!(i.times, [1_500_000, 2 * S, 4 * S]);
        assert_eq!((i.lines, i.blank, i.malformed), (7, 4, 0));
    }

    #[test]
    fn auto_decides_on_the_first_line_that_parses() {
        let i = ok(
            "garbage\n-3\n2023-11-14T22:13:20Z\n1700000000\n",
            opts(Format::Auto),
        );
        assert_eq!(i.format, Format::Iso8601);
        assert_eq!(i.times, [1_700_000_000 * S]);
        assert_eq!(i.malformed, 3);
        assert!(i.first_malformed[0].reason.contains("not a timestamp"));
        assert!(i.first_malformed[1].reason.contains("negative"));
        assert!(i.first_malformed[2].reason.contains("not an ISO 8601"));
    }

    #[test]
    fn empty_files_are_refused() {
        for text in ["", "\n\n", "# only a comment\n  \r\n"] {
            let e = err(text.as_bytes(), opts(Format::Auto));
            assert_eq!(
                e,
                "the file is empty: expected one timestamp per line, or an access log"
            );
        }
    }

    #[test]
    fn compressed_and_binary_files_are_refused() {
        let cases: [(&[u8], &str); 5] = [
            (&[0x1f, 0x8b, 8, 0, 0, 0], "gzip-compressed"),
            (b"PK\x03\x04rest", "zip-compressed"),
            (&[0x28, 0xb5, 0x2f, 0xfd, 1], "zstd-compressed"),
            (b"BZh91AY&SY", "bzip2-compressed"),
            (&[0xfd, b'7', b'z', b'X', b'Z', 0], "xz-compressed"),
        ];
        for (bytes, what) in cases {
            let e = err(bytes, opts(Format::Auto));
            assert!(e.contains(what) && e.contains("decompress it first"), "{e}");
            // However the magic number is split.
            let mut importer = Importer::new(opts(Format::Auto));
            let mut result = Ok(());
            for b in bytes {
                result = result.and(importer.feed(&[*b]));
            }
            let result = result.and_then(|()| importer.finish().map(|_| ()));
            assert!(result.is_err_and(|e| e.to_string().contains(what)));
        }
        // Two bytes are enough for gzip.
        assert!(err(&[0x1f, 0x8b], opts(Format::Auto)).contains("gzip"));
        let mut text = b"1\n2\n".to_vec();
        text.push(0);
        text.extend_from_slice(b"3\n");
        let e = err(&text, opts(Format::Auto));
        assert!(
            e.contains("binary, not text") && e.contains("byte 5"),
            "{e}"
        );
        // A NUL past the first 64 KiB is just a malformed line.
        let mut text = "1\n".repeat(40_000).into_bytes();
        text.extend_from_slice(b"\x00\n");
        let i = parse(&text, opts(Format::Auto)).expect("imports");
        assert_eq!((i.times.len(), i.malformed), (40_000, 1));
        // Text with a tail that looks like a magic number is text.
        assert_eq!(ok("1\nBZh9\n", opts(Format::Auto)).malformed, 1);
    }

    #[test]
    fn a_binary_file_is_refused_before_any_line_is_read_however_it_is_split() {
        // A first line that would fail the filter, then a NUL: with the whole file in one
        // chunk or in two, the NUL decides.
        let text = b"# comment\n0.5\n\x01\x00\x00";
        let options = filtered(Field::Host, "10.0.0.1");
        let whole = err(text, options.clone());
        assert!(whole.contains("binary, not text"), "{whole}");
        let mut importer = Importer::new(options);
        let split = importer
            .feed(&text[..14])
            .and_then(|()| importer.feed(&text[14..]))
            .and_then(|()| importer.finish().map(|_| ()));
        assert_eq!(split.map_err(|e| e.to_string()), Err(whole));
    }

    #[test]
    fn no_valid_timestamp_names_the_first_bad_line() {
        let e = err(b"# header\nhello\n12:00\n", opts(Format::Auto));
        assert!(e.contains("no valid timestamp"), "{e}");
        assert!(
            e.contains("line 2") && e.contains("'hello'") && e.contains("2 malformed"),
            "{e}"
        );
        let e = err(b"1\x1b[31m\n", opts(Format::Seconds));
        assert!(e.contains("line 1") && e.contains("\\u{1b}"), "{e}");
    }

    #[test]
    fn invalid_utf8_makes_a_line_malformed_not_the_file() {
        let mut text = b"1700000000\n17\xff00\n".to_vec();
        text.extend_from_slice(APACHE.as_bytes());
        let i = ok("1\n\u{e9}\n", opts(Format::Seconds));
        assert_eq!(
            i.first_malformed[0].reason,
            "not a number of seconds: expected epoch seconds like 1700000000.25"
        );
        let i = parse(&text, opts(Format::Auto)).expect("imports");
        assert_eq!(i.times, [1_700_000_000 * S]);
        assert_eq!(i.malformed, 2);
        assert!(i.first_malformed[0].reason.starts_with("not UTF-8"));
        assert_eq!(i.first_malformed[0].text, "17\u{fffd}00");
        // In an access log, a user agent that is not UTF-8.
        let log = format!("{APACHE} \"-\" \"caf\u{e9}\"\n").into_bytes();
        let mut broken = log.clone();
        let at = broken.len() - 3;
        broken[at] = 0xe9;
        broken.truncate(at + 1);
        broken.extend_from_slice(b"\"\n");
        let both = [log.as_slice(), broken.as_slice()].concat();
        let i = parse(&both, opts(Format::AccessLog)).expect("imports");
        assert_eq!((i.times.len(), i.malformed), (1, 1));
        assert!(i.first_malformed[0].reason.starts_with("not UTF-8"));
    }

    #[test]
    fn an_overlong_line_is_malformed_and_never_held_whole() {
        let long = "9".repeat(10 << 20);
        let text = format!("1\n{long}\n2\n{}\n3", "8".repeat(MAX_LINE + 1));
        let mut importer = Importer::new(opts(Format::Auto));
        let mut most_held = 0;
        for chunk in text.as_bytes().chunks(1 << 20) {
            importer.feed(chunk).expect("feeds");
            most_held = most_held.max(importer.partial.capacity());
        }
        assert!(most_held <= MAX_LINE, "held {most_held}");
        let i = importer.finish().expect("imports");
        assert_eq!(i.times, [S, 2 * S, 3 * S]);
        assert_eq!((i.lines, i.malformed), (5, 2));
        for (bad, line) in i.first_malformed.iter().zip([2, 4]) {
            assert_eq!(bad.line, line);
            assert!(bad.reason.contains("longer than 64 KiB"));
            assert_eq!(bad.text.len(), BAD_TEXT_CHARS);
        }
        // A line of exactly 64 KiB is read.
        let edge = format!("{}1\n", "0".repeat(MAX_LINE - 1));
        assert_eq!(ok(&edge, opts(Format::Seconds)).times, [S]);
        // Whole in one chunk or in pieces, the same result.
        assert_eq!(parse(text.as_bytes(), opts(Format::Auto)), Ok(i));
    }

    #[test]
    fn more_than_the_replay_cap_is_too_large() {
        assert_eq!(
            Importer::new(ImportOptions::default()).max_times,
            MAX_REPLAY
        );
        let mut importer = Importer::new(ImportOptions::default());
        importer.max_times = 3;
        // Past the first 64 KiB, which are held until they can be checked.
        let three = format!("1\n2\n3\n{}", "# pad\n".repeat(12_000));
        importer.feed(three.as_bytes()).expect("three fit");
        assert_eq!(importer.lines(), 12_003);
        let e = importer.feed(b"4\n").expect_err("four do not");
        assert!(matches!(e, Error::TooLarge { .. }));
        assert!(
            e.to_string()
                .contains("more than 3 timestamps (line 12004)"),
            "{e}"
        );
        assert_eq!(importer.feed(b"5\n"), Err(e.clone()));
        assert_eq!(importer.finish(), Err(e));
    }

    #[test]
    fn lines_reports_progress() {
        let mut importer = Importer::new(ImportOptions::default());
        importer.feed(b"1\n2\n3").expect("feeds");
        // Held until the first 64 KiB can be checked whole.
        assert_eq!(importer.lines(), 0);
        importer
            .feed("4\n".repeat(40_000).as_bytes())
            .expect("feeds");
        assert_eq!(importer.lines(), 40_002);
        importer.feed(b"5\n6").expect("feeds");
        assert_eq!(importer.lines(), 40_003);
        assert_eq!(importer.finish().map(|i| i.lines), Ok(40_004));
    }

    #[test]
    fn days_from_civil_round_trips_over_every_day_of_1970_to_9999() {
        let mut expected = 0;
        for year in 1970..=9999u32 {
            for month in 1..=12 {
                for day in 1..=days_in_month(year, month) {
                    let days = days_from_civil(i64::from(year), month, day);
                    assert_eq!(days, expected, "{year}-{month}-{day}");
                    assert_eq!(civil_from_days(days), (i64::from(year), month, day));
                    expected += 1;
                }
            }
        }
        assert_eq!(expected * 86_400, END_SECS as i64);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
    }

    /// Lines worth mixing: valid in some format, broken, blank, odd bytes.
    fn a_line() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            (0u64..2_000_000_000, 0u32..1_000_000)
                .prop_map(|(s, f)| format!("{s}.{f:06}").into_bytes()),
            (0u64..END_US / 1000).prop_map(|ms| ms.to_string().into_bytes()),
            (0u64..END_US - 86_400 * S, -86_000i64..86_000, any::<u8>())
                .prop_map(|(t, o, st)| iso(t, o / 60 * 60, st).into_bytes()),
            (0u64..END_US - 86_400 * S, -86_000i64..86_000).prop_map(|(t, o)| log_line(
                "10.0.0.1",
                &clf(t, o / 60 * 60),
                "GET / HTTP/1.1",
                200,
                "x"
            )
            .into_bytes()),
            Just(b"# comment".to_vec()),
            Just(Vec::new()),
            Just(b"\r".to_vec()),
            prop::collection::vec(1u8..=255, 0..40),
            prop::collection::vec(
                prop::sample::select(b"0123456789.-:+TZ[]/\" \\\r#\xff\x80Oct".to_vec()),
                0..40
            ),
        ]
    }

    fn a_file() -> impl Strategy<Value = Vec<u8>> {
        prop::collection::vec(a_line(), 0..60).prop_map(|lines| lines.join(&b'\n'))
    }

    fn options() -> impl Strategy<Value = ImportOptions> {
        let format = prop::sample::select(FORMATS.to_vec());
        let filter = prop_oneof![
            Just(None),
            Just(Some(Filter {
                field: Field::Host,
                value: "10.0.0.1".into()
            })),
            Just(Some(Filter {
                field: Field::Path,
                value: "/".into()
            })),
        ];
        (format, filter).prop_map(|(format, filter)| ImportOptions { format, filter })
    }

    fn fed_in_pieces(
        bytes: &[u8],
        cuts: &[usize],
        options: ImportOptions,
    ) -> Result<Imported, Error> {
        let mut importer = Importer::new(options);
        let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
        cuts.sort_unstable();
        let mut from = 0;
        for cut in cuts.into_iter().chain([bytes.len()]) {
            importer.feed(&bytes[from..cut])?;
            from = cut;
        }
        importer.finish()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn any_chunking_gives_the_same_import(
            bytes in a_file(),
            cuts in prop::collection::vec(any::<usize>(), 0..20),
            options in options(),
        ) {
            let whole = parse(&bytes, options.clone());
            prop_assert_eq!(fed_in_pieces(&bytes, &cuts, options), whole);
        }

        #[test]
        fn the_word_at_a_time_search_finds_the_first_match(
            s in prop::collection::vec(prop::sample::select(b"ab\n\"\\ \x80\xff\x00\x01\x7f".to_vec()), 0..70),
            a in prop::sample::select(b"\n\"\\ a\x00\x80\xff".to_vec()),
            b in prop::sample::select(b"\n\"\\ a\x00\x80\xff".to_vec()),
        ) {
            prop_assert_eq!(find_either(&s, a, b), s.iter().position(|&c| c == a || c == b));
            prop_assert_eq!(find_newline(&s), s.iter().position(|&c| c == b'\n'));
        }

        #[test]
        fn arbitrary_bytes_never_panic(
            bytes in prop::collection::vec(any::<u8>(), 0..3000),
            cuts in prop::collection::vec(any::<usize>(), 0..8),
            options in options(),
        ) {
            if let Err(e) = fed_in_pieces(&bytes, &cuts, options) {
                prop_assert!(!e.to_string().contains('\n'));
            }
        }

        #[test]
        fn seconds_and_millis_read_back_exactly(
            times in prop::collection::vec(0u64..END_US, 1..50),
        ) {
            let seconds: String = times.iter().map(|t| format!("{}.{:06}\n", t / S, t % S)).collect();
            prop_assert_eq!(parse(seconds.as_bytes(), opts(Format::Seconds)).map(|i| i.times), Ok(sorted(&times)));
            let millis: String = times.iter().map(|t| format!("{}.{:03}\n", t / 1000, t % 1000)).collect();
            prop_assert_eq!(parse(millis.as_bytes(), opts(Format::Millis)).map(|i| i.times), Ok(sorted(&times)));
            // Auto picks the format from the first line's size; truncation below the unit.
            let auto = parse(seconds.as_bytes(), opts(Format::Auto)).map(|i| (i.format, i.times));
            let want_format = if times[0] / S >= 100_000_000_000 { Format::Millis } else { Format::Seconds };
            let want: Vec<u64> = match want_format {
                Format::Millis => times.iter().map(|t| t / S * 1000 + t % S / 1000).collect(),
                _ => times.clone(),
            };
            prop_assert_eq!(auto, Ok((want_format, sorted(&want))));
        }

        #[test]
        fn iso_and_access_log_read_back_at_any_offset(
            times in prop::collection::vec(86_400 * S..END_US - 86_400 * S, 1..50),
            offsets in prop::collection::vec((-1439i64..=1439, any::<u8>()), 1..50),
        ) {
            let at = |i: usize| offsets[i % offsets.len()];
            let isos: String = times.iter().enumerate()
                .map(|(i, &t)| format!("{}\n", iso(t, at(i).0 * 60, at(i).1))).collect();
            let got = parse(isos.as_bytes(), opts(Format::Auto));
            prop_assert_eq!(got.map(|i| (i.format, i.times)), Ok((Format::Iso8601, sorted(&times))), "{}", isos);
            let log: String = times.iter().enumerate()
                .map(|(i, &t)| log_line("10.0.0.1", &clf(t, at(i).0 * 60), "GET / HTTP/1.1", 200, "x")).collect();
            let whole_seconds: Vec<u64> = times.iter().map(|t| t / S * S).collect();
            let got = parse(log.as_bytes(), opts(Format::Auto));
            prop_assert_eq!(got.map(|i| (i.format, i.times)), Ok((Format::AccessLog, sorted(&whole_seconds))), "{}", log);
        }
    }

    fn sorted(times: &[u64]) -> Vec<u64> {
        let mut t = times.to_vec();
        t.sort_unstable();
        t
    }
}
