//! Python's `limits` (under Flask-Limiter and SlowAPI), its three strategies on its memory
//! storage, read from limits 5.8.0 and Flask-Limiter 4.1.1 (`docs/research/limits/FINDINGS.md`).
//! The clock is `time.time()`, float seconds, finer than the simulator's microsecond, so the
//! model decides on µs; the simulator's 0 is taken as a whole second of the epoch (where the
//! sliding-window counter's windows and the headers' whole seconds fall).
//!
//! - `fixed-window`: a window per key opened by the key's first hit, `[t, t + W)`; every hit
//!   is counted, rejected ones included, and admitted while the count with it is at most `L`
//!   (as express-rate-limit's, on a finer clock).
//! - `moving-window`: a log of admissions; a hit is refused when the `L`-th newest is at or
//!   after `now − W` (a closed window `[now − W, now]`: an entry exactly `W` old still counts).
//!   Refusals store nothing.
//! - `sliding-window-counter`: windows aligned to multiples of `W`; the last window's count
//!   weighted by the share of this one still to come, plus this one's, must stay below `L`
//!   (`floor(weighted) + 1 ≤ L`). Refusals store nothing.

use super::decide::LimitsStrategy;
use super::decide::{admitted_at, Decide, Decision, State};
use super::{AnchoredWindow, SlidingLog, SlidingWindowCounter};
use crate::time::{Micros, SECOND};

/// See the module's documentation.
#[derive(Debug, Clone)]
pub struct Limits {
    /// The rate string's `W`, µs.
    pub(super) window: Micros,
    pub(super) inner: Inner,
}

#[derive(Debug, Clone)]
pub(super) enum Inner {
    Fixed(AnchoredWindow),
    /// A log whose window is `W + 1 µs`: `(t − W − 1, t]` on the µs grid is `[t − W, t]`.
    Moving(SlidingLog),
    Counter(SlidingWindowCounter),
}

impl Limits {
    /// `limit` per `window` µs with `strategy`.
    pub fn new(limit: u64, window: Micros, strategy: LimitsStrategy) -> Self {
        let inner = match strategy {
            LimitsStrategy::FixedWindow => {
                Inner::Fixed(AnchoredWindow::with_tick(limit, window, 1))
            }
            LimitsStrategy::MovingWindow => {
                Inner::Moving(SlidingLog::new(limit, window.saturating_add(1), false))
            }
            LimitsStrategy::SlidingWindowCounter => {
                Inner::Counter(SlidingWindowCounter::new(limit, window, false))
            }
        };
        Limits { window, inner }
    }

    /// Whether its windows open at a key's hit (the fixed window).
    pub fn opens_at_a_hit(&self) -> bool {
        matches!(self.inner, Inner::Fixed(_))
    }

    /// What the limiter holds at `now`.
    pub fn state(&self, now: Micros) -> State {
        match &self.inner {
            Inner::Fixed(l) => l.state(now),
            Inner::Moving(l) => l.state(now),
            Inner::Counter(l) => l.state(now),
        }
    }

    /// The earliest time from `t` at which a hit would be admitted if nothing else arrived.
    pub fn retry_after(&self, t: Micros) -> Micros {
        match &self.inner {
            Inner::Fixed(l) => l.retry_after(t),
            Inner::Moving(l) => l.retry_after(t),
            Inner::Counter(l) => super::retry_after::search(l, t),
        }
    }

    /// When the limit resets as `get_window_stats` reports it at `t` (µs): the open fixed
    /// window's end; the moving window's oldest admission still inside it, plus `W`; for the
    /// counter, the last instant before the weighted count's floor next drops (or this
    /// window's end).
    fn reset(&self, t: Micros) -> Micros {
        match &self.inner {
            Inner::Fixed(l) => l.end_at(t),
            // The log holds when each admission leaves `[now − W, now]`: `a + W + 1`.
            Inner::Moving(l) => l.oldest().saturating_sub(1).max(t),
            Inner::Counter(l) => {
                let (prev, cur, elapsed) = l.counts_at(t);
                let w = self.window as f64 / SECOND as f64;
                let prev_ttl = (self.window - elapsed) as f64 / SECOND as f64;
                let cur_ttl = if elapsed == 0 { 0.0 } else { prev_ttl };
                let a = if prev > 0 {
                    prev_ttl % (w / prev as f64)
                } else {
                    f64::INFINITY
                };
                let b = if cur > 0 { cur_ttl } else { f64::INFINITY };
                let wait = a.min(b);
                if wait.is_finite() {
                    t + (wait * SECOND as f64) as Micros
                } else {
                    t
                }
            }
        }
    }

