//! How many admissions a run can hold, bounded before it runs, for the memory estimate
//! ([`Scenario::memory`]): every arrival of the traffic (a shaped traffic's mean and eight
//! standard deviations; on/off traffic's periods laid out run by run), what each limiter can
//! admit of them (its worst in a span or a window, counted by the calendar windows the
//! arrivals touch, a lockout under overload), and what a fleet's gateways, routes, syncs and
//! leases let through.

use super::scenario::Scenario;
use crate::limiter::LeakyMode;
#[cfg(feature = "fleet")]
use crate::limiter::{Coord, Outage, Route};
use crate::rng::{Rng, Stream};
#[cfg(feature = "fleet")]
use crate::spec::FleetSpec;
use crate::spec::{LimiterKind, LimiterSpec, TrafficSpec};
use crate::theory;
use crate::time::{Micros, MS};
use crate::traffic::{Arrivals, OnOff};

impl Scenario {
    /// More admissions than one limiter of a run will make: every arrival of the traffic
    /// (for shaped traffic, its mean and eight standard deviations; a flood's, a burst's and
    /// a replay's exactly), and for retrying clients every first try (a request is admitted
    /// once, whatever its retries).
    pub fn most_admissions(&self) -> u64 {
        self.most_in(Micros::MAX)
    }

    /// More admissions than one limiter makes in any span of `span` µs (the whole run at
    /// most): the arrivals of such a span, by the same reckoning as
    /// [`Scenario::most_admissions`]; for retrying clients the first tries of the span and of
    /// the retries' reach before it.
    pub fn most_in(&self, span: Micros) -> u64 {
        let sure = |mean: f64, variance: f64| (mean + 8.0 * variance.sqrt() + 64.0) as u64;
        let within = span.min(self.duration) as f64;
        let mean = |load: f64| self.rate_per_us(load) * within;
        match &self.traffic {
            TrafficSpec::Steady { load } => sure(mean(*load), mean(*load)),
            // Groups of a geometric size of mean m: a count's variance is its mean × (2m − 1),
            // and a span may cut into a group on each side.
            TrafficSpec::Groups { shape, load } => {
                let m = shape.mean_size();
                sure(mean(*load), mean(*load) * (2.0 * m - 1.0)).saturating_add(64 * m as u64)
            }
            // Active at `1 / busy` times the average rate, for as long as the runs' periods
            // keep it active within such a span (or, past so many periods that laying them out
            // would cost more than it saves, all the span).
            TrafficSpec::OnOff { load, busy, .. } => {
                let rate = self.rate_per_us(*load) / busy;
                match self.on_off_active(span) {
                    Some(active) => sure(rate * active, rate * active),
                    None => sure(mean(*load) / busy, mean(*load) / busy),
                }
            }
            TrafficSpec::Flood { every, .. } => {
                let all = (self.flood_length() / every).saturating_add(2);
                all.min((span.saturating_add(*every) / every).saturating_add(1))
            }
            // Its two ticks' requests, `before + after` apart.
            TrafficSpec::BoundaryBurst { before, after, .. } => {
                let [first, second] = self.ticks();
                if span > before.saturating_add(*after) {
                    first.saturating_add(second)
                } else {
                    first.max(second)
                }
            }
            TrafficSpec::Retry { .. } => self
                .traffic
                .client_groups()
                .map(|g| {
                    let reach = Self::retries_end(&g).unwrap_or(Micros::MAX);
                    let reach = if g.policy.honor { Micros::MAX } else { reach };
                    u64::from(g.clients)
                        .saturating_mul(self.first_tries_in(span.saturating_add(reach)))
                })
                .fold(0, u64::saturating_add),
            TrafficSpec::Replay(r) => r.times.len() as u64,
        }
    }

