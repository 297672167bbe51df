//! The rate limiters (nginx's and HAProxy's, in their own arithmetic, in `nginx` and
//! `haproxy`). Each one decides, at a time it is given, whether to let a request
//! through; none of them reads a clock.
//!
//! All arithmetic is in integers, so decisions are exact and identical on every target. A
//! rate of `N` requests per `D` µs is kept as the fraction itself: one token is `D` units,
//! and a microsecond refills `N` units.

#[cfg(feature = "libraries")]
mod anchored;
mod buckets;
mod decide;
#[cfg(feature = "fleet")]
mod fleet;
#[cfg(feature = "libraries")]
mod go_rate;
mod haproxy;
#[cfg(feature = "libraries")]
mod limits;
mod nginx;
#[cfg(feature = "libraries")]
mod redis_cell;
mod retry_after;
#[cfg(feature = "fleet")]
mod router;
#[cfg(feature = "fleet")]
mod shared;
#[cfg(feature = "libraries")]
mod vsthrottle;
mod windows;

#[cfg(feature = "libraries")]
pub use anchored::AnchoredWindow;
pub use buckets::{Gcra, LeakyBucket, LeakyMode, TokenBucket};
pub use decide::{Decide, Decision, LimitsStrategy, Rate, State, StateKind};
#[cfg(feature = "fleet")]
pub use fleet::Fleet;
#[cfg(feature = "libraries")]
pub use go_rate::GoRate;
pub use haproxy::Haproxy;
#[cfg(feature = "libraries")]
pub use limits::Limits;
pub use nginx::{thousandths_per_second, Nginx};
#[cfg(feature = "libraries")]
pub use redis_cell::RedisCell;
#[cfg(feature = "fleet")]
pub use router::{Coord, FleetStats, GatewayStats, Outage, Route, Router};
#[cfg(feature = "fleet")]
pub use shared::Shared;
#[cfg(feature = "libraries")]
pub use vsthrottle::Vsthrottle;
pub use windows::{FixedWindow, SlidingLog, SlidingWindowCounter};

use crate::rng::Rng;
use crate::time::Micros;

/// Any one limiter, so that a scenario can hold a list of different kinds.
#[derive(Debug, Clone)]
pub enum Limiter {
    /// See [`FixedWindow`].
    FixedWindow(FixedWindow),
    /// See [`SlidingLog`].
    SlidingLog(SlidingLog),
    /// See [`SlidingWindowCounter`].
    SlidingWindowCounter(SlidingWindowCounter),
    /// See [`TokenBucket`].
    TokenBucket(TokenBucket),
    /// See [`Gcra`].
    Gcra(Gcra),
    /// See [`LeakyBucket`].
    LeakyBucket(LeakyBucket),
    /// See [`Nginx`].
    Nginx(Nginx),
    /// See [`Haproxy`].
    Haproxy(Haproxy),
    /// See [`AnchoredWindow`]: express-rate-limit's and rate-limiter-flexible's window.
    #[cfg(feature = "libraries")]
    Anchored(AnchoredWindow),
    /// See [`GoRate`]: Go's `x/time/rate` Limiter.
    #[cfg(feature = "libraries")]
    GoRate(GoRate),
    /// See [`RedisCell`]: redis-cell's `CL.THROTTLE`.
    #[cfg(feature = "libraries")]
    RedisCell(RedisCell),
    /// See [`Vsthrottle`]: Varnish's `vsthrottle.is_denied`.
    #[cfg(feature = "libraries")]
    Vsthrottle(Vsthrottle),
    /// See [`Limits`]: Python's `limits`.
    #[cfg(feature = "libraries")]
    Limits(Limits),
    /// See [`Split`].
    Split(Split),
    /// See [`Fleet`].
    #[cfg(feature = "fleet")]
    Fleet(Box<Fleet>),
}

