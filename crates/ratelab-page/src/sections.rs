//! The essay's section figures: an experiment each, run on the reader's settings, with the
//! chart and table the page shows. [`Section`] names them; [`Section::data`] runs one (in the
//! page's section worker) and [`Section::plot`] turns its data into the chart (on the page's
//! thread, which only draws).

use crate::controls::{Named, Traffic, CAPACITY_FACTOR};
use ratelab::sim::{simulate, Scenario};
use ratelab::spec::{LimiterKind, LimiterSpec, Replay, TrafficSpec};
use ratelab::time::{format_duration, Micros, MINUTE, MS, SECOND};
use ratelab::{theory, Error};
use ratelab_charts::{self as charts, Plot, Series};
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
}

impl Named for Section {
    const ALL: &'static [Self] = &[
        Section::Ceiling,
        Section::SwcOffsets,
        Section::Honest,
        Section::Lockout,
        Section::Split,
        Section::BoundaryTable,
    ];
    fn name(self) -> &'static str {
        match self {
            Section::Ceiling => "ceiling",
            Section::SwcOffsets => "swc-offsets",
            Section::Honest => "honest",
            Section::Lockout => "lockout",
            Section::Split => "split",
            Section::BoundaryTable => "boundary-table",
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
}

impl Default for SectionParams {
    fn default() -> Self {
        SectionParams {
            limit: 100,
            capacity: 100,
            traffic: Traffic::PageLoads,
            load: 0.8,
            seed: 1,
        }
    }
}

impl Section {
    /// Runs the section's experiment.
    pub fn data(self, p: &SectionParams) -> Result<SectionData, Error> {
        match self {
            Section::Ceiling => bucket_ceiling(p.limit, p.capacity),
            Section::SwcOffsets => swc_offsets(p.limit),
            Section::Honest => honest_client(p.traffic, p.load, p.seed),
            Section::Lockout => lockout(p.limit, p.seed),
            Section::Split => split(p.seed),
            Section::BoundaryTable => boundary_table(p.limit),
        }
    }

    /// The section's chart, from its data.
    pub fn plot(self, data: &SectionData, p: &SectionParams) -> Plot {
        if self == Section::Honest {
            let bars = data
                .lines
                .iter()
                .enumerate()
                .map(|(i, l)| {
                    (
                        l.name.clone(),
                        l.points.first().map_or(0.0, |p| p.1),
                        charts::SERIES[i % charts::SERIES.len()],
                    )
                })
                .collect();
            return Plot::Bars {
                title: format!(
                    "Share of an honest {} client served at {:.0}% of the limit",
                    p.traffic.name(),
                    100.0 * p.load
                ),
                bars,
                max: 100.0,
                unit: "%".into(),
            };
        }
        let series = data
            .lines
            .iter()
            .enumerate()
            .map(|(i, l)| Series {
                name: l.name.clone(),
                points: l.points.clone(),
                color: charts::SERIES[i % charts::SERIES.len()],
                markers: true,
            })
            .collect();
        let (title, x_label, y_label) = match self {
            Section::Ceiling => (
                "Worst window of a token bucket against its capacity",
                "capacity B",
                "requests in the worst window",
            ),
            Section::SwcOffsets => (
                "Sliding-window counter: worst window against the flood's start",
                "flood starts this far into a window (s)",
                "requests in the worst window",
            ),
            Section::Lockout => (
                "A retrying client after one spike",
                "tries per request",
                "% of requests served",
            ),
            _ => (
                "Splitting the limit across servers",
                "servers K",
                "% of requests served",
            ),
        };
        Plot::Xy {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            series,
            references: data.references.clone(),
            y_range: None,
            x_range: None,
        }
    }
}

/// A line of a section figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Line {
    /// Its legend entry.
    pub name: String,
    /// Its points.
    pub points: Vec<(f64, f64)>,
}

/// The data of a section figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SectionData {
    /// Lines or bars (a bar is a line with one point whose x is its index).
    pub lines: Vec<Line>,
    /// Horizontal reference lines.
    pub references: Vec<(f64, String)>,
    /// A table: header, then rows.
    pub table: Vec<Vec<String>>,
}