    /// Whether on/off traffic's periods are laid out for the estimate: only while
    /// [`Scenario::memory`] refines an estimate worth refining (one past 4 MB as if the
    /// traffic were always active: the study's on/off cells, whose plan the page validates on
    /// its own thread, stay under it), and for runs holding no more than [`ON_OFF_PERIODS`]
    /// periods in all, expected.
    fn on_off_laid_out(&self) -> bool {
        let TrafficSpec::OnOff { active, busy, .. } = self.traffic else {
            return false;
        };
        let end = self.duration as f64;
        let expected = f64::from(self.runs) * (end * busy / active as f64 + 1.0);
        LayOut::on() && expected <= ON_OFF_PERIODS as f64
    }

    /// The most time on/off traffic is active within any span of `span` µs (the run at most),
    /// over every run: each run's periods laid out as its arrivals draw them
    /// ([`OnOff::periods`]), the span placed to start at a period's start or end at a
    /// period's end (where the most is). `None` when the runs hold more than
    /// [`ON_OFF_PERIODS`] periods in all, expected.
    pub(super) fn on_off_active(&self, span: Micros) -> Option<f64> {
        let TrafficSpec::OnOff { active, busy, .. } = self.traffic else {
            return None;
        };
        if !self.on_off_laid_out() {
            return None;
        }
        let end = self.duration as f64;
        let span = span.min(self.duration) as f64;
        let mut most: f64 = 0.0;
        let mut periods: Vec<(f64, f64)> = Vec::new();
        // Active time before each period, and in all.
        let mut before: Vec<f64> = Vec::new();
        for run in 0..self.runs {
            let mut rng = Rng::new(self.seed, u64::from(run), Stream::Arrivals);
            periods.clear();
            periods.extend(
                OnOff::periods(&mut rng, active, busy)
                    .take_while(|&(start, _)| start < end)
                    .map(|(start, stop)| (start, stop.min(end))),
            );
            before.clear();
            let mut sum = 0.0;
            for &(a, b) in &periods {
                before.push(sum);
                sum += b - a;
            }
            // Active time in [0, y).
            let upto = |y: f64| -> f64 {
                let k = periods.partition_point(|&(a, _)| a < y);
                match k {
                    0 => 0.0,
                    _ => before[k - 1] + (y.min(periods[k - 1].1) - periods[k - 1].0),
                }
            };
            for &(a, b) in &periods {
                most = most
                    .max(upto(a + span) - upto(a))
                    .max(upto(b) - upto(b - span));
            }
        }
        Some(most)
    }

    /// More than `spec` admits of on/off traffic in a run: requests come only while it is
    /// active, so no more than its worst in each active period, over the run whose periods
    /// allow the most ([`Scenario::on_off_active`]'s layout). `None` where theory gives no
    /// worst or the periods are too many to lay out.
    pub(super) fn on_off_most(&self, spec: &LimiterSpec) -> Option<u64> {
        let TrafficSpec::OnOff { active, busy, .. } = self.traffic else {
            return None;
        };
        if !self.on_off_laid_out() {
            return None;
        }
        let end = self.duration as f64;
        let whole = theory::worst_in(spec, self.limit, self.window, self.window)?;
        let most_in = |len: f64| -> Option<u64> {
            // Arrivals within `[a, b)` fall in a span of `⌈b − a⌉` µs, `(t − span, t]`.
            let span = (len.ceil() as Micros).saturating_add(1);
            let most = if span < self.window {
                theory::worst_in(spec, self.limit, self.window, span)?
            } else {
                whole.saturating_mul(span.div_ceil(self.window.max(1)))
            };
            Some(most.min(self.calendar_in(spec, self.limit, span).unwrap_or(most)))
        };
        let mut most = 0u64;
        for run in 0..self.runs {
            let mut rng = Rng::new(self.seed, u64::from(run), Stream::Arrivals);
            let mut sum = 0u64;
            for (a, b) in OnOff::periods(&mut rng, active, busy).take_while(|&(a, _)| a < end) {
                sum = sum.saturating_add(most_in(b.min(end) - a)?);
            }
            most = most.max(sum);
        }
        Some(most)
    }