#[cfg(feature = "fleet")]
impl Limiter {
    /// `*self = other.clone()`, in the memory this one already holds where both are of the
    /// same kind (a sliding log's ring is copied, not allocated): a fleet's gateway rebuilds
    /// its view from a snapshot this way, once a sync interval.
    pub(crate) fn copy_from(&mut self, other: &Limiter) {
        match (self, other) {
            (Limiter::SlidingLog(this), Limiter::SlidingLog(other)) => {
                this.window = other.window;
                this.limit = other.limit;
                this.last.clone_from(&other.last);
                this.next = other.next;
                this.record_rejects = other.record_rejects;
            }
            (this, other) => *this = other.clone(),
        }
    }
}

impl Decide for Limiter {
    #[inline]
    fn decide(&mut self, t: Micros) -> Decision {
        match self {
            Limiter::FixedWindow(l) => l.decide(t),
            Limiter::SlidingLog(l) => l.decide(t),
            Limiter::SlidingWindowCounter(l) => l.decide(t),
            Limiter::TokenBucket(l) => l.decide(t),
            Limiter::Gcra(l) => l.decide(t),
            Limiter::LeakyBucket(l) => l.decide(t),
            Limiter::Nginx(l) => l.decide(t),
            Limiter::Haproxy(l) => l.decide(t),
            #[cfg(feature = "libraries")]
            Limiter::Anchored(l) => l.decide(t),
            #[cfg(feature = "libraries")]
            Limiter::GoRate(l) => l.decide(t),
            #[cfg(feature = "libraries")]
            Limiter::RedisCell(l) => l.decide(t),
            #[cfg(feature = "libraries")]
            Limiter::Vsthrottle(l) => l.decide(t),
            #[cfg(feature = "libraries")]
            Limiter::Limits(l) => l.decide(t),
            Limiter::Split(l) => l.decide(t),
            #[cfg(feature = "fleet")]
            Limiter::Fleet(l) => l.decide(t),
        }
    }

    #[inline]
    fn admit(&mut self, t: Micros) -> bool {
        match self {
            Limiter::FixedWindow(l) => l.admit(t),
            Limiter::SlidingLog(l) => l.admit(t),
            Limiter::SlidingWindowCounter(l) => l.admit(t),
            Limiter::TokenBucket(l) => l.admit(t),
            Limiter::Gcra(l) => l.admit(t),
            Limiter::LeakyBucket(l) => l.admit(t),
            Limiter::Nginx(l) => l.admit(t),
            Limiter::Haproxy(l) => l.admit(t),
            #[cfg(feature = "libraries")]
            Limiter::Anchored(l) => l.admit(t),
            #[cfg(feature = "libraries")]
            Limiter::GoRate(l) => l.admit(t),
            #[cfg(feature = "libraries")]
            Limiter::RedisCell(l) => l.admit(t),
            #[cfg(feature = "libraries")]
            Limiter::Vsthrottle(l) => l.admit(t),
            #[cfg(feature = "libraries")]
            Limiter::Limits(l) => l.admit(t),
            Limiter::Split(l) => l.admit(t),
            #[cfg(feature = "fleet")]
            Limiter::Fleet(l) => l.admit(t),
        }
    }

    #[inline]
    fn refuses_before(&self) -> Micros {
        match self {
            Limiter::FixedWindow(l) => l.refuses_before(),
            Limiter::SlidingLog(l) => l.refuses_before(),
            Limiter::SlidingWindowCounter(l) => l.refuses_before(),
            _ => 0,
        }
    }

    #[inline]
    fn refused(&mut self, t: Micros) {
        match self {
            Limiter::FixedWindow(l) => l.refused(t),
            Limiter::SlidingLog(l) => l.refused(t),
            Limiter::SlidingWindowCounter(l) => l.refused(t),
            _ => {
                let ok = self.admit(t);
                debug_assert!(!ok, "admitted before refuses_before");
            }
        }
    }

