//! What a fit's line carries beside its numbers: requests taken as served late, and
//! disagreements that a step of the log's clock explains. `ratelab fit` prints these and the
//! page's *Explain my 429s* shows them, in the same words.

use super::Fit;
use crate::time::{format_duration, Micros, SECOND};

impl Fit {
    /// The notes on this fit, for a log whose times step by `resolution` µs, each a sentence
    /// from its own counts: the requests taken as served late first, then the log's own
    /// decisions replayed, where some of those it decides otherwise are a clock step away.
    pub fn notes(&self, resolution: Micros) -> Vec<String> {
        let mut out = Vec::new();
        if self.served_late > 0 {
            out.push(format!(
                "{} admitted requests are logged one interval after the one before: taken as served late (nginx without nodelay logs a request when it serves it) and put back where they could have arrived; a smaller burst could have queued them too, the largest the rejections allow is named",
                self.served_late
            ));
        }
        let step = format_duration(resolution.min(SECOND));
        if self.replayed_otherwise > 0 && self.within_a_step == self.replayed_otherwise {
            out.push(format!(
                "replayed with the log's own decisions, each of the {} requests it decides otherwise it decides as the log says {step} earlier or later: the log's clock, not the limiter, tells them apart",
                self.replayed_otherwise
            ));
        } else if self.within_a_step > 0 {
            out.push(format!(
                "replayed with the log's own decisions: {} decided otherwise, {} of them as the log says {step} earlier or later",
                self.replayed_otherwise, self.within_a_step
            ));
        }
        out
    }
}
