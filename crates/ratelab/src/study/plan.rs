//! The study's plan: its size, and its independent, individually seeded jobs, each a scenario.

use super::experiments::{
    counter_offset, honest, lockout_all, obeying_burst, on_off_active, scenario, split, JobKind,
    JobResult, Size, BOUNDARY_LIMIT, BOUNDARY_LIMITERS, BOUNDARY_ROWS_TRAFFIC, BUCKET_50, COUNTER,
    COUNTER_STARTS_MS, EVENLY_TRAFFIC, LIMITERS, LOADS, LOAD_80, OBEYING_RATES, OFFSET_STEPS,
    ON_OFF_ACTIVES, RETRY_RATES, RETRY_TRIES, SERVERS, SHAPES, SPLIT_SHAPES, THEORY_LIMITERS,
    TICK_OFFSETS_MS,
};
use crate::decimal::shortest;
use crate::error::Error;
use crate::optimum::check_optimality;
use crate::rng::{splitmix64, Rng, Stream};
use crate::sim::{simulate_run_lanes, Scenario};
use serde::{Deserialize, Serialize};

/// The study's size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StudyConfig {
    /// Runs per cell (the essay: 20).
    pub runs: u32,
    /// Minutes per run of honest traffic (the essay: 2,000).
    pub minutes: u64,
    /// The seed every job's seed is derived from.
    pub seed: u64,
}

impl StudyConfig {
    /// The essay's size.
    pub const FULL: StudyConfig = StudyConfig {
        runs: 20,
        minutes: 2_000,
        seed: 1,
    };
    /// A size that runs in a few seconds, for workshops and tests.
    pub const QUICK: StudyConfig = StudyConfig {
        runs: 5,
        minutes: 200,
        seed: 1,
    };
}

/// One independent piece of the study.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Job {
    /// Which table it feeds.
    pub kind: JobKind,
    /// Its scenario (unused by [`JobKind::Optimality`]).
    pub scenario: Scenario,
}

/// Keeps only the honest-client table's jobs of a plan (`--only honest`, and the page's
/// matching option); [`assemble`](super::assemble) then gives that table alone.
pub fn keep_honest(jobs: &mut Vec<Job>) {
    jobs.retain(|j| matches!(j.kind, JobKind::Honest { .. }));
}