    #[inline]
    fn refused_many(&mut self, n: u64) {
        match self {
            Limiter::FixedWindow(l) => l.refused_many(n),
            Limiter::SlidingLog(l) => l.refused_many(n),
            Limiter::SlidingWindowCounter(l) => l.refused_many(n),
            _ => debug_assert!(
                n == 0,
                "no refused_many for a limiter that refuses before nothing"
            ),
        }
    }

    #[inline]
    fn keeps(&self) -> u64 {
        match self {
            Limiter::SlidingLog(l) => l.keeps(),
            _ => 0,
        }
    }
}

impl Limiter {
    /// Whether admitted requests may leave later than they arrive.
    pub fn delays(&self) -> bool {
        match self {
            Limiter::LeakyBucket(l) => l.mode == LeakyMode::Queue,
            Limiter::Nginx(l) => l.delays(),
            #[cfg(feature = "fleet")]
            Limiter::Fleet(l) => l.delays(),
            _ => false,
        }
    }

    /// How long after its arrival every decision of this limiter reaches the backend, alike
    /// for admissions and rejections: a central store's round trip, 0 for every other. (A
    /// queue delays admissions only, each by its own wait: see [`Limiter::delays`].)
    pub fn shift(&self) -> Micros {
        match self {
            #[cfg(feature = "fleet")]
            Limiter::Fleet(l) => l.shift(),
            _ => 0,
        }
    }

    /// What the limiter holds at `now` (see [`State`]); a split limit's servers added up.
    pub fn state(&self, now: Micros) -> State {
        match self {
            Limiter::FixedWindow(l) => l.state(now),
            Limiter::SlidingLog(l) => l.state(now),
            Limiter::SlidingWindowCounter(l) => l.state(now),
            Limiter::TokenBucket(l) => l.state(now),
            Limiter::Gcra(l) => l.state(now),
            Limiter::LeakyBucket(l) => l.state(now),
            Limiter::Nginx(l) => l.state(now),
            Limiter::Haproxy(l) => l.state(now),
            #[cfg(feature = "libraries")]
            Limiter::Anchored(l) => l.state(now),
            #[cfg(feature = "libraries")]
            Limiter::GoRate(l) => l.state(now),
            #[cfg(feature = "libraries")]
            Limiter::RedisCell(l) => l.state(now),
            #[cfg(feature = "libraries")]
            Limiter::Vsthrottle(l) => l.state(now),
            #[cfg(feature = "libraries")]
            Limiter::Limits(l) => l.state(now),
            Limiter::Split(l) => l.state(now),
            #[cfg(feature = "fleet")]
            Limiter::Fleet(l) => l.state(now),
        }
    }
}

/// A limit split across `K` servers, each with its own limiter of `1/K` of the limit (and
/// burst), with every request routed to a server uniformly at random.
#[derive(Debug, Clone)]
pub struct Split {
    servers: Vec<Limiter>,
    routing: Rng,
    /// [`crate::rng::below_threshold`] of the servers' count, worked out once: the draws
    /// [`Rng::below`] makes, without a division per request.
    threshold: u32,
}

impl Split {
    /// `servers` limiters (at least one), routed to with `routing`.
    pub fn new(servers: Vec<Limiter>, routing: Rng) -> Self {
        let threshold = crate::rng::below_threshold((servers.len() as u32).max(1));
        Split {
            servers,
            routing,
            threshold,
        }
    }

    /// The server the next request goes to.
    #[inline]
    fn route(&mut self) -> usize {
        let n = self.servers.len() as u32;
        self.routing.below_given(n, self.threshold) as usize
    }

