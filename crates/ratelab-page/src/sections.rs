//! The essay's section figures: an experiment each, run on the reader's settings, with the
//! chart and table the page shows. [`Section`] names them; [`Section::figure`] runs one (in
//! the page's section worker) and returns its [`Figure`], whose chart the page's thread only
//! draws. The study's experiments (the counter's flood offsets, the honest client, the retry
//! lockout, the split limit) are the core's own definitions (`ratelab::study`), run here at
//! the sections' small sizes.

use crate::controls::Jitter;
use crate::controls::{Attack, Controls, Named, Traffic, CAPACITY_FACTOR};
use crate::page::{self, CompareRow};
use ratelab::decimal::fixed;
use ratelab::limiter::LeakyMode;
use ratelab::plot::{series_color, Plot, Series};
use ratelab::sim::{ClientStats, Scenario};
use ratelab::spec::{LimiterKind, LimiterSpec, Replay, TrafficSpec};
use ratelab::study::{self, busiest, run_scenario, served, Size};
use ratelab::time::{Micros, MINUTE, SECOND};
use ratelab::Error;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The section figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Section {
    /// A token bucket's worst window against its capacity.
    Ceiling,
    /// The sliding-window counter's worst window against where a flood starts.
    SwcOffsets,
    /// The six limiters against an honest client.
    Honest,
    /// A retrying client locked out by a log that records rejects.
    Lockout,
    /// The limit split across servers.
    Split,
    /// The boundary burst against each limiter (a table only).
    BoundaryTable,
    /// A fleet of clients honouring `Retry-After`, herded to a fixed window's boundary, and
    /// jitter spreading them.
    Herding,
    /// The same fleet as a mix, where only some clients jitter (a table only).
    HerdingMix,
}

impl Named for Section {
    const ALL: &'static [Self] = &[
        Section::Ceiling,
        Section::SwcOffsets,
        Section::Honest,
        Section::Lockout,
        Section::Split,
        Section::BoundaryTable,
        Section::Herding,
        Section::HerdingMix,
    ];
    fn name(self) -> &'static str {
        match self {
            Section::Ceiling => "ceiling",
            Section::SwcOffsets => "swc-offsets",
            Section::Honest => "honest",
            Section::Lockout => "lockout",
            Section::Split => "split",
            Section::BoundaryTable => "boundary-table",
            Section::Herding => "herding",
            Section::HerdingMix => "herding-mix",
        }
    }
}

/// The settings a section figure takes (each uses some of them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct SectionParams {
    /// `L`.
    pub limit: u64,
    /// The bucket-ceiling dial.
    pub capacity: u64,
    /// The honest client's traffic.
    #[serde(with = "crate::controls::named")]
    pub traffic: Traffic,
    /// Its load, as a share of the limit.
    pub load: f64,
    /// The seed.
    pub seed: u64,
    /// The herding figure's jitter, shown against none.
    #[serde(with = "crate::controls::named")]
    pub jitter: Jitter,
}

impl Default for SectionParams {
    fn default() -> Self {
        SectionParams {
            limit: 100,
            capacity: 100,
            traffic: Traffic::PageLoads,
            load: 0.8,
            seed: 1,
            jitter: Jitter::Full,
        }
    }
}

/// What the reader can change on the section figures: the bucket-ceiling figure's capacity
/// dial and the honest-client figure's client and load (each figure reads its own; a dial not
/// sent keeps its starting value).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Dials {
    /// The bucket-ceiling figure's capacity B.
    pub capacity: u64,
    /// The honest client's traffic.
    #[serde(with = "crate::controls::named")]
    pub traffic: Traffic,
    /// Its load, as a share of the limit.
    pub load: f64,
    /// The herding figure's jitter.
    #[serde(with = "crate::controls::named")]
    pub jitter: Jitter,
}

impl Default for Dials {
    fn default() -> Self {
        Dials {
            capacity: 10,
            traffic: Traffic::PageLoads,
            load: 0.8,
            jitter: Jitter::Full,
        }
    }
}

/// The limit of the figures about a boundary (the bucket's ceiling, the boundary table): a
/// minute's 60, one request a second.
const BOUNDARY_LIMIT: u64 = 60;

impl Section {
    /// The section's settings: its own fixed limit and seed, and what the reader set on its
    /// dials.
    pub fn params(self, dials: &Dials) -> SectionParams {
        let base = SectionParams {
            limit: 100,
            seed: 1,
            ..SectionParams::default()
        };
        match self {
            Section::Ceiling => SectionParams {
                limit: BOUNDARY_LIMIT,
                capacity: dials.capacity,
                ..base
            },
            Section::BoundaryTable => SectionParams {
                limit: BOUNDARY_LIMIT,
                ..base
            },
            Section::Honest => SectionParams {
                traffic: dials.traffic,
                load: dials.load,
                ..base
            },
            Section::Herding | Section::HerdingMix => SectionParams {
                jitter: dials.jitter,
                ..base
            },
            Section::SwcOffsets | Section::Lockout | Section::Split => base,
        }
    }

