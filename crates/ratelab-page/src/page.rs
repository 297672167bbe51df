//! What the page asks of the core, as plain Rust: a figure's controls turned into a
//! [`Scenario`], the read-outs of a run, and the data behind each section's figure. Nothing
//! here touches the browser, so it is all tested natively.

use ratelab::analysis::{self, BurstFit, BusyWindow};
use ratelab::audit::Auditor;
use ratelab::sim::{mechanism_into, simulate, trace_into, Mechanism, RunStats, Scenario, Trace};
use ratelab::spec::{LimiterKind, Replay};
use ratelab::theory;
use ratelab::time::{Micros, SECOND};
use ratelab::Error;
use ratelab_charts::{self as charts, Plot, Series};
use serde::{Deserialize, Serialize};

pub use crate::controls::{Attack, Controls, Named, Traffic, CAPACITY_FACTOR};
use std::sync::Arc;

pub use crate::readout::Readout;

/// Runs a figure: its scenario's first run, with every decision kept for the plots.
pub fn run(controls: &Controls) -> Result<(Readout, Trace), Error> {
    run_into(controls, Trace::default())
}

/// [`run`], into the lists of a trace kept from an earlier run (see [`trace_into`]).
pub fn run_into(controls: &Controls, buf: Trace) -> Result<(Readout, Trace), Error> {
    let scenario = controls.scenario()?;
    let (stats, trace) = trace_into(&scenario, 0, 0, buf)?;
    Ok((finish(controls, &scenario, &stats)?, trace))
}

/// [`run`] with the run's mechanism (each decision's trailing window and the limiter's
/// state), as the figure's read-out would say it.
pub fn run_mechanism(controls: &Controls) -> Result<(Readout, Trace, Mechanism), Error> {
    let scenario = controls.scenario()?;
    let (stats, trace, mech) =
        mechanism_into(&scenario, 0, 0, Trace::default(), Mechanism::default())?;
    Ok((finish(controls, &scenario, &stats)?, trace, mech))
}

/// The playhead's run: the figure's first run with its mechanism, into the lists of a trace
/// and a mechanism kept from an earlier run (the page re-runs at every move of a dial and
/// keeps one set of lists for all of them), and the run's horizon in seconds, its time axis.
/// No read-out: the figure beside it has its own, so its sentences (and, under the retry
/// storm, the second run they compare with) are not made again.
pub fn run_mechanism_into(
    controls: &Controls,
    trace: Trace,
    mech: Mechanism,
) -> Result<(f64, Trace, Mechanism), Error> {
    let scenario = controls.scenario()?;
    let (_, trace, mech) = mechanism_into(&scenario, 0, 0, trace, mech)?;
    Ok((horizon(&scenario) as f64 / 1e6, trace, mech))
}

/// The read-out of a run, with its explanation.
fn finish(controls: &Controls, scenario: &Scenario, stats: &RunStats) -> Result<Readout, Error> {
    let mut readout = readout(controls, scenario, stats)?;
    if controls.attack == Attack::RetryStorm && controls.algorithm.can_record_rejects() {
        let other = Controls {
            record_rejects: !controls.record_rejects,
            ..controls.clone()
        };
        // Through the same run loop as the figure's (a second one costs the first load 2 KB).
        let (stats, _) = ratelab::sim::trace(&other.scenario()?, 0, 0)?;
        readout.served_other_recording = stats.served_share();
    }
    readout.explanation = crate::form::explain(controls, &readout);
    Ok(readout)
}

