//! A fleet of gateways enforcing one limit: a router sends each request to one of `N`
//! gateways, and each decides by its coordination (`local`, `split`, `sync`, `central` or
//! `lease`). Beside the decisions the fleet keeps the one limiter that saw every admission of
//! every gateway (`truth`): a **room instant** is an admission that this shared limiter would
//! have refused, a gateway's view having shown room that the fleet as a whole no longer had.
//!
//! - `local`: each gateway enforces the whole limit on what it sees.
//! - `split`: each enforces `1/N` of it (the limiters are built so; `servers=K` with random
//!   routing is this).
//! - `sync:every=Δ,delay=δ`: at `Δ, 2Δ, …` the store takes every admission so far; what it
//!   took at `kΔ` reaches the gateways at `kΔ + δ`. A gateway decides on that plus its own
//!   admissions since `kΔ` (its *view*: the snapshot, with its own admissions replayed).
//! - `central:rtt=R`: one shared limiter decides every request, when it reaches the store
//!   (`R/2` after it arrived); the backend gets it `R` after it arrived. During an outage the
//!   gateways fail open (admit everything) or closed (refuse everything), and the store
//!   learns nothing.
//! - `lease:size=B,ttl=T`: a gateway with no permit left asks the central limiter for `B`
//!   (one decision each, stopping at the first refusal) and spends them locally until they run
//!   out or `T` has passed.

use super::decide::{Decide, Decision, State};
use super::router::{Coord, FleetStats, GatewayStats, Route, Router};
use super::{Limiter, Shared};
use crate::rng::Rng;
use crate::time::Micros;
use std::collections::VecDeque;
use std::sync::Arc;

mod stamps;
use stamps::{trim_and_cut, Skewed, StampRule};

/// The gateways, their router and coordination, and the shared limiter that measures them.
#[derive(Debug, Clone)]
pub struct Fleet {
    coord: Coord,
    router: Router,
    /// `local`, `split`: each gateway's limiter; `sync`: each gateway's view.
    gateways: Vec<Limiter>,
    /// The limiter that has seen every admission (and, for `central` and `lease`, decides).
    truth: Limiter,
    /// `central`, `lease`: the store's limiter.
    store: Option<Limiter>,
    /// `sync`: the next snapshot instant, the snapshots not yet delivered, the one delivered,
    /// the instant of the snapshot each gateway's view is built on, each gateway's admissions
    /// since it, and snapshots' limiters no longer held, kept to be written over.
    next_sync: Micros,
    pending: VecDeque<Snapshot>,
    delivered: Snapshot,
    built_on: Vec<Micros>,
    spare: Vec<Arc<Limiter>>,
    own: Vec<VecDeque<Micros>>,
    /// Admissions so far, all gateways'.
    taken: u64,
    /// `lease`: each gateway's permits left and when they expire.
    permits: Vec<(u64, Micros)>,
    room: u64,
    tallies: Vec<(u64, u64)>,
    /// Each gateway's busiest window so far.
    windows: Vec<Busiest>,
    window: Micros,
    /// `sync` over sliding logs that log no rejects: each view is counted, not built (its
    /// limit and window; see [`Fleet::counted_admit`]), from every admission still in the
    /// window (`recent`, oldest first).
    counted: Option<(u64, Micros)>,
    recent: VecDeque<Micros>,
    /// Counted views: the delivered snapshot's instant `s` (the latest `kΔ` with `kΔ + δ` no
    /// later than the last decision, or 0), and how many of `recent` are before it (the first
    /// `cut`: `recent` is in time order, and `s` never goes back).
    snapshot_at: Micros,
    cut: usize,
    /// `local`, `split`: how far ahead of the backend's clock each gateway's reads (empty: all
    /// agree); a gateway's limiter decides by its own clock.
    offsets: Vec<Micros>,
    /// Counted `sync` views with the clocks skewed: each gateway's admissions as its own clock
    /// stamped them, and how a gateway counts them: a sliding log's trailing window, or by
    /// calendar windows of its own clock (a fixed window's, or a sliding-window counter's two).
    skewed: Option<Skewed>,
    /// The gateway of the last decision: the one a `Retry-After` is asked of.
    last: usize,
}

