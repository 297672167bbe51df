//! The limiters that hold tokens or fill a bucket: the token bucket, GCRA and the leaky
//! bucket (a meter or a queue).

use super::decide::{admitted_at, ratio, Decide, Decision, Rate, State};
use crate::time::Micros;
use serde::{Deserialize, Serialize};
use std::hint::select_unpredictable;

/// Token bucket: holds up to `B` tokens, refills continuously at the rate, starts full; each
/// request takes one token.
#[derive(Debug, Clone)]
pub struct TokenBucket {
    /// Tokens, in units of `1/per` token.
    pub(super) units: u64,
    pub(super) capacity: u64,
    pub(super) token: u64,
    pub(super) refill: u64,
    pub(super) last: Micros,
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

    /// Whether this bucket, untouched, is GCRA `g`'s twin, untouched: the same burst and rate
    /// ([`Gcra::new`]), which the study's claim says admit alike. Whether they do is still
    /// checked decision by decision wherever this is used.
    pub fn twin_of(&self, g: &Gcra) -> bool {
        self.token == g.interval
            && self.refill == g.scale
            && self.capacity == g.tolerance + g.interval
            && self.units == self.capacity
            && self.last == 0
            && g.tat == 0
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
        // Selects the compiler must not turn into branches: in a loop of decisions it would,
        // to shorten the chain from one decision to the next, and whether the bucket is full
        // or has a token is anybody's guess.
        let capped = select_unpredictable(filled < self.capacity, filled, self.capacity);
        self.units = capped - select_unpredictable(ok, self.token, 0);
        ok
    }
}

/// GCRA, the generic cell rate algorithm: the token bucket written as a theoretical arrival
/// time. Times are scaled by the rate's count so that the emission interval is an integer.
#[derive(Debug, Clone)]
pub struct Gcra {
    pub(super) tat: u64,
    pub(super) interval: u64,
    pub(super) tolerance: u64,
    pub(super) scale: u64,
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
        // `max(TAT, now) − now ≤ τ` is `TAT ≤ now + τ`, whose right side does not wait for
        // the TAT: the loop's chain of dependent steps is one shorter.
        let ok = self.tat <= now + self.tolerance;
        // (Selects kept selects, as in the token bucket's.)
        let next = select_unpredictable(self.tat > now, self.tat, now) + self.interval;
        self.tat = select_unpredictable(ok, next, self.tat);
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
    pub(super) excess: u64,
    pub(super) burst: u64,
    pub(super) token: u64,
    pub(super) leak: u64,
    pub(super) last: Option<Micros>,
    pub(super) mode: LeakyMode,
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