    /// Decides and audits a chunk of requests as [`Auditor::decide_chunk`] with
    /// [`Decide::admit`] would, telling `decided` each answer (it returns what is kept): the
    /// servers' kind matched once per chunk, so that the study's split limits (sliding logs,
    /// token buckets) decide in a loop of their own, not through a call to [`Limiter::admit`]
    /// per request. The servers of a split are built from one spec, so share the first one's
    /// kind; one of another kind would still be decided, through that call. The study's build
    /// only: the page's other modules do without, and weigh less.
    ///
    /// [`Auditor::decide_chunk`]: crate::audit::Auditor::decide_chunk
    #[cfg(feature = "storm")]
    pub(crate) fn decide_chunk(
        &mut self,
        audit: &mut crate::audit::Auditor,
        times: &[Micros],
        mut decided: impl FnMut(bool) -> bool,
    ) -> u64 {
        macro_rules! typed {
            ($kind:ident) => {
                audit.decide_chunk(times, |t| {
                    let k = self.route();
                    let ok = match &mut self.servers[k] {
                        Limiter::$kind(server) => server.admit(t),
                        other => other.admit(t),
                    };
                    decided(ok)
                })
            };
        }
        match self.servers.first() {
            Some(Limiter::SlidingLog(_)) => typed!(SlidingLog),
            Some(Limiter::TokenBucket(_)) => typed!(TokenBucket),
            Some(Limiter::FixedWindow(_)) => typed!(FixedWindow),
            Some(Limiter::SlidingWindowCounter(_)) => typed!(SlidingWindowCounter),
            Some(Limiter::Gcra(_)) => typed!(Gcra),
            _ => audit.decide_chunk(times, |t| decided(self.admit(t))),
        }
    }

    /// Its servers' states added up.
    pub fn state(&self, now: Micros) -> State {
        let mut states = self.servers.iter().map(|s| s.state(now));
        let first = states.next().unwrap_or(State::Count { count: 0, limit: 0 });
        states.fold(first, State::plus)
    }
}

impl Decide for Split {
    #[inline]
    fn decide(&mut self, t: Micros) -> Decision {
        let k = self.route();
        self.servers[k].decide(t)
    }