/// The most admissions one gateway made in any window: a ring of its latest admissions, one
/// more than that most (a power of two), as the auditor keeps them. An admission raises the
/// most exactly when the `most`-th admission before it is still in its window; no admission is
/// ever taken out. O(1) per admission; the ring doubles when the most outgrows it.
#[derive(Debug, Clone, Default)]
struct Busiest {
    ring: Vec<Micros>,
    /// Admissions so far.
    count: u64,
    most: u64,
}

impl Busiest {
    fn admit(&mut self, t: Micros, window: Micros) {
        let mask = self.ring.len().wrapping_sub(1);
        let at = self.count as usize;
        let raise = match self.most {
            0 => true,
            most => {
                self.count >= most
                    && self.ring[at.wrapping_sub(most as usize) & mask].saturating_add(window) > t
            }
        };
        if raise {
            self.most += 1;
            if self.ring.len() <= self.most as usize {
                // Twice as large (at least 8), each admission kept at its own number's slot.
                let len = self.ring.len();
                let mut grown = vec![0; (2 * len).max(8)];
                let wide = grown.len() - 1;
                for i in at.saturating_sub(len)..at {
                    grown[i & wide] = self.ring[i & mask];
                }
                self.ring = grown;
            }
        }
        let mask = self.ring.len() - 1;
        self.ring[self.count as usize & mask] = t;
        self.count += 1;
    }
}

/// A view's base instant when the view is out of date.
const STALE: Micros = Micros::MAX;

/// The store's limiter at a sync instant, shared by every gateway that builds on it.
#[derive(Debug, Clone)]
struct Snapshot {
    /// The instant: it holds every admission before it.
    at: Micros,
    /// How many admissions it holds.
    taken: u64,
    /// `None` where views are counted (no view is built from it).
    limiter: Option<Arc<Limiter>>,
}

impl Fleet {
    /// `gateways` limiters (built as the coordination wants: the whole limit for `local` and
    /// `sync`, `1/N` for `split`), routed to by `route` (drawing from `routing`), and `shared`,
    /// one limiter of the whole limit (for the measure, and the store of `central` and
    /// `lease`). `window` is the window each gateway's busiest is counted in.
    pub fn new(
        gateways: Vec<Limiter>,
        shared: Limiter,
        coord: Coord,
        route: Route,
        routing: Rng,
        window: Micros,
    ) -> Self {
        let n = gateways.len();
        let store =
            matches!(coord, Coord::Central { .. } | Coord::Lease { .. }).then(|| shared.clone());
        let next_sync = match coord {
            Coord::Sync { every, .. } => every,
            _ => Micros::MAX,
        };
        // A view of sliding logs is the snapshot's admissions with its own replayed, and a log
        // admits while fewer than its limit are in the window: a count of both is the view's
        // decision, with no log copied (every gateway's log is the shared limiter's kind).
        let counted = match (coord, &shared) {
            (Coord::Sync { .. }, Limiter::SlidingLog(log))
                if !log.record_rejects
                    && gateways.iter().all(|g| {
                        matches!(g, Limiter::SlidingLog(l)
                            if !l.record_rejects && l.window == log.window && l.limit == log.limit)
                    }) =>
            {
                Some((log.limit(), log.window))
            }
            _ => None,
        };
        Fleet {
            coord,
            router: Router::new(route, n, routing),
            built_on: vec![0; n],
            spare: Vec::new(),
            own: vec![VecDeque::new(); n],
            permits: vec![(0, 0); n],
            tallies: vec![(0, 0); n],
            windows: vec![Busiest::default(); n],
            window,
            delivered: Snapshot {
                at: 0,
                taken: 0,
                limiter: counted.is_none().then(|| Arc::new(shared.clone())),
            },
            truth: shared,
            store,
            gateways,
            next_sync,
            pending: VecDeque::new(),
            taken: 0,
            room: 0,
            counted,
            recent: VecDeque::new(),
            snapshot_at: 0,
            cut: 0,
            offsets: Vec::new(),
            skewed: None,
            last: 0,
        }
    }

