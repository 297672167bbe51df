//! The lab's gateways control (issue 19): the reader's own figure (limiter, traffic, limit,
//! window, seed) run again behind `N` gateways, routed and coordinated as the reader chooses
//! ([`Setting`]), beside the one limiter the figure shows. The backend's trailing-window count
//! of each over the run, a row of each (busiest window, worst case, room instants, served),
//! what that says in a sentence, and the command line that reproduces the fleet's run.
//! Computed by the tools module when the reader turns the control on.

use crate::controls::Controls;
use crate::gateways::Setting;
use crate::page::window_series;
use ratelab::decimal::fixed;
use ratelab::plot::{Plot, Series, BLUE, ORANGE};
use ratelab::sim::{trace, RunStats, Scenario};
use ratelab::spec::FleetSpec;
use ratelab::theory;
use ratelab::Error;
use ratelab_charts as charts;
use serde::Serialize;

/// The lab's figure behind gateways.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LabGateways {
    /// The backend's trailing-window count over the run: the one limiter, and the fleet.
    #[serde(skip)]
    pub plot: Plot,
    /// Header, the one limiter's row, the fleet's row.
    pub table: Vec<Vec<String>>,
    /// What the rows say.
    pub sentence: String,
    /// `ratelab simulate` with `--gateways`, `--route` and `--coord`: the fleet's row.
    pub command: String,
    /// The fleet's busiest window and room instants, for tests.
    pub busiest: u64,
    /// Its room instants.
    pub room_instants: u64,
}

