//! The pure half of `ratelab probe`: what to send to a real limiter, and what its answers mean.
//!
//! A [`Plan`] turns a scenario's traffic into send times (µs from the start of the probe),
//! reacting to rejections for a retrying client exactly as the simulator's client does. The
//! sender (in the CLI, with a real clock and a real network) records one [`Record`] per
//! request; [`ProbeReport::new`] audits those records with the same auditor as the simulator
//! and, given a model limiter, replays the same send times through it and compares decision by
//! decision. Nothing here reads a clock or does I/O.

mod check;
mod plan;
#[cfg(all(test, feature = "clients"))]
mod policy_tests;
mod record;
mod report;
#[cfg(test)]
mod tests;

pub use plan::{
    check_size, Answer, Due, Plan, PlanSummary, MAX_DURATION, MAX_PER_MS, MAX_RATE, MAX_REQUESTS,
    MAX_TARGETS,
};
pub use record::{Outcome, Record};
pub use report::{
    wall_clock_phase, Audit, GatewayModel, GatewayReport, ModelComparison, ProbeMeta, ProbeReport,
    Quantiles, TraceData,
};