    /// The fleet with gateway `g`'s clock `offsets[g]` ahead of the backend's (one per
    /// gateway; all 0 changes nothing). Called before any decision.
    ///
    /// Under `local` and `split` each gateway's limiter runs on its own clock, so a fixed
    /// window's boundaries move, and a limiter that only compares instants (a sliding log, a
    /// token bucket, GCRA) decides as before. Under `sync` (sliding logs, whose views are
    /// counted, fixed windows and sliding-window counters; the scenario language refuses the
    /// others) every admission is
    /// stamped by the clock of the gateway that made it, as a store of timestamps sent by its
    /// clients keeps them, and a gateway counts the stamps in its own window: the others' up
    /// to the snapshot it has, and all of its own. A gateway ahead finds the others'
    /// admissions older than they are, and theirs of its own newer. For fixed windows and
    /// counters its window is the calendar window of its own clock, and a stamp counts in the
    /// window it falls in (as a store keying counters by the stamp's window does). `central` and `lease`
    /// take none (the store's clock decides).
    pub fn with_skew(mut self, offsets: Vec<Micros>) -> Self {
        debug_assert_eq!(offsets.len(), self.len(), "one offset per gateway");
        if offsets.iter().all(|&o| o == 0) {
            return self;
        }
        match (self.coord, self.counted) {
            (Coord::Local | Coord::Split, _) => self.offsets = offsets,
            (Coord::Sync { .. }, Some(_)) => {
                self.skewed = Some(Skewed::new(offsets.len(), StampRule::Log));
                self.offsets = offsets;
            }
            (Coord::Sync { .. }, None) => {
                // Fixed windows and sliding-window counters that record no rejects: counted
                // from the stamps too.
                let (rule, limit, window) = match &self.truth {
                    Limiter::FixedWindow(w) if !w.record_rejects => {
                        (StampRule::Window, w.limit, w.window)
                    }
                    Limiter::SlidingWindowCounter(c) if !c.record_rejects => {
                        (StampRule::Counter, c.limit, c.window)
                    }
                    _ => {
                        debug_assert!(false, "no skew for a synced {:?}", self.truth);
                        return self;
                    }
                };
                self.counted = Some((limit, window));
                self.skewed = Some(Skewed::new(offsets.len(), rule));
                self.offsets = offsets;
            }
            _ => debug_assert!(false, "no skew for {:?}", self.coord),
        }
        self
    }

    /// Gateway `g`'s clock when the backend's reads `t`.
    fn clock(&self, g: usize, t: Micros) -> Micros {
        t.saturating_add(self.offsets.get(g).copied().unwrap_or(0))
    }

    /// Builds each `sync` view from its snapshot, as for any limiter, even where it could be
    /// counted: the tests hold the counted views to the built ones.
    #[doc(hidden)]
    /// Called before any decision.
    pub fn build_views(&mut self) {
        debug_assert!(self.skewed.is_none(), "skewed views are counted only");
        self.counted = None;
        self.delivered.limiter = Some(Arc::new(self.truth.clone()));
    }

    /// How many gateways.
    pub fn len(&self) -> usize {
        self.tallies.len()
    }

    /// Whether there are none (never: a fleet has at least one gateway).
    pub fn is_empty(&self) -> bool {
        self.tallies.is_empty()
    }

    /// Whether admitted requests reach the backend later than they arrive (a round trip to a
    /// central store).
    pub fn delays(&self) -> bool {
        matches!(self.coord, Coord::Central { rtt, .. } if rtt > 0)
    }

    /// How long after its arrival every decision reaches the backend: a central store's round
    /// trip (the store decides at `t + rtt/2`, and its answer, admission or refusal, is
    /// back at `t + rtt`), 0 otherwise. The auditor audits every decision of a run at that
    /// one delay, rejections too, so a store shifted in time is audited on one clock.
    pub fn shift(&self) -> Micros {
        match self.coord {
            Coord::Central { rtt, .. } => rtt,
            _ => 0,
        }
    }

    /// What the shared limiter holds: every gateway's admissions.
    pub fn state(&self, now: Micros) -> State {
        self.truth.state(now)
    }

    /// The room instants and each gateway's tallies so far.
    pub fn stats(&self) -> FleetStats {
        FleetStats {
            room_instants: self.room,
            gateways: self
                .tallies
                .iter()
                .zip(&self.windows)
                .map(|(&(offered, admitted), w)| GatewayStats {
                    offered,
                    admitted,
                    busiest: w.most,
                })
                .collect(),
        }
    }

