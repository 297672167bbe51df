//! Memory is bounded by design: what a run keeps does not grow with the arrivals of a window
//! or the requests of a run, and a scenario whose state would still pass the budget is refused
//! before it runs, in one line saying why and what would fit.

use ratelab::sim::{simulate, trace, Scenario};
use ratelab::spec::{LimiterSpec, TrafficSpec};
use ratelab::time::{Micros, MINUTE, SECOND};

fn scenario(limiters: &[&str], traffic: &str, limit: u64, window: Micros) -> Scenario {
    Scenario {
        limiters: limiters
            .iter()
            .map(|l| LimiterSpec::parse(l).expect("valid limiter"))
            .collect(),
        traffic: TrafficSpec::parse(traffic).expect("valid traffic"),
        limit,
        window,
        duration: 60 * MINUTE,
        runs: 3,
        seed: 7,
    }
}

/// The exact nearest-rank quantile of every queueing delay of every run, from the traces.
fn exact_delays(s: &Scenario) -> Vec<Micros> {
    let mut delays = Vec::new();
    for run in 0..s.runs {
        let (_, t) = trace(s, 0, run).expect("valid scenario");
        for i in 0..t.times.len() {
            if t.admitted[i] {
                delays.push(t.released[i] - t.times[i]);
            }
        }
    }
    delays.sort_unstable();
    delays
}

fn nearest_rank(sorted: &[Micros], q: f64) -> Micros {
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

#[test]
fn delay_quantiles_are_the_exact_ones_to_the_histograms_precision() {
    // Delays up to 3 ms (exact) and up to 12 s (within 2^-11 below).
    for (s, exact_below) in [
        (
            scenario(
                &["leaky-bucket:burst=3,mode=queue"],
                "steady:load=1.2",
                1_000,
                SECOND,
            ),
            true,
        ),
        (
            scenario(
                &["leaky-bucket:burst=20,mode=queue"],
                "page-loads:load=1.2",
                100,
                MINUTE,
            ),
            false,
        ),
    ] {
        let report = simulate(&s).expect("valid scenario");
        let delays = exact_delays(&s);
        let got = [
            report.results[0].delay_p50_us,
            report.results[0].delay_p99_us,
        ];
        for (q, got) in [0.5, 0.99].into_iter().zip(got) {
            let want = nearest_rank(&delays, q);
            let got = got.expect("a queueing limiter reports delays");
            if exact_below {
                assert!(want < 4_096);
                assert_eq!(got, want, "q {q}");
            } else {
                assert!(want >= 4_096, "the scenario exercises the log buckets");
                assert!(
                    got <= want && want - got < want >> 11,
                    "q {q}: {got} vs {want}"
                );
            }
        }
    }
}
