//! Beyond the essays, "Every gateway thought there was room" (issue 19): a limit of 100 a
//! minute enforced by `N` gateways, each a sliding log of the whole limit, that sync their
//! counts every `Δ`, each sync reaching them 100 ms after it was taken, while a client sends
//! one and a half times the limit to gateways chosen at random. Between syncs each gateway
//! knows only its own admissions, so it finds room the fleet no longer has.
//!
//! The figure is three parts: the timeline (the backend's true trailing-window count at each
//! request, what gateway 1 believed at each request it decided, and the room instants), the
//! sweep (the fleet's busiest window against the sync interval, with its bound) and a table
//! of the coordinations side by side. Natively tested here; the page's tools module computes
//! it when the reader asks (the core's `fleet` feature, which this crate's `fleet` turns on).

use ratelab::decimal::fixed;
use ratelab::plot::{Plot, Series, BLUE, GREEN, ORANGE, RED};
use ratelab::sim::{gateway_trace, LimiterReport, Scenario};
use ratelab::spec::{FleetSpec, LimiterSpec, TrafficSpec};
use ratelab::time::{Micros, MINUTE, MS, SECOND};
use ratelab::Error;
use std::ops::RangeInclusive;

/// The figure's limit `L`, a minute's window.
pub const LIMIT: u64 = 100;
/// How many gateways the reader can choose.
pub const GATEWAYS: RangeInclusive<u32> = 1..=16;
/// The sync intervals offered, in milliseconds (the sweep runs each).
pub const SYNC_INTERVALS_MS: [u64; 7] = [100, 500, 1_000, 5_000, 15_000, 30_000, 60_000];
/// The client: one and a half times the limit, steady.
const TRAFFIC: &str = "steady:load=1.5";
/// How long the timeline runs.
const TIMELINE_MINUTES: u64 = 5;
/// The sweep's and the table's runs: three of ten minutes.
const SWEEP_RUNS: u32 = 3;
const SWEEP_MINUTES: u64 = 10;

/// The figure at one setting.
#[derive(Debug, Clone, PartialEq)]
pub struct GatewaysFigure {
    /// The true count, gateway 1's belief and the room instants, over time.
    pub timeline: Plot,
    /// The busiest window against the sync interval, with the bound.
    pub sweep: Plot,
    /// Each coordination at this setting: header, then rows.
    pub table: Vec<Vec<String>>,
    /// What the table says, in a sentence.
    pub summary: String,
}

/// How long a sync takes to reach the gateways.
const DELAY: Micros = 100 * MS;

/// `--coord` for a sync every `every_ms` with the figure's 100 ms delay.
pub fn sync_coord(every_ms: u64) -> String {
    format!("sync:every={every_ms}ms,delay=100ms")
}

/// The scenario of `gateways` gateways coordinated by `coord` (a `--coord` text).
pub fn scenario(
    gateways: u32,
    coord: &str,
    minutes: u64,
    runs: u32,
    seed: u64,
) -> Result<Scenario, Error> {
    let mut spec = LimiterSpec::parse("sliding-log")?;
    spec.fleet = Some(FleetSpec::parse(
        &gateways.to_string(),
        Some("random"),
        Some(coord),
    )?);
    let s = Scenario {
        limiters: vec![spec],
        traffic: TrafficSpec::parse(TRAFFIC)?,
        limit: LIMIT,
        window: MINUTE,
        duration: minutes * MINUTE,
        runs,
        seed,
    };
    s.validate()?;
    Ok(s)
}

fn check(gateways: u32, every_ms: u64) -> Result<(), Error> {
    if !GATEWAYS.contains(&gateways) {
        return Err(Error::Invalid {
            what: "gateways".into(),
            got: gateways.to_string(),
            accepted: format!("{} to {}", GATEWAYS.start(), GATEWAYS.end()),
        });
    }
    if !SYNC_INTERVALS_MS.contains(&every_ms) {
        return Err(Error::Invalid {
            what: "sync interval".into(),
            got: format!("{every_ms} ms"),
            accepted: "100 ms, 500 ms, 1 s, 5 s, 15 s, 30 s or 1 min".into(),
        });
    }
    Ok(())
}

fn seconds(t: Micros) -> f64 {
    t as f64 / SECOND as f64
}

