//! The study behind "The Rule Was the Strict Part", as data: a plan of independent jobs (each a
//! scenario), and the tables assembled from their results. Callers run the jobs however they
//! like (threads in the CLI, workers in the page); the tables do not depend on the order or on
//! how many ran at once, because every job carries its own seed.

use crate::error::Error;
use crate::optimum::{check_optimality, OptimalityCheck};
use crate::rng::{splitmix64, Rng, Stream};
use crate::sim::{mean_se, simulate_run, RunStats, Scenario};
use crate::spec::{LimiterSpec, TrafficSpec};
use crate::theory;
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

/// The honest traffic shapes, in table order.
pub const SHAPES: [&str; 5] = [
    "steady",
    "small-bursts",
    "page-loads",
    "big-bursts",
    "on-off",
];
/// The loads of the honest-client table.
pub const LOADS: [f64; 4] = [0.3, 0.5, 0.8, 1.0];
/// The limiters of the honest-client table (`gcra` has the default burst, one window's worth).
pub const LIMITERS: [&str; 6] = [
    "fixed-window",
    "sliding-log",
    "sliding-window-counter",
    "token-bucket:burst=50",
    "token-bucket:burst=75",
    "gcra",
];
/// The check run beside every honest cell: a token bucket of GCRA's burst, which must admit
/// exactly what GCRA admits in every run.
const TWIN: &str = "token-bucket:burst=100";
/// Refill rates (per minute) searched for the best bucket that never breaks the rule.
const OBEYING_RATES: [u64; 10] = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100];
/// Client rates (per minute) and tries of the retry-lockout grid.
const RETRY_RATES: [u64; 5] = [10, 20, 25, 30, 40];
const RETRY_TRIES: [u32; 5] = [2, 4, 6, 8, 12];
/// Server counts of the split experiment.
const SERVERS: [u32; 4] = [1, 4, 10, 20];

/// What a job is for, so its result can be put in the right table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum JobKind {
    /// One cell of the honest-client table.
    Honest {
        /// Index into [`SHAPES`].
        shape: usize,
        /// Index into [`LOADS`].
        load: usize,
    },
    /// Every limiter under the flood from the worst moment.
    Attacker,
    /// The sliding-window counter under a flood from each of 51 offsets.
    SwcOffset {
        /// 0..=50.
        index: u64,
    },
    /// The candidate rule-obeying buckets for one shape, at 80% load.
    Obeying {
        /// Index into [`SHAPES`].
        shape: usize,
    },
    /// One cell of the retry grid.
    Retry {
        /// Client rate per minute.
        rate: u64,
        /// Tries per request.
        tries: u32,
    },
    /// The split experiment for one shape at 80%.
    Split {
        /// Index into [`SHAPES`] (steady or page loads).
        shape: usize,
    },
    /// The sliding log and the fixed window against theory at one load.
    Theory {
        /// 0.8, 1.0 or 1.2.
        load: f64,
    },
    /// Greedy against the brute-force optimum on small cases.
    Optimality,
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
                specs(&["sliding-log", "sliding-log:record-rejects=true"])?,
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
    for shape in [0, 2] {
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
            specs(&["sliding-log", "fixed-window"])?,
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

/// A mean over runs with its standard error.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    /// The mean.
    pub mean: f64,
    /// Its standard error (0 with one run).
    pub se: f64,
}

impl Estimate {
    fn of(values: &[f64]) -> Estimate {
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

/// A table of the study: a title, a header, rows of cells as text, and a note.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Table {
    /// A file-name-friendly id.
    pub id: String,
    /// The title.
    pub title: String,
    /// Column names.
    pub header: Vec<String>,
    /// Rows.
    pub rows: Vec<Vec<String>>,
}

/// One number the essay reports next to ratelab's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// What it is.
    pub what: String,
    /// The essay's value.
    pub essay: f64,
    /// ratelab's.
    pub ours: Estimate,
    /// Why they may differ, when they do.
    pub note: String,
}

impl Comparison {
    /// The difference in standard errors (`None` when there is no spread to measure it by).
    pub fn z(&self) -> Option<f64> {
        (self.ours.se > 0.0).then(|| (self.ours.mean - self.essay) / self.ours.se)
    }

