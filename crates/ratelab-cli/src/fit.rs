//! `ratelab fit`: which limiter explains an access log's rejections (`ratelab::fit`), as text
//! or JSON, with a progress bar on a terminal.

use crate::args::{FitArgs, FitKey, Format};
use crate::input::{read_text, shown_name};
use crate::text::{self, quote};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use ratelab::decimal::fixed;
use ratelab::fit::{fit, read_log, FitReport, KeyBy, LogOptions};
use ratelab::time::format_duration;
use std::io::IsTerminal;

/// The largest log read, in bytes (a million common-log lines are about 200 MB).
const MOST_BYTES: u64 = 1 << 30;

pub(crate) fn main(a: &FitArgs) -> Result<String, String> {
    let rejected = statuses(&a.status)?;
    let text = read_text(&a.log, MOST_BYTES, "split the log by time or by client")?;
    let options = LogOptions {
        rejected,
        key: match a.key {
            FitKey::Client => KeyBy::Client,
            FitKey::All => KeyBy::All,
        },
    };
    let log = read_log(&text, &options)
        .map_err(|e| format!("{}: {}", shown_name(&a.log), text::core(&e)))?;
    drop(text);
    let bar = std::io::stderr().is_terminal().then(|| {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(10));
        if let Ok(style) = ProgressStyle::with_template(
            "[{bar:30}] {pos}/{len} limiter settings searched, {elapsed} elapsed",
        ) {
            bar.set_style(style.progress_chars("#>-"));
        }
        bar
    });
    let report = fit(&log, &|done, total| {
        if let Some(bar) = &bar {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
        }
    });
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    Ok(match a.format {
        Format::Json => {
            let mut out = serde_json::to_string_pretty(&report)
                .map_err(|e| format!("cannot write JSON: {e}"))?;
            out.push('\n');
            out
        }
        Format::Table => describe(&report),
    })
}

/// `--status`: HTTP statuses, comma-separated.
fn statuses(text: &str) -> Result<Vec<u16>, String> {
    text.split(',')
        .map(|s| {
            s.trim()
                .parse::<u16>()
                .ok()
                .filter(|c| (100..600).contains(c))
                .ok_or_else(|| {
                    format!(
                        "invalid --status {}: expected HTTP statuses from 100 to 599, comma-separated, e.g. 429 or 429,503",
                        quote(text)
                    )
                })
        })
        .collect()
}

fn describe(r: &FitReport) -> String {
    let mut out = format!(
        "{} requests ({} rejected) from {} client(s), {} with times to {}\n{}\n",
        r.requests,
        r.rejected,
        r.keys,
        r.format,
        format_duration(r.resolution_us),
        r.verdict
    );
    if let Some(order) = &r.order {
        out += order;
        out.push('\n');
    }
    for (i, f) in r.fits.iter().enumerate() {
        out += &format!(
            "\n{}. {}  (--limit {} --window {})\n   agreement {}% ({} of {} decided otherwise); {}\n",
            i + 1,
            f.limiter,
            f.limit,
            format_duration(f.window_us),
            fixed(100.0 * f.agreement, 2),
            f.wrong_count,
            r.requests,
            f.promise
        );
        let range = match f.range {
            (lo, Some(hi)) if lo == hi => format!("only {} {lo}", f.searched),
            (lo, Some(hi)) => format!("any {} from {lo} to {hi}", f.searched),
            (lo, None) => format!("any {} from {lo} up", f.searched),
        };
        out += &format!("   fits with {range}\n");
        for note in f.notes(r.resolution_us) {
            out += &format!("   {note}\n");
        }
        if !f.same_as.is_empty() {
            out += &format!("   decides every request alike: {}\n", f.same_as.join(", "));
        }
        for w in &f.wrong {
            out += &format!(
                "   line {}: the log {}, the fit {}\n",
                w.line,
                if w.log_admitted {
                    "admitted"
                } else {
                    "rejected"
                },
                if w.log_admitted { "rejects" } else { "admits" }
            );
        }
    }
    out
}
