//! The essay's section charts and section 1's small multiples, as the sections compute them,
//! drawn at every width the page draws them at (a 280-pixel phone to 880): each names every
//! line in a legend outside its plot, writes its counts as whole numbers, and no text passes
//! an edge or overlaps another. The checks are the chart crate's own (`svg/` in its tests).

#[path = "../../ratelab-charts/tests/svg/mod.rs"]
mod svg;

use ratelab_charts::{Draw, Theme};
use ratelab_page::controls::Named;
use ratelab_page::sections::{rules, Dials, Section};
use svg::{check, draw, draw_plot, named, whole_numbers, WIDTHS};

#[test]
fn every_section_chart_names_its_lines_outside_the_plot_at_every_width() {
    let mut drawn = 0;
    for &section in Section::ALL {
        let params = section.params(&Dials::default());
        let figure = section.figure(&params).expect("runs");
        let Some(plot) = figure.plot else { continue };
        for width in WIDTHS {
            let doc = draw_plot(&plot, width);
            check(section.name(), &doc, &named(&plot));
            whole_numbers(section.name(), &doc);
        }
        drawn += 1;
    }
    assert_eq!(drawn, 6, "every section with a chart");
}

#[test]
fn section_ones_small_multiples_keep_their_legend() {
    let figure = rules().expect("runs");
    for (caption, plot) in figure.captions.iter().zip(&figure.plots) {
        assert!(named(plot).len() >= 2, "{caption}");
        for (width, height) in [(280, 180), (420, 180)] {
            let doc = draw(width, height, |a| {
                plot.draw(a, Theme::LIGHT).expect("draws")
            });
            check(caption, &doc, &named(plot));
        }
    }
}