    /// Half a unit of the last digit the essay printed: a difference this small is rounding.
    pub fn rounding(&self) -> f64 {
        let text = format!("{}", self.essay);
        let decimals = text.split_once('.').map_or(0, |(_, d)| d.len()) as i32;
        // Shares are printed as percentages with one decimal (0.710 is "71.0%").
        let decimals = if self.essay < 1.0 && self.essay > 0.0 {
            decimals.max(3)
        } else {
            decimals
        };
        0.5 * 10f64.powi(-decimals)
    }
}

/// Everything the study produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StudyReport {
    /// The size it ran at.
    pub config: StudyConfig,
    /// Its tables.
    pub tables: Vec<Table>,
    /// Its numbers beside the essay's.
    pub comparisons: Vec<Comparison>,
    /// The SWC worst window per flood offset: (offset s, simulated, formula).
    pub swc_offsets: Vec<(f64, u64, Option<u64>)>,
    /// Plots of the tables, as numbers for any chart backend.
    pub plots: Vec<Plot>,
}

/// A plot of the study: named lines of points.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plot {
    /// A file-name-friendly id.
    pub id: String,
    /// The title.
    pub title: String,
    /// The x axis label.
    pub x_label: String,
    /// The y axis label.
    pub y_label: String,
    /// (name, points).
    pub lines: Vec<(String, Vec<(f64, f64)>)>,
}

fn pct(e: Estimate) -> String {
    format!("{:.1} ± {:.1}", 100.0 * e.mean, 100.0 * e.se)
}

fn find<'a>(
    jobs: &'a [Job],
    results: &'a [Option<JobResult>],
    kind: &JobKind,
) -> Option<&'a JobResult> {
    jobs.iter()
        .position(|j| &j.kind == kind)
        .and_then(|i| results.get(i))
        .and_then(Option::as_ref)
}

