//! The simulator: one scenario in, one report out.
//!
//! For every run, one arrival stream is generated from the scenario's seed and fed, chunk by
//! chunk, to every limiter, so all limiters see exactly the same arrivals and the stream is
//! never held in full. A retrying client is the exception: it reacts to decisions, so each
//! limiter gets its own client, built from the same seed, and sees the same first tries.

mod bounds;
mod build;
#[cfg(feature = "fleet")]
mod gateways;
mod lane;
mod mechanism;
mod memory;
mod report;
mod run;
mod scenario;
mod stats;
#[cfg(feature = "storm")]
mod storm;
#[cfg(feature = "storm")]
mod twins;

pub use bounds::ON_OFF_PERIODS;
#[cfg(feature = "fleet")]
pub use gateways::{gateway_trace, GatewayTrace, GATEWAY_TRACE_BYTES_PER_DECISION};
pub use lane::decide_and_audit;
pub use mechanism::{
    Boundaries, Frame, Mechanism, MECHANISM_BYTES_PER_DECISION, TRACE_BYTES_PER_DECISION,
};
pub use memory::{format_bytes, FleetMemory, LaneMemory, Memory};
pub use report::{fold_delays, mean_se, ClientReport, GatewayReport, LimiterReport, Report};
pub use run::{
    mechanism, mechanism_into, playback_memory, simulate_run, simulate_run_lanes, trace, trace_into,
};
pub use scenario::{
    Scenario, CHUNK, LIMIT_RANGE, MAX_DECISIONS, MAX_TIME, MEMORY_BUDGET, MINUTES_RANGE,
    RUNS_RANGE, WINDOW_RANGE,
};
pub use stats::{ClientStats, RunStats, Trace};

use crate::error::Error;

/// Validates and runs the whole scenario.
pub fn simulate(scenario: &Scenario) -> Result<Report, Error> {
    scenario.validate()?;
    let mut runs: Vec<Vec<RunStats>> = Vec::with_capacity(scenario.runs as usize);
    for run in 0..scenario.runs {
        let mut stats = simulate_run(scenario, run)?;
        if let Some(first) = runs.first_mut() {
            fold_delays(first, &mut stats);
        }
        runs.push(stats);
    }
    Ok(Report::from_runs(scenario, &runs))
}
