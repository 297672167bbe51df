//! An exact `Retry-After` from every limiter: the earliest time, from `t` on, at which a
//! request would be admitted if nothing else arrived meanwhile. Read after the decision it
//! answers, from the limiter's state, which it does not change.
//!
//! With nothing arriving a limiter's state only ever frees room (windows move on, buckets
//! refill, excess leaks, logged requests leave), so the times a request would be admitted
//! form one interval running to the end of time, and its start is the answer:
//! - fixed window: now if the window has room, else the next window's start;
//! - sliding log: when the oldest of the last `L` logged requests leaves the window;
//! - token bucket and GCRA: when the next whole token is there;
//! - leaky bucket and nginx: when enough has leaked for one more request to fit the burst
//!   (nginx on its millisecond clock, leaking whole thousandths);
//! - the sliding-window counter and HAProxy's: found by search over that interval (each
//!   probe a decision on a copy), since their estimate falls in steps at period boundaries.
//!
//! A sliding log that records rejects logs the retry too: a client that retries before the
//! answer stays locked out, but one that waits for it is admitted, which the tests check like
//! every other.

use super::{Decide, FixedWindow, Gcra, LeakyBucket, Limiter, Nginx, SlidingLog, TokenBucket};
use crate::time::Micros;

/// The latest time searched: past it, `None` (a limiter that will not admit for centuries).
const FAR: Micros = 1 << 53;

impl Limiter {
    /// The `Retry-After` the real limiter sends with a rejection at `t`, as a wait in µs from
    /// `t` (the library's own rounding), or `None` where it sends none (nginx, HAProxy and
    /// the algorithms, unless configured to).
    pub fn header(&self, t: Micros) -> Option<Micros> {
        #[cfg(not(feature = "libraries"))]
        let _ = t;
        match self {
            #[cfg(feature = "libraries")]
            Limiter::Anchored(l) => Some(l.header(t)),
            #[cfg(feature = "libraries")]
            Limiter::GoRate(l) => Some(l.header(t)),
            #[cfg(feature = "libraries")]
            Limiter::RedisCell(l) => Some(l.header(t)),
            #[cfg(feature = "libraries")]
            Limiter::Limits(l) => Some(l.header(t)),
            _ => None,
        }
    }

    /// The earliest time from `t` at which a request would be admitted if nothing else
    /// arrived, or `None` for a split limit (which server a retry reaches is not known) and
    /// past 2^53 µs; a fleet's is the answer of the gateway that made the last decision, from
    /// its own view ([`crate::limiter::Fleet::retry_after`]). `t` must be no earlier than the
    /// last decision.
    pub fn retry_after(&self, t: Micros) -> Option<Micros> {
        let at = match self {
            Limiter::FixedWindow(l) => l.retry_after(t),
            Limiter::SlidingLog(l) => l.retry_after(t),
            Limiter::TokenBucket(l) => l.retry_after(t),
            Limiter::Gcra(l) => l.retry_after(t),
            Limiter::LeakyBucket(l) => l.retry_after(t),
            Limiter::Nginx(l) => l.retry_after(t),
            Limiter::SlidingWindowCounter(l) => search(l, t),
            Limiter::Haproxy(l) => search(l, t),
            #[cfg(feature = "libraries")]
            Limiter::Anchored(l) => l.retry_after(t),
            #[cfg(feature = "libraries")]
            Limiter::GoRate(l) => l.retry_after(t),
            #[cfg(feature = "libraries")]
            Limiter::RedisCell(l) => l.retry_after(t),
            #[cfg(feature = "libraries")]
            Limiter::Vsthrottle(l) => l.retry_after(t),
            #[cfg(feature = "libraries")]
            Limiter::Limits(l) => l.retry_after(t),
            Limiter::Split(_) => return None,
            #[cfg(feature = "fleet")]
            Limiter::Fleet(l) => l.retry_after(t)?,
        };
        (at <= FAR).then_some(at)
    }
}

/// The first time from `t` a copy of `l` admits: doubling steps, then halving.
pub(super) fn search<L: Decide + Clone>(l: &L, t: Micros) -> Micros {
    first(t, |at| l.clone().admit(at))
}

/// [`first`], `None` past 2^53 µs.
#[cfg(feature = "fleet")]
pub(crate) fn first_from(t: Micros, admits: impl Fn(Micros) -> bool) -> Option<Micros> {
    Some(first(t, admits)).filter(|&at| at <= FAR)
}

