//! What every part of the essays' claims reads the study through: the jobs and their results,
//! a quantity pooled over the experiments that run it, and the helpers that turn a measured
//! number into a claim's row.

use crate::decimal::shortest;
use crate::study::claims::{value_text, Claim, Essay, Metric, Unit, Value};
use crate::study::experiments::JobResult;
use crate::study::experiments::{
    split_log, JobKind, LOADS, LOAD_80, OBEYING_LOG, PAGE_LOADS, SHAPES, SLIDING_LOG, STEADY,
    THEORY_LOG,
};
use crate::study::measure::{find, served, Estimate};
use crate::study::plan::{Job, StudyConfig};
use crate::time::MINUTE;

pub(super) const RULE: Essay = Essay::Rule;
pub(super) const BOUNDARY: Essay = Essay::Boundary;

/// Where a limiter's value comes from: a job's result and the limiter's place in it.
pub(super) type Part<'a> = (&'a Job, &'a JobResult, usize);

/// The study's jobs and results, looked up by kind.
pub(super) struct Study<'a> {
    pub(super) jobs: &'a [Job],
    pub(super) results: &'a [Option<JobResult>],
    pub(super) config: StudyConfig,
}

impl<'a> Study<'a> {
    pub(super) fn get(&self, kind: &JobKind) -> Option<(&'a Job, &'a JobResult)> {
        let job = self.jobs.iter().find(|j| &j.kind == kind)?;
        Some((job, find(self.jobs, self.results, kind)?))
    }

    pub(super) fn part(&self, kind: JobKind, at: usize) -> Option<Part<'a>> {
        self.get(&kind).map(|(j, r)| (j, r, at))
    }

    pub(super) fn honest(&self, shape: usize, load: usize, at: usize) -> Option<Part<'a>> {
        self.part(JobKind::Honest { shape, load }, at)
    }
}

/// The shares of every run of every part, as one estimate: the experiments are independent
/// (each has its own seed) and run the same limiter against the same traffic.
pub(super) fn pooled(parts: &[Part]) -> Estimate {
    let shares: Vec<f64> = parts
        .iter()
        .flat_map(|(_, r, i)| r.runs.iter().filter_map(move |run| run[*i].served_share()))
        .collect();
    Estimate::of(&shares)
}

/// One quantity that several experiments measure (the same limiter on the same traffic, each
/// with its own seed): one estimate from all their runs, the parts named, each with the
/// command that prints its own share (or, from one experiment, its command).
pub(super) struct Pooled {
    pub(super) estimate: Option<Estimate>,
    pub(super) note: String,
    pub(super) command: String,
    /// Each part's command and its share.
    pub(super) parts: Vec<(String, f64)>,
}