/// Builds the tables from the results of [`plan`]'s jobs, in the same order.
/// A job without a result yet leaves its cells out, so a page can show the tables filling in.
pub fn assemble(config: StudyConfig, jobs: &[Job], results: &[Option<JobResult>]) -> StudyReport {
    let mut tables = Vec::new();
    let mut comparisons = Vec::new();
    let honest = |s: usize, l: usize| find(jobs, results, &JobKind::Honest { shape: s, load: l });

    // The honest-client table.
    let mut header = vec!["traffic".to_owned(), "load".to_owned()];
    header.extend(LIMITERS.iter().map(|l| format!("{l} served % [busiest]")));
    let mut rows = Vec::new();
    let mut twin_ok = 0u64;
    let mut twin_runs = 0u64;
    let (mut b50_wins, mut b75_wins) = (0, 0);
    for (s, shape) in SHAPES.iter().enumerate() {
        for (l, load) in LOADS.iter().enumerate() {
            let Some(r) = honest(s, l) else { continue };
            let mut row = vec![shape.to_string(), format!("{:.0}%", load * 100.0)];
            for i in 0..LIMITERS.len() {
                row.push(format!("{} [{:.0}]", pct(served(r, i)), busiest(r, i).mean));
            }
            rows.push(row);
            for run in &r.runs {
                twin_runs += 1;
                twin_ok += u64::from(run[5].admitted == run[6].admitted);
            }
            let swc = served(r, 2).mean;
            b50_wins += usize::from(served(r, 3).mean >= swc);
            b75_wins += usize::from(served(r, 4).mean >= swc);
        }
    }
    tables.push(Table {
        id: "honest".into(),
        title: "Share of an honest client served, mean ± SE over runs [busiest minute]".into(),
        header,
        rows,
    });

    tables.push(Table {
        id: "counter-vs-bucket".into(),
        title: "Sliding-window counter against token buckets: combinations (of 20) where the bucket serves at least as much".into(),
        header: vec!["bucket".into(), "worst minute".into(), "at least as much as the counter".into()],
        rows: vec![
            vec!["token-bucket:burst=50".into(), "149".into(), format!("{b50_wins} of 20")],
            vec!["token-bucket:burst=75".into(), "174".into(), format!("{b75_wins} of 20")],
        ],
    });
    comparisons.push(Comparison {
        what: "B = 75 serves at least as much as the counter (of 20)".into(),
        essay: 19.0,
        ours: Estimate {
            mean: b75_wins as f64,
            se: 0.0,
        },
        note: String::new(),
    });
    comparisons.push(Comparison {
        what: "B = 50 serves at least as much as the counter (of 20)".into(),
        essay: 14.0,
        ours: Estimate {
            mean: b50_wins as f64,
            se: 0.0,
        },
        note: String::new(),
    });

    // Wrong decisions of the counter at 80%.
    let mut wrong_rows = Vec::new();
    for (s, essay_wr, essay_wa) in [(0usize, 0.0006, 0.010), (2, 0.120, 0.081)] {
        if let Some(r) = honest(s, 2) {
            let decisions: u64 = r.runs.iter().map(|run| run[2].decisions).sum();
            let wa: u64 = r.runs.iter().map(|run| run[2].wrong_admits).sum();
            let wr: u64 = r.runs.iter().map(|run| run[2].wrong_rejects).sum();
            let per_run = |f: fn(&RunStats) -> u64| {
                Estimate::of(
                    &r.runs
                        .iter()
                        .map(|run| f(&run[2]) as f64 / run[2].decisions.max(1) as f64)
                        .collect::<Vec<_>>(),
                )
            };
            let (ewa, ewr) = (per_run(|x| x.wrong_admits), per_run(|x| x.wrong_rejects));
            wrong_rows.push(vec![
                SHAPES[s].to_string(),
                format!("{:.2}%", 100.0 * wr as f64 / decisions.max(1) as f64),
                format!("{:.2}%", 100.0 * wa as f64 / decisions.max(1) as f64),
            ]);
            comparisons.push(Comparison {
                what: format!("counter wrong rejects, {} at 80%", SHAPES[s]),
                essay: essay_wr,
                ours: ewr,
                note: String::new(),
            });
            comparisons.push(Comparison {
                what: format!("counter wrong admits, {} at 80%", SHAPES[s]),
                essay: essay_wa,
                ours: ewa,
                note: String::new(),
            });
        }
    }
    tables.push(Table {
        id: "counter-wrong".into(),
        title:
            "The sliding-window counter's wrong decisions at 80% load, as fractions of decisions"
                .into(),
        header: vec![
            "traffic".into(),
            "wrong rejects".into(),
            "wrong admits".into(),
        ],
        rows: wrong_rows,
    });

    // Essay points from the honest table.
    for (what, s, l, i, essay) in [
        ("sliding log served, page loads at 80%", 2, 2, 1, 0.710),
        ("sliding log served, page loads at 30%", 2, 0, 1, 0.91),
        ("sliding log served, big bursts at 80%", 3, 2, 1, 0.562),
        (
            "token bucket B = 50 served, big bursts at 80%",
            3,
            2,
            3,
            0.542,
        ),
    ] {
        if let Some(r) = honest(s, l) {
            comparisons.push(Comparison {
                what: what.into(),
                essay,
                ours: served(r, i),
                note: String::new(),
            });
        }
    }
    if let Some(r) = honest(1, 2) {
        comparisons.push(Comparison {
            what: "counter's busiest minute, small bursts at 80%".into(),
            essay: 142.0,
            ours: busiest(r, 2),
            note: String::new(),
        });
    }

    // The attacker.
    if let Some(r) = find(jobs, results, &JobKind::Attacker) {
        let rows = LIMITERS
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let spec = LimiterSpec::parse(l).ok();
                let bound = spec.and_then(|s| theory::worst_case(&s, 100, MINUTE));
                vec![
                    l.to_string(),
                    r.runs[0][i].busiest.to_string(),
                    bound.map_or("-".into(), |b| b.to_string()),
                ]
            })
            .collect();
        tables.push(Table {
            id: "attacker".into(),
            title: "The attacker: worst minute under a flood from each limiter's worst moment"
                .into(),
            header: vec!["limiter".into(), "worst minute".into(), "theory".into()],
            rows,
        });
    }
    let mut swc_offsets = Vec::new();
    for index in 0..=50u64 {
        if let Some(r) = find(jobs, results, &JobKind::SwcOffset { index }) {
            let offset = index * (MINUTE - 100 * MS) / 50 / MS * MS;
            swc_offsets.push((
                offset as f64 / 1e6,
                r.runs[0][0].busiest,
                theory::swc_flood_worst(100, MINUTE, offset, MS),
            ));
        }
    }
    let matched = swc_offsets
        .iter()
        .filter(|(_, sim, f)| Some(*sim) == *f)
        .count();
    tables.push(Table {
        id: "counter-offsets".into(),
        title: format!("The counter's worst minute against the flood's start: simulation equals the formula at {matched} of {} offsets", swc_offsets.len()),
        header: vec!["start (s)".into(), "simulated".into(), "formula".into()],
        rows: swc_offsets.iter().map(|(o, s, f)| vec![format!("{o:.3}"), s.to_string(), f.map_or("-".into(), |f| f.to_string())]).collect(),
    });

    // The best rule-obeying bucket per shape.
    let mut rows = Vec::new();
    for (s, shape) in SHAPES.iter().enumerate() {
        if let Some(r) = find(jobs, results, &JobKind::Obeying { shape: s }) {
            let (best, share) = (1..=OBEYING_RATES.len())
                .map(|i| (i, served(r, i)))
                .max_by(|a, b| a.1.mean.total_cmp(&b.1.mean))
                .unwrap_or((1, Estimate { mean: 0.0, se: 0.0 }));
            let rate = OBEYING_RATES[best - 1];
            rows.push(vec![
                shape.to_string(),
                format!("B = {}, {rate}/min", 101 - rate),
                pct(share),
                pct(served(r, 0)),
            ]);
            if s == 2 {
                comparisons.push(Comparison {
                    what: "best rule-obeying bucket served, page loads at 80%".into(),
                    essay: 0.598,
                    ours: share,
                    note: "ratelab searches rates in steps of 10 a minute, with B = 101 − rate"
                        .into(),
                });
            }
        }
    }
    tables.push(Table { id: "obeying".into(), title: "The best token bucket that never breaks the rule (burst + one window of refill ≤ L), at 80% load".into(), header: vec!["traffic".into(), "best bucket".into(), "served %".into(), "sliding log served %".into()], rows });

    // Retry lockout.
    let mut rows = Vec::new();
    for &rate in &RETRY_RATES {
        for &tries in &RETRY_TRIES {
            if let Some(r) = find(jobs, results, &JobKind::Retry { rate, tries }) {
                let locked = |i: usize| {
                    r.runs
                        .iter()
                        .filter(|run| run[i].served_share().unwrap_or(1.0) < 0.5)
                        .count()
                };
                rows.push(vec![
                    format!("{rate}/min"),
                    tries.to_string(),
                    format!("{} of {}", locked(1), r.runs.len()),
                    pct(served(r, 1)),
                    format!("{} of {}", locked(0), r.runs.len()),
                    pct(served(r, 0)),
                ]);
            }
        }
    }
    tables.push(Table {
        id: "lockout".into(),
        title: "Retry lockout over 200 minutes after a spike of 200 at minute 5 (a run counts as locked out when it was served under half its requests)".into(),
        header: vec!["client rate".into(), "tries".into(), "locked, rejects recorded".into(), "served %, recorded".into(), "locked, not recorded".into(), "served %, not recorded".into()],
        rows,
    });

    // Splitting.
    let mut rows = Vec::new();
    for shape in [0usize, 2] {
        if let Some(r) = find(jobs, results, &JobKind::Split { shape }) {
            for (j, k) in SERVERS.iter().enumerate() {
                rows.push(vec![
                    SHAPES[shape].to_string(),
                    k.to_string(),
                    pct(served(r, 2 * j)),
                    pct(served(r, 2 * j + 1)),
                ]);
            }
            if shape == 0 {
                for (j, essay) in [(0, 0.996), (1, 0.950), (2, 0.879), (3, 0.802)] {
                    comparisons.push(Comparison {
                        what: format!(
                            "split sliding log served, steady at 80%, K = {}",
                            SERVERS[j]
                        ),
                        essay,
                        ours: served(r, 2 * j),
                        note: String::new(),
                    });
                }
                comparisons.push(Comparison {
                    what: "split token buckets served, steady at 80%, K = 10".into(),
                    essay: 0.996,
                    ours: served(r, 5),
                    note: String::new(),
                });
            } else {
                comparisons.push(Comparison {
                    what: "split sliding log served, page loads at 80%, K = 10".into(),
                    essay: 0.677,
                    ours: served(r, 4),
                    note: String::new(),
                });
            }
        }
    }
    tables.push(Table {
        id: "split".into(),
        title: "Splitting a limit of 100 across K servers with random routing, at 80% load".into(),
        header: vec![
            "traffic".into(),
            "servers".into(),
            "sliding log served %".into(),
            "token bucket (B = 100/K) served %".into(),
        ],
        rows,
    });

    // Trust checks.
    let mut rows = Vec::new();
    for load in [0.8, 1.0, 1.2] {
        if let Some(r) = find(jobs, results, &JobKind::Theory { load }) {
            let (log, fw) = (served(r, 0), served(r, 1));
            let (tl, tf) = (
                theory::sliding_log_served(100, load),
                theory::fixed_window_served(100, load),
            );
            let z = |e: Estimate, t: f64| {
                if e.se > 0.0 {
                    format!("{:+.1}", (e.mean - t) / e.se)
                } else {
                    "-".into()
                }
            };
            rows.push(vec![
                format!("{:.0}%", load * 100.0),
                pct(log),
                format!("{:.2}", 100.0 * tl),
                z(log, tl),
                pct(fw),
                format!("{:.2}", 100.0 * tf),
                z(fw, tf),
            ]);
        }
    }
    tables.push(Table {
        id: "theory".into(),
        title: "Trust checks: steady traffic against theory (served %, simulation ± SE, theory, difference in SE)".into(),
        header: vec!["load".into(), "sliding log".into(), "1 − Erlang B".into(), "SE".into(), "fixed window".into(), "E[min(N,L)]/E[N]".into(), "SE".into()],
        rows,
    });
    let optimality = find(jobs, results, &JobKind::Optimality)
        .and_then(|r| r.optimality)
        .unwrap_or_default();
    tables.push(Table {
        id: "checks".into(),
        title: "Trust checks: exact laws".into(),
        header: vec!["check".into(), "result".into()],
        rows: vec![
            vec![
                "token bucket (B = 100) and GCRA admitted equal counts".into(),
                format!("in {twin_ok} of {twin_runs} runs"),
            ],
            vec![
                "greedy (the sliding log) beaten by the brute-force optimum".into(),
                format!(
                    "in {} of {} cases",
                    optimality.greedy_beaten, optimality.cases
                ),
            ],
            vec![
                "weakened greedy (records rejects) beaten".into(),
                format!(
                    "in {} of {} cases",
                    optimality.weakened_beaten, optimality.cases
                ),
            ],
        ],
    });
    let plots = plots(jobs, results);
    StudyReport {
        config,
        tables,
        comparisons,
        swc_offsets,
        plots,
    }
}

