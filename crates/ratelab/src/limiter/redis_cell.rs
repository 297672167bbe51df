//! redis-cell's `CL.THROTTLE key max_burst count period` (crate `redis-cell` 0.2.2, a GCRA
//! module for Redis), read from its source and run here (`docs/research/go-cell/FINDINGS.md`):
//! on a nanosecond clock, the emission interval `T = (period · 1e9) as f64 / count`
//! truncated to whole ns, the tolerance `DVT = T · (max_burst + 1)`; a request at `now` with
//! the stored theoretical arrival time `tat` (or `now` when the key is gone) is refused when
//! `max(now, tat) + T − now > DVT`, else `tat` becomes `max(now, tat) + T` and the key is set
//! to expire `trunc_ms(tat − now)` ms later on Redis's millisecond clock (alive while the
//! clock's millisecond is at most the write's plus that): a key can go a millisecond before
//! its `tat`, which then counts as a full bucket. The reply's `retry_after` is the wait
//! truncated to whole seconds. A request of `quantity` cells (`CL.THROTTLE`'s fifth argument)
//! moves `tat` on by `quantity · T` (the module's `increment`).

use super::decide::{admitted_at, Decide, Decision, State};
use crate::time::{Micros, SECOND};

/// See the module's documentation.
#[derive(Debug, Clone)]
pub struct RedisCell {
    /// The emission interval `T`, ns.
    pub(super) interval: i64,
    /// What one request moves `tat` on by: `T · quantity`, ns.
    pub(super) increment: i64,
    /// `T · (max_burst + 1)`, ns.
    pub(super) tolerance: i64,
    /// `max_burst + 1`: what a full bucket passes at once.
    pub(super) capacity: u64,
    /// The stored theoretical arrival time, ns, while the key lives.
    pub(super) tat: Option<i64>,
    /// The last millisecond (of Redis's clock) the key lives in.
    pub(super) alive_until_ms: i64,
}

impl RedisCell {
    /// `CL.THROTTLE key max_burst count period`.
    pub fn new(max_burst: u64, count: u64, period_s: u64) -> Self {
        let interval = ((period_s as f64 * 1e9) / count as f64) as i64;
        let capacity = max_burst.saturating_add(1);
        RedisCell {
            interval,
            increment: interval,
            tolerance: interval.saturating_mul(i64::try_from(capacity).unwrap_or(i64::MAX)),
            capacity,
            tat: None,
            alive_until_ms: 0,
        }
    }

    /// The same with `CL.THROTTLE`'s `quantity`: each request takes `quantity` cells.
    pub fn with_quantity(mut self, quantity: u64) -> Self {
        self.increment = self
            .interval
            .saturating_mul(i64::try_from(quantity.max(1)).unwrap_or(i64::MAX));
        self
    }

    #[inline]
    fn ns(t: Micros) -> i64 {
        i64::try_from(t.saturating_mul(1000)).unwrap_or(i64::MAX)
    }

    /// The stored `tat` at `now` ns, if the key still lives.
    #[inline]
    fn stored(&self, now: i64) -> Option<i64> {
        self.tat.filter(|_| now / 1_000_000 <= self.alive_until_ms)
    }

    /// The `tat` a request at `now` would leave, and whether it is admitted.
    #[inline]
    fn throttle(&self, now: i64) -> (bool, i64) {
        let tat = self.stored(now).unwrap_or(now);
        let new_tat = now.max(tat).saturating_add(self.increment);
        (new_tat - now <= self.tolerance, new_tat)
    }

    fn store(&mut self, now: i64, new_tat: i64) {
        self.tat = Some(new_tat);
        self.alive_until_ms = now / 1_000_000 + (new_tat - now) / 1_000_000;
    }

    /// What the limiter holds at `now`: the requests a full bucket of `max_burst + 1` has
    /// room for.
    pub fn state(&self, now: Micros) -> State {
        let now = Self::ns(now);
        let tat = self.stored(now).unwrap_or(now).max(now);
        let used = (tat - now) as f64 / self.interval.max(1) as f64;
        State::Tokens {
            tokens: (self.capacity as f64 - used).max(0.0),
            capacity: self.capacity,
        }
    }

    /// The earliest time from `t` at which a request would be admitted if nothing else
    /// arrived: when `tat − DVT + T` comes, or earlier if the key expires first (µs).
    pub fn retry_after(&self, t: Micros) -> Micros {
        let now = Self::ns(t);
        if self.throttle(now).0 {
            return t;
        }
        let tat = self.stored(now).unwrap_or(now);
        let due = tat - self.tolerance + self.increment;
        let expires = (self.alive_until_ms + 1).saturating_mul(1_000_000);
        let at = due.min(expires).max(now);
        // The first µs at or after it.
        (at as u64).div_ceil(1000)
    }

    /// The `retry_after` of `CL.THROTTLE`'s reply, which a server sends as `Retry-After`: the
    /// wait until `tat − DVT` (when the request would have fitted), truncated to whole
    /// seconds, in µs from `t`.
    pub fn header(&self, t: Micros) -> Micros {
        let now = Self::ns(t);
        let (_, new_tat) = self.throttle(now);
        let wait = (new_tat - self.tolerance - now).max(0) as u64;
        wait / 1_000_000_000 * SECOND
    }

    #[cfg_attr(not(feature = "fleet"), allow(dead_code))]
    pub(super) fn peek(&self, t: Micros) -> bool {
        self.throttle(Self::ns(t)).0
    }

    /// Records an admission made elsewhere: its emission added, past the tolerance if need be.
    #[cfg_attr(not(feature = "fleet"), allow(dead_code))]
    pub(super) fn force(&mut self, t: Micros) {
        let now = Self::ns(t);
        let (_, new_tat) = self.throttle(now);
        self.store(now, new_tat);
    }
}

impl Decide for RedisCell {
    #[inline]
    fn decide(&mut self, t: Micros) -> Decision {
        admitted_at(self.admit(t), t)
    }

    #[inline]
    fn admit(&mut self, t: Micros) -> bool {
        let now = Self::ns(t);
        let (ok, new_tat) = self.throttle(now);
        if ok {
            self.store(now, new_tat);
        }
        ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::MS;

    #[test]
    fn four_at_once_then_one_every_two_seconds_and_its_retry_after_is_a_second_short() {
        // `CL.THROTTLE k 3 30 60`, measured here: four admitted at once, the fifth limited
        // with retry_after 1 (the 2 s wait truncated); after a one second wait, limited again.
        let mut l = RedisCell::new(3, 30, 60);
        assert!((0..4).all(|_| l.admit(0)));
        assert!(!l.admit(MS));
        assert_eq!(l.header(MS), SECOND, "1.999 s truncated to 1");
        assert!(!l.admit(MS + SECOND), "waiting what it said is refused");
        assert_eq!(l.header(MS + SECOND), 0);
        assert_eq!(l.retry_after(MS + SECOND), 2 * SECOND);
        assert!(l.admit(2 * SECOND));
    }
}
