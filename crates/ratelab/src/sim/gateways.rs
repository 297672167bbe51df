//! A fleet's decisions as its gateways saw them, for the figure of issue 19 ("every gateway
//! thought there was room"): beside each decision, the backend's true count of the trailing
//! window, the count the deciding gateway believed that window held, and whether an admission
//! was a room instant (one the shared limiter, holding every gateway's admissions, would have
//! refused).
//!
//! What a gateway believes, by coordination:
//! - `local` and `split`: its own admissions in the window (it knows of no other's);
//! - `sync:every=Δ,delay=δ`: every admission before its last snapshot, the one taken at the
//!   latest `kΔ` with `kΔ + δ` no later than now, that is still in the window, plus its own
//!   admissions since that instant;
//! - `central`: the store's count, every admission (the one limiter decides them all).
//!
//! For limiters that count admissions (the sliding log), a gateway admits exactly when what it
//! believes is under `L`, and an admission is a room instant exactly when the true count is at
//! `L` or above: the tests check both against the fleet's own decisions.

use super::{format_bytes, Scenario, MEMORY_BUDGET};
use crate::error::Error;
use crate::limiter::{Coord, Limiter};
use crate::time::Micros;
use std::collections::VecDeque;

/// Bytes a [`GatewayTrace`] keeps per decision.
pub const GATEWAY_TRACE_BYTES_PER_DECISION: u64 = 8 + 1 + 4 + 1 + 8 + 8;

/// Every decision of one run of a fleet, in order (see the module's documentation).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GatewayTrace {
    /// When each request arrived.
    pub times: Vec<Micros>,
    /// Whether it was admitted.
    pub admitted: Vec<bool>,
    /// The gateway the router sent it to.
    pub gateway: Vec<u32>,
    /// Whether its admission was a room instant.
    pub room: Vec<bool>,
    /// The backend's count just before the decision: admissions of every gateway in
    /// `(t − W, t]`, each counted at the instant it was decided.
    pub global: Vec<u64>,
    /// What the deciding gateway believed that count was.
    pub believed: Vec<u64>,
}

/// Run `run` of the scenario's limiter `index`, which must be a fleet (`--gateways`) coordinated
/// `local`, `split`, `sync` or `central`, under traffic that does not react to decisions.
pub fn gateway_trace(scenario: &Scenario, index: usize, run: u32) -> Result<GatewayTrace, Error> {
    scenario.validate()?;
    let spec = scenario.limiters.get(index).ok_or_else(|| {
        Error::invalid(
            "limiter",
            &index.to_string(),
            &format!("one of the scenario's {}", scenario.limiters.len()),
        )
    })?;
    let refuse = |accepted: &str| Err(Error::invalid("gateway trace", &spec.text, accepted));
    let Some(fleet_spec) = spec.fleet else {
        return refuse("a limiter with --gateways");
    };
    if scenario.traffic.closed_loop() {
        return refuse(
            "traffic that does not retry (a retrying client's tries depend on each answer)",
        );
    }
    if fleet_spec.skew > 0 && matches!(fleet_spec.coord, Coord::Sync { .. }) {
        return refuse("--coord sync with clocks that agree (a skewed gateway counts stamps, not the window this trace keeps)");
    }
    if matches!(fleet_spec.coord, Coord::Lease { .. }) {
        return refuse("--coord local, split, sync or central (a lease's permits are not counts)");
    }
    let Limiter::Fleet(mut fleet) = scenario.build_limiter(spec, run)? else {
        return refuse("a limiter with --gateways");
    };
    // Counted first: the lists are allocated once, and a run too long for them refused.
    let decisions = scenario.arrivals(run).count();
    let most = MEMORY_BUDGET / GATEWAY_TRACE_BYTES_PER_DECISION;
    if decisions as u64 > most {
        return Err(Error::invalid(
            "gateway trace",
            &format!("{decisions} decisions"),
            &format!(
                "at most {most} decisions a run ({} each, within {})",
                format_bytes(GATEWAY_TRACE_BYTES_PER_DECISION),
                format_bytes(MEMORY_BUDGET)
            ),
        ));
    }
    let mut out = GatewayTrace {
        times: Vec::with_capacity(decisions),
        admitted: Vec::with_capacity(decisions),
        gateway: Vec::with_capacity(decisions),
        room: Vec::with_capacity(decisions),
        global: Vec::with_capacity(decisions),
        believed: Vec::with_capacity(decisions),
    };
    let window = scenario.window;
    let coord = fleet.coord();
    // Every admission in the trailing window, and each gateway's own, in time order.
    let mut all: VecDeque<Micros> = VecDeque::new();
    let mut own: Vec<VecDeque<Micros>> = vec![VecDeque::new(); fleet.len()];
    let trim = |list: &mut VecDeque<Micros>, t: Micros| {
        while list.front().is_some_and(|&a| a.saturating_add(window) <= t) {
            list.pop_front();
        }
    };
    for t in scenario.arrivals(run) {
        let g = fleet.pick();
        trim(&mut all, t);
        trim(&mut own[g], t);
        let mine = &own[g];
        let global = all.len() as u64;
        let believed = match coord {
            Coord::Local | Coord::Split | Coord::Lease { .. } => mine.len() as u64,
            Coord::Sync { every, delay } => {
                let snapshot = t.saturating_sub(delay) / every * every;
                let before = all.partition_point(|&a| a < snapshot);
                let since = mine.len() - mine.partition_point(|&a| a < snapshot);
                (before + since) as u64
            }
            Coord::Central { .. } => global,
        };
        let (decision, room) = fleet.decide_traced(g, t);
        let ok = decision.admitted();
        if ok {
            all.push_back(t);
            own[g].push_back(t);
        }
        out.times.push(t);
        out.admitted.push(ok);
        out.gateway.push(g as u32);
        out.room.push(room);
        out.global.push(global);
        out.believed.push(believed);
    }
    Ok(out)
}

