//! Reading the charts' SVG for the layout checks, shared by this crate's tests and the page's
//! (`ratelab-page/tests/section_charts.rs`): text boxes by plotters' own estimate of text size,
//! the one the charts lay themselves out with in SVG, the plotting areas, and the checks that
//! every series is named outside the plot and no text passes an edge or overlaps another.

use plotters::coord::Shift;
use plotters::prelude::*;
use ratelab_charts::legend::{GAP, MARK};
use ratelab_charts::{Draw, Plot, Theme};

/// The widths the page draws its charts at, from a phone to the desktop.
pub const WIDTHS: [u32; 4] = [280, 360, 600, 880];
/// The page's chart height.
pub const HEIGHT: u32 = 260;
/// The light theme's text colour, which axes and reference lines are drawn in.
pub const FG: &str = "#1F2328";

/// A rectangle: left, top, right, bottom.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rect(pub f64, pub f64, pub f64, pub f64);

impl Rect {
    pub fn overlaps(&self, o: &Rect) -> bool {
        self.0 < o.2 && o.0 < self.2 && self.1 < o.3 && o.1 < self.3
    }

    pub fn within(&self, width: f64, height: f64) -> bool {
        self.0 >= 0.0 && self.1 >= 0.0 && self.2 <= width && self.3 <= height
    }
}

/// A `<text>` element: its text and its box.
#[derive(Debug, Clone)]
pub struct Label {
    pub text: String,
    pub rect: Rect,
}

/// A `<polyline>`: its colour, width and points.
#[derive(Debug, Clone)]
pub struct Line {
    pub stroke: String,
    pub width: f64,
    pub points: Vec<(f64, f64)>,
}

impl Line {
    /// Its length along its points.
    pub fn length(&self) -> f64 {
        self.points
            .windows(2)
            .map(|p| (p[1].0 - p[0].0).hypot(p[1].1 - p[0].1))
            .sum()
    }
}

/// What the checks read of an SVG document.
#[derive(Debug)]
pub struct Svg {
    pub width: f64,
    pub height: f64,
    pub labels: Vec<Label>,
    pub lines: Vec<Line>,
}

/// The value of attribute `name` in a tag's text.
fn attr<'s>(tag: &'s str, name: &str) -> Option<&'s str> {
    let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    let end = tag[start..].find('"')? + start;
    Some(&tag[start..end])
}

fn num(tag: &str, name: &str) -> f64 {
    attr(tag, name)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no number {name} in {tag}"))
}

