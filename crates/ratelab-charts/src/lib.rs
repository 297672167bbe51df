//! ratelab's charts. Every function draws on any plotters `DrawingBackend`: the page passes a
//! canvas, the CLI and the tests an SVG string. Data preparation (binning, decimation) is here
//! too, as plain functions on slices, so that what a reader sees is tested natively.
//!
//! Colours are the Okabe–Ito palette, distinguishable with every common colour-vision
//! deficiency; a [`Theme`] carries the page's light or dark background.

use frame::{frame, xy_axes, Axes};
use legend::{Entry, Stroke, Swatch};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use ratelab::decimal::fixed;
use std::ops::Range;
#[cfg(feature = "canvas")]
pub mod canvas;
mod frame;
pub mod legend;
mod mechanism;
mod style;
mod text;
mod ticks;
pub use mechanism::{mechanism_chart, MechanismChart};
use style::{err, font};
pub use style::{rgb, ChartResult, Theme};

pub use ratelab::plot::{
    series_color, Bins, Plot, Rgb, Series, BLUE, GREEN, ORANGE, PURPLE, RED, SERIES, SKY, YELLOW,
};

/// Counts decisions into `bins` equal bins over `[0, horizon_us)`.
pub fn bin_decisions(times_us: &[u64], admitted: &[bool], horizon_us: u64, bins: usize) -> Bins {
    let bins = bins.max(1);
    let width = horizon_us.max(1).div_ceil(bins as u64).max(1);
    let mut out = Bins {
        width_s: width as f64 / 1e6,
        admitted: vec![0; bins],
        rejected: vec![0; bins],
    };
    for (&t, &ok) in times_us.iter().zip(admitted) {
        let b = ((t / width) as usize).min(bins - 1);
        if ok {
            out.admitted[b] += 1;
        } else {
            out.rejected[b] += 1;
        }
    }
    out
}

/// Keeps at most about `max_points` points of a step series `(x, y)`, keeping each bucket's
/// largest value (the peaks are the point of the chart) at its first position.
pub fn decimate_max(xs: &[f64], ys: &[f64], max_points: usize) -> (Vec<f64>, Vec<f64>) {
    let n = xs.len().min(ys.len());
    if n <= max_points || max_points < 2 {
        return (xs[..n].to_vec(), ys[..n].to_vec());
    }
    let per = n.div_ceil(max_points / 2);
    let (mut ox, mut oy) = (
        Vec::with_capacity(max_points + 2),
        Vec::with_capacity(max_points + 2),
    );
    for start in (0..n).step_by(per) {
        let end = (start + per).min(n);
        // Keep both the minimum and the maximum of the bucket, in time order, so the line
        // still reaches every peak and every trough.
        let (mut lo, mut hi) = (start, start);
        for i in start..end {
            if ys[i] < ys[lo] {
                lo = i;
            }
            if ys[i] > ys[hi] {
                hi = i;
            }
        }
        for i in if lo <= hi { [lo, hi] } else { [hi, lo] } {
            if ox.last() != Some(&xs[i]) || oy.last() != Some(&ys[i]) {
                ox.push(xs[i]);
                oy.push(ys[i]);
            }
        }
    }
    (ox, oy)
}

/// The trailing-window count as a step function: it rises at each admission and falls when
/// that admission leaves the window, `window_s` later. `admitted_s` must be sorted.
pub fn window_steps(admitted_s: &[f64], window_s: f64) -> (Vec<f64>, Vec<f64>) {
    let (mut xs, mut ys) = (
        Vec::with_capacity(admitted_s.len() * 2 + 1),
        Vec::with_capacity(admitted_s.len() * 2 + 1),
    );
    xs.push(0.0);
    ys.push(0.0);
    let (mut i, mut j, mut count) = (0, 0, 0.0);
    // Merge the rises (admissions) and the falls (admissions plus W); at equal times the fall
    // comes first, matching the half-open window (t − W, t].
    while i < admitted_s.len() || j < i {
        let fall = admitted_s[j] + window_s;
        if i < admitted_s.len() && admitted_s[i] < fall {
            count += 1.0;
            xs.push(admitted_s[i]);
            i += 1;
        } else {
            count -= 1.0;
            xs.push(fall);
            j += 1;
        }
        ys.push(count);
    }
    (xs, ys)
}

