//! The study's plan: its size, and its independent, individually seeded jobs, each a scenario.

use super::experiments::{
    JobKind, LIMITERS, LOADS, OBEYING_RATES, RETRY_LIMITERS, RETRY_RATES, RETRY_TRIES, SERVERS,
    SHAPES, SPLIT_SHAPES, THEORY_LIMITERS, TWIN,
};
use crate::error::Error;
use crate::optimum::{check_optimality, OptimalityCheck};
use crate::rng::{splitmix64, Rng, Stream};
use crate::sim::{simulate_run, RunStats, Scenario};
use crate::spec::{LimiterSpec, TrafficSpec};
use crate::time::{MINUTE, MS};
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

/// The result of a job: per run, per limiter.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct JobResult {
    /// `runs[r][i]`: limiter `i` in run `r`.
    pub runs: Vec<Vec<RunStats>>,
    /// Set for the optimality job.
    pub optimality: Option<OptimalityCheck>,
}

fn specs(texts: &[&str]) -> Result<Vec<LimiterSpec>, Error> {
    texts.iter().map(|t| LimiterSpec::parse(t)).collect()
}

/// Keeps only the honest-client table's jobs of a plan (`--only honest`, and the page's
/// matching option); [`assemble`] then gives that table alone.
pub fn keep_honest(jobs: &mut Vec<Job>) {
    jobs.retain(|j| matches!(j.kind, JobKind::Honest { .. }));
}

/// Every job of the study at `config`'s size, in a fixed order.
pub fn plan(config: StudyConfig) -> Result<Vec<Job>, Error> {
    let base = |limiters: Vec<LimiterSpec>,
                traffic: &str,
                minutes: u64,
                salt: u64|
     -> Result<Scenario, Error> {
        Ok(Scenario {
            limiters,
            traffic: TrafficSpec::parse(traffic)?,
            limit: 100,
            window: MINUTE,
            duration: minutes * MINUTE,
            runs: config.runs,
            seed: splitmix64(config.seed ^ splitmix64(salt)),
        })
    };
    let mut jobs = Vec::new();
    let mut all = LIMITERS.to_vec();
    all.push(TWIN);
    for (s, shape) in SHAPES.iter().enumerate() {
        for (l, load) in LOADS.iter().enumerate() {
            let scenario = base(
                specs(&all)?,
                &format!("{shape}:load={load}"),
                config.minutes,
                (s * 10 + l) as u64,
            )?;
            jobs.push(Job {
                kind: JobKind::Honest { shape: s, load: l },
                scenario,
            });
        }
    }
    let mut attack = base(specs(&LIMITERS)?, "flood:start=worst", 10, 100)?;
    attack.runs = 1;
    jobs.push(Job {
        kind: JobKind::Attacker,
        scenario: attack,
    });
    for index in 0..=50u64 {
        let offset = index * (MINUTE - 100 * MS) / 50 / MS;
        let mut s = base(
            specs(&["sliding-window-counter"])?,
            &format!("flood:start={offset}ms"),
            10,
            200 + index,
        )?;
        s.runs = 1;
        jobs.push(Job {
            kind: JobKind::SwcOffset { index },
            scenario: s,
        });
    }
    let mut obeying = vec!["sliding-log".to_owned()];
    obeying.extend(
        OBEYING_RATES
            .iter()
            .map(|r| format!("token-bucket:burst={},rate={r}/1min", 101 - r)),
    );
    let obeying: Vec<&str> = obeying.iter().map(String::as_str).collect();
    for (s, shape) in SHAPES.iter().enumerate() {
        let scenario = base(
            specs(&obeying)?,
            &format!("{shape}:load=0.8"),
            config.minutes,
            300 + s as u64,
        )?;
        jobs.push(Job {
            kind: JobKind::Obeying { shape: s },
            scenario,
        });
    }
    for &rate in &RETRY_RATES {
        for &tries in &RETRY_TRIES {
            let traffic =
                format!("retry:rate={rate}/1min,spike=200,at=5min,tries={tries},every=1s");
            let scenario = base(
                specs(&RETRY_LIMITERS)?,
                &traffic,
                200,
                400 + rate * 100 + u64::from(tries),
            )?;
            jobs.push(Job {
                kind: JobKind::Retry { rate, tries },
                scenario,
            });
        }
    }
    for shape in SPLIT_SHAPES {
        let mut split = Vec::new();
        for k in SERVERS {
            split.push(format!("sliding-log:servers={k}"));
            split.push(format!("token-bucket:burst=100,servers={k}"));
        }
        let split: Vec<&str> = split.iter().map(String::as_str).collect();
        let scenario = base(
            specs(&split)?,
            &format!("{}:load=0.8", SHAPES[shape]),
            config.minutes,
            500 + shape as u64,
        )?;
        jobs.push(Job {
            kind: JobKind::Split { shape },
            scenario,
        });
    }
    for (i, load) in [0.8, 1.0, 1.2].into_iter().enumerate() {
        let scenario = base(
            specs(&THEORY_LIMITERS)?,
            &format!("steady:load={load}"),
            config.minutes,
            600 + i as u64,
        )?;
        jobs.push(Job {
            kind: JobKind::Theory { load },
            scenario,
        });
    }
    let scenario = base(specs(&["sliding-log"])?, "steady", 1, 700)?;
    jobs.push(Job {
        kind: JobKind::Optimality,
        scenario,
    });
    for job in &jobs {
        job.scenario.validate()?;
    }
    Ok(jobs)
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
    let runs = (0..job.scenario.runs)
        .map(|r| simulate_run(&job.scenario, r))
        .collect::<Result<_, _>>()?;
    Ok(JobResult {
        runs,
        optimality: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::study::experiments::{
        obeying_bucket, split_bucket, split_log, GCRA, GCRA_TWIN, OBEYING_LOG, RETRY_FORGETTING,
        RETRY_RECORDING, SWC_ALONE, THEORY_FIXED, THEORY_LOG,
    };

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
        assert_eq!(count(|k| matches!(k, JobKind::Retry { .. })), 25);
        assert_eq!(count(|k| *k == JobKind::Optimality), 1);
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
                JobKind::Attacker => assert_eq!(n, LIMITERS.len()),
                JobKind::SwcOffset { .. } => {
                    assert_eq!(text(job, SWC_ALONE), "sliding-window-counter");
                }
                JobKind::Obeying { .. } => {
                    assert_eq!(text(job, OBEYING_LOG), "sliding-log");
                    for (k, rate) in OBEYING_RATES.iter().enumerate() {
                        let bucket = text(job, obeying_bucket(k));
                        assert!(bucket.ends_with(&format!("rate={rate}/1min")), "{bucket}");
                    }
                }
                JobKind::Retry { .. } => {
                    assert_eq!(text(job, RETRY_FORGETTING), "sliding-log");
                    assert!(text(job, RETRY_RECORDING).contains("record-rejects=true"));
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
