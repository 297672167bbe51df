//! A chart's frame: its caption (wrapped to the width), its legend strip below the caption
//! ([`crate::legend`]), and axes whose label areas are sized to the tick labels and titles they
//! hold, measured, so that nothing is cut at an edge and no text runs into other text.

use crate::legend::{self, Entry};
use crate::style::{err, font, Theme};
use crate::text::{measure, shorten, wrap};
use crate::ticks::{Axis, Chart};
use plotters::coord::cartesian::MeshLine;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use ratelab::decimal::fixed;
use std::ops::Range;

/// The margin around every chart, in pixels.
const MARGIN: i32 = 8;
/// The room between an axis and its tick labels: plotters puts them twice the tick's length
/// away, and the ticks are 5 pixels long.
const TICK: i32 = 5;
/// The gap between tick labels and the axis title beside them.
const GAP: i32 = 6;
/// The room between a bar's end and its value.
pub(crate) const VALUE_GAP: i32 = 4;
/// The most lines a caption takes; the last is shortened if the title needs more.
const CAPTION_LINES: usize = 3;

/// Draws the caption, wrapped to the width, and the legend below it on `area`, inside the
/// chart's margin, and returns the area left for the plot and its axes.
pub(crate) fn frame<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    entries: &[Entry],
    theme: Theme,
) -> Result<DrawingArea<DB, Shift>, String> {
    let inner = area.margin(MARGIN, MARGIN, MARGIN, MARGIN);
    let below = caption(&inner, title, theme)?;
    legend::strip(&below, entries, theme)
}

/// Draws `title` centred at the top of `area`, on as many lines as the width needs, and
/// returns the area below it.
fn caption<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    theme: Theme,
) -> Result<DrawingArea<DB, Shift>, String> {
    if title.is_empty() {
        return Ok(area.clone());
    }
    const PAD: i32 = 5;
    let style = font(14.0).color(&theme.fg);
    let (w, _) = area.dim_in_pixel();
    let mut width = |s: &str| Ok(measure(area, s, &style)?.0);
    let lines = wrap(title, w as i32, CAPTION_LINES, &mut width)?;
    // One line's height, from a short text: the browser measures a long one in a box that may wrap.
    let line_h = measure(area, "0", &style)?.1 + 3;
    for (i, line) in lines.iter().enumerate() {
        area.draw(&Text::new(
            line.clone(),
            (w as i32 / 2, PAD + line_h * i as i32),
            style.pos(Pos::new(HPos::Center, VPos::Top)),
        ))
        .map_err(err)?;
    }
    let used = PAD * 2 + line_h * lines.len() as i32;
    Ok(area.split_vertically(used).1)
}

/// An XY chart's axes: their ranges and titles, and the y axis's labels.
#[derive(Debug, Clone)]
pub(crate) struct Axes<'s> {
    /// The x range.
    pub x: Range<f64>,
    /// The y range.
    pub y: Range<f64>,
    /// The x axis's title ("" for none).
    pub x_desc: &'s str,
    /// The y axis's title ("" for none).
    pub y_desc: &'s str,
    /// The most labels on the y axis.
    pub y_labels: usize,
    /// Whether the y axis counts (requests): its ticks are then whole numbers on any range.
    pub y_counts: bool,
    /// The least room left and right of the plot: panels sharing the x axis take the same
    /// ([`shared_sides`]), so that their plots line up; `(0, 0)` otherwise.
    pub sides: (i32, i32),
}

/// An axis's ticks: where plotters puts them and how they are written.
#[derive(Debug, Clone)]
struct Ticks {
    /// The axis's range.
    range: Range<f64>,
    /// Whether ticks fall on whole numbers only.
    counts: bool,
}

impl Ticks {
    fn new(range: &Range<f64>, counts: bool) -> Ticks {
        Ticks {
            range: range.clone(),
            counts,
        }
    }

    /// At most `n` labels, and on an axis of counts at most one per whole number, so that
    /// plotters' steps (1, 2 or 5 times a power of ten) are whole.
    fn most(&self, n: usize) -> usize {
        if self.counts {
            let span = (self.range.end - self.range.start).max(0.0);
            n.min(span.floor() as usize + 1).max(1)
        } else {
            n
        }
    }