fn unescape(s: &str) -> String {
    s.replace("&apos;", "'")
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// A text element's box, by plotters' estimate of its size (the one it lays out with without
/// a browser): at font size `s`, `s × 0.7 / 1.24²` a byte wide and `s / 1.24` high, placed by
/// its anchor and turned by its rotation.
fn text_box(tag: &str, text: &str) -> Rect {
    let (x, y) = (num(tag, "x"), num(tag, "y"));
    // The SVG's font size is plotters' divided by 1.24.
    let em = num(tag, "font-size") / 1.24;
    let w = (em * 0.7 * text.len() as f64).round();
    let h = em.round() + (em * 0.24).round();
    let x0 = match attr(tag, "text-anchor") {
        Some("middle") => x - w / 2.0,
        Some("end") => x - w,
        _ => x,
    };
    let y0 = match attr(tag, "dy") {
        Some("0.76em") => y,
        Some("0.5ex") => y - h / 2.0,
        _ => y - h,
    };
    let (dx0, dx1, dy0, dy1) = (x0 - x, x0 + w - x, y0 - y, y0 + h - y);
    match attr(tag, "transform") {
        // (dx, dy) turns to (dy, −dx).
        Some(t) if t.starts_with("rotate(270") => Rect(x + dy0, y - dx1, x + dy1, y - dx0),
        // (dx, dy) turns to (−dy, dx).
        Some(t) if t.starts_with("rotate(90") => Rect(x - dy1, y + dx0, x - dy0, y + dx1),
        Some(t) => panic!("an unexpected transform {t}"),
        None => Rect(x0, y0, x0 + w, y0 + h),
    }
}

pub fn parse(svg: &str) -> Svg {
    let head = svg.split('>').next().expect("an svg tag");
    let mut doc = Svg {
        width: num(head, "width"),
        height: num(head, "height"),
        labels: Vec::new(),
        lines: Vec::new(),
    };
    for part in svg.split('<').skip(1) {
        if let Some(tag) = part.strip_prefix("text ") {
            let (attrs, text) = tag.split_once('>').expect("a text element");
            let text = unescape(text.trim());
            let rect = text_box(&format!(" {attrs}"), &text);
            doc.labels.push(Label { text, rect });
        } else if let Some(tag) = part.strip_prefix("polyline ") {
            let tag = format!(" {tag}");
            let points = attr(&tag, "points")
                .expect("points")
                .split_whitespace()
                .map(|p| {
                    let (x, y) = p.split_once(',').expect("x,y");
                    (x.parse().expect("x"), y.parse().expect("y"))
                })
                .collect();
            doc.lines.push(Line {
                stroke: attr(&tag, "stroke").unwrap_or("").to_owned(),
                width: num(&tag, "stroke-width"),
                points,
            });
        }
    }
    doc
}

impl Svg {
    /// The plotting areas: right of each y axis (a long vertical line in the text colour, one
    /// pixel wide) and along it, to the right edge.
    pub fn plots(&self) -> Vec<Rect> {
        self.lines
            .iter()
            .filter(|l| l.stroke == FG && l.width == 1.0 && l.points.len() == 2)
            .filter(|l| l.points[0].0 == l.points[1].0 && l.length() > 20.0)
            .map(|l| {
                let (a, b) = (l.points[0].1, l.points[1].1);
                Rect(l.points[0].0, a.min(b), self.width, a.max(b))
            })
            .collect()
    }

    /// The legend entry naming `name`: its label, whole or shortened with an ellipsis where
    /// the whole would not fit the width.
    pub fn entry(&self, name: &str) -> Option<&Label> {
        self.labels.iter().find(|l| {
            l.text == name
                || l.text.strip_suffix('…').is_some_and(|cut| {
                    name.starts_with(cut.trim_end())
                        && estimated_width(name) + f64::from(MARK + GAP) > self.width - 16.0
                })
        })
    }
}

/// The width plotters estimates for `text` in the legend's 12-pixel font.
fn estimated_width(text: &str) -> f64 {
    (12.0 / 1.24 / 1.24 * 0.7 * text.len() as f64).round()
}

pub fn draw(width: u32, height: u32, paint: impl FnOnce(&DrawingArea<SVGBackend, Shift>)) -> Svg {
    let mut out = String::new();
    {
        let area = SVGBackend::with_string(&mut out, (width, height)).into_drawing_area();
        paint(&area);
    }
    parse(&out)
}

pub fn draw_plot(plot: &Plot, width: u32) -> Svg {
    draw(width, HEIGHT, |a| {
        plot.draw(a, Theme::LIGHT).expect("draws")
    })
}

/// What a plot's legend names: each series and reference line, each kind of bar.
pub fn named(plot: &Plot) -> Vec<String> {
    match plot {
        Plot::Xy {
            series, references, ..
        } => series
            .iter()
            .map(|s| s.name.clone())
            .chain(references.iter().map(|r| r.1.clone()))
            .collect(),
        Plot::Window {
            counts,
            limit,
            bound,
            ..
        } => {
            let mut names = vec!["admitted in the window".to_owned()];
            if counts.iter().any(|c| c > limit) {
                names.push("over the limit".into());
            }
            names.push(format!("limit L = {limit}"));
            names.extend(bound.map(|b| format!("worst case in theory = {b}")));
            names
        }
        Plot::Arrivals(_) => vec!["admitted".into(), "rejected".into()],
        Plot::Bars { .. } => Vec::new(),
    }
}

/// Every series and reference line is named, its entry outside the plot and within the chart;
/// no text runs past an edge, and no two texts overlap.
pub fn check(name: &str, doc: &Svg, names: &[String]) {
    let plots = doc.plots();
    assert!(!plots.is_empty(), "{name}: no plot found");
    for n in names {
        let label = doc
            .entry(n)
            .unwrap_or_else(|| panic!("{name} at {}: no legend entry {n:?}", doc.width));
        let r = label.rect;
        // The swatch left of the label, as tall as a block or a dot.
        let entry = Rect(
            r.0 - f64::from(MARK + GAP),
            r.1.min((r.1 + r.3) / 2.0 - 5.0),
            r.2,
            r.3.max((r.1 + r.3) / 2.0 + 5.0),
        );
        assert!(
            entry.within(doc.width, doc.height),
            "{name} at {}: {n:?} at {entry:?}",
            doc.width
        );
        for p in &plots {
            assert!(
                !entry.overlaps(p),
                "{name} at {}: {n:?} at {entry:?} over the plot {p:?}",
                doc.width
            );
        }
    }
    for (i, a) in doc.labels.iter().enumerate() {
        assert!(
            a.rect.within(doc.width, doc.height),
            "{name} at {}: {a:?} passes an edge",
            doc.width
        );
        for b in &doc.labels[..i] {
            assert!(
                !a.rect.overlaps(&b.rect),
                "{name} at {}: {a:?} overlaps {b:?}",
                doc.width
            );
        }
    }
}

/// Every number written is whole (for plots whose axes all span ten or more or count: their
/// ticks are counts, seconds or percentages, written without a decimal).
pub fn whole_numbers(name: &str, doc: &Svg) {
    for l in &doc.labels {
        assert!(
            l.text.parse::<f64>().is_err() || !l.text.contains('.'),
            "{name} at {}: {:?}",
            doc.width,
            l.text
        );
    }
}
