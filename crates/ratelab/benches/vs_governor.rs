//! ratelab's cost per decision against governor's GCRA, decision against decision and end to
//! end against end to end, side by side in one run: `cargo bench -p ratelab --bench vs_governor`; docs/src/performance.md records the numbers.
//!
//! - governor: `RateLimiter::direct_with_clock` with a `FakeRelativeClock`, the clock advanced
//!   to each arrival time and `check()` called, over arrival times generated beforehand (the
//!   decision alone: no traffic generation, no audit);
//! - ratelab end to end: `simulate_run` of the same scenario, the path `ratelab simulate` takes
//!   for each run: traffic generated in chunks, every arrival decided by GCRA and audited
//!   against the literal rule;
//! - ratelab's decisions and audit alone: the same arrival times generated beforehand, as
//!   governor is given them, decided by GCRA and audited a chunk at a time
//!   (`sim::decide_and_audit`), like for like with governor but for the audit, which governor
//!   does not do;
//! - ratelab's arrivals alone: the same arrival times drawn a chunk at a time into one buffer,
//!   as a run draws them (`Arrivals::fill`), nothing decided: what end to end adds to the
//!   decisions, and so how far end to end can come down while the draws stay what they are;
//! - governor end to end: the same arrivals drawn the same way, a chunk at a time, each chunk
//!   decided by governor as it is drawn: like for like with ratelab end to end, but for the
//!   audit, which governor does not do.
//!
//! All see the same Poisson arrivals at full load (100 per minute, load 1.0, GCRA with a burst
//! of 100). The five are measured in turn, round after round, on the same thread, so that a
//! busy machine slows them alike; the ratios to governor are taken per round, and their
//! medians and the spread of the rounds are printed. Time is wall time, to the nanosecond: run it on an idle
//! machine (a round where other work took the core shows as an outlier in the spread, and the
//! median passes over it).
//!
//! `VS_GOVERNOR_PARTS=N` times ratelab's arrivals alone and its decisions and audit alone, N
//! rounds each in turn, and prints their least and median: for a change to one of the loops,
//! timed against the build before it.

use governor::clock::FakeRelativeClock;
use governor::{Quota, RateLimiter};
use ratelab::audit::Auditor;
use ratelab::sim::{decide_and_audit, simulate_run, Scenario, CHUNK};
use ratelab::spec::{LimiterSpec, TrafficSpec};
use ratelab::time::MINUTE;
use std::hint::black_box;
use std::num::NonZeroU32;
use std::time::{Duration, Instant};

/// A point in time for measuring: the wall clock, read to the nanosecond. (This thread's time
/// on a CPU, read before, moves only at the scheduler's tick on this project's VM, 4 ms, both
/// through `/proc/thread-self/schedstat` and `CLOCK_THREAD_CPUTIME_ID`: 0.48 ns over a pass's
/// 8.4 million decisions.)
struct Clock(Instant);

impl Clock {
    fn start() -> Self {
        Clock(Instant::now())
    }

    /// Seconds since `start`.
    fn seconds(&self) -> f64 {
        self.0.elapsed().as_secs_f64()
    }
}

/// Rounds of the pair (`VS_GOVERNOR_ROUNDS` to change); each measures about 2^23 decisions on
/// each side, `PASSES` times.
const ROUNDS: usize = 15;

/// Passes over the arrivals per side and round: a round's figure is their mean, so a moment's
/// disturbance weighs less, without holding four times the arrivals in memory.
const PASSES: usize = 4;

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

/// governor's quota for the scenario: its limit per window, all of it as the burst.
fn quota(s: &Scenario) -> Quota {
    let period = Duration::from_micros(s.window / s.limit);
    let burst = NonZeroU32::new(s.limit as u32).expect("limit above zero");
    Quota::with_period(period)
        .expect("period above zero")
        .allow_burst(burst)
}

/// governor's decisions on `times`: (admitted, seconds).
fn governor(s: &Scenario, times: &[u64]) -> (u64, f64) {
    let quota = quota(s);
    let timer = Clock::start();
    let mut admitted = 0u64;
    for _ in 0..PASSES {
        // A fresh limiter and clock for each pass, as ratelab's run starts afresh.
        let clock = FakeRelativeClock::default();
        let limiter = RateLimiter::direct_with_clock(quota, clock.clone());
        let mut now = 0;
        admitted = 0;
        for &t in black_box(times) {
            clock.advance(Duration::from_micros(t - now));
            now = t;
            admitted += u64::from(limiter.check().is_ok());
        }
    }
    (admitted, timer.seconds() / PASSES as f64)
}