/// Time in seconds from zero to `x_max` against a count from zero to `y_max`: the axes of the
/// arrivals and window charts.
fn time_against_counts(x_max: f64, y_max: f64) -> Axes<'static> {
    Axes {
        x: 0.0..x_max.max(1e-9),
        y: 0.0..y_max,
        x_desc: "time (s)",
        y_desc: "",
        y_labels: 10,
        y_counts: true,
        sides: (0, 0),
    }
}

/// Draws admitted (blue) and rejected (orange) requests per bin, stacked.
pub fn arrivals_chart<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    bins: &Bins,
    theme: Theme,
) -> ChartResult {
    area.fill(&theme.bg).map_err(err)?;
    let n = bins.admitted.len();
    let x_max = n as f64 * bins.width_s;
    let entries = [
        ("admitted".to_owned(), Swatch::Block(rgb(BLUE).to_rgba())),
        ("rejected".to_owned(), Swatch::Block(rgb(ORANGE).to_rgba())),
    ];
    let title = format!(
        "Requests per {} s: admitted and rejected",
        fixed(bins.width_s, 0)
    );
    let body = frame(area, &title, &entries, theme)?;
    let axes = time_against_counts(x_max, f64::from(bins.tallest()) * 1.1);
    let chart = xy_axes(&body, &axes, theme)?;
    let screen = chart.use_screen_coord();
    let w = bins.width_s;
    // Admitted from zero, then rejected on top of them: all the blue bars first.
    let bar = |i: usize, from: u32, to: u32, color| {
        let x = i as f64 * w;
        let corners = [
            chart.map_coordinate(&(x, f64::from(from))),
            chart.map_coordinate(&(x + w * 0.92, f64::from(to))),
        ];
        legend::block(&screen, corners, rgb(color).to_rgba())
    };
    for (i, &a) in bins.admitted.iter().enumerate() {
        bar(i, 0, a, BLUE)?;
    }
    for (i, (&a, &r)) in bins.admitted.iter().zip(&bins.rejected).enumerate() {
        bar(i, a, a + r, ORANGE)?;
    }
    area.present().map_err(err)
}

/// Draws the trailing-window count against the limit: green while within it, red where the
/// literal rule is broken, with the limit and (if known) the theoretical bound as lines.
pub fn window_chart<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    times_s: &[f64],
    counts: &[f64],
    limit: f64,
    bound: Option<f64>,
    x_max: f64,
    theme: Theme,
) -> ChartResult {
    area.fill(&theme.bg).map_err(err)?;
    let peak = counts
        .iter()
        .copied()
        .fold(limit, f64::max)
        .max(bound.unwrap_or(0.0));
    let points: Vec<(f64, f64)> = times_s
        .iter()
        .copied()
        .zip(counts.iter().copied())
        .collect();
    let over = points.iter().any(|p| p.1 > limit);
    let limit_line = legend::reference(0, theme);
    let mut entries = vec![(
        "admitted in the window".to_owned(),
        Swatch::Line(Stroke::solid(rgb(GREEN), 2), false),
    )];
    if over {
        entries.push(("over the limit".to_owned(), Swatch::Dot(rgb(RED))));
    }
    entries.push((
        format!("limit L = {}", fixed(limit, 0)),
        Swatch::Line(limit_line, false),
    ));
    if let Some(b) = bound {
        entries.push((
            format!("worst case in theory = {}", fixed(b, 0)),
            Swatch::Line(legend::BOUND, false),
        ));
    }
    let body = frame(area, "Admitted in the trailing window", &entries, theme)?;
    let axes = time_against_counts(x_max, (peak * 1.12).max(1.0));
    let chart = xy_axes(&body, &axes, theme)?;
    let screen = chart.use_screen_coord();
    // One step line, coloured by whether each stretch is over the limit; consecutive
    // segments of one colour are one path, so a long run costs a few strokes, not thousands.
    let mut runs: Vec<(bool, Vec<(f64, f64)>)> = Vec::new();
    for w in points.windows(2) {
        let over = w[0].1 > limit;
        match runs.last_mut() {
            Some((o, path)) if *o == over => path.extend([(w[1].0, w[0].1), w[1]]),
            _ => runs.push((over, vec![w[0], (w[1].0, w[0].1), w[1]])),
        }
    }
    for (over, path) in runs {
        let stroke = if over {
            Stroke::solid(rgb(RED), 3)
        } else {
            Stroke::solid(rgb(GREEN), 2)
        };
        stroke.plot(&chart, &path)?;
    }
    if over {
        for p in points.iter().filter(|p| p.1 > limit) {
            legend::dot(&screen, chart.map_coordinate(p), rgb(RED))?;
        }
    }
    limit_line.plot(&chart, &[(0.0, limit), (x_max, limit)])?;
    if let Some(b) = bound {
        legend::BOUND.plot(&chart, &[(0.0, b), (x_max, b)])?;
    }
    area.present().map_err(err)
}

