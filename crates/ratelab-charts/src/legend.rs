//! The charts' legend: a strip below the caption and above the plot, so it never covers data,
//! whose entries wrap onto as many rows as the width needs, so it is never left out. Drawn
//! here rather than by plotters' series labels, which cost the page's wasm about 13 KB.
//!
//! Lines are drawn with a [`Stroke`], the same in the plot and in the swatch that names them:
//! the reference lines `L` and `2L` and the theoretical bound differ by their dashes, which
//! every reader tells apart in either theme.

use crate::style::{err, font, rgb, Theme};
use crate::text::{measure, shorten};
use crate::ticks::Chart;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use ratelab::plot::PURPLE;

/// A swatch's width, in pixels.
pub const MARK: i32 = 24;
/// The gap between a swatch and its label.
pub const GAP: i32 = 6;
/// The room between two entries of a row.
const SPACING: i32 = 16;

/// A line's look: colour, width and dashes (`(on, off)` in pixels; solid when `None`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stroke {
    /// Its colour.
    pub color: RGBColor,
    /// Its width in pixels.
    pub width: u32,
    /// Its dashes.
    pub dash: Option<(u32, u32)>,
}

impl Stroke {
    /// A solid line.
    pub const fn solid(color: RGBColor, width: u32) -> Stroke {
        Stroke {
            color,
            width,
            dash: None,
        }
    }

    /// Draws the line through `points`, pixels of `area`.
    pub fn draw<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        points: &[(i32, i32)],
    ) -> Result<(), String> {
        let style = self.color.stroke_width(self.width);
        let Some((on, off)) = self.dash else {
            return polyline(area, points, style);
        };
        // Dashed on the canvas's pixels, each point kept within the area (as plotters keeps
        // every point it draws).
        let (xs, ys) = area.get_pixel_range();
        let pixels: Vec<(i32, i32)> = points
            .iter()
            .map(|p| {
                let (x, y) = area.map_coordinate(p);
                (x.min(xs.end).max(xs.start), y.min(ys.end).max(ys.start))
            })
            .collect();
        let screen = area.use_screen_coord();
        for dash in dashes(&pixels, on, off) {
            polyline(&screen, &dash, style)?;
        }
        Ok(())
    }

    /// Draws the line through `points`, in the coordinates of a chart's plot.
    pub fn plot<DB: DrawingBackend>(
        &self,
        chart: &Chart<DB>,
        points: &[(f64, f64)],
    ) -> Result<(), String> {
        let pixels: Vec<(i32, i32)> = points.iter().map(|p| chart.map_coordinate(p)).collect();
        self.draw(&chart.use_screen_coord(), &pixels)
    }
}

/// Draws a line through `points`, pixels of `area`, in `style`: every line of the charts, so
/// the page's wasm holds one copy of the code drawing a path.
pub(crate) fn polyline<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    points: &[(i32, i32)],
    style: ShapeStyle,
) -> Result<(), String> {
    area.draw(&PathElement::new(points, style)).map_err(err)
}

/// The dashes of the line through `points`: `on` pixels drawn, `off` left out, and so on, each
/// dash a line of its own. The same pixels as plotters' `DashedPathElement` (one copy of the
/// code, on pixels, rather than one per kind of coordinates).
pub(crate) fn dashes(points: &[(i32, i32)], on: u32, off: u32) -> Vec<Vec<(i32, i32)>> {
    let mut out = Vec::new();
    let Some((&first, rest)) = points.split_first() else {
        return out;
    };
    if on == 0 {
        return out;
    }
    let float = |(x, y): (i32, i32)| (x as f32, y as f32);
    let pixel = |(x, y): (f32, f32)| (x.round() as i32, y.round() as i32);
    let mut start = float(first);
    let (mut dist, mut solid) = (0.0f32, true);
    let mut dash = vec![pixel(start)];
    for &p in rest {
        let end = float(p);
        while start != end {
            let (dx, dy) = (end.0 - start.0, end.1 - start.1);
            let d = dx.hypot(dy);
            let size = if solid { on } else { off } as f32;
            let left = size - dist;
            if left < d {
                let t = left / d;
                start = (start.0 + dx * t, start.1 + dy * t);
                dist += left;
            } else {
                start = end;
                dist += d;
            }
            if solid {
                dash.push(pixel(start));
            }
            if size <= dist {
                if solid {
                    out.push(std::mem::take(&mut dash));
                } else {
                    dash.push(pixel(start));
                }
                dist = 0.0;
                solid = !solid;
            }
        }
    }
    if dash.len() > 1 {
        out.push(dash);
    }
    out
}

