//! The mechanism view: the arrivals of a run with the playhead's trailing window drawn over
//! them, and under them, on the same time axis, what the limiter holds.

use crate::{err, font, mesh_with, rgb, Bins, ChartResult, Theme};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

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
    arrivals_panel(&top, m, theme)?;
    state_panel(&bottom, m, theme)?;
    area.present().map_err(err)
}

fn arrivals_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    m: &MechanismChart,
    theme: Theme,
) -> ChartResult {
    let bins = m.bins;
    let w = bins.width_s;
    let y_max = f64::from(bins.tallest()) * 1.25;
    let x_max = m.x_max.max(1e-9);
    let mut chart = ChartBuilder::on(area)
        .margin(8)
        .margin_right(22)
        .x_label_area_size(22)
        .y_label_area_size(52)
        .build_cartesian_2d(0.0..x_max, 0.0..y_max)
        .map_err(err)?;
    mesh_with(&mut chart, theme, "", "requests", 5)?;
    // The band (t − W, t]: green while it holds at most L admissions, red above.
    let over = m.band > m.limit;
    let tint = if over { RED } else { GREEN };
    let from = (m.now_s - m.window_s).max(0.0);
    chart
        .draw_series(std::iter::once(Rectangle::new(
            [(from, 0.0), (m.now_s, y_max)],
            tint.mix(0.16).filled(),
        )))
        .map_err(err)?;
    // Decided bins by decision; what the playhead has not reached yet in grey.
    let pending = theme.fg.mix(0.28);
    let (now_bin, now_a, now_r) = m.current;
    chart
        .draw_series(
            bins.admitted
                .iter()
                .zip(&bins.rejected)
                .enumerate()
                .flat_map(|(i, (&a, &r))| {
                    let x = i as f64 * w;
                    let right = x + w * 0.92;
                    let (done_a, done_r) = match i.cmp(&now_bin) {
                        std::cmp::Ordering::Less => (a, r),
                        std::cmp::Ordering::Equal => (now_a, now_r),
                        std::cmp::Ordering::Greater => (0, 0),
                    };
                    let (da, dr) = (f64::from(done_a), f64::from(done_a + done_r));
                    [
                        Rectangle::new([(x, 0.0), (right, da)], BLUE.filled()),
                        Rectangle::new([(x, da), (right, dr)], ORANGE.filled()),
                        Rectangle::new([(x, dr), (right, f64::from(a + r))], pending.filled()),
                    ]
                }),
        )
        .map_err(err)?;
    // Boundaries the limiter resets on, over the bars (at most a few hundred are drawn).
    if m.boundaries_s.len() <= 400 {
        chart
            .draw_series(
                m.boundaries_s
                    .iter()
                    .map(|&b| PathElement::new(vec![(b, 0.0), (b, y_max)], PURPLE.stroke_width(2))),
            )
            .map_err(err)?;
    }
    playhead(&mut chart, m.now_s, y_max, theme)?;
    // The band's count beside the limit, at the top of the band.
    let label = format!("{} in (t − W, t], L = {}", m.band, m.limit);
    let style = font(14.0).color(&if over { RED } else { theme.fg });
    let (px, py) = local(area, chart.backend_coord(&(m.now_s, y_max)));
    let (xs, _) = chart.plotting_area().get_pixel_range();
    let xs = (xs.start - area.get_base_pixel().0)..(xs.end - area.get_base_pixel().0);
    // Its width estimated from its length (14 px sans-serif averages under 8.2 px a
    // character), not measured: measuring lays out a span in the page at every frame.
    let tw = (label.chars().count() as f64 * 8.2) as i32;
    // Right of the playhead where it fits, else left of it.
    let (x, anchor) = if px + 6 + tw <= xs.end {
        (px + 6, HPos::Left)
    } else {
        (px - 6, HPos::Right)
    };
    area.draw(&Text::new(
        label,
        (x, py + 4),
        style.pos(Pos::new(anchor, VPos::Top)),
    ))
    .map_err(err)?;
    Ok(())
}

fn state_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    m: &MechanismChart,
    theme: Theme,
) -> ChartResult {
    let top = m.state_ys.iter().copied().fold(m.mark.0, f64::max).max(1.0);
    let y_max = top * 1.2;
    let x_max = m.x_max.max(1e-9);
    let mut chart = ChartBuilder::on(area)
        .margin(8)
        .margin_right(22)
        .x_label_area_size(34)
        .y_label_area_size(52)
        .build_cartesian_2d(0.0..x_max, 0.0..y_max)
        .map_err(err)?;
    mesh_with(&mut chart, theme, "time (s)", m.state_label, 5)?;
    // The mark: the capacity, L or the burst.
    chart
        .draw_series(std::iter::once(PathElement::new(
            vec![(0.0, m.mark.0), (x_max, m.mark.0)],
            theme.fg.mix(0.7).stroke_width(1),
        )))
        .map_err(err)?;
    let (mark_x, mark_y) = local(area, chart.backend_coord(&(0.0, m.mark.0)));
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
                .draw_series(std::iter::once(PathElement::new(
                    steps(&m.state_xs[range.clone()], &ys[range]),
                    style,
                )))
                .map_err(err)?;
        }
    }
    chart
        .draw_series(std::iter::once(Circle::new(
            (m.now_s, m.state_now),
            4,
            BLUE.filled(),
        )))
        .map_err(err)?;
    playhead(&mut chart, m.now_s, y_max, theme)?;
    if let Some((name, _)) = m.part {
        // In the upper right corner, clear of the mark's label on the left.
        let (x, y) = local(area, chart.backend_coord(&(x_max, y_max)));
        area.draw(&Text::new(
            format!("blue: {}; green: {name}", m.state_label),
            (x - 4, y + 2),
            font(12.0)
                .color(&theme.fg)
                .pos(Pos::new(HPos::Right, VPos::Top)),
        ))
        .map_err(err)?;
    }
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
fn playhead<'a, DB: DrawingBackend + 'a>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    now_s: f64,
    y_max: f64,
    theme: Theme,
) -> ChartResult {
    chart
        .draw_series(std::iter::once(PathElement::new(
            vec![(now_s, 0.0), (now_s, y_max)],
            theme.fg.stroke_width(2),
        )))
        .map_err(err)?;
    Ok(())
}
