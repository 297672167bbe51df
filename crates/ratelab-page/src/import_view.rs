//! The reader's own traffic on the page: the options an import starts from, the rules for the
//! file's size and the share to serve, and everything the panel says of an import (its
//! progress, summary, skipped lines, tables and the bucket it sizes). (The importer itself is
//! the core's, run slice by slice in a worker.)

use crate::page::ReplayReport;
use ratelab::decimal::fixed;
use ratelab::import::{Counts, Field, Filter, Format, ImportOptions, Imported};
use ratelab::time::format_duration;
use serde::Serialize;

/// The largest file the page reads, in bytes: 1 GiB.
pub const MAX_FILE_BYTES: f64 = (1u64 << 30) as f64;

/// Refuses a file of `bytes` bytes larger than [`MAX_FILE_BYTES`], naming it (`name`) and the
/// command line that reads bigger ones.
pub fn check_size(name: &str, bytes: f64) -> Result<(), String> {
    if bytes <= MAX_FILE_BYTES {
        return Ok(());
    }
    Err(format!(
        "The file '{name}' is {} GiB; the page reads files of up to 1 GiB. For bigger ones use the command line: ratelab simulate --traffic replay:file=PATH.",
        fixed(bytes / MAX_FILE_BYTES, 1)
    ))
}

/// The share of requests to serve that the reader typed, as a percentage above 0 and at most
/// 100 (digits with at most one decimal point, like `99` or `99.9`), as a share from 0 to 1.
pub fn share(typed: &str) -> Result<f64, String> {
    let text = typed.trim();
    let digits = text.chars().filter(char::is_ascii_digit).count();
    let points = text.chars().filter(|&c| c == '.').count();
    let well_formed = digits > 0
        && digits + points == text.chars().count()
        && points <= 1
        && !text.ends_with('.');
    match ratelab::decimal::parse(text) {
        Some(v) if well_formed && v > 0.0 && v <= 100.0 => Ok(v / 100.0),
        _ => Err(format!(
            "The share to serve '{typed}' is not accepted: enter a percentage above 0 and at most 100, like 99"
        )),
    }
}

/// A whole number as the page writes it, in groups of three digits: `1,000,000`.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A share as the page writes it, with `digits` decimals.
fn pct(share: f64, digits: usize) -> String {
    format!("{}%", fixed(100.0 * share, digits))
}

/// `n` and the noun, plural unless `n` is 1: `3 lines`.
fn count(n: u64, noun: &str) -> String {
    format!("{} {noun}{}", grouped(n), if n == 1 { "" } else { "s" })
}

/// A time in µs since the epoch as UTC date and time: `(YYYY-MM-DD, HH:MM:SS, milliseconds)`.
fn utc(us: u64) -> (String, String, u64) {
    let (secs, ms) = (us / 1_000_000, us / 1000 % 1000);
    let (days, s) = ((secs / 86_400) as i64, secs % 86_400);
    let (y, m, d) = ratelab::import::civil_from_days(days);
    (
        format!("{y:04}-{m:02}-{d:02}"),
        format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60),
        ms,
    )
}

/// A time as the summary writes it: `2026-12-01 11:59:59`.
fn when(us: u64) -> String {
    let (date, time, _) = utc(us);
    format!("{date} {time}")
}

/// A time as the busiest windows' table writes it (ISO 8601): `2026-12-01T11:59:59.000Z`.
fn iso(us: u64) -> String {
    let (date, time, ms) = utc(us);
    format!("{date}T{time}.{ms:03}Z")
}

/// The progress line while a file is read: `Read 1,000 lines (40%)`.
pub fn progress(lines: f64, bytes: f64, total: f64) -> String {
    let done = if total > 0.0 { bytes / total } else { 1.0 };
    format!(
        "Read {} lines ({}%)",
        grouped(lines as u64),
        fixed((100.0 * done).round(), 0)
    )
}

/// The status line when the file `name` has been read in `ms` milliseconds.
pub fn done(name: &str, ms: f64) -> String {
    format!("Read {name} in {} s.", fixed(ms / 1000.0, 2))
}

/// The message for the file `name` that the importer refused (`message` says why).
pub fn failed(name: &str, message: &str) -> String {
    format!("The file '{name}' could not be used: {message}")
}

/// The options of an import reading `format` (`auto`, `seconds`, `ms`, `iso`, `access-log`),
/// keeping only the access-log lines whose `field` is exactly `value` (no filter if `field`
/// is empty).
pub fn options(format: &str, field: &str, value: &str) -> Result<ImportOptions, String> {
    let format = Format::from_name(format).map_err(|e| e.to_string())?;
    let filter = if field.is_empty() {
        None
    } else {
        if value.is_empty() {
            return Err(format!(
                "the filter on '{field}' has no value: enter the exact value to keep, or choose (all lines)"
            ));
        }
        Some(Filter {
            field: Field::from_name(field).map_err(|e| e.to_string())?,
            value: value.to_owned(),
        })
    };
    Ok(ImportOptions { format, filter })
}