    /// More admissions than `spec` makes in a run: the run's admissions
    /// ([`Scenario::most_admissions`]), and no more than its worst window's in each window the
    /// run spans (with every arrival within one span, its worst in that span). A queue
    /// admits what the same bucket without one would, only later. Under `central` and
    /// `lease` every admission is one the store granted: no more than one shared limiter's.
    pub(super) fn most_admitted(&self, spec: &LimiterSpec) -> u64 {
        let all = self.most_admissions();
        let mut deciding = spec.clone();
        if spec.queues() {
            deciding.mode = LeakyMode::Meter;
        }
        let most = match self.worst(&deciding) {
            Some(worst) if self.arrival_span(&deciding) < self.window => all.min(worst),
            Some(worst) => {
                let windows = self
                    .horizon()
                    .div_ceil(self.window.max(1))
                    .saturating_add(1);
                all.min(worst.saturating_mul(windows))
            }
            None => all,
        };
        let most = most
            .min(self.locked_out(spec).unwrap_or(most))
            .min(self.calendar_most(spec, self.limit).unwrap_or(most))
            .min(self.on_off_most(&deciding).unwrap_or(most));
        #[cfg(feature = "fleet")]
        if let Some(fleet) = spec.fleet {
            let granted = match fleet.coord {
                Coord::Central {
                    outage: Some(Outage { open: true, .. }),
                    ..
                } => false,
                Coord::Central { .. } | Coord::Lease { .. } => true,
                _ => false,
            };
            if granted {
                let mut one = spec.clone();
                one.fleet = None;
                let most = most.min(self.most_admitted(&one));
                return most.min(self.lease_bound(spec, &fleet, all).unwrap_or(most));
            }
            // Where each gateway decides by a limiter of its own, each admits no more than
            // its own limiter can in the run, nor than the router sends it. (A retried
            // request's tries are routed one by one: one gateway may see more than its share
            // of requests.)
            if let Some(each) = self
                .gateway_most(spec, &fleet)
                .filter(|_| !self.traffic.closed_loop())
            {
                let routed = (0..fleet.gateways as usize)
                    .map(|h| each.min(Self::routed(&fleet, h, all)))
                    .fold(0, u64::saturating_add);
                return most.min(routed);
            }
        }
        most
    }

    /// More than a lease fleet admits when a lease is at least all the store can grant at
    /// one instant, under open-loop traffic (`all` its arrivals): the first gateway to ask
    /// takes the store's whole room, and the others asking then get none, so few gateways
    /// ever hold permits, each admitting no more than the router sends it. A boundary
    /// burst's two instants give two holders. A fixed window's store gets its room back only
    /// with its next calendar window: one holder per window the arrivals touch. A
    /// sliding-window counter's also gets back, within a window, what the last window's
    /// count, weighted less and less, frees: at most that count (`L`) a window past the
    /// first the arrivals touch (before which it counted nothing). `None` otherwise.
    #[cfg(feature = "fleet")]
    pub(super) fn lease_bound(
        &self,
        spec: &LimiterSpec,
        fleet: &FleetSpec,
        all: u64,
    ) -> Option<u64> {
        let Coord::Lease { size, .. } = fleet.coord else {
            return None;
        };
        if self.traffic.closed_loop() {
            return None;
        }
        let mut one = spec.clone();
        one.fleet = None;
        let room = theory::worst_in(&one, self.limit, self.window, 1)?;
        if size < room {
            return None;
        }
        let windows = self.windows_touched();
        match (&self.traffic, spec.kind) {
            (TrafficSpec::BoundaryBurst { .. }, _) => Some(self.top_routed(fleet, 2, all)),
            (_, LimiterKind::FixedWindow) => Some(self.top_routed(fleet, windows, all)),
            (_, LimiterKind::SlidingWindowCounter) => Some(
                self.top_routed(fleet, windows, all)
                    .saturating_add((windows - 1).saturating_mul(self.limit)),
            ),
            _ => None,
        }
    }