/// The worst window of each token-bucket capacity under the flood, against `B + L − 1`.
pub fn bucket_ceiling(limit: u64, current: u64) -> Result<SectionData, Error> {
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
        let worst = |traffic: &str| -> Result<u64, Error> {
            let s = Scenario {
                traffic: TrafficSpec::parse(traffic)?,
                ..base.clone()
            };
            Ok(simulate(&s)?.results[0].busiest_window_max)
        };
        flood.push((b as f64, worst("flood:start=worst")? as f64));
        burst.push((b as f64, worst("boundary-burst")? as f64));
        theory_line.push((b as f64, (b + limit - 1) as f64));
    }
    Ok(SectionData {
        lines: vec![
            Line {
                name: "B + L − 1 (theory)".into(),
                points: theory_line,
            },
            Line {
                name: "flood (measured)".into(),
                points: flood,
            },
            Line {
                name: "boundary burst (measured)".into(),
                points: burst,
            },
        ],
        references: vec![(limit as f64, format!("limit L = {limit}"))],
        table: Vec::new(),
    })
}

/// The sliding-window counter's worst window against the flood's start offset: simulation
/// and formula at 51 offsets.
pub fn swc_offsets(limit: u64) -> Result<SectionData, Error> {
    let span = MINUTE.saturating_sub(limit * MS);
    let mut sim = Vec::new();
    let mut formula = Vec::new();
    for i in 0..=50u64 {
        let offset = i * span / 50 / MS * MS;
        let s = Scenario {
            limiters: vec![LimiterSpec::of(LimiterKind::SlidingWindowCounter)],
            traffic: TrafficSpec::parse(&format!("flood:start={}", format_duration(offset)))?,
            limit,
            window: MINUTE,
            ..Scenario::default()
        };
        let x = offset as f64 / 1e6;
        sim.push((x, simulate(&s)?.results[0].busiest_window_max as f64));
        if let Some(f) = theory::swc_flood_worst(limit, MINUTE, offset, MS) {
            formula.push((x, f as f64));
        }
    }
    Ok(SectionData {
        lines: vec![
            Line {
                name: "simulated".into(),
                points: sim,
            },
            Line {
                name: "L + ⌈L(s − 1 ms)/W⌉".into(),
                points: formula,
            },
        ],
        references: vec![
            (limit as f64, "L".into()),
            (2.0 * limit as f64, "2L".into()),
        ],
        table: Vec::new(),
    })
}

/// The six limiters of the study against one honest shape: served share and busiest window.
pub fn honest_client(traffic: Traffic, load: f64, seed: u64) -> Result<SectionData, Error> {
    let specs = [
        "sliding-log",
        "fixed-window",
        "sliding-window-counter",
        "token-bucket:burst=50",
        "token-bucket:burst=75",
        "gcra:burst=100",
    ];
    let s = Scenario {
        limiters: specs
            .iter()
            .map(|l| LimiterSpec::parse(l))
            .collect::<Result<_, _>>()?,
        traffic: TrafficSpec::parse(&format!("{}:load={load}", traffic.name()))?,
        limit: 100,
        window: MINUTE,
        duration: 300 * MINUTE,
        runs: 3,
        seed,
    };
    let report = simulate(&s)?;
    let mut table = vec![vec![
        "limiter".into(),
        "served".into(),
        "busiest minute".into(),
        "over the limit?".into(),
    ]];
    let mut bars = Vec::new();
    for (i, r) in report.results.iter().enumerate() {
        let share = 100.0 * r.served_share.unwrap_or(0.0);
        bars.push(Line {
            name: r.limiter.clone(),
            points: vec![(i as f64, share)],
        });
        table.push(vec![
            r.limiter.clone(),
            format!("{share:.1}%"),
            format!("{:.0}", r.busiest_window_mean),
            if r.busiest_window_max > 100 {
                "yes".into()
            } else {
                "never".into()
            },
        ]);
    }
    Ok(SectionData {
        lines: bars,
        references: Vec::new(),
        table,
    })
}

/// Served share of a retrying client against its number of tries, logging rejects or not.
pub fn lockout(limit: u64, seed: u64) -> Result<SectionData, Error> {
    let mut lines = Vec::new();
    for record in [false, true] {
        let spec = if record {
            "sliding-log:record-rejects=true"
        } else {
            "sliding-log"
        };
        let mut points = Vec::new();
        for tries in [1u32, 2, 4, 6, 8, 10, 12, 16] {
            let s = Scenario {
                limiters: vec![LimiterSpec::parse(spec)?],
                traffic: TrafficSpec::parse(&format!(
                    "retry:rate={}/1min,spike={},at=5min,tries={tries},every=1s",
                    (limit / 4).max(1),
                    2 * limit
                ))?,
                limit,
                window: MINUTE,
                duration: 60 * MINUTE,
                runs: 4,
                seed,
            };
            points.push((
                f64::from(tries),
                100.0 * simulate(&s)?.results[0].served_share.unwrap_or(0.0),
            ));
        }
        lines.push(Line {
            name: if record {
                "rejects recorded".into()
            } else {
                "rejects not recorded".into()
            },
            points,
        });
    }
    Ok(SectionData {
        lines,
        references: Vec::new(),
        table: Vec::new(),
    })
}