/// An XY chart of several lines, with optional horizontal reference lines.
pub struct XyChart<'a> {
    /// The caption.
    pub title: &'a str,
    /// The x axis label.
    pub x_label: &'a str,
    /// The y axis label.
    pub y_label: &'a str,
    /// The lines.
    pub series: &'a [Series],
    /// Horizontal reference lines: value and label, drawn in the order listed as solid (`L`
    /// first), long-dashed (`2L` second) and dotted lines.
    pub references: &'a [(f64, String)],
    /// The y range; `None` fits the data.
    pub y_range: Option<(f64, f64)>,
    /// The x range; `None` fits the data.
    pub x_range: Option<(f64, f64)>,
}

impl std::fmt::Debug for XyChart<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("XyChart")
            .field("title", &self.title)
            .finish_non_exhaustive()
    }
}

impl XyChart<'_> {
    /// The x and y ranges: those given, else the data's and the reference lines', the y range
    /// from zero with a tenth of room above.
    fn ranges(&self) -> (Range<f64>, Range<f64>) {
        let all = self.series.iter().flat_map(|s| s.points.iter());
        let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
        for &(x, y) in all {
            x0 = x0.min(x);
            x1 = x1.max(x);
            y0 = y0.min(y);
            y1 = y1.max(y);
        }
        for (r, _) in self.references {
            y0 = y0.min(*r);
            y1 = y1.max(*r);
        }
        if x0 > x1 {
            (x0, x1, y0, y1) = (0.0, 1.0, 0.0, 1.0);
        }
        let (y0, y1) = self
            .y_range
            .unwrap_or((y0.min(0.0), y1 + (y1 - y0.min(0.0)).abs() * 0.1 + 1e-9));
        let (x0, x1) = self.x_range.unwrap_or((x0, x1));
        let x1 = if x1 > x0 { x1 } else { x0 + 1.0 };
        (x0..x1, y0..y1)
    }
}

/// Draws an [`XyChart`].
pub fn xy_chart<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    spec: &XyChart<'_>,
    theme: Theme,
) -> ChartResult {
    area.fill(&theme.bg).map_err(err)?;
    let (x, y) = spec.ranges();
    let lines: Vec<(Stroke, &Series)> = spec
        .series
        .iter()
        .map(|s| (Stroke::solid(rgb(s.color), 2), s))
        .collect();
    let references: Vec<(Stroke, f64)> = spec
        .references
        .iter()
        .enumerate()
        .map(|(i, r)| (legend::reference(i, theme), r.0))
        .collect();
    let entries: Vec<Entry> = lines
        .iter()
        .map(|(stroke, s)| {
            let swatch = if s.line {
                Swatch::Line(*stroke, s.markers)
            } else {
                Swatch::Dot(stroke.color)
            };
            (s.name.clone(), swatch)
        })
        .chain(
            references
                .iter()
                .zip(spec.references)
                .map(|((stroke, _), (_, label))| (label.clone(), Swatch::Line(*stroke, false))),
        )
        .collect();
    let body = frame(area, spec.title, &entries, theme)?;
    let axes = Axes {
        x: x.clone(),
        y,
        x_desc: spec.x_label,
        y_desc: spec.y_label,
        y_labels: 10,
        y_counts: false,
        sides: (0, 0),
    };
    let chart = xy_axes(&body, &axes, theme)?;
    let screen = chart.use_screen_coord();
    for (stroke, v) in &references {
        stroke.plot(&chart, &[(x.start, *v), (x.end, *v)])?;
    }
    for (stroke, s) in lines {
        if s.line {
            stroke.plot(&chart, &s.points)?;
        }
        if s.markers || !s.line {
            for p in &s.points {
                legend::dot(&screen, chart.map_coordinate(p), stroke.color)?;
            }
        }
    }
    area.present().map_err(err)
}