    /// How many calendar windows `[kW, (k + 1)W)` a run's arrivals can fall in.
    pub(super) fn windows_touched(&self) -> u64 {
        let w = self.window.max(1);
        let (first, last) = self.arrival_bounds();
        (last / w - first / w).saturating_add(1)
    }

    /// When a run's first and last arrivals can be: a flood's and a boundary burst's
    /// instants, any other's the run's start and horizon.
    pub(super) fn arrival_bounds(&self) -> (Micros, Micros) {
        match self.traffic {
            TrafficSpec::Flood { start, every, .. } => {
                let first = self.window.saturating_add(Arrivals::flood_offset(
                    start,
                    self.limit,
                    self.window,
                    every,
                ));
                (first, first.saturating_add(self.flood_length()))
            }
            TrafficSpec::BoundaryBurst { before, after, .. } => (
                self.window.saturating_sub(before),
                self.window.saturating_add(after),
            ),
            _ => (0, self.horizon()),
        }
    }

    /// More than the `k` gateways the router sends the most of `arrivals` get together.
    #[cfg(feature = "fleet")]
    pub(super) fn top_routed(&self, fleet: &FleetSpec, k: u64, arrivals: u64) -> u64 {
        let mut each: Vec<u64> = (0..fleet.gateways as usize)
            .map(|h| Self::routed(fleet, h, arrivals))
            .collect();
        each.sort_unstable_by(|a, b| b.cmp(a));
        each.iter()
            .take(usize::try_from(k).unwrap_or(usize::MAX))
            .fold(0, |sum, &x| sum.saturating_add(x))
    }

    /// The most one gateway of a `local`, `split` or `sync` fleet admits in any span of
    /// `span` µs (up to the window): under `local` and `sync` its own limiter's worst (a view
    /// that also counts the others' admissions leaves it less room, never more; a skewed
    /// clock moves its windows, not their worst), under `split` a part's, a `N`-th of the
    /// split's (each part the same limiter on `L/N`, `B/N`, `r/N`; within three for a
    /// counter's rounding). `None` where the store decides.
    #[cfg(feature = "fleet")]
    pub(super) fn gateway_worst(
        &self,
        spec: &LimiterSpec,
        fleet: &FleetSpec,
        span: Micros,
    ) -> Option<u64> {
        let mut one = spec.clone();
        one.fleet = None;
        match fleet.coord {
            Coord::Local | Coord::Sync { .. } => {
                theory::worst_in(&one, self.limit, self.window, span)
            }
            Coord::Split => {
                one.servers = fleet.gateways;
                let all = theory::worst_in(&one, self.limit, self.window, span)?;
                // (HAProxy's own `limit=` is each part's whole.)
                if spec.kind == LimiterKind::Haproxy && spec.limit.is_some() {
                    Some(all)
                } else {
                    Some(all.div_ceil(u64::from(fleet.gateways)).saturating_add(3))
                }
            }
            _ => None,
        }
    }

    /// More than a `local`, `split` or `sync` fleet's gateways admit together in any window
    /// under open-loop traffic (see [`Scenario::most_admitted`]): each no more than its own
    /// limiter's worst window ([`Scenario::gateway_worst`]) and what the router sends it of a
    /// window's arrivals. `None` for other fleets and single limiters.
    pub(super) fn routed_worst(&self, spec: &LimiterSpec) -> Option<u64> {
        #[cfg(feature = "fleet")]
        {
            let fleet = spec.fleet?;
            if self.traffic.closed_loop() {
                return None;
            }
            let each = self.gateway_worst(spec, &fleet, self.window)?;
            let w = self.most_in(self.window);
            Some(
                (0..fleet.gateways as usize)
                    .map(|h| each.min(Self::routed(&fleet, h, w)))
                    .fold(0, u64::saturating_add),
            )
        }
        #[cfg(not(feature = "fleet"))]
        {
            let _ = spec;
            None
        }
    }