/// What the page shows of an import (the times are fetched separately, as a typed array).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportSummary {
    /// The format read, by name.
    pub format: &'static str,
    /// The format, as a sentence names it.
    pub format_label: &'static str,
    /// The import's counts of lines read, skipped, filtered out and malformed.
    pub counts: Counts,
    /// Times kept.
    pub count: u64,
    /// The first time, µs since the epoch.
    pub first_us: f64,
    /// The last time, µs since the epoch.
    pub last_us: f64,
    /// The span between them, as text.
    pub span_text: String,
}

impl ImportSummary {
    /// The summary of a finished import.
    pub fn of(imported: &Imported) -> ImportSummary {
        let first = imported.times.first().copied().unwrap_or(0);
        let last = imported.times.last().copied().unwrap_or(0);
        ImportSummary {
            format: imported.format.name(),
            format_label: match imported.format {
                Format::Seconds => "epoch seconds",
                Format::Millis => "epoch milliseconds",
                Format::Iso8601 => "ISO 8601 times",
                Format::AccessLog => "an access log",
                Format::Auto => "detected times",
            },
            counts: imported.counts.clone(),
            count: imported.times.len() as u64,
            first_us: first as f64,
            last_us: last as f64,
            span_text: format_duration(last - first),
        }
    }
}

/// What the panel says of a finished import.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SummaryText {
    /// The summary: lines read, as what, how many requests over which span, and what was
    /// skipped, filtered out or sorted.
    pub summary: String,
    /// Lines that could not be read (the list is hidden when none).
    pub malformed: u64,
    /// The sentence above the list of unreadable lines.
    pub malformed_heading: String,
    /// The first unreadable lines, one sentence each.
    pub malformed_lines: Vec<String>,
    /// The traffic's name in the lab: the file and its number of requests.
    pub label: String,
}

impl ImportSummary {
    /// What the panel says of this import of the file `name`.
    pub fn text(&self, name: &str) -> SummaryText {
        let c = &self.counts;
        let mut parts = vec![format!(
            "{name}: {} lines read as {}, giving {} requests from {} to {} UTC ({}).",
            grouped(c.lines),
            self.format_label,
            grouped(self.count),
            when(self.first_us as u64),
            when(self.last_us as u64),
            self.span_text
        )];
        if c.blank > 0 {
            let verb = if c.blank == 1 { "was" } else { "were" };
            parts.push(format!(
                "{} {verb} skipped.",
                count(c.blank, "blank or comment line")
            ));
        }
        if c.filtered_out > 0 {
            parts.push(format!(
                "{} did not match the filter.",
                count(c.filtered_out, "line")
            ));
        }
        if c.reordered {
            parts.push("The lines were not in time order; they were sorted.".into());
        }
        let shown = c.first_malformed.len() as u64;
        let first = if c.malformed > shown {
            format!("; the first {shown}")
        } else {
            String::new()
        };
        let verb = if c.malformed == 1 { "was" } else { "were" };
        SummaryText {
            summary: parts.join(" "),
            malformed: c.malformed,
            malformed_heading: format!(
                "{} could not be read and {verb} left out{first}:",
                count(c.malformed, "line")
            ),
            malformed_lines: c
                .first_malformed
                .iter()
                .map(|b| format!("line {}: {}: “{}”", grouped(b.line), b.reason, b.text))
                .collect(),
            label: format!("{name} ({} requests)", grouped(self.count)),
        }
    }
}

/// One row of the panel's table of limiters: its cells, and whether its busiest window went
/// over the limit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReportRow {
    /// Limiter, served, busiest window, worst case in theory, wrongly admitted, wrongly
    /// rejected.
    pub cells: Vec<String>,
    /// Whether the busiest window is over `L`.
    pub over: bool,
}

/// What the panel shows of a [`ReplayReport`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReportText {
    /// A row per limiter.
    pub rows: Vec<ReportRow>,
    /// The busiest windows: rank, end (ISO 8601), requests, share of `L`.
    pub busiest: Vec<Vec<String>>,
    /// The token bucket sized to serve the share asked for, in a sentence.
    pub burst_text: String,
    /// Its capacity.
    pub burst: u64,
}

