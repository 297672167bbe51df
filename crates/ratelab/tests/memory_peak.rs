//! The memory estimate against the allocator's own count: for every combination of limiter,
//! coordination, gateways and clients, the bytes a run holds at its peak are within what
//! [`Scenario::memory`] said before it ran (`per_run`), and where the run's state is large
//! enough to matter (over 4 MB estimated), within four times of it, for one limiter and for
//! fleets of every coordination (for a lease, of the heaviest of four runs: see below);
//! retrying clients' tries depend on what the limiter rejects, and their estimate, every try
//! rejected, is an upper bound only.
//!
//! One test in this binary: the counter is the whole process's, so nothing else may run
//! beside it. The test runs its scenarios in [`SHARDS`] child processes of this binary, each
//! with its own counter, taking every `SHARDS`-th scenario: the machine's two cores measure
//! at once, and every scenario is still measured alone in its process.

use peak_alloc::PeakAlloc;
use ratelab::sim::{simulate_run, Scenario};
use ratelab::spec::{FleetSpec, LimiterSpec, TrafficSpec};
use ratelab::time::{Micros, MINUTE, SECOND};

/// Counts every allocation; a reallocation counts both buffers while it moves.
#[global_allocator]
static ALLOC: PeakAlloc = PeakAlloc;

/// The most bytes held above what was held before, while `f` ran.
fn peak_of<T>(f: impl FnOnce() -> T) -> (usize, T) {
    let base = ALLOC.current_usage();
    ALLOC.reset_peak_usage();
    let out = f();
    (ALLOC.peak_usage() - base, out)
}

fn scenario(
    kind: &str,
    fleet: Option<(u32, &str, &str)>,
    traffic: &str,
    limit: u64,
    window: Micros,
    duration: Micros,
) -> Scenario {
    let mut spec = LimiterSpec::parse(kind).expect("valid limiter");
    spec.fleet = fleet.map(|(n, route, coord)| {
        FleetSpec::parse(&n.to_string(), Some(route), Some(coord)).expect("valid fleet")
    });
    Scenario {
        limiters: vec![spec],
        traffic: TrafficSpec::parse(traffic).expect("valid traffic"),
        limit,
        window,
        duration,
        runs: 1,
        seed: 3,
    }
}

/// Whether the limiter `kind` names opens its windows at a request.
fn spec_opens_at_a_request(kind: &str) -> bool {
    LimiterSpec::parse(kind)
        .expect("valid limiter")
        .opens_at_a_request()
}

/// Child processes the scenarios are dealt to, one for each of this machine kind's cores.
const SHARDS: usize = 2;
/// Set in a child: which shard it measures, `K/N`.
const SHARD_VAR: &str = "RATELAB_MEMORY_PEAK_SHARD";
/// A child's last line on stdout: how many scenarios it ran.
const ROWS_LINE: &str = "memory-peak scenarios run: ";

#[test]
fn the_estimate_bounds_the_measured_peak_and_is_close_to_it() {
    match std::env::var(SHARD_VAR) {
        Ok(shard) => {
            let (k, n) = shard
                .split_once('/')
                .and_then(|(k, n)| Some((k.parse().ok()?, n.parse().ok()?)))
                .filter(|&(k, n): &(usize, usize)| k < n)
                .unwrap_or_else(|| panic!("{SHARD_VAR} is K/N with K < N, not {shard}"));
            let rows = measure(k, n);
            println!("{ROWS_LINE}{rows}");
        }
        Err(_) => {
            let exe = std::env::current_exe().expect("this test binary");
            let children: Vec<_> = (0..SHARDS)
                .map(|k| {
                    std::process::Command::new(&exe)
                        .args([
                            "--exact",
                            "the_estimate_bounds_the_measured_peak_and_is_close_to_it",
                            "--nocapture",
                            "--test-threads",
                            "1",
                        ])
                        .env(SHARD_VAR, format!("{k}/{SHARDS}"))
                        .stderr(std::process::Stdio::inherit())
                        .stdout(std::process::Stdio::piped())
                        .spawn()
                        .expect("a child process of this test")
                })
                .collect();
            let mut rows = 0;
            let mut failed = Vec::new();
            for (k, child) in children.into_iter().enumerate() {
                let out = child.wait_with_output().expect("the child's output");
                let text = String::from_utf8_lossy(&out.stdout);
                let ran = text
                    .lines()
                    .find_map(|l| l.split_once(ROWS_LINE).map(|(_, n)| n))
                    .and_then(|n| n.trim().parse::<usize>().ok());
                match ran {
                    Some(n) if out.status.success() => rows += n,
                    _ => failed.push(format!("shard {k}/{SHARDS}: {}\n{text}", out.status)),
                }
            }
            assert!(failed.is_empty(), "{}", failed.join("\n"));
            assert!(rows > 1_000, "{rows} scenarios ran");
        }
    }
}