impl GatewayTrace {
    /// What the backend and each of the fleet's `gateways` gateways held at `at`, just before
    /// any decision at that instant, by the module's rules for `coord` (a sliding window of
    /// `window`): the true count of admissions in `(at − window, at)`, and each gateway's
    /// believed count, gateway 0 first. At the instant of a decision that no other shares,
    /// these are that decision's `global` and, for its gateway, `believed`. O(decisions).
    pub fn views_at(
        &self,
        coord: Coord,
        window: Micros,
        gateways: usize,
        at: Micros,
    ) -> (u64, Vec<u64>) {
        // Before the snapshot each gateway's view is built on (sync), or from no one (local
        // and split: only its own), or from everyone (central).
        let snapshot = match coord {
            Coord::Sync { every, delay } => at.saturating_sub(delay) / every.max(1) * every,
            Coord::Central { .. } => Micros::MAX,
            Coord::Local | Coord::Split | Coord::Lease { .. } => 0,
        };
        let (mut truth, mut shared) = (0, 0);
        let mut own = vec![0; gateways];
        for i in 0..self.times.len() {
            let t = self.times[i];
            if t >= at {
                break;
            }
            if !self.admitted[i] || t.saturating_add(window) <= at {
                continue;
            }
            truth += 1;
            if t < snapshot {
                shared += 1;
            } else if let Some(n) = own.get_mut(self.gateway[i] as usize) {
                *n += 1;
            }
        }
        (truth, own.into_iter().map(|n| n + shared).collect())
    }
}

#[cfg(test)]
mod tests {
    use crate::sim::{simulate_run, Scenario};
    use crate::spec::{FleetSpec, LimiterSpec, TrafficSpec};
    use crate::time::{MINUTE, SECOND};
    use proptest::prelude::*;

    // Here, not beside the views in `limiter`: the core's `limiter` depends on nothing of `sim`.
    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// A skewed `sync` fleet's hinted counts are the binary searches' (the searched count
        /// is checked beside the hinted one at every decision and `Retry-After` of a unit
        /// test's run), for every limiter counted from stamps, any number of gateways, route,
        /// interval, delay and skew, and traffic steady, bursty, in a flood or retrying on
        /// `Retry-After`.
        #[test]
        fn skewed_views_count_their_stamps_as_a_search_does(
            kind in prop_oneof![
                Just("fixed-window"),
                Just("sliding-window-counter"),
                Just("sliding-log"),
            ],
            n in 2u32..10,
            route in prop_oneof![Just("round-robin"), Just("random"), Just("skewed:hot=0.7")],
            every_ms in 1u64..5_000,
            delay_ms in 0u64..3_000,
            // Whole seconds too, so that with a flood's whole milliseconds stamps fall on the
            // windows' edges.
            skew_ms in prop_oneof![1u64..120_000, (1u64..120).prop_map(|s| s * 1000)],
            traffic in prop_oneof![
                Just("steady:load=2"),
                Just("steady:load=0.7"),
                Just("page-loads:load=1.5"),
                Just("flood:every=20ms,for=30s"),
                Just("flood:every=250ms,for=2min"),
                Just("boundary-burst"),
                Just("retry:rate=6/5min,spike=40,at=20s,clients=30,tries=5,every=2s,retry-after=honor"),
            ],
            (limit, window) in prop_oneof![Just((20u64, SECOND)), Just((100, MINUTE)), Just((7, 10 * SECOND))],
            seed in any::<u64>(),
        ) {
            let mut spec = LimiterSpec::parse(kind).expect("a limiter");
            let coord = format!("sync:every={every_ms}ms,delay={delay_ms}ms,skew={skew_ms}ms");
            spec.fleet = Some(FleetSpec::parse(&n.to_string(), Some(route), Some(&coord)).expect("a fleet"));
            let s = Scenario {
                limiters: vec![spec],
                traffic: TrafficSpec::parse(traffic).expect("traffic"),
                limit,
                window,
                duration: 3 * MINUTE,
                runs: 1,
                seed,
            };
            prop_assert!(s.validate().is_ok(), "{:?}", s.validate());
            let stats = simulate_run(&s, 0).expect("runs");
            prop_assert!(stats[0].decisions > 0);
        }
    }
}