fn readout(controls: &Controls, scenario: &Scenario, stats: &RunStats) -> Result<Readout, Error> {
    let cli = controls.cli_args()?;
    let row = row(scenario, stats);
    Ok(Readout {
        worst_window: row.worst_window,
        worst_at_s: stats.busiest_at as f64 / 1e6,
        bound: row.bound,
        served_share: row.served_share,
        wrong_admits: row.wrong_admits,
        wrong_rejects: row.wrong_rejects,
        offered: stats.offered,
        admitted: stats.admitted,
        invariant_ok: stats.busiest <= scenario.limit,
        limit: scenario.limit,
        command: ratelab::text::shell_line("ratelab", &cli),
        served_other_recording: None,
        explanation: String::new(),
        verdict: if stats.busiest <= scenario.limit {
            format!("Rule kept: never more than {} in a window", scenario.limit)
        } else {
            format!("Rule broken: {} in one window", stats.busiest)
        },
        cli,
        horizon_s: horizon(scenario) as f64 / 1e6,
        tries: stats.decisions,
        client: stats.client.clone(),
    })
}

/// Where the plots' time axis ends: the scenario's horizon, rounded up to a whole window.
pub fn horizon(scenario: &Scenario) -> Micros {
    scenario.horizon().div_ceil(scenario.window) * scenario.window
}

/// The most points a plotted series keeps; plotters-canvas costs about 100 ns a point.
pub const MAX_POINTS: usize = 3_000;

/// The main figure's three plots of a run, in page order: the trailing-window count, requests
/// per bin, and the admitted share so far. The page draws them on canvases; the on-demand
/// module reruns the same controls to export them as SVG and CSV.
pub fn main_plots(controls: &Controls, readout: &Readout, trace: &Trace) -> [Plot; 3] {
    let horizon = (readout.horizon_s * 1e6) as u64;
    let window_us = controls.window_s * SECOND;
    let bins = (horizon / (window_us / 12).max(1)).clamp(12, 240) as usize;
    let binned = charts::bin_decisions(&trace.times, &trace.admitted, horizon, bins);
    let (admitted_s, _) = window_series(trace);
    let (xs, ys) = charts::window_steps(&admitted_s, controls.window_s as f64);
    let (xs, ys) = charts::decimate_max(&xs, &ys, MAX_POINTS);
    let (sx, sy) = share_series(trace);
    let (sx, sy) = charts::decimate_max(&sx, &sy, MAX_POINTS);
    [
        Plot::Window {
            times_s: xs,
            counts: ys,
            limit: readout.limit as f64,
            bound: readout.bound.map(|b| b as f64),
            x_max: readout.horizon_s,
        },
        Plot::Arrivals(binned),
        Plot::Xy {
            title: "Admitted share so far".into(),
            x_label: "time (s)".into(),
            y_label: "%".into(),
            series: vec![Series {
                name: "admitted so far, % of offered".into(),
                points: sx.into_iter().zip(sy).collect(),
                color: charts::BLUE,
                markers: false,
                line: true,
            }],
            references: Vec::new(),
            y_range: Some((0.0, 105.0)),
            x_range: Some((0.0, readout.horizon_s)),
        },
    ]
}

/// One row of the compare table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompareRow {
    /// The limiter spec.
    pub limiter: String,
    /// The share served.
    pub served_share: f64,
    /// The busiest window.
    pub worst_window: u64,
    /// The bound.
    pub bound: Option<u64>,
    /// Wrong admits, fraction of decisions.
    pub wrong_admits: f64,
    /// Wrong rejects, fraction of decisions.
    pub wrong_rejects: f64,
}

/// Every algorithm on the same arrivals as `controls`: the table rows and each one's small
/// multiple (its trailing-window count, on the scenario's time axis). Each run's decisions are
/// dropped as soon as its plot is made, so a long replay holds one trace at a time.
pub fn compare(controls: &Controls) -> Result<Vec<(CompareRow, Plot)>, Error> {
    // One trace's lists serve every limiter in turn.
    let mut buf = Trace::default();
    LimiterKind::ALL
        .iter()
        .map(|kind| {
            let mut c = controls.clone();
            c.algorithm = *kind;
            let scenario = c.scenario()?;
            let (stats, trace) = trace_into(&scenario, 0, 0, std::mem::take(&mut buf))?;
            // The row alone, not the figure's whole read-out: no command line or sentences.
            let row = row(&scenario, &stats);
            let (admitted_s, _) = window_series(&trace);
            let (xs, ys) = charts::window_steps(&admitted_s, controls.window_s as f64);
            let (xs, ys) = charts::decimate_max(&xs, &ys, MAX_POINTS / 4);
            let plot = Plot::Window {
                times_s: xs,
                counts: ys,
                limit: controls.limit as f64,
                bound: row.bound.map(|b| b as f64),
                x_max: horizon(&scenario) as f64 / 1e6,
            };
            buf = trace;
            Ok((row, plot))
        })
        .collect()
}

