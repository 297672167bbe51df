//! A chart as data: what the page draws on a canvas, what the CLI and the page's export turn
//! into SVG (with `ratelab-charts`, which draws a [`Plot`] with plotters) and the CSV behind
//! it. Plain data, so it crosses the wasm boundary and a worker's `postMessage` as is, and
//! the core stays free of any drawing code.
//!
//! Colours are `[r, g, b]` from the Okabe–Ito palette, distinguishable with every common
//! colour-vision deficiency.

use crate::text::csv_field as field;
use serde::{Deserialize, Serialize};

/// A colour as `[r, g, b]`.
pub type Rgb = [u8; 3];

/// Okabe–Ito blue: admitted requests, the main series.
pub const BLUE: Rgb = [0x00, 0x72, 0xb2];
/// Okabe–Ito orange: rejected requests.
pub const ORANGE: Rgb = [0xe6, 0x9f, 0x00];
/// Okabe–Ito vermillion: the invariant broken.
pub const RED: Rgb = [0xd5, 0x5e, 0x00];
/// Okabe–Ito bluish green: the invariant kept.
pub const GREEN: Rgb = [0x00, 0x9e, 0x73];
/// Okabe–Ito sky blue.
pub const SKY: Rgb = [0x56, 0xb4, 0xe9];
/// Okabe–Ito reddish purple.
pub const PURPLE: Rgb = [0xcc, 0x79, 0xa7];
/// Okabe–Ito yellow.
pub const YELLOW: Rgb = [0xf0, 0xe4, 0x42];
/// A series palette in a fixed order.
pub const SERIES: [Rgb; 6] = [BLUE, ORANGE, GREEN, PURPLE, SKY, RED];

/// The `i`-th colour of [`SERIES`], starting over after the last.
pub fn series_color(i: usize) -> Rgb {
    SERIES[i % SERIES.len()]
}

/// Requests per time bin: admitted and rejected, for the arrivals chart.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Bins {
    /// Bin width, in seconds.
    pub width_s: f64,
    /// Admitted per bin.
    pub admitted: Vec<u32>,
    /// Rejected per bin.
    pub rejected: Vec<u32>,
}

impl Bins {
    /// The most requests in one bin, admitted and rejected together (at least 1, so an axis
    /// scaled to it is never empty).
    pub fn tallest(&self) -> u32 {
        self.admitted
            .iter()
            .zip(&self.rejected)
            .map(|(a, r)| a + r)
            .max()
            .unwrap_or(0)
            .max(1)
    }
}

/// One named line of an XY chart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Series {
    /// Its legend entry.
    pub name: String,
    /// Its points.
    pub points: Vec<(f64, f64)>,
    /// Its colour.
    pub color: Rgb,
    /// Whether to mark each point.
    pub markers: bool,
    /// Whether to join its points with a line. Without one, its points are marked alone
    /// (events at scattered instants, such as a fleet's room instants).
    #[serde(default = "joined")]
    pub line: bool,
}

fn joined() -> bool {
    true
}

impl Series {
    /// Named lines, coloured in palette order, each point marked.
    pub fn palette(lines: Vec<(String, Vec<(f64, f64)>)>) -> Vec<Series> {
        lines
            .into_iter()
            .enumerate()
            .map(|(i, (name, points))| Series {
                name,
                points,
                color: series_color(i),
                markers: true,
                line: true,
            })
            .collect()
    }
}

/// A chart as data. One value, one drawing (`ratelab_charts::Draw`), one CSV ([`Plot::csv`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum Plot {
    /// Requests per bin, admitted and rejected.
    Arrivals(Bins),
    /// The trailing-window count against the limit.
    Window {
        /// Step-series times, in seconds.
        times_s: Vec<f64>,
        /// The count at each time.
        counts: Vec<f64>,
        /// `L`.
        limit: f64,
        /// The theoretical worst case, if known.
        bound: Option<f64>,
        /// Where the time axis ends.
        x_max: f64,
    },
    /// Named lines.
    Xy {
        /// The chart's title.
        title: String,
        /// The x axis's label.
        x_label: String,
        /// The y axis's label.
        y_label: String,
        /// The lines.
        series: Vec<Series>,
        /// Horizontal reference lines: value and label, drawn in the order listed as a solid
        /// line (`L` goes first), a dashed one (`2L` second), then dotted ones.
        references: Vec<(f64, String)>,
        /// Fixed y range, if any.
        y_range: Option<(f64, f64)>,
        /// Fixed x range, if any.
        x_range: Option<(f64, f64)>,
    },
    /// Labelled horizontal bars.
    Bars {
        /// The chart's title.
        title: String,
        /// Label, value and colour of each bar.
        bars: Vec<(String, f64, Rgb)>,
        /// The axis maximum.
        max: f64,
        /// The unit printed after each value.
        unit: String,
    },
}

impl Plot {
    /// Named lines of percentages (0–105 on the y axis), coloured in palette order: the
    /// study's plots.
    pub fn shares(
        title: &str,
        x_label: &str,
        y_label: &str,
        lines: Vec<(String, Vec<(f64, f64)>)>,
    ) -> Plot {
        Plot::Xy {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            series: Series::palette(lines),
            references: Vec::new(),
            y_range: Some((0.0, 105.0)),
            x_range: None,
        }
    }

    /// Its title (the arrivals and window charts' captions are fixed by their drawing).
    pub fn title(&self) -> &str {
        match self {
            Plot::Xy { title, .. } | Plot::Bars { title, .. } => title,
            Plot::Arrivals(_) | Plot::Window { .. } => "",
        }
    }