/// Served share against the number of servers a limit is split across, with random routing.
pub fn split(seed: u64) -> Result<SectionData, Error> {
    let mut lines = Vec::new();
    for (name, base) in [
        ("sliding log", "sliding-log"),
        ("token bucket, B = L", "token-bucket:burst=100"),
    ] {
        let mut points = Vec::new();
        for k in [1u32, 2, 4, 5, 10, 20] {
            let spec = format!(
                "{base}{}servers={k}",
                if base.contains(':') { "," } else { ":" }
            );
            let s = Scenario {
                limiters: vec![LimiterSpec::parse(&spec)?],
                traffic: TrafficSpec::Steady { load: 0.8 },
                limit: 100,
                window: MINUTE,
                duration: 300 * MINUTE,
                runs: 3,
                seed,
            };
            points.push((
                f64::from(k),
                100.0 * simulate(&s)?.results[0].served_share.unwrap_or(0.0),
            ));
        }
        lines.push(Line {
            name: name.into(),
            points,
        });
    }
    Ok(SectionData {
        lines,
        references: Vec::new(),
        table: Vec::new(),
    })
}

/// The boundary burst repeated at every boundary, against a fixed window and a sliding log:
/// the busiest window differs by two, the share admitted barely at all.
pub fn boundary_table(limit: u64) -> Result<SectionData, Error> {
    // A client offering twice its allowance: L in the second before each boundary, L in the
    // second after it, ten boundaries in a row, every other window.
    let mut times: Vec<Micros> = Vec::new();
    for k in 1..=10u64 {
        let boundary = 2 * k * MINUTE;
        for i in 0..limit {
            times.push(boundary - SECOND + i * SECOND / limit);
            times.push(boundary + i * SECOND / limit);
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
    let report = simulate(&s)?;
    let (f, l) = (&report.results[0], &report.results[1]);
    let ratio = |a: f64, b: f64| {
        if b > 0.0 {
            format!("{:.1}×", a / b)
        } else {
            "-".into()
        }
    };
    let table = vec![
        vec![
            "".into(),
            "fixed window".into(),
            "sliding log".into(),
            "ratio".into(),
        ],
        vec![
            "most admitted in one window".into(),
            f.busiest_window_max.to_string(),
            l.busiest_window_max.to_string(),
            ratio(f.busiest_window_max as f64, l.busiest_window_max as f64),
        ],
        vec![
            "share admitted".into(),
            format!("{:.0}%", 100.0 * f.served_share.unwrap_or(0.0)),
            format!("{:.0}%", 100.0 * l.served_share.unwrap_or(0.0)),
            ratio(f.served_share.unwrap_or(0.0), l.served_share.unwrap_or(0.0)),
        ],
    ];
    Ok(SectionData {
        lines: Vec::new(),
        references: Vec::new(),
        table,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn section_data_has_what_the_text_claims() {
        let ceiling = bucket_ceiling(60, 10).expect("runs");
        let flood = &ceiling.lines[1].points;
        let theory_line = &ceiling.lines[0].points;
        assert_eq!(
            flood, theory_line,
            "the flood reaches B + L − 1 at every capacity"
        );
        let swc = swc_offsets(100).expect("runs");
        assert_eq!(swc.lines[0].points, swc.lines[1].points);
        let table = boundary_table(60).expect("runs").table;
        assert_eq!(table[1][1], "120");
        assert_eq!(table[1][2], "60");
    }

    #[test]
    fn every_section_has_data_and_a_chart_titled_for_it() {
        let p = SectionParams {
            limit: 20,
            capacity: 10,
            ..SectionParams::default()
        };
        let mut titles = Vec::new();
        for &s in Section::ALL {
            let data = s.data(&p).unwrap_or_else(|e| panic!("{}: {e}", s.name()));
            assert!(
                !data.lines.is_empty() || !data.table.is_empty(),
                "{}",
                s.name()
            );
            let title = match s.plot(&data, &p) {
                Plot::Xy { title, .. } | Plot::Bars { title, .. } => title,
                _ => panic!("{}: not a section chart", s.name()),
            };
            titles.push(title);
        }
        assert!(
            titles[2].contains("page-loads") && titles[2].contains("80%"),
            "{titles:?}"
        );
        assert_eq!(Section::from_name("swc-offsets"), Some(Section::SwcOffsets));
    }
}