    /// A tick label: a whole number on an axis of counts or spanning ten or more (a count is
    /// written 60, not 60.0), one decimal otherwise.
    fn label(&self, v: f64) -> String {
        if self.counts || self.range.end - self.range.start >= 10.0 {
            fixed(v, 0)
        } else {
            fixed(v, 1)
        }
    }

    /// The labels plotters writes given at most `n` of them.
    fn labels(&self, n: usize) -> Vec<String> {
        crate::ticks::key_points((self.range.start, self.range.end), self.most(n))
            .into_iter()
            .map(|v| self.label(v))
            .collect()
    }
}

/// The widest of `labels`, measured.
fn widest<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    labels: &[String],
    style: &TextStyle,
) -> Result<i32, String> {
    let mut w = 0;
    for l in labels {
        w = w.max(measure(area, l, style)?.0);
    }
    Ok(w)
}

/// Where an XY chart's parts go in its area, in pixels: the margins above and right of the
/// plot, the label areas below and left of it, and the axis titles' lines.
#[derive(Debug, Clone, PartialEq, Eq)]
struct AxesLayout {
    /// Above the plot: room for half the top y label.
    top: i32,
    /// Right of the plot: room for half the last x label.
    right: i32,
    /// Below the plot: x labels, then the x title.
    x_area: i32,
    /// Left of the plot: the y title, then y labels.
    y_area: i32,
    /// The x title, on one or two lines.
    x_title: Vec<String>,
    /// The y title, on one or two lines.
    y_title: Vec<String>,
    /// How many labels each axis takes.
    counts: (usize, usize),
}

impl AxesLayout {
    /// The plot's width and height in an area `w` × `h`.
    fn plot(&self, (w, h): (i32, i32)) -> (i32, i32) {
        (
            (w - self.y_area - self.right).max(1),
            (h - self.top - self.x_area).max(1),
        )
    }
}

/// The room an axis title of `lines` lines takes beside its labels, each line `text_h` high.
fn title_room(lines: usize, text_h: i32) -> i32 {
    if lines == 0 {
        0
    } else {
        GAP + (text_h + 1) * lines as i32
    }
}

/// Lays out an XY chart's axes in `area`: label areas as wide and tall as the labels and
/// titles they hold, measured; labels thinned to the room the plot has; titles wrapped onto
/// two lines where one is too long for the plot, and shortened beyond that.
fn axes_layout<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    axes: &Axes,
    style: &TextStyle,
) -> Result<AxesLayout, String> {
    let (w, h) = area.dim_in_pixel();
    let size = (w as i32, h as i32);
    let text_h = measure(area, "0", style)?.1;
    let (x_ticks, y_ticks) = (
        Ticks::new(&axes.x, false),
        Ticks::new(&axes.y, axes.y_counts),
    );
    let x_widest = widest(area, &x_ticks.labels(10), style)?;
    let mut width = |s: &str| Ok(measure(area, s, style)?.0);
    let mut out = AxesLayout {
        top: text_h / 2 + 2,
        right: (x_widest / 2 + 2).max(MARGIN).max(axes.sides.1),
        x_area: 0,
        y_area: 0,
        x_title: vec![axes.x_desc.to_owned()],
        y_title: Vec::new(),
        counts: (2, 2),
    };
    // Twice: the x title's lines set the plot's height, which sets the y labels and title,
    // which set its width, which sets the x title's lines.
    for _ in 0..2 {
        let x_lines = usize::from(!axes.x_desc.is_empty()) * out.x_title.len();
        out.x_area = 2 * TICK + text_h + title_room(x_lines, text_h) + 2;
        let (_, plot_h) = out.plot(size);
        let y_count = y_ticks.most(y_label_count(axes.y_labels, plot_h, text_h));
        out.y_title = wrap(axes.y_desc, plot_h, 2, &mut width)?;
        let y_widest = widest(area, &y_ticks.labels(y_count), style)?;
        out.y_area =
            (2 * TICK + y_widest + title_room(out.y_title.len(), text_h) + 2).max(axes.sides.0);
        let (plot_w, _) = out.plot(size);
        out.x_title = wrap(axes.x_desc, plot_w, 2, &mut width)?;
        out.counts = (x_label_count(&x_ticks, plot_w, area, style)?, y_count);
    }
    // The second pass may have given the x title a line the plot's height did not allow for.
    let x_lines = out.x_title.len();
    out.x_area = out
        .x_area
        .max(2 * TICK + text_h + title_room(x_lines, text_h) + 2);
    let (_, plot_h) = out.plot(size);
    for line in &mut out.y_title {
        *line = shorten(line, plot_h, &mut width)?;
    }
    Ok(out)
}

