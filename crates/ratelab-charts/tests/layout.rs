//! The charts' layout at every width the page draws them at (a 280-pixel phone to 880), checked
//! on their SVG: every series and reference line is named in a legend outside the plot, no
//! text runs past an edge or into other text, and the reference lines `L`, `2L` and the
//! theoretical bound are told apart by their dashes. Text boxes are computed from plotters'
//! own estimate of text size, the one the charts lay themselves out with in SVG (`svg/`).
//!
//! The plots are the study's own, run at a small size, and plots of the same shapes as the
//! page's: its main figure, its sections (six lines, two reference lines) and the mechanism
//! view.

mod svg;

use ratelab::study::{assemble, plan, run_job, StudyConfig, LIMITERS};
use ratelab_charts::legend::{GAP, MARK};
use ratelab_charts::{
    bin_decisions, mechanism_chart, series_color, Bins, Draw, MechanismChart, Plot, Series, Theme,
    PURPLE,
};
use svg::{check, draw, draw_plot, named, whole_numbers, Label, Line, Rect, Svg, FG, WIDTHS};

/// Named lines over `xs`, in palette order, each point marked.
fn lines(names: &[&str], xs: &[f64], slope: f64) -> Vec<Series> {
    let lines = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let points = xs
                .iter()
                .map(|&x| (x, slope * x + 7.0 * i as f64))
                .collect();
            ((*name).to_owned(), points)
        })
        .collect();
    Series::palette(lines)
}

fn xy(title: &str, axes: [&str; 2], series: Vec<Series>, references: &[(f64, &str)]) -> Plot {
    Plot::Xy {
        title: title.into(),
        x_label: axes[0].into(),
        y_label: axes[1].into(),
        series,
        references: references.iter().map(|r| (r.0, r.1.to_owned())).collect(),
        y_range: None,
        x_range: None,
    }
}

fn arrivals() -> Bins {
    let times: Vec<u64> = (0..900).map(|i| i * 666_667).collect();
    let admitted: Vec<bool> = (0..900).map(|i| i % 4 != 0).collect();
    bin_decisions(&times, &admitted, 600_000_000, 120)
}

/// Plots of the shapes the page draws: its main figure's, its sections', a probe's.
fn page_plots() -> Vec<(&'static str, Plot)> {
    let times: Vec<f64> = (0..=600).map(f64::from).collect();
    let counts: Vec<f64> = times.iter().map(|t| (t * 7.0) % 130.0).collect();
    let calm: Vec<f64> = times.iter().map(|t| t % 60.0).collect();
    let caps: Vec<f64> = (1..=25).map(|i| f64::from(i) * 24.0).collect();
    let offsets: Vec<f64> = (0..=50).map(|i| f64::from(i) * 1.2).collect();
    let tries = [1.0, 2.0, 3.0, 5.0, 8.0, 12.0];
    let servers = [1.0, 2.0, 4.0, 8.0, 16.0];
    let limiters: Vec<&str> = LIMITERS.to_vec();
    vec![
        (
            "the trailing window, over the limit",
            Plot::Window {
                times_s: times.clone(),
                counts,
                limit: 60.0,
                bound: Some(120.0),
                x_max: 600.0,
            },
        ),
        (
            "the trailing window, within it",
            Plot::Window {
                times_s: times.clone(),
                counts: calm,
                limit: 60.0,
                bound: None,
                x_max: 600.0,
            },
        ),
        (
            "a day-long run",
            Plot::Window {
                times_s: vec![0.0, 40_000.0, 86_400.0],
                counts: vec![0.0, 50.0, 20.0],
                limit: 60.0,
                bound: Some(60.0),
                x_max: 86_400.0,
            },
        ),
        ("requests per bin", Plot::Arrivals(arrivals())),
        (
            "the admitted share",
            xy(
                "Admitted share so far",
                ["time (s)", "%"],
                lines(&["admitted so far, % of offered"], &times, 0.1),
                &[],
            ),
        ),
        (
            "the bucket's ceiling",
            xy(
                "Worst window of a token bucket against its capacity",
                ["capacity B", "requests in the worst window"],
                lines(
                    &[
                        "B + L − 1 (theory)",
                        "flood (measured)",
                        "boundary burst (measured)",
                    ],
                    &caps,
                    1.0,
                ),
                &[(60.0, "limit L = 60")],
            ),
        ),
        (
            "the counter's offsets",
            xy(
                "Sliding-window counter: worst window against the flood's start",
                [
                    "flood starts this far into a window (s)",
                    "requests in the worst window",
                ],
                lines(&["simulated", "L + ⌈L(s − 1 ms)/W⌉"], &offsets, 1.6),
                &[(100.0, "L"), (200.0, "2L")],
            ),
        ),
        (
            "the retry lockout",
            xy(
                "A retrying client after one spike",
                ["tries per request", "% of requests served"],
                lines(
                    &[
                        "10/min, rejects recorded",
                        "20/min, rejects recorded",
                        "25/min, rejects recorded",
                        "30/min, rejects recorded",
                        "40/min, rejects recorded",
                        "25/min, not recorded",
                    ],
                    &tries,
                    4.0,
                ),
                &[],
            ),
        ),
        (
            "six limiters",
            xy(
                "Splitting the limit across servers",
                ["servers K", "% of requests served"],
                lines(&limiters, &servers, 2.0),
                &[],
            ),
        ),
        (
            "a probe",
            xy(
                "127.0.0.1:8080/limited: requests so far",
                ["seconds from the start of the probe", "requests"],
                lines(
                    &[
                        "sent",
                        "admitted by the real limiter",
                        "admitted by the model, token-bucket:burst=10,rate=1/1s",
                    ],
                    &times,
                    0.5,
                ),
                &[],
            ),
        ),
        (
            "served by each limiter",
            Plot::Bars {
                title: "An honest page-loads client at 80% of the limit: share served".into(),
                bars: limiters
                    .iter()
                    .enumerate()
                    .map(|(i, l)| ((*l).to_owned(), 100.0 - 4.0 * i as f64, series_color(i)))
                    .collect(),
                max: 100.0,
                unit: "%".into(),
            },
        ),
    ]
}