    /// Takes the snapshots due by `t` (each of every admission before its instant) and
    /// delivers those that have arrived.
    fn sync_to(&mut self, t: Micros, every: Micros, delay: Micros) {
        if self.next_sync <= t {
            // Every admission so far came before this instant (decisions come in time order),
            // and none comes before `t`: the snapshots of every instant up to `t` are the
            // same, and the first of them arrives first.
            let unchanged = self.pending.back().unwrap_or(&self.delivered).taken == self.taken;
            let limiter = match self.pending.back() {
                // Counted views read no snapshot's limiter.
                _ if self.counted.is_some() => None,
                Some(last) if unchanged => last.limiter.clone(),
                None if unchanged => self.delivered.limiter.clone(),
                _ => Some(self.copy_of_truth()),
            };
            self.pending.push_back(Snapshot {
                at: self.next_sync,
                taken: self.taken,
                limiter,
            });
            self.next_sync = (t / every + 1) * every;
        }
        while self
            .pending
            .front()
            .is_some_and(|s| s.at.saturating_add(delay) <= t)
        {
            if let Some(snapshot) = self.pending.pop_front() {
                let old = std::mem::replace(&mut self.delivered, snapshot);
                // Views hold no snapshot (only its instant): once delivered over, a snapshot
                // shared with no later one is nobody's.
                if let Some(limiter) = old.limiter {
                    if Arc::strong_count(&limiter) == 1 && self.spare.len() < 2 {
                        self.spare.push(limiter);
                    }
                }
            }
        }
    }

    /// The shared limiter as it is now, written over a spare snapshot's limiter if there is
    /// one (no allocation: a snapshot is taken every sync interval).
    fn copy_of_truth(&mut self) -> Arc<Limiter> {
        while let Some(mut spare) = self.spare.pop() {
            if let Some(limiter) = Arc::get_mut(&mut spare) {
                limiter.copy_from(&self.truth);
                return spare;
            }
        }
        Arc::new(self.truth.clone())
    }

    /// Gateway `g`'s view as of the delivered snapshot, rebuilt from it with `g`'s own
    /// admissions since (its log, already trimmed to them) replayed, unless already built on it.
    fn view(&mut self, g: usize) {
        let new = &self.delivered;
        if self.built_on[g] == new.at {
            return;
        }
        let view = &mut self.gateways[g];
        // Counted views are never built, and every other snapshot holds its limiter.
        debug_assert!(new.limiter.is_some(), "a counted view is never built");
        if let Some(limiter) = &new.limiter {
            view.copy_from(limiter);
        }
        for &t in self.own[g].iter() {
            view.force(t);
        }
        self.built_on[g] = new.at;
    }

    /// Gateway `g`'s `sync` view deciding at `t`, counted: a sliding log of `limit` in `window`,
    /// built from the snapshot (the last `limit` admissions before its instant `s`) with `g`'s
    /// own admissions since `s` forced, admits at `t` while fewer than `limit` of those are in
    /// `(t − window, t]`; and which `limit` of the older ones the snapshot kept changes nothing,
    /// all of them older than any replayed. So: the admissions before `s` still in the window,
    /// plus `g`'s own since `s` still in it, under `limit`. O(log) per decision, no log copied.
    /// (With no other gateway's admission since `s`, that is every admission in the window:
    /// the shared limiter's own decision, as a built view's shortcut has it.)
    fn counted_admit(
        &mut self,
        g: usize,
        t: Micros,
        s: Micros,
        limit: u64,
        window: Micros,
    ) -> bool {
        trim_and_cut(&mut self.recent, &mut self.cut, window, t, s);
        let before = self.cut;
        let own = &self.own[g];
        // Usually all of them (a sync comes more often than a window passes).
        let since = match own.front() {
            Some(&a) if a + window <= t => own.len() - own.partition_point(|&a| a + window <= t),
            _ => own.len(),
        };
        ((before + since) as u64) < limit
    }