/// The room left and right of the plot that panels sharing an x axis all take: the most any
/// of them needs.
pub(crate) fn shared_sides<DB: DrawingBackend>(
    panels: &[(&DrawingArea<DB, Shift>, &Axes)],
    theme: Theme,
) -> Result<(i32, i32), String> {
    let style = font(12.0).color(&theme.fg);
    let mut sides = (0, 0);
    for (area, axes) in panels {
        let layout = axes_layout(area, axes, &style)?;
        sides = (sides.0.max(layout.y_area), sides.1.max(layout.right));
    }
    Ok(sides)
}

/// Places an XY chart's plot in `area` and draws its axes, grid, labels and titles, as
/// [`axes_layout`] lays them out: nothing cut at an edge, and the y title clear of the widest
/// y label.
pub(crate) fn xy_axes<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    axes: &Axes,
    theme: Theme,
) -> Result<Chart<DB>, String> {
    let style = font(12.0).color(&theme.fg);
    let layout = axes_layout(area, axes, &style)?;
    let room = [layout.top, layout.right, layout.x_area, layout.y_area];
    let (chart, label_areas) = place(area, room, axes.x.clone(), axes.y.clone());
    let (x_ticks, y_ticks) = (
        Ticks::new(&axes.x, false),
        Ticks::new(&axes.y, axes.y_counts),
    );
    let mesh = Mesh {
        counts: layout.counts,
        y_grid: true,
    };
    mesh.draw(
        &chart,
        label_areas,
        (&|v| x_ticks.label(v), &|v| y_ticks.label(v)),
        &style,
        theme,
    )?;
    titles(area, &layout, &style)?;
    Ok(chart)
}

/// Places a plot in `area` with `room` left around it, in pixels, `[top, right, bottom,
/// left]`: margins above and right of it, label areas below and left. Laid out as plotters'
/// `ChartBuilder` lays a chart out (the same pixels, so that charts look as they did when it
/// drew them), on `x` × `y`. Also returns the label areas, where they have room.
fn place<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    [top, right, bottom, left]: [i32; 4],
    x: Range<f64>,
    y: Range<f64>,
) -> (Chart<DB>, LabelAreas<DB>) {
    let (w, h) = area.dim_in_pixel();
    let (w, h) = (w as i32, h as i32);
    // The area less its margins, split at the label areas' edges; the plot is the middle
    // cell. Sorted, as plotters sorts them, so that a chart too small for its labels draws.
    let mut xs = [0, w - right, left, w - right];
    let mut ys = [top, h, top, h - bottom];
    xs.sort_unstable();
    ys.sort_unstable();
    let cell = |x0: i32, x1: i32, y0: i32, y1: i32| {
        (x1 > x0 && y1 > y0).then(|| area.margin(y0, h - y1, x0, w - x1))
    };
    // Above the plot only when the plot has no height left (as plotters does then).
    let labels = [
        cell(xs[1], xs[2], ys[0], ys[1]),
        cell(xs[0], xs[1], ys[1], ys[2]),
        cell(xs[1], xs[2], ys[2], ys[3]),
    ];
    let plot = area.margin(ys[1], h - ys[2], xs[1], w - xs[2]);
    let (px, py) = plot.get_pixel_range();
    let pixels = (px.start..px.end - 1, py.end - 1..py.start);
    (
        plot.apply_coord_spec(Cartesian2d::new(Axis::from(x), Axis::from(y), pixels)),
        labels,
    )
}

/// The label areas above, left of and below a plot, where they have room.
type LabelAreas<DB> = [Option<DrawingArea<DB, Shift>>; 3];

/// A tick label's text, from its value.
type Format<'f> = &'f dyn Fn(f64) -> String;

/// An XY chart's grid and axes, as plotters' mesh draws them (its light lines are in the
/// background colour, unseen, so not drawn here).
struct Mesh {
    /// How many labels, at most, on the x and the y axis.
    counts: (usize, usize),
    /// Whether the y axis's ticks have grid lines across the plot.
    y_grid: bool,
}

