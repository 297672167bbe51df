//! The rate limiters (nginx's and HAProxy's, in their own arithmetic, in `nginx` and
//! `haproxy`). Each one decides, at a time it is given, whether to let a request
//! through; none of them reads a clock.
//!
//! All arithmetic is in integers, so decisions are exact and identical on every target. A
//! rate of `N` requests per `D` µs is kept as the fraction itself: one token is `D` units,
//! and a microsecond refills `N` units.

#[cfg(feature = "fleet")]
mod fleet;
mod haproxy;
mod nginx;
mod retry_after;
#[cfg(feature = "fleet")]
mod shared;

#[cfg(feature = "fleet")]
pub use fleet::{Coord, Fleet, FleetStats, GatewayStats, Outage, Route, Router};
pub use haproxy::Haproxy;
pub use nginx::{thousandths_per_second, Nginx};
#[cfg(feature = "fleet")]
pub use shared::Shared;

use crate::rng::Rng;
use crate::time::Micros;
use serde::{Deserialize, Serialize};

/// A limiter's answer for one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Let through, leaving at `at` (later than the arrival only for the queueing leaky bucket).
    Admit {
        /// When the request leaves the limiter.
        at: Micros,
    },
    /// Turned away.
    Reject,
}

impl Decision {
    /// Whether the request was let through.
    #[inline]
    pub fn admitted(self) -> bool {
        matches!(self, Decision::Admit { .. })
    }
}

/// A rate: `count` requests per `per` microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rate {
    /// Requests per period.
    pub count: u64,
    /// The period, in µs.
    pub per: Micros,
}

/// The interface every limiter has: a decision at a time, which must not decrease.
pub trait Decide {
    /// Decides on a request arriving at `t`.
    fn decide(&mut self, t: Micros) -> Decision;

    /// Whether a request arriving at `t` is admitted: the same decision as [`Decide::decide`],
    /// for callers that do not need the departure time. Limiters whose admissions leave at once
    /// implement it without branching on the outcome.
    #[inline]
    fn admit(&mut self, t: Micros) -> bool {
        self.decide(t).admitted()
    }
}

/// What a limiter holds at a moment: the mechanism behind its decisions, as the explainer
/// draws it. Read with each limiter's `state(now)`, which changes nothing; `now` must be no
/// earlier than the last decision's time (the state as it stands after every decision so far,
/// with time moved on to `now`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum State {
    /// Token bucket and GCRA: the tokens available, out of `capacity`. A fraction while the
    /// bucket refills; its whole part is how many requests would be admitted back to back now.
    Tokens {
        /// Tokens available.
        tokens: f64,
        /// The bucket's capacity `B`.
        capacity: u64,
    },
    /// Sliding log: the logged requests inside `(now − W, now]`, rejected ones included when
    /// they are recorded; the log admits while there are fewer than `limit`.
    Log {
        /// Entries in the window, recorded rejects included.
        entries: u64,
        /// How many of them are recorded rejects, where known (see [`SlidingLog::state`]).
        rejects: Option<u64>,
        /// `L`.
        limit: u64,
    },
    /// Fixed window: the current calendar window's count (recorded rejects included).
    Count {
        /// Requests counted in the current window.
        count: u64,
        /// `L`.
        limit: u64,
    },
    /// Sliding-window counter: the two windows' counts and the weighted estimate it compares
    /// against `limit`: `previous · (W − elapsed) / W + current`.
    Estimate {
        /// The current calendar window's count.
        current: u64,
        /// The previous calendar window's count.
        previous: u64,
        /// The estimate (admits while it is below `limit`).
        estimate: f64,
        /// `L`.
        limit: u64,
    },
    /// Leaky bucket as a meter: nginx's excess, in requests (rejects above `burst`).
    Excess {
        /// The excess, leaked to `now`.
        excess: f64,
        /// nginx's `burst`.
        burst: u64,
    },
    /// Leaky bucket as a queue: admitted requests that have not left yet.
    Queue {
        /// Requests waiting (a request leaving at `now` has left).
        queued: u64,
        /// nginx's `burst`: at most that many wait.
        burst: u64,
    },
}