    /// The `Retry-After` of the gateway that made the last decision, at `t` (that decision's
    /// time or later): the earliest time its own view would admit if nothing else arrived,
    /// as a gateway answers from what it knows (see [`Limiter::retry_after`]). `local`,
    /// `split`: its limiter's, on its own clock; `sync`: its view's, as of the snapshot it
    /// holds (a later snapshot may show it more or less); `central`: the store's, less the
    /// half round trip to it, and none while the store is unreachable; `lease`: when the store
    /// would grant a permit again. `None` past 2^53 µs.
    pub fn retry_after(&self, t: Micros) -> Option<Micros> {
        let g = self.last;
        match (self.coord, self.counted) {
            (Coord::Local | Coord::Split, _) => {
                let o = self.offsets.get(g).copied().unwrap_or(0);
                let r = self.gateways[g].retry_after(t.saturating_add(o))?;
                Some(r.saturating_sub(o).max(t))
            }
            (Coord::Sync { .. }, Some((limit, window))) if self.skewed.is_some() => {
                let skewed = self.skewed.as_ref()?;
                skewed.retry_after(&self.offsets, g, t, self.snapshot_at, limit, window)
            }
            (Coord::Sync { .. }, Some((limit, window))) => {
                // The view's count is the admissions before the snapshot still in the window
                // (the first `cut` of `recent`) and `g`'s own since (all later): it falls
                // below `limit` once the oldest `excess` of those, in that order, have left.
                let in_window = |list: &VecDeque<Micros>, upto: usize| {
                    let gone = list.partition_point(|&a| a.saturating_add(window) <= t);
                    (gone.min(upto), upto)
                };
                let (b0, b1) = in_window(&self.recent, self.cut);
                let own = &self.own[g];
                let (o0, o1) = in_window(own, own.len());
                let count = (b1 - b0 + o1 - o0) as u64;
                if limit == 0 {
                    return None;
                }
                if count < limit {
                    return Some(t);
                }
                let k = (count - limit) as usize; // 0-based: the (excess)-th oldest
                let a = if k < b1 - b0 {
                    self.recent[b0 + k]
                } else {
                    own[o0 + k - (b1 - b0)]
                };
                Some(a.saturating_add(window).max(t))
            }
            (Coord::Sync { .. }, None) => {
                // A view made stale by the shared limiter deciding for it is that limiter.
                if self.built_on[g] != self.delivered.at {
                    self.truth.retry_after(t)
                } else {
                    self.gateways[g].retry_after(t)
                }
            }
            (Coord::Central { rtt, outage }, _) => {
                let reach = t + rtt / 2;
                if outage.is_some_and(|o| reach >= o.at && reach - o.at < o.length) {
                    return None;
                }
                let r = self.store.as_ref()?.retry_after(reach)?;
                Some((r - rtt / 2).max(t))
            }
            (Coord::Lease { .. }, _) => self.store.as_ref()?.retry_after(t),
        }
    }

    /// Gateway `g`'s decision at `t`, and whether the shared limiter has already taken it
    /// (it decided, so the admission is no room instant and is recorded).
    fn decide_at(&mut self, g: usize, t: Micros) -> (Decision, bool) {
        let decision = match (self.coord, self.counted) {
            (Coord::Local | Coord::Split, _) => {
                // A fleet's limiters answer at once: the admission is the arrival.
                let at = self.clock(g, t);
                admitted_at(self.gateways[g].decide(at).admitted(), t)
            }
            (Coord::Sync { every, delay }, Some((limit, window))) => {
                // The snapshot delivered by `t` is the one of the latest `kΔ` with `kΔ + δ ≤ t`
                // (or none, 0): no snapshot need be kept, only its instant. The next interval's
                // is a step on; a longer gap is divided out.
                let next = self.snapshot_at.saturating_add(every);
                if t >= next.saturating_add(delay) {
                    self.snapshot_at = if t < next.saturating_add(every).saturating_add(delay) {
                        next
                    } else {
                        (t - delay) / every * every
                    };
                }
                let s = self.snapshot_at;
                if let Some(skewed) = &mut self.skewed {
                    let ok = skewed.admit(&self.offsets, g, t, s, limit, window);
                    return (admitted_at(ok, t), false);
                }
                let own = &mut self.own[g];
                while own.front().is_some_and(|&a| a < s) {
                    own.pop_front();
                }
                let ok = self.counted_admit(g, t, s, limit, window);
                if ok {
                    self.own[g].push_back(t);
                }
                admitted_at(ok, t)
            }
            (Coord::Sync { every, delay }, None) => {
                self.sync_to(t, every, delay);
                let snapshot = &self.delivered;
                let own = &mut self.own[g];
                while own.front().is_some_and(|&a| a < snapshot.at) {
                    own.pop_front();
                }
                // With no other gateway's admission since the snapshot, the view holds every
                // admission there is: the shared limiter decides (and records the admission
                // here), and the view is stale.
                let others = self.taken - snapshot.taken - own.len() as u64;
                if others == 0 {
                    self.built_on[g] = STALE;
                    let ok = self.truth.peek(t);
                    if ok {
                        self.truth.force(t);
                        self.own[g].push_back(t);
                    }
                    return (admitted_at(ok, t), true);
                }
                let ok = {
                    self.view(g);
                    self.gateways[g].admit(t)
                };
                if ok {
                    self.own[g].push_back(t);
                }
                admitted_at(ok, t)
            }
            (Coord::Central { rtt, outage }, _) => {
                let reach = t + rtt / 2;
                let down = outage.filter(|o| reach >= o.at && reach - o.at < o.length);
                let ok = match (down, self.store.as_mut()) {
                    (Some(o), _) => o.open,
                    (None, Some(store)) => store.admit(reach),
                    (None, None) => false,
                };
                admitted_at(ok, t + rtt)
            }
            (Coord::Lease { size, ttl }, _) => {
                let (left, until) = &mut self.permits[g];
                if *left == 0 || t >= *until {
                    let mut granted = 0;
                    if let Some(store) = self.store.as_mut() {
                        while granted < size && store.admit(t) {
                            granted += 1;
                        }
                    }
                    *left = granted;
                    *until = t.saturating_add(ttl);
                }
                let ok = *left > 0;
                *left -= u64::from(ok);
                admitted_at(ok, t)
            }
        };
        (decision, false)
    }
}