/// ratelab's whole run: (decisions, admitted, seconds).
fn ratelab(s: &Scenario) -> (u64, u64, f64) {
    let clock = Clock::start();
    let mut stats = Vec::new();
    for _ in 0..PASSES {
        stats = simulate_run(black_box(s), 0).expect("valid scenario");
    }
    let seconds = clock.seconds() / PASSES as f64;
    (stats[0].decisions, stats[0].admitted, seconds)
}

/// ratelab's decisions and audit alone, on `times` generated beforehand as governor's are, a
/// chunk at a time as a run takes them: (admitted, seconds).
fn ratelab_decisions(s: &Scenario, times: &[u64]) -> (u64, f64) {
    let clock = Clock::start();
    let mut admitted = 0;
    for _ in 0..PASSES {
        let mut limiter = s.build_limiter(&s.limiters[0], 0).expect("valid limiter");
        let mut audit = Auditor::new(s.limit, s.window);
        admitted = 0;
        for chunk in black_box(times).chunks(CHUNK) {
            admitted += decide_and_audit(&mut limiter, &mut audit, chunk);
        }
        black_box(&audit);
    }
    (admitted, clock.seconds() / PASSES as f64)
}

/// ratelab's arrivals alone, drawn as a run draws them, a chunk at a time into one buffer:
/// (arrivals, seconds).
fn ratelab_arrivals(s: &Scenario) -> (u64, f64) {
    let clock = Clock::start();
    let mut drawn = 0;
    let mut buf = Vec::with_capacity(CHUNK);
    for _ in 0..PASSES {
        let mut arrivals = s.arrivals(0);
        drawn = 0;
        while arrivals.fill(black_box(&mut buf), CHUNK) {
            drawn += buf.len() as u64;
        }
        drawn += buf.len() as u64;
        black_box(&buf);
    }
    (drawn, clock.seconds() / PASSES as f64)
}

/// governor fed as ratelab's run is fed: the arrivals drawn a chunk at a time into one buffer,
/// each chunk decided by governor before the next is drawn: (decisions, admitted, seconds).
fn governor_end_to_end(s: &Scenario) -> (u64, u64, f64) {
    let quota = quota(s);
    let timer = Clock::start();
    let (mut decided, mut admitted) = (0, 0);
    let mut buf = Vec::with_capacity(CHUNK);
    for _ in 0..PASSES {
        let clock = FakeRelativeClock::default();
        let limiter = RateLimiter::direct_with_clock(quota, clock.clone());
        let mut arrivals = s.arrivals(0);
        let mut now = 0;
        (decided, admitted) = (0, 0);
        loop {
            let more = arrivals.fill(black_box(&mut buf), CHUNK);
            for &t in &buf {
                clock.advance(Duration::from_micros(t - now));
                now = t;
                admitted += u64::from(limiter.check().is_ok());
            }
            decided += buf.len() as u64;
            if !more {
                break;
            }
        }
    }
    (decided, admitted, timer.seconds() / PASSES as f64)
}