impl Mesh {
    /// Draws the grid, then the axes with their ticks and labels in their label areas
    /// (`[above, left, below]`), written by `format` (the x label's, the y label's).
    fn draw<DB: DrawingBackend>(
        &self,
        chart: &Chart<DB>,
        [above, left, below]: LabelAreas<DB>,
        format: (Format, Format),
        style: &TextStyle,
        theme: Theme,
    ) -> Result<(), String> {
        let grid = ShapeStyle::from(&theme.grid);
        let (mut xl, mut yl) = (Vec::new(), Vec::new());
        chart
            .draw_mesh(
                |b, line| {
                    let draw = match line {
                        MeshLine::XMesh((x, _), _, v) => {
                            xl.push((x, format.0(*v)));
                            true
                        }
                        MeshLine::YMesh((_, y), _, v) => {
                            yl.push((y, format.1(*v)));
                            self.y_grid
                        }
                    };
                    if draw {
                        line.draw(b, &grid)
                    } else {
                        Ok(())
                    }
                },
                self.counts.1,
                self.counts.0,
            )
            .map_err(err)?;
        let axis = ShapeStyle::from(&theme.fg);
        let (px, py) = chart.get_pixel_range();
        // In a label area's pixels: the axis along the plot, then each label and its tick.
        let side = |area: Option<DrawingArea<DB, Shift>>, labels: &[(i32, String)], side| {
            let Some(area) = area else {
                return Ok(());
            };
            let (w, h) = area.dim_in_pixel();
            let (w, h) = (w as i32, h as i32);
            let (along, base) = match side {
                Side::Left => (py.end - 1 - py.start, py.start),
                _ => (px.end - 1 - px.start, px.start),
            };
            let (from, to) = match side {
                Side::Above => ((0, h - 1), (along, h - 1)),
                Side::Left => ((w - 1, 0), (w - 1, along)),
                Side::Below => ((0, 0), (along, 0)),
            };
            legend::polyline(&area, &[from, to], axis)?;
            for (p, text) in labels {
                let p = p - base;
                if !(0..=along).contains(&p) {
                    continue;
                }
                let (at, pos, tick) = match side {
                    Side::Above => (
                        (p, h - 2 * TICK),
                        (HPos::Center, VPos::Bottom),
                        [(p, h - 1 - TICK), (p, h - 1)],
                    ),
                    Side::Left => (
                        (w - 2 * TICK, p),
                        (HPos::Right, VPos::Center),
                        [(w - 1 - TICK, p), (w - 1, p)],
                    ),
                    Side::Below => (
                        (p, 2 * TICK),
                        (HPos::Center, VPos::Top),
                        [(p, 0), (p, TICK)],
                    ),
                };
                let style = style.pos(Pos::new(pos.0, pos.1));
                area.draw_text(text, &style, at).map_err(err)?;
                legend::polyline(&area, &tick, axis)?;
            }
            Ok::<(), String>(())
        };
        side(above, &xl, Side::Above)?;
        side(left, &yl, Side::Left)?;
        side(below, &xl, Side::Below)
    }
}

/// Where a label area is, beside the plot.
#[derive(Debug, Clone, Copy)]
enum Side {
    /// Above it: the x labels of a chart with no height left for its plot.
    Above,
    /// Left of it: the y labels.
    Left,
    /// Below it: the x labels.
    Below,
}

/// Draws the axis titles: the x title's lines centred under the x labels, the y title's
/// turned to read upwards, from the left edge, centred on the plot.
fn titles<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    layout: &AxesLayout,
    style: &TextStyle,
) -> Result<(), String> {
    let (w, h) = area.dim_in_pixel();
    let (plot_w, plot_h) = layout.plot((w as i32, h as i32));
    let line_h = measure(area, "0", style)?.1 + 1;
    let top = Pos::new(HPos::Center, VPos::Top);
    let x_middle = layout.y_area + plot_w / 2;
    let below = layout.top + plot_h + 2 * TICK + line_h + GAP;
    for (i, line) in layout.x_title.iter().enumerate() {
        let at = (x_middle, below + line_h * i as i32);
        area.draw(&Text::new(line.clone(), at, style.pos(top)))
            .map_err(err)?;
    }
    let turned = style.transform(FontTransform::Rotate270).pos(top);
    for (i, line) in layout.y_title.iter().enumerate() {
        let at = (line_h * i as i32, layout.top + plot_h / 2);
        area.draw(&Text::new(line.clone(), at, turned.clone()))
            .map_err(err)?;
    }
    Ok(())
}