/// Which [`State`] a limiter has, by the name the page shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StateKind {
    /// [`State::Tokens`].
    #[default]
    Tokens,
    /// [`State::Log`].
    Log,
    /// [`State::Count`].
    Count,
    /// [`State::Estimate`].
    Estimate,
    /// [`State::Excess`].
    Excess,
    /// [`State::Queue`].
    Queue,
}

impl StateKind {
    /// `tokens`, `log`, `count`, `estimate`, `excess` or `queue`.
    pub fn name(self) -> &'static str {
        match self {
            StateKind::Tokens => "tokens",
            StateKind::Log => "log",
            StateKind::Count => "count",
            StateKind::Estimate => "estimate",
            StateKind::Excess => "excess",
            StateKind::Queue => "queue",
        }
    }
}

impl State {
    /// Which state this is.
    pub fn kind(&self) -> StateKind {
        match self {
            State::Tokens { .. } => StateKind::Tokens,
            State::Log { .. } => StateKind::Log,
            State::Count { .. } => StateKind::Count,
            State::Estimate { .. } => StateKind::Estimate,
            State::Excess { .. } => StateKind::Excess,
            State::Queue { .. } => StateKind::Queue,
        }
    }

    /// The one number shown: tokens, log entries, count, estimate, excess or queue length.
    pub fn value(&self) -> f64 {
        match *self {
            State::Tokens { tokens, .. } => tokens,
            State::Log { entries, .. } => entries as f64,
            State::Count { count, .. } => count as f64,
            State::Estimate { estimate, .. } => estimate,
            State::Excess { excess, .. } => excess,
            State::Queue { queued, .. } => queued as f64,
        }
    }

    /// What the value is drawn against: the capacity (tokens), `L` (log, count, estimate) or
    /// the burst (excess, queue).
    pub fn mark(&self) -> u64 {
        match *self {
            State::Tokens { capacity, .. } => capacity,
            State::Log { limit, .. }
            | State::Count { limit, .. }
            | State::Estimate { limit, .. } => limit,
            State::Excess { burst, .. } | State::Queue { burst, .. } => burst,
        }
    }

    /// Two servers' states as one: every part added (a split limit's servers each hold a
    /// share of the limit, and their parts add up to the whole). States of different kinds
    /// keep `self`.
    pub fn plus(self, other: State) -> State {
        match (self, other) {
            (
                State::Tokens { tokens, capacity },
                State::Tokens {
                    tokens: t,
                    capacity: c,
                },
            ) => State::Tokens {
                tokens: tokens + t,
                capacity: capacity + c,
            },
            (
                State::Log {
                    entries,
                    rejects,
                    limit,
                },
                State::Log {
                    entries: e,
                    rejects: r,
                    limit: l,
                },
            ) => State::Log {
                entries: entries + e,
                rejects: rejects.zip(r).map(|(a, b)| a + b),
                limit: limit + l,
            },
            (State::Count { count, limit }, State::Count { count: c, limit: l }) => State::Count {
                count: count + c,
                limit: limit + l,
            },
            (
                State::Estimate {
                    current,
                    previous,
                    estimate,
                    limit,
                },
                State::Estimate {
                    current: c,
                    previous: p,
                    estimate: e,
                    limit: l,
                },
            ) => State::Estimate {
                current: current + c,
                previous: previous + p,
                estimate: estimate + e,
                limit: limit + l,
            },
            (
                State::Excess { excess, burst },
                State::Excess {
                    excess: e,
                    burst: b,
                },
            ) => State::Excess {
                excess: excess + e,
                burst: burst + b,
            },
            (
                State::Queue { queued, burst },
                State::Queue {
                    queued: q,
                    burst: b,
                },
            ) => State::Queue {
                queued: queued + q,
                burst: burst + b,
            },
            (mine, _) => mine,
        }
    }
}

