//! What the sender records: one [`Record`] per request, with how the limiter answered.

use crate::time::Micros;
use serde::{Deserialize, Serialize};

/// How a real limiter answered one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// An admitted status (2xx by default), or a Redis script's 1.
    Admitted,
    /// A rejected status (429 or 503 by default), or a Redis script's 0.
    Rejected,
    /// Any other status: neither admitted nor rejected.
    Other,
    /// No answer: the connection failed or the server sent an error.
    Error,
    /// No answer within the timeout.
    Timeout,
}

impl Outcome {
    /// The order of outcomes at one instant in a trace: admissions first.
    pub(super) fn rank(self) -> u8 {
        match self {
            Outcome::Admitted => 0,
            Outcome::Rejected => 1,
            Outcome::Timeout => 2,
            Outcome::Error => 3,
            Outcome::Other => 4,
        }
    }

    /// One letter a decision, for the compact trace in a report.
    pub fn letter(self) -> char {
        match self {
            Outcome::Admitted => 'A',
            Outcome::Rejected => 'R',
            Outcome::Other => 'O',
            Outcome::Error => 'E',
            Outcome::Timeout => 'T',
        }
    }

    /// The outcome a letter of [`Outcome::letter`] stands for.
    pub fn from_letter(c: char) -> Option<Outcome> {
        Some(match c {
            'A' => Outcome::Admitted,
            'R' => Outcome::Rejected,
            'O' => Outcome::Other,
            'E' => Outcome::Error,
            'T' => Outcome::Timeout,
            _ => return None,
        })
    }
}

/// One request a probe sent, as its sender saw it. Times are µs from the start of the probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    /// When the plan said to send it.
    pub due: Micros,
    /// When it was sent.
    pub sent: Micros,
    /// Which try it was (1 for a new request).
    pub attempt: u32,
    /// The answer.
    pub outcome: Outcome,
    /// How long the answer took.
    pub latency: Micros,
    /// Which gateway (target, or Redis connection) it was sent to: 0 with one.
    pub gateway: u32,
    /// The `Retry-After` its answer carried, as a delay in µs (whole seconds), if it carried
    /// one the probe reads.
    pub retry_after: Option<Micros>,
}