/// Draws labelled horizontal bars (one per limiter, say), with a value printed at each end.
/// It uses the same `f64 × f64` coordinates as the other charts, which keeps the page's wasm
/// to one copy of plotters' axis code. The bars' labels take at most half the width (a longer
/// one is shortened), and the value axis reaches far enough for every value's text.
pub fn bar_chart<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    bars: &[(String, f64, Rgb)],
    max: f64,
    unit: &str,
    theme: Theme,
) -> ChartResult {
    area.fill(&theme.bg).map_err(err)?;
    let body = frame(area, title, &[], theme)?;
    let style = font(12.0).color(&theme.fg);
    let mut width = |s: &str| Ok(text::measure(&body, s, &style)?.0);
    let (w, _) = body.dim_in_pixel();
    let mut labels = Vec::with_capacity(bars.len());
    for (label, _, _) in bars {
        labels.push(text::shorten(label, w as i32 / 2, &mut width)?);
    }
    let values: Vec<String> = bars
        .iter()
        .map(|b| format!("{}{unit}", fixed(b.1, 1)))
        .collect();
    let ends: Vec<(f64, &str)> = bars
        .iter()
        .zip(&values)
        .map(|(b, t)| (b.1, t.as_str()))
        .collect();
    let chart = frame::bar_axes(&body, &labels, &ends, max, theme)?;
    let screen = chart.use_screen_coord();
    for (i, (_, v, c)) in bars.iter().enumerate() {
        let y = i as f64;
        let corners = [
            chart.map_coordinate(&(0.0, y - 0.38)),
            chart.map_coordinate(&(*v, y + 0.38)),
        ];
        legend::block(&screen, corners, rgb(*c).to_rgba())?;
    }
    // Each value after its bar's end (the end kept within the plot, as plotters keeps a
    // point), in the plot's pixels.
    let style = style.pos(Pos::new(HPos::Left, VPos::Center));
    let (px, py) = chart.get_pixel_range();
    let plot = chart.strip_coord_spec();
    for (i, (bar, text)) in bars.iter().zip(values).enumerate() {
        let (x, y) = chart.map_coordinate(&(bar.1, i as f64));
        let (x, y) = (x.min(px.end).max(px.start), y.min(py.end).max(py.start));
        let at = (x - px.start + frame::VALUE_GAP, y - py.start);
        plot.draw_text(&text, &style, at).map_err(err)?;
    }
    area.present().map_err(err)
}

/// Drawing a [`Plot`]: one value, one drawing, on a canvas in the page and in SVG from the CLI
/// and the page's export. Every kind of plot is drawn by the chart function of its kind.
pub trait Draw {
    /// Draws the chart on `area`.
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>, theme: Theme) -> ChartResult;

    /// The chart as an SVG document of `width` × `height`, from the same drawing code.
    #[cfg(feature = "svg")]
    fn svg(&self, width: u32, height: u32, theme: Theme) -> Result<String, String> {
        let mut out = String::new();
        {
            let area = SVGBackend::with_string(&mut out, (width, height)).into_drawing_area();
            self.draw(&area, theme)?;
        }
        Ok(out)
    }
}

impl Draw for Plot {
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>, theme: Theme) -> ChartResult {
        match self {
            Plot::Bars {
                title,
                bars,
                max,
                unit,
            } => bar_chart(area, title, bars, *max, unit, theme),
            xy => draw_xy(xy, area, theme),
        }
    }
}