/// The study's plots, from the study's own jobs at a small size.
fn study_plots() -> Vec<(String, Plot)> {
    let config = StudyConfig {
        runs: 1,
        minutes: 10,
        seed: 1,
    };
    let jobs = plan(config).expect("a plan");
    let results: Vec<_> = jobs
        .iter()
        .map(|j| Some(run_job(j).expect("runs")))
        .collect();
    let report = assemble(config, &jobs, &results);
    let mut plots: Vec<(String, Plot)> = report
        .plots
        .iter()
        .map(|p| (p.id.clone(), p.plot.clone()))
        .collect();
    plots.push(("swc-offsets".into(), report.counter_offsets_plot()));
    plots
}

#[test]
fn the_pages_plots_name_every_line_outside_the_plot_at_every_width() {
    for (name, plot) in page_plots() {
        for width in WIDTHS {
            let doc = draw_plot(&plot, width);
            check(name, &doc, &named(&plot));
            whole_numbers(name, &doc);
        }
    }
}

#[test]
fn the_studys_plots_name_every_line_outside_the_plot_at_every_width() {
    let plots = study_plots();
    assert_eq!(plots.len(), 4, "{plots:?}");
    for (name, plot) in &plots {
        assert!(named(plot).len() >= 2, "{name}: {plot:?}");
        for width in WIDTHS {
            let doc = draw_plot(plot, width);
            check(name, &doc, &named(plot));
            whole_numbers(name, &doc);
        }
    }
}

#[test]
fn the_compare_views_small_multiples_keep_their_legend() {
    let (name, plot) = page_plots().remove(0);
    for (width, height) in [(280, 180), (420, 180), (420, 200)] {
        let doc = draw(width, height, |a| {
            plot.draw(a, Theme::LIGHT).expect("draws")
        });
        check(name, &doc, &named(&plot));
    }
}

#[test]
fn the_mechanism_view_names_its_marks_outside_both_panels_which_line_up() {
    let bins = arrivals();
    let xs: Vec<f64> = (0..600).map(f64::from).collect();
    let ys: Vec<f64> = xs.iter().map(|x| (x * 0.37) % 60.0).collect();
    let part: Vec<f64> = xs.iter().map(|x| (x * 0.21) % 30.0).collect();
    let boundaries: Vec<f64> = (0..10).map(|i| f64::from(i) * 60.0).collect();
    let m = MechanismChart {
        bins: &bins,
        x_max: 600.0,
        now_s: 300.0,
        window_s: 60.0,
        band: 61,
        limit: 60,
        current: (60, 1, 1),
        boundaries_s: &boundaries,
        state_label: "entries in the log",
        state_xs: &xs,
        state_ys: &ys,
        part: Some(("admitted entries", &part)),
        mark: (60.0, "L"),
        state_now: 30.0,
    };
    let names: Vec<String> = [
        "admitted",
        "rejected",
        "to come",
        "(t − W, t]",
        "window boundary",
        "entries in the log",
        "admitted entries",
    ]
    .map(str::to_owned)
    .to_vec();
    for width in WIDTHS {
        let doc = draw(width, 320, |a| {
            mechanism_chart(a, &m, Theme::LIGHT).expect("draws")
        });
        let plots = doc.plots();
        assert_eq!(plots.len(), 2, "two panels");
        assert_eq!(plots[0].0, plots[1].0, "the panels share the time axis");
        check("the mechanism view", &doc, &names);
    }
}