    /// Runs the section's experiment: its chart and table.
    pub fn figure(self, p: &SectionParams) -> Result<Figure, Error> {
        match self {
            Section::Ceiling => bucket_ceiling(p.limit, p.capacity),
            Section::SwcOffsets => swc_offsets(p.limit),
            Section::Honest => honest_client(p.traffic, p.load, p.seed),
            Section::Lockout => lockout(p.limit, p.seed),
            Section::Split => split(p.seed),
            Section::BoundaryTable => boundary_table(p.limit),
            Section::Herding => herding(p.jitter, p.seed),
            Section::HerdingMix => herding_mix(p.jitter, p.seed),
        }
    }
}

/// Section 1's client: one page-load client at 80% of a limit of 100 a minute, ten minutes,
/// seed 3, shown against every algorithm.
pub fn rules_controls() -> Controls {
    Controls {
        algorithm: LimiterKind::SlidingLog,
        capacity: 100,
        limit: 100,
        window_s: 60,
        traffic: Traffic::PageLoads,
        load: 0.8,
        seed: 3,
        minutes: 10,
        attack: Attack::None,
        record_rejects: false,
        leaky_mode: LeakyMode::Meter,
        replay: None,
        ..Controls::default()
    }
}

/// Section 1's figure: each algorithm's trailing-window chart, named for its label, and the
/// table under them.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RulesFigure {
    /// Each algorithm's name, the caption of its chart.
    pub captions: Vec<String>,
    /// Each chart's accessible label.
    pub labels: Vec<String>,
    /// Each algorithm's chart.
    pub plots: Vec<Plot>,
    /// The table: header, then a row per algorithm.
    pub table: Vec<Vec<String>>,
}

/// Runs section 1: every algorithm on [`rules_controls`].
pub fn rules() -> Result<RulesFigure, Error> {
    let data = page::compare_data(&rules_controls())?;
    Ok(RulesFigure {
        captions: data.rows.iter().map(|r| r.limiter.clone()).collect(),
        labels: data
            .rows
            .iter()
            .map(|r| format!("{}: admitted in the trailing window over time", r.limiter))
            .collect(),
        table: rules_table(&data.rows),
        plots: data.plots,
    })
}

/// Section 1's table: each algorithm's served share, busiest window and worst case in theory.
fn rules_table(rows: &[CompareRow]) -> Vec<Vec<String>> {
    let header = [
        "Algorithm",
        "Served",
        "Busiest window",
        "Worst case in theory",
    ];
    std::iter::once(header.map(String::from).to_vec())
        .chain(rows.iter().map(|r| {
            vec![
                r.limiter.clone(),
                format!("{}%", fixed(100.0 * r.served_share, 1)),
                r.worst_window.to_string(),
                r.bound.map_or_else(|| "–".into(), |b| b.to_string()),
            ]
        }))
        .collect()
}

/// A section figure: its chart (none for a table alone) and its table (header, then rows;
/// none for a chart alone).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// The chart.
    pub plot: Option<Plot>,
    /// The table: header, then rows.
    pub table: Vec<Vec<String>>,
}

/// Named lines in palette order, each point marked, with horizontal reference lines.
fn lines_figure(
    titles: [&str; 3],
    lines: Vec<(String, Vec<(f64, f64)>)>,
    references: Vec<(f64, String)>,
) -> Figure {
    let [title, x_label, y_label] = titles;
    Figure {
        plot: Some(Plot::Xy {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            series: Series::palette(lines),
            references,
            y_range: None,
            x_range: None,
        }),
        table: Vec::new(),
    }
}

/// The worst window of each token-bucket capacity under the flood, against `B + L − 1`.
pub fn bucket_ceiling(limit: u64, current: u64) -> Result<Figure, Error> {
    let max_b = CAPACITY_FACTOR * limit;
    let step = (max_b / 24).max(1);
    let mut caps: Vec<u64> = (1..=max_b).step_by(step as usize).collect();
    caps.push(current.clamp(1, max_b));
    caps.sort_unstable();
    caps.dedup();
    let mut flood = Vec::new();
    let mut burst = Vec::new();
    let mut theory_line = Vec::new();
    for &b in &caps {
        let spec = LimiterSpec::parse(&format!("token-bucket:burst={b}"))?;
        let base = Scenario {
            limiters: vec![spec],
            limit,
            window: MINUTE,
            ..Scenario::default()
        };
        // One run each, through the study's own run loop (as every section figure).
        let worst = |traffic: &str| -> Result<f64, Error> {
            let s = Scenario {
                traffic: TrafficSpec::parse(traffic)?,
                ..base.clone()
            };
            Ok(busiest(&run_scenario(&s)?, 0).mean)
        };
        flood.push((b as f64, worst("flood:start=worst")?));
        burst.push((b as f64, worst("boundary-burst")?));
        theory_line.push((b as f64, (b + limit - 1) as f64));
    }
    Ok(lines_figure(
        [
            "Worst window of a token bucket against its capacity",
            "capacity B",
            "requests in the worst window",
        ],
        vec![
            ("B + L − 1 (theory)".into(), theory_line),
            ("flood (measured)".into(), flood),
            ("boundary burst (measured)".into(), burst),
        ],
        vec![(limit as f64, format!("limit L = {limit}"))],
    ))
}