    /// The most one gateway of a `local`, `split` or `sync` fleet admits in the run, by
    /// [`Scenario::most_admitted`]'s reckoning with [`Scenario::gateway_worst`].
    #[cfg(feature = "fleet")]
    pub(super) fn gateway_most(&self, spec: &LimiterSpec, fleet: &FleetSpec) -> Option<u64> {
        let span = self.arrival_span(spec);
        let whole = self.gateway_worst(spec, fleet, self.window)?;
        if span < self.window {
            let within = self.gateway_worst(spec, fleet, span)?;
            let instant = self.gateway_worst(spec, fleet, 1)?;
            Some(within.min(instant.saturating_mul(2)))
        } else {
            let windows = self
                .horizon()
                .div_ceil(self.window.max(1))
                .saturating_add(1);
            let mut one = spec.clone();
            one.fleet = None;
            // A split's part counts to its share of the limit; a skewed gateway's calendar
            // windows are its own clock's.
            let limit = match fleet.coord {
                Coord::Split => self.limit / u64::from(fleet.gateways.max(1)),
                _ => self.limit,
            };
            // (A clock ahead can see the arrivals' span over one calendar window more.)
            let most = whole.saturating_mul(windows);
            let calendar = self
                .calendar_most(&one, limit)
                .map(|c| c.saturating_add(if fleet.skew > 0 { limit } else { 0 }));
            Some(most.min(calendar.unwrap_or(most)))
        }
    }

    /// What a fixed window or a sliding-window counter of limit `limit` admits in the run:
    /// fewer than `limit` in each calendar window its count starts afresh in, and the
    /// arrivals touch no more than [`Scenario::windows_touched`] of them; HAProxy's counter
    /// as much in each of its periods ([`Scenario::calendar_in`]). `None` for other limiters
    /// and fleets.
    pub(super) fn calendar_most(&self, spec: &LimiterSpec, limit: u64) -> Option<u64> {
        if in_fleet(spec) || spec.servers > 1 {
            return None;
        }
        match spec.kind {
            LimiterKind::FixedWindow | LimiterKind::SlidingWindowCounter => {
                Some(limit.saturating_mul(self.windows_touched()))
            }
            LimiterKind::Haproxy => {
                let (first, last) = self.arrival_bounds();
                self.calendar_in(spec, limit, last - first)
            }
            _ => None,
        }
    }

    /// What a limiter that counts afresh each calendar window (a fixed window, a
    /// sliding-window counter: fewer than `limit` admissions in each) or period (HAProxy's
    /// counter, whose period may run a millisecond short) admits of arrivals within `len`
    /// µs, wherever they fall: `limit` for each window or period they can touch. `None` for
    /// other limiters and fleets.
    pub(super) fn calendar_in(&self, spec: &LimiterSpec, limit: u64, len: Micros) -> Option<u64> {
        if in_fleet(spec) || spec.servers > 1 {
            return None;
        }
        let (limit, shortest) = match spec.kind {
            LimiterKind::FixedWindow | LimiterKind::SlidingWindowCounter => (limit, self.window),
            LimiterKind::Haproxy => {
                let period = spec.haproxy_period(self.window).ok()?;
                (
                    spec.limit.unwrap_or(limit),
                    period.saturating_sub(MS).max(MS),
                )
            }
            _ => return None,
        };
        Some(limit.saturating_mul((len / shortest.max(1)).saturating_add(2)))
    }