/// A filled circle of radius 3 at `at`, pixels of `area`: a marked point or a swatch's dot.
pub(crate) fn dot<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    at: (i32, i32),
    color: RGBColor,
) -> Result<(), String> {
    area.draw(&Circle::new(at, 3, color.filled())).map_err(err)
}

/// A filled rectangle between the corners `[a, b]`, pixels of `area`.
pub(crate) fn block<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    corners: [(i32, i32); 2],
    color: RGBAColor,
) -> Result<(), String> {
    area.draw(&Rectangle::new(corners, color.filled()))
        .map_err(err)
}

/// The `i`-th horizontal reference line of a chart, in the order listed: the first (`L`)
/// solid, the second (`2L`) in long dashes, any others dotted; all in the text colour, so
/// they read in either theme and are told apart by their dashes, not by colour.
pub(crate) fn reference(i: usize, theme: Theme) -> Stroke {
    let dash = match i {
        0 => None,
        1 => Some((9, 5)),
        _ => Some((2, 4)),
    };
    Stroke {
        color: theme.fg,
        width: 2,
        dash,
    }
}

/// The theoretical worst case: reddish purple, in short dashes, so that it differs from the
/// limit's solid line and from `2L`'s long dashes even where the colour does not tell.
pub(crate) const BOUND: Stroke = Stroke {
    color: rgb(PURPLE),
    width: 2,
    dash: Some((4, 3)),
};

/// How a legend entry is marked.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Swatch {
    /// A filled square (bars, a shaded band).
    Block(RGBAColor),
    /// A line, with a dot on it if the series marks its points.
    Line(Stroke, bool),
    /// A dot (marked points).
    Dot(RGBColor),
}

/// A legend entry: its label and its swatch.
pub(crate) type Entry = (String, Swatch);

/// Where an entry sits in the strip: its row, its left edge and its width, in pixels from the
/// strip's left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    /// Its row, from the top.
    pub row: usize,
    /// Its left edge.
    pub x: i32,
    /// Its width (at most the strip's).
    pub width: i32,
}

/// Lays out entries `widths` wide in a strip `available` wide: left to right, `SPACING`
/// apart, starting a new row where the next entry would pass the edge, each row centred. An
/// entry wider than the strip gets a row of its own and the strip's width (its label is
/// shortened to fit).
pub fn layout(widths: &[i32], available: i32) -> Vec<Slot> {
    let available = available.max(1);
    let mut slots: Vec<Slot> = Vec::with_capacity(widths.len());
    let (mut row, mut row_start, mut x) = (0, 0, 0);
    for (i, &w) in widths.iter().enumerate() {
        let width = w.clamp(0, available);
        if i > row_start && x + SPACING + width > available {
            centre(&mut slots[row_start..], available - x);
            (row, row_start, x) = (row + 1, i, 0);
        }
        let left = if i == row_start { 0 } else { x + SPACING };
        slots.push(Slot {
            row,
            x: left,
            width,
        });
        x = left + width;
    }
    centre(&mut slots[row_start..], available - x);
    slots
}

/// Moves a row's slots right by half its free room.
fn centre(row: &mut [Slot], free: i32) {
    for s in row {
        s.x += free / 2;
    }
}

