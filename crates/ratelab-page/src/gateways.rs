//! Beyond the essays, "Every gateway thought there was room" (issue 19): a limit of 100 a
//! minute enforced by `N` gateways, each a sliding log, while a client sends one and a half
//! times the limit. The reader chooses [`Setting`]: how many gateways, how requests reach them
//! (at random, in turn, or mostly to one), and how they coordinate (each on its own, each
//! with `1/N` of the limit, syncing counts every `Δ` with each sync reaching them 100 ms after
//! it was taken, or one central store). Between syncs a gateway knows only its own
//! admissions, so it finds room the fleet no longer has.
//!
//! The figure is three parts: the timeline (the backend's true trailing-window count at each
//! request, what the deciding gateway believed, gateway 1's belief as a line, and the room
//! instants), the sweep (the fleet's busiest window against the sync interval, with its
//! bound) and a table of the coordinations side by side; and [`views`], each gateway's view
//! at one instant (the section's playhead). Natively tested here; the page's tools module
//! computes it when the reader asks (the core's `fleet` feature, which this crate's `fleet`
//! turns on).

use ratelab::decimal::fixed;
use ratelab::limiter::Coord;
use ratelab::plot::{Plot, Series, BLUE, GREEN, ORANGE, PURPLE, RED, SKY};
use ratelab::sim::{gateway_trace, GatewayTrace, LimiterReport, Scenario};
use ratelab::spec::{FleetSpec, LimiterSpec, TrafficSpec};
use ratelab::time::{Micros, MINUTE, MS, SECOND};
use ratelab::Error;
use std::ops::RangeInclusive;

/// The figure's limit `L`, a minute's window.
pub const LIMIT: u64 = 100;
/// How many gateways the reader can choose.
pub const GATEWAYS: RangeInclusive<u32> = 1..=16;
/// The routes offered, by the page's name.
pub const GATEWAY_ROUTES: [&str; 3] = ["random", "round-robin", "hot"];
/// The coordinations offered, by the page's name.
pub const GATEWAY_COORDS: [&str; 4] = ["local", "split", "sync", "central"];
/// The sync intervals offered, as the page's menu names them.
pub const GATEWAY_SYNCS: [&str; 7] = ["100ms", "500ms", "1s", "5s", "15s", "30s", "1min"];
/// Those intervals in milliseconds.
const GATEWAY_SYNCS_MS: [u64; 7] = [100, 500, 1_000, 5_000, 15_000, 30_000, 60_000];
/// The sync intervals offered, in milliseconds (the sweep runs each).
pub const SYNC_INTERVALS_MS: [u64; GATEWAY_SYNCS.len()] = GATEWAY_SYNCS_MS;
/// The coordinations offered, by the page's (and a link's) name.
pub const COORDINATIONS: [&str; 4] = GATEWAY_COORDS;

/// What the reader chose: how many gateways, how requests reach them, how they coordinate,
/// and how often they sync (what `sync` uses; the sweep runs every interval).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setting {
    /// From 1 to 16.
    pub gateways: u32,
    /// One of [`GATEWAY_ROUTES`].
    pub route: &'static str,
    /// One of [`COORDINATIONS`].
    pub coord: &'static str,
    /// One of [`SYNC_INTERVALS_MS`].
    pub every_ms: u64,
}

impl Setting {
    /// The setting, checked: a value out of range is named with what is accepted.
    pub fn new(gateways: u32, route: &str, coord: &str, every_ms: u64) -> Result<Self, Error> {
        let setting = Setting::lab(gateways, route, coord, every_ms)?;
        if setting.coord == "split" && !splits(gateways) {
            let ways: Vec<String> = GATEWAYS
                .filter(|&n| splits(n))
                .map(|n| n.to_string())
                .collect();
            return Err(Error::Invalid {
                what: "number of gateways for a split limit".into(),
                got: gateways.to_string(),
                accepted: format!("one that divides the limit {LIMIT}: {}", ways.join(", ")),
            });
        }
        Ok(setting)
    }

    /// The setting for any limit (the lab's): checked as [`Setting::new`] checks it, but for
    /// a split, which the scenario checks against its own limit.
    pub fn lab(gateways: u32, route: &str, coord: &str, every_ms: u64) -> Result<Self, Error> {
        check(gateways, every_ms)?;
        let invalid = |what: &str, got: &str, accepted: String| Error::Invalid {
            what: what.into(),
            got: got.into(),
            accepted,
        };
        let route = GATEWAY_ROUTES
            .into_iter()
            .find(|&r| r == route)
            .ok_or_else(|| invalid("route", route, "random, round-robin or hot".into()))?;
        let coord = COORDINATIONS
            .into_iter()
            .find(|&c| c == coord)
            .ok_or_else(|| {
                invalid(
                    "coordination",
                    coord,
                    "local, split, sync or central".into(),
                )
            })?;
        Ok(Setting {
            gateways,
            route,
            coord,
            every_ms,
        })
    }

