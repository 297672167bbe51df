//! `ratelab check`: a limiter's configuration read from a file or standard input, and what it
//! really promises (`ratelab::check`), as text or JSON.

use crate::args::{CheckArgs, Format};
use crate::input::{read_text, shown_name};
use crate::text;
use ratelab::check::{check, read_config, Check};
use ratelab::spec::parse_count;
use ratelab::time::parse_duration;

/// The largest configuration read, in bytes.
const MOST_BYTES: u64 = 1 << 20;

pub(crate) fn main(a: &CheckArgs) -> Result<String, String> {
    let window = a
        .window
        .as_deref()
        .map(|w| parse_duration("--window", w))
        .transpose()
        .map_err(|e| text::core(&e))?;
    let instances =
        parse_count("--instances", &a.instances, 1, 10_000).map_err(|e| text::core(&e))? as u32;
    let text = read_text(
        &a.file,
        MOST_BYTES,
        "a limiter's configuration is expected (paste the lines that configure it)",
    )?;
    let configs =
        read_config(&text).map_err(|e| format!("{}: {}", shown_name(&a.file), text::core(&e)))?;
    let checks = configs
        .iter()
        .map(|c| check(c, window, instances))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| text::core(&e))?;
    Ok(match a.format {
        Format::Json => {
            let mut out = if checks.len() == 1 {
                serde_json::to_string_pretty(&checks[0])
            } else {
                serde_json::to_string_pretty(&checks)
            }
            .map_err(|e| format!("cannot write JSON: {e}"))?;
            out.push('\n');
            out
        }
        Format::Table => checks.iter().map(describe).collect::<Vec<_>>().join("\n"),
    })
}

/// One check in words: its heading, then each finding under its label.
fn describe(c: &Check) -> String {
    let mut out = format!("{}\n", c.heading());
    for (label, text) in c.lines() {
        out.push_str(&format!("  {:<17}{text}\n", format!("{label}:")));
    }
    out
}