/// The plots: page loads against load, the lockout grid, splitting.
fn plots(jobs: &[Job], results: &[Option<JobResult>]) -> Vec<Plot> {
    let mut out = Vec::new();
    let lines = (0..LIMITERS.len())
        .map(|i| {
            let points = (0..LOADS.len())
                .filter_map(|l| {
                    find(jobs, results, &JobKind::Honest { shape: 2, load: l })
                        .map(|r| (100.0 * LOADS[l], 100.0 * served(r, i).mean))
                })
                .collect();
            (LIMITERS[i].to_string(), points)
        })
        .collect();
    out.push(Plot {
        id: "honest-page-loads".into(),
        title: "An honest page-load client: share served against load".into(),
        x_label: "load (% of the limit)".into(),
        y_label: "% served".into(),
        lines,
    });
    let mut lines: Vec<(String, Vec<(f64, f64)>)> = RETRY_RATES
        .iter()
        .map(|&rate| {
            let points = RETRY_TRIES
                .iter()
                .filter_map(|&tries| {
                    find(jobs, results, &JobKind::Retry { rate, tries })
                        .map(|r| (f64::from(tries), 100.0 * served(r, 1).mean))
                })
                .collect();
            (format!("{rate}/min, rejects recorded"), points)
        })
        .collect();
    let open = RETRY_TRIES
        .iter()
        .filter_map(|&tries| {
            find(jobs, results, &JobKind::Retry { rate: 25, tries })
                .map(|r| (f64::from(tries), 100.0 * served(r, 0).mean))
        })
        .collect();
    lines.push(("25/min, not recorded".into(), open));
    out.push(Plot {
        id: "lockout".into(),
        title: "A retrying client after a spike of 200: share served over 200 minutes".into(),
        x_label: "tries per request".into(),
        y_label: "% served".into(),
        lines,
    });
    let mut lines = Vec::new();
    for shape in [0usize, 2] {
        if let Some(r) = find(jobs, results, &JobKind::Split { shape }) {
            for (offset, name) in [(0, "sliding log"), (1, "token bucket")] {
                let points = SERVERS
                    .iter()
                    .enumerate()
                    .map(|(j, &k)| (f64::from(k), 100.0 * served(r, 2 * j + offset).mean))
                    .collect();
                lines.push((format!("{name}, {}", SHAPES[shape]), points));
            }
        }
    }
    out.push(Plot {
        id: "split".into(),
        title: "Splitting a limit across K servers, 80% load".into(),
        x_label: "servers K".into(),
        y_label: "% served".into(),
        lines,
    });
    out
}