/// The figure for `gateways` gateways syncing every `every_ms`.
pub fn figure(gateways: u32, every_ms: u64, seed: u64) -> Result<GatewaysFigure, Error> {
    check(gateways, every_ms)?;
    // The synced row of the table is the sweep's run at this interval.
    let reports = sweep_reports(gateways, seed)?;
    let at = SYNC_INTERVALS_MS.iter().position(|&ms| ms == every_ms);
    let synced = at
        .and_then(|i| reports.get(i))
        .ok_or_else(|| Error::Invalid {
            what: "sync interval".into(),
            got: format!("{every_ms} ms"),
            accepted: "one the sweep runs".into(),
        })?;
    let (table, summary) = table_and_summary(gateways, every_ms, seed, synced)?;
    Ok(GatewaysFigure {
        timeline: timeline(gateways, every_ms, seed)?,
        sweep: sweep_plot(gateways, seed, &reports)?,
        table,
        summary,
    })
}

/// The fleet coordinated by `coord` over the sweep's and the table's runs.
fn report(gateways: u32, coord: &str, seed: u64) -> Result<LimiterReport, Error> {
    let s = scenario(gateways, coord, SWEEP_MINUTES, SWEEP_RUNS, seed)?;
    ratelab::simulate(&s)?
        .results
        .into_iter()
        .next()
        .ok_or_else(|| Error::Invalid {
            what: "gateways".into(),
            got: coord.into(),
            accepted: "a fleet that runs".into(),
        })
}

/// The fleet syncing at each interval offered, in [`SYNC_INTERVALS_MS`]' order.
fn sweep_reports(gateways: u32, seed: u64) -> Result<Vec<LimiterReport>, Error> {
    SYNC_INTERVALS_MS
        .iter()
        .map(|&ms| report(gateways, &sync_coord(ms), seed))
        .collect()
}

/// Five minutes of the fleet: at each request, the backend's true count of the trailing
/// window before it was decided; at each request gateway 1 decided, the count it believed;
/// and each room instant, at the true count (at `L` or above, where the gateway's belief
/// was under it).
pub fn timeline(gateways: u32, every_ms: u64, seed: u64) -> Result<Plot, Error> {
    check(gateways, every_ms)?;
    let s = scenario(gateways, &sync_coord(every_ms), TIMELINE_MINUTES, 1, seed)?;
    let g = gateway_trace(&s, 0, 0)?;
    let (mut truth, mut believed, mut room) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..g.times.len() {
        let t = seconds(g.times[i]);
        truth.push((t, g.global[i] as f64));
        if g.gateway[i] == 0 {
            believed.push((t, g.believed[i] as f64));
        }
        if g.room[i] {
            room.push((t, g.global[i] as f64));
        }
    }
    let series = |name: &str, points, color, markers, line| Series {
        name: name.into(),
        points,
        color,
        markers,
        line,
    };
    Ok(Plot::Xy {
        title: format!(
            "{gateways} gateway{} syncing every {}: the true count and what gateway 1 believed",
            if gateways == 1 { "" } else { "s" },
            interval(every_ms)
        ),
        x_label: "seconds".into(),
        y_label: "requests in the trailing minute".into(),
        series: vec![
            series("true count (every gateway)", truth, BLUE, false, true),
            series("gateway 1 believed", believed, GREEN, true, true),
            series("room instants", room, RED, true, false),
        ],
        references: vec![(LIMIT as f64, "L".into())],
        y_range: None,
        x_range: Some((0.0, (TIMELINE_MINUTES * 60) as f64)),
    })
}

/// The sync interval as the page writes it.
pub fn interval(every_ms: u64) -> String {
    match every_ms {
        ms if ms >= 60_000 && ms % 60_000 == 0 => format!("{} min", ms / 60_000),
        ms if ms >= 1_000 && ms % 1_000 == 0 => format!("{} s", ms / 1_000),
        ms => format!("{ms} ms"),
    }
}

/// The most of `times` (sorted) within any span shorter than `span`.
fn most_within(times: &[Micros], span: Micros) -> u64 {
    let mut first = 0;
    let mut most = 0;
    for (i, &t) in times.iter().enumerate() {
        while times[first] + span <= t {
            first += 1;
        }
        most = most.max(i + 1 - first);
    }
    most as u64
}

/// The fleet's busiest window (the most of three runs of ten minutes) at every sync interval
/// offered, beside the bound for this traffic: `L` plus the most requests that arrive within
/// any `Δ + δ`. A gateway admits only while it believes fewer than `L` are in the window, and
/// what it does not know of is the others' admissions since its snapshot, taken less than
/// `Δ + δ` before; so the true count never passes `L` plus what arrived in that time. (The
/// worst case over every traffic, [`ratelab::theory::fleet_worst`], is `N·L` whenever
/// `Δ + δ` is under a window: every gateway filled by a burst between two syncs. The table
/// gives it.)
pub fn sweep(gateways: u32, seed: u64) -> Result<Plot, Error> {
    check(gateways, SYNC_INTERVALS_MS[0])?;
    sweep_plot(gateways, seed, &sweep_reports(gateways, seed)?)
}

