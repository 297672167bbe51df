//! Durations and counts come from users, so every time the simulator computes from them (a
//! flood's end, a retry's next try, a horizon, a bucket's scaled clock) must either fit in 64
//! bits or be refused before the run. A run with wrapped times could make time go backwards
//! and let a limiter exceed its own bound.
//!
//! The property: a scenario built from extreme values is either refused by `validate` with a
//! message, or it runs, every arrival stays within `MAX_TIME`, and every limiter's busiest
//! window is within the bound `theory::worst_case` gives for it.

use proptest::prelude::*;
use ratelab::sim::{simulate_run, MAX_TIME};
use ratelab::theory::worst_case;
use ratelab::time::{Micros, MINUTE, MS, SECOND};
use ratelab::traffic::{Backoff, ClientGroup, FloodStart, Jitter, RetryPolicy};
use ratelab::{LimiterSpec, Rate, Scenario, TrafficSpec};

/// Durations at the edges: tiny, around the window, and near 64-bit overflow.
fn extreme_duration() -> impl Strategy<Value = Micros> {
    prop_oneof![
        Just(1),
        Just(MS),
        Just(SECOND),
        Just(24 * 60 * MINUTE),
        Just(MAX_TIME),
        Just(MAX_TIME + 1),
        Just(u64::MAX / 1_000),
        Just(u64::MAX / 2),
        Just(u64::MAX - 1),
        Just(u64::MAX),
        any::<u64>(),
        1..10 * SECOND,
    ]
}

fn traffic() -> impl Strategy<Value = TrafficSpec> {
    prop_oneof![
        (extreme_duration(), 0..3u8, extreme_duration()).prop_map(|(every, start, length)| {
            TrafficSpec::Flood {
                start: match start {
                    0 => FloodStart::Worst,
                    _ => FloodStart::Offset(u64::from(start) * MS),
                },
                every,
                length: Some(length),
            }
        }),
        (
            1..1_000u64,
            extreme_duration(),
            0..50u64,
            1..=1_000u32,
            extreme_duration(),
            (0..2u8, 0..4u8, 0..3u8, any::<bool>(), 1..=3u32),
        )
            .prop_map(
                |(count, per, spike, tries, every, (backoff, jitter, budget, honor, clients))| {
                    // Exponential backoff from 1 µs by the largest factor, capped at `every`.
                    let exponential = backoff == 1;
                    TrafficSpec::Retry {
                        rate: Rate { count, per },
                        spike,
                        at: SECOND,
                        tries,
                        every,
                        policy: RetryPolicy {
                            backoff: if exponential {
                                Backoff::Exponential {
                                    base: 1,
                                    factor: 100_000,
                                    cap: every,
                                }
                            } else {
                                Backoff::Fixed
                            },
                            jitter: match jitter {
                                0 => Jitter::None,
                                1 => Jitter::Full,
                                2 => Jitter::Equal,
                                _ if exponential => Jitter::Decorrelated,
                                _ => Jitter::None,
                            },
                            budget: [None, Some(0), Some(10_000_000)][budget as usize],
                            honor,
                        },
                        clients,
                        // Three clients are sometimes a mix: two more of the essays' policy
                        // honouring `Retry-After` at once after the longest fixed gap.
                        mix: if clients == 3 {
                            vec![ClientGroup {
                                clients: 2,
                                tries,
                                every,
                                policy: RetryPolicy {
                                    honor: !honor,
                                    ..RetryPolicy::default()
                                },
                            }]
                        } else {
                            Vec::new()
                        },
                    }
                }
            ),
        (
            extreme_duration(),
            extreme_duration(),
            proptest::option::of(0..1_000u64)
        )
            .prop_map(|(before, after, first)| TrafficSpec::BoundaryBurst {
                before,
                after,
                first,
                second: first.map(|n| 2 * n),
            }),
    ]
}