fn admitted_at(ok: bool, at: Micros) -> Decision {
    if ok {
        Decision::Admit { at }
    } else {
        Decision::Reject
    }
}

impl Decide for Fleet {
    fn decide(&mut self, t: Micros) -> Decision {
        let g = self.router.pick();
        self.decide_on(g, t)
    }
}

impl Fleet {
    /// Decides a request that reached gateway `g` (from 0 to `len() − 1`) at `t`, without
    /// asking the router: what a probe's model does with each request at the gateway the probe
    /// really sent it to. [`Decide::decide`] is the router's pick, then this.
    pub fn decide_on(&mut self, g: usize, t: Micros) -> Decision {
        let g = g.min(self.len() - 1);
        self.last = g;
        let (decision, taken) = self.decide_at(g, t);
        let ok = decision.admitted();
        // The shared limiter decides at the store's instant (a central store's clock).
        let at = match self.coord {
            Coord::Central { rtt, .. } => t + rtt / 2,
            _ => t,
        };
        if ok {
            // A fleet's limiters record no rejects: admitting is peeking and then recording
            // (the tests hold room instants to the peek's definition).
            if !taken && !self.truth.admit(at) {
                self.room += 1;
                self.truth.force(at);
            }
            self.taken += 1;
            if let Some(skewed) = &mut self.skewed {
                skewed.push(g, t.saturating_add(self.offsets[g]));
            } else if self.counted.is_some() {
                self.recent.push_back(t);
            }
            self.windows[g].admit(t, self.window);
        }
        self.tallies[g].0 += 1;
        self.tallies[g].1 += u64::from(ok);
        decision
    }

    /// The router's pick for the next request (what [`Decide::decide`] decides it at).
    pub fn pick(&mut self) -> usize {
        self.router.pick()
    }

    /// How the gateways coordinate.
    pub fn coord(&self) -> Coord {
        self.coord
    }

    /// [`Fleet::decide_on`], and whether the admission, if it was one, was a room instant
    /// (for a trace: the simulator's own decisions count room instants only in total).
    pub fn decide_traced(&mut self, g: usize, t: Micros) -> (Decision, bool) {
        let rooms = self.room;
        let decision = self.decide_on(g, t);
        (decision, self.room > rooms)
    }
}

#[cfg(test)]
mod tests {
    use super::Busiest;
    use crate::time::Micros;
    use proptest::prelude::*;

    proptest! {
        /// A gateway's busiest window, kept in a ring, is the recount's: the most admissions in
        /// any `(t − W, t]` ending at one of them.
        #[test]
        fn a_gateways_busiest_window_is_the_recounts(
            gaps in proptest::collection::vec(prop_oneof![0u64..3, 0u64..1_000, 0u64..100_000], 0..700),
            window in 1u64..20_000,
        ) {
            let mut b = Busiest::default();
            let mut times: Vec<Micros> = Vec::new();
            let mut t = 0;
            for g in gaps {
                t += g;
                b.admit(t, window);
                times.push(t);
                let most = (0..times.len())
                    .map(|i| times[..=i].iter().filter(|&&a| a + window > times[i]).count() as u64)
                    .max()
                    .unwrap_or(0);
                prop_assert_eq!(b.most, most, "after {} admissions", times.len());
            }
        }
    }
}