/// `units / per` as a float, its whole part exact (below 2^53).
fn ratio(units: u64, per: u64) -> f64 {
    (units / per) as f64 + (units % per) as f64 / per as f64
}

/// Fixed window: a counter per calendar window `[kW, (k+1)W)`, reset at each boundary.
#[derive(Debug, Clone)]
pub struct FixedWindow {
    limit: u64,
    window: Micros,
    window_end: Micros,
    count: u64,
    record_rejects: bool,
}

impl FixedWindow {
    /// At most `limit` per calendar window of `window` µs.
    pub fn new(limit: u64, window: Micros, record_rejects: bool) -> Self {
        FixedWindow {
            limit,
            window,
            window_end: 0,
            count: 0,
            record_rejects,
        }
    }

    /// The current window's count at `now` (0 once `now` is past the window it counted in).
    pub fn state(&self, now: Micros) -> State {
        State::Count {
            count: if now >= self.window_end {
                0
            } else {
                self.count
            },
            limit: self.limit,
        }
    }
}

impl Decide for FixedWindow {
    #[inline]
    fn decide(&mut self, t: Micros) -> Decision {
        admitted_at(self.admit(t), t)
    }

    #[inline]
    fn admit(&mut self, t: Micros) -> bool {
        if t >= self.window_end {
            // A division only when the window changes, not per request.
            self.window_end = (t / self.window + 1) * self.window;
            self.count = 0;
        }
        let ok = self.count < self.limit;
        // Recording a reject changes nothing here: the count is at the limit already and
        // resets on schedule. The option exists so that the claim can be tested.
        self.count += u64::from(ok | self.record_rejects);
        ok
    }
}

/// The decision of a limiter whose admissions leave at once.
#[inline]
fn admitted_at(ok: bool, t: Micros) -> Decision {
    if ok {
        Decision::Admit { at: t }
    } else {
        Decision::Reject
    }
}

/// Sliding log: the literal rule. Admits when fewer than `limit` logged requests fall in
/// `(t - W, t]`. With `record_rejects`, rejected requests are logged too, as the common
/// sorted-set recipe does when it adds before it counts.
///
/// Only the last `limit` logged requests matter, whatever is logged: fewer than `limit` are in
/// the window exactly when the `limit`-th most recent one has left it. So the log is a ring of
/// `limit` expiry times, and a log that records rejects under a flood costs no more than one
/// that does not.
#[derive(Debug, Clone)]
pub struct SlidingLog {
    window: Micros,
    /// At most this many in the window.
    limit: usize,
    /// When each of the last `limit` logged requests leaves the window, in a ring that grows
    /// as requests are logged (a log that never fills holds what it logged, not `limit`
    /// slots): `last[next]` is the oldest once the ring is full, `last[0]` before.
    last: Vec<Micros>,
    next: usize,
    record_rejects: bool,
}

impl SlidingLog {
    /// At most `limit` in any trailing `window`.
    pub fn new(limit: u64, window: Micros, record_rejects: bool) -> Self {
        SlidingLog {
            window,
            limit: usize::try_from(limit).unwrap_or(usize::MAX),
            last: Vec::new(),
            next: 0,
            record_rejects,
        }
    }

    /// Its limit.
    pub fn limit(&self) -> u64 {
        self.limit as u64
    }

    /// When the oldest of the last `limit` logged requests leaves the window: a request is
    /// admitted from then on (0 while fewer than `limit` have been logged).
    #[inline]
    fn oldest(&self) -> Micros {
        if self.last.len() == self.limit {
            self.last[self.next]
        } else {
            0
        }
    }

