//! The main figure's mechanism view: a playhead over the run's decisions. At any decision it
//! shows the trailing window `(t − W, t]` over the arrivals with the admissions inside it,
//! and what the limiter holds, from [`ratelab::sim::Mechanism`]; this module turns that into
//! the frame the page writes out and the chart it draws.

use ratelab::decimal::{fixed, shortest};
use ratelab::limiter::{State, StateKind};
use ratelab::sim::{Mechanism, Trace};
use ratelab_charts::{self as charts, Bins, MechanismChart};
use serde::Serialize;

/// At most this many points of the state are drawn (the rest are decimated away).
const MAX_POINTS: usize = 3_000;

/// What one run's mechanism view draws at every frame, computed once per run: the arrivals
/// binned, the state series decimated, the boundaries in seconds.
#[derive(Debug, Clone, Default)]
pub struct Playback {
    bins: Bins,
    xs: Vec<f64>,
    ys: Vec<f64>,
    part: Vec<f64>,
    boundaries: Vec<f64>,
    x_max: f64,
    window_s: f64,
}

/// What the page shows beside the mechanism chart at one decision.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Frame {
    /// The decision's index, from 0.
    pub index: usize,
    /// How many decisions the run has.
    pub decisions: usize,
    /// The playhead's time `t`, in seconds: the decision's arrival, or its departure for an
    /// admission that queued (the auditor counts it then).
    pub time_s: f64,
    /// Admissions in `(t − W, t]`.
    pub band: u64,
    /// `L`.
    pub limit: u64,
    /// Whether the band holds more than `L`.
    pub over: bool,
    /// The state's kind: `tokens`, `log`, `count`, `estimate`, `excess` or `queue`.
    pub kind: &'static str,
    /// The state's value just after the decision.
    pub value: f64,
    /// The band against the limit, after its count: `admitted in (t − W, t], over L = 60`.
    pub band_text: String,
    /// The decision, in a sentence.
    pub text: String,
    /// The state, in a sentence.
    pub state_text: String,
}

/// The state's name on the chart's axis.
fn label(kind: StateKind) -> &'static str {
    match kind {
        StateKind::Tokens => "tokens",
        StateKind::Log => "entries in the log",
        StateKind::Count => "count this window",
        StateKind::Estimate => "estimate",
        StateKind::Excess => "excess",
        StateKind::Queue => "queued",
    }
}

impl Playback {
    /// The view of a run: its horizon in seconds (`Readout::horizon_s`), window, trace and
    /// mechanism.
    pub fn new(horizon_s: f64, window_s: u64, trace: &Trace, mech: &Mechanism) -> Playback {
        let horizon = (horizon_s * 1e6) as u64;
        let window_us = window_s * 1_000_000;
        let bins = (horizon / (window_us / 12).max(1)).clamp(12, 240) as usize;
        let times: Vec<f64> = (0..mech.len())
            .map(|i| mech.band_end(trace, i).unwrap_or(0) as f64 / 1e6)
            .collect();
        // The state's extra part: the log's admitted entries, or the counter's current window.
        let part: Vec<f64> = match mech.kind {
            StateKind::Log if !mech.rejects.is_empty() => mech
                .value
                .iter()
                .zip(&mech.rejects)
                .map(|(v, &r)| v - f64::from(r))
                .collect(),
            StateKind::Estimate => mech.current.iter().map(|&c| f64::from(c)).collect(),
            _ => Vec::new(),
        };
        let (xs, ys, part) = decimate(&times, &mech.value, &part);
        let boundaries = mech.boundaries.as_ref().map_or_else(Vec::new, |b| {
            if b.count > 400 {
                Vec::new()
            } else {
                b.iter().map(|t| t as f64 / 1e6).collect()
            }
        });
        Playback {
            bins: charts::bin_decisions(&trace.times, &trace.admitted, horizon, bins),
            xs,
            ys,
            part,
            boundaries,
            x_max: horizon_s,
            window_s: window_s as f64,
        }
    }

