//! The mechanism view: the arrivals of a run with the playhead's trailing window drawn over
//! them, and under them, on the same time axis, what the limiter holds.

use crate::frame::{frame, shared_sides, xy_axes, Axes};
use crate::legend::{Entry, Stroke, Swatch};
use crate::style::{err, font, rgb, ChartResult, Theme};
use crate::ticks::Chart;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use ratelab::plot::Bins;

const BLUE: RGBColor = rgb(crate::BLUE);
const GREEN: RGBColor = rgb(crate::GREEN);
const ORANGE: RGBColor = rgb(crate::ORANGE);
const PURPLE: RGBColor = rgb(crate::PURPLE);
const RED: RGBColor = rgb(crate::RED);

/// One frame of the mechanism view: the run's data and where the playhead is.
#[derive(Debug, Clone, Copy)]
pub struct MechanismChart<'a> {
    /// Decisions per time bin over the whole run: those before the playhead are coloured by
    /// their decision, the rest drawn as still to come.
    pub bins: &'a Bins,
    /// Where the time axis ends, in seconds.
    pub x_max: f64,
    /// The playhead's time `t`, in seconds.
    pub now_s: f64,
    /// `W`, in seconds: the band is `(t − W, t]`.
    pub window_s: f64,
    /// Admissions in the band.
    pub band: u64,
    /// `L`.
    pub limit: u64,
    /// The bin the playhead is in: its index, and its decisions up to the playhead, admitted
    /// and rejected (the rest of the bin is still to come).
    pub current: (usize, u32, u32),
    /// The window boundaries the limiter resets on, in seconds (empty if none).
    pub boundaries_s: &'a [f64],
    /// The state's name on the strip's axis (`tokens`, `entries in the log`, ...).
    pub state_label: &'a str,
    /// The state after each (decimated) decision: times in seconds and values.
    pub state_xs: &'a [f64],
    /// The state's values.
    pub state_ys: &'a [f64],
    /// A second part of the state on the same axis, if it has one: its name and values
    /// (the log's admitted entries, the counter's current window).
    pub part: Option<(&'a str, &'a [f64])>,
    /// What the state is drawn against (the capacity, `L` or the burst), and its name.
    pub mark: (f64, &'a str),
    /// The state at the playhead.
    pub state_now: f64,
}

/// Draws the mechanism view: the arrivals with the band and the playhead above, the state
/// strip below, sharing the time axis.
pub fn mechanism_chart<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    m: &MechanismChart,
    theme: Theme,
) -> ChartResult {
    area.fill(&theme.bg).map_err(err)?;
    let (_, h) = area.dim_in_pixel();
    let (top, bottom) = area.split_vertically((h as f64 * 0.56) as u32);
    let (mut arrivals, mut state) = (arrivals_axes(m), state_axes(m));
    let arrivals_body = frame(&top, "", &arrivals_entries(m, theme), theme)?;
    let state_body = frame(&bottom, "", &state_entries(m), theme)?;
    // The panels share the time axis: both plots take the same room on either side, so that
    // a time is at the same place in both.
    let panels = [(&arrivals_body, &arrivals), (&state_body, &state)];
    let sides = shared_sides(&panels, theme)?;
    (arrivals.sides, state.sides) = (sides, sides);
    arrivals_panel(&top, xy_axes(&arrivals_body, &arrivals, theme)?, m, theme)?;
    state_panel(&bottom, xy_axes(&state_body, &state, theme)?, m, theme)?;
    area.present().map_err(err)
}

/// The band (t − W, t]'s colour: green while it holds at most L admissions, red above.
fn band_tint(m: &MechanismChart) -> RGBColor {
    if m.band > m.limit {
        RED
    } else {
        GREEN
    }
}

/// Whether the window boundaries are drawn: the limiter resets on some, and there are at most
/// a few hundred.
fn shows_boundaries(m: &MechanismChart) -> bool {
    !m.boundaries_s.is_empty() && m.boundaries_s.len() <= 400
}

/// Requests the playhead has not reached yet: grey.
fn pending(theme: Theme) -> RGBAColor {
    theme.fg.mix(0.28)
}