/// The size the counter-offset figure runs at: one run of an hour (a flood is the same in
/// every run).
const SWC_SIZE: Size = Size {
    runs: 1,
    minutes: 60,
    seed: 1,
};

/// The sliding-window counter's worst window against the flood's start offset: simulation
/// and formula at 51 offsets (the study's experiment at the reader's limit).
pub fn swc_offsets(limit: u64) -> Result<Figure, Error> {
    let measures = (0..=study::OFFSET_STEPS)
        .map(|i| {
            let r = run_scenario(&study::counter_offset(limit, i, SWC_SIZE)?)?;
            Ok(study::counter_offset_measure(limit, i, &r))
        })
        .collect::<Result<Vec<_>, Error>>()?;
    Ok(lines_figure(
        [
            "Sliding-window counter: worst window against the flood's start",
            "flood starts this far into a window (s)",
            "requests in the worst window",
        ],
        study::counter_offset_lines(&measures).into(),
        vec![
            (limit as f64, "L".into()),
            (2.0 * limit as f64, "2L".into()),
        ],
    ))
}

/// The limiters of the honest-client figure, in the order it shows them (the sliding log,
/// which never breaks the rule, first): the study's, without its GCRA twin.
const HONEST_SHOWN: [usize; 6] = [
    study::SLIDING_LOG,
    study::FIXED_WINDOW,
    study::COUNTER,
    study::BUCKET_50,
    study::BUCKET_75,
    study::GCRA,
];

/// The study's honest-client experiment against one shape, three runs of 300 minutes: served
/// share and busiest window of each limiter.
pub fn honest_client(traffic: Traffic, load: f64, seed: u64) -> Result<Figure, Error> {
    let size = Size {
        runs: 3,
        minutes: 300,
        seed,
    };
    let r = run_scenario(&study::honest(traffic.name(), load, size)?)?;
    let mut table = vec![vec![
        "limiter".into(),
        "served".into(),
        "busiest minute".into(),
        "over the limit?".into(),
    ]];
    let mut bars = Vec::new();
    for (shown, &i) in HONEST_SHOWN.iter().enumerate() {
        let name = study::LIMITERS[i].to_owned();
        let share = 100.0 * served(&r, i).mean;
        let over = r.runs.iter().any(|run| run[i].busiest > 100);
        table.push(vec![
            name.clone(),
            format!("{}%", fixed(share, 1)),
            fixed(busiest(&r, i).mean, 0),
            if over { "yes" } else { "never" }.into(),
        ]);
        bars.push((name, share, series_color(shown)));
    }
    let plot = Plot::Bars {
        title: format!(
            "Share of an honest {} client served at {}% of the limit",
            traffic.name(),
            fixed(100.0 * load, 0)
        ),
        bars,
        max: 100.0,
        unit: "%".into(),
    };
    Ok(Figure {
        plot: Some(plot),
        table,
    })
}

/// A line's name, and where its limiter sits in the scenario of the `j`-th x.
type LineAt<'a> = (&'a str, fn(usize) -> usize);