    /// The frame at decision `i`, if the run has one.
    pub fn frame(&self, trace: &Trace, mech: &Mechanism, i: usize) -> Option<Frame> {
        let f = mech.at(i)?;
        let time_s = mech.band_end(trace, i)? as f64 / 1e6;
        let arrival = *trace.times.get(i)? as f64 / 1e6;
        let decision = if !trace.admitted[i] {
            "rejected".to_owned()
        } else if mech.at_departure && time_s > arrival {
            format!("admitted, queued until {} s", fixed(time_s, 3))
        } else {
            "admitted".to_owned()
        };
        let l = mech.limit;
        let text = format!(
            "Decision {} of {}, arriving at {} s: {decision}.",
            i + 1,
            mech.len(),
            fixed(arrival, 3)
        );
        let band_text = format!(
            "admitted in (t − W, t], {} L = {l}",
            if f.over { "over" } else { "within" }
        );
        Some(Frame {
            index: i,
            decisions: mech.len(),
            time_s,
            band: f.band,
            limit: l,
            over: f.over,
            kind: f.state.kind().name(),
            value: f.state.value(),
            band_text,
            text,
            state_text: state_text(&f.state),
        })
    }

    /// The chart at decision `i` (the last decision's if `i` is past it).
    pub fn chart<'a>(&'a self, trace: &Trace, mech: &'a Mechanism, i: usize) -> MechanismChart<'a> {
        let i = i.min(mech.len().saturating_sub(1));
        let f = mech.at(i);
        let now_s = mech.band_end(trace, i).unwrap_or(0) as f64 / 1e6;
        let state = f.map(|f| f.state);
        // The playhead's bin: its decisions up to the playhead, by decision.
        let width_us = (self.bins.width_s * 1e6).round().max(1.0) as u64;
        let at = trace.times.get(i).copied().unwrap_or(0);
        let bin = (at / width_us) as usize;
        let first = trace.times.partition_point(|&t| t < bin as u64 * width_us);
        let upto = if mech.is_empty() { first } else { i + 1 };
        let admitted = trace.admitted[first..upto].iter().filter(|&&a| a).count() as u32;
        let rejected = (upto - first) as u32 - admitted;
        MechanismChart {
            current: (
                bin.min(self.bins.admitted.len().saturating_sub(1)),
                admitted,
                rejected,
            ),
            bins: &self.bins,
            x_max: self.x_max,
            now_s,
            window_s: self.window_s,
            band: f.map_or(0, |f| f.band),
            limit: mech.limit,
            boundaries_s: &self.boundaries,
            state_label: label(mech.kind),
            state_xs: &self.xs,
            state_ys: &self.ys,
            part: (!self.part.is_empty()).then(|| {
                let name = if mech.kind == StateKind::Log {
                    "admitted entries"
                } else {
                    "this window's count"
                };
                (name, self.part.as_slice())
            }),
            mark: (mech.mark as f64, mark_label(mech.kind)),
            state_now: state.map_or(0.0, |s| s.value()),
        }
    }
}

/// Where the playhead starts: the first decision whose window is the run's busiest.
pub fn start(mech: &Mechanism) -> usize {
    let busiest = mech.busiest();
    mech.band
        .iter()
        .position(|&b| u64::from(b) == busiest)
        .unwrap_or(0)
}

fn mark_label(kind: StateKind) -> &'static str {
    match kind {
        StateKind::Tokens => "capacity B",
        StateKind::Log | StateKind::Count | StateKind::Estimate => "limit L",
        StateKind::Excess | StateKind::Queue => "burst",
    }
}

/// The state in a sentence.
fn state_text(s: &State) -> String {
    match *s {
        State::Tokens { tokens, capacity } => format!(
            "The bucket holds {} tokens of {capacity}: {} more {} would pass at once.",
            fixed(tokens, 2),
            shortest(tokens.floor()),
            if tokens.floor() == 1.0 {
                "request"
            } else {
                "requests"
            }
        ),
        State::Log {
            entries,
            rejects,
            limit,
        } => match rejects {
            Some(r) if r > 0 => format!(
                "The log holds {entries} entries in its window, {r} of them recorded rejects, against L = {limit}{}.",
                if entries >= limit { ": it rejects until some leave" } else { "" }
            ),
            _ => format!("The log holds {entries} entries in its window, against L = {limit}."),
        },
        State::Count { count, limit } => {
            format!("This window has counted {count}, against L = {limit}; the count starts again at the next boundary.")
        }
        State::Estimate {
            current,
            previous,
            estimate,
            limit,
        } => format!(
            "Previous window {previous}, this one {current}: the weighted estimate is {}, against L = {limit}.",
            fixed(estimate, 2)
        ),
        State::Excess { excess, burst } => format!(
            "The excess is {} requests, against a burst of {burst}.",
            fixed(excess, 2)
        ),
        State::Queue { queued, burst } => {
            format!("{queued} requests wait in the queue, which holds {burst}.")
        }
    }
}

