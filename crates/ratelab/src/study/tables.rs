//! The study's tables, claims and plots, assembled from its jobs' results in any order
//! and any completeness.

use super::claims::Claim;
use super::experiments::JobResult;
use super::experiments::{
    counter_offset_lines, counter_offset_measure, obeying_bucket, obeying_burst, split_bucket,
    split_log, JobKind, BOUNDARY_BUCKET_10, BOUNDARY_BUCKET_60, BOUNDARY_FIXED, BOUNDARY_LIMIT,
    BOUNDARY_LIMITERS, BOUNDARY_LOG, BUCKET_50, BUCKET_75, COUNTER, GCRA, GCRA_TWIN, LIMITERS,
    LOADS, LOAD_80, OBEYING_ESSAY_RATE, OBEYING_LOG, OBEYING_RATES, OFFSET_STEPS, ON_OFF_ACTIVES,
    PAGE_LOADS, RETRY_COUNTER, RETRY_COUNTER_RECORDING, RETRY_FIXED, RETRY_FIXED_RECORDING,
    RETRY_FORGETTING, RETRY_RATES, RETRY_RECORDING, RETRY_TRIES, SERVERS, SHAPES, SPLIT_SHAPES,
    STEADY, THEORY_FIXED, THEORY_LOG, TICK_OFFSETS_MS,
};
use super::measure::{busiest, find, locked, on_off_counts, served, Estimate};
use super::plan::{Job, StudyConfig};
use crate::decimal::{fixed, fixed_signed};
use crate::plot::{Plot, Series, BLUE, ORANGE};
use crate::spec::LimiterSpec;
use crate::theory;
use crate::time::MINUTE;
use serde::{Deserialize, Serialize};

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

/// Everything the study produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StudyReport {
    /// The size it ran at.
    pub config: StudyConfig,
    /// Its tables.
    pub tables: Vec<Table>,
    /// Every numeric claim of both essays beside ratelab's value.
    pub claims: Vec<Claim>,
    /// The SWC worst window per flood offset: (offset s, simulated, formula).
    pub swc_offsets: Vec<(f64, u64, Option<u64>)>,
    /// Plots of the tables, as data for any chart backend.
    pub plots: Vec<StudyPlot>,
}

/// A plot of the study, with the id its file and the page's canvas are named by.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StudyPlot {
    /// A file-name-friendly id.
    pub id: String,
    /// The chart.
    pub plot: Plot,
}

impl StudyReport {
    /// The counter's worst minute against the flood's start, simulated and by the formula.
    pub fn counter_offsets_plot(&self) -> Plot {
        let [simulated, formula] = counter_offset_lines(&self.swc_offsets);
        let series = [(simulated, BLUE, true), (formula, ORANGE, false)]
            .into_iter()
            .map(|((name, points), color, markers)| Series {
                name,
                points,
                color,
                markers,
                line: true,
            })
            .collect();
        Plot::Xy {
            title: "Sliding-window counter: worst minute against the flood's start".into(),
            x_label: "flood starts this far into a window (s)".into(),
            y_label: "requests in the worst minute".into(),
            series,
            // L first: it is drawn solid, 2L dashed.
            references: vec![(100.0, "L".into()), (200.0, "2L".into())],
            y_range: Some((0.0, 220.0)),
            x_range: None,
        }
    }
}

fn pct(e: Estimate) -> String {
    format!("{} ± {}", fixed(100.0 * e.mean, 1), fixed(100.0 * e.se, 1))
}