    /// What a limiter that counts its rejects admits of a steady load that never lets its
    /// count fall below its limit: the first `L` requests, then nothing (the retry storm's
    /// lockout). A sliding log counts every request of the trailing window, a sliding-window
    /// counter and HAProxy's those of the last period weighted and the current one's, which
    /// together are no fewer than a period's Poisson count less 16 standard deviations (8 for
    /// each part) and 64; HAProxy's millisecond weights may take 2 ms of a period off that.
    /// `None` unless that floor clears the limit.
    pub(super) fn locked_out(&self, spec: &LimiterSpec) -> Option<u64> {
        let TrafficSpec::Steady { load } = self.traffic else {
            return None;
        };
        if !spec.record_rejects || in_fleet(spec) || spec.servers > 1 {
            return None;
        }
        let (limit, period) = match spec.kind {
            LimiterKind::SlidingLog | LimiterKind::SlidingWindowCounter => {
                (self.limit, self.window)
            }
            LimiterKind::Haproxy => (
                spec.limit.unwrap_or(self.limit),
                spec.haproxy_period(self.window).ok()?,
            ),
            _ => return None,
        };
        let mean = self.rate_per_us(load) * period as f64;
        let shave = 1.0 - 2_000.0 / period.max(1) as f64;
        let floor = (mean - 16.0 * mean.sqrt() - 64.0) * shave;
        (floor >= limit as f64 + 3.0).then_some(limit)
    }

    /// A span shorter than the window that holds every arrival `spec` decides on, or the
    /// window: a boundary burst's two instants are `before + after` apart, and a limiter
    /// that decides when a request arrives admits within that span (one that queues lets
    /// requests leave later).
    pub(super) fn arrival_span(&self, spec: &LimiterSpec) -> Micros {
        match self.traffic {
            TrafficSpec::BoundaryBurst { before, after, .. } if !spec.queues() => before
                .saturating_add(after)
                .saturating_add(1)
                .min(self.window),
            _ => self.window,
        }
    }

    /// The most `spec` admits in any window of this run, where theory knows it
    /// ([`theory::worst_in`] the span that holds every arrival it decides on).
    /// Arrivals at two instants also meet it at most twice what it admits in one instant.
    /// A limiter that counts by calendar window (a fixed window, a sliding-window counter
    /// with nothing before) admits of two instants in one such window what it admits at one.
    pub(super) fn worst(&self, spec: &LimiterSpec) -> Option<u64> {
        let span = self.arrival_span(spec);
        let worst = theory::worst_in(spec, self.limit, self.window, span)?;
        if span < self.window {
            let instant = theory::worst_in(spec, self.limit, self.window, 1)?;
            let times = if self.ticks_in_one_calendar_window(spec) {
                1
            } else {
                2
            };
            let worst = worst.min(instant.saturating_mul(times));
            let worst = worst.min(self.synced_between_ticks(spec).unwrap_or(worst));
            Some(worst.min(self.synced_unseen(spec).unwrap_or(worst)))
        } else {
            Some(worst.min(self.synced_unseen(spec).unwrap_or(worst)))
        }
    }

    /// A `sync` fleet (clocks agreeing) admits in a window no more than one limiter would
    /// with every admission seen, and what the others admitted since a gateway's last
    /// snapshot, taken within `Δ + δ` ([`theory::fleet_worst`]'s reasoning): no more than
    /// the arrivals of such a span.
    pub(super) fn synced_unseen(&self, spec: &LimiterSpec) -> Option<u64> {
        #[cfg(feature = "fleet")]
        {
            let fleet = spec.fleet?;
            let Coord::Sync { every, delay } = fleet.coord else {
                return None;
            };
            if fleet.skew > 0 || opens_at_a_request(spec) {
                return None;
            }
            let mut one = spec.clone();
            one.fleet = None;
            let single = self.worst(&one)?;
            let stale = every.saturating_add(delay).saturating_add(1);
            Some(single.saturating_add(self.most_in(stale)))
        }
        #[cfg(not(feature = "fleet"))]
        {
            let _ = spec;
            None
        }
    }

