//! Helpers shared by the integration tests.

use ratelab::sim::{simulate_run, Scenario};
use ratelab::spec::{LimiterSpec, TrafficSpec};
use ratelab::time::{Micros, MINUTE, MS};
use ratelab::traffic::FloodStart;

/// The busiest windows of `limiters` under a flood of one request a millisecond from `start`,
/// at `limit` per minute, over ten minutes.
#[allow(dead_code)] // (not every test file uses every helper)
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

/// A checked scenario of `traffic` against `limiters` at `limit` per `window`, for `duration`,
/// `runs` runs from `seed`.
#[allow(dead_code)] // (not every test file uses every helper)
pub fn scenario(
    traffic: &str,
    limiters: &[&str],
    (limit, window): (u64, Micros),
    duration: Micros,
    (runs, seed): (u32, u64),
) -> Scenario {
    let s = Scenario {
        limiters: limiters
            .iter()
            .map(|l| LimiterSpec::parse(l).expect("a valid limiter"))
            .collect(),
        traffic: TrafficSpec::parse(traffic).expect("valid traffic"),
        limit,
        window,
        duration,
        runs,
        seed,
    };
    s.validate().expect("a valid scenario");
    s
}
