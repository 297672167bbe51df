//! What the page saves: any of its plots as SVG and CSV, recomputed from the view's settings
//! (every run is deterministic, so they are the plots on the page).

use crate::controls::{Controls, Named};
use crate::page;
use crate::sections::{self, Section, SectionParams};
use ratelab::plot::Plot;
use ratelab::Error;

/// A group of plots the page shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// The main figure's three plots (its controls).
    Main,
    /// Compare mode's small multiples (the main figure's controls).
    Compare,
    /// Section 1's small multiples (its own client, [`sections::rules_controls`]).
    Rules,
    /// A section figure (its own parameters).
    Section(Section),
}

/// The smallest and largest side of an exported plot, in pixels.
pub const EXPORT_SIDES: std::ops::RangeInclusive<u32> = 100..=4000;

impl View {
    /// `main`, `compare`, `rules` or `section:NAME`.
    pub fn parse(view: &str) -> Result<View, Error> {
        let accepted = || {
            let sections: Vec<_> = Section::ALL
                .iter()
                .map(|s| format!("section:{}", s.name()))
                .collect();
            format!("main, compare, rules or one of {}", sections.join(", "))
        };
        match view {
            "main" => Ok(View::Main),
            "compare" => Ok(View::Compare),
            "rules" => Ok(View::Rules),
            other => other
                .strip_prefix("section:")
                .and_then(Section::from_name)
                .map(View::Section)
                .ok_or_else(|| Error::Unknown {
                    what: "view".into(),
                    got: other.into(),
                    accepted: accepted(),
                }),
        }
    }

    /// The view's plots: `controls` for the main figure and compare mode, `params` for a
    /// section (a table alone has none).
    pub fn plots(self, controls: &Controls, params: &SectionParams) -> Result<Vec<Plot>, Error> {
        match self {
            View::Main => {
                let (readout, trace) = page::run(controls)?;
                Ok(page::main_plots(controls, &readout, &trace).into())
            }
            View::Compare => Ok(page::compare(controls)?
                .into_iter()
                .map(|(_, plot)| plot)
                .collect()),
            View::Rules => Ok(sections::rules()?.plots),
            View::Section(s) => Ok(s.figure(params)?.plot.into_iter().collect()),
        }
    }
}

/// Checks an export's size in pixels.
pub fn check_size(width: u32, height: u32) -> Result<(), String> {
    if EXPORT_SIDES.contains(&width) && EXPORT_SIDES.contains(&height) {
        Ok(())
    } else {
        Err(format!(
            "an export of {width} × {height} px: each side must be from {} to {} px",
            EXPORT_SIDES.start(),
            EXPORT_SIDES.end()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_are_named_and_unknown_ones_refused_with_what_is_accepted() {
        assert_eq!(View::parse("main").expect("main"), View::Main);
        assert_eq!(
            View::parse("section:lockout").expect("lockout"),
            View::Section(Section::Lockout)
        );
        let e = View::parse("section:nope")
            .expect_err("unknown")
            .to_string();
        assert!(
            e.contains("section:nope") && e.contains("section:swc-offsets"),
            "{e}"
        );
    }

    #[test]
    fn every_view_has_its_plots() {
        let c = Controls::default();
        let p = SectionParams::default();
        assert_eq!(View::Main.plots(&c, &p).expect("main").len(), 3);
        assert_eq!(View::Compare.plots(&c, &p).expect("compare").len(), 6);
        let lockout = View::Section(Section::Lockout)
            .plots(&c, &p)
            .expect("lockout");
        assert_eq!(lockout.len(), 1);
        assert!(
            lockout[0].csv().contains("\nrejects recorded,"),
            "{}",
            lockout[0].csv()
        );
        let rules = View::parse("rules").expect("rules").plots(&c, &p);
        let compare = View::Compare.plots(&sections::rules_controls(), &p);
        assert_eq!(
            rules.expect("rules"),
            compare.expect("compare"),
            "section 1's plots are compare mode's on its own client, whatever the lab's controls"
        );
        let table = View::Section(Section::BoundaryTable).plots(&c, &p);
        assert_eq!(
            table.expect("a table").len(),
            0,
            "a table alone has no plot"
        );
    }

    #[test]
    fn export_sizes_outside_the_range_are_refused() {
        assert!(check_size(880, 260).is_ok());
        let e = check_size(99, 260).expect_err("too narrow");
        assert!(e.contains("99 × 260") && e.contains("100 to 4000"), "{e}");
        assert!(check_size(880, 4001).is_err());
    }
}
