//! Helpers shared by the integration tests.

use ratelab::sim::{simulate_run, Scenario};
use ratelab::spec::{LimiterSpec, TrafficSpec};
use ratelab::time::{MINUTE, MS};
use ratelab::traffic::FloodStart;

/// The busiest windows of `limiters` under a flood of one request a millisecond from `start`,
/// at `limit` per minute, over ten minutes.
pub fn flood_busiest(limiters: Vec<LimiterSpec>, limit: u64, start: FloodStart) -> Vec<u64> {
    let s = Scenario {
        limiters,
        traffic: TrafficSpec::Flood {
            start,
            every: MS,
            length: None,
        },
        limit,
        window: MINUTE,
        duration: 10 * MINUTE,
        runs: 1,
        seed: 1,
    };
    s.validate().expect("valid scenario");
    simulate_run(&s, 0)
        .expect("runs")
        .iter()
        .map(|r| r.busiest)
        .collect()
}