    /// Whether it has nothing to show yet: no bin, no step, no point, no bar.
    pub fn is_empty(&self) -> bool {
        match self {
            Plot::Arrivals(bins) => bins.admitted.is_empty(),
            Plot::Window { times_s, .. } => times_s.is_empty(),
            Plot::Xy { series, .. } => series.iter().all(|s| s.points.is_empty()),
            Plot::Bars { bars, .. } => bars.is_empty(),
        }
    }

    /// The data behind the chart as CSV, with a header row: one row per bin, per step, per
    /// point (long form: `series,x,y`) or per bar.
    pub fn csv(&self) -> String {
        let mut out = String::new();
        match self {
            Plot::Arrivals(bins) => {
                out.push_str("bin_start_s,bin_end_s,admitted,rejected\n");
                for (i, (a, r)) in bins.admitted.iter().zip(&bins.rejected).enumerate() {
                    let start = i as f64 * bins.width_s;
                    out.push_str(&format!(
                        "{},{},{a},{r}\n",
                        num(start),
                        num(start + bins.width_s)
                    ));
                }
            }
            Plot::Window {
                times_s,
                counts,
                limit,
                bound,
                ..
            } => {
                out.push_str("time_s,admitted_in_window,limit,worst_case\n");
                let bound = bound.map_or(String::new(), num);
                for (t, c) in times_s.iter().zip(counts) {
                    out.push_str(&format!(
                        "{},{},{},{bound}\n",
                        num(*t),
                        num(*c),
                        num(*limit)
                    ));
                }
            }
            Plot::Xy {
                series, references, ..
            } => {
                out.push_str("series,x,y\n");
                for s in series {
                    for (x, y) in &s.points {
                        out.push_str(&format!("{},{},{}\n", field(&s.name), num(*x), num(*y)));
                    }
                }
                for (y, name) in references {
                    out.push_str(&format!("{},,{}\n", field(name), num(*y)));
                }
            }
            Plot::Bars { bars, unit, .. } => {
                out.push_str(&format!(
                    "label,value_{}\n",
                    if unit == "%" { "percent" } else { "value" }
                ));
                for (label, v, _) in bars {
                    out.push_str(&format!("{},{}\n", field(label), num(*v)));
                }
            }
        }
        out
    }
}

/// A number for CSV: integers without a fraction, others in full precision.
fn num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        crate::decimal::shortest(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_plot_has_its_data_as_csv() {
        let bins = Bins {
            width_s: 1.0,
            admitted: vec![1, 0, 1],
            rejected: vec![1, 0, 0],
        };
        assert_eq!(
            Plot::Arrivals(bins).csv(),
            "bin_start_s,bin_end_s,admitted,rejected\n0,1,1,1\n1,2,0,0\n2,3,1,0\n"
        );
        let xy = Plot::shares("t", "x", "y", vec![("a, \"b\"".into(), vec![(1.0, 2.5)])]);
        assert_eq!(xy.csv(), "series,x,y\n\"a, \"\"b\"\"\",1,2.5\n");
        let w = Plot::Window {
            times_s: vec![0.0, 1.5],
            counts: vec![1.0, 2.0],
            limit: 2.0,
            bound: None,
            x_max: 2.0,
        };
        assert_eq!(
            w.csv(),
            "time_s,admitted_in_window,limit,worst_case\n0,1,2,\n1.5,2,2,\n"
        );
        let bars = Plot::Bars {
            title: "served".into(),
            bars: vec![("sliding log".into(), 93.5, BLUE)],
            max: 100.0,
            unit: "%".into(),
        };
        assert_eq!(bars.csv(), "label,value_percent\nsliding log,93.5\n");
        assert_eq!(bars.title(), "served");
    }

    #[test]
    fn shares_colour_lines_in_palette_order_on_a_percent_axis() {
        let lines = (0..7)
            .map(|i| (format!("l{i}"), vec![(0.0, f64::from(i))]))
            .collect();
        let Plot::Xy {
            series, y_range, ..
        } = Plot::shares("t", "x", "y", lines)
        else {
            panic!("shares are an XY plot");
        };
        assert_eq!(y_range, Some((0.0, 105.0)));
        let colors: Vec<Rgb> = series.iter().map(|s| s.color).collect();
        assert_eq!(colors, [BLUE, ORANGE, GREEN, PURPLE, SKY, RED, BLUE]);
        assert!(series.iter().all(|s| s.markers));
    }

    #[test]
    fn a_plot_is_empty_until_it_has_a_point() {
        let empty = Plot::shares("t", "x", "y", vec![("a".into(), Vec::new())]);
        assert!(empty.is_empty());
        assert!(!Plot::shares("t", "x", "y", vec![("a".into(), vec![(1.0, 1.0)])]).is_empty());
        assert!(Plot::Arrivals(Bins::default()).is_empty());
    }

    #[test]
    #[cfg(not(target_arch = "wasm32"))]
    fn a_plot_crosses_as_plain_data_with_colours_as_triples() {
        let plot = Plot::Bars {
            title: "t".into(),
            bars: vec![("a".into(), 1.0, [1, 2, 3])],
            max: 2.0,
            unit: "%".into(),
        };
        let json = serde_json::to_string(&plot).expect("serialises");
        assert_eq!(
            json,
            r#"{"bars":{"title":"t","bars":[["a",1.0,[1,2,3]]],"max":2.0,"unit":"%"}}"#
        );
        assert_eq!(serde_json::from_str::<Plot>(&json).expect("reads"), plot);
    }
}