/// ratelab's two parts alone, `rounds` times each in turn, without governor: the arrivals and
/// the decisions and audit, as the columns of the comparison measure them, their least and
/// median ns. For timing a change to one loop against the build before it, in turn
/// (`VS_GOVERNOR_PARTS=15 cargo bench -p ratelab --bench vs_governor`), where the other
/// tenants of a shared host move the whole comparison by more than the change.
fn parts(s: &Scenario, times: &[u64], rounds: usize) {
    let n = times.len() as f64;
    let (mut arrivals, mut decisions) = (Vec::new(), Vec::new());
    let mut admitted = 0;
    for _ in 0..rounds.max(1) {
        let a = ratelab_arrivals(s);
        assert_eq!(a.0, times.len() as u64, "the same arrivals");
        arrivals.push(a.1 * 1e9 / n);
        let d = ratelab_decisions(s, times);
        admitted = d.0;
        decisions.push(d.1 * 1e9 / n);
    }
    let least = |v: &[f64]| v.iter().copied().fold(f64::MAX, f64::min);
    println!(
        "ns per arrival, {} rounds: arrivals alone least {:.3}, median {:.3}; decisions and audit \
         alone least {:.3}, median {:.3}; admitted {admitted}",
        arrivals.len(),
        least(&arrivals),
        median(&mut arrivals),
        least(&decisions),
        median(&mut decisions)
    );
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
    if let Some(rounds) = std::env::var("VS_GOVERNOR_PARTS")
        .ok()
        .and_then(|r| r.parse().ok())
    {
        return parts(&s, &times, rounds);
    }
    println!(
        "GCRA, steady:load=1.0, {} per {} s, {} arrivals; ns per decision",
        s.limit,
        s.window / 1_000_000,
        times.len()
    );
    println!(
        "round  governor  ratelab end to end  ratio  decisions and audit  ratio  arrivals alone  ratio  \
         governor end to end  ratelab's ratio to it"
    );
    // Per side: ns per decision, and the ratio to governor's, round by round.
    let mut sides: [(Vec<f64>, Vec<f64>); 4] = Default::default();
    // governor end to end: ns per decision, and ratelab end to end's ratio to it.
    let mut geet: (Vec<f64>, Vec<f64>) = Default::default();
    let mut admitted = (0, 0, 0, 0);
    let rounds = std::env::var("VS_GOVERNOR_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(ROUNDS);
    for round in 0..rounds {
        // Turn about which goes first, so that none always runs on a warmer machine.
        let mut secs = [0.0; 5];
        for k in 0..5 {
            match (round + k) % 5 {
                0 => {
                    let g = governor(&s, &times);
                    admitted.0 = g.0;
                    secs[0] = g.1;
                }
                1 => {
                    let r = ratelab(&s);
                    assert_eq!(r.0, times.len() as u64, "ratelab decided every arrival");
                    admitted.1 = r.1;
                    secs[1] = r.2;
                }
                2 => {
                    let d = ratelab_decisions(&s, &times);
                    admitted.2 = d.0;
                    secs[2] = d.1;
                }
                3 => {
                    let a = ratelab_arrivals(&s);
                    assert_eq!(a.0, times.len() as u64, "the same arrivals");
                    secs[3] = a.1;
                }
                _ => {
                    let g = governor_end_to_end(&s);
                    assert_eq!(g.0, times.len() as u64, "governor decided every arrival");
                    admitted.3 = g.1;
                    secs[4] = g.2;
                }
            }
        }
        let ns = secs.map(|x| x * 1e9 / n);
        println!(
            "{round:>5}  {:>8.2}  {:>18.2}  {:.3}  {:>19.2}  {:.3}  {:>14.2}  {:.3}  {:>19.2}  {:.3}",
            ns[0],
            ns[1],
            ns[1] / ns[0],
            ns[2],
            ns[2] / ns[0],
            ns[3],
            ns[3] / ns[0],
            ns[4],
            ns[1] / ns[4]
        );
        for (side, &x) in sides.iter_mut().zip(&ns) {
            side.0.push(x);
            side.1.push(x / ns[0]);
        }
        geet.0.push(ns[4]);
        geet.1.push(ns[1] / ns[4]);
    }
    let range = |v: &[f64]| {
        v.iter()
            .fold((f64::MAX, f64::MIN), |(lo, hi), &r| (lo.min(r), hi.max(r)))
    };
    let [gov, lab, own, draw] = sides.map(|(mut ns, mut ratios)| {
        let (lo, hi) = range(&ratios);
        (median(&mut ns), median(&mut ratios), lo, hi)
    });
    let (geet_lo, geet_hi) = range(&geet.1);
    let (geet_ns, geet_ratio) = (median(&mut geet.0), median(&mut geet.1));
    println!(
        "median: governor {:.2} ns; ratelab end to end {:.2} ns, ratio {:.3} (rounds {:.3}–{:.3}); \
         ratelab's decisions and audit alone {:.2} ns, ratio {:.3} (rounds {:.3}–{:.3}); \
         ratelab's arrivals alone {:.2} ns, ratio {:.3} (rounds {:.3}–{:.3}); \
         governor end to end {:.2} ns, ratelab end to end's ratio to it {:.3} (rounds {:.3}–{:.3}); \
         admitted: governor {} and {}, ratelab {} and {}",
        gov.0,
        lab.0,
        lab.1,
        lab.2,
        lab.3,
        own.0,
        own.1,
        own.2,
        own.3,
        draw.0,
        draw.1,
        draw.2,
        draw.3,
        geet_ns,
        geet_ratio,
        geet_lo,
        geet_hi,
        admitted.0,
        admitted.3,
        admitted.1,
        admitted.2
    );
    assert_eq!(
        admitted.0, admitted.3,
        "governor admits the same whether its arrivals come beforehand or a chunk at a time"
    );
}
