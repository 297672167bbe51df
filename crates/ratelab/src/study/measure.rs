//! What the study reads from its jobs' results: a mean over runs with its standard error, a
//! limiter's served share and busiest window, a job's result found by its kind, whether a run
//! was locked out, and the two counts the first essay gives about its honest table. Tables
//! and claims both read them; neither is read here.

use super::experiments::{
    JobKind, JobResult, BUCKET_50, COUNTER, LIMITERS, LOADS, LOAD_80, ON_OFF, SHAPES, SLIDING_LOG,
};
use super::plan::Job;
use crate::sim::{mean_se, RunStats};
use serde::{Deserialize, Serialize};

/// A mean over runs with its standard error.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    /// The mean.
    pub mean: f64,
    /// Its standard error (0 with one run).
    pub se: f64,
}

impl Estimate {
    pub(super) fn of(values: &[f64]) -> Estimate {
        let (m, se) = mean_se(values);
        Estimate {
            mean: m.unwrap_or(0.0),
            se: se.unwrap_or(0.0),
        }
    }
}

/// Limiter `i`'s served share over the runs of a result.
pub fn served(result: &JobResult, i: usize) -> Estimate {
    Estimate::of(
        &result
            .runs
            .iter()
            .filter_map(|r| r[i].served_share())
            .collect::<Vec<_>>(),
    )
}

/// Limiter `i`'s busiest window, averaged over runs.
pub fn busiest(result: &JobResult, i: usize) -> Estimate {
    Estimate::of(
        &result
            .runs
            .iter()
            .map(|r| r[i].busiest as f64)
            .collect::<Vec<_>>(),
    )
}

/// The result of the job of kind `kind`, once it has one.
pub(super) fn find<'a>(
    jobs: &'a [Job],
    results: &'a [Option<JobResult>],
    kind: &JobKind,
) -> Option<&'a JobResult> {
    jobs.iter()
        .position(|j| &j.kind == kind)
        .and_then(|i| results.get(i))
        .and_then(Option::as_ref)
}

/// The two counts the first essay gives about its honest table, with its on/off cells read at
/// a mean active period of `active` seconds (`None`: ratelab's 30 s, the table's own): the
/// rows at 80% where the sliding log serves least (and how many rows), and the cells where
/// B = 50 serves at least as much as the counter (and how many cells). `None` until every
/// cell has run.
pub(super) fn on_off_counts(
    jobs: &[Job],
    results: &[Option<JobResult>],
    active: Option<u64>,
) -> Option<(u64, u64, u64, u64)> {
    // Each cell's job and result; a limiter of LIMITERS is found in it by name (an on/off
    // cell runs only the limiters these counts read).
    let cell = |s: usize, l: usize| {
        let kind = match active {
            Some(seconds) if s == ON_OFF => JobKind::OnOffActive { seconds, load: l },
            _ => JobKind::Honest { shape: s, load: l },
        };
        let i = jobs.iter().position(|j| j.kind == kind)?;
        Some((&jobs[i], results.get(i)?.as_ref()?))
    };
    let at = |job: &Job, i: usize| {
        job.scenario
            .limiters
            .iter()
            .position(|spec| spec.text == LIMITERS[i])
    };
    let (mut strict, mut rows, mut wins, mut cells) = (0, 0, 0, 0);
    for s in 0..SHAPES.len() {
        for l in 0..LOADS.len() {
            let (job, r) = cell(s, l)?;
            let share = |i: usize| at(job, i).map(|k| served(r, k).mean);
            cells += 1;
            wins += u64::from(share(BUCKET_50)? >= share(COUNTER)?);
            if l == LOAD_80 {
                rows += 1;
                let log = share(SLIDING_LOG)?;
                let mut least = true;
                for i in (0..LIMITERS.len()).filter(|&i| i != SLIDING_LOG) {
                    least &= share(i)? >= log;
                }
                strict += u64::from(least);
            }
        }
    }
    Some((strict, rows, wins, cells))
}

/// A run counts as locked out when it was served under half its requests.
pub(super) fn locked(stats: &RunStats) -> bool {
    stats.served_share().unwrap_or(1.0) < 0.5
}
