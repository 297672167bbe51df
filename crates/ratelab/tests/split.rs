//! Split limiters against a plain re-implementation, through the study's split table: each
//! of the study's splitting jobs (a limit of 100 over K = 1, 4, 10, 20 servers, a sliding log
//! and a token bucket of burst 100/K at each) is recomputed here with K plain limiters of L/K,
//! each request routed by the routing stream, and the table's cells must equal the result.

use ratelab::rng::{Rng, Stream};
use ratelab::sim::Scenario;
use ratelab::study::{assemble, plan, run_job, JobKind, StudyConfig};
use ratelab::{LimiterKind, Micros};
use std::collections::VecDeque;

/// One server's limiter, written out plainly.
enum Plain {
    /// Admitted times in `(t − W, t]`; admit while fewer than `limit`.
    Log {
        limit: usize,
        window: Micros,
        log: VecDeque<Micros>,
    },
    /// Tokens scaled by the period (µs): `burst` tokens full, `count` units a µs refill, one
    /// token costs `per` units.
    Bucket {
        units: u128,
        full: u128,
        count: u128,
        per: u128,
        last: Micros,
    },
}

impl Plain {
    fn admit(&mut self, t: Micros) -> bool {
        match self {
            Plain::Log { limit, window, log } => {
                while log.front().is_some_and(|&t0| t0 + *window <= t) {
                    log.pop_front();
                }
                let ok = log.len() < *limit;
                if ok {
                    log.push_back(t);
                }
                ok
            }
            Plain::Bucket {
                units,
                full,
                count,
                per,
                last,
            } => {
                *units = (*units + u128::from(t - *last) * *count).min(*full);
                *last = t;
                let ok = *units >= *per;
                if ok {
                    *units -= *per;
                }
                ok
            }
        }
    }
}

/// Admitted requests of each limiter of the scenario, run `run`, by the plain limiters.
fn plain_admitted(s: &Scenario, run: u32) -> Vec<u64> {
    s.limiters
        .iter()
        .map(|spec| {
            let k = u64::from(spec.servers);
            let (limit, window) = (s.limit / k, s.window);
            let mut servers: Vec<Plain> = (0..k)
                .map(|_| match spec.kind {
                    LimiterKind::SlidingLog => Plain::Log {
                        limit: limit as usize,
                        window,
                        log: VecDeque::new(),
                    },
                    LimiterKind::TokenBucket => {
                        // Burst B/K, refilling L/K per W: L per K·W.
                        let per = u128::from(window * k);
                        let full = u128::from(spec.burst.expect("a burst") / k) * per;
                        Plain::Bucket {
                            units: full,
                            full,
                            count: u128::from(s.limit),
                            per,
                            last: 0,
                        }
                    }
                    other => panic!("no plain {other:?} here"),
                })
                .collect();
            // One routing draw per request, uniform over the servers (none when K = 1).
            let mut routing = Rng::new(s.seed, u64::from(run), Stream::Routing);
            s.arrivals(run)
                .filter(|&t| {
                    let i = if k == 1 { 0 } else { routing.below(k as u32) } as usize;
                    servers[i].admit(t)
                })
                .count() as u64
        })
        .collect()
}

#[test]
fn the_study_s_split_table_equals_plain_split_limiters() {
    let config = StudyConfig {
        runs: 4,
        minutes: 120,
        seed: 3,
    };
    let jobs = plan(config).expect("a valid plan");
    let mut results = vec![None; jobs.len()];
    let mut cells = Vec::new();
    for (i, job) in jobs.iter().enumerate() {
        let JobKind::Split { shape } = job.kind else {
            continue;
        };
        let s = &job.scenario;
        assert_eq!(s.limiters.len(), 8, "a sliding log and a bucket at each K");
        let result = run_job(job).expect("runs");
        let mut shares = vec![Vec::new(); s.limiters.len()];
        for run in 0..s.runs {
            let plain = plain_admitted(s, run);
            let simulated: Vec<u64> = result.runs[run as usize]
                .iter()
                .map(|r| r.admitted)
                .collect();
            assert_eq!(simulated, plain, "shape {shape}, run {run}");
            let offered = s.arrivals(run).count() as f64;
            for (l, &a) in plain.iter().enumerate() {
                shares[l].push(a as f64 / offered);
            }
        }
        cells.push((shape, shares));
        results[i] = Some(result);
    }
    assert_eq!(cells.len(), 2, "steady and page loads");
    let report = assemble(config, &jobs, &results);
    let table = report
        .tables
        .iter()
        .find(|t| t.id == "split")
        .expect("the split table");
    // The table's rows: traffic, K, sliding log "served ± SE" %, token bucket the same.
    let pct = |xs: &[f64]| {
        let n = xs.len() as f64;
        let mean = xs.iter().sum::<f64>() / n;
        let se = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0) / n).sqrt();
        format!("{:.1} ± {:.1}", 100.0 * mean, 100.0 * se)
    };
    let mut want = Vec::new();
    for (shape, shares) in &cells {
        let name = ratelab::study::SHAPES[*shape];
        for (j, k) in [1, 4, 10, 20].iter().enumerate() {
            want.push(vec![
                name.to_string(),
                k.to_string(),
                pct(&shares[2 * j]),
                pct(&shares[2 * j + 1]),
            ]);
        }
    }
    assert_eq!(table.rows, want);
}