/// [`sweep`]'s chart from its runs, `reports` ([`sweep_reports`]).
fn sweep_plot(gateways: u32, seed: u64, reports: &[LimiterReport]) -> Result<Plot, Error> {
    // The runs' arrivals, the same at every interval (routing and syncing do not move them).
    let s = scenario(gateways, "local", SWEEP_MINUTES, SWEEP_RUNS, seed)?;
    let arrivals: Vec<Vec<Micros>> = (0..SWEEP_RUNS)
        .map(|run| s.arrivals(run).collect())
        .collect();
    let (mut measured, mut bound) = (Vec::new(), Vec::new());
    for (&every_ms, r) in SYNC_INTERVALS_MS.iter().zip(reports) {
        let x = every_ms as f64 / 1_000.0;
        measured.push((x, r.busiest_window_max as f64));
        let span = every_ms * MS + DELAY;
        let most = arrivals
            .iter()
            .map(|times| most_within(times, span))
            .max()
            .unwrap_or(0);
        bound.push((x, (LIMIT + most) as f64));
    }
    Ok(Plot::Xy {
        title: format!(
            "The busiest minute of {gateways} syncing gateways against how often they sync"
        ),
        x_label: "sync interval (s)".into(),
        y_label: "requests in the busiest minute".into(),
        series: vec![
            Series {
                name: "measured (most of 3 runs)".into(),
                points: measured,
                color: BLUE,
                markers: true,
                line: true,
            },
            Series {
                name: "bound: L + the most arriving within Δ + δ".into(),
                points: bound,
                color: ORANGE,
                markers: true,
                line: true,
            },
        ],
        references: vec![(LIMIT as f64, "L".into())],
        y_range: None,
        x_range: None,
    })
}

/// Each coordination with `gateways` gateways: each on its own (`local`), syncing every
/// `every_ms`, and one central store: the busiest minute, its bound, the room instants and
/// the share served, over three runs of ten minutes.
pub fn table(gateways: u32, every_ms: u64, seed: u64) -> Result<Vec<Vec<String>>, Error> {
    check(gateways, every_ms)?;
    let synced = report(gateways, &sync_coord(every_ms), seed)?;
    Ok(table_and_summary(gateways, every_ms, seed, &synced)?.0)
}

