//! `ratelab check`: a limiter's configuration read from a file or standard input, and what it
//! really promises (`ratelab::check`), as text or JSON.

use crate::args::{CheckArgs, Format};
use crate::input::{read_text, shown_name};
use crate::text;
use ratelab::check::{check, read_config, Check};
use ratelab::decimal::fixed;
use ratelab::spec::parse_count;
use ratelab::time::{format_duration, parse_duration, Micros};

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

/// A time in seconds, to the microsecond where it has one.
fn seconds(us: Micros) -> String {
    let text = fixed(us as f64 / 1e6, 6);
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text} s")
}

/// One check in words.
fn describe(c: &Check) -> String {
    let window = format_duration(c.window_us);
    let sent: u64 = c.worst_arrivals.iter().map(|i| i.count).sum();
    let arrivals = match (c.worst_arrivals.first(), c.worst_arrivals.last()) {
        (Some(first), Some(last)) => format!(
            "{sent} requests at {} instant{} from {} to {}",
            c.worst_arrivals.len(),
            if c.worst_arrivals.len() == 1 { "" } else { "s" },
            seconds(first.at_us),
            seconds(last.at_us)
        ),
        _ => "none".into(),
    };
    let reached = if c.reached {
        format!("these arrivals reach it: {} in one {window}", c.worst_found)
    } else {
        format!(
            "the worst arrivals found get {} in one {window}; the bound is not shown to be reached",
            c.worst_found
        )
    };
    // What the configuration allows on average over the window, for the comparison.
    let configured = c.configured_in_window;
    let ratio = if configured > 0.0 {
        format!(
            " ({} times the configured {} in {window})",
            fixed(c.worst_window as f64 / configured, 2),
            fixed(configured, if configured.fract() == 0.0 { 0 } else { 1 })
        )
    } else {
        String::new()
    };
    format!(
        "{} (line {}): {}\n  configured:      {}\n  promise:         {}, over any arrivals{ratio}\n  worst arrivals:  {arrivals}; {reached}\n  boundary burst:  {} of {} admitted, {} in the busiest period\n  {} instances:     at most {} in any {window} together\n  Retry-After:     {}\n",
        c.source,
        c.line,
        c.limiter,
        c.configured,
        c.promise,
        c.boundary_burst.admitted,
        c.boundary_burst.offered,
        c.boundary_burst.busiest,
        c.instances,
        c.instances_worst,
        c.retry_after
    )
}