/// A run's row of the comparison table: its limiter and the read-out's numbers.
fn row(scenario: &Scenario, stats: &RunStats) -> CompareRow {
    let decisions = stats.decisions.max(1) as f64;
    CompareRow {
        limiter: scenario.limiters[0].text.clone(),
        served_share: stats.served_share().unwrap_or(0.0),
        worst_window: stats.busiest,
        bound: theory::worst_case(&scenario.limiters[0], scenario.limit, scenario.window),
        // (The page's runs count every lane's wrong decisions: only the study's do without.)
        wrong_admits: stats.wrong_admits.unwrap_or(0) as f64 / decisions,
        wrong_rejects: stats.wrong_rejects.unwrap_or(0) as f64 / decisions,
    }
}

/// Compare mode's table rows and small multiples, as the section worker hands them to the
/// page's thread.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CompareData {
    /// One row per limiter.
    pub rows: Vec<CompareRow>,
    /// Each limiter's trailing-window chart, in the same order.
    pub plots: Vec<Plot>,
}

/// [`compare`], as [`CompareData`].
pub fn compare_data(controls: &Controls) -> Result<CompareData, Error> {
    let (rows, plots) = compare(controls)?.into_iter().unzip();
    Ok(CompareData { rows, plots })
}

/// The reader's traffic as the page holds it (µs since the epoch, as JavaScript numbers),
/// checked, with the file's name and how it was read (for the command line the lab shows).
pub fn replay_of(
    times: &[f64],
    file: &str,
    format: &str,
    field: &str,
    value: &str,
) -> Result<Replay, Error> {
    let bad = |what: &str| Error::Invalid {
        what: "traffic file times".into(),
        got: what.into(),
        accepted: "sorted whole numbers of µs from 0 to 2^53".into(),
    };
    let mut out = Vec::with_capacity(times.len());
    for &t in times {
        if !(t.is_finite() && t >= 0.0 && t.fract() == 0.0 && t < 9_007_199_254_740_992.0) {
            return Err(bad(&ratelab::decimal::shortest(t)));
        }
        let t = t as u64;
        if out.last().is_some_and(|&l| l > t) {
            return Err(bad("out of order"));
        }
        out.push(t);
    }
    let filter = if field.is_empty() {
        None
    } else {
        Some(ratelab::import::Filter {
            field: ratelab::import::Field::from_name(field)?,
            value: value.to_owned(),
        })
    };
    Ok(Replay {
        file: file.to_owned(),
        times: Arc::from(out),
        format: ratelab::import::Format::from_name(format)?,
        filter,
    })
}

/// What the reader's own traffic did: every limiter's replay of it, its busiest windows
/// before any limiter, and the smallest token bucket that serves a given share of it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplayReport {
    /// One row per algorithm, as in compare mode.
    pub rows: Vec<CompareRow>,
    /// The five busiest windows that do not overlap, busiest first.
    pub busiest: Vec<BusyWindow>,
    /// The smallest token-bucket capacity serving the share asked for.
    pub fit: BurstFit,
    /// `L`.
    pub limit: u64,
    /// `W`, in seconds.
    pub window_s: u64,
}