/// The arrivals panel's axes: time against requests per bin.
fn arrivals_axes<'m>(m: &MechanismChart<'m>) -> Axes<'m> {
    Axes {
        x: 0.0..m.x_max.max(1e-9),
        y: 0.0..f64::from(m.bins.tallest()) * 1.25,
        x_desc: "",
        y_desc: "requests",
        y_labels: 5,
        y_counts: true,
        sides: (0, 0),
    }
}

/// The arrivals panel's legend: the bars by decision, the band and the boundaries.
fn arrivals_entries(m: &MechanismChart, theme: Theme) -> Vec<Entry> {
    let mut entries: Vec<Entry> = vec![
        ("admitted".into(), Swatch::Block(BLUE.to_rgba())),
        ("rejected".into(), Swatch::Block(ORANGE.to_rgba())),
        ("to come".into(), Swatch::Block(pending(theme))),
        ("(t − W, t]".into(), Swatch::Block(band_tint(m).mix(0.3))),
    ];
    if shows_boundaries(m) {
        let line = Swatch::Line(Stroke::solid(PURPLE, 2), false);
        entries.push(("window boundary".into(), line));
    }
    entries
}

fn arrivals_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    chart: Chart<DB>,
    m: &MechanismChart,
    theme: Theme,
) -> ChartResult {
    let bins = m.bins;
    let w = bins.width_s;
    let y_max = chart.get_y_range().end;
    let tint = band_tint(m);
    let pending = pending(theme);
    let from = (m.now_s - m.window_s).max(0.0);
    chart
        .draw(&(Rectangle::new([(from, 0.0), (m.now_s, y_max)], tint.mix(0.16).filled())))
        .map_err(err)?;
    // Decided bins by decision; what the playhead has not reached yet in grey.
    let (now_bin, now_a, now_r) = m.current;
    for (i, (&a, &r)) in bins.admitted.iter().zip(&bins.rejected).enumerate() {
        let x = i as f64 * w;
        let right = x + w * 0.92;
        let (done_a, done_r) = match i.cmp(&now_bin) {
            std::cmp::Ordering::Less => (a, r),
            std::cmp::Ordering::Equal => (now_a, now_r),
            std::cmp::Ordering::Greater => (0, 0),
        };
        let (da, dr) = (f64::from(done_a), f64::from(done_a + done_r));
        for bar in [
            Rectangle::new([(x, 0.0), (right, da)], BLUE.filled()),
            Rectangle::new([(x, da), (right, dr)], ORANGE.filled()),
            Rectangle::new([(x, dr), (right, f64::from(a + r))], pending.filled()),
        ] {
            chart.draw(&bar).map_err(err)?;
        }
    }
    // Boundaries the limiter resets on, over the bars.
    if shows_boundaries(m) {
        for &b in m.boundaries_s {
            let line = PathElement::new(vec![(b, 0.0), (b, y_max)], PURPLE.stroke_width(2));
            chart.draw(&line).map_err(err)?;
        }
    }
    playhead(&chart, m.now_s, y_max, theme)?;
    // The band's count beside the limit, at the top of the band.
    let over = m.band > m.limit;
    let label = format!("{} in (t − W, t], L = {}", m.band, m.limit);
    let style = font(14.0).color(&if over { RED } else { theme.fg });
    let (px, py) = local(area, chart.map_coordinate(&(m.now_s, y_max)));
    let (xs, _) = chart.get_pixel_range();
    let xs = (xs.start - area.get_base_pixel().0)..(xs.end - area.get_base_pixel().0);
    // Its width estimated from its length (14 px sans-serif averages under 8.2 px a
    // character), not measured: measuring lays out a span in the page at every frame.
    let tw = (label.chars().count() as f64 * 8.2) as i32;
    // Right of the playhead where it fits, else left of it, else as far right as it fits
    // (across the playhead, on a narrow chart).
    let (x, anchor) = if px + 6 + tw <= xs.end {
        (px + 6, HPos::Left)
    } else if px - 6 - tw >= xs.start {
        (px - 6, HPos::Right)
    } else {
        (xs.start.max(xs.end - tw), HPos::Left)
    };
    area.draw(&Text::new(
        label,
        (x, py + 4),
        style.pos(Pos::new(anchor, VPos::Top)),
    ))
    .map_err(err)?;
    Ok(())
}