    #[inline]
    fn admit(&mut self, t: Micros) -> bool {
        let k = self.route();
        self.servers[k].admit(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SECOND;
    use proptest::prelude::*;

    fn per_minute(n: u64) -> Rate {
        Rate {
            count: n,
            per: 60 * SECOND,
        }
    }

    fn trace(gaps: &[u64]) -> Vec<Micros> {
        let mut t = 0;
        gaps.iter()
            .map(|g| {
                t += g;
                t
            })
            .collect()
    }

    #[cfg(feature = "storm")]
    proptest! {
        /// A split deciding a chunk with its servers' kind matched once decides, audits and
        /// routes as one request at a time through [`Decide::admit`]: for every kind the match
        /// names, one it does not (nginx), and a split whose servers are not all of one kind.
        #[test]
        fn a_split_decides_a_chunk_as_one_request_at_a_time(
            kind in 0usize..6,
            mixed in any::<bool>(),
            servers in 2usize..5,
            seed in 0u64..1000,
            gaps in prop::collection::vec(prop_oneof![Just(0u64), 0u64..2 * SECOND, 0u64..20 * SECOND], 0..500),
        ) {
            use crate::audit::Auditor;
            use crate::rng::Stream;
            let (limit, window) = (10, 60 * SECOND);
            let make = |k: usize| match k {
                0 => Limiter::SlidingLog(SlidingLog::new(limit, window, false)),
                1 => Limiter::TokenBucket(TokenBucket::new(5, per_minute(limit))),
                2 => Limiter::FixedWindow(FixedWindow::new(limit, window, true)),
                3 => Limiter::SlidingWindowCounter(SlidingWindowCounter::new(limit, window, false)),
                4 => Limiter::Gcra(Gcra::new(5, per_minute(limit))),
                _ => Limiter::Nginx(Nginx::new(per_minute(limit), 3, None)),
            };
            let parts: Vec<Limiter> = (0..servers)
                .map(|i| make(if mixed && i == servers - 1 { (kind + 1) % 6 } else { kind }))
                .collect();
            let mut chunked = Split::new(parts, crate::rng::Rng::new(seed, 0, Stream::Routing));
            let mut alone = chunked.clone();
            let times = trace(&gaps);
            let mut audit = Auditor::new(limit, window);
            let mut told = Vec::new();
            let admitted = chunked.decide_chunk(&mut audit, &times, |ok| {
                told.push(ok);
                ok
            });
            let mut one = Auditor::new(limit, window);
            let each: Vec<bool> = times
                .iter()
                .map(|&t| {
                    let ok = alone.admit(t);
                    one.record(t, ok);
                    ok
                })
                .collect();
            prop_assert_eq!(&told, &each);
            prop_assert_eq!(admitted, each.iter().filter(|&&ok| ok).count() as u64);
            prop_assert_eq!(
                (audit.busiest, audit.busiest_at, audit.decisions, audit.admits, audit.wrong_admits, audit.wrong_rejects),
                (one.busiest, one.busiest_at, one.decisions, one.admits, one.wrong_admits, one.wrong_rejects)
            );
            // The routing goes on alike: the next requests reach the same servers.
            let last = times.last().copied().unwrap_or(0);
            for t in [last + 1, last + 3600 * SECOND] {
                prop_assert_eq!(chunked.admit(t), alone.admit(t));
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        #[test]
        fn token_bucket_equals_gcra(
            burst in 1u64..40,
            count in 1u64..200,
            per in 1u64..5_000_000,
            gaps in prop::collection::vec(prop_oneof![Just(0u64), 0u64..1000, 0u64..200_000], 0..400),
        ) {
            let rate = Rate { count, per };
            let mut tb = TokenBucket::new(burst, rate);
            let mut gcra = Gcra::new(burst, rate);
            for t in trace(&gaps) {
                prop_assert_eq!(tb.decide(t), gcra.decide(t), "at {}", t);
            }
        }

        #[test]
        fn the_sliding_log_is_the_literal_rule_over_what_it_logs(
            limit in 1u64..12,
            window in 1u64..300,
            record_rejects in any::<bool>(),
            gaps in prop::collection::vec(prop_oneof![Just(0u64), 0u64..5, 0u64..100], 0..600),
        ) {
            // The plain log: every logged request kept, counted in (t − W, t].
            let mut logged: Vec<Micros> = Vec::new();
            let mut log = SlidingLog::new(limit, window, record_rejects);
            for t in trace(&gaps) {
                let inside = logged.iter().filter(|&&l| l + window > t).count() as u64;
                let want = inside < limit;
                if want || record_rejects {
                    logged.push(t);
                }
                prop_assert_eq!(log.decide(t).admitted(), want, "at {}", t);
            }
        }

        #[test]
        fn leaky_meter_is_a_token_bucket_one_larger(
            burst in 0u64..40,
            count in 1u64..200,
            per in 1u64..5_000_000,
            gaps in prop::collection::vec(prop_oneof![Just(0u64), 0u64..1000, 0u64..200_000], 0..400),
        ) {
            let rate = Rate { count, per };
            let mut leaky = LeakyBucket::new(burst, rate, LeakyMode::Meter);
            let mut tb = TokenBucket::new(burst + 1, rate);
            for t in trace(&gaps) {
                prop_assert_eq!(leaky.decide(t), tb.decide(t), "at {}", t);
            }
        }

        #[test]
        fn the_leaky_queue_admits_what_the_meter_admits_and_keeps_order(
            burst in 0u64..40,
            gaps in prop::collection::vec(0u64..2_000_000, 0..300),
        ) {
            let rate = per_minute(100);
            let mut meter = LeakyBucket::new(burst, rate, LeakyMode::Meter);
            let mut queue = LeakyBucket::new(burst, rate, LeakyMode::Queue);
            let mut last_departure = 0;
            for t in trace(&gaps) {
                let (m, q) = (meter.decide(t), queue.decide(t));
                prop_assert_eq!(m.admitted(), q.admitted());
                if let Decision::Admit { at } = q {
                    prop_assert!(at >= t && at <= t + burst * rate.per / rate.count);
                    // Departures never overtake each other, and leave one interval apart.
                    if last_departure > 0 {
                        prop_assert!(at >= last_departure + rate.per / rate.count);
                    }
                    last_departure = at;
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]

        /// Token bucket and GCRA hold the same tokens at every moment, and the whole part is
        /// how many requests a copy of either admits back to back then.
        #[test]
        fn token_bucket_and_gcra_hold_the_same_tokens(
            burst in 1u64..20,
            count in 1u64..50,
            per in 1u64..2_000,
            gaps in prop::collection::vec(prop_oneof![Just(0u64), 0u64..50, 0u64..3_000], 0..200),
            later in 0u64..3_000,
        ) {
            let rate = Rate { count, per };
            let mut tb = TokenBucket::new(burst, rate);
            let mut gcra = Gcra::new(burst, rate);
            for t in trace(&gaps) {
                tb.decide(t);
                gcra.decide(t);
                for now in [t, t + later] {
                    let (a, b) = (tb.state(now), gcra.state(now));
                    prop_assert_eq!(a, b, "at {}", now);
                    let State::Tokens { tokens, capacity } = a else {
                        return Err(TestCaseError::fail("not tokens"));
                    };
                    prop_assert_eq!(capacity, burst);
                    prop_assert!((0.0..=burst as f64).contains(&tokens));
                    let (mut tb2, mut gcra2) = (tb.clone(), gcra.clone());
                    let got = (0..=burst).take_while(|_| tb2.admit(now)).count();
                    let got2 = (0..=burst).take_while(|_| gcra2.admit(now)).count();
                    prop_assert_eq!((got as f64, got2 as f64), (tokens.floor(), tokens.floor()), "at {}", now);
                }
            }
        }

        /// The queue read from the excess is the requests admitted and not yet left.
        #[test]
        fn the_leaky_queue_is_what_has_not_left(
            burst in 0u64..20,
            count in 1u64..50,
            per in 1u64..2_000,
            gaps in prop::collection::vec(prop_oneof![Just(0u64), 0u64..50, 0u64..3_000], 0..200),
            later in 0u64..3_000,
        ) {
            let rate = Rate { count, per };
            let mut q = LeakyBucket::new(burst, rate, LeakyMode::Queue);
            let mut meter = LeakyBucket::new(burst, rate, LeakyMode::Meter);
            let mut departures = Vec::new();
            for t in trace(&gaps) {
                meter.decide(t);
                if let Decision::Admit { at } = q.decide(t) {
                    departures.push(at);
                }
                for now in [t, t + later] {
                    let waiting = departures.iter().filter(|&&d| d > now).count() as u64;
                    prop_assert_eq!(q.state(now), State::Queue { queued: waiting, burst }, "at {}", now);
                    let State::Excess { excess, .. } = meter.state(now) else {
                        return Err(TestCaseError::fail("not an excess"));
                    };
                    prop_assert!((0.0..=burst as f64).contains(&excess));
                }
            }
        }

        /// The sliding-window counter admits exactly when the estimate recounted from what it
        /// counted, `prev·(W − e) + cur·W`, is below `L·W`: with recorded rejects (128-bit)
        /// and without (the room it keeps), at small limits and at limits a window fills
        /// many times over.
        #[test]
        fn the_counter_admits_exactly_while_the_estimate_is_below_the_limit(
            limit in prop_oneof![1u64..8, 50u64..200],
            window in prop_oneof![1u64..100, 1_000u64..100_000],
            record_rejects in any::<bool>(),
            gaps in prop::collection::vec(prop_oneof![Just(0u64), 0u64..10, 0u64..300, 0u64..3_000], 0..600),
        ) {
            let mut swc = SlidingWindowCounter::new(limit, window, record_rejects);
            let mut counted: Vec<Micros> = Vec::new();
            for t in trace(&gaps) {
                let k = t / window;
                let in_window = |k: u64| counted.iter().filter(|&&x| x / window == k).count() as u64;
                let (current, previous) = (in_window(k), if k > 0 { in_window(k - 1) } else { 0 });
                let left = (k + 1) * window - t;
                let below = u128::from(previous) * u128::from(left) + u128::from(current) * u128::from(window)
                    < u128::from(limit) * u128::from(window);
                let ok = swc.admit(t);
                prop_assert_eq!(ok, below, "at {}", t);
                if ok || record_rejects {
                    counted.push(t);
                }
            }
        }

        /// The window counters' states are recounts of what they counted.
        #[test]
        fn the_counters_states_are_recounts(
            limit in 1u64..8,
            window in 1u64..100,
            record_rejects in any::<bool>(),
            gaps in prop::collection::vec(prop_oneof![Just(0u64), 0u64..10, 0u64..300], 0..300),
            later in 0u64..300,
        ) {
            let mut fw = FixedWindow::new(limit, window, record_rejects);
            let mut swc = SlidingWindowCounter::new(limit, window, record_rejects);
            let mut log = SlidingLog::new(limit, window, record_rejects);
            let (mut fw_counted, mut swc_counted, mut logged) = (Vec::new(), Vec::new(), Vec::new());
            for t in trace(&gaps) {
                if fw.admit(t) || record_rejects {
                    fw_counted.push(t);
                }
                if swc.admit(t) || record_rejects {
                    swc_counted.push(t);
                }
                if log.admit(t) || record_rejects {
                    logged.push(t);
                }
                for now in [t, t + later] {
                    let k = now / window;
                    let in_window = |v: &[Micros], k: u64| v.iter().filter(|&&x| x / window == k).count() as u64;
                    prop_assert_eq!(fw.state(now), State::Count { count: in_window(&fw_counted, k), limit });
                    let (current, previous) = (in_window(&swc_counted, k), if k > 0 { in_window(&swc_counted, k - 1) } else { 0 });
                    let State::Estimate { current: c, previous: p, estimate, limit: l } = swc.state(now) else {
                        return Err(TestCaseError::fail("not an estimate"));
                    };
                    prop_assert_eq!((c, p, l), (current, previous, limit), "at {}", now);
                    let left = (k + 1) * window - now;
                    // Below the limit exactly when the counter would admit (the exact test).
                    prop_assert_eq!(
                        estimate < limit as f64,
                        previous * left + current * window < limit * window,
                        "at {}", now
                    );
                    let inside = logged.iter().filter(|&&x| x + window > now).count() as u64;
                    prop_assert_eq!(log.state(now), State::Log {
                        entries: inside.min(limit),
                        rejects: (!record_rejects).then_some(0),
                        limit,
                    }, "at {}", now);
                    if !record_rejects {
                        prop_assert!(inside <= limit);
                    }
                }
            }
        }
    }

    #[test]
    fn states_name_their_kind_and_a_split_adds_its_servers_up() {
        let names: Vec<&str> = [
            State::Tokens {
                tokens: 1.5,
                capacity: 3,
            },
            State::Log {
                entries: 4,
                rejects: Some(1),
                limit: 5,
            },
            State::Count { count: 2, limit: 5 },
            State::Estimate {
                current: 1,
                previous: 2,
                estimate: 2.0,
                limit: 5,
            },
            State::Excess {
                excess: 0.5,
                burst: 2,
            },
            State::Queue {
                queued: 2,
                burst: 2,
            },
        ]
        .iter()
        .map(|s| s.kind().name())
        .collect();
        assert_eq!(
            names,
            ["tokens", "log", "count", "estimate", "excess", "queue"]
        );
        // Two servers of 5 per 10 µs, routed at random: their counts and limits add up.
        let servers = vec![Limiter::FixedWindow(FixedWindow::new(5, 10, false)); 2];
        let mut split = Split::new(
            servers,
            crate::rng::Rng::new(1, 0, crate::rng::Stream::Routing),
        );
        let admitted = (0..7).filter(|_| split.admit(3)).count() as u64;
        assert_eq!(
            split.state(3),
            State::Count {
                count: admitted,
                limit: 10
            }
        );
        assert_eq!(admitted, 7);
        assert_eq!(
            split.state(10),
            State::Count {
                count: 0,
                limit: 10
            }
        );
    }

    #[test]
    fn fixed_window_resets_on_calendar_boundaries() {
        let mut fw = FixedWindow::new(2, 10, false);
        let got: Vec<bool> = [0, 1, 2, 9, 10, 11, 12, 35]
            .iter()
            .map(|&t| fw.decide(t).admitted())
            .collect();
        assert_eq!(got, [true, true, false, false, true, true, false, true]);
    }

    #[test]
    fn sliding_log_counts_a_half_open_window() {
        let mut log = SlidingLog::new(2, 10, false);
        let got: Vec<bool> = [0, 5, 9, 10, 14, 15]
            .iter()
            .map(|&t| log.decide(t).admitted())
            .collect();
        // At 10 the request at 0 has expired; at 14 the window (4, 14] holds 5 and 10.
        assert_eq!(got, [true, true, false, true, false, true]);
    }

    #[test]
    fn recording_rejects_keeps_a_hammered_log_shut() {
        let mut plain = SlidingLog::new(1, 10, false);
        let mut strict = SlidingLog::new(1, 10, true);
        let times = [0, 6, 12, 18, 24];
        let plain_got: Vec<bool> = times.iter().map(|&t| plain.decide(t).admitted()).collect();
        let strict_got: Vec<bool> = times.iter().map(|&t| strict.decide(t).admitted()).collect();
        assert_eq!(plain_got, [true, false, true, false, true]);
        assert_eq!(strict_got, [true, false, false, false, false]);
    }

    #[test]
    fn sliding_window_counter_weights_the_previous_window() {
        // Limit 10 per 100 µs; 10 at the end of window 0.
        let mut swc = SlidingWindowCounter::new(10, 100, false);
        for _ in 0..10 {
            assert!(swc.decide(99).admitted());
        }
        assert!(!swc.decide(99).admitted());
        // At 125 the estimate is 10·0.75 + cur: admit while cur < 2.5, so three more.
        let got: Vec<bool> = (0..4).map(|_| swc.decide(125).admitted()).collect();
        assert_eq!(got, [true, true, true, false]);
        // A window with no traffic in between forgets everything.
        assert!((0..10).all(|_| swc.decide(305).admitted()));
    }

    #[test]
    fn token_bucket_starts_full_and_refills() {
        let mut tb = TokenBucket::new(3, Rate { count: 1, per: 10 });
        let got: Vec<bool> = [0, 0, 0, 0, 9, 10, 10, 30, 30, 30]
            .iter()
            .map(|&t| tb.decide(t).admitted())
            .collect();
        assert_eq!(
            got,
            [true, true, true, false, false, true, false, true, true, false]
        );
    }

    #[test]
    fn leaky_bucket_follows_nginx() {
        // burst=2 at 1 request per 10 µs: three at once, then one per 10 µs.
        let rate = Rate { count: 1, per: 10 };
        let mut q = LeakyBucket::new(2, rate, LeakyMode::Queue);
        let got: Vec<Decision> = [0, 0, 0, 0, 10].iter().map(|&t| q.decide(t)).collect();
        assert_eq!(
            got,
            [
                Decision::Admit { at: 0 },
                Decision::Admit { at: 10 },
                Decision::Admit { at: 20 },
                Decision::Reject,
                Decision::Admit { at: 30 },
            ]
        );
    }
}