/// The first time from `t` at which `admits` holds, where it holds from some time on:
/// doubling steps, then halving (`Micros::MAX` past 2^53 µs). Where it does not hold from
/// then on to the end of time, a time at which it holds.
fn first(t: Micros, admits: impl Fn(Micros) -> bool) -> Micros {
    if admits(t) {
        return t;
    }
    let mut step = 1;
    while !admits(t.saturating_add(step)) {
        if step > FAR {
            return Micros::MAX;
        }
        step *= 2;
    }
    // Not at t + step/2 (or t), admitted at t + step.
    let (mut lo, mut hi) = (t + step / 2, t + step);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if admits(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

impl FixedWindow {
    fn retry_after(&self, t: Micros) -> Micros {
        if t >= self.window_end || self.count < self.limit {
            t
        } else {
            self.window_end
        }
    }
}

impl SlidingLog {
    pub(super) fn retry_after(&self, t: Micros) -> Micros {
        t.max(self.oldest())
    }
}

impl TokenBucket {
    fn retry_after(&self, t: Micros) -> Micros {
        let short = self.token.saturating_sub(self.units);
        t.max(self.last + short.div_ceil(self.refill.max(1)))
    }
}

impl Gcra {
    fn retry_after(&self, t: Micros) -> Micros {
        // Admitted once `tat − now · scale ≤ tolerance`.
        let from = self.tat.saturating_sub(self.tolerance);
        t.max(from.div_ceil(self.scale.max(1)))
    }
}

impl LeakyBucket {
    fn retry_after(&self, t: Micros) -> Micros {
        let Some(last) = self.last else { return t };
        let over = (self.excess + self.token).saturating_sub(self.burst);
        t.max(last + over.div_ceil(self.leak.max(1)))
    }
}

impl Nginx {
    fn retry_after(&self, t: Micros) -> Micros {
        let Some((excess, last, rate, burst)) = self.parts() else {
            return t;
        };
        // Admitted once `⌊rate · ms / 1000⌋ ≥ excess + 1000 − burst`, i.e. `rate · ms ≥ that
        // × 1000`, on nginx's millisecond clock.
        let need = (excess + 1000).saturating_sub(burst);
        let ms = (u128::from(need) * 1000).div_ceil(u128::from(rate.max(1)));
        let at = u128::from(last).saturating_add(ms).saturating_mul(1000);
        t.max(at.min(u128::from(Micros::MAX)) as Micros)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limiter::{Haproxy, LeakyMode, Rate, SlidingWindowCounter};
    use crate::time::SECOND;
    use proptest::prelude::*;

    fn kinds(limit: u64, record: bool) -> Vec<Limiter> {
        let w = SECOND;
        let rate = Rate {
            count: limit,
            per: w,
        };
        vec![
            Limiter::FixedWindow(FixedWindow::new(limit, w, record)),
            Limiter::SlidingLog(SlidingLog::new(limit, w, record)),
            Limiter::SlidingWindowCounter(SlidingWindowCounter::new(limit, w, record)),
            Limiter::TokenBucket(TokenBucket::new(limit, rate)),
            Limiter::Gcra(Gcra::new(limit, rate)),
            Limiter::LeakyBucket(LeakyBucket::new(2, rate, LeakyMode::Meter)),
            Limiter::LeakyBucket(LeakyBucket::new(
                2,
                Rate {
                    count: 7,
                    per: 60 * SECOND,
                },
                LeakyMode::Queue,
            )),
            Limiter::Nginx(Nginx::new(
                Rate {
                    count: 7,
                    per: 60 * SECOND,
                },
                2,
                None,
            )),
            Limiter::Nginx(Nginx::new(
                Rate {
                    count: 20,
                    per: SECOND,
                },
                0,
                Some(0),
            )),
            Limiter::Haproxy(Haproxy::new(limit, SECOND, record)),
            // express-rate-limit's and rate-limiter-flexible's window, and the latter's
            // blocks, shorter and longer than the window.
            #[cfg(feature = "libraries")]
            Limiter::Anchored(super::super::AnchoredWindow::new(limit, w)),
            #[cfg(feature = "libraries")]
            Limiter::Anchored(
                super::super::AnchoredWindow::new(limit, w).with_block(300 * crate::time::MS),
            ),
            #[cfg(feature = "libraries")]
            Limiter::Anchored(super::super::AnchoredWindow::new(limit, w).with_block(3 * SECOND)),
        ]
    }

    proptest! {
        #[test]
        fn a_retry_at_retry_after_is_admitted_and_no_earlier_one_is(
            gaps in proptest::collection::vec(0u64..300_000, 1..200),
            limit in 1u64..6,
            record in any::<bool>(),
            wait in 0u64..3_000_000,
        ) {
            for mut l in kinds(limit, record) {
                let mut t = 0;
                for &g in &gaps {
                    t += g;
                    l.decide(t);
                }
                // Asked a while after the last decision.
                let asked = t + wait;
                let Some(at) = l.retry_after(asked) else {
                    prop_assert!(false, "{:?}: no answer", l);
                    unreachable!()
                };
                prop_assert!(at >= asked);
                prop_assert!(l.clone().admit(at), "{:?}: refused at its Retry-After {}", l, at);
                if at > asked {
                    prop_assert!(!l.clone().admit(at - 1), "{:?}: admitted before its Retry-After {}", l, at);
                }
                // The closed forms agree with the search.
                prop_assert_eq!(Some(search(&l, asked)), Some(at), "{:?}", l);
            }
        }
    }
}
