//! Criterion benchmark of the study: every job of the essay-size study, one thread, and the
//! report assembled from them; and the lockout grid's heaviest job alone. `cargo bench -p
//! ratelab --bench study`; CI compiles it (clippy checks every target), docs/src/performance.md records the
//! numbers with this command. The CLI's `ratelab study --timings` gives the same per
//! experiment.

use criterion::{criterion_group, criterion_main, Criterion};
use ratelab::study::{assemble, plan, run_job, JobKind, StudyConfig};
use std::hint::black_box;

fn study(c: &mut Criterion) {
    let mut group = c.benchmark_group("study");
    // A whole study takes seconds: few samples, each one whole study.
    group.sample_size(10);
    let config = StudyConfig::FULL;
    let jobs = plan(config).expect("the study's plan is valid");
    group.bench_function("essay size, every job on one thread, and the report", |b| {
        b.iter(|| {
            let results: Vec<_> = jobs
                .iter()
                .map(|j| Some(run_job(j).expect("runs")))
                .collect();
            black_box(assemble(config, &jobs, &results))
        })
    });
    let heaviest = jobs
        .iter()
        .find(|j| {
            j.kind
                == JobKind::Retry {
                    rate: 100,
                    tries: 12,
                }
        })
        .expect("the lockout grid's heaviest cell");
    group.bench_function(
        "lockout, 100 a minute, 12 tries (20 runs × 6 limiters)",
        |b| b.iter(|| black_box(run_job(heaviest).expect("runs"))),
    );
    group.bench_function("the quick study (5 runs × 200 minutes), every job", |b| {
        let quick = plan(StudyConfig::QUICK).expect("valid");
        b.iter(|| {
            let results: Vec<_> = quick
                .iter()
                .map(|j| Some(run_job(j).expect("runs")))
                .collect();
            black_box(assemble(StudyConfig::QUICK, &quick, &results))
        })
    });
    group.finish();
}

criterion_group!(benches, study);
criterion_main!(benches);