impl Table {
    /// The table as CSV (fields quoted where needed).
    pub fn csv(&self) -> String {
        let field = |s: &str| {
            if s.contains([',', '"', '\n']) {
                format!("\"{}\"", s.replace('"', "\"\""))
            } else {
                s.to_owned()
            }
        };
        let line =
            |cells: &[String]| cells.iter().map(|c| field(c)).collect::<Vec<_>>().join(",") + "\n";
        let mut out = line(&self.header);
        for row in &self.rows {
            out += &line(row);
        }
        out
    }

    /// The table as Markdown, with its title as a heading.
    pub fn markdown(&self) -> String {
        let cell = |s: &str| s.replace('|', "\\|");
        let mut out = format!(
            "### {}\n\n| {} |\n|{}|\n",
            self.title,
            self.header
                .iter()
                .map(|h| cell(h))
                .collect::<Vec<_>>()
                .join(" | "),
            vec![" --- "; self.header.len()].join("|")
        );
        for row in &self.rows {
            out += &format!(
                "| {} |\n",
                row.iter().map(|c| cell(c)).collect::<Vec<_>>().join(" | ")
            );
        }
        out
    }
}

impl StudyReport {
    /// REPRODUCTION.md: every essay number the study covers beside ratelab's.
    pub fn reproduction(&self) -> String {
        let mut out = format!(
            "# Reproduction of \"The Rule Was the Strict Part\"\n\nratelab study at {} runs × {} minutes, seed {}. Shares are fractions (0.710 is 71.0%).\nDifferences beyond 3 standard errors are explained in the note column.\n\n| what | essay | ratelab ± SE | difference (SE) | note |\n| --- | --- | --- | --- | --- |\n",
            self.config.runs, self.config.minutes, self.config.seed
        );
        for c in &self.comparisons {
            let z = c.z();
            let within_rounding = (c.ours.mean - c.essay).abs() <= c.rounding();
            let note = match z {
                Some(z) if z.abs() > 3.0 && within_rounding => {
                    "within the essay's rounding of its last digit".to_owned()
                }
                Some(z) if z.abs() > 3.0 && c.note.is_empty() => {
                    "beyond 3 SE: see the notes below".to_owned()
                }
                _ => c.note.clone(),
            };
            out += &format!(
                "| {} | {} | {:.4} ± {:.4} | {} | {} |\n",
                c.what,
                c.essay,
                c.ours.mean,
                c.ours.se,
                z.map_or("-".into(), |z| format!("{z:+.1}")),
                note
            );
        }
        out += NOTES;
        out
    }
}