    /// A `sync` fleet (clocks agreeing) facing a boundary burst whose first tick a snapshot
    /// takes and delivers before the second: at the second tick every gateway's view is the
    /// whole history, so each admits no more than one limiter would after the first tick's
    /// admissions, `A₁`. One limiter admits `m = min(c₁, F)` of the first tick
    /// ([`theory::first_instant`]), and the fleet at least that (each fresh gateway admits
    /// its share up to `F`); after `m` one limiter has at most its two-instant worst less `m`
    /// left, and more history leaves no more room. So the two ticks pass at most
    /// `A₁ + min(c₂, N · (worst − m))`, `A₁` no more than the first tick and the fleet's
    /// worst at one instant.
    pub(super) fn synced_between_ticks(&self, spec: &LimiterSpec) -> Option<u64> {
        #[cfg(feature = "fleet")]
        {
            let TrafficSpec::BoundaryBurst { before, after, .. } = self.traffic else {
                return None;
            };
            let fleet = spec.fleet?;
            let Coord::Sync { every, delay } = fleet.coord else {
                return None;
            };
            // A window a request opens: every view at the second tick holds the window the
            // first tick's admissions opened, when the ticks fall in one.
            if fleet.skew > 0
                || spec.queues()
                || (opens_at_a_request(spec) && !self.ticks_in_one_anchored_window(spec))
            {
                return None;
            }
            let first = self.window.checked_sub(before)?;
            let second = self.window.checked_add(after)?;
            // The first snapshot after the first tick, and when it reaches the gateways.
            let taken = (first / every.max(1)).checked_add(1)?.checked_mul(every)?;
            if taken.checked_add(delay)? > second {
                return None;
            }
            let mut one = spec.clone();
            one.fleet = None;
            let [c1, c2] = self.ticks();
            let m = c1.min(theory::first_instant(&one, self.limit)?);
            let single = self.worst(&one)?;
            let at_once = theory::worst_in(spec, self.limit, self.window, 1)?;
            let n = u64::from(fleet.gateways);
            let later = c2.min(n.saturating_mul(single.saturating_sub(m)));
            Some(c1.min(at_once).saturating_add(later))
        }
        #[cfg(not(feature = "fleet"))]
        {
            let _ = spec;
            None
        }
    }

    /// Whether a boundary burst's two ticks fall in the one window its first tick opens, for
    /// a limiter whose windows open at a request ([`LimiterSpec::opens_at_a_request`]): the
    /// window of the limiter's own period opens at the first tick's clock tick (a
    /// millisecond, or a µs for limits' float clock), so the ticks must be closer than the
    /// period less a tick.
    fn ticks_in_one_anchored_window(&self, spec: &LimiterSpec) -> bool {
        let TrafficSpec::BoundaryBurst { before, after, .. } = self.traffic else {
            return false;
        };
        let tick = if spec.kind == LimiterKind::Limits {
            1
        } else {
            MS
        };
        let period = spec.period.unwrap_or(self.window);
        opens_at_a_request(spec) && before.saturating_add(after).saturating_add(tick) <= period
    }

