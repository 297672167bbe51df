//! Criterion benchmarks: one decision plus its audit, per limiter, and one arrival, per traffic
//! generator. `cargo bench -p ratelab --bench decide`; docs/src/performance.md records the numbers.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use ratelab::audit::Auditor;
use ratelab::sim::{decide_and_audit, Scenario};
use ratelab::spec::{LimiterSpec, TrafficSpec};
use ratelab::time::MINUTE;
use std::hint::black_box;

const ARRIVALS: usize = 1 << 20;
/// As `ratelab::sim` chunks arrivals.
const CHUNK: usize = ratelab::sim::CHUNK;

fn scenario(limiter: &str, traffic: &str) -> Scenario {
    Scenario {
        limiters: vec![LimiterSpec::parse(limiter).expect("valid")],
        traffic: TrafficSpec::parse(traffic).expect("valid"),
        duration: 100_000 * MINUTE,
        ..Scenario::default()
    }
}

fn decisions(c: &mut Criterion) {
    let mut group = c.benchmark_group("decide+audit");
    group.throughput(Throughput::Elements(ARRIVALS as u64));
    // Steady traffic just over the limit: every limiter both admits and rejects.
    let times: Vec<u64> = scenario("sliding-log", "steady:load=1.1")
        .arrivals(0)
        .take(ARRIVALS)
        .collect();
    for spec in [
        "fixed-window",
        "token-bucket",
        "gcra",
        "sliding-log",
        "sliding-window-counter",
        "leaky-bucket:burst=10",
        "sliding-log:servers=4",
    ] {
        let s = scenario(spec, "steady:load=1.1");
        group.bench_function(spec, |b| {
            b.iter_batched_ref(
                || {
                    let limiter = s.build_limiter(&s.limiters[0], 0).expect("builds");
                    (limiter, Auditor::new(s.limit, s.window))
                },
                |(limiter, audit)| {
                    // As the simulator runs it: chunks of 1,024.
                    let mut admitted = 0;
                    for chunk in black_box(&times).chunks(CHUNK) {
                        admitted += decide_and_audit(limiter, audit, chunk);
                    }
                    admitted
                },
                BatchSize::LargeInput,
            )
        });
    }
    group.finish();

    // The study's configuration: six limiters sharing one run, per limiter decision.
    let mut group = c.benchmark_group("six limiters sharing a run");
    let six = [
        "fixed-window",
        "sliding-log",
        "sliding-window-counter",
        "token-bucket:burst=50",
        "token-bucket:burst=75",
        "gcra",
    ];
    group.throughput(Throughput::Elements((ARRIVALS * six.len()) as u64));
    let s = Scenario {
        limiters: six
            .iter()
            .map(|l| LimiterSpec::parse(l).expect("valid"))
            .collect(),
        ..scenario("fixed-window", "steady:load=1.1")
    };
    group.bench_function("per limiter decision", |b| {
        b.iter_batched_ref(
            || {
                let lanes: Vec<_> = s
                    .limiters
                    .iter()
                    .map(|l| {
                        (
                            s.build_limiter(l, 0).expect("builds"),
                            Auditor::new(s.limit, s.window),
                        )
                    })
                    .collect();
                lanes
            },
            |lanes| {
                let mut admitted = 0;
                for chunk in black_box(&times).chunks(CHUNK) {
                    for (limiter, audit) in lanes.iter_mut() {
                        admitted += decide_and_audit(limiter, audit, chunk);
                    }
                }
                admitted
            },
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

/// Issue 19's target: 16 gateways in `sync` mode within 5× the cost per decision of the
/// limiter alone, at the study's honest-client size (L = 100 a minute, steady traffic).
fn fleets(c: &mut Criterion) {
    let mut group = c.benchmark_group("fleet of 16");
    group.throughput(Throughput::Elements(ARRIVALS as u64));
    let times: Vec<u64> = scenario("sliding-log", "steady:load=0.9")
        .arrivals(0)
        .take(ARRIVALS)
        .collect();
    for (name, limiter, fleet) in [
        ("sliding-log alone", "sliding-log", None),
        (
            "sliding-log, 16 gateways, sync 1s + 100ms",
            "sliding-log",
            Some("sync:every=1s,delay=100ms"),
        ),
        ("gcra alone", "gcra", None),
        (
            "gcra, 16 gateways, sync 1s + 100ms",
            "gcra",
            Some("sync:every=1s,delay=100ms"),
        ),
        (
            "sliding-log, 16 gateways, local",
            "sliding-log",
            Some("local"),
        ),
    ] {
        let mut s = scenario(limiter, "steady:load=0.9");
        s.limiters[0].fleet = fleet.map(|coord| {
            ratelab::spec::FleetSpec::parse("16", Some("random"), Some(coord)).expect("valid")
        });
        group.bench_function(name, |b| {
            b.iter_batched_ref(
                || {
                    let limiter = s.build_limiter(&s.limiters[0], 0).expect("builds");
                    (limiter, Auditor::new(s.limit, s.window))
                },
                |(limiter, audit)| {
                    let mut admitted = 0;
                    for chunk in black_box(&times).chunks(CHUNK) {
                        admitted += decide_and_audit(limiter, audit, chunk);
                    }
                    admitted
                },
                BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

/// Issue 19's target read as a whole run: the study's honest-client size (L = 100 a minute,
/// one run of the essay's 2,000 minutes, at 80% of the limit), simulated from the traffic's
/// arrivals to the report, a sliding log alone against 16 gateways of it syncing every second
/// (100 ms late), per decision.
fn whole_runs(c: &mut Criterion) {
    let mut group = c.benchmark_group("whole run");
    for traffic in ["steady:load=0.8", "page-loads:load=0.8"] {
        for fleet in [None, Some("sync:every=1s,delay=100ms")] {
            let mut s = scenario("sliding-log", traffic);
            s.duration = 2_000 * MINUTE;
            s.limiters[0].fleet = fleet.map(|coord| {
                ratelab::spec::FleetSpec::parse("16", Some("random"), Some(coord)).expect("valid")
            });
            let decisions = s.arrivals(0).count() as u64;
            group.throughput(Throughput::Elements(decisions));
            let name = match fleet {
                None => format!("{traffic}, sliding-log alone"),
                Some(_) => format!("{traffic}, 16 gateways, sync 1s + 100ms"),
            };
            group.bench_function(name, |b| {
                b.iter(|| ratelab::simulate(black_box(&s)).expect("runs"))
            });
        }
    }
    group.finish();
}

fn generators(c: &mut Criterion) {
    let mut group = c.benchmark_group("arrival");
    group.throughput(Throughput::Elements(ARRIVALS as u64));
    for traffic in [
        "steady:load=0.8",
        "small-bursts:load=0.8",
        "page-loads:load=0.8",
        "big-bursts:load=0.8",
        "on-off:load=0.8",
    ] {
        let s = scenario("sliding-log", traffic);
        let mut buf = Vec::with_capacity(2048);
        group.bench_function(traffic, |b| {
            b.iter(|| {
                let mut arrivals = s.arrivals(0);
                let mut n = 0;
                while n < ARRIVALS {
                    arrivals.fill(&mut buf, 2048);
                    n += buf.len();
                    black_box(&buf);
                }
                n
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = decisions, fleets, whole_runs, generators
}
criterion_main!(benches);