/// At most [`MAX_POINTS`] points of the state: every point if they fit, else each bucket's
/// first point (so steps stay steps) with the part taken at the same points.
fn decimate(xs: &[f64], ys: &[f64], part: &[f64]) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let step = xs.len().div_ceil(MAX_POINTS).max(1);
    let pick = |v: &[f64]| v.iter().step_by(step).copied().collect::<Vec<_>>();
    (pick(xs), pick(ys), pick(part))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controls::{Attack, Controls, Named, NginxConf, RateUnit};
    use crate::page::{run_mechanism, Readout};
    use ratelab::spec::LimiterKind;

    fn frames(c: &Controls) -> (Readout, Vec<Frame>) {
        let (r, trace, mech) = run_mechanism(c).expect("runs");
        let p = Playback::new(r.horizon_s, c.window_s, &trace, &mech);
        let frames = (0..mech.len())
            .map(|i| p.frame(&trace, &mech, i).expect("a frame"))
            .collect();
        (r, frames)
    }

    #[test]
    fn stepping_through_the_boundary_burst_the_band_goes_to_l_then_2l_and_turns_red() {
        let c = Controls {
            attack: Attack::BoundaryBurst,
            ..Controls::opening()
        };
        let (r, frames) = frames(&c);
        assert_eq!(frames.len(), 120);
        assert_eq!(frames[59].band, 60);
        assert!(!frames[59].over);
        assert_eq!(frames[119].band, 120);
        assert!(frames[119].over);
        assert_eq!(frames[119].band_text, "admitted in (t − W, t], over L = 60");
        assert_eq!(
            frames[59].band_text,
            "admitted in (t − W, t], within L = 60"
        );
        assert_eq!(
            frames[119].text,
            "Decision 120 of 120, arriving at 60.500 s: admitted."
        );
        let max = frames.iter().map(|f| f.band).max();
        assert_eq!(
            max,
            Some(r.worst_window),
            "the largest band is the busiest window"
        );
        assert!(frames.iter().all(|f| f.kind == "count"));
    }

    /// nginx as a `limit_req` line that lets two requests above the rate through at once and
    /// delays three more: `rate=7r/m burst=5 delay=2`.
    fn nginx_delaying() -> NginxConf {
        NginxConf {
            rate: 7,
            unit: RateUnit::PerMinute,
            burst: 5,
            delay: 2,
            nodelay: false,
        }
    }

    #[test]
    fn the_largest_band_is_the_busiest_window_for_every_limiter_and_attack() {
        for &algorithm in <LimiterKind as Named>::ALL {
            for attack in [
                Attack::None,
                Attack::BoundaryBurst,
                Attack::Flood,
                Attack::RetryStorm,
            ] {
                let c = Controls {
                    algorithm,
                    attack,
                    ..Controls::default()
                }
                .with_nginx(nginx_delaying());
                let (r, frames) = frames(&c);
                let max = frames.iter().map(|f| f.band).max().unwrap_or(0);
                assert_eq!(max, r.worst_window, "{algorithm:?} {attack:?}");
                let first = frames.iter().position(|f| f.band == max);
                let (_, _, mech) = run_mechanism(&c).expect("runs");
                assert_eq!(Some(start(&mech)), first, "{algorithm:?} {attack:?}");
            }
        }
    }

    #[test]
    fn a_log_that_records_rejects_is_over_full_while_it_locks_the_client_out() {
        for record_rejects in [false, true] {
            let c = Controls {
                algorithm: LimiterKind::SlidingLog,
                attack: Attack::RetryStorm,
                record_rejects,
                ..Controls::default()
            };
            let (_, frames) = frames(&c);
            let most = frames.iter().map(|f| f.value).fold(0.0, f64::max);
            assert_eq!(
                most > 60.0,
                record_rejects,
                "record={record_rejects}: {most}"
            );
            if record_rejects {
                let full = frames.iter().find(|f| f.value > 60.0).expect("over-full");
                assert!(
                    full.state_text.contains("recorded rejects"),
                    "{}",
                    full.state_text
                );
                assert!(
                    full.state_text.contains("it rejects until some leave"),
                    "{}",
                    full.state_text
                );
            }
        }
    }

    /// nginx's excess, in every form: a request that waits is counted in the window when it
    /// leaves, and the frame says until when; with nodelay none waits.
    #[test]
    fn nginx_shows_its_excess_and_counts_a_delayed_request_when_it_leaves() {
        let c = Controls {
            algorithm: LimiterKind::Nginx,
            attack: Attack::BoundaryBurst,
            limit: 7,
            ..Controls::default()
        }
        .with_nginx(nginx_delaying());
        let (r, trace, mech) = run_mechanism(&c).expect("runs");
        assert!(mech.at_departure, "requests wait: counted when they leave");
        assert_eq!(mech.kind, StateKind::Excess);
        assert_eq!(mech.mark, 5, "drawn against the burst");
        let p = Playback::new(r.horizon_s, c.window_s, &trace, &mech);
        let frames: Vec<Frame> = (0..mech.len())
            .map(|i| p.frame(&trace, &mech, i).expect("a frame"))
            .collect();
        assert!(frames.iter().all(|f| f.kind == "excess"));
        assert!(
            frames.iter().all(|f| f.value <= 5.0),
            "never above the burst"
        );
        let queued: Vec<&Frame> = frames
            .iter()
            .filter(|f| f.text.contains("queued until"))
            .collect();
        // Two ticks of 7: the first passes with 2 more at once and 3 waiting, the second
        // finds the burst nearly full (3 × 8.621 s leaked by then is not a whole request).
        assert!(
            !queued.is_empty(),
            "{:?}",
            frames[0..7].iter().map(|f| &f.text).collect::<Vec<_>>()
        );
        for f in &queued {
            let arrival = trace.times[f.index] as f64 / 1e6;
            assert!(
                f.time_s > arrival,
                "{}: the band ends at its departure",
                f.text
            );
        }
        assert!(
            frames[0].state_text.contains("against a burst of 5"),
            "{}",
            frames[0].state_text
        );
        assert_eq!(frames.iter().map(|f| f.band).max(), Some(r.worst_window));
        // nodelay: the same excess, and nothing waits.
        let nodelay = c.with_nginx(NginxConf {
            nodelay: true,
            ..nginx_delaying()
        });
        let (_, trace, mech) = run_mechanism(&nodelay).expect("runs");
        assert!(!mech.at_departure);
        assert_eq!(mech.kind, StateKind::Excess);
        assert!(trace.released.iter().zip(&trace.times).all(|(r, t)| r == t));
    }

    #[test]
    fn the_chart_draws_every_kind_into_svg() {
        use plotters::prelude::*;
        for &algorithm in <LimiterKind as Named>::ALL {
            let c = Controls {
                algorithm,
                attack: Attack::BoundaryBurst,
                ..Controls::default()
            }
            .with_nginx(nginx_delaying());
            let (r, trace, mech) = run_mechanism(&c).expect("runs");
            let p = Playback::new(r.horizon_s, c.window_s, &trace, &mech);
            let mut svg = String::new();
            {
                let area = SVGBackend::with_string(&mut svg, (880, 300)).into_drawing_area();
                let chart = p.chart(&trace, &mech, start(&mech));
                charts::mechanism_chart(&area, &chart, charts::Theme::LIGHT).expect("draws");
            }
            assert!(svg.contains("in (t − W, t], L = 60"), "{algorithm:?}");
            assert!(svg.contains(label(mech.kind)), "{algorithm:?}");
        }
    }
}