    /// Whether a boundary burst's two ticks reach a fixed window or a sliding-window counter
    /// in one calendar window `[kW, (k + 1)W)` of the clock it decides by: the backend's,
    /// or under `central` the store's, half a round trip later; or a window a request opens
    /// in the one window the first tick opens ([`Scenario::ticks_in_one_anchored_window`]).
    /// (A skewed fleet's gateways each decide by a clock of their own: never taken as one.)
    pub(super) fn ticks_in_one_calendar_window(&self, spec: &LimiterSpec) -> bool {
        let TrafficSpec::BoundaryBurst { before, after, .. } = self.traffic else {
            return false;
        };
        let anchored = opens_at_a_request(spec);
        if !(anchored
            || matches!(
                spec.kind,
                LimiterKind::FixedWindow | LimiterKind::SlidingWindowCounter
            ))
            || spec.queues()
        {
            return false;
        }
        if anchored {
            // The run's first arrival, the first tick's, opens a window of the limiter's own
            // period at its clock's tick (a millisecond, or a µs for limits' float clock):
            // the second tick falls inside it when the two are closer than the period less
            // a tick. Behind a fleet, so with a gateway's own limiter or a store's, but not
            // a `sync` or `lease` view, which others' admissions can open at another time.
            #[cfg(feature = "fleet")]
            if matches!(spec.fleet, Some(f) if f.skew > 0 || matches!(f.coord, Coord::Sync { .. } | Coord::Lease { .. }))
            {
                return false;
            }
            return self.ticks_in_one_anchored_window(spec);
        }
        #[cfg(feature = "fleet")]
        let shift = match spec.fleet {
            Some(fleet) if fleet.skew > 0 => return false,
            Some(FleetSpec {
                coord: Coord::Central { rtt, .. },
                ..
            }) => rtt / 2,
            _ => 0,
        };
        #[cfg(not(feature = "fleet"))]
        let shift: Micros = 0;
        let w = self.window.max(1);
        let first = self.window.saturating_sub(before).saturating_add(shift);
        let second = self.window.saturating_add(after).saturating_add(shift);
        first / w == second / w
    }

    /// More of `arrivals` than the router sends gateway `h`: round-robin deals them out
    /// evenly (a share and one), a random or skewed route its share and eight standard
    /// deviations of a binomial count.
    #[cfg(feature = "fleet")]
    pub(super) fn routed(fleet: &FleetSpec, h: usize, arrivals: u64) -> u64 {
        let n = u64::from(fleet.gateways.max(1));
        let share = match fleet.route {
            Route::RoundRobin => return arrivals.div_ceil(n).saturating_add(1),
            Route::Random => 1.0 / n as f64,
            Route::Skewed { .. } if n == 1 => 1.0,
            Route::Skewed { hot } if h == 0 => f64::from(hot) / 1e6,
            Route::Skewed { hot } => (1.0 - f64::from(hot) / 1e6) / (n - 1) as f64,
        };
        let mean = share * arrivals as f64;
        ((mean + 8.0 * mean.sqrt() + 64.0) as u64).min(arrivals)
    }
}

/// The most on/off periods the memory estimate lays out for a scenario's runs (a few ms);
/// past that it takes the traffic as active all the time.
pub const ON_OFF_PERIODS: u64 = 50_000;

std::thread_local! {
    /// Whether the estimate being computed on this thread lays on/off periods out.
    static LAID_OUT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// On/off periods laid out (or not) while this lives: the memory estimate's second pass.
#[derive(Debug)]
pub(super) struct LayOut(bool);

impl LayOut {
    /// Lays periods out (or not) until dropped, when the setting before comes back.
    pub(super) fn set(on: bool) -> LayOut {
        LayOut(LAID_OUT.with(|l| l.replace(on)))
    }

    fn on() -> bool {
        LAID_OUT.with(std::cell::Cell::get)
    }
}

impl Drop for LayOut {
    fn drop(&mut self) {
        LAID_OUT.with(|l| l.set(self.0));
    }
}

/// Whether `spec` is enforced by a fleet of gateways (never without the `fleet` feature).
pub(super) fn in_fleet(spec: &LimiterSpec) -> bool {
    #[cfg(feature = "fleet")]
    {
        spec.fleet.is_some()
    }
    #[cfg(not(feature = "fleet"))]
    {
        let _ = spec;
        false
    }
}

/// Whether `spec`'s windows open at a key's request (express-rate-limit's,
/// rate-limiter-flexible's): others' admissions can then open a gateway's view's window
/// sooner and give it room it would not have had alone, so what `sync` reasoning from "others
/// only take room" bounds does not hold for them (each gateway still stays within its own
/// limiter's worst window).
#[cfg_attr(not(feature = "fleet"), allow(dead_code))]
fn opens_at_a_request(spec: &LimiterSpec) -> bool {
    spec.opens_at_a_request()
}