/// The [`ReplayReport`] of `controls`' file at its limit and window (and capacity, for the
/// buckets), sizing a token bucket to serve `share` (0 < share ≤ 1).
pub fn replay_report(controls: &Controls, share: f64) -> Result<ReplayReport, Error> {
    let mut c = controls.clone();
    c.traffic = Traffic::File;
    c.attack = Attack::None;
    let mut scenario = c.scenario()?;
    scenario.limiters = LimiterKind::ALL
        .iter()
        .map(|kind| {
            let mut k = c.clone();
            k.algorithm = *kind;
            k.limiter_spec()
        })
        .collect::<Result<_, _>>()?;
    scenario.validate()?;
    let report = simulate(&scenario)?;
    let rows = report
        .results
        .iter()
        .map(|r| CompareRow {
            limiter: r.limiter.clone(),
            served_share: r.served_share.unwrap_or(0.0),
            worst_window: r.busiest_window_max,
            bound: r.bound,
            wrong_admits: r.wrong_admits,
            wrong_rejects: r.wrong_rejects,
        })
        .collect();
    let times = &c.replay()?.times;
    Ok(ReplayReport {
        rows,
        busiest: analysis::busiest_windows(times, scenario.window, 5),
        fit: analysis::smallest_burst(times, scenario.limit, scenario.window, share)?,
        limit: scenario.limit,
        window_s: c.window_s,
    })
}

/// The trailing-window series of a trace, in seconds and counts.
pub fn window_series(trace: &Trace) -> (Vec<f64>, Vec<f64>) {
    (
        trace.window_times.iter().map(|&t| t as f64 / 1e6).collect(),
        trace.window_counts.iter().map(|&c| c as f64).collect(),
    )
}

/// The admitted share so far, after each decision, in percent: the metric that cannot see a
/// broken window.
pub fn share_series(trace: &Trace) -> (Vec<f64>, Vec<f64>) {
    let mut admitted = 0u64;
    trace
        .times
        .iter()
        .zip(&trace.admitted)
        .enumerate()
        .map(|(i, (&t, &ok))| {
            admitted += u64::from(ok);
            (t as f64 / 1e6, 100.0 * admitted as f64 / (i + 1) as f64)
        })
        .unzip()
}