/// Draws the legend at the top of `area`, one entry after another in rows as wide as the area,
/// and returns the area below it. No entries, no strip.
pub(crate) fn strip<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[Entry],
    theme: Theme,
) -> Result<DrawingArea<DB, Shift>, String> {
    if entries.is_empty() {
        return Ok(area.clone());
    }
    let style = font(12.0).color(&theme.fg);
    let (w, _) = area.dim_in_pixel();
    let w = w as i32;
    let mut width = |s: &str| Ok(measure(area, s, &style)?.0);
    let mut labels = Vec::with_capacity(entries.len());
    let mut widths = Vec::with_capacity(entries.len());
    for (label, _) in entries {
        let label = shorten(label, w - MARK - GAP, &mut width)?;
        widths.push(MARK + GAP + width(&label)?);
        labels.push(label);
    }
    let slots = layout(&widths, w);
    let row_h = measure(area, "0", &style)?.1.max(12) + 5;
    for ((slot, label), (_, swatch)) in slots.iter().zip(labels).zip(entries) {
        let y = row_h * slot.row as i32 + row_h / 2;
        mark(area, *swatch, (slot.x, y))?;
        area.draw(&Text::new(
            label,
            (slot.x + MARK + GAP, y),
            style.pos(Pos::new(HPos::Left, VPos::Center)),
        ))
        .map_err(err)?;
    }
    let rows = slots.last().map_or(0, |s| s.row + 1) as i32;
    Ok(area.split_vertically(rows * row_h + 4).1)
}

/// Draws a swatch `MARK` wide from `x`, centred on `y`.
fn mark<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    swatch: Swatch,
    (x, y): (i32, i32),
) -> Result<(), String> {
    let middle = (x + MARK / 2, y);
    match swatch {
        Swatch::Block(c) => block(area, [(x + 6, y - 5), (x + MARK, y + 5)], c),
        Swatch::Line(stroke, marked) => {
            stroke.draw(area, &[(x, y), (x + MARK, y)])?;
            if marked {
                dot(area, middle, stroke.color)?;
            }
            Ok(())
        }
        Swatch::Dot(c) => dot(area, middle, c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every slot within the strip, and no two slots of a row touching.
    fn check(widths: &[i32], available: i32) -> Vec<Slot> {
        let slots = layout(widths, available);
        assert_eq!(slots.len(), widths.len());
        for (i, s) in slots.iter().enumerate() {
            assert!(
                s.x >= 0 && s.x + s.width <= available,
                "{s:?} in {available}"
            );
            assert_eq!(s.width, widths[i].min(available));
            for t in &slots[..i] {
                assert!(
                    t.row != s.row || t.x + t.width + SPACING <= s.x,
                    "{t:?} against {s:?}"
                );
            }
        }
        slots
    }

    #[test]
    fn entries_fill_rows_in_order_and_wrap_where_the_width_ends() {
        // Six series of the honest-client plot, wide and narrow.
        let widths = [110, 100, 160, 150, 150, 60];
        let wide = check(&widths, 880);
        assert!(wide.iter().all(|s| s.row == 0), "{wide:?}");
        let narrow = check(&widths, 264);
        let rows: Vec<usize> = narrow.iter().map(|s| s.row).collect();
        assert_eq!(rows, [0, 0, 1, 2, 3, 3]);
        // In order: a later entry is never on an earlier row.
        assert!(rows.windows(2).all(|r| r[0] <= r[1]));
    }

    #[test]
    fn rows_are_centred_and_a_long_entry_takes_the_whole_row() {
        let slots = check(&[100, 100], 300);
        assert_eq!(slots[0].x, 300 - (slots[1].x + 100), "centred: {slots:?}");
        let slots = check(&[50, 500, 50], 280);
        let rows: Vec<usize> = slots.iter().map(|s| s.row).collect();
        assert_eq!(rows, [0, 1, 2]);
        assert_eq!((slots[1].x, slots[1].width), (0, 280));
        assert!(check(&[], 280).is_empty());
    }
}