/// What the panel shows of `r`.
pub fn report_text(r: &ReplayReport) -> ReportText {
    let rows = r
        .rows
        .iter()
        .map(|row| ReportRow {
            cells: vec![
                row.limiter.clone(),
                pct(row.served_share, 1),
                row.worst_window.to_string(),
                row.bound.map_or_else(|| "–".into(), |b| b.to_string()),
                pct(row.wrong_admits, 2),
                pct(row.wrong_rejects, 2),
            ],
            over: row.worst_window > r.limit,
        })
        .collect();
    let busiest = r
        .busiest
        .iter()
        .enumerate()
        .map(|(i, w)| {
            vec![
                (i + 1).to_string(),
                iso(w.end),
                w.count.to_string(),
                format!(
                    "{}%",
                    fixed((100.0 * w.count as f64 / r.limit as f64).round(), 0)
                ),
            ]
        })
        .collect();
    let f = &r.fit;
    let burst_text = format!(
        "A token bucket refilling at {} per {} s needs a capacity of B = {} to serve {} of these requests (it serves {}: {} of {}). Its worst window can then reach B + L − 1 = {}.",
        r.limit,
        r.window_s,
        f.burst,
        pct(f.share, 1),
        pct(f.admitted as f64 / f.offered as f64, 2),
        grouped(f.admitted),
        grouped(f.offered),
        f.worst_window
    );
    ReportText {
        rows,
        busiest,
        burst_text,
        burst: f.burst,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratelab::import::Importer;

    #[test]
    fn a_file_is_summarised_as_the_page_shows_it() {
        let mut importer = Importer::new(options("auto", "", "").expect("options"));
        importer
            .feed(b"1700000000000\n\nnot a time\n1700000060000\n")
            .expect("reads");
        let s = ImportSummary::of(&importer.finish().expect("finishes"));
        assert_eq!((s.format, s.format_label), ("ms", "epoch milliseconds"));
        let c = &s.counts;
        assert_eq!((c.lines, c.blank, c.malformed, s.count), (4, 1, 1, 2));
        assert_eq!(s.span_text, "1min");
        assert_eq!(c.first_malformed.len(), 1);
    }

    #[test]
    fn a_filter_needs_a_value_and_a_known_field() {
        let e = options("access-log", "client", "").expect_err("no value");
        assert!(
            e.contains("the filter on 'client'") && e.contains("(all lines)"),
            "{e}"
        );
        assert!(options("access-log", "colour", "x").is_err());
        assert!(options("yaml", "", "").is_err());
    }

    #[test]
    fn the_share_to_serve_is_a_percentage_above_0_and_at_most_100() {
        for (typed, want) in [
            ("99", 99.0),
            (" 100 ", 100.0),
            ("99.9", 99.9),
            (".5", 0.5),
            ("0.01", 0.01),
        ] {
            assert_eq!(share(typed), Ok(want / 100.0), "{typed}");
        }
        for typed in [
            "0", "100.1", "101", "", " ", ".", "5.", "-5", "+5", "1e2", "9 9", "99%", "1.2.3",
            "abc", "٣",
        ] {
            let e = share(typed).expect_err(typed);
            assert_eq!(
                e,
                format!("The share to serve '{typed}' is not accepted: enter a percentage above 0 and at most 100, like 99"),
                "the message keeps what was typed, spaces and all"
            );
        }
    }

    #[test]
    fn a_file_over_1_gib_is_refused_with_its_size_and_the_command_line() {
        assert_eq!(check_size("a.log", MAX_FILE_BYTES), Ok(()));
        assert_eq!(check_size("a.log", 0.0), Ok(()));
        let e = check_size("huge.log", 3.0 * MAX_FILE_BYTES).expect_err("too big");
        assert_eq!(
            e,
            "The file 'huge.log' is 3.0 GiB; the page reads files of up to 1 GiB. For bigger ones use the command line: ratelab simulate --traffic replay:file=PATH."
        );
        assert!(check_size("b", MAX_FILE_BYTES + 1.0).is_err());
    }

    #[test]
    fn progress_and_status_lines_carry_the_numbers() {
        assert_eq!(
            progress(1_234_567.0, 2.0, 5.0),
            "Read 1,234,567 lines (40%)"
        );
        assert_eq!(progress(0.0, 0.0, 0.0), "Read 0 lines (100%)");
        assert_eq!(progress(999.0, 1.0, 3.0), "Read 999 lines (33%)");
        assert_eq!(done("a b.log", 1234.5), "Read a b.log in 1.23 s.");
        assert_eq!(
            failed("x.gz", "gzip is not read"),
            "The file 'x.gz' could not be used: gzip is not read"
        );
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(100), "100");
        assert_eq!(grouped(1000), "1,000");
        assert_eq!(grouped(12_345_678), "12,345,678");
    }

    #[test]
    fn times_are_written_in_utc() {
        // 2023-11-14 22:13:20.123 UTC.
        assert_eq!(when(1_700_000_000_123_456), "2023-11-14 22:13:20");
        assert_eq!(iso(1_700_000_000_123_456), "2023-11-14T22:13:20.123Z");
        assert_eq!(iso(0), "1970-01-01T00:00:00.000Z");
        // A leap day, and the last second of 9999.
        assert_eq!(when(951_782_400_000_000), "2000-02-29 00:00:00");
        assert_eq!(when(253_402_300_799_000_000), "9999-12-31 23:59:59");
    }

    #[test]
    fn the_summary_says_what_was_read_skipped_and_left_out() {
        let mut importer = Importer::new(options("auto", "", "").expect("options"));
        importer
            .feed(b"1700000000000\n\nnot a time\n1700000060000\n1699999990000\n")
            .expect("reads");
        let t = ImportSummary::of(&importer.finish().expect("finishes")).text("my.log");
        assert_eq!(
            t.summary,
            "my.log: 5 lines read as epoch milliseconds, giving 3 requests from 2023-11-14 22:13:10 to 2023-11-14 22:14:20 UTC (70s). 1 blank or comment line was skipped. The lines were not in time order; they were sorted."
        );
        assert_eq!(t.malformed, 1);
        assert_eq!(
            t.malformed_heading,
            "1 line could not be read and was left out:"
        );
        assert_eq!(t.malformed_lines.len(), 1);
        assert!(
            t.malformed_lines[0].starts_with("line 3: ")
                && t.malformed_lines[0].ends_with(": “not a time”"),
            "{:?}",
            t.malformed_lines
        );
        assert_eq!(t.label, "my.log (3 requests)");

        let mut text = String::from("# a comment\n\n");
        for i in 0..7 {
            text.push_str(&format!("bad {i}\n"));
        }
        text.push_str("1700000000000\n");
        let mut importer = Importer::new(options("ms", "", "").expect("options"));
        importer.feed(text.as_bytes()).expect("reads");
        let s = ImportSummary::of(&importer.finish().expect("finishes"));
        let t = s.text("x");
        assert!(
            t.summary.contains("2 blank or comment lines were skipped."),
            "{}",
            t.summary
        );
        assert!(!t.summary.contains("sorted"), "{}", t.summary);
        let shown = s.counts.first_malformed.len();
        assert!(shown < 7);
        assert_eq!(
            t.malformed_heading,
            format!("7 lines could not be read and were left out; the first {shown}:")
        );
        // The page has always written these two in the plural.
        assert!(
            t.summary
                .starts_with("x: 10 lines read as epoch milliseconds, giving 1 requests from"),
            "{}",
            t.summary
        );
        assert_eq!(t.label, "x (1 requests)");
    }

    #[test]
    fn the_filter_count_is_in_the_summary() {
        let mut importer =
            Importer::new(options("access-log", "host", "1.2.3.4").expect("options"));
        importer
            .feed(b"1.2.3.4 - - [14/Nov/2023:22:13:20 +0000] \"GET / HTTP/1.1\" 200 1\n5.6.7.8 - - [14/Nov/2023:22:13:21 +0000] \"GET / HTTP/1.1\" 200 1\n")
            .expect("reads");
        let t = ImportSummary::of(&importer.finish().expect("finishes")).text("a.log");
        assert!(
            t.summary
                .contains("read as an access log, giving 1 requests from"),
            "{}",
            t.summary
        );
        assert!(
            t.summary.ends_with("1 line did not match the filter."),
            "{}",
            t.summary
        );
    }

    #[test]
    fn the_report_is_written_from_its_numbers() {
        use crate::controls::Controls;
        use crate::page::{replay_of, replay_report};
        // 400 requests in one second, then nothing for a minute.
        let start = 1_700_000_000_000_000.0;
        let times: Vec<f64> = (0..400).map(|i| start + f64::from(i) * 1000.0).collect();
        let c = Controls {
            limit: 100,
            window_s: 60,
            replay: Some(replay_of(&times, "a", "auto", "", "").expect("times")),
            ..Controls::default()
        };
        let r = replay_report(&c, 1.0).expect("runs");
        let t = report_text(&r);
        assert_eq!(t.rows.len(), r.rows.len());
        for (row, text) in r.rows.iter().zip(&t.rows) {
            assert_eq!(text.cells[0], row.limiter);
            assert_eq!(text.cells[1], format!("{:.1}%", 100.0 * row.served_share));
            assert_eq!(text.cells[2], row.worst_window.to_string());
            assert_eq!(text.over, row.worst_window > 100, "{}", row.limiter);
        }
        assert!(t.rows.iter().any(|r| r.over) || t.rows.iter().all(|r| !r.over));
        assert_eq!(
            t.busiest[0],
            ["1", "2023-11-14T22:13:20.399Z", "400", "400%"]
        );
        assert_eq!(t.burst, 400);
        assert_eq!(
            t.burst_text,
            "A token bucket refilling at 100 per 60 s needs a capacity of B = 400 to serve 100.0% of these requests (it serves 100.00%: 400 of 400). Its worst window can then reach B + L − 1 = 499."
        );
    }
}