/// The reader's figure (`controls`) behind the gateways of `setting`. A split of a limit that
/// `N` does not divide, or a fleet too large for memory, is refused with what is accepted.
pub fn lab(controls: &Controls, setting: &Setting) -> Result<LabGateways, Error> {
    let one = controls.scenario()?;
    let mut fleet = one.clone();
    let spec = FleetSpec::parse(
        &setting.gateways.to_string(),
        Some(setting.route_spec()),
        Some(&setting.coord_spec()),
    )?;
    for l in &mut fleet.limiters {
        l.fleet = Some(spec);
    }
    fleet.validate()?;
    let (one_stats, one_trace) = trace(&one, 0, 0)?;
    let (fleet_stats, fleet_trace) = trace(&fleet, 0, 0)?;
    let room = fleet_stats.fleet.as_ref().map_or(0, |f| f.room_instants);
    let words = setting.fleet_words();
    let window_s = controls.window_s as f64;
    let horizon = crate::page::horizon(&fleet) as f64 / 1e6;
    let line = |name: String, t: &ratelab::sim::Trace, color| {
        let (xs, _) = window_series(t);
        let (xs, ys) = charts::window_steps(&xs, window_s);
        let (xs, ys) = charts::decimate_max(&xs, &ys, crate::page::MAX_POINTS);
        Series {
            name,
            points: xs.into_iter().zip(ys).collect(),
            color,
            markers: false,
            line: true,
        }
    };
    let plot = Plot::Xy {
        title: format!("The backend's trailing-window count: one limiter, and {words}"),
        x_label: "time (s)".into(),
        y_label: "admitted in the trailing window".into(),
        series: vec![
            line("one limiter".into(), &one_trace, BLUE),
            line(words.clone(), &fleet_trace, ORANGE),
        ],
        references: vec![(controls.limit as f64, "L".into())],
        y_range: None,
        x_range: Some((0.0, horizon)),
    };
    let row = |who: String, s: &Scenario, st: &RunStats, room: Option<u64>| {
        vec![
            who,
            st.busiest.to_string(),
            theory::worst_case(&s.limiters[0], s.limit, s.window)
                .map_or_else(|| "none".to_owned(), |b| b.to_string()),
            room.map_or_else(|| "-".to_owned(), |r| r.to_string()),
            st.served_share()
                .map_or_else(|| "-".to_owned(), |x| format!("{}%", fixed(100.0 * x, 1))),
        ]
    };
    let table = vec![
        [
            "enforced by",
            "busiest window",
            "worst case, any traffic",
            "room instants",
            "served",
        ]
        .map(String::from)
        .to_vec(),
        row("one limiter".into(), &one, &one_stats, None),
        row(words.clone(), &fleet, &fleet_stats, Some(room)),
    ];
    let limit = controls.limit;
    let held = |busiest: u64| match busiest.checked_sub(limit) {
        Some(0) | None => format!("{busiest}, within L = {limit}"),
        Some(over) => format!("{busiest}, {over} past L = {limit}"),
    };
    let rooms = match room {
        0 => "none of its admissions was a room instant".to_owned(),
        1 => "1 of its admissions was a room instant".to_owned(),
        n => format!("{n} of its admissions were room instants"),
    };
    let sentence = format!(
        "Behind {words}, the backend's busiest window held {}, and {rooms}; the one limiter's held {}.",
        held(fleet_stats.busiest),
        held(one_stats.busiest)
    );
    let mut args = controls.cli_args()?;
    args.extend([
        "--gateways".into(),
        setting.gateways.to_string(),
        "--route".into(),
        setting.route_spec().into(),
        "--coord".into(),
        setting.coord_spec(),
    ]);
    Ok(LabGateways {
        plot,
        table,
        sentence,
        command: ratelab::text::shell_line("ratelab", &args),
        busiest: fleet_stats.busiest,
        room_instants: room,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gateways::Setting;
    use ratelab::sim::simulate;

    fn controls() -> Controls {
        Controls::default()
    }

    /// The fleet's row is what the command line it shows computes: run 0 of the same
    /// scenario with `--gateways`.
    #[test]
    fn the_fleets_numbers_are_its_command_lines() {
        for (n, route, coord, every) in [
            (8, "random", "sync", 1_000),
            (4, "round-robin", "local", 1_000),
            (4, "hot", "split", 1_000),
            (16, "random", "central", 1_000),
        ] {
            let setting = Setting::lab(n, route, coord, every).expect("a setting");
            let c = controls();
            let g = lab(&c, &setting).expect("runs");
            let mut s = c.scenario().expect("valid");
            s.limiters[0].fleet = Some(
                FleetSpec::parse(
                    &n.to_string(),
                    Some(setting.route_spec()),
                    Some(&setting.coord_spec()),
                )
                .expect("valid"),
            );
            let r = &simulate(&s).expect("runs").results[0];
            assert_eq!(g.busiest, r.busiest_window_max, "{coord}");
            assert_eq!(Some(g.room_instants), r.room_instants, "{coord}");
            assert_eq!(g.table[2][1], r.busiest_window_max.to_string());
            assert!(
                g.command.contains(&format!("--gateways {n}")),
                "{}",
                g.command
            );
            assert!(g.sentence.contains(&r.busiest_window_max.to_string()));
            if coord == "central" {
                assert_eq!(
                    g.table[1][1], g.table[2][1],
                    "a central store is one limiter"
                );
                assert_eq!(g.room_instants, 0);
            }
        }
    }

    /// One gateway on its own is the one limiter.
    #[test]
    fn one_gateway_is_the_figures_limiter() {
        let setting = Setting::lab(1, "random", "local", 1_000).expect("a setting");
        let g = lab(&controls(), &setting).expect("runs");
        assert_eq!(g.table[1][1..3], g.table[2][1..3]);
        assert_eq!(g.table[1][4], g.table[2][4]);
        match &g.plot {
            Plot::Xy { series, .. } => assert_eq!(series[0].points, series[1].points),
            other => panic!("{other:?}"),
        }
    }

    /// A split of a limit the gateways do not divide is refused, naming it.
    #[test]
    fn a_split_that_does_not_divide_the_limit_is_refused() {
        let setting = Setting::lab(7, "random", "split", 1_000).expect("a setting");
        let e = lab(&controls(), &setting).expect_err("7 does not divide 100");
        let e = e.to_string();
        assert!(
            e.contains("'7'") && e.contains("divides the limit 60"),
            "{e}"
        );
    }
}
