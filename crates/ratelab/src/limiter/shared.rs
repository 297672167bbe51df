//! What a limiter needs when gateways share it ([`super::Fleet`]): whether it would admit a
//! request at `t` without changing anything (`peek`), and an admission another gateway made
//! recorded as if it had decided it (`force`), whether or not it would have.
//!
//! A forced admission counts like any other: a window's count or a log passes `L`, a bucket
//! runs into debt (GCRA's theoretical arrival time moves on past the tolerance; the token
//! bucket, which keeps no debt, stops at empty, so a fleet keeps a token bucket as the GCRA it
//! equals), an excess passes the burst. Rejections are never forced: in a limiter that does
//! not record them they change nothing.

#[cfg(feature = "libraries")]
use super::{AnchoredWindow, GoRate, Limits, RedisCell, Vsthrottle};
use super::{
    Decide, FixedWindow, Gcra, Haproxy, LeakyBucket, Limiter, Nginx, SlidingLog,
    SlidingWindowCounter, TokenBucket,
};
use crate::time::Micros;

/// `peek` and `force`; see the module's documentation.
pub trait Shared {
    /// Whether a request at `t` would be admitted; changes nothing.
    fn peek(&self, t: Micros) -> bool;
    /// Records an admission at `t`, made elsewhere, whatever this limiter would decide.
    fn force(&mut self, t: Micros);
}

/// Limiters with no heap state peek on a copy.
macro_rules! peek_on_a_copy {
    ($($ty:ty),*) => {$(
        impl $ty {
            #[inline]
            fn peek_copy(&self, t: Micros) -> bool {
                self.clone().admit(t)
            }
        }
    )*};
}
peek_on_a_copy!(
    FixedWindow,
    SlidingWindowCounter,
    TokenBucket,
    Gcra,
    LeakyBucket,
    Nginx,
    Haproxy
);

impl Shared for FixedWindow {
    fn peek(&self, t: Micros) -> bool {
        self.peek_copy(t)
    }
    fn force(&mut self, t: Micros) {
        if t >= self.window_end {
            self.window_end = (t / self.window + 1) * self.window;
            self.count = 0;
        }
        self.count += 1;
    }
}

impl Shared for SlidingLog {
    fn peek(&self, t: Micros) -> bool {
        self.oldest() <= t
    }
    fn force(&mut self, t: Micros) {
        // The ring keeps the last `L` logged requests, which is all a decision reads.
        self.enter(t);
    }
}

impl Shared for SlidingWindowCounter {
    fn peek(&self, t: Micros) -> bool {
        self.peek_copy(t)
    }
    fn force(&mut self, t: Micros) {
        self.wide = true;
        let record = std::mem::replace(&mut self.record_rejects, true);
        // Deciding with recorded rejects counts the request whatever the answer.
        self.admit(t);
        self.record_rejects = record;
    }
}

impl Shared for TokenBucket {
    fn peek(&self, t: Micros) -> bool {
        self.peek_copy(t)
    }
    fn force(&mut self, t: Micros) {
        // No debt: an empty bucket stays empty (a fleet uses GCRA instead).
        let filled = self.units + (t - self.last) * self.refill;
        self.last = t;
        self.units = filled.min(self.capacity).saturating_sub(self.token);
    }
}

impl Shared for Gcra {
    fn peek(&self, t: Micros) -> bool {
        self.peek_copy(t)
    }
    fn force(&mut self, t: Micros) {
        self.tat = self.tat.max(t * self.scale) + self.interval;
    }
}

impl Shared for LeakyBucket {
    fn peek(&self, t: Micros) -> bool {
        self.peek_copy(t)
    }
    fn force(&mut self, t: Micros) {
        self.excess = match self.last {
            None => 0,
            Some(last) => {
                (self.excess + self.token).saturating_sub((t - last).saturating_mul(self.leak))
            }
        };
        self.last = Some(t);
    }
}

impl Shared for Nginx {
    fn peek(&self, t: Micros) -> bool {
        self.peek_copy(t)
    }
    fn force(&mut self, t: Micros) {
        self.force_at(t);
    }
}