/// [`table`], and what it says in a sentence: how far the synced fleet's busiest minute went
/// past `L`, how many of its admissions were room instants, and what a central store kept.
/// `synced` is the fleet's run syncing every `every_ms`.
fn table_and_summary(
    gateways: u32,
    every_ms: u64,
    seed: u64,
    synced: &LimiterReport,
) -> Result<(Vec<Vec<String>>, String), Error> {
    // Each coordination's busiest minute and room instants, in the rows' order.
    let mut numbers = Vec::new();
    let mut rows = vec![vec![
        "coordination".to_owned(),
        "busiest minute".to_owned(),
        "worst case, any traffic".to_owned(),
        "room instants".to_owned(),
        "served".to_owned(),
    ]];
    let (local, central) = (
        report(gateways, "local", seed)?,
        report(gateways, "central", seed)?,
    );
    for (r, shown) in [
        (&local, "each on its own".to_owned()),
        (synced, format!("sync every {}", interval(every_ms))),
        (&central, "one central store".to_owned()),
    ] {
        numbers.push((r.busiest_window_max, r.room_instants.unwrap_or(0)));
        rows.push(vec![
            shown,
            r.busiest_window_max.to_string(),
            r.bound.map_or_else(|| "none".to_owned(), |b| b.to_string()),
            r.room_instants.unwrap_or(0).to_string(),
            r.served_share
                .map_or_else(|| "-".to_owned(), |x| format!("{}%", fixed(100.0 * x, 1))),
        ]);
    }
    let ((synced, room), (central, _)) = (numbers[1], numbers[2]);
    let fleet = if gateways == 1 {
        "one gateway".to_owned()
    } else {
        format!("{gateways} gateways")
    };
    let past = match synced.checked_sub(LIMIT) {
        Some(0) | None => format!("{synced}, within L = {LIMIT}"),
        Some(over) => format!("{synced}, {over} past L = {LIMIT}"),
    };
    let summary = format!(
        "With {fleet} syncing every {}, the busiest minute held {past}, and {room} of the fleet's admissions were room instants; one central store kept {central}.",
        interval(every_ms)
    );
    Ok((rows, summary))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn points<'p>(plot: &'p Plot, name: &str) -> &'p [(f64, f64)] {
        let Plot::Xy { series, .. } = plot else {
            panic!("an XY chart")
        };
        &series
            .iter()
            .find(|s| s.name == name)
            .expect("the series")
            .points
    }

    #[test]
    fn one_gateway_believes_the_truth_and_never_finds_room_that_is_not_there() {
        let p = timeline(1, 60_000, 1).expect("runs");
        assert!(points(&p, "room instants").is_empty());
        assert_eq!(
            points(&p, "gateway 1 believed"),
            points(&p, "true count (every gateway)")
        );
    }

    #[test]
    fn gateways_syncing_once_a_minute_find_room_the_fleet_no_longer_has() {
        let p = timeline(8, 60_000, 1).expect("runs");
        let room = points(&p, "room instants");
        assert!(room.len() > 20, "{} room instants", room.len());
        // Each at a true count of L or more.
        assert!(room.iter().all(|&(_, y)| y >= LIMIT as f64), "{room:?}");
        let truth = points(&p, "true count (every gateway)");
        let most = truth.iter().map(|p| p.1).fold(0.0, f64::max);
        assert!(most > LIMIT as f64, "the true count passes L: {most}");
        // Gateway 1 decides about an eighth of the requests.
        let mine = points(&p, "gateway 1 believed").len() as f64;
        assert!(mine > truth.len() as f64 / 16.0 && mine < truth.len() as f64 / 4.0);
    }

    #[test]
    fn syncing_less_often_lets_more_through_and_never_past_the_bound() {
        let p = sweep(8, 1).expect("runs");
        let measured = points(&p, "measured (most of 3 runs)");
        let bound = points(&p, "bound: L + the most arriving within Δ + δ");
        assert_eq!(measured.len(), SYNC_INTERVALS_MS.len());
        assert_eq!(bound.len(), SYNC_INTERVALS_MS.len());
        for (m, b) in measured.iter().zip(bound) {
            assert!(m.1 <= b.1, "{m:?} past its bound {b:?}");
        }
        let first = measured[0].1;
        let last = measured[measured.len() - 1].1;
        assert!(first < last, "every 100 ms {first}, every minute {last}");
        assert!(
            last > LIMIT as f64,
            "a minute's sync lets the fleet past L: {last}"
        );
    }

    #[test]
    fn the_most_within_a_span_counts_a_span_shorter_than_it() {
        assert_eq!(most_within(&[], 10), 0);
        assert_eq!(most_within(&[0, 9, 10, 19, 20], 10), 2);
        assert_eq!(most_within(&[5, 5, 5, 14], 10), 4);
        assert_eq!(most_within(&[5, 5, 5, 15], 10), 3);
    }

    #[test]
    fn the_table_has_the_central_store_keep_l_and_lone_gateways_pass_it() {
        let t = table(4, 5_000, 1).expect("runs");
        assert_eq!(t.len(), 4);
        let busiest = |row: usize| t[row][1].parse::<u64>().expect("a count");
        assert!(busiest(1) > LIMIT, "local: {:?}", t[1]);
        assert!(busiest(3) <= LIMIT, "central: {:?}", t[3]);
        assert_eq!(t[3][3], "0", "a central store finds no room it lacks");
        assert!(
            busiest(2) <= busiest(1),
            "sync {:?}, local {:?}",
            t[2],
            t[1]
        );
        let f = figure(4, 5_000, 1).expect("runs");
        assert_eq!(f.table, t);
        assert_eq!(
            f.summary,
            format!(
                "With 4 gateways syncing every 5 s, the busiest minute held {}, {} past L = 100, and {} of the fleet's admissions were room instants; one central store kept {}.",
                t[2][1],
                busiest(2) - LIMIT,
                t[2][3],
                t[3][1]
            )
        );
        let one = figure(1, 5_000, 1).expect("runs");
        assert!(
            one.summary.starts_with(
                "With one gateway syncing every 5 s, the busiest minute held 100, within L = 100, and 0 of"
            ),
            "{}",
            one.summary
        );
    }

    #[test]
    fn a_setting_out_of_range_is_named_with_what_is_accepted() {
        let e = figure(17, 1_000, 1).expect_err("too many");
        assert!(
            e.to_string().contains("gateways") && e.to_string().contains("1 to 16"),
            "{e}"
        );
        let e = figure(4, 2_000, 1).expect_err("not offered");
        assert!(e.to_string().contains("sync interval"), "{e}");
        assert!(figure(0, 1_000, 1).is_err());
    }
}