/// Served share (%) against `xs`: at each x, `results` holds the result of its scenario, and
/// each line is the limiter at its position in it.
fn served_lines(
    xs: &[u32],
    results: &[&study::JobResult],
    lines: [LineAt<'_>; 2],
) -> Vec<(String, Vec<(f64, f64)>)> {
    lines
        .into_iter()
        .map(|(name, at)| {
            let points = xs
                .iter()
                .zip(results)
                .enumerate()
                .map(|(j, (&x, r))| (f64::from(x), 100.0 * served(r, at(j)).mean))
                .collect();
            (name.to_owned(), points)
        })
        .collect()
}

/// The study's retry lockout at the reader's limit, over an hour, four runs: served share of
/// a retrying client (a quarter of the limit a minute, after a spike of twice the limit)
/// against its number of tries, with rejects logged or not.
pub fn lockout(limit: u64, seed: u64) -> Result<Figure, Error> {
    const TRIES: [u32; 8] = [1, 2, 4, 6, 8, 10, 12, 16];
    let size = Size {
        runs: 4,
        minutes: 60,
        seed,
    };
    let rate = (limit / 4).max(1);
    let results = TRIES
        .iter()
        .map(|&tries| run_scenario(&study::lockout(limit, rate, tries, size)?))
        .collect::<Result<Vec<_>, Error>>()?;
    let lines = served_lines(
        &TRIES,
        &results.iter().collect::<Vec<_>>(),
        [
            ("rejects not recorded", |_| study::RETRY_FORGETTING),
            ("rejects recorded", |_| study::RETRY_RECORDING),
        ],
    );
    Ok(lines_figure(
        [
            "A retrying client after one spike",
            "tries per request",
            "% of requests served",
        ],
        lines,
        Vec::new(),
    ))
}

/// The study's split limit, steady traffic, three runs of 300 minutes: served share against
/// the number of servers a limit is split across, with random routing.
pub fn split(seed: u64) -> Result<Figure, Error> {
    const SERVERS: [u32; 6] = [1, 2, 4, 5, 10, 20];
    let size = Size {
        runs: 3,
        minutes: 300,
        seed,
    };
    let r = run_scenario(&study::split("steady", &SERVERS, size)?)?;
    let lines = served_lines(
        &SERVERS,
        &[&r; SERVERS.len()],
        [
            ("sliding log", study::split_log),
            ("token bucket, B = L", study::split_bucket),
        ],
    );
    Ok(lines_figure(
        [
            "Splitting the limit across servers",
            "servers K",
            "% of requests served",
        ],
        lines,
        Vec::new(),
    ))
}

/// The boundary burst against a fixed window and a sliding log, hidden in a client offering
/// twice its allowance: both admit the same share of its requests, and only the busiest window
/// tells them apart (2L against L).
///
/// The client sends L requests in the second after every boundary and L in the second before
/// the next, for ten windows (2L a window); in the fifth window it skips the early L. Each
/// limiter admits L a window, so both serve 10L of 19L. The fixed window admits each window's
/// first L: the early ones, except in the fifth window, where the late L go through and meet
/// the next window's early L across the boundary: 2L within two seconds. The sliding log
/// admits the early L until then and the late L after, never more than L in a window.
pub fn boundary_table(limit: u64) -> Result<Figure, Error> {
    let mut times: Vec<Micros> = Vec::new();
    for k in 1..=10u64 {
        let start = k * MINUTE;
        for i in 0..limit {
            if k != 5 {
                times.push(start + i * SECOND / limit);
            }
            times.push(start + MINUTE - SECOND + i * SECOND / limit);
        }
    }
    times.sort_unstable();
    let replay = TrafficSpec::Replay(Replay {
        file: "repeated boundary burst".into(),
        times: Arc::from(times),
        format: ratelab::import::Format::Auto,
        filter: None,
    });
    let s = Scenario {
        limiters: vec![
            LimiterSpec::of(LimiterKind::FixedWindow),
            LimiterSpec::of(LimiterKind::SlidingLog),
        ],
        traffic: replay,
        limit,
        window: MINUTE,
        ..Scenario::default()
    };
    // One run, through the study's own run loop (as every section figure).
    let r = run_scenario(&s)?;
    let most = |i| busiest(&r, i).mean;
    let share = |i| served(&r, i).mean;
    let ratio = |a: f64, b: f64| {
        if b > 0.0 {
            format!("{}×", fixed(a / b, 1))
        } else {
            "-".into()
        }
    };
    let table = vec![
        vec![
            "measure".into(),
            "fixed window".into(),
            "sliding log".into(),
            "ratio".into(),
        ],
        vec![
            "most admitted in one window".into(),
            fixed(most(0), 0),
            fixed(most(1), 0),
            ratio(most(0), most(1)),
        ],
        vec![
            "share admitted".into(),
            format!("{}%", fixed(100.0 * share(0), 0)),
            format!("{}%", fixed(100.0 * share(1), 0)),
            ratio(share(0), share(1)),
        ],
    ];
    Ok(Figure { plot: None, table })
}

/// The herding figure's limiters, in its table's order.
const HERDING_LIMITERS: [(&str, &str); 5] = [
    ("fixed-window", "fixed window"),
    ("sliding-log", "sliding log"),
    ("sliding-window-counter", "sliding-window counter"),
    ("token-bucket", "token bucket, B = L"),
    ("gcra", "GCRA, B = L"),
];

/// The herding clients' first tries, and their policy (written once for both specs below).
macro_rules! herding_first {
    () => {
        "retry:rate=6/5min,spike=0,at=0s"
    };
}
macro_rules! herding_policy {
    () => {
        "tries=6,policy=exponential,base=10s,factor=2,cap=1min,retry-after=honor"
    };
}

/// The herding figure's clients: a hundred on one key, each sending a request every 50 s on
/// average (120 a minute in all, against a limit of 100), retrying up to five times with
/// exponential backoff from 10 s (doubling, at most a minute), and honouring `Retry-After`.
pub const HERDING_CLIENTS: &str = concat!(herding_first!(), ",", herding_policy!(), ",clients=100");

/// The same clients as a mix: 90 that do not jitter and 10 that do (the jitter is added).
const HERDING_MIX: &str = concat!(
    herding_first!(),
    ",",
    herding_policy!(),
    ",clients=90+clients=10,",
    herding_policy!()
);

/// How long the herding figure runs: six minutes, six boundaries of a one-minute window.
const HERDING_MINUTES: u64 = 6;

/// A fleet of a hundred clients honouring `Retry-After` ([`HERDING_CLIENTS`]) against each
/// limiter of 100 a minute, without jitter and with `jitter`: the chart is the fixed window's
/// tries per second (each second `(k − 1 s, k s]`), without and with it; the table, each
/// limiter's tries per request, most tries in one second, time from a request's first try to
/// its success (median and 99th percentile) and requests given up. Without jitter, every client
/// the fixed window refused is told the next boundary, and they all come back at that instant;
/// jitter adds its share of the backoff after it. (`jitter` none is shown against full.)
pub fn herding(jitter: Jitter, seed: u64) -> Result<Figure, Error> {
    let jitter = shown_jitter(jitter);
    let mut table = vec![vec![
        "limiter".into(),
        "jitter".into(),
        "tries per request".into(),
        "most tries in a second".into(),
        "time to success, median".into(),
        "99th percentile".into(),
        "given up".into(),
    ]];
    let mut rows: Vec<Vec<Vec<String>>> = vec![Vec::new(); HERDING_LIMITERS.len()];
    let mut lines = Vec::new();
    let mut seconds_shown = 0;
    for j in [Jitter::None, jitter] {
        let limiters: Vec<&str> = HERDING_LIMITERS.iter().map(|(spec, _)| *spec).collect();
        let traffic = format!("{HERDING_CLIENTS},jitter={}", j.name());
        let scenario = herding_scenario(&limiters, &traffic, HERDING_MINUTES, seed)?;
        let stats = ratelab::sim::simulate_run(&scenario, 0)?;
        for (row, (st, &(_, shown))) in rows.iter_mut().zip(stats.iter().zip(&HERDING_LIMITERS)) {
            // (Always there: the page builds the core with its `clients` feature.)
            let client = st.client.as_ref().ok_or_else(no_client)?;
            let who = [shown.to_owned(), j.name().to_owned()];
            row.push(row_of(&who, client, (st.decisions, st.offered)));
        }
        let (_, trace) = ratelab::sim::trace(&scenario, 0, 0)?;
        // Every try, the retries of the last requests after the six minutes included: second
        // k holds the tries in (k − 1 s, k s], so a boundary's herd ends its second. (Tries
        // are at most 5 a request: the seconds are few.)
        let mut per_second = vec![0u64; (HERDING_MINUTES * 60) as usize];
        for &t in &trace.times {
            let k = t.div_ceil(SECOND).max(1) as usize - 1;
            if k >= per_second.len() {
                per_second.resize(k + 1, 0);
            }
            per_second[k] += 1;
        }
        seconds_shown = seconds_shown.max(per_second.len().div_ceil(60) * 60);
        let points = per_second
            .iter()
            .enumerate()
            .map(|(k, &c)| ((k + 1) as f64, c as f64))
            .collect();
        lines.push((format!("jitter: {}", j.name()), points));
    }
    table.extend(rows.into_iter().flatten());
    Ok(Figure {
        plot: Some(Plot::Xy {
            title: "A hundred clients honouring Retry-After against a fixed window".into(),
            x_label: "seconds".into(),
            y_label: "tries in that second".into(),
            // A point a second: lines alone, or the marks would hide the herd's spikes.
            series: Series::palette(lines)
                .into_iter()
                .map(|s| Series {
                    markers: false,
                    ..s
                })
                .collect(),
            references: Vec::new(),
            y_range: None,
            x_range: Some((0.0, seconds_shown as f64)),
        }),
        table,
    })
}

/// A row of a herding table: who, tries per request, the busiest second, time to success
/// (median and 99th percentile) and requests given up, of clients `c` with `tries` tries over
/// `requests` requests.
fn row_of(who: &[String], c: &ClientStats, (tries, requests): (u64, u64)) -> Vec<String> {
    let quantile = |q: f64| {
        c.success
            .quantile(q)
            .map_or_else(|| "none served".to_owned(), seconds)
    };
    let share = |n: u64, of: u64| format!("{}%", fixed(100.0 * n as f64 / of.max(1) as f64, 1));
    let mut row = who.to_vec();
    row.extend([
        fixed(tries as f64 / requests.max(1) as f64, 2),
        c.peak_second.to_string(),
        quantile(0.5),
        quantile(0.99),
        share(c.gave_up, requests),
    ]);
    row
}

/// The error of a run that has no client statistics (never: the page builds the core with its
/// `clients` feature).
fn no_client() -> Error {
    Error::Invalid {
        what: "herding".into(),
        got: "no client statistics".into(),
        accepted: "a run of retrying clients".into(),
    }
}

/// The jitter a herding figure shows against none: none itself is shown as full.
fn shown_jitter(jitter: Jitter) -> Jitter {
    if jitter == Jitter::None {
        Jitter::Full
    } else {
        jitter
    }
}

/// A checked run of `traffic` against `limiters`, 100 a minute, for `minutes`, from `seed`.
fn herding_scenario(
    limiters: &[&str],
    traffic: &str,
    minutes: u64,
    seed: u64,
) -> Result<Scenario, Error> {
    let scenario = Scenario {
        limiters: limiters
            .iter()
            .map(|spec| LimiterSpec::parse(spec))
            .collect::<Result<_, _>>()?,
        traffic: TrafficSpec::parse(traffic)?,
        limit: 100,
        window: MINUTE,
        duration: minutes * MINUTE,
        runs: 1,
        seed,
    };
    scenario.validate()?;
    Ok(scenario)
}

/// How long the mix runs: thirty minutes, for the backlog the few build up to show.
const HERDING_MIX_MINUTES: u64 = 30;

/// [`HERDING_CLIENTS`] as a mix ([`HERDING_MIX`]), against the fixed window for thirty
/// minutes: 90 clients without jitter and 10 with `jitter` (none is shown as full), a row for
/// each group with its tries per request, busiest second, time to success, requests given up
/// and clients locked out (served under half of their requests).
pub fn herding_mix(jitter: Jitter, seed: u64) -> Result<Figure, Error> {
    let jitter = shown_jitter(jitter);
    let mix = herding_scenario(
        &[HERDING_LIMITERS[0].0],
        &format!("{HERDING_MIX},jitter={}", jitter.name()),
        HERDING_MIX_MINUTES,
        seed,
    )?;
    let stats = ratelab::sim::simulate_run(&mix, 0)?;
    let client = stats[0].client.as_ref().ok_or_else(no_client)?;
    let mut table = vec![[
        "clients",
        "jitter",
        "tries per request",
        "most tries in a second",
        "time to success, median",
        "99th percentile",
        "given up",
        "locked out",
    ]
    .map(String::from)
    .to_vec()];
    for (g, j) in client.groups.iter().zip([Jitter::None, jitter]) {
        let who = [g.clients.to_string(), j.name().to_owned()];
        let mut row = row_of(&who, g, (g.attempts, g.requests));
        row.push(format!("{} of {}", g.locked, g.clients));
        table.push(row);
    }
    Ok(Figure { plot: None, table })
}

/// A time in seconds with two decimals (`0.25 s`), in whole seconds from a minute on, and
/// `0 s` for none (a request admitted at its first try).
fn seconds(t: Micros) -> String {
    let s = t as f64 / SECOND as f64;
    if t >= MINUTE || t == 0 {
        format!("{} s", fixed(s, 0))
    } else {
        format!("{} s", fixed(s, 2))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(figure: &Figure) -> Vec<(String, Vec<(f64, f64)>)> {
        match &figure.plot {
            Some(Plot::Xy { series, .. }) => series
                .iter()
                .map(|s| (s.name.clone(), s.points.clone()))
                .collect(),
            other => panic!("not lines: {other:?}"),
        }
    }

    #[test]
    fn a_fleet_told_the_next_boundary_comes_back_together_and_jitter_spreads_it() {
        let figure = herding(Jitter::Full, 1).expect("runs");
        let l = lines(&figure);
        assert_eq!(
            l.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
            ["jitter: none", "jitter: full"]
        );
        let peak = |points: &[(f64, f64)]| {
            points
                .iter()
                .copied()
                .fold((0.0, 0.0), |best, p| if p.1 > best.1 { p } else { best })
        };
        let (at, none) = peak(&l[0].1);
        let (_, full) = peak(&l[1].1);
        // Without jitter the busiest second ends on a boundary: the herd comes at its instant.
        assert_eq!(
            at % 60.0,
            0.0,
            "the herd's second ends at a boundary, not at {at}"
        );
        assert!(
            none >= 3.0 * full,
            "jitter spreads the herd: {none} against {full}"
        );
        // Every try is counted once: the seconds add up to the fixed window's tries.
        let tries = |points: &[(f64, f64)]| points.iter().map(|p| p.1).sum::<f64>();
        let table = &figure.table;
        assert_eq!(table.len(), 1 + 2 * HERDING_LIMITERS.len());
        assert_eq!(table[0][0], "limiter");
        let (fixed_none, fixed_full) = (&table[1], &table[2]);
        assert_eq!(
            (fixed_none[1].as_str(), fixed_full[1].as_str()),
            ("none", "full")
        );
        // The table's most tries in a trailing second is at least the chart's busiest
        // second (whose spans are fixed), and the fixed window's herd is in both.
        for (row, busiest) in [(fixed_none, none), (fixed_full, full)] {
            let most: f64 = row[3].parse().expect("a count");
            assert!(most >= busiest, "{row:?} against {busiest}");
        }
        let offered =
            |row: &Vec<String>| -> f64 { row[2].parse::<f64>().expect("tries per request") };
        assert!(
            offered(fixed_none) > 1.0,
            "the fixed window makes clients retry"
        );
        // The chart's tries add up to its run's: tries per request × requests.
        let sim = |j: &str| {
            let s = Scenario {
                limiters: vec![LimiterSpec::parse("fixed-window").expect("valid")],
                traffic: TrafficSpec::parse(&format!("{HERDING_CLIENTS},jitter={j}"))
                    .expect("valid"),
                limit: 100,
                window: MINUTE,
                duration: HERDING_MINUTES * MINUTE,
                runs: 1,
                seed: 1,
            };
            ratelab::sim::simulate_run(&s, 0).expect("runs")[0].decisions as f64
        };
        assert_eq!(tries(&l[0].1), sim("none"));
        assert_eq!(tries(&l[1].1), sim("full"));
        // Jitter none is shown against full; another jitter is shown as chosen.
        assert_eq!(herding(Jitter::None, 1).expect("runs"), figure);
        let equal = herding(Jitter::Equal, 1).expect("runs");
        assert_eq!(lines(&equal)[1].0, "jitter: equal");
        assert_eq!(
            Section::Herding.params(&Dials::default()).jitter,
            Jitter::Full
        );
    }

    #[test]
    fn in_the_herding_mix_the_ten_who_jitter_try_more_and_give_up_most() {
        // The section's claim: when only some clients jitter, the herd keeps the boundary and
        // the few who jitter come back to a full window, so they try more than twice as often
        // a request and give up on most requests. At every jitter and twelve seeds (the page
        // shows seed 1; the least margins seen are 2.1× and 59% against at most 6.4%).
        let number = |cell: &str| -> f64 {
            cell.trim_end_matches(" s")
                .trim_end_matches('%')
                .parse()
                .unwrap_or_else(|_| panic!("a number: {cell}"))
        };
        for jitter in [Jitter::Full, Jitter::Equal, Jitter::Decorrelated] {
            for seed in 1..=12 {
                let table = herding_mix(jitter, seed).expect("runs").table;
                let [_, herd, few] = table.as_slice() else {
                    panic!("rows")
                };
                assert_eq!((herd[0].as_str(), herd[1].as_str()), ("90", "none"));
                assert_eq!((few[0].as_str(), few[1].as_str()), ("10", jitter.name()));
                // More tries a request, and most of the few's requests given up.
                // As the page says them: more than twice the tries, most requests given up.
                assert!(
                    number(&few[2]) > 2.0 * number(&herd[2]),
                    "{jitter:?} seed {seed}, tries per request: {few:?} against {herd:?}"
                );
                assert!(
                    number(&few[6]) > 50.0 && number(&herd[6]) < 10.0,
                    "{jitter:?} seed {seed}, given up: {few:?} against {herd:?}"
                );
                // The herd still comes at the boundary: its busiest second is the mix's.
                assert!(number(&herd[3]) > 5.0 * number(&few[3]), "{herd:?} {few:?}");
            }
        }
    }

    #[test]
    fn section_data_has_what_the_text_claims() {
        let ceiling = lines(&bucket_ceiling(60, 10).expect("runs"));
        let flood = &ceiling[1].1;
        let theory_line = &ceiling[0].1;
        assert_eq!(
            flood, theory_line,
            "the flood reaches B + L − 1 at every capacity"
        );
        let swc = lines(&swc_offsets(100).expect("runs"));
        assert_eq!(swc[0].1.len(), 51);
        assert_eq!(swc[0].1, swc[1].1);
        let table = boundary_table(60).expect("runs").table;
        assert_eq!(table[1][1], "120");
        assert_eq!(table[1][2], "60");
        // The same share admitted, 10L of 19L each: the share cannot tell them apart.
        assert_eq!(table[2][1], "53%");
        assert_eq!(table[2][2], "53%");
        assert_eq!(table[2][3], "1.0×");
    }

    #[test]
    fn every_section_has_its_figure_and_a_chart_titled_for_it() {
        let p = SectionParams {
            limit: 20,
            capacity: 10,
            ..SectionParams::default()
        };
        let mut titles = Vec::new();
        for &s in Section::ALL {
            let figure = s.figure(&p).unwrap_or_else(|e| panic!("{}: {e}", s.name()));
            if s == Section::BoundaryTable {
                assert!(figure.plot.is_none() && figure.table.len() == 3);
                continue;
            }
            if s == Section::HerdingMix {
                // A table: its header and a row for each group of the mix.
                assert!(figure.plot.is_none() && figure.table.len() == 3);
                continue;
            }
            let plot = figure.plot.expect("a chart");
            assert!(!plot.is_empty(), "{}", s.name());
            match plot {
                Plot::Xy { .. } | Plot::Bars { .. } => titles.push(plot.title().to_owned()),
                _ => panic!("{}: not a section chart", s.name()),
            }
        }
        assert_eq!(titles.len(), 6);
        assert!(
            titles[2].contains("page-loads") && titles[2].contains("80%"),
            "{titles:?}"
        );
        assert_eq!(Section::from_name("swc-offsets"), Some(Section::SwcOffsets));
    }

    #[test]
    fn the_honest_figure_is_the_studys_experiment_with_the_sliding_log_first() {
        let figure = honest_client(Traffic::PageLoads, 0.8, 1).expect("runs");
        let Some(Plot::Bars { bars, .. }) = &figure.plot else {
            panic!("bars")
        };
        let names: Vec<&str> = bars.iter().map(|b| b.0.as_str()).collect();
        assert_eq!(
            names,
            [
                "sliding-log",
                "fixed-window",
                "sliding-window-counter",
                "token-bucket:burst=50",
                "token-bucket:burst=75",
                "gcra"
            ]
        );
        // The same cell as the study's experiment at this size, limiter by limiter.
        let size = Size {
            runs: 3,
            minutes: 300,
            seed: 1,
        };
        let r =
            run_scenario(&study::honest("page-loads", 0.8, size).expect("valid")).expect("runs");
        for (bar, &i) in bars.iter().zip(&HONEST_SHOWN) {
            assert_eq!(bar.1, 100.0 * served(&r, i).mean, "{}", bar.0);
        }
        assert_eq!(
            figure.table[1][3], "never",
            "the sliding log never goes over"
        );
        assert_eq!(figure.table[2][3], "yes", "the fixed window does");
    }

    #[test]
    fn the_lockout_and_split_figures_have_a_point_per_setting() {
        let lockout = lines(&lockout(100, 1).expect("runs"));
        assert_eq!(lockout[0].0, "rejects not recorded");
        let xs: Vec<f64> = lockout[1].1.iter().map(|p| p.0).collect();
        assert_eq!(xs, [1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 16.0]);
        let (forgetting, recording) = (&lockout[0].1, &lockout[1].1);
        assert!(
            recording.last().expect("a point").1 < forgetting.last().expect("a point").1,
            "recording rejects locks a persistent client out: {lockout:?}"
        );
        let split = lines(&split(1).expect("runs"));
        let (log, bucket) = (&split[0].1, &split[1].1);
        assert_eq!(log.len(), 6);
        assert!(log[0].1 > log[5].1, "a split log serves less: {log:?}");
        assert!(
            bucket[5].1 > log[5].1,
            "a split bucket serves more: {split:?}"
        );
    }

    #[test]
    fn each_section_keeps_its_own_limit_and_seed_and_reads_only_its_dials() {
        let dials = Dials {
            capacity: 37,
            traffic: Traffic::Steady,
            load: 0.3,
            jitter: Jitter::Decorrelated,
        };
        let p = |s: Section| s.params(&dials);
        let (ceiling, boundary) = (p(Section::Ceiling), p(Section::BoundaryTable));
        assert_eq!((ceiling.limit, ceiling.capacity, ceiling.seed), (60, 37, 1));
        assert_eq!(boundary.limit, 60);
        let herding = p(Section::Herding);
        assert_eq!(
            (herding.limit, herding.seed, herding.jitter),
            (100, 1, Jitter::Decorrelated)
        );
        assert_eq!(herding.capacity, SectionParams::default().capacity);
        let honest = p(Section::Honest);
        assert_eq!(
            (honest.limit, honest.traffic, honest.load, honest.seed),
            (100, Traffic::Steady, 0.3, 1)
        );
        for s in [Section::SwcOffsets, Section::Lockout, Section::Split] {
            let q = p(s);
            assert_eq!((q.limit, q.seed), (100, 1), "{}", s.name());
            assert_eq!(q, Section::Split.params(&Dials::default()), "{}", s.name());
        }
        // A dial not sent keeps the page's starting value (the HTML's).
        let none: Dials = serde_json::from_str("{}").expect("empty");
        assert_eq!(Section::Ceiling.params(&none).capacity, 10);
        let one: Dials = serde_json::from_str(r#"{"load": 1}"#).expect("load");
        let honest = Section::Honest.params(&one);
        assert_eq!((honest.traffic, honest.load), (Traffic::PageLoads, 1.0));
        assert!(serde_json::from_str::<Dials>(r#"{"traffic": "lots"}"#).is_err());
    }

    #[test]
    fn section_one_is_every_algorithm_on_its_own_page_load_client() {
        let c = rules_controls();
        assert_eq!(
            (c.limit, c.window_s, c.load, c.seed, c.minutes),
            (100, 60, 0.8, 3, 10)
        );
        assert_eq!((c.traffic, c.attack), (Traffic::PageLoads, Attack::None));
        let figure = rules().expect("runs");
        assert_eq!(figure.plots.len(), LimiterKind::ALL.len());
        assert_eq!(figure.table.len(), 1 + LimiterKind::ALL.len());
        assert_eq!(
            figure.table[0],
            [
                "Algorithm",
                "Served",
                "Busiest window",
                "Worst case in theory"
            ]
        );
        let rows = page::compare_data(&c).expect("runs").rows;
        for ((row, cells), (caption, label)) in rows
            .iter()
            .zip(&figure.table[1..])
            .zip(figure.captions.iter().zip(&figure.labels))
        {
            assert_eq!(caption, &row.limiter);
            assert_eq!(
                label,
                &format!("{}: admitted in the trailing window over time", row.limiter)
            );
            assert_eq!(cells[0], row.limiter);
            assert_eq!(cells[1], format!("{:.1}%", 100.0 * row.served_share));
            assert_eq!(cells[2], row.worst_window.to_string());
            let bound = row.bound.map_or("–".to_owned(), |b| b.to_string());
            assert_eq!(cells[3], bound);
        }
        let unbounded = CompareRow {
            limiter: "x".into(),
            served_share: 0.4567,
            worst_window: 7,
            bound: None,
            wrong_admits: 0.0,
            wrong_rejects: 0.0,
        };
        assert_eq!(
            rules_table(&[unbounded])[1],
            ["x", "45.7%", "7", "–"],
            "a limiter without a bound shows a dash"
        );
    }
}