impl Shared for Haproxy {
    fn peek(&self, t: Micros) -> bool {
        self.peek_copy(t)
    }
    fn force(&mut self, t: Micros) {
        self.force_at(t);
    }
}

#[cfg(feature = "libraries")]
impl Shared for AnchoredWindow {
    fn peek(&self, t: Micros) -> bool {
        AnchoredWindow::peek(self, t)
    }
    fn force(&mut self, t: Micros) {
        AnchoredWindow::force(self, t);
    }
}

#[cfg(feature = "libraries")]
impl Shared for GoRate {
    fn peek(&self, t: Micros) -> bool {
        GoRate::peek(self, t)
    }
    fn force(&mut self, t: Micros) {
        GoRate::force(self, t);
    }
}

#[cfg(feature = "libraries")]
impl Shared for RedisCell {
    fn peek(&self, t: Micros) -> bool {
        RedisCell::peek(self, t)
    }
    fn force(&mut self, t: Micros) {
        RedisCell::force(self, t);
    }
}

#[cfg(feature = "libraries")]
impl Shared for Vsthrottle {
    fn peek(&self, t: Micros) -> bool {
        Vsthrottle::peek(self, t)
    }
    fn force(&mut self, t: Micros) {
        Vsthrottle::force(self, t);
    }
}

#[cfg(feature = "libraries")]
impl Shared for Limits {
    fn peek(&self, t: Micros) -> bool {
        Limits::peek(self, t)
    }
    fn force(&mut self, t: Micros) {
        Limits::force(self, t);
    }
}