    /// Logs a request at `t`: over the oldest once the ring is full, else a slot more.
    #[inline]
    fn enter(&mut self, t: Micros) {
        if self.last.len() == self.limit {
            self.last[self.next] = t + self.window;
            self.next += 1;
            if self.next == self.limit {
                self.next = 0;
            }
        } else {
            // Doubling, but never past `limit` slots.
            if self.last.len() == self.last.capacity() {
                let want = (2 * self.last.len()).max(8).min(self.limit);
                self.last.reserve_exact(want - self.last.len());
            }
            self.last.push(t + self.window);
        }
    }

    /// The entries of its window at `now`, as far as this log keeps them: it keeps the last
    /// `L` logged requests, all that a decision needs. Without recorded rejects that is the
    /// whole window (the literal rule never lets more than `L` in), all of it admitted. With
    /// them, it is every entry while fewer than `L` are inside, and `L` once `L` or more are,
    /// and which were rejects is not kept (`rejects: None`): the sorted set it stands for, over
    /// full and mostly rejects under a retry storm, is counted from the decisions by
    /// [`crate::sim::Mechanism`]. O(log L).
    pub fn state(&self, now: Micros) -> State {
        // The expiry times from `next` round the ring are oldest first (zeros, never logged,
        // come first and are already out), so those still inside are a suffix.
        let n = self.last.len();
        let at = |k: usize| self.last[(self.next + k) % n.max(1)];
        let (mut lo, mut hi) = (0, n);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if at(mid) <= now {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let entries = (n - lo) as u64;
        State::Log {
            entries,
            rejects: (!self.record_rejects).then_some(0),
            limit: self.limit as u64,
        }
    }
}

impl Decide for SlidingLog {
    #[inline]
    fn decide(&mut self, t: Micros) -> Decision {
        admitted_at(self.admit(t), t)
    }

    #[inline]
    fn admit(&mut self, t: Micros) -> bool {
        let ok = self.oldest() <= t;
        if ok | self.record_rejects {
            self.enter(t);
        }
        ok
    }
}

/// Sliding-window counter (Cloudflare, 2017): this window's count plus last window's,
/// weighted by the share of last window still inside the trailing window. Admits while that
/// estimate is below the limit. Computed exactly: `prev·(W − e) + cur·W < L·W`.
#[derive(Debug, Clone)]
pub struct SlidingWindowCounter {
    limit: u64,
    window: Micros,
    index: u64,
    window_start: Micros,
    window_end: Micros,
    prev: u64,
    cur: u64,
    record_rejects: bool,
    /// Whether admissions made elsewhere were recorded ([`Shared::force`]), so that the counts
    /// may pass `L` and need 128-bit arithmetic, as with recorded rejects.
    wide: bool,
}

impl SlidingWindowCounter {
    /// A counter estimating "at most `limit` in any `window`".
    pub fn new(limit: u64, window: Micros, record_rejects: bool) -> Self {
        SlidingWindowCounter {
            limit,
            window,
            index: 0,
            window_start: 0,
            window_end: 0,
            prev: 0,
            cur: 0,
            record_rejects,
            wide: false,
        }
    }

    /// Both windows' counts at `now` and the weighted estimate it would compare against `L`
    /// (the counts moved on if `now` is in a later window).
    pub fn state(&self, now: Micros) -> State {
        let (previous, current, start) = if now >= self.window_end {
            let index = now / self.window;
            let previous = if index == self.index + 1 { self.cur } else { 0 };
            (previous, 0, index * self.window)
        } else {
            (self.prev, self.cur, self.window_start)
        };
        let left = self.window - (now - start);
        State::Estimate {
            current,
            previous,
            estimate: previous as f64 * (left as f64 / self.window as f64) + current as f64,
            limit: self.limit,
        }
    }
}

impl Decide for SlidingWindowCounter {
    #[inline]
    fn decide(&mut self, t: Micros) -> Decision {
        admitted_at(self.admit(t), t)
    }