/// Measures every `n`-th scenario from the `k`-th, and returns how many it ran; panics with
/// every failure.
fn measure(k: usize, n: usize) -> usize {
    let kinds = [
        "fixed-window",
        "sliding-log",
        "sliding-window-counter",
        "token-bucket",
        "gcra",
        "leaky-bucket:burst=50",
        "haproxy:record-rejects=false",
        "leaky-bucket:mode=queue,burst=2000",
        "sliding-log:record-rejects=true",
        "haproxy",
    ];
    let fleets: [Option<(u32, &str, &str)>; 12] = [
        None,
        Some((1, "round-robin", "local")),
        Some((16, "random", "local")),
        Some((32, "round-robin", "split")),
        Some((8, "random", "sync:every=1s,delay=200ms")),
        Some((8, "random", "sync:every=1s,delay=200ms,skew=30s")),
        Some((4, "random", "sync:every=1000h")),
        Some((4, "random", "sync:every=1s,delay=100000h")),
        Some((8, "random", "central:rtt=2s")),
        Some((4, "random", "central:rtt=10ms,outage=10s+1min,fail=open")),
        Some((16, "round-robin", "local:skew=10s")),
        Some((8, "skewed:hot=0.5", "lease:size=10000000")),
    ];
    let traffics = [
        "steady:load=0.5",
        // Overloaded: a limiter counting its rejects locks the client out.
        "steady:load=3",
        // Heavy-tailed periods: the estimate lays out each run's.
        "on-off:load=1,busy=0.2",
        "flood:every=1ms,for=1min",
        "page-loads:load=1.5",
        "boundary-burst",
        "retry:rate=6/5min,spike=30,at=1min,clients=50,tries=6,every=10s,retry-after=honor",
        "retry:rate=6/5min,spike=30,at=1min,clients=40,tries=5,policy=exponential,base=1s,cap=1min,jitter=full,budget=20%+clients=10,tries=3,every=5s",
        // Tries a millisecond apart: the busiest second's tries are what the run keeps.
        "retry:rate=6/5min,spike=1000,at=1min,tries=100,every=1ms",
    ];
    let mut worst_ratio: f64 = 0.0;
    let mut worst_fleet: f64 = 0.0;
    let mut loose_anchored: f64 = 0.0;
    let mut failures = Vec::new();
    let mut rows = 0;
    let mut closest: Vec<(f64, String)> = Vec::new();
    let mut index = 0;
    // The libraries' limiters keep a few numbers a key (limits' moving window a log of its
    // own limit): behind one limiter, and behind the fleets that keep a limiter a gateway,
    // one shared, and one in a store.
    let libraries = [
        "express-rate-limit",
        "rate-limiter-flexible",
        "go-rate",
        "redis-cell",
        "vsthrottle",
        "limits",
        "limits:strategy=moving-window",
        "limits:strategy=sliding-window-counter",
        "limits:rate=1000000/minute,strategy=moving-window",
    ];
    let some_fleets = [fleets[0], fleets[2], fleets[4], fleets[8]];
    let combinations = kinds
        .iter()
        .flat_map(|k| fleets.iter().map(move |f| (*k, *f)))
        .chain(
            libraries
                .iter()
                .flat_map(|k| some_fleets.iter().map(move |f| (*k, *f))),
        );
    for (kind, fleet) in combinations {
        {
            for traffic in traffics {
                for (limit, window) in [(100, MINUTE), (1_000_000, MINUTE), (5_000, SECOND)] {
                    index += 1;
                    if index % n != k {
                        continue;
                    }
                    let mut s = scenario(kind, fleet, traffic, limit, window, 2 * MINUTE);
                    if s.validate().is_err() {
                        // Refused before anything is allocated: checked by the CLI's tests.
                        continue;
                    }
                    // A lease larger than the limit goes whole to the gateway the router hands
                    // the window's first request: how much a run admits turns on which one
                    // (the hot one, or one of the rest, 7 times fewer requests). The estimate
                    // bounds every run of the scenario; its closeness is to the heaviest of
                    // four.
                    let lease = matches!(fleet, Some((_, _, c)) if c.starts_with("lease"));
                    let runs = if lease { 4 } else { 1 };
                    s.runs = runs;
                    let estimate = s.memory().per_run();
                    let peak = (0..runs)
                        .map(|run| {
                            let (peak, stats) = peak_of(|| simulate_run(&s, run).expect("runs"));
                            drop(stats);
                            peak
                        })
                        .max()
                        .unwrap_or(0);
                    let what = format!("{kind} {fleet:?} {traffic} L={limit} W={window}");
                    if peak as u64 > estimate {
                        failures.push(format!(
                            "{what}: measured peak {peak} bytes > estimate {estimate}"
                        ));
                    }
                    rows += 1;
                    // Retrying clients' tries depend on what the limiter rejects: their part
                    // is every try rejected (the worst case), an upper bound only.
                    // A window a request opens (express-rate-limit's, rate-limiter-flexible's,
                    // limits' fixed window) behind `sync` views has no bound known tighter than
                    // its gateways' each on their own (`theory::fleet_worst`: others'
                    // admissions can open a view's window sooner), N times what the fleet
                    // mostly admits: its estimate bounds the peak (above) but is not held
                    // close to it (docs/src/memory.md says so).
                    let anchored_sync = fleet.is_some_and(|(_, _, c)| c.starts_with("sync"))
                        && spec_opens_at_a_request(kind);
                    if anchored_sync && estimate > 4 << 20 && !traffic.starts_with("retry") {
                        loose_anchored = loose_anchored.max(estimate as f64 / peak.max(1) as f64);
                    }
                    if estimate > 4 << 20 && !traffic.starts_with("retry") && !anchored_sync {
                        let ratio = estimate as f64 / peak.max(1) as f64;
                        // Within 4x: one limiter (alone or behind one gateway) 2.3x
                        // measured, a fleet of several 3.9x (each of its parts charged at the
                        // most its coordination lets through, with a boundary burst's ticks
                        // where they fall in the calendar windows and snapshots).
                        let fleet_of_many = fleet.is_some_and(|(n, _, _)| n > 1);
                        let most = 4.0;
                        if !fleet_of_many {
                            worst_ratio = worst_ratio.max(ratio);
                        } else {
                            worst_fleet = worst_fleet.max(ratio);
                        }
                        closest.push((ratio, what.clone()));
                        if ratio > most {
                            failures.push(format!("{what}: estimate {estimate} bytes is {ratio:.1}x the measured peak {peak} (at most {most}x)"));
                        }
                    }
                }
            }
        }
    }
    closest.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (ratio, what) in closest.iter().take(5) {
        eprintln!("{ratio:.2}x: {what}");
    }
    eprintln!(
        "shard {k}/{n}: {rows} scenarios; over 4 MB, one limiter's estimate is at most {worst_ratio:.2}x its peak, a fleet's {worst_fleet:.2}x; a window a request opens behind sync views {loose_anchored:.2}x"
    );
    assert!(
        failures.is_empty(),
        "{} of {rows}:\n{}",
        failures.len(),
        failures.join("\n")
    );
    rows
}