/// The state strip's axes: time against the state, up to a fifth above its largest value or
/// the mark.
fn state_axes<'m>(m: &MechanismChart<'m>) -> Axes<'m> {
    let top = m.state_ys.iter().copied().fold(m.mark.0, f64::max).max(1.0);
    Axes {
        x: 0.0..m.x_max.max(1e-9),
        y: 0.0..top * 1.2,
        x_desc: "time (s)",
        y_desc: m.state_label,
        y_labels: 5,
        y_counts: false,
        sides: (0, 0),
    }
}

/// The state strip's legend: the state and its second part, if it has one.
fn state_entries(m: &MechanismChart) -> Vec<Entry> {
    let mut entries: Vec<Entry> = vec![(
        m.state_label.to_owned(),
        Swatch::Line(Stroke::solid(BLUE, 2), false),
    )];
    if let Some((name, _)) = m.part {
        let line = Swatch::Line(Stroke::solid(GREEN, 2), false);
        entries.push((name.to_owned(), line));
    }
    entries
}

fn state_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    chart: Chart<DB>,
    m: &MechanismChart,
    theme: Theme,
) -> ChartResult {
    let y_max = chart.get_y_range().end;
    let x_max = chart.get_x_range().end;
    // The mark: the capacity, L or the burst.
    chart
        .draw(
            &(PathElement::new(
                vec![(0.0, m.mark.0), (x_max, m.mark.0)],
                theme.fg.mix(0.7).stroke_width(1),
            )),
        )
        .map_err(err)?;
    let (mark_x, mark_y) = local(area, chart.map_coordinate(&(0.0, m.mark.0)));
    area.draw(&Text::new(
        m.mark.1.to_owned(),
        (mark_x + 4, mark_y - 2),
        font(12.0)
            .color(&theme.fg)
            .pos(Pos::new(HPos::Left, VPos::Bottom)),
    ))
    .map_err(err)?;
    // The state as steps: bold up to the playhead, faint after it.
    let k = m.state_xs.partition_point(|&x| x <= m.now_s);
    let mut lines = vec![(m.state_ys, BLUE)];
    if let Some((_, part)) = m.part {
        lines.push((part, GREEN));
    }
    for (ys, color) in lines {
        let future = k.saturating_sub(1);
        for (range, style) in [
            (future..m.state_xs.len(), color.mix(0.3).stroke_width(1)),
            (0..k, color.stroke_width(2)),
        ] {
            chart
                .draw(&(PathElement::new(steps(&m.state_xs[range.clone()], &ys[range]), style)))
                .map_err(err)?;
        }
    }
    chart
        .draw(&(Circle::new((m.now_s, m.state_now), 4, BLUE.filled())))
        .map_err(err)?;
    playhead(&chart, m.now_s, y_max, theme)?;
    Ok(())
}

/// A step line through the points: each value holds until the next point's time.
fn steps(xs: &[f64], ys: &[f64]) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(2 * xs.len());
    for (&x, &y) in xs.iter().zip(ys) {
        if let Some(&(_, prev)) = out.last() {
            out.push((x, prev));
        }
        out.push((x, y));
    }
    out
}

/// A backend pixel as a position within `area` (the panels are parts of one canvas).
fn local<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, (x, y): (i32, i32)) -> (i32, i32) {
    let (bx, by) = area.get_base_pixel();
    (x - bx, y - by)
}

/// The playhead: a line across the panel at `now_s`.
fn playhead<DB: DrawingBackend>(
    chart: &Chart<DB>,
    now_s: f64,
    y_max: f64,
    theme: Theme,
) -> ChartResult {
    chart
        .draw(&(PathElement::new(vec![(now_s, 0.0), (now_s, y_max)], theme.fg.stroke_width(2))))
        .map_err(err)?;
    Ok(())
}