    #[inline]
    fn admit(&mut self, t: Micros) -> bool {
        if t >= self.window_end {
            let index = t / self.window;
            self.prev = if index == self.index + 1 { self.cur } else { 0 };
            self.cur = 0;
            self.index = index;
            self.window_start = index * self.window;
            self.window_end = self.window_start + self.window;
        }
        let elapsed = t - self.window_start;
        let ok = if self.record_rejects | self.wide {
            // Recorded rejects make the counts unbounded: compute in 128 bits.
            let w = u128::from(self.window);
            let estimate = u128::from(self.prev) * u128::from(self.window - elapsed)
                + u128::from(self.cur) * w;
            estimate < u128::from(self.limit) * w
        } else {
            // Without them both counts stay at most L (≤ 2^20) and W < 2^37, so every product
            // and the sum fit in 64 bits; 128-bit arithmetic is slow in wasm.
            self.prev * (self.window - elapsed) + self.cur * self.window < self.limit * self.window
        };
        self.cur += u64::from(ok | self.record_rejects);
        ok
    }
}

/// Token bucket: holds up to `B` tokens, refills continuously at the rate, starts full; each
/// request takes one token.
#[derive(Debug, Clone)]
pub struct TokenBucket {
    /// Tokens, in units of `1/per` token.
    units: u64,
    capacity: u64,
    token: u64,
    refill: u64,
    last: Micros,
}

impl TokenBucket {
    /// A full bucket of `burst` tokens refilling at `rate`.
    pub fn new(burst: u64, rate: Rate) -> Self {
        let capacity = burst * rate.per;
        TokenBucket {
            units: capacity,
            capacity,
            token: rate.per,
            refill: rate.count,
            last: 0,
        }
    }

    /// The tokens available at `now`, refilled to then and capped at the capacity.
    pub fn state(&self, now: Micros) -> State {
        let filled = self
            .units
            .saturating_add(now.saturating_sub(self.last).saturating_mul(self.refill))
            .min(self.capacity);
        State::Tokens {
            tokens: ratio(filled, self.token),
            capacity: self.capacity / self.token,
        }
    }
}

impl Decide for TokenBucket {
    #[inline]
    fn decide(&mut self, t: Micros) -> Decision {
        admitted_at(self.admit(t), t)
    }

    #[inline]
    fn admit(&mut self, t: Micros) -> bool {
        // Scenario validation keeps `horizon × rate count + capacity` below 2^64, so neither
        // the product nor the sum can overflow, and no saturating (slower) step is needed.
        let filled = self.units + (t - self.last) * self.refill;
        self.last = t;
        // The capacity is at least one token, so whether a token is there does not depend on
        // the cap: deciding from `filled` keeps the cap off the critical path.
        let ok = filled >= self.token;
        self.units = filled.min(self.capacity) - if ok { self.token } else { 0 };
        ok
    }
}

/// GCRA, the generic cell rate algorithm: the token bucket written as a theoretical arrival
/// time. Times are scaled by the rate's count so that the emission interval is an integer.
#[derive(Debug, Clone)]
pub struct Gcra {
    tat: u64,
    interval: u64,
    tolerance: u64,
    scale: u64,
}

impl Gcra {
    /// GCRA with the same burst and rate as [`TokenBucket::new`].
    pub fn new(burst: u64, rate: Rate) -> Self {
        Gcra {
            tat: 0,
            interval: rate.per,
            tolerance: (burst - 1) * rate.per,
            scale: rate.count,
        }
    }

    /// The tokens available at `now`, derived from the theoretical arrival time: a request is
    /// admitted while the TAT is at most the tolerance ahead, so `B · T − (TAT − now)` (with
    /// `T` the emission interval) is what is left of the bucket, and its whole part in `T`s
    /// is how many requests would be admitted back to back now. Equal to the token bucket's.
    pub fn state(&self, now: Micros) -> State {
        let capacity = self.tolerance + self.interval;
        let ahead = self.tat.saturating_sub(now.saturating_mul(self.scale));
        State::Tokens {
            tokens: ratio(capacity.saturating_sub(ahead), self.interval),
            capacity: capacity / self.interval,
        }
    }
}

impl Decide for Gcra {
    #[inline]
    fn decide(&mut self, t: Micros) -> Decision {
        admitted_at(self.admit(t), t)
    }