impl Shared for Limiter {
    fn peek(&self, t: Micros) -> bool {
        match self {
            Limiter::FixedWindow(l) => l.peek(t),
            Limiter::SlidingLog(l) => l.peek(t),
            Limiter::SlidingWindowCounter(l) => l.peek(t),
            Limiter::TokenBucket(l) => l.peek(t),
            Limiter::Gcra(l) => l.peek(t),
            Limiter::LeakyBucket(l) => l.peek(t),
            Limiter::Nginx(l) => l.peek(t),
            Limiter::Haproxy(l) => l.peek(t),
            #[cfg(feature = "libraries")]
            Limiter::Anchored(l) => Shared::peek(l, t),
            #[cfg(feature = "libraries")]
            Limiter::GoRate(l) => Shared::peek(l, t),
            #[cfg(feature = "libraries")]
            Limiter::RedisCell(l) => Shared::peek(l, t),
            #[cfg(feature = "libraries")]
            Limiter::Vsthrottle(l) => Shared::peek(l, t),
            #[cfg(feature = "libraries")]
            Limiter::Limits(l) => Shared::peek(l, t),
            // A fleet or a split is never itself shared: the scenario refuses it.
            Limiter::Split(_) | Limiter::Fleet(_) => false,
        }
    }
    fn force(&mut self, t: Micros) {
        match self {
            Limiter::FixedWindow(l) => l.force(t),
            Limiter::SlidingLog(l) => l.force(t),
            Limiter::SlidingWindowCounter(l) => l.force(t),
            Limiter::TokenBucket(l) => l.force(t),
            Limiter::Gcra(l) => l.force(t),
            Limiter::LeakyBucket(l) => l.force(t),
            Limiter::Nginx(l) => l.force(t),
            Limiter::Haproxy(l) => l.force(t),
            #[cfg(feature = "libraries")]
            Limiter::Anchored(l) => Shared::force(l, t),
            #[cfg(feature = "libraries")]
            Limiter::GoRate(l) => Shared::force(l, t),
            #[cfg(feature = "libraries")]
            Limiter::RedisCell(l) => Shared::force(l, t),
            #[cfg(feature = "libraries")]
            Limiter::Vsthrottle(l) => Shared::force(l, t),
            #[cfg(feature = "libraries")]
            Limiter::Limits(l) => Shared::force(l, t),
            Limiter::Split(_) | Limiter::Fleet(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limiter::{LeakyMode, Rate};
    use crate::time::SECOND;
    use proptest::prelude::*;

    fn kinds(limit: u64, window: Micros) -> Vec<Limiter> {
        let rate = Rate {
            count: limit,
            per: window,
        };
        vec![
            Limiter::FixedWindow(FixedWindow::new(limit, window, false)),
            Limiter::SlidingLog(SlidingLog::new(limit, window, false)),
            Limiter::SlidingWindowCounter(SlidingWindowCounter::new(limit, window, false)),
            Limiter::TokenBucket(TokenBucket::new(limit, rate)),
            Limiter::Gcra(Gcra::new(limit, rate)),
            Limiter::LeakyBucket(LeakyBucket::new(2, rate, LeakyMode::Meter)),
            Limiter::Nginx(Nginx::new(
                Rate {
                    count: 7,
                    per: SECOND,
                },
                2,
                Some(1),
            )),
            Limiter::Haproxy(Haproxy::new(limit, SECOND, false)),
            #[cfg(feature = "libraries")]
            Limiter::Anchored(AnchoredWindow::new(limit, SECOND)),
            #[cfg(feature = "libraries")]
            Limiter::GoRate(GoRate::new(limit as f64, limit)),
            #[cfg(feature = "libraries")]
            Limiter::RedisCell(RedisCell::new(limit - 1, limit, 1)),
            #[cfg(feature = "libraries")]
            Limiter::Vsthrottle(Vsthrottle::new(limit, SECOND)),
            #[cfg(feature = "libraries")]
            Limiter::Limits(Limits::new(
                limit,
                SECOND,
                crate::limiter::LimitsStrategy::FixedWindow,
            )),
            #[cfg(feature = "libraries")]
            Limiter::Limits(Limits::new(
                limit,
                SECOND,
                crate::limiter::LimitsStrategy::MovingWindow,
            )),
            #[cfg(feature = "libraries")]
            Limiter::Limits(Limits::new(
                limit,
                SECOND,
                crate::limiter::LimitsStrategy::SlidingWindowCounter,
            )),
        ]
    }

    proptest! {
        #[test]
        fn peek_is_the_decision_and_forcing_it_is_deciding_it(
            gaps in proptest::collection::vec(0u64..400_000, 1..300),
            limit in 1u64..8,
        ) {
            // Replaying a limiter's own decisions, admissions forced, leaves it deciding as
            // the limiter itself: `peek` then `force` on admission is `decide`.
            for (a, mut b) in kinds(limit, SECOND).into_iter().zip(kinds(limit, SECOND)) {
                let mut a = a;
                let mut t = 0;
                for &g in &gaps {
                    t += g;
                    let would = b.peek(t);
                    let did = a.admit(t);
                    prop_assert_eq!(would, did, "{:?} at {}", a, t);
                    if would {
                        b.force(t);
                    }
                }
            }
        }

        #[test]
        fn forced_admissions_only_ever_take_room(
            gaps in proptest::collection::vec(0u64..400_000, 1..200),
            forced in proptest::collection::vec(any::<bool>(), 200),
            limit in 1u64..8,
        ) {
            // A limiter that also records admissions made elsewhere admits nothing that the
            // same limiter with only its own admissions would refuse: what others take only
            // ever takes room (the property a gateway's stale view relies on). Not HAProxy's
            // counter: its periods restart at the first request after two quiet ones, so
            // others' requests can move where its periods fall, and a request refused on one
            // schedule can pass on the other (found by this test).
            // Nor a window a key's first request opens, for the same reason.
            let kinds = |l, w| {
                kinds(l, w)
                    .into_iter()
                    .filter(|k| {
                        !matches!(k, Limiter::Haproxy(_) | Limiter::Anchored(_))
                            && !matches!(k, Limiter::Limits(l) if l.opens_at_a_hit())
                    })
            };
            for (mut shared, mut own) in kinds(limit, SECOND).zip(kinds(limit, SECOND)) {
                let mut t = 0;
                for (i, &g) in gaps.iter().enumerate() {
                    t += g;
                    if forced[i] {
                        shared.force(t);
                        continue;
                    }
                    let alone = own.peek(t);
                    let admitted = shared.admit(t);
                    prop_assert!(!admitted || alone, "{:?} admitted at {} what {:?} refuses", shared, t, own);
                    if admitted {
                        own.force(t);
                    }
                }
            }
        }
    }
}
