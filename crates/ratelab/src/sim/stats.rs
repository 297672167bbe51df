//! What a run gives back: each limiter's tallies ([`RunStats`]), a retrying client's
//! ([`ClientStats`]), and, for plots, every decision of one limiter ([`Trace`]).

use crate::histogram::Histogram;
#[cfg(feature = "fleet")]
use crate::limiter::FleetStats;
use crate::time::Micros;
use serde::{Deserialize, Serialize};

/// What one limiter did in one run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunStats {
    /// Requests offered (retries not counted again).
    pub offered: u64,
    /// Requests admitted.
    pub admitted: u64,
    /// Decisions made (retries included).
    pub decisions: u64,
    /// The busiest trailing window.
    pub busiest: u64,
    /// Where that window ends.
    pub busiest_at: Micros,
    /// Admissions the literal rule would have rejected; `None` where the run was asked for
    /// the busiest window alone ([`crate::audit::Auditor::bound_only`]: the study's lanes whose
    /// wrong decisions no table reads).
    pub wrong_admits: Option<u64>,
    /// Rejections the literal rule would have admitted; `None` as `wrong_admits`.
    pub wrong_rejects: Option<u64>,
    /// Queueing delays of admitted requests (queueing limiters only), to the histogram's
    /// precision (exact below 256 µs, within 0.8% above).
    pub delays: Histogram,
    /// What the retrying clients went through (`retry` traffic only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(not(feature = "clients"), serde(skip))]
    pub client: Option<ClientStats>,
    /// A fleet's room instants and per-gateway tallies (`--gateways` only).
    #[cfg(feature = "fleet")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fleet: Option<FleetStats>,
}

/// What a run's retrying clients went through, beside the limiter's tallies (their tries are
/// `decisions`, their requests `offered`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientStats {
    /// Requests that were never admitted: out of tries, of retry budget, or of time.
    pub gave_up: u64,
    /// From each admitted request's first try to the try admitted, to the histogram's
    /// precision.
    pub success: Histogram,
    /// The most tries in any trailing second `(t − 1 s, t]`.
    pub peak_second: u64,
    /// Where that second ends.
    pub peak_second_at: Micros,
    /// Clients in the run.
    pub clients: u64,
    /// Clients locked out: served under half of their requests.
    pub locked: u64,
    /// Requests (first tries) and tries: with a mix, each group's own (the fleet's are the
    /// run's `offered` and `decisions`, and are 0 here).
    #[serde(default)]
    pub requests: u64,
    /// Tries, retries included (see `requests`).
    #[serde(default)]
    pub attempts: u64,
    /// With a mix (`retry:...+clients=M,...`), each group's, in the spec's order.
    #[cfg(feature = "mix")]
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<ClientStats>,
}

impl RunStats {
    /// The share of offered requests admitted, if any were offered.
    pub fn served_share(&self) -> Option<f64> {
        (self.offered > 0).then(|| self.admitted as f64 / self.offered as f64)
    }
}

/// Per-decision detail of one run of one limiter, for plots.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trace {
    /// Arrival times of all decisions, in order.
    pub times: Vec<Micros>,
    /// Whether each was admitted.
    pub admitted: Vec<bool>,
    /// When each admitted request left (its arrival, unless it queued).
    pub released: Vec<Micros>,
    /// Audited admissions: when each was let through.
    pub window_times: Vec<Micros>,
    /// The trailing-window count just after each audited admission.
    pub window_counts: Vec<u64>,
}

impl Trace {
    /// Empties every list, keeping what each has allocated.
    pub fn clear(&mut self) {
        self.times.clear();
        self.admitted.clear();
        self.released.clear();
        self.window_times.clear();
        self.window_counts.clear();
    }

    /// Makes room for `n` decisions (and as many admissions) in every list, exactly.
    pub fn reserve(&mut self, n: usize) {
        self.times.reserve_exact(n);
        self.admitted.reserve_exact(n);
        self.released.reserve_exact(n);
        self.window_times.reserve_exact(n);
        self.window_counts.reserve_exact(n);
    }
}