/// Draws a plot on time or value axes: every kind but [`Plot::Bars`], which is an error here.
/// The page's main module draws only these, and through this function leaves the bar chart's
/// code out of its wasm; [`Draw::draw`] draws every kind.
pub fn draw_xy<DB: DrawingBackend>(
    plot: &Plot,
    area: &DrawingArea<DB, Shift>,
    theme: Theme,
) -> ChartResult {
    match plot {
        Plot::Arrivals(bins) => arrivals_chart(area, bins, theme),
        Plot::Window {
            times_s,
            counts,
            limit,
            bound,
            x_max,
        } => window_chart(area, times_s, counts, *limit, *bound, *x_max, theme),
        Plot::Xy {
            title,
            x_label,
            y_label,
            series,
            references,
            y_range,
            x_range,
        } => {
            let spec = XyChart {
                title,
                x_label,
                y_label,
                series,
                references,
                y_range: *y_range,
                x_range: *x_range,
            };
            xy_chart(area, &spec, theme)
        }
        Plot::Bars { .. } => Err("bars are drawn by Draw::draw, not draw_xy".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn svg(draw: impl FnOnce(&DrawingArea<SVGBackend<'_>, Shift>) -> ChartResult) -> String {
        let mut out = String::new();
        {
            let area = SVGBackend::with_string(&mut out, (640, 240)).into_drawing_area();
            draw(&area).expect("draws");
        }
        out
    }

    #[test]
    fn a_series_without_a_line_marks_its_points_alone() {
        let draw = |markers: bool, line: bool| {
            let series = [Series {
                name: "room instants".into(),
                points: vec![(1.0, 10.0), (2.0, 20.0), (3.0, 15.0)],
                color: RED,
                markers,
                line,
            }];
            let spec = XyChart {
                title: "t",
                x_label: "x",
                y_label: "y",
                series: &series,
                references: &[],
                y_range: None,
                x_range: None,
            };
            let out = svg(|a| xy_chart(a, &spec, Theme::LIGHT));
            (
                out.matches("<circle").count(),
                out.matches("<polyline").count(),
            )
        };
        let (line_dots, line_paths) = draw(false, true);
        let (marked_dots, marked_paths) = draw(true, true);
        let (alone_dots, alone_paths) = draw(false, false);
        // A line alone has no dots; marked, a dot a point; without the line, a dot a point
        // and one in the legend, and one path fewer (the series' own).
        assert_eq!(line_dots, 0);
        assert_eq!(marked_dots, 3 + 1);
        assert_eq!(marked_paths, line_paths);
        assert_eq!(alone_dots, 3 + 1);
        assert!(
            alone_paths < line_paths,
            "{alone_paths} paths, {line_paths} with the line"
        );
    }

    #[test]
    fn bins_count_every_decision_once() {
        let times = [0, 1, 999_999, 1_000_000, 5_999_999];
        let oks = [true, false, true, true, false];
        let b = bin_decisions(&times, &oks, 6_000_000, 6);
        assert_eq!(b.admitted, [2, 1, 0, 0, 0, 0]);
        assert_eq!(b.rejected, [1, 0, 0, 0, 0, 1]);
        assert!((b.width_s - 1.0).abs() < 1e-12);
    }

    #[test]
    fn window_steps_rise_and_fall() {
        let (xs, ys) = window_steps(&[1.0, 2.0, 11.0], 10.0);
        assert_eq!(xs, [0.0, 1.0, 2.0, 11.0, 11.0, 12.0, 21.0]);
        assert_eq!(ys, [0.0, 1.0, 2.0, 1.0, 2.0, 1.0, 0.0]);
    }

    #[test]
    fn decimation_keeps_every_peak_and_bounds_the_size() {
        let xs: Vec<f64> = (0..100_000).map(f64::from).collect();
        let mut ys: Vec<f64> = (0..100_000).map(|i| f64::from(i % 50)).collect();
        ys[77_777] = 1_000.0;
        let (dx, dy) = decimate_max(&xs, &ys, 2_000);
        assert!(dx.len() <= 2_002, "{}", dx.len());
        assert!(dy.contains(&1_000.0));
        assert!(dx.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(decimate_max(&xs[..10], &ys[..10], 2_000).0.len(), 10);
    }

    /// The text of every `<text>` element of an SVG.
    fn texts(svg: &str) -> Vec<String> {
        svg.split("</text>")
            .filter_map(|t| t.rsplit_once('>').map(|(_, text)| text.trim().to_owned()))
            .filter(|t| !t.is_empty())
            .collect()
    }

    /// Counts are written as whole numbers and a short axis keeps one decimal.
    #[test]
    fn tick_labels_are_whole_numbers_on_a_long_axis() {
        let times: Vec<f64> = (0..=120).map(f64::from).collect();
        let counts: Vec<f64> = times.iter().map(|t| t % 70.0).collect();
        let long = texts(&svg(|a| {
            window_chart(a, &times, &counts, 60.0, Some(120.0), 120.0, Theme::LIGHT)
        }));
        for label in ["120", "60", "0"] {
            assert!(
                long.iter().any(|t| t == label),
                "{label} missing from {long:?}"
            );
        }
        assert!(
            !long.iter().any(|t| t.ends_with(".0")),
            "a whole count written with a decimal: {long:?}"
        );
        let short = texts(&svg(|a| {
            window_chart(a, &[0.0, 1.0], &[1.0, 2.0], 3.0, None, 1.0, Theme::LIGHT)
        }));
        assert!(
            short
                .iter()
                .any(|t| t.contains('.') && t.parse::<f64>().is_ok()),
            "a short axis keeps a decimal: {short:?}"
        );
    }

    #[test]
    fn the_window_chart_marks_violations_in_red_and_draws_the_limit() {
        let times = [0.0, 1.0, 2.0, 3.0];
        let clean = svg(|a| {
            window_chart(
                a,
                &times,
                &[1.0, 2.0, 3.0, 2.0],
                5.0,
                Some(9.0),
                4.0,
                Theme::LIGHT,
            )
        });
        let broken = svg(|a| {
            window_chart(
                a,
                &times,
                &[1.0, 6.0, 7.0, 2.0],
                5.0,
                Some(9.0),
                4.0,
                Theme::LIGHT,
            )
        });
        let red = "#D55E00";
        assert!(!clean.contains(red), "no red when the rule holds");
        assert!(broken.contains(red), "red where the rule breaks");
        for s in [&clean, &broken] {
            assert!(s.contains("limit L = 5"));
            assert!(s.contains("worst case in theory = 9"));
        }
    }

    #[test]
    fn the_arrivals_chart_draws_both_kinds_of_bar() {
        let b = bin_decisions(&[0, 10, 2_000_000], &[true, false, true], 3_000_000, 3);
        let s = svg(|a| arrivals_chart(a, &b, Theme::DARK));
        assert!(s.contains("#0072B2") && s.contains("#E69F00"));
        assert!(s.contains("admitted") && s.contains("rejected"));
        assert!(s.contains("#16191D"), "dark background");
    }

    #[test]
    fn xy_and_bar_charts_draw_their_labels() {
        let series = [Series {
            name: "simulated".into(),
            points: vec![(0.0, 100.0), (30.0, 150.0)],
            color: BLUE,
            markers: true,
            line: true,
        }];
        let refs = [(200.0, "2L".to_string())];
        let spec = XyChart {
            title: "worst window",
            x_label: "start (s)",
            y_label: "requests",
            series: &series,
            references: &refs,
            y_range: None,
            x_range: None,
        };
        let s = svg(|a| xy_chart(a, &spec, Theme::LIGHT));
        assert!(s.contains("simulated") && s.contains("2L") && s.contains("start (s)"));
        let bars = [
            ("sliding-log".to_string(), 71.0, BLUE),
            ("fixed-window".to_string(), 80.5, ORANGE),
        ];
        let s = svg(|a| bar_chart(a, "served", &bars, 100.0, "%", Theme::LIGHT));
        assert!(s.contains("sliding-log") && s.contains("80.5%"));
    }

    /// Asserts that `plot` draws exactly what `chart` draws.
    fn draws_as(
        plot: &Plot,
        theme: Theme,
        chart: impl FnOnce(&DrawingArea<SVGBackend<'_>, Shift>) -> ChartResult,
    ) {
        assert_eq!(svg(|a| plot.draw(a, theme)), svg(chart));
    }

    #[test]
    fn a_plot_draws_the_same_as_its_chart_function_and_has_its_data_as_csv() {
        let bins = bin_decisions(&[0, 1, 2_500_000], &[true, false, true], 3_000_000, 3);
        let plot = Plot::Arrivals(bins.clone());
        draws_as(&plot, Theme::LIGHT, |a| {
            arrivals_chart(a, &bins, Theme::LIGHT)
        });
        assert_eq!(
            plot.csv(),
            "bin_start_s,bin_end_s,admitted,rejected\n0,1,1,1\n1,2,0,0\n2,3,1,0\n"
        );
        let w = Plot::Window {
            times_s: vec![0.0, 1.5],
            counts: vec![1.0, 2.0],
            limit: 2.0,
            bound: Some(3.0),
            x_max: 2.0,
        };
        draws_as(&w, Theme::DARK, |a| {
            window_chart(
                a,
                &[0.0, 1.5],
                &[1.0, 2.0],
                2.0,
                Some(3.0),
                2.0,
                Theme::DARK,
            )
        });
        let bars = vec![("a".to_owned(), 50.0, BLUE), ("b".to_owned(), 75.0, RED)];
        let b = Plot::Bars {
            title: "served".into(),
            bars: bars.clone(),
            max: 100.0,
            unit: "%".into(),
        };
        draws_as(&b, Theme::LIGHT, |a| {
            bar_chart(a, "served", &bars, 100.0, "%", Theme::LIGHT)
        });
        // The study's plots: lines in palette order, each point marked, 0–105 on the y axis.
        let lines = vec![
            ("a, \"b\"".to_owned(), vec![(1.0, 2.5), (2.0, 50.0)]),
            ("c".to_owned(), vec![(1.0, 90.0)]),
        ];
        let xy = Plot::shares("t", "x", "y", lines);
        let series = [
            Series {
                name: "a, \"b\"".into(),
                points: vec![(1.0, 2.5), (2.0, 50.0)],
                color: BLUE,
                markers: true,
                line: true,
            },
            Series {
                name: "c".into(),
                points: vec![(1.0, 90.0)],
                color: ORANGE,
                markers: true,
                line: true,
            },
        ];
        let spec = XyChart {
            title: "t",
            x_label: "x",
            y_label: "y",
            series: &series,
            references: &[],
            y_range: Some((0.0, 105.0)),
            x_range: None,
        };
        draws_as(&xy, Theme::LIGHT, |a| xy_chart(a, &spec, Theme::LIGHT));
        assert_eq!(
            xy.csv(),
            "series,x,y\n\"a, \"\"b\"\"\",1,2.5\n\"a, \"\"b\"\"\",2,50\nc,1,90\n"
        );
    }

    #[test]
    fn draw_xy_draws_every_kind_but_bars_as_draw_does() {
        let bins = bin_decisions(&[0, 1, 2_500_000], &[true, false, true], 3_000_000, 3);
        let plots = [
            Plot::Arrivals(bins),
            Plot::Window {
                times_s: vec![0.0, 1.5],
                counts: vec![1.0, 3.0],
                limit: 2.0,
                bound: Some(3.0),
                x_max: 2.0,
            },
            Plot::shares("t", "x", "y", vec![("a".into(), vec![(1.0, 2.5)])]),
        ];
        for plot in &plots {
            for theme in [Theme::LIGHT, Theme::DARK] {
                draws_as(plot, theme, |a| draw_xy(plot, a, theme));
            }
        }
        let bars = Plot::Bars {
            title: "served".into(),
            bars: vec![("a".into(), 50.0, BLUE)],
            max: 100.0,
            unit: "%".into(),
        };
        let mut out = String::new();
        let area = SVGBackend::with_string(&mut out, (640, 240)).into_drawing_area();
        assert!(draw_xy(&bars, &area, Theme::LIGHT).is_err());
    }

    #[test]
    #[cfg(feature = "svg")]
    fn svg_export_is_a_whole_document() {
        let plot = Plot::Bars {
            title: "served".into(),
            bars: vec![("sliding log".into(), 93.5, BLUE)],
            max: 100.0,
            unit: "%".into(),
        };
        let out = plot.svg(640, 240, Theme::DARK).expect("draws");
        assert!(
            out.starts_with("<svg") && out.trim_end().ends_with("</svg>"),
            "{}",
            &out[..60]
        );
        assert!(out.contains("sliding log") && out.contains("served"));
    }

    /// The legend is never left out, and a chart too small for its frame still draws.
    #[test]
    fn the_legend_names_every_line_even_on_a_small_plot() {
        let series = [Series {
            name: "sliding log".into(),
            points: vec![(0.0, 1.0), (1.0, 2.0)],
            color: BLUE,
            markers: false,
            line: true,
        }];
        let refs = [(1.5, "limit L = 2".to_owned())];
        let spec = XyChart {
            title: "t",
            x_label: "x",
            y_label: "y",
            series: &series,
            references: &refs,
            y_range: None,
            x_range: None,
        };
        for (w, h) in [(640, 240), (200, 90), (40, 20), (0, 0)] {
            let mut out = String::new();
            {
                let area = SVGBackend::with_string(&mut out, (w, h)).into_drawing_area();
                xy_chart(&area, &spec, Theme::LIGHT).expect("draws");
            }
            if w >= 200 {
                assert!(
                    out.contains("\nsliding log\n") && out.contains("\nlimit L = 2\n"),
                    "{out}"
                );
            }
        }
    }
}