/// Places a bar chart's plot on `area` and draws its axes: the bars' `labels` on the y axis,
/// one per bar in order, and values on the x axis from zero to past `max`, far enough that
/// the text written after each bar's end (`ends`: the bar's value and its text) ends within
/// the chart.
pub(crate) fn bar_axes<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    labels: &[String],
    ends: &[(f64, &str)],
    max: f64,
    theme: Theme,
) -> Result<Chart<DB>, String> {
    let style = font(12.0).color(&theme.fg);
    let (w, _) = area.dim_in_pixel();
    let text_h = measure(area, "0", &style)?.1;
    let y_area = 2 * TICK + widest(area, labels, &style)? + 2;
    let mut x_max = max.max(1e-9) * 1.05;
    let mut right = MARGIN;
    let mut plot_w = 1;
    // Twice: the room on the right depends on the last tick label, which depends on the range.
    for _ in 0..2 {
        let last = widest(area, &Ticks::new(&(0.0..x_max), false).labels(10), &style)?;
        right = (last / 2 + 2).max(MARGIN);
        plot_w = (w as i32 - y_area - right).max(1);
        for &(v, text) in ends {
            let text_w = VALUE_GAP + measure(area, text, &style)?.0;
            // At least a pixel: a chart too small for its labels must not divide by zero (an
            // infinite range has ticks without end).
            let room = (plot_w + right - 2 - text_w).max(plot_w / 4).max(1);
            x_max = x_max.max(v * f64::from(plot_w) / f64::from(room));
        }
    }
    let x = 0.0..x_max;
    let x_ticks = Ticks::new(&x, false);
    let x_count = x_label_count(&x_ticks, plot_w, area, &style)?;
    let n = labels.len().max(1);
    let room = [4, right, 2 * TICK + text_h + 2, y_area];
    let (chart, label_areas) = place(area, room, x, -0.5..(n as f64 - 0.5));
    let mesh = Mesh {
        counts: (x_count, n),
        y_grid: false,
    };
    let y_label = |v: f64| {
        let i = v.round();
        if (v - i).abs() < 1e-6 && i >= 0.0 {
            labels.get(i as usize).cloned().unwrap_or_default()
        } else {
            String::new()
        }
    };
    let format: (Format, Format) = (&|v| x_ticks.label(v), &y_label);
    mesh.draw(&chart, label_areas, format, &style, theme)?;
    Ok(chart)
}

/// How many y labels fit `plot_h` pixels, each `text_h` high with a little air: at most
/// `max`, at least two.
fn y_label_count(max: usize, plot_h: i32, text_h: i32) -> usize {
    let fit = plot_h / (text_h + text_h / 2).max(1);
    (fit.max(2) as usize).min(max.max(2))
}

/// The most x labels (at most ten) that sit side by side in `plot_w` pixels with room between
/// them, as measured.
fn x_label_count<DB: DrawingBackend>(
    ticks: &Ticks,
    plot_w: i32,
    area: &DrawingArea<DB, Shift>,
    style: &TextStyle,
) -> Result<usize, String> {
    for n in (3..=10).rev() {
        let labels = ticks.labels(n);
        let room = (widest(area, &labels, style)? + 12) * labels.len() as i32;
        if room <= plot_w {
            return Ok(n);
        }
    }
    Ok(2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_labels_are_whole_on_a_long_axis_or_of_counts_and_those_plotters_draws() {
        let labels = |range: Range<f64>, counts, n| Ticks::new(&range, counts).labels(n);
        assert_eq!(labels(0.0..120.0, false, 3), ["0", "50", "100"]);
        assert_eq!(labels(0.0..1.0, false, 3), ["0.0", "0.5", "1.0"]);
        // Counts are whole on a short axis too, never half a request.
        assert_eq!(labels(0.0..3.4, true, 10), ["0", "1", "2", "3"]);
        assert_eq!(labels(0.0..1.1, true, 10), ["0", "1"]);
        assert_eq!(
            labels(0.0..3.4, false, 10),
            ["0.0", "0.5", "1.0", "1.5", "2.0", "2.5", "3.0"]
        );
        assert_eq!(y_label_count(10, 60, 10), 4);
        assert_eq!(y_label_count(5, 600, 10), 5);
        assert_eq!(y_label_count(10, 5, 10), 2);
    }
}
