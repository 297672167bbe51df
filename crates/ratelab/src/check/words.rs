//! A [`Check`] in words: its heading and its lines, each from the check's own numbers, as
//! `ratelab check` prints them and the page's "Check your config" shows them.

use super::Check;
use crate::decimal::fixed;
use crate::time::{format_duration, Micros};

/// A time in seconds, to the microsecond where it has one.
fn seconds(us: Micros) -> String {
    let text = fixed(us as f64 / 1e6, 6);
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text} s")
}

impl Check {
    /// What was read and the limiter it is: `nginx (line 2): nginx:rate=10r/s,burst=5`.
    pub fn heading(&self) -> String {
        format!("{} (line {}): {}", self.source, self.line, self.limiter)
    }

    /// The check's findings, each a label and its sentence: the rule as configured, the
    /// promise, the worst arrivals found, the boundary burst, the instances together, and
    /// what a rejected client is told.
    pub fn lines(&self) -> [(String, String); 6] {
        let window = format_duration(self.window_us);
        let sent: u64 = self.worst_arrivals.iter().map(|i| i.count).sum();
        let arrivals = match (self.worst_arrivals.first(), self.worst_arrivals.last()) {
            (Some(first), Some(last)) => format!(
                "{sent} requests at {} instant{} from {} to {}",
                self.worst_arrivals.len(),
                if self.worst_arrivals.len() == 1 {
                    ""
                } else {
                    "s"
                },
                seconds(first.at_us),
                seconds(last.at_us)
            ),
            _ => "none".into(),
        };
        let reached = if self.reached {
            format!(
                "these arrivals reach it: {} in one {window}",
                self.worst_found
            )
        } else {
            format!(
                "the worst arrivals found get {} in one {window}; the bound is not shown to be reached",
                self.worst_found
            )
        };
        // What the configuration allows on average over the window, for the comparison.
        let configured = self.configured_in_window;
        let ratio = if configured > 0.0 {
            format!(
                " ({} times the configured {} in {window})",
                fixed(self.worst_window as f64 / configured, 2),
                fixed(configured, if configured.fract() == 0.0 { 0 } else { 1 })
            )
        } else {
            String::new()
        };
        [
            ("configured".into(), self.configured.clone()),
            (
                "promise".into(),
                format!("{}, over any arrivals{ratio}", self.promise),
            ),
            ("worst arrivals".into(), format!("{arrivals}; {reached}")),
            (
                "boundary burst".into(),
                format!(
                    "{} of {} admitted, {} in the busiest period",
                    self.boundary_burst.admitted,
                    self.boundary_burst.offered,
                    self.boundary_burst.busiest
                ),
            ),
            (
                format!("{} instances", self.instances),
                format!("at most {} in any {window} together", self.instances_worst),
            ),
            ("Retry-After".into(), self.retry_after.clone()),
        ]
    }
}
