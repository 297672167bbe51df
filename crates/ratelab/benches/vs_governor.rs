//! ratelab's end-to-end cost per decision against governor's GCRA decision alone, side by side
//! in one run: `cargo bench -p ratelab --bench vs_governor`; docs/src/performance.md records the numbers.
//!
//! - governor: `RateLimiter::direct_with_clock` with a `FakeRelativeClock`, the clock advanced
//!   to each arrival time and `check()` called, over arrival times generated beforehand (the
//!   decision alone: no traffic generation, no audit);
//! - ratelab: `simulate_run` of the same scenario, the path `ratelab simulate` takes for each
//!   run: traffic generated in chunks, every arrival decided by GCRA and audited against the
//!   literal rule.
//!
//! Both see the same Poisson arrivals at full load (100 per minute, load 1.0, GCRA with a
//! burst of 100). The two are measured alternately, round after round, on the same thread, so
//! that a busy machine slows both alike; the ratio is taken per round, and the median and the
//! spread of the rounds are printed. Time is the thread's time on a CPU (Linux's
//! `/proc/thread-self/schedstat`), so that time spent waiting for a core while other work
//! runs is not counted; elsewhere it is wall time.

use governor::clock::FakeRelativeClock;
use governor::{Quota, RateLimiter};
use ratelab::sim::{simulate_run, Scenario};
use ratelab::spec::{LimiterSpec, TrafficSpec};
use ratelab::time::MINUTE;
use std::hint::black_box;
use std::num::NonZeroU32;
use std::time::{Duration, Instant};

/// A point in time for measuring: this thread's nanoseconds on a CPU where Linux tells them,
/// else the wall clock.
struct Clock(Instant);

impl Clock {
    fn start() -> (Self, Option<u64>) {
        (Clock(Instant::now()), on_cpu_ns())
    }

    /// Seconds since `start`.
    fn seconds(&self, cpu: Option<u64>) -> f64 {
        match (cpu, on_cpu_ns()) {
            (Some(a), Some(b)) => (b - a) as f64 * 1e-9,
            _ => self.0.elapsed().as_secs_f64(),
        }
    }
}

fn on_cpu_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// Rounds of the pair (`VS_GOVERNOR_ROUNDS` to change); each measures about 2^23 decisions on
/// each side.
const ROUNDS: usize = 15;

fn scenario() -> Scenario {
    Scenario {
        limiters: vec![LimiterSpec::parse("gcra").expect("valid")],
        traffic: TrafficSpec::parse("steady:load=1.0").expect("valid"),
        limit: 100,
        window: MINUTE,
        // 100 a minute for 84,000 minutes: about 8.4 million arrivals.
        duration: 84_000 * MINUTE,
        runs: 1,
        seed: 1,
    }
}

/// governor's decisions on `times`: (admitted, seconds).
fn governor(s: &Scenario, times: &[u64]) -> (u64, f64) {
    let period = Duration::from_micros(s.window / s.limit);
    let burst = NonZeroU32::new(s.limit as u32).expect("limit above zero");
    let quota = Quota::with_period(period)
        .expect("period above zero")
        .allow_burst(burst);
    let clock = FakeRelativeClock::default();
    let limiter = RateLimiter::direct_with_clock(quota, clock.clone());
    let (clock_start, cpu) = Clock::start();
    let mut now = 0;
    let mut admitted = 0u64;
    for &t in black_box(times) {
        clock.advance(Duration::from_micros(t - now));
        now = t;
        admitted += u64::from(limiter.check().is_ok());
    }
    (admitted, clock_start.seconds(cpu))
}

/// ratelab's whole run: (decisions, admitted, seconds).
fn ratelab(s: &Scenario) -> (u64, u64, f64) {
    let (clock_start, cpu) = Clock::start();
    let stats = simulate_run(black_box(s), 0).expect("valid scenario");
    let seconds = clock_start.seconds(cpu);
    (stats[0].decisions, stats[0].admitted, seconds)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let s = scenario();
    s.validate().expect("valid scenario");
    let times: Vec<u64> = s.arrivals(0).collect();
    let n = times.len() as f64;
    println!(
        "GCRA, steady:load=1.0, {} per {} s, {} arrivals; ns per decision",
        s.limit,
        s.window / 1_000_000,
        times.len()
    );
    println!("round  governor  ratelab  ratio");
    let (mut gov, mut lab, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    let mut admitted = (0, 0);
    let rounds = std::env::var("VS_GOVERNOR_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(ROUNDS);
    for round in 0..rounds {
        // Alternate which goes first, so neither always runs on a warmer machine.
        let (g, r) = if round % 2 == 0 {
            let g = governor(&s, &times);
            (g, ratelab(&s))
        } else {
            let r = ratelab(&s);
            (governor(&s, &times), r)
        };
        assert_eq!(r.0, times.len() as u64, "ratelab decided every arrival");
        admitted = (g.0, r.1);
        let (g_ns, r_ns) = (g.1 * 1e9 / n, r.2 * 1e9 / n);
        println!("{round:>5}  {g_ns:>8.2}  {r_ns:>7.2}  {:.3}", r_ns / g_ns);
        gov.push(g_ns);
        lab.push(r_ns);
        ratios.push(r_ns / g_ns);
    }
    let (lo, hi) = ratios
        .iter()
        .fold((f64::MAX, f64::MIN), |(lo, hi), &r| (lo.min(r), hi.max(r)));
    println!(
        "median: governor {:.2} ns, ratelab {:.2} ns, ratio {:.3} (rounds {lo:.3}–{hi:.3}); admitted: governor {}, ratelab {}",
        median(&mut gov),
        median(&mut lab),
        median(&mut ratios),
        admitted.0,
        admitted.1
    );
}