#[test]
fn a_name_too_long_for_the_width_is_shortened_with_an_ellipsis() {
    let long = "admitted by the model, token-bucket:burst=10,rate=1/1s, recorded on a Tuesday";
    let plot = xy(
        "t",
        ["x", "y"],
        lines(&["sent", long], &[0.0, 1.0], 1.0),
        &[],
    );
    for width in WIDTHS {
        let doc = draw_plot(&plot, width);
        check("a long name", &doc, &named(&plot));
        if width == 280 {
            let label = doc.entry(long).expect("an entry");
            assert!(label.text.ends_with('…'), "{label:?}");
        }
    }
}

/// The text elements reading `text`.
fn find<'d>(doc: &'d Svg, text: &str) -> Vec<&'d Label> {
    doc.labels.iter().filter(|l| l.text == text).collect()
}

/// A line's `y` if it is one horizontal segment.
fn level(l: &Line) -> Option<f64> {
    (l.points.len() == 2 && l.points[0].1 == l.points[1].1).then(|| l.points[0].1)
}

/// The horizontal segments in `stroke` at each level within `area`, with their lengths.
fn dashes(doc: &Svg, stroke: &str, area: Rect) -> Vec<(f64, Vec<f64>)> {
    let mut levels: Vec<(f64, Vec<f64>)> = Vec::new();
    for l in &doc.lines {
        let Some(y) = level(l).filter(|_| l.stroke == stroke && l.width == 2.0) else {
            continue;
        };
        let (x0, x1) = (l.points[0].0, l.points[1].0);
        if !(area.0 <= x0.min(x1) && x0.max(x1) <= area.2 && (area.1..=area.3).contains(&y)) {
            continue;
        }
        match levels.iter_mut().find(|(at, _)| *at == y) {
            Some((_, lengths)) => lengths.push(l.length()),
            None => levels.push((y, vec![l.length()])),
        }
    }
    levels
}

/// The dash pattern of segments: `None` for one solid line, else the longest dash, rounded.
fn pattern(lengths: &[f64]) -> Option<i64> {
    (lengths.len() > 1).then(|| lengths.iter().copied().fold(0.0, f64::max).round() as i64)
}

#[test]
fn the_limit_2l_and_the_bound_are_told_apart_by_their_dashes_in_plot_and_legend() {
    let purple = format!("#{:02X}{:02X}{:02X}", PURPLE[0], PURPLE[1], PURPLE[2]);
    let plots = page_plots();
    let offsets = &plots[6].1;
    let window = &plots[0].1;
    for width in WIDTHS {
        let doc = draw_plot(offsets, width);
        let plot = doc.plots()[0];
        // In the plot: L (lower, so further down) solid, 2L dashed.
        let mut levels = dashes(&doc, FG, plot);
        levels.sort_by(|a, b| b.0.total_cmp(&a.0));
        let found: Vec<Option<i64>> = levels.iter().map(|l| pattern(&l.1)).collect();
        assert_eq!(found.len(), 2, "{levels:?}");
        assert_eq!(found[0], None, "L is solid: {levels:?}");
        let long = found[1].expect("2L is dashed");
        // In the legend: each swatch as its line.
        for (name, want) in [("L", None), ("2L", Some(long))] {
            let r = find(&doc, name)[0].rect;
            let swatch = Rect(r.0 - f64::from(MARK + GAP), r.1, r.0, r.3);
            let found = dashes(&doc, FG, swatch);
            assert_eq!(found.len(), 1, "{name}: {found:?}");
            assert_eq!(pattern(&found[0].1), want, "{name}'s swatch");
        }
        // The bound: dashed too, but shorter, and in colour.
        let doc = draw_plot(window, width);
        let bound = dashes(&doc, &purple, doc.plots()[0]);
        assert_eq!(bound.len(), 1, "{bound:?}");
        let short = pattern(&bound[0].1).expect("the bound is dashed");
        assert!(short < long - 2, "bound {short} against 2L {long}");
    }
}

/// A chart smaller than its own labels still draws, and ends: the bar chart once divided by
/// a zero-pixel room there and looked for ticks on an infinite axis forever.
#[test]
fn every_plot_draws_at_sizes_too_small_for_its_labels() {
    for (_, plot) in page_plots() {
        for (w, h) in [(1, 1), (20, 10), (40, 20), (60, 30)] {
            draw(w, h, |a| {
                // Too small may be an error; it must not be a hang or a panic.
                let _ = plot.draw(a, Theme::LIGHT);
            });
        }
    }
}