/// How many of a plan's experiments (its jobs grouped by [`JobKind::experiment`], as its
/// tables and `--timings` are) have every job's result, and how many there are: the
/// progress a person watching the study reads.
pub fn experiments_done(jobs: &[Job], results: &[Option<JobResult>]) -> (usize, usize) {
    let mut all: Vec<(&'static str, bool)> = Vec::new();
    for (i, job) in jobs.iter().enumerate() {
        let done = results.get(i).is_some_and(Option::is_some);
        let name = job.kind.experiment();
        match all.iter_mut().find(|(n, _)| *n == name) {
            Some((_, complete)) => *complete &= done,
            None => all.push((name, done)),
        }
    }
    (all.iter().filter(|(_, done)| *done).count(), all.len())
}

/// The order to run a plan's jobs in, on workers that each take the next one when free: the
/// most expected decisions first ([`Scenario::expected_decisions`]), ties in plan order. The
/// last jobs to start are then the smallest, so the workers finish close together (in plan
/// order the split limit's two jobs, among the largest, come near the end). The results do
/// not depend on the order: each job carries its own seed.
pub fn run_order(jobs: &[Job]) -> Vec<usize> {
    let cost: Vec<f64> = jobs
        .iter()
        .map(|j| j.scenario.expected_decisions())
        .collect();
    let mut order: Vec<usize> = (0..jobs.len()).collect();
    // (A stable sort: equal estimates keep plan order.)
    order.sort_by(|&a, &b| cost[b].total_cmp(&cost[a]));
    order
}

/// Every job of the study at `config`'s size, in a fixed order. Each job carries its own seed,
/// so the jobs can run in any order, on any thread or machine, and give the same results.
///
/// ```
/// use ratelab::study::{plan, run_job, JobKind, StudyConfig};
///
/// let jobs = plan(StudyConfig::QUICK)?;
/// let attacker = jobs.iter().find(|j| j.kind == JobKind::Attacker).expect("in every plan");
/// let result = run_job(attacker)?;
/// // One run of the flood, every limiter of the honest table.
/// assert_eq!(result.runs.len(), 1);
/// assert_eq!(result.runs[0].len(), attacker.scenario.limiters.len());
/// # Ok::<(), ratelab::Error>(())
/// ```
pub fn plan(config: StudyConfig) -> Result<Vec<Job>, Error> {
    // Each job's own seed, from the study's and the job's salt.
    let size = |minutes: u64, salt: u64| Size {
        runs: config.runs,
        minutes,
        seed: splitmix64(config.seed ^ splitmix64(salt)),
    };
    let mut jobs = Vec::new();
    for (s, shape) in SHAPES.iter().enumerate() {
        for (l, &load) in LOADS.iter().enumerate() {
            jobs.push(Job {
                kind: JobKind::Honest { shape: s, load: l },
                scenario: honest(shape, load, size(config.minutes, (s * 10 + l) as u64))?,
            });
        }
    }
    let once = |salt: u64| Size {
        runs: 1,
        ..size(10, salt)
    };
    jobs.push(Job {
        kind: JobKind::Attacker,
        scenario: scenario(&LIMITERS, "flood:start=worst", 100, once(100))?,
    });
    for index in 0..=OFFSET_STEPS {
        jobs.push(Job {
            kind: JobKind::SwcOffset { index },
            scenario: counter_offset(100, index, once(200 + index))?,
        });
    }
    let mut obeying = vec!["sliding-log".to_owned()];
    obeying.extend(
        OBEYING_RATES
            .iter()
            .map(|&r| format!("token-bucket:burst={},rate={r}/1min", obeying_burst(r))),
    );
    for (s, shape) in SHAPES.iter().enumerate() {
        let traffic = format!("{shape}:load=0.8");
        jobs.push(Job {
            kind: JobKind::Obeying { shape: s },
            scenario: scenario(
                &obeying,
                &traffic,
                100,
                size(config.minutes, 300 + s as u64),
            )?,
        });
    }
    for &rate in &RETRY_RATES {
        for &tries in &RETRY_TRIES {
            let salt = 400 + rate * 100 + u64::from(tries);
            jobs.push(Job {
                kind: JobKind::Retry { rate, tries },
                scenario: lockout_all(100, rate, tries, size(200, salt))?,
            });
        }
    }
    for (a, &seconds) in ON_OFF_ACTIVES.iter().enumerate() {
        for (l, &load) in LOADS.iter().enumerate() {
            // What the two counts read ([`super::measure::on_off_counts`]): every limiter at
            // 80%, the counter and the bucket of 50 at every load; nothing else is run.
            let limiters = if l == LOAD_80 {
                LIMITERS.to_vec()
            } else {
                vec![LIMITERS[COUNTER], LIMITERS[BUCKET_50]]
            };
            jobs.push(Job {
                kind: JobKind::OnOffActive { seconds, load: l },
                scenario: scenario(
                    &limiters,
                    &on_off_active(seconds, load),
                    100,
                    size(config.minutes, 950 + 10 * a as u64 + l as u64),
                )?,
            });
        }
    }
    for (i, &ms) in TICK_OFFSETS_MS.iter().enumerate() {
        jobs.push(Job {
            kind: JobKind::TickOffset { ms },
            scenario: scenario(
                &BOUNDARY_LIMITERS,
                &format!("boundary-burst:before={ms}ms,after={ms}ms"),
                BOUNDARY_LIMIT,
                Size {
                    runs: 1,
                    ..size(3, 990 + i as u64)
                },
            )?,
        });
    }
    for shape in SPLIT_SHAPES {
        jobs.push(Job {
            kind: JobKind::Split { shape },
            scenario: split(
                SHAPES[shape],
                &SERVERS,
                size(config.minutes, 500 + shape as u64),
            )?,
        });
    }
    for (i, &start_ms) in COUNTER_STARTS_MS.iter().enumerate() {
        jobs.push(Job {
            kind: JobKind::CounterAt { start_ms },
            scenario: scenario(
                &["sliding-window-counter"],
                &format!("flood:start={start_ms}ms"),
                100,
                once(800 + i as u64),
            )?,
        });
    }
    jobs.push(Job {
        kind: JobKind::Boundary,
        scenario: scenario(
            &BOUNDARY_LIMITERS,
            "boundary-burst",
            BOUNDARY_LIMIT,
            Size {
                runs: 1,
                ..size(3, 900)
            },
        )?,
    });
    jobs.push(Job {
        kind: JobKind::Overdriven,
        scenario: scenario(
            &BOUNDARY_LIMITERS,
            "steady:load=2",
            BOUNDARY_LIMIT,
            size(config.minutes, 901),
        )?,
    });
    jobs.push(Job {
        kind: JobKind::BoundaryRows,
        scenario: scenario(
            &BOUNDARY_LIMITERS,
            BOUNDARY_ROWS_TRAFFIC,
            BOUNDARY_LIMIT,
            Size {
                runs: 1,
                ..size(3, 902)
            },
        )?,
    });
    jobs.push(Job {
        kind: JobKind::Evenly,
        scenario: scenario(
            &BOUNDARY_LIMITERS,
            EVENLY_TRAFFIC,
            BOUNDARY_LIMIT,
            Size {
                runs: 1,
                ..size(62, 903)
            },
        )?,
    });
    for (i, load) in [0.8, 1.0, 1.2].into_iter().enumerate() {
        let traffic = format!("steady:load={}", shortest(load));
        jobs.push(Job {
            kind: JobKind::Theory { load },
            scenario: scenario(
                &THEORY_LIMITERS,
                &traffic,
                100,
                size(config.minutes, 600 + i as u64),
            )?,
        });
    }
    jobs.push(Job {
        kind: JobKind::Optimality,
        scenario: scenario(&["sliding-log"], "steady", 100, size(1, 700))?,
    });
    for job in &jobs {
        job.scenario.validate()?;
    }
    Ok(jobs)
}

/// Runs every run of `scenario`: what a job's result holds, for any experiment at any size.
/// The study reads each lane's numbers, never a retrying client's own
/// ([`crate::sim::simulate_run_lanes`]).
pub fn run_scenario(scenario: &Scenario) -> Result<JobResult, Error> {
    run_counting(scenario, &|_| true)
}

/// [`run_scenario`], with the wrong decisions counted only in the lanes `counts_wrong` names
/// ([`simulate_run_lanes`]).
fn run_counting(
    scenario: &Scenario,
    counts_wrong: &dyn Fn(usize) -> bool,
) -> Result<JobResult, Error> {
    scenario.validate()?;
    let runs = (0..scenario.runs)
        .map(|r| simulate_run_lanes(scenario, r, counts_wrong))
        .collect::<Result<_, _>>()?;
    Ok(JobResult {
        runs,
        optimality: None,
    })
}

/// Runs one job.
pub fn run_job(job: &Job) -> Result<JobResult, Error> {
    if job.kind == JobKind::Optimality {
        let mut rng = Rng::new(job.scenario.seed, 0, Stream::Cases);
        return Ok(JobResult {
            runs: Vec::new(),
            optimality: Some(check_optimality(&mut rng, 3_000)),
        });
    }
    run_counting(&job.scenario, &|lane| job.kind.counts_wrong(lane))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::study::experiments::{
        obeying_bucket, split_bucket, split_log, BOUNDARY_BUCKET_10, BOUNDARY_BUCKET_60,
        BOUNDARY_FIXED, BOUNDARY_LOG, GCRA, GCRA_TWIN, OBEYING_LOG, RETRY_COUNTER,
        RETRY_COUNTER_RECORDING, RETRY_FIXED, RETRY_FIXED_RECORDING, RETRY_FORGETTING,
        RETRY_RECORDING, SWC_ALONE, THEORY_FIXED, THEORY_LOG, TWIN,
    };

    #[test]
    fn the_run_order_is_every_job_once_the_largest_first() {
        let jobs = plan(StudyConfig::FULL).expect("the plan");
        let order = run_order(&jobs);
        let mut seen = order.clone();
        seen.sort_unstable();
        assert_eq!(seen, (0..jobs.len()).collect::<Vec<_>>(), "a permutation");
        let cost = |i: usize| jobs[i].scenario.expected_decisions();
        for pair in order.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            assert!(cost(a) >= cost(b), "job {a} before the larger {b}");
            if cost(a) == cost(b) {
                assert!(a < b, "equal jobs {a} and {b} keep plan order");
            }
        }
        // The split limit's jobs, last but a few in plan order, go before every one of the
        // counter-offset floods.
        // (Positions in the order, ascending.)
        let at = |pick: fn(&JobKind) -> bool| -> Vec<usize> {
            (0..order.len())
                .filter(|&p| pick(&jobs[order[p]].kind))
                .collect()
        };
        let split = at(|k| matches!(k, JobKind::Split { .. }));
        let offsets = at(|k| matches!(k, JobKind::SwcOffset { .. }));
        assert!(split.last() < offsets.first(), "{split:?} vs {offsets:?}");
    }

    #[test]
    fn the_plan_validates_and_has_every_experiment() {
        let jobs = plan(StudyConfig {
            runs: 2,
            minutes: 20,
            seed: 1,
        })
        .expect("valid plan");
        let count = |f: fn(&JobKind) -> bool| jobs.iter().filter(|j| f(&j.kind)).count();
        assert_eq!(count(|k| matches!(k, JobKind::Honest { .. })), 20);
        assert_eq!(count(|k| matches!(k, JobKind::SwcOffset { .. })), 51);
        assert_eq!(count(|k| matches!(k, JobKind::Retry { .. })), 60);
        assert_eq!(count(|k| matches!(k, JobKind::CounterAt { .. })), 2);
        assert_eq!(count(|k| *k == JobKind::Boundary), 1);
        assert_eq!(count(|k| *k == JobKind::Overdriven), 1);
        assert_eq!(count(|k| *k == JobKind::BoundaryRows), 1);
        assert_eq!(count(|k| *k == JobKind::Evenly), 1);
        assert_eq!(count(|k| matches!(k, JobKind::OnOffActive { .. })), 12);
        assert_eq!(count(|k| matches!(k, JobKind::TickOffset { .. })), 5);
        assert_eq!(count(|k| *k == JobKind::Optimality), 1);
    }

    #[test]
    fn an_experiment_is_done_when_every_one_of_its_jobs_is() {
        let jobs = plan(StudyConfig {
            runs: 2,
            minutes: 20,
            seed: 1,
        })
        .expect("valid plan");
        let mut results: Vec<Option<JobResult>> = vec![None; jobs.len()];
        let (_, total) = experiments_done(&jobs, &results);
        assert_eq!(total, 15, "one per experiment the timings name");
        assert_eq!(experiments_done(&jobs, &results), (0, 15));
        // Every lockout cell but one: the lockout is not done yet.
        let lockout: Vec<usize> = (0..jobs.len())
            .filter(|&i| matches!(jobs[i].kind, JobKind::Retry { .. }))
            .collect();
        for &i in &lockout[1..] {
            results[i] = Some(JobResult::default());
        }
        assert_eq!(experiments_done(&jobs, &results), (0, 15));
        results[lockout[0]] = Some(JobResult::default());
        assert_eq!(experiments_done(&jobs, &results), (1, 15));
        let all: Vec<Option<JobResult>> = vec![Some(JobResult::default()); jobs.len()];
        assert_eq!(experiments_done(&jobs, &all), (15, 15));
    }

    #[test]
    fn every_job_has_its_limiters_where_the_tables_look_for_them() {
        let jobs = plan(StudyConfig::QUICK).expect("valid plan");
        let text = |job: &Job, at: usize| job.scenario.limiters[at].text.clone();
        for job in &jobs {
            let n = job.scenario.limiters.len();
            match job.kind {
                JobKind::Honest { .. } => {
                    assert_eq!(text(job, GCRA), "gcra");
                    assert_eq!(text(job, GCRA_TWIN), TWIN);
                    assert_eq!(n, GCRA_TWIN + 1);
                }
                // (The tables find these by name.)
                JobKind::OnOffActive { load, .. } => {
                    let names: Vec<String> = job
                        .scenario
                        .limiters
                        .iter()
                        .map(|l| l.text.clone())
                        .collect();
                    if load == LOAD_80 {
                        assert_eq!(names, LIMITERS);
                    } else {
                        assert_eq!(names, [LIMITERS[COUNTER], LIMITERS[BUCKET_50]]);
                    }
                }
                JobKind::Attacker => assert_eq!(n, LIMITERS.len()),
                JobKind::SwcOffset { .. } => {
                    assert_eq!(text(job, SWC_ALONE), "sliding-window-counter");
                }
                JobKind::Obeying { .. } => {
                    assert_eq!(text(job, OBEYING_LOG), "sliding-log");
                    for (k, rate) in OBEYING_RATES.iter().enumerate() {
                        let bucket = text(job, obeying_bucket(k));
                        assert_eq!(
                            bucket,
                            format!("token-bucket:burst={},rate={rate}/1min", 100 - rate)
                        );
                    }
                }
                JobKind::Retry { .. } => {
                    assert_eq!(text(job, RETRY_FORGETTING), "sliding-log");
                    assert!(text(job, RETRY_RECORDING).contains("record-rejects=true"));
                    assert_eq!(text(job, RETRY_FIXED), "fixed-window");
                    assert_eq!(
                        text(job, RETRY_FIXED_RECORDING),
                        "fixed-window:record-rejects=true"
                    );
                    assert_eq!(text(job, RETRY_COUNTER), "sliding-window-counter");
                    assert_eq!(
                        text(job, RETRY_COUNTER_RECORDING),
                        "sliding-window-counter:record-rejects=true"
                    );
                }
                JobKind::CounterAt { .. } => {
                    assert_eq!(text(job, SWC_ALONE), "sliding-window-counter");
                }
                JobKind::Boundary
                | JobKind::TickOffset { .. }
                | JobKind::Overdriven
                | JobKind::BoundaryRows
                | JobKind::Evenly => {
                    assert_eq!(job.scenario.limit, 60);
                    assert_eq!(text(job, BOUNDARY_FIXED), "fixed-window");
                    assert_eq!(text(job, BOUNDARY_LOG), "sliding-log");
                    assert_eq!(text(job, BOUNDARY_BUCKET_60), "token-bucket:burst=60");
                    assert_eq!(text(job, BOUNDARY_BUCKET_10), "token-bucket:burst=10");
                }
                JobKind::Split { .. } => {
                    for (j, k) in SERVERS.iter().enumerate() {
                        assert_eq!(text(job, split_log(j)), format!("sliding-log:servers={k}"));
                        assert!(text(job, split_bucket(j)).starts_with("token-bucket"));
                        assert!(text(job, split_bucket(j)).ends_with(&format!("servers={k}")));
                    }
                }
                JobKind::Theory { .. } => {
                    assert_eq!(text(job, THEORY_LOG), "sliding-log");
                    assert_eq!(text(job, THEORY_FIXED), "fixed-window");
                }
                JobKind::Optimality => {}
            }
        }
    }
}