    /// The section's opening setting: 8 gateways at random, syncing every 5 s.
    pub fn opening() -> Self {
        Setting {
            gateways: 8,
            route: "random",
            coord: "sync",
            every_ms: 5_000,
        }
    }

    /// `--route`: `hot` sends 70% to gateway 1.
    pub fn route_spec(&self) -> &'static str {
        match self.route {
            "hot" => "skewed:hot=0.7",
            "round-robin" => "round-robin",
            _ => "random",
        }
    }

    /// `--coord`.
    pub fn coord_spec(&self) -> String {
        match self.coord {
            "sync" => sync_coord(self.every_ms),
            other => other.into(),
        }
    }

    /// The same fleet coordinated by `coord` (a `--coord` text).
    fn scenario(&self, coord: &str, minutes: u64, runs: u32, seed: u64) -> Result<Scenario, Error> {
        scenario(self.gateways, self.route_spec(), coord, minutes, runs, seed)
    }

    /// "8 gateways syncing every 5 s", "one gateway on its own", …
    pub fn fleet_words(&self) -> String {
        let fleet = if self.gateways == 1 {
            "one gateway".to_owned()
        } else {
            format!("{} gateways", self.gateways)
        };
        let how = match self.coord {
            "local" if self.gateways == 1 => "on its own".to_owned(),
            "local" => "each on its own".to_owned(),
            "split" if self.gateways == 1 => "with the whole limit".to_owned(),
            "split" => format!("each with 1/{} of the limit", self.gateways),
            "central" if self.gateways == 1 => "asking a central store".to_owned(),
            "central" => "sharing one central store".to_owned(),
            _ => format!("syncing every {}", interval(self.every_ms)),
        };
        format!("{fleet} {how}")
    }
}
/// The client: one and a half times the limit, steady.
const TRAFFIC: &str = "steady:load=1.5";
/// How long the timeline runs.
const TIMELINE_MINUTES: u64 = 5;
/// The sweep's and the table's runs: three of ten minutes.
const SWEEP_RUNS: u32 = 3;
const SWEEP_MINUTES: u64 = 10;

/// Whether `L` splits into `gateways` equal shares (what `--coord split` asks).
pub fn splits(gateways: u32) -> bool {
    gateways > 0 && LIMIT % u64::from(gateways) == 0
}

/// The figure at one setting.
#[derive(Debug, Clone, PartialEq)]
pub struct GatewaysFigure {
    /// The true count, the gateways' beliefs and the room instants, over time, with the
    /// playhead.
    pub timeline: Plot,
    /// The busiest window against the sync interval, with the bound.
    pub sweep: Plot,
    /// Each coordination at this setting: header, then rows.
    pub table: Vec<Vec<String>>,
    /// What the table says, in a sentence.
    pub summary: String,
    /// Each gateway's view at the timeline's playhead (where the true count was highest).
    pub views: Views,
}

/// How long a sync takes to reach the gateways.
const DELAY: Micros = 100 * MS;

/// `--coord` for a sync every `every_ms` with the figure's 100 ms delay.
pub fn sync_coord(every_ms: u64) -> String {
    format!("sync:every={every_ms}ms,delay=100ms")
}

