//! The reader's own traffic on the page: the options an import starts from and the summary
//! the page shows when it ends. (The importer itself is the core's, run slice by slice in a
//! worker.)

use ratelab::import::{Counts, Field, Filter, Format, ImportOptions, Imported};
use ratelab::time::format_duration;
use serde::Serialize;

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
}