/// Why some numbers differ, for REPRODUCTION.md.
const NOTES: &str = "
## Notes

- **Traffic shapes.** The essay describes its shapes in words only. ratelab uses Poisson group
  starts, geometric group sizes (means 5, 20, 50) spread uniformly over 1 s, 1 s and 2 s, and an
  on/off client with Pareto (α = 1.5, mean 30 s) active periods, busy 20% of the time. Numbers
  that depend on the exact burst distribution (the honest-client table, the B = 50 count) can
  differ by more than their standard error for that reason alone.
- **Splitting.** The essay routes \"at random\" without saying how; ratelab draws each request's
  server from its own PCG stream, uniformly. A difference at K = 20 of about a tenth of a point
  is within what a different routing draw (per request or per burst) would change.
- **The weakened greedy** here is the sliding log that records its rejects; the essay does not
  say which weakening it used, so the count of cases it loses is not comparable.
- **The window** is half-open, (t − W, t]; the essay's token-bucket worst case B + 99 is exactly
  this convention's B + L − 1.
";

#[cfg(test)]
mod tests {
    use super::*;

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
    fn csv_and_markdown_escape_their_fields() {
        let t = Table {
            id: "x".into(),
            title: "T".into(),
            header: vec!["a".into(), "b".into()],
            rows: vec![vec!["1,5".into(), "x|y".into()]],
        };
        assert_eq!(t.csv(), "a,b\n\"1,5\",x|y\n");
        assert!(t.markdown().contains("| 1,5 | x\\|y |"));
    }
}