/// The trailing-window count of a trace recomputed from scratch, for tests.
pub fn recount(trace: &Trace, limit: u64, window: Micros) -> u64 {
    let mut audit = Auditor::new(limit, window);
    let mut pairs: Vec<(Micros, bool)> = trace
        .times
        .iter()
        .copied()
        .zip(trace.admitted.iter().copied())
        .collect();
    for (i, p) in pairs.iter_mut().enumerate() {
        p.0 = if p.1 { trace.released[i] } else { p.0 };
    }
    pairs.sort_by_key(|p| p.0);
    for (t, ok) in pairs {
        audit.record(t, ok);
    }
    audit.busiest
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratelab::time::MINUTE;

    fn controls(algorithm: LimiterKind, attack: Attack, capacity: u64) -> Controls {
        Controls {
            algorithm,
            attack,
            capacity,
            ..Controls::default()
        }
    }

    /// A file's worth of times: 60 requests in the half-second before a minute boundary and
    /// 60 in the half-second after it, an hour after the epoch, then a quiet one 10 min later.
    fn file_times() -> Vec<f64> {
        let base = 3_600_000_000.0;
        let mut t: Vec<f64> = (0..60)
            .map(|i| base - 500_000.0 + f64::from(i) * 8_000.0)
            .collect();
        t.extend((0..60).map(|i| base + f64::from(i) * 8_000.0));
        t.push(base + 600_000_000.0);
        t
    }

    #[test]
    fn the_readers_file_replays_through_every_limiter() {
        let mut c = controls(LimiterKind::FixedWindow, Attack::None, 10);
        c.traffic = Traffic::File;
        assert!(c.scenario().is_err(), "no file yet: a message, not a panic");
        c.replay = Some(
            replay_of(&file_times(), "api.log", "access-log", "host", "10.0.0.1").expect("valid"),
        );
        let (readout, trace) = run(&c).expect("runs");
        assert_eq!(readout.worst_window, 120, "2L across the boundary");
        assert_eq!(trace.times.len(), 121);
        let cli = readout.cli.join(" ");
        assert!(
            cli.contains("replay:file=api.log,format=access-log,client=10.0.0.1"),
            "{cli}"
        );
        let report = replay_report(&c, 1.0).expect("report");
        let row = |name: &str| {
            report
                .rows
                .iter()
                .find(|r| r.limiter.starts_with(name))
                .expect(name)
        };
        assert_eq!(row("fixed-window").worst_window, 120);
        assert_eq!(row("sliding-log").worst_window, 60);
        assert_eq!(row("sliding-log").served_share, 61.0 / 121.0);
        assert_eq!(report.busiest[0].count, 120);
        assert_eq!(report.busiest[1].count, 1);
        // The 120 arrive within 0.97 s, in which less than one token (of 1 a second) refills:
        // serving all of them takes a bucket of 120, whose worst window is 120 + 60 − 1.
        assert_eq!(report.fit.admitted, 121);
        assert_eq!((report.fit.burst, report.fit.worst_window), (120, 179));
        assert_eq!(compare(&c).expect("compares").len(), LimiterKind::ALL.len());
    }

    #[test]
    fn the_command_line_quotes_a_file_name_for_the_shell() {
        let mut c = controls(LimiterKind::SlidingLog, Attack::None, 10);
        c.traffic = Traffic::File;
        let times = [1e6, 2e6];
        c.replay = Some(replay_of(&times, "bob's log.txt", "seconds", "", "").expect("valid"));
        let (readout, _) = run(&c).expect("runs");
        assert!(
            readout
                .command
                .contains(r"--traffic 'replay:file=bob'\''s log.txt,format=seconds' --limit"),
            "{}",
            readout.command
        );
        assert!(readout
            .command
            .starts_with("ratelab simulate --limiter sliding-log "));
    }

    #[test]
    fn a_file_spanning_decades_replays() {
        let mut c = controls(LimiterKind::TokenBucket, Attack::None, 10);
        c.traffic = Traffic::File;
        let times = [17e6, 1_764_590_400e6, 1_764_590_401e6];
        c.replay = Some(replay_of(&times, "old.log", "seconds", "", "").expect("valid"));
        let report = replay_report(&c, 1.0).expect("a 56-year span is fine");
        assert_eq!(report.fit.offered, 3);
        let (readout, _) = run(&c).expect("runs");
        assert_eq!(readout.offered, 3);
        assert!(
            !readout.cli.contains(&"--minutes".to_owned()),
            "{:?}",
            readout.cli
        );
    }

    #[test]
    fn bad_file_times_are_refused() {
        for bad in [
            vec![f64::NAN],
            vec![-1.0],
            vec![1.5],
            vec![5.0, 4.0],
            vec![1e300],
        ] {
            assert!(replay_of(&bad, "f", "auto", "", "").is_err(), "{bad:?}");
        }
        assert!(replay_of(&[1.0], "f", "csv", "", "").is_err());
        assert!(replay_of(&[1.0], "f", "auto", "colour", "x").is_err());
    }

    #[test]
    fn the_boundary_burst_doubles_a_fixed_window_and_a_small_bucket_stays_clean() {
        let (r, _) = run(&controls(
            LimiterKind::FixedWindow,
            Attack::BoundaryBurst,
            60,
        ))
        .expect("runs");
        assert_eq!(r.worst_window, 120);
        assert!(!r.invariant_ok);
        // A bucket refilling one token a second (L = 60 a minute) and starting full spends
        // its B tokens on the first tick (60 at 59.5 s) and finds exactly one new token at the
        // second (60 at 60.5 s), in the same window: B + 1 gets through.
        let (r, _) = run(&controls(
            LimiterKind::TokenBucket,
            Attack::BoundaryBurst,
            10,
        ))
        .expect("runs");
        assert!(r.invariant_ok, "{r:?}");
        assert_eq!(r.worst_window, 11, "{r:?}");
        let (r, _) = run(&controls(
            LimiterKind::TokenBucket,
            Attack::BoundaryBurst,
            60,
        ))
        .expect("runs");
        assert!(!r.invariant_ok, "burst plus one token: {r:?}");
        assert_eq!(r.worst_window, 61, "{r:?}");
        assert_eq!(r.bound, Some(119));
        // The counter's burst comes 59 s into the next window (before=500ms, after=59s): the
        // previous window's 60 weigh (60 − 59)/60, so it admits while 60·1 + 60·cur < 60·60,
        // cur from 0 to 58: 59 more, and the window ending then still holds the first 60.
        let (r, _) = run(&controls(
            LimiterKind::SlidingWindowCounter,
            Attack::BoundaryBurst,
            60,
        ))
        .expect("runs");
        assert_eq!(r.worst_window, 60 + 59, "the counter's weak moment: {r:?}");
    }

    /// The ticks are aimed at a boundary for any window: with W = 1 s, two ticks 500 ms either
    /// side of the boundary were a whole window apart and the fixed window stayed clean.
    #[test]
    fn the_boundary_burst_is_aimed_at_the_boundary_for_any_window() {
        for window_s in [1, 2, 7, 60, 3_600] {
            // The counter's bound is 2L; its ticks get 2L − 1 or 2L, as the weight of the
            // first tick rounds.
            for (kind, want) in [
                (LimiterKind::FixedWindow, 120..=120),
                (LimiterKind::SlidingWindowCounter, 119..=120),
                (LimiterKind::SlidingLog, 60..=60),
            ] {
                let c = Controls {
                    window_s,
                    ..controls(kind, Attack::BoundaryBurst, 60)
                };
                let (r, _) = run(&c).expect("runs");
                assert!(
                    want.contains(&r.worst_window),
                    "{} at W = {window_s} s: {r:?}",
                    kind.name()
                );
            }
        }
    }

    #[test]
    fn the_flood_reaches_the_bound_for_every_algorithm() {
        for kind in LimiterKind::ALL {
            let (r, _) = run(&controls(kind, Attack::Flood, 60)).expect("runs");
            assert_eq!(Some(r.worst_window), r.bound, "{}", kind.name());
        }
    }

    #[test]
    fn recording_rejects_turns_the_retry_storm_into_a_lockout() {
        let mut c = controls(LimiterKind::SlidingLog, Attack::RetryStorm, 60);
        let (open, _) = run(&c).expect("runs");
        c.record_rejects = true;
        let (locked, _) = run(&c).expect("runs");
        // The spike's excess is lost either way; recording rejects also locks the client out.
        assert!(open.served_share > 0.8, "{open:?}");
        assert!(locked.served_share < 0.3, "{locked:?}");
    }

    #[test]
    fn the_trace_agrees_with_the_readout_and_the_cli_args_parse() {
        let c = Controls {
            traffic: Traffic::PageLoads,
            ..controls(LimiterKind::SlidingWindowCounter, Attack::None, 60)
        };
        let (r, t) = run(&c).expect("runs");
        assert_eq!(recount(&t, c.limit, c.window_s * SECOND), r.worst_window);
        assert_eq!(t.times.len() as u64, r.offered);
        assert!(
            r.cli.contains(&"page-loads:load=0.8".to_string()),
            "{:?}",
            r.cli
        );
        let leaky = Controls {
            leaky_mode: ratelab::limiter::LeakyMode::Queue,
            ..controls(LimiterKind::LeakyBucket, Attack::Flood, 5)
        };
        let (r, t) = run(&leaky).expect("runs");
        assert_eq!(recount(&t, leaky.limit, MINUTE), r.worst_window);
    }

    #[test]
    fn bad_controls_name_the_control() {
        let bad = [
            (
                Controls {
                    limit: 0,
                    ..Controls::default()
                },
                "limit",
            ),
            (
                Controls {
                    window_s: 0,
                    ..Controls::default()
                },
                "window",
            ),
            (
                Controls {
                    load: f64::NAN,
                    ..Controls::default()
                },
                "load",
            ),
            (controls(LimiterKind::TokenBucket, Attack::None, 0), "burst"),
        ];
        for (c, needle) in bad {
            let e = run(&c).expect_err(needle).to_string();
            assert!(e.contains(needle), "{e}");
        }
    }

    #[test]
    fn nginx_runs_as_its_limit_req_line_says_with_its_command_line_and_notes() {
        let c = Controls {
            algorithm: LimiterKind::Nginx,
            limit: 7,
            ..controls(LimiterKind::Nginx, Attack::Flood, 60)
        }
        .with_nginx(crate::controls::NginxConf {
            rate: 7,
            unit: crate::controls::RateUnit::PerMinute,
            burst: 5,
            delay: 2,
            nodelay: false,
        });
        let (r, t) = run(&c).expect("runs");
        assert_eq!(
            r.command,
            "ratelab simulate --limiter nginx:rate=7r/m,burst=5,delay=2 --traffic flood:start=worst --limit 7 --window 60s --minutes 10 --seed 1"
        );
        let notes = crate::form::nginx_notes(&c).expect("notes");
        assert_eq!(
            notes.config,
            "limit_req_zone $binary_remote_addr zone=lab:10m rate=7r/m;\nlimit_req zone=lab burst=5 delay=2;"
        );
        assert!(notes.sentences.contains(&format!(
            "No window can hold more than {} here",
            r.bound.expect("a bound")
        )));
        // The bound is the core's, for the spec the command line names.
        let spec =
            ratelab::spec::LimiterSpec::parse("nginx:rate=7r/m,burst=5,delay=2").expect("parses");
        assert_eq!(r.bound, theory::worst_case(&spec, 7, MINUTE));
        assert_eq!(
            recount(&t, 7, MINUTE),
            r.worst_window,
            "delayed requests counted when they leave"
        );
        assert!(r.worst_window > 7, "{r:?}");
    }

    #[test]
    fn a_name_the_page_does_not_know_is_refused_where_it_enters() {
        for (json, needle) in [
            (r#"{"algorithm":"haproxy"}"#, "haproxy"),
            (r#"{"nginx":"7 r/h 0 0"}"#, "7 r/h 0 0"),
            (r#"{"algorithm":"token-buckt"}"#, "token-buckt"),
            (r#"{"attack":"nuke"}"#, "nuke"),
            (r#"{"traffic":"lumpy"}"#, "lumpy"),
            (r#"{"leakyMode":"drip"}"#, "drip"),
        ] {
            let e = serde_json::from_str::<Controls>(json)
                .expect_err(json)
                .to_string();
            assert!(e.contains(needle), "{e}");
        }
        // nginx's settings cross as their fields' text, both ways.
        let c = Controls::default().with_nginx(crate::controls::NginxConf {
            rate: 7,
            unit: crate::controls::RateUnit::PerSecond,
            burst: 5,
            delay: 0,
            nodelay: true,
        });
        let json = serde_json::to_string(&c).expect("serialises");
        assert!(json.contains(r#""nginx":"7 r/s 5 0 nodelay""#), "{json}");
        assert_eq!(serde_json::from_str::<Controls>(&json).expect("reads"), c);
        for bad in [
            "7 r/s 5",
            "0 r/m 0 0",
            "7 r/m 5 2 nodelay x",
            "7 r/m 5 2 later",
            "x r/m 0 0",
        ] {
            let json = format!(r#"{{"nginx":"{bad}"}}"#);
            assert!(serde_json::from_str::<Controls>(&json).is_err(), "{bad}");
        }
        let ok: Controls = serde_json::from_str(
            r#"{"algorithm":"gcra","attack":"retry-storm","traffic":"on-off","leakyMode":"queue"}"#,
        )
        .expect("the page's names");
        assert_eq!(
            (ok.algorithm, ok.attack, ok.traffic),
            (LimiterKind::Gcra, Attack::RetryStorm, Traffic::OnOff)
        );
    }
}