impl Study<'_> {
    pub(super) fn pool(&self, traffic: &str, sources: &[(&str, Option<Part>)]) -> Pooled {
        let present: Vec<(&str, Part)> = sources
            .iter()
            .filter_map(|&(n, p)| p.map(|p| (n, p)))
            .collect();
        let parts: Vec<Part> = present.iter().map(|&(_, p)| p).collect();
        let runs: usize = parts.iter().map(|p| p.1.runs.len()).sum();
        let from: Vec<(&str, Estimate)> = present
            .iter()
            .map(|&(n, p)| (n, served(p.1, p.2)))
            .collect();
        let commands: Vec<(String, f64)> = parts
            .iter()
            .map(|&(j, r, i)| (command(j, i, traffic), served(r, i).mean))
            .collect();
        Pooled {
            estimate: (!parts.is_empty()).then(|| pooled(&parts)),
            note: if parts.len() > 1 {
                format!(
                    "one estimate, pooled over the {} experiments that run it: the mean and standard error of all {runs} runs' shares together (with equal runs, the mean of the parts' means): {}",
                    parts.len(),
                    from.iter()
                        .zip(&commands)
                        .map(|((n, e), (c, _))| format!("{n} {} (`{c}`)", value_text(share(*e))))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            } else {
                String::new()
            },
            command: if parts.len() == 1 {
                commands[0].0.clone()
            } else {
                String::new()
            },
            parts: commands,
        }
    }

    /// The sliding log, steady at 80%: the theory check, the honest table and the split
    /// experiment on one server all run it.
    pub(super) fn steady_log_80(&self) -> Pooled {
        self.pool(
            "steady:load=0.8",
            &[
                (
                    "theory check",
                    self.part(JobKind::Theory { load: 0.8 }, THEORY_LOG),
                ),
                ("honest table", self.honest(STEADY, LOAD_80, SLIDING_LOG)),
                (
                    "split, K = 1",
                    self.part(JobKind::Split { shape: STEADY }, split_log(0)),
                ),
            ],
        )
    }

    /// The sliding log, page loads at 80%: the honest table, the rule-obeying search and the
    /// split experiment on one server all run it.
    pub(super) fn page_log_80(&self) -> Pooled {
        self.pool(
            &honest_traffic(PAGE_LOADS, LOAD_80),
            &[
                (
                    "honest table",
                    self.honest(PAGE_LOADS, LOAD_80, SLIDING_LOG),
                ),
                (
                    "rule-obeying search",
                    self.part(JobKind::Obeying { shape: PAGE_LOADS }, OBEYING_LOG),
                ),
                (
                    "split, K = 1",
                    self.part(JobKind::Split { shape: PAGE_LOADS }, split_log(0)),
                ),
            ],
        )
    }
}

/// The per-run difference of two limiters' shares in one job (the same arrivals): a paired
/// estimate.
pub(super) fn paired(r: &JobResult, a: usize, b: usize) -> Estimate {
    let d: Vec<f64> = r
        .runs
        .iter()
        .filter_map(|run| Some(run[a].served_share()? - run[b].served_share()?))
        .collect();
    Estimate::of(&d)
}

pub(super) fn share(e: Estimate) -> Value {
    Value::Estimate(e, Unit::Share)
}

/// The `ratelab simulate` command that reproduces limiter `at` of `job`, with the job's own
/// seed, so the numbers printed are the ones in the report.
pub(super) fn command(job: &Job, at: usize, traffic: &str) -> String {
    let s = &job.scenario;
    let limit = if s.limit == 100 {
        String::new()
    } else {
        format!(" --limit {}", s.limit)
    };
    format!(
        "ratelab simulate --limiter {} --traffic {traffic}{limit} --runs {} --minutes {} --seed {}",
        s.limiters[at].text,
        s.runs,
        s.duration / MINUTE,
        s.seed
    )
}

/// `row` with limiter `at` of a job's result as ratelab's value (its served share) and the
/// command that prints it, if the job has run.
pub(super) fn measured(row: Claim, part: Option<Part>, traffic: &str) -> Claim {
    match part {
        Some((job, r, at)) => row
            .ours(Some(share(served(r, at))))
            .command(command(job, at, traffic))
            .prints(Metric::Served),
        None => row,
    }
}

/// `row` with a pooled estimate as ratelab's value, its parts named with their commands.
pub(super) fn pooled_row(row: Claim, pool: Pooled) -> Claim {
    let mut row = row
        .ours(pool.estimate.map(share))
        .note(pool.note)
        .command(pool.command);
    for (command, value) in pool.parts {
        row = row.also(command, Metric::Served, value);
    }
    row
}

pub(super) fn honest_traffic(shape: usize, load: usize) -> String {
    format!("{}:load={}", SHAPES[shape], shortest(LOADS[load]))
}

pub(super) fn parse_pct(quote: &str) -> f64 {
    let digits: String = quote
        .chars()
        .filter(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    crate::decimal::parse(&digits).unwrap_or(f64::NAN) / 100.0
}

pub(super) fn given_retry(what: &str, quote: &str, value: f64) -> Claim {
    Claim::new(RULE, "Counting the rejects", what, quote).given(value, Unit::Count)
}
