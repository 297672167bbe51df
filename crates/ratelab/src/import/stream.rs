//! Streaming: the [`Importer`] takes a file in chunks of any size, checks its head for a
//! compressed or binary file, splits lines across chunks (holding at most 64 KiB of one), reads
//! each in the file's format, and counts and keeps what it skips.

use super::access::parse_access;
use super::detect::detect;
use super::epoch::parse_epoch;
use super::iso::parse_iso;
use super::reason::Reason;
use super::scan::find_newline;
use super::{BadLine, Counts, Format, ImportOptions, Imported, MAX_REPLAY};
use crate::error::Error;
use crate::text::{shown, SHOWN};
use crate::time::Micros;
use std::fmt;

/// The longest line read; longer ones are malformed and never held whole.
pub(super) const MAX_LINE: usize = 64 * 1024;
/// How far into the file a NUL byte means binary.
pub(super) const SNIFF: usize = 64 * 1024;
/// How many malformed lines are kept, with their reasons.
pub(super) const KEEP_BAD: usize = 5;
/// How much of a malformed line is kept, in characters.
pub(super) const BAD_TEXT_CHARS: usize = 120;
/// What a file should hold, for whole-file errors.
pub(super) const ACCEPTED: &str =
    "one timestamp per line (epoch seconds, epoch ms or ISO 8601), or an access log";

/// Imports a file fed in chunks of any size.
///
/// ```
/// use ratelab::import::{ImportOptions, Importer};
///
/// let mut importer = Importer::new(ImportOptions::default());
/// // Epoch seconds, a line cut between two chunks, and one line that is not a time.
/// importer.feed(b"1700000000\n17000")?;
/// importer.feed(b"00001.5\nnot a time\n")?;
/// let imported = importer.finish()?;
/// assert_eq!(imported.times, [1_700_000_000_000_000, 1_700_000_001_500_000]);
/// assert_eq!(imported.counts.malformed, 1);
/// # Ok::<(), ratelab::Error>(())
/// ```
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
    pub(super) partial: Vec<u8>,
    /// Whether the rest of an over-long line is being skipped.
    skipping: bool,
    /// The most timestamps accepted (`MAX_REPLAY`; lowered by tests).
    pub(super) max_times: usize,
    times: Vec<Micros>,
    previous: Micros,
    counts: Counts,
    /// The error that ended the import; every later call returns it.
    failed: Option<Error>,
}

impl fmt::Debug for Importer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Importer")
            .field("options", &self.options)
            .field("format", &self.format)
            .field("lines", &self.counts.lines)
            .field("times", &self.times.len())
            .field("malformed", &self.counts.malformed)
            .field("failed", &self.failed)
            .finish_non_exhaustive()
    }
}

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
            counts: Counts::default(),
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
        self.counts.lines
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
        if self.counts.reordered {
            self.times.sort_unstable();
        }
        Ok(Imported {
            times: self.times,
            format: self.format,
            counts: self.counts,
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
                            self.counts.lines += 1;
                            self.bad(&whole, Reason::TooLong);
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
                        self.counts.lines += 1;
                        self.bad(&start, Reason::TooLong);
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
        self.counts.lines += 1;
        if raw.len() > MAX_LINE {
            self.bad(&raw[..MAX_LINE], Reason::TooLong);
            return Ok(());
        }
        let line = raw.trim_ascii();
        if line.is_empty() || line[0] == b'#' {
            self.counts.blank += 1;
            return Ok(());
        }
        let parsed = match self.format {
            Format::Seconds => parse_epoch(line, false).map(Some),
            Format::Millis => parse_epoch(line, true).map(Some),
            Format::Iso8601 => parse_iso(line).map(Some),
            Format::AccessLog => self.access(line),
            Format::Auto => match detect(line) {
                None => Err(Reason::NotTimestamp),
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
                self.counts.filtered_out += 1;
                Ok(())
            }
            Err(reason) => {
                // Only ASCII parses as a number or an ISO time, so a line that fails may
                // fail for its encoding first.
                let reason = if std::str::from_utf8(line).is_err() {
                    Reason::NotUtf8
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
            return Err(Reason::NotUtf8);
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
                    self.max_times, self.counts.lines, self.max_times
                ),
            });
        }
        if t < self.previous {
            self.counts.reordered = true;
        }
        self.previous = t;
        self.times.push(t);
        Ok(())
    }

    fn bad(&mut self, line: &[u8], reason: Reason) {
        self.counts.malformed += 1;
        if self.counts.first_malformed.len() < KEEP_BAD {
            let line = line.trim_ascii();
            let text = String::from_utf8_lossy(&line[..line.len().min(4 * BAD_TEXT_CHARS)])
                .chars()
                .take(BAD_TEXT_CHARS)
                .collect();
            self.counts.first_malformed.push(BadLine {
                line: self.counts.lines,
                text,
                reason: reason.to_string(),
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
        if let (Some(filter), true) = (&self.options.filter, self.counts.filtered_out > 0) {
            return Error::BadFile {
                problem: format!(
                    "has no line with {} '{}' ({} valid access-log lines, all with other values)",
                    filter.field.name(),
                    shown(&filter.value, SHOWN),
                    self.counts.filtered_out
                ),
                accepted: format!(
                    "a {} that occurs in the log, matched exactly",
                    filter.field.name()
                ),
            };
        }
        match self.counts.first_malformed.first() {
            Some(bad) => Error::BadFile {
                problem: format!(
                    "has no valid timestamp ({} malformed line(s); line {}, '{}', is {})",
                    self.counts.malformed,
                    bad.line,
                    shown(&bad.text, SHOWN),
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