    /// The `Retry-After` Flask-Limiter sends (with `RATELIMIT_HEADERS_ENABLED`) with a
    /// refusal at `t`, µs from `t`: `int(int(R + 1) − now)` whole seconds, `R` the reset
    /// time in epoch seconds, so never more than a second past `R` and, when `now`'s
    /// fraction of a second is below `R`'s, before it. (Negative values, possible at the
    /// moving window's exact edge, are sent as 0.)
    pub fn header(&self, t: Micros) -> Micros {
        let reset = self.reset(t);
        let whole = (reset / SECOND + 1) * SECOND;
        // Truncated toward zero: whole seconds of `whole − t`.
        (whole.saturating_sub(t) / SECOND) * SECOND
    }

    /// Records an admission another gateway made at `t`.
    #[cfg(feature = "fleet")]
    pub(super) fn force(&mut self, t: Micros) {
        use super::shared::Shared;
        match &mut self.inner {
            Inner::Fixed(l) => l.force(t),
            Inner::Moving(l) => Shared::force(l, t),
            Inner::Counter(l) => Shared::force(l, t),
        }
    }

    /// Whether a hit at `t` would be admitted; changes nothing.
    #[cfg(feature = "fleet")]
    pub(super) fn peek(&self, t: Micros) -> bool {
        use super::shared::Shared;
        match &self.inner {
            Inner::Fixed(l) => l.peek(t),
            Inner::Moving(l) => Shared::peek(l, t),
            Inner::Counter(l) => Shared::peek(l, t),
        }
    }
}

impl Decide for Limits {
    #[inline]
    fn decide(&mut self, t: Micros) -> Decision {
        admitted_at(self.admit(t), t)
    }

    #[inline]
    fn admit(&mut self, t: Micros) -> bool {
        match &mut self.inner {
            Inner::Fixed(l) => l.admit(t),
            Inner::Moving(l) => l.admit(t),
            Inner::Counter(l) => l.admit(t),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Micros = SECOND;

    #[test]
    fn the_fixed_window_opens_at_the_first_hit_as_limits_does() {
        // limits' own trace (FINDINGS §10): 3 per 10 seconds, first hit at +3.5 s.
        let mut l = Limits::new(3, 10 * S, LimitsStrategy::FixedWindow);
        assert!(l.admit(3_500_000));
        assert!(l.admit(4 * S) && l.admit(4 * S));
        assert!(!l.admit(5 * S));
        assert_eq!(l.header(5 * S), 9 * S, "Retry-After 9 at +5 (R = 13.5)");
        assert!(!l.admit(13_499_999));
        assert_eq!(l.header(13_499_999), 0, "int(14 − 13.499999) = 0");
        assert!(
            l.admit(13_500_000),
            "a hit at the window's end opens the next"
        );
        // 1 at s, L − 1 inside, L at s + W: 2L − 1 in (s, s + W].
        let mut l = Limits::new(3, 10 * S, LimitsStrategy::FixedWindow);
        let times = [0, 9_500_000, 9_500_000, 10 * S, 10 * S, 10 * S];
        assert!(times.iter().all(|&t| l.admit(t)));
    }

    #[test]
    fn the_moving_window_counts_an_entry_exactly_w_old() {
        // Hits at 0, 1, 2 s, 3 per 10 s: refused at +10.0, admitted at +10.000001.
        let mut l = Limits::new(3, 10 * S, LimitsStrategy::MovingWindow);
        assert!([0, S, 2 * S].iter().all(|&t| l.admit(t)));
        assert!(!l.admit(10 * S));
        assert_eq!(l.retry_after(10 * S), 10 * S + 1);
        assert!(l.admit(10 * S + 1));
        // Flask's Retry-After with hits at 0.9, 1, 2 and a refusal at 1.5: R = 10.9, so
        // int(11 − 1.5) = 9, and the retry at 10.5 is refused again.
        let mut l = Limits::new(3, 10 * S, LimitsStrategy::MovingWindow);
        assert!([900_000, S, 2 * S].iter().all(|&t| l.admit(t)));
        assert!(!l.admit(1_500_000));
        assert_eq!(l.header(2_500_000), 8 * S);
        assert!(
            !l.admit(1_500_000 + 9 * S),
            "waiting what it said is refused"
        );
    }

    #[test]
    fn the_counter_weights_the_last_window_as_limits_does() {
        // 10 a minute, 10 hits just before a window's start: 27 s into the next the last
        // window weighs 10 × 33/60 = 5.5, so five more pass (⌊5.5 + 4⌋ + 1 ≤ 10).
        let w = 60 * S;
        let mut l = Limits::new(10, w, LimitsStrategy::SlidingWindowCounter);
        assert!((0..10).all(|_| l.admit(w - S)));
        assert!(!l.admit(w));
        let mid = w + 27 * S;
        assert!((0..5).all(|_| l.admit(mid)));
        assert!(!l.admit(mid));
        // Reset: this window's count until its end (33 s), the last one's next integer drop
        // 33 mod (60/10) = 3 s off: R = 90 s, int(int(R + 1) − now) = 91 − 87 = 4.
        assert_eq!(l.header(mid), 4 * S);
        assert!(!l.admit(w + 30 * S), "at R itself the floor is still 10");
        assert!(l.admit(w + 30 * S + 1));
    }
}