/// Builds the tables from the results of [`super::plan()`]'s jobs, in the same order.
/// A job without a result yet leaves its cells out, so a page can show the tables filling in.
pub fn assemble(config: StudyConfig, jobs: &[Job], results: &[Option<JobResult>]) -> StudyReport {
    let mut tables = Vec::new();
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
            let mut row = vec![shape.to_string(), format!("{}%", fixed(load * 100.0, 0))];
            for i in 0..LIMITERS.len() {
                row.push(format!(
                    "{} [{}]",
                    pct(served(r, i)),
                    fixed(busiest(r, i).mean, 0)
                ));
            }
            rows.push(row);
            for run in &r.runs {
                twin_runs += 1;
                twin_ok += u64::from(run[GCRA].admitted == run[GCRA_TWIN].admitted);
            }
            let swc = served(r, COUNTER).mean;
            b50_wins += usize::from(served(r, BUCKET_50).mean >= swc);
            b75_wins += usize::from(served(r, BUCKET_75).mean >= swc);
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
    // Wrong decisions of the counter at 80%.
    let mut wrong_rows = Vec::new();
    for s in [STEADY, PAGE_LOADS] {
        if let Some(r) = honest(s, LOAD_80) {
            let decisions: u64 = r.runs.iter().map(|run| run[COUNTER].decisions).sum();
            // (Counted in these jobs' counter lanes: `counts_wrong`.)
            let share = |wrong: Option<u64>| {
                wrong.map_or("not counted".into(), |w| {
                    format!("{}%", fixed(100.0 * w as f64 / decisions.max(1) as f64, 2))
                })
            };
            let wa: Option<u64> = r.runs.iter().map(|run| run[COUNTER].wrong_admits).sum();
            let wr: Option<u64> = r.runs.iter().map(|run| run[COUNTER].wrong_rejects).sum();
            wrong_rows.push(vec![SHAPES[s].to_string(), share(wr), share(wa)]);
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
    for index in 0..=OFFSET_STEPS {
        if let Some(r) = find(jobs, results, &JobKind::SwcOffset { index }) {
            swc_offsets.push(counter_offset_measure(100, index, r));
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
        rows: swc_offsets.iter().map(|(o, s, f)| vec![fixed(*o, 3), s.to_string(), f.map_or("-".into(), |f| f.to_string())]).collect(),
    });

    // The best rule-obeying bucket per shape.
    let mut rows = Vec::new();
    for (s, shape) in SHAPES.iter().enumerate() {
        if let Some(r) = find(jobs, results, &JobKind::Obeying { shape: s }) {
            let (best, share) = (0..OBEYING_RATES.len())
                .map(|k| (k, served(r, obeying_bucket(k))))
                .max_by(|a, b| a.1.mean.total_cmp(&b.1.mean))
                .unwrap_or((0, Estimate { mean: 0.0, se: 0.0 }));
            let rate = OBEYING_RATES[best];
            let essay = OBEYING_RATES
                .iter()
                .position(|&r| r == OBEYING_ESSAY_RATE)
                .map_or("-".into(), |k| pct(served(r, obeying_bucket(k))));
            rows.push(vec![
                shape.to_string(),
                format!("B = {}, {rate}/min", obeying_burst(rate)),
                pct(share),
                essay,
                pct(served(r, OBEYING_LOG)),
            ]);
        }
    }
    tables.push(Table {
        id: "obeying".into(),
        title: "Token buckets that never break the rule (B + rate ≤ L), at 80% load: the best of rates 5 to 95 a minute, and the essay's B = 40 at 60 a minute".into(),
        header: vec![
            "traffic".into(),
            "best bucket".into(),
            "served %".into(),
            "B = 40, 60/min served %".into(),
            "sliding log served %".into(),
        ],
        rows,
    });

    // Retry lockout.
    let mut rows = Vec::new();
    for &rate in &RETRY_RATES {
        for &tries in &RETRY_TRIES {
            if let Some(r) = find(jobs, results, &JobKind::Retry { rate, tries }) {
                let locked_of = |i: usize| {
                    let k = r.runs.iter().filter(|run| locked(&run[i])).count();
                    format!("{k} of {}", r.runs.len())
                };
                let same = r
                    .runs
                    .iter()
                    .filter(|run| run[RETRY_FIXED] == run[RETRY_FIXED_RECORDING])
                    .count();
                rows.push(vec![
                    format!("{rate}/min"),
                    tries.to_string(),
                    locked_of(RETRY_RECORDING),
                    pct(served(r, RETRY_RECORDING)),
                    locked_of(RETRY_FORGETTING),
                    pct(served(r, RETRY_FORGETTING)),
                    locked_of(RETRY_COUNTER_RECORDING),
                    pct(served(r, RETRY_COUNTER_RECORDING)),
                    pct(served(r, RETRY_COUNTER)),
                    pct(served(r, RETRY_FIXED)),
                    format!("{same} of {}", r.runs.len()),
                ]);
            }
        }
    }
    tables.push(Table {
        id: "lockout".into(),
        title: "Retry lockout over 200 minutes after a spike of 200 at minute 5 (a run counts as locked out when it was served under half its requests)".into(),
        header: vec![
            "client rate".into(),
            "tries".into(),
            "log recording rejects: locked".into(),
            "served %".into(),
            "log not recording: locked".into(),
            "served %".into(),
            "counter recording rejects: locked".into(),
            "served %".into(),
            "counter not recording: served %".into(),
            "fixed window served %".into(),
            "fixed window runs equal with recording".into(),
        ],
        rows,
    });

    // Splitting.
    let mut rows = Vec::new();
    for shape in SPLIT_SHAPES {
        if let Some(r) = find(jobs, results, &JobKind::Split { shape }) {
            for (j, k) in SERVERS.iter().enumerate() {
                rows.push(vec![
                    SHAPES[shape].to_string(),
                    k.to_string(),
                    pct(served(r, split_log(j))),
                    pct(served(r, split_bucket(j))),
                ]);
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
            let (log, fw) = (served(r, THEORY_LOG), served(r, THEORY_FIXED));
            let (tl, tf) = (
                theory::sliding_log_served(100, load),
                theory::fixed_window_served(100, load),
            );
            let z = |e: Estimate, t: f64| {
                if e.se > 0.0 {
                    fixed_signed((e.mean - t) / e.se, 1)
                } else {
                    "-".into()
                }
            };
            rows.push(vec![
                format!("{}%", fixed(load * 100.0, 0)),
                pct(log),
                fixed(100.0 * tl, 2),
                z(log, tl),
                pct(fw),
                fixed(100.0 * tf, 2),
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
    // The boundary-burst essay's attack, and its client offering twice the limit.
    if let Some(r) = find(jobs, results, &JobKind::Boundary) {
        let over = find(jobs, results, &JobKind::Overdriven);
        let rows = BOUNDARY_LIMITERS
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let s = &r.runs[0][i];
                let bound = LimiterSpec::parse(l)
                    .ok()
                    .and_then(|spec| theory::worst_case(&spec, BOUNDARY_LIMIT, MINUTE));
                vec![
                    l.to_string(),
                    s.offered.to_string(),
                    s.admitted.to_string(),
                    (s.offered - s.admitted).to_string(),
                    s.busiest.to_string(),
                    bound.map_or("-".into(), |b| b.to_string()),
                    over.map_or("-".into(), |o| pct(served(o, i))),
                ]
            })
            .collect();
        tables.push(Table {
            id: "boundary".into(),
            title: "The boundary burst at a limit of 60 a minute: 60 requests 0.5 s before a reset and 60 just after, and a steady client offering twice the limit".into(),
            header: vec![
                "limiter".into(),
                "offered".into(),
                "admitted".into(),
                "rejected".into(),
                "busiest window".into(),
                "bound over any arrivals".into(),
                "served %, steady at 2L".into(),
            ],
            rows,
        });
    }
    // The guesses the essays force, swept: the on/off client's active period, and how far
    // from the reset the attack's ticks come.
    let readings: Vec<(String, Option<u64>)> = ON_OFF_ACTIVES
        .iter()
        .map(|&s| (format!("{s} s"), Some(s)))
        .chain([("30 s (ratelab's)".to_owned(), None)])
        .collect();
    let rows: Vec<Vec<String>> = readings
        .iter()
        .filter_map(|(name, active)| {
            let (strict, rows, wins, cells) = on_off_counts(jobs, results, *active)?;
            let both = strict == 4 && wins == 14;
            Some(vec![
                name.clone(),
                format!("{strict} of {rows}"),
                format!("{wins} of {cells}"),
                if both {
                    "both"
                } else if strict == 4 || wins == 14 {
                    "one"
                } else {
                    "neither"
                }
                .into(),
            ])
        })
        .collect();
    if !rows.is_empty() {
        tables.push(Table {
            id: "guess-on-off".into(),
            title: "The on/off client's mean active period, which the essay does not give, against the two counts it does".into(),
            header: vec![
                "mean active period".into(),
                "rows at 80% where the log serves least (essay: 4 of 5)".into(),
                "cells where B = 50 serves at least as much as the counter (essay: 14 of 20)".into(),
                "essay's counts reproduced".into(),
            ],
            rows,
        });
    }
    let rows: Vec<Vec<String>> = TICK_OFFSETS_MS
        .iter()
        .filter_map(|&ms| {
            let r = find(jobs, results, &JobKind::TickOffset { ms })?;
            let b = |i: usize| r.runs[0][i].busiest;
            let as_essay = b(BOUNDARY_FIXED) == 2 * BOUNDARY_LIMIT
                && b(BOUNDARY_LOG) == BOUNDARY_LIMIT
                && b(BOUNDARY_BUCKET_60) > BOUNDARY_LIMIT
                && b(BOUNDARY_BUCKET_10) <= BOUNDARY_LIMIT;
            Some(vec![
                crate::time::format_duration(ms * crate::time::MS),
                b(BOUNDARY_FIXED).to_string(),
                b(BOUNDARY_LOG).to_string(),
                b(BOUNDARY_BUCKET_60).to_string(),
                b(BOUNDARY_BUCKET_10).to_string(),
                if as_essay { "yes" } else { "no" }.into(),
            ])
        })
        .collect();
    if !rows.is_empty() {
        tables.push(Table {
            id: "guess-tick-offset".into(),
            title: "The two-tick attack's ticks at each distance from the reset (the essay says only the last and first moments): the busiest window of each limiter".into(),
            header: vec![
                "either side of the reset".into(),
                "fixed window (essay: 120)".into(),
                "sliding log (essay: 60)".into(),
                "token bucket, B = 60 (essay: over 60)".into(),
                "token bucket, B = 10 (essay: within 60)".into(),
                "as the essay".into(),
            ],
            rows,
        });
    }
    let claims = super::essays::claims(config, jobs, results);
    let plots = plots(jobs, results);
    StudyReport {
        config,
        tables,
        claims,
        swc_offsets,
        plots,
    }
}

/// The plots: page loads against load, the lockout grid, splitting.
fn plots(jobs: &[Job], results: &[Option<JobResult>]) -> Vec<StudyPlot> {
    let mut out = Vec::new();
    let lines = (0..LIMITERS.len())
        .map(|i| {
            let points = (0..LOADS.len())
                .filter_map(|l| {
                    find(
                        jobs,
                        results,
                        &JobKind::Honest {
                            shape: PAGE_LOADS,
                            load: l,
                        },
                    )
                    .map(|r| (100.0 * LOADS[l], 100.0 * served(r, i).mean))
                })
                .collect();
            (LIMITERS[i].to_string(), points)
        })
        .collect();
    out.push(StudyPlot {
        id: "honest-page-loads".into(),
        plot: Plot::shares(
            "An honest page-load client: share served against load",
            "load (% of the limit)",
            "% served",
            lines,
        ),
    });
    let line = |tries: u32, at: usize| -> Vec<(f64, f64)> {
        RETRY_RATES
            .iter()
            .filter_map(|&rate| {
                find(jobs, results, &JobKind::Retry { rate, tries })
                    .map(|r| (rate as f64, 100.0 * served(r, at).mean))
            })
            .collect()
    };
    // Five of the grid's tries and the client that is not recorded: six lines, six colours of
    // the palette (a seventh would repeat the first).
    let mut lines: Vec<(String, Vec<(f64, f64)>)> = RETRY_TRIES
        .iter()
        .filter(|&&tries| tries != 3)
        .map(|&tries| {
            (
                format!("{tries} tries, rejects recorded"),
                line(tries, RETRY_RECORDING),
            )
        })
        .collect();
    let most = RETRY_TRIES[RETRY_TRIES.len() - 1];
    lines.push((
        format!("{most} tries, not recorded"),
        line(most, RETRY_FORGETTING),
    ));
    out.push(StudyPlot {
        id: "lockout".into(),
        plot: Plot::shares(
            "A retrying client after a spike of 200: share served over 200 minutes",
            "client rate (requests a minute)",
            "% served",
            lines,
        ),
    });
    let mut lines = Vec::new();
    for shape in SPLIT_SHAPES {
        if let Some(r) = find(jobs, results, &JobKind::Split { shape }) {
            let at = [split_log as fn(usize) -> usize, split_bucket];
            for (at, name) in at.into_iter().zip(["sliding log", "token bucket"]) {
                let points = SERVERS
                    .iter()
                    .enumerate()
                    .map(|(j, &k)| (f64::from(k), 100.0 * served(r, at(j)).mean))
                    .collect();
                lines.push((format!("{name}, {}", SHAPES[shape]), points));
            }
        }
    }
    out.push(StudyPlot {
        id: "split".into(),
        plot: Plot::shares(
            "Splitting a limit across K servers, 80% load",
            "servers K",
            "% served",
            lines,
        ),
    });
    out
}