    #[inline]
    fn admit(&mut self, t: Micros) -> bool {
        let now = t * self.scale;
        let tat = self.tat.max(now);
        let ok = tat - now <= self.tolerance;
        self.tat = if ok { tat + self.interval } else { self.tat };
        ok
    }
}

/// How the leaky bucket treats a request that is within the burst but above the rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LeakyMode {
    /// Let it through at once (nginx `limit_req ... nodelay`).
    #[default]
    Meter,
    /// Hold it until the bucket has leaked enough (nginx `limit_req` without `nodelay`).
    Queue,
}

/// Leaky bucket as nginx's `limit_req` keeps it: an "excess" that grows by one request per
/// admission and leaks at the rate; a request that would push it over `burst` is rejected. In
/// queue mode an admitted request waits `excess / rate` before it leaves.
#[derive(Debug, Clone)]
pub struct LeakyBucket {
    /// The excess, in units of `1/per` request.
    excess: u64,
    burst: u64,
    token: u64,
    leak: u64,
    last: Option<Micros>,
    mode: LeakyMode,
}

impl LeakyBucket {
    /// A leaky bucket of `burst` excess requests leaking at `rate`.
    pub fn new(burst: u64, rate: Rate, mode: LeakyMode) -> Self {
        LeakyBucket {
            excess: 0,
            burst: burst * rate.per,
            token: rate.per,
            leak: rate.count,
            last: None,
            mode,
        }
    }

    /// The excess leaked to `now`, in requests (meter), or how many admitted requests have
    /// not left by `now` (queue). The queue is read from the excess: the last admission, with
    /// excess `e`, leaves `⌊e / rate⌋` after it arrived, each earlier one still waiting one
    /// request's worth of excess sooner, so with `x` the excess leaked to `now`, `k` of them
    /// wait exactly when `x − (k − 1)` requests' worth is still at least a microsecond's leak.
    pub fn state(&self, now: Micros) -> State {
        let x = match self.last {
            None => 0,
            Some(last) => self
                .excess
                .saturating_sub(now.saturating_sub(last).saturating_mul(self.leak)),
        };
        let burst = self.burst / self.token;
        match self.mode {
            LeakyMode::Meter => State::Excess {
                excess: ratio(x, self.token),
                burst,
            },
            LeakyMode::Queue => State::Queue {
                queued: if x >= self.leak {
                    (x - self.leak) / self.token + 1
                } else {
                    0
                },
                burst,
            },
        }
    }
}

impl Decide for LeakyBucket {
    #[inline]
    fn decide(&mut self, t: Micros) -> Decision {
        let excess = match self.last {
            // nginx stores a new client with an excess of zero.
            None => 0,
            Some(last) => {
                (self.excess + self.token).saturating_sub((t - last).saturating_mul(self.leak))
            }
        };
        if excess > self.burst {
            return Decision::Reject;
        }
        self.excess = excess;
        self.last = Some(t);
        let at = match self.mode {
            LeakyMode::Meter => t,
            LeakyMode::Queue => t + excess / self.leak,
        };
        Decision::Admit { at }
    }
}

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
            Limiter::Split(l) => l.admit(t),
            #[cfg(feature = "fleet")]
            Limiter::Fleet(l) => l.admit(t),
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
}

impl Split {
    /// `servers` limiters, routed to with `routing`.
    pub fn new(servers: Vec<Limiter>, routing: Rng) -> Self {
        Split { servers, routing }
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
        let k = self.routing.below(self.servers.len() as u32) as usize;
        self.servers[k].decide(t)
    }

    #[inline]
    fn admit(&mut self, t: Micros) -> bool {
        let k = self.routing.below(self.servers.len() as u32) as usize;
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