fn limiters() -> Vec<LimiterSpec> {
    [
        "fixed-window",
        "sliding-log",
        "sliding-log:record-rejects=true",
        "sliding-window-counter",
        "token-bucket:burst=3",
        "gcra",
        "leaky-bucket:burst=2,mode=meter",
        "leaky-bucket:burst=2,mode=queue",
        "nginx:rate=7r/m,burst=2,delay=1",
        "nginx:rate=5r/s,burst=3,nodelay",
        "haproxy:period=1s",
        "haproxy:period=2s,limit=2,record-rejects=false",
        "express-rate-limit:limit=3,window-ms=1500",
        "rate-limiter-flexible:points=2,duration=0.001",
        "rate-limiter-flexible:points=2,duration=24,block-duration=0.001",
        "go-rate:r=1000000,b=3",
        "go-rate:every=24h,b=1",
        "redis-cell:max-burst=2,count=1000,period=1",
        "vsthrottle:limit=2,period=1ms",
        "limits:rate=1/second,strategy=moving-window",
        "limits:rate=1000000/second,strategy=sliding-window-counter",
        "limits:rate=3/360days",
    ]
    .iter()
    .map(|s| LimiterSpec::parse(s).expect("spec"))
    .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    #[test]
    fn extreme_specs_are_refused_or_stay_within_their_bounds(
        traffic in traffic(),
        window in prop_oneof![Just(MS), Just(SECOND), Just(24 * 60 * MINUTE)],
        limit in prop_oneof![Just(1u64), Just(3u64), Just(20u64)],
        minutes in prop_oneof![Just(1u64), Just(100_000u64)],
    ) {
        let scenario = Scenario {
            limiters: limiters(),
            traffic,
            limit,
            window,
            duration: minutes * MINUTE,
            runs: 1,
            seed: 7,
        };
        match scenario.validate() {
            Err(e) => {
                // Refused with a message that names what was wrong.
                let message = e.to_string();
                prop_assert!(!message.is_empty());
                prop_assert!(!message.contains('\n'), "{message}");
            }
            Ok(()) => {
                prop_assume!(scenario.expected_arrivals() * 8.0 < 200_000.0);
                // And at most about 30 million decisions in all (ten seconds or so): a
                // case's cost is its decisions, retries included.
                prop_assume!(scenario.expected_decisions() <= 3e7);
                let horizon = scenario.checked_horizon();
                prop_assert!(horizon.is_some_and(|h| h <= MAX_TIME), "{horizon:?}");
                let mut last = 0;
                for t in scenario.arrivals(0).take(1_000_000) {
                    prop_assert!(t >= last, "time went backwards: {t} after {last}");
                    prop_assert!(t <= MAX_TIME, "{t}");
                    last = t;
                }
                let stats = simulate_run(&scenario, 0).expect("validated");
                for (spec, s) in scenario.limiters.iter().zip(&stats) {
                    let bound = worst_case(spec, limit, window).expect("a known bound");
                    prop_assert!(
                        s.busiest <= bound,
                        "{}: busiest {} over its bound {bound} ({:?})",
                        spec.text, s.busiest, scenario.traffic
                    );
                }
            }
        }
    }
}

/// The cases that wrapped before the horizon was checked: each is refused, naming the part.
#[test]
fn times_that_would_overflow_are_refused_up_front() {
    let day = 24 * 60 * MINUTE;
    let base = Scenario {
        limiters: limiters(),
        window: day,
        limit: 20,
        ..Scenario::default()
    };
    // A flood one request a little under a day apart, for 2^64 − 1 µs: about 2e8 arrivals,
    // under the decision cap, but its end (2 days + the length) does not fit in 64 bits.
    let flood = Scenario {
        traffic: TrafficSpec::Flood {
            start: FloodStart::Worst,
            every: day - 1,
            length: Some(u64::MAX),
        },
        ..base.clone()
    };
    let e = flood.validate().expect_err("refused").to_string();
    assert!(e.contains("flood: for"), "{e}");
    assert!(e.contains("285 years"), "{e}");
    let retry = |tries: u32, every: Micros, duration: Micros| Scenario {
        traffic: TrafficSpec::Retry {
            rate: Rate {
                count: 1,
                per: SECOND,
            },
            spike: 3,
            at: SECOND,
            tries,
            every,
            policy: RetryPolicy::default(),
            clients: 1,
            mix: Vec::new(),
        },
        duration,
        ..base.clone()
    };
    // A thousand tries 2^60 µs apart: the last retry is due past 2^64.
    let e = retry(1_000, 1 << 60, base.duration)
        .validate()
        .expect_err("refused")
        .to_string();
    assert!(e.contains("retry: tries × every"), "{e}");
    // Just inside the limit it runs: 2 tries, the second 2^51 µs after the first.
    let inside = retry(2, 1 << 51, MINUTE);
    inside.validate().expect("accepted");
    let stats = simulate_run(&inside, 0).expect("runs");
    assert!(stats.iter().all(|s| s.decisions >= 3));
}