/// The scenario of `gateways` gateways routed by `route` and coordinated by `coord` (a
/// `--route` and a `--coord` text).
pub fn scenario(
    gateways: u32,
    route: &str,
    coord: &str,
    minutes: u64,
    runs: u32,
    seed: u64,
) -> Result<Scenario, Error> {
    let mut spec = LimiterSpec::parse("sliding-log")?;
    spec.fleet = Some(FleetSpec::parse(
        &gateways.to_string(),
        Some(route),
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

/// Each gateway's view at one instant of the timeline (the section's playhead).
#[derive(Debug, Clone, PartialEq)]
pub struct Views {
    /// The instant, in milliseconds from the start.
    pub at_ms: u64,
    /// The backend's true count of the trailing window, just before that instant.
    pub truth: u64,
    /// What each gateway believed that count was, gateway 1 first.
    pub believed: Vec<u64>,
    /// Each gateway admits while it believes fewer than this (`L`, or `L/N` when split).
    pub limit: u64,
    /// What they say, in a sentence.
    pub sentence: String,
}

/// The figure for `setting`, its playhead at `at_ms` or, if `None`, where the true count was
/// highest (the next tenth of a second after that decision: the playhead's steps).
pub fn figure(setting: &Setting, seed: u64, at_ms: Option<u64>) -> Result<GatewaysFigure, Error> {
    check(setting.gateways, setting.every_ms)?;
    if let Some(at) = at_ms {
        check_instant(at)?;
    }
    let reports = reports(setting, seed, &SYNC_INTERVALS_MS)?;
    // The synced row of the table is the sweep's run at this interval.
    let at = SYNC_INTERVALS_MS
        .iter()
        .position(|&ms| ms == setting.every_ms);
    let synced = at
        .and_then(|i| reports.synced.get(i))
        .ok_or_else(|| Error::Invalid {
            what: "sync interval".into(),
            got: format!("{} ms", setting.every_ms),
            accepted: "one the sweep runs".into(),
        })?;
    let (table, summary) = table_and_summary(setting, &reports, synced);
    let (s, trace) = run_trace(setting, seed)?;
    let busiest = || {
        (0..trace.times.len())
            .max_by_key(|&i| (trace.global[i], std::cmp::Reverse(i)))
            .map_or(0, |i| trace.times[i].div_ceil(100 * MS) * 100)
            .min(TIMELINE_MINUTES * MINUTE / MS)
    };
    let (timeline, views) = at_instant(setting, &s, &trace, at_ms.unwrap_or_else(busiest))?;
    Ok(GatewaysFigure {
        timeline,
        sweep: sweep_plot(setting, seed, &reports.synced)?,
        table,
        summary,
        views,
    })
}

/// The timeline with its playhead at `at_ms`, and each gateway's view there: what the page
/// redraws as the reader moves the playhead (five minutes of one fleet, run again: cheap).
pub fn playhead(setting: &Setting, seed: u64, at_ms: u64) -> Result<(Plot, Views), Error> {
    check(setting.gateways, setting.every_ms)?;
    check_instant(at_ms)?;
    let (s, trace) = run_trace(setting, seed)?;
    at_instant(setting, &s, &trace, at_ms)
}

/// An instant of the timeline, in milliseconds: from 0 to its five minutes.
fn check_instant(at_ms: u64) -> Result<(), Error> {
    let most = TIMELINE_MINUTES * MINUTE / MS;
    if at_ms > most {
        return Err(Error::Invalid {
            what: "instant".into(),
            got: format!("{at_ms} ms"),
            accepted: format!("0 to {most} ms"),
        });
    }
    Ok(())
}

/// The timeline's run: five minutes of the fleet, decision by decision.
fn run_trace(setting: &Setting, seed: u64) -> Result<(Scenario, GatewayTrace), Error> {
    let s = setting.scenario(&setting.coord_spec(), TIMELINE_MINUTES, 1, seed)?;
    let trace = gateway_trace(&s, 0, 0)?;
    Ok((s, trace))
}

fn at_instant(
    setting: &Setting,
    s: &Scenario,
    trace: &GatewayTrace,
    at_ms: u64,
) -> Result<(Plot, Views), Error> {
    let views = views_of(setting, s, trace, at_ms)?;
    Ok((timeline_of(setting, trace, Some(at_ms)), views))
}

/// Each gateway's view at `at_ms` of `trace` (run by `s`).
fn views_of(
    setting: &Setting,
    s: &Scenario,
    trace: &GatewayTrace,
    at_ms: u64,
) -> Result<Views, Error> {
    let fleet = s
        .limiters
        .first()
        .and_then(|l| l.fleet)
        .ok_or_else(|| Error::Invalid {
            what: "gateways".into(),
            got: setting.coord.into(),
            accepted: "a fleet".into(),
        })?;
    let n = setting.gateways as usize;
    let (truth, believed) = trace.views_at(fleet.coord, s.window, n, at_ms * MS);
    let limit = match fleet.coord {
        Coord::Split => LIMIT / u64::from(setting.gateways),
        _ => LIMIT,
    };
    let sentence = views_sentence(at_ms, truth, &believed, limit);
    Ok(Views {
        at_ms,
        truth,
        believed,
        limit,
        sentence,
    })
}

/// "m:ss" of an instant in milliseconds (tenths shown when not whole).
pub fn clock(at_ms: u64) -> String {
    let (m, s, tenths) = (at_ms / 60_000, at_ms / 1_000 % 60, at_ms / 100 % 10);
    if at_ms % 1_000 == 0 {
        format!("{m}:{s:02}")
    } else {
        format!("{m}:{s:02}.{tenths}")
    }
}

fn views_sentence(at_ms: u64, truth: u64, believed: &[u64], limit: u64) -> String {
    let (low, high) = (
        believed.iter().copied().min().unwrap_or(0),
        believed.iter().copied().max().unwrap_or(0),
    );
    let open = believed.iter().filter(|&&b| b < limit).count();
    let n = believed.len();
    let beliefs = match n {
        1 => format!("the gateway believed {low}"),
        _ if low == high => format!("every gateway believed {low}"),
        _ => format!("the gateways believed {low} to {high}"),
    };
    let admit = match (n, open) {
        (1, 1) => "so it would admit the next request".to_owned(),
        (1, _) => "so it would refuse the next request".to_owned(),
        (_, 0) => "so none would admit the next request".to_owned(),
        _ if open == n => format!("so all {n} would admit the next request sent to them"),
        _ => format!("so {open} of {n} would admit the next request sent to them"),
    };
    let rule = format!("(each admits while it believes fewer than {limit})");
    let room = if truth >= LIMIT && open > 0 {
        format!(
            ": the minute already holds L = {LIMIT} or more, so each such admission is a room instant."
        )
    } else {
        ".".to_owned()
    };
    format!(
        "At {}, the backend's trailing minute held {truth}; {beliefs}, {admit} {rule}{room}",
        clock(at_ms)
    )
}

/// The fleet coordinated by `coord` over the sweep's and the table's runs.
/// The fleet coordinated by `coord` alone (the tests hold [`reports`] to it).
#[cfg(test)]
fn report(setting: &Setting, coord: &str, seed: u64) -> Result<LimiterReport, Error> {
    let s = setting.scenario(coord, SWEEP_MINUTES, SWEEP_RUNS, seed)?;
    ratelab::simulate(&s)?
        .results
        .into_iter()
        .next()
        .ok_or_else(|| no_result(coord))
}

fn no_result(coord: &str) -> Error {
    Error::Invalid {
        what: "gateways".into(),
        got: coord.into(),
        accepted: "a fleet that runs".into(),
    }
}

/// The fleet under each coordination the figure shows: syncing at each interval of
/// `intervals` (ms), each on its own, each with `1/N` (when `N` divides `L`) and one central
/// store.
struct Reports {
    synced: Vec<LimiterReport>,
    local: LimiterReport,
    split: Option<LimiterReport>,
    central: LimiterReport,
}

/// [`Reports`], run as one simulation of the same arrivals: each fleet routes from its own
/// copy of the run's routing stream, so each report is the one its own simulation gives (a
/// test holds them to it), and the arrivals are made once rather than once a report.
fn reports(setting: &Setting, seed: u64, intervals: &[u64]) -> Result<Reports, Error> {
    let mut coords: Vec<String> = intervals.iter().map(|&ms| sync_coord(ms)).collect();
    let split = splits(setting.gateways);
    coords.push("local".into());
    if split {
        coords.push("split".into());
    }
    coords.push("central".into());
    let mut s = setting.scenario("local", SWEEP_MINUTES, SWEEP_RUNS, seed)?;
    let one = s.limiters.remove(0);
    let n = setting.gateways.to_string();
    for coord in &coords {
        let mut spec = one.clone();
        spec.fleet = Some(FleetSpec::parse(
            &n,
            Some(setting.route_spec()),
            Some(coord),
        )?);
        s.limiters.push(spec);
    }
    s.validate()?;
    let mut results = ratelab::simulate(&s)?.results.into_iter();
    let mut next = |coord: &str| results.next().ok_or_else(|| no_result(coord));
    let synced = intervals
        .iter()
        .map(|_| next("sync"))
        .collect::<Result<Vec<_>, _>>()?;
    let local = next("local")?;
    let split = if split { Some(next("split")?) } else { None };
    Ok(Reports {
        synced,
        local,
        split,
        central: next("central")?,
    })
}

/// Five minutes of the fleet: at each request, the backend's true count of the trailing
/// window before it was decided, and the count the gateway deciding it believed; gateway 1's
/// beliefs as a line; each room instant, at the true count (at `L` or above, where the
/// gateway's belief was under it); and the playhead at `at_ms`, if any.
pub fn timeline(setting: &Setting, seed: u64, at_ms: Option<u64>) -> Result<Plot, Error> {
    check(setting.gateways, setting.every_ms)?;
    let (_, trace) = run_trace(setting, seed)?;
    Ok(timeline_of(setting, &trace, at_ms))
}

fn timeline_of(setting: &Setting, g: &GatewayTrace, at_ms: Option<u64>) -> Plot {
    let (mut truth, mut each, mut first, mut room) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for i in 0..g.times.len() {
        let t = seconds(g.times[i]);
        truth.push((t, g.global[i] as f64));
        each.push((t, g.believed[i] as f64));
        if g.gateway[i] == 0 {
            first.push((t, g.believed[i] as f64));
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
    let top = truth.iter().map(|p| p.1).fold(LIMIT as f64, f64::max);
    let mut series = vec![
        // Drawn in this order: the beliefs' dots under the true count's line, the room
        // instants over it.
        series("believed by the gateway deciding", each, SKY, true, false),
        series("gateway 1 believed", first, GREEN, true, true),
        series("true count (every gateway)", truth, BLUE, false, true),
        series("room instants", room, RED, true, false),
    ];
    if let Some(at) = at_ms {
        let x = at as f64 / 1_000.0;
        series.push(Series {
            name: format!("instant shown below, {}", clock(at)),
            points: vec![(x, 0.0), (x, top)],
            color: PURPLE,
            markers: false,
            line: true,
        });
    }
    let mut references = vec![(LIMIT as f64, "L".into())];
    if setting.coord == "split" && setting.gateways > 1 {
        references.push(((LIMIT / u64::from(setting.gateways)) as f64, "L/N".into()));
    }
    let words = setting.fleet_words();
    let mut title = words[..1].to_uppercase();
    title.push_str(&words[1..]);
    Plot::Xy {
        title: format!("{title}: the true count and the beliefs, one run of 5 min"),
        x_label: "seconds".into(),
        y_label: "requests in the minute".into(),
        series,
        references,
        y_range: None,
        x_range: Some((0.0, (TIMELINE_MINUTES * 60) as f64)),
    }
}

/// The interval of the menu's text (`5s`, one of [`GATEWAY_SYNCS`]), in milliseconds.
pub fn sync_ms(text: &str) -> Result<u64, Error> {
    GATEWAY_SYNCS
        .iter()
        .position(|s| *s == text)
        .map(|i| GATEWAY_SYNCS_MS[i])
        .ok_or_else(|| Error::Invalid {
            what: "sync interval".into(),
            got: text.into(),
            accepted: GATEWAY_SYNCS.join(", "),
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
/// gives it.) The setting's own coordination and interval do not enter: the sweep syncs.
pub fn sweep(setting: &Setting, seed: u64) -> Result<Plot, Error> {
    check(setting.gateways, setting.every_ms)?;
    sweep_plot(
        setting,
        seed,
        &reports(setting, seed, &SYNC_INTERVALS_MS)?.synced,
    )
}

/// [`sweep`]'s chart from its runs at each interval, `reports`.
fn sweep_plot(setting: &Setting, seed: u64, reports: &[LimiterReport]) -> Result<Plot, Error> {
    // The runs' arrivals, the same at every interval (routing and syncing do not move them).
    let s = setting.scenario("local", SWEEP_MINUTES, SWEEP_RUNS, seed)?;
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
    let gateways = setting.gateways;
    Ok(Plot::Xy {
        title: format!(
            "The busiest minute of {gateways} syncing gateway{} against how often they sync",
            if gateways == 1 { "" } else { "s" }
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

/// Each coordination of this fleet side by side: each on its own (`local`), each with `1/N`
/// (`split`), syncing every `every_ms`, and one central store: the busiest minute, the worst
/// case over any traffic, the room instants and the share served, over three runs of ten
/// minutes.
pub fn table(setting: &Setting, seed: u64) -> Result<Vec<Vec<String>>, Error> {
    check(setting.gateways, setting.every_ms)?;
    let reports = reports(setting, seed, &[setting.every_ms])?;
    Ok(table_and_summary(setting, &reports, &reports.synced[0]).0)
}

/// [`table`], and what it says of the setting's coordination in a sentence: how far its
/// busiest minute went past `L`, how many of its admissions were room instants, and what a
/// central store kept (or, for `split`, served). `synced` is the fleet's run syncing every
/// `every_ms`.
fn table_and_summary(
    setting: &Setting,
    reports: &Reports,
    synced: &LimiterReport,
) -> (Vec<Vec<String>>, String) {
    let mut rows = vec![vec![
        "coordination".to_owned(),
        "busiest minute".to_owned(),
        "worst case, any traffic".to_owned(),
        "room instants".to_owned(),
        "served".to_owned(),
    ]];
    let n = setting.gateways;
    // A limit splits only into equal shares: with a number of gateways that does not divide
    // it, the split row says so.
    let (local, split, central) = (&reports.local, &reports.split, &reports.central);
    let served = |r: &LimiterReport| {
        r.served_share
            .map_or_else(|| "-".to_owned(), |x| format!("{}%", fixed(100.0 * x, 1)))
    };
    let split_name = if n == 1 {
        "the whole limit".to_owned()
    } else {
        format!("each with 1/{n} of the limit")
    };
    for (r, shown) in [
        (Some(local), "each on its own".to_owned()),
        (split.as_ref(), split_name),
        (
            Some(synced),
            format!("sync every {}", interval(setting.every_ms)),
        ),
        (Some(central), "one central store".to_owned()),
    ] {
        rows.push(match r {
            Some(r) => vec![
                shown,
                r.busiest_window_max.to_string(),
                r.bound.map_or_else(|| "none".to_owned(), |b| b.to_string()),
                r.room_instants.unwrap_or(0).to_string(),
                served(r),
            ],
            None => {
                let mut row = vec![shown, format!("{n} does not divide {LIMIT}")];
                row.extend(["-".to_owned(), "-".to_owned(), "-".to_owned()]);
                row
            }
        });
    }
    let chosen = match (setting.coord, split) {
        ("local", _) => local,
        ("split", Some(split)) => split,
        ("central", _) => central,
        _ => synced,
    };
    let (busiest, room) = (chosen.busiest_window_max, chosen.room_instants.unwrap_or(0));
    let past = match busiest.checked_sub(LIMIT) {
        Some(0) | None => format!("{busiest}, within L = {LIMIT}"),
        Some(over) => format!("{busiest}, {over} past L = {LIMIT}"),
    };
    let after = match setting.coord {
        "central" => "the store decides every request, so none can be.".to_owned(),
        "split" => format!(
            "keeping a share each, the fleet served {} where one central store served {}.",
            served(chosen),
            served(central)
        ),
        _ => format!("one central store kept {}.", central.busiest_window_max),
    };
    let summary = format!(
        "With {}, the busiest minute held {past}, and {room} of the fleet's admissions were room instants; {after}",
        setting.fleet_words()
    );
    (rows, summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_coordinations_run_together_are_each_run_alone() {
        for (n, route) in [(4, "random"), (3, "hot"), (16, "round-robin")] {
            let setting = Setting::new(n, route, "sync", 5_000).expect("valid");
            let together = reports(&setting, 7, &SYNC_INTERVALS_MS).expect("runs");
            for (&ms, r) in SYNC_INTERVALS_MS.iter().zip(&together.synced) {
                assert_eq!(
                    *r,
                    report(&setting, &sync_coord(ms), 7).expect("runs"),
                    "{n} {route} {ms}"
                );
            }
            assert_eq!(together.local, report(&setting, "local", 7).expect("runs"));
            assert_eq!(
                together.central,
                report(&setting, "central", 7).expect("runs")
            );
            assert_eq!(
                together.split,
                splits(n).then(|| report(&setting, "split", 7).expect("runs"))
            );
        }
    }

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

    fn setting(gateways: u32, coord: &'static str, every_ms: u64) -> Setting {
        Setting::new(gateways, "random", coord, every_ms).expect("a setting offered")
    }

    #[test]
    fn one_gateway_believes_the_truth_and_never_finds_room_that_is_not_there() {
        let p = timeline(&setting(1, "sync", 60_000), 1, None).expect("runs");
        assert!(points(&p, "room instants").is_empty());
        assert_eq!(
            points(&p, "gateway 1 believed"),
            points(&p, "true count (every gateway)")
        );
    }

    #[test]
    fn gateways_syncing_once_a_minute_find_room_the_fleet_no_longer_has() {
        let p = timeline(&setting(8, "sync", 60_000), 1, None).expect("runs");
        let room = points(&p, "room instants");
        assert!(room.len() > 20, "{} room instants", room.len());
        // Each at a true count of L or more.
        assert!(room.iter().all(|&(_, y)| y >= LIMIT as f64), "{room:?}");
        let truth = points(&p, "true count (every gateway)");
        let most = truth.iter().map(|p| p.1).fold(0.0, f64::max);
        assert!(most > LIMIT as f64, "the true count passes L: {most}");
        // Gateway 1 decides about an eighth of the requests; every request's gateway believed
        // something, and at every room instant it believed less than L.
        let mine = points(&p, "gateway 1 believed").len() as f64;
        assert!(mine > truth.len() as f64 / 16.0 && mine < truth.len() as f64 / 4.0);
        let each = points(&p, "believed by the gateway deciding");
        assert_eq!(each.len(), truth.len());
        for r in room {
            let i = truth
                .iter()
                .position(|t| t == r)
                .expect("a request's point");
            assert!(
                each[i].1 < LIMIT as f64,
                "room at {r:?} believed {:?}",
                each[i]
            );
        }
    }

    #[test]
    fn syncing_less_often_lets_more_through_and_never_past_the_bound() {
        let p = sweep(&setting(8, "sync", 1_000), 1).expect("runs");
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
        // The sweep syncs whatever the setting's own coordination.
        assert_eq!(sweep(&setting(8, "local", 1_000), 1).expect("runs"), p);
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
        let t = table(&setting(4, "sync", 5_000), 1).expect("runs");
        assert_eq!(t.len(), 5);
        let busiest = |row: usize| t[row][1].parse::<u64>().expect("a count");
        let served = |row: usize| {
            t[row][4]
                .trim_end_matches('%')
                .parse::<f64>()
                .expect("a share")
        };
        assert!(busiest(1) > LIMIT, "local: {:?}", t[1]);
        assert!(busiest(2) <= LIMIT, "split: {:?}", t[2]);
        assert!(busiest(4) <= LIMIT, "central: {:?}", t[4]);
        assert_eq!(t[4][3], "0", "a central store finds no room it lacks");
        assert_eq!(
            t[2][3], "0",
            "shares that add up to L find no room they lack"
        );
        assert!(
            served(2) < served(4),
            "split {:?} serves less than central {:?}",
            t[2],
            t[4]
        );
        assert!(
            busiest(3) <= busiest(1),
            "sync {:?}, local {:?}",
            t[3],
            t[1]
        );
        let f = figure(&setting(4, "sync", 5_000), 1, None).expect("runs");
        assert_eq!(f.table, t);
        assert_eq!(
            f.summary,
            format!(
                "With 4 gateways syncing every 5 s, the busiest minute held {}, {} past L = 100, and {} of the fleet's admissions were room instants; one central store kept {}.",
                t[3][1],
                busiest(3) - LIMIT,
                t[3][3],
                t[4][1]
            )
        );
        // The sentence is of the coordination chosen; the table is the same.
        let local = figure(&setting(4, "local", 5_000), 1, None).expect("runs");
        assert_eq!(local.table, t);
        assert!(
            local.summary.starts_with(&format!(
                "With 4 gateways each on its own, the busiest minute held {}, {} past L = 100, and {} of",
                t[1][1],
                busiest(1) - LIMIT,
                t[1][3]
            )),
            "{}",
            local.summary
        );
        let split = figure(&setting(4, "split", 5_000), 1, None).expect("runs");
        assert!(
            split.summary.ends_with(&format!(
                "keeping a share each, the fleet served {} where one central store served {}.",
                t[2][4], t[4][4]
            )),
            "{}",
            split.summary
        );
        let one = figure(&setting(1, "sync", 5_000), 1, None).expect("runs");
        assert!(
            one.summary.starts_with(
                "With one gateway syncing every 5 s, the busiest minute held 100, within L = 100, and 0 of"
            ),
            "{}",
            one.summary
        );
    }

    #[test]
    fn the_playhead_shows_each_gateways_view_and_says_what_it_means() {
        // Syncing once a minute, the playhead opens where the true count was highest: past L,
        // with gateways that still believe there is room.
        let f = figure(&setting(8, "sync", 60_000), 1, None).expect("runs");
        let v = &f.views;
        assert_eq!(v.believed.len(), 8);
        assert!(v.truth > LIMIT, "{v:?}");
        let open = v.believed.iter().filter(|&&b| b < LIMIT).count();
        assert!(open > 0, "{v:?}");
        let (low, high) = (
            v.believed.iter().min().expect("gateways"),
            v.believed.iter().max().expect("gateways"),
        );
        assert!(
            v.sentence.contains(&format!(
                "the backend's trailing minute held {}; the gateways believed {low} to {high}, so {}",
                v.truth,
                if open == 8 { "all 8 would admit".to_owned() } else { format!("{open} of 8 would admit") }
            )),
            "{}",
            v.sentence
        );
        assert!(
            v.sentence
                .ends_with("so each such admission is a room instant."),
            "{}",
            v.sentence
        );
        assert!(
            v.sentence.starts_with(&format!("At {},", clock(v.at_ms))),
            "{}",
            v.sentence
        );
        // The timeline marks that instant.
        let mark = format!("instant shown below, {}", clock(v.at_ms));
        let line = points(&f.timeline, &mark);
        assert_eq!(line[0].0, v.at_ms as f64 / 1_000.0);
        // Moving the playhead gives the views there, as the figure would.
        let (p, again) = playhead(&setting(8, "sync", 60_000), 1, v.at_ms).expect("runs");
        assert_eq!((&p, &again), (&f.timeline, v));
        // A figure asked for at an instant (the reader's, kept as the dials move) is there.
        let kept = figure(&setting(8, "local", 60_000), 1, Some(61_000)).expect("runs");
        assert_eq!(kept.views.at_ms, 61_000);
        assert_eq!(
            (kept.timeline, kept.views),
            playhead(&setting(8, "local", 60_000), 1, 61_000).expect("runs")
        );
        assert!(figure(&setting(8, "local", 60_000), 1, Some(300_001)).is_err());
        // Each on its own: the beliefs are each gateway's own share of the true count.
        let (_, local) = playhead(&setting(8, "local", 5_000), 1, 150_000).expect("runs");
        assert_eq!(local.believed.iter().sum::<u64>(), local.truth, "{local:?}");
        assert!(
            local.sentence.starts_with("At 2:30, "),
            "{}",
            local.sentence
        );
        // One store: every gateway believes the truth.
        let (_, central) = playhead(&setting(8, "central", 5_000), 1, 150_000).expect("runs");
        assert!(
            central.believed.iter().all(|&b| b == central.truth),
            "{central:?}"
        );
        assert!(central.truth <= LIMIT, "{central:?}");
        // Split: each gateway's limit is its share.
        let (_, split) = playhead(&setting(4, "split", 5_000), 1, 150_000).expect("runs");
        assert_eq!(split.limit, LIMIT / 4);
        assert!(
            split.sentence.contains("fewer than 25)"),
            "{}",
            split.sentence
        );
        // At the start nothing is counted.
        let (_, start) = playhead(&setting(3, "sync", 1_000), 1, 0).expect("runs");
        assert_eq!((start.truth, start.believed.clone()), (0, vec![0, 0, 0]));
        assert_eq!(
            start.sentence,
            "At 0:00, the backend's trailing minute held 0; every gateway believed 0, so all 3 would admit the next request sent to them (each admits while it believes fewer than 100)."
        );
        assert!(playhead(&setting(3, "sync", 1_000), 1, 300_001).is_err());
    }

    #[test]
    fn a_menu_sync_interval_is_its_milliseconds() {
        assert_eq!(sync_ms("5s").expect("offered"), 5_000);
        assert_eq!(sync_ms("1min").expect("offered"), 60_000);
        assert_eq!(
            GATEWAY_SYNCS.map(|t| sync_ms(t).expect("offered")),
            SYNC_INTERVALS_MS
        );
        assert!(sync_ms("2s").is_err());
    }

    #[test]
    fn the_clock_reads_minutes_seconds_and_tenths() {
        assert_eq!(clock(0), "0:00");
        assert_eq!(clock(61_000), "1:01");
        assert_eq!(clock(299_900), "4:59.9");
    }

    #[test]
    fn a_setting_out_of_range_is_named_with_what_is_accepted() {
        let e = Setting::new(17, "random", "sync", 1_000).expect_err("too many");
        assert!(
            e.to_string().contains("gateways") && e.to_string().contains("1 to 16"),
            "{e}"
        );
        let e = Setting::new(4, "random", "sync", 2_000).expect_err("not offered");
        assert!(e.to_string().contains("sync interval"), "{e}");
        assert!(Setting::new(0, "random", "sync", 1_000).is_err());
        let e = Setting::new(4, "sideways", "sync", 1_000).expect_err("no such route");
        assert!(e.to_string().contains("random, round-robin or hot"), "{e}");
        let e = Setting::new(4, "random", "gossip", 1_000).expect_err("no such coordination");
        assert!(
            e.to_string().contains("local, split, sync or central"),
            "{e}"
        );
        // A limit splits into equal shares only: 100 over 8 gateways is refused, and the
        // table of 8 syncing gateways says so in the split row.
        let e = Setting::new(8, "random", "split", 1_000).expect_err("100 / 8");
        assert!(
            e.to_string()
                .contains("divides the limit 100: 1, 2, 4, 5, 10"),
            "{e}"
        );
        let t = table(&setting(8, "sync", 1_000), 1).expect("runs");
        assert_eq!(
            t[2][..2],
            ["each with 1/8 of the limit", "8 does not divide 100"]
        );
        let opening = Setting::opening();
        assert_eq!(
            Setting::new(8, "random", "sync", 5_000).expect("offered"),
            opening
        );
        assert_eq!(opening.route_spec(), "random");
        assert_eq!(
            Setting::new(2, "hot", "central", 100)
                .expect("offered")
                .route_spec(),
            "skewed:hot=0.7"
        );
    }
}
