//! A window per key that opens at the key's first request (express-rate-limit's default
//! memory store; rate-limiter-flexible's `RateLimiterMemory`): a request at or after the open
//! window's end opens the next, every request is counted, rejected ones included, and a
//! request is admitted while the count, with it, is at most the limit. Both read the clock
//! as `Date.now()`, whole milliseconds. Read from express-rate-limit 8.7.5 and
//! rate-limiter-flexible 11.4.0 (`docs/research/node/FINDINGS.md`).
//!
//! rate-limiter-flexible's `blockDuration` (a `block`): the first request a window rejects
//! replaces the window's end by the time `block` from it (sooner or later than the window's
//! own end), every request till then is rejected and counted, and the next request opens a
//! window afresh. A block shorter than the window lets a client that keeps sending open a
//! window every `block`, up to `L` a block (`theory::anchored_block_worst`).

use super::decide::{admitted_at, Decide, Decision, State};
use crate::time::{Micros, MS, SECOND};

/// See the module's documentation.
#[derive(Debug, Clone)]
pub struct AnchoredWindow {
    pub(super) limit: u64,
    pub(super) window: Micros,
    /// The open window's end on the millisecond clock (µs, a whole number of ms); at or before
    /// the first request's time when none is open.
    pub(super) end: Micros,
    /// Requests counted in the open window, rejected ones included.
    pub(super) count: u64,
    /// The library's clock resolution, µs: a millisecond for `Date.now()`, 1 for Python's
    /// `time.time()` (a float, finer than the simulator's microsecond).
    pub(super) tick: Micros,
    /// rate-limiter-flexible's `blockDuration`, µs (a whole number of ticks; 0: none).
    pub(super) block: Micros,
}

impl AnchoredWindow {
    /// At most `limit` per window of `window` µs (a whole number of milliseconds), each
    /// window opened by a key's first request after the last one ended.
    pub fn new(limit: u64, window: Micros) -> Self {
        Self::with_tick(limit, window, MS)
    }

    /// The same on a clock that reads whole `tick`s of µs (at least 1).
    pub fn with_tick(limit: u64, window: Micros, tick: Micros) -> Self {
        AnchoredWindow {
            limit,
            window,
            end: 0,
            count: 0,
            tick: tick.max(1),
            block: 0,
        }
    }

    /// The same with rate-limiter-flexible's `blockDuration` of `block` µs (0: none).
    pub fn with_block(mut self, block: Micros) -> Self {
        self.block = block;
        self
    }

    /// `t` on the library's clock: whole ticks.
    #[inline]
    fn now(&self, t: Micros) -> Micros {
        t - t % self.tick
    }

    /// The end of the window in force at `t` (`t`'s tick plus the window when none is open).
    pub fn end_at(&self, t: Micros) -> Micros {
        self.at(t).0
    }

    /// The window in force at `t`: its end and count (a closed window counts nothing).
    #[inline]
    fn at(&self, t: Micros) -> (Micros, u64) {
        let now = self.now(t);
        if self.end <= now {
            (now + self.window, 0)
        } else {
            (self.end, self.count)
        }
    }

    /// What the limiter holds at `now`.
    pub fn state(&self, now: Micros) -> State {
        State::Count {
            count: self.at(now).1,
            limit: self.limit,
        }
    }

    /// The earliest time from `t` at which a request would be admitted if nothing else
    /// arrived: now while the window has room, else when it ends.
    pub fn retry_after(&self, t: Micros) -> Micros {
        let (end, count) = self.at(t);
        if count < self.limit {
            t
        } else {
            end
        }
    }

    /// The `Retry-After` the library sends with a rejection at `t`, in µs from `t`: the time
    /// to the window's end in whole seconds, rounded up (express-rate-limit's
    /// `Math.ceil((resetTime - Date.now()) / 1000)`; for rate-limiter-flexible,
    /// `Math.ceil(msBeforeNext / 1000)`, its `msBeforeNext` the same time).
    pub fn header(&self, t: Micros) -> Micros {
        let (end, count) = self.at(t);
        // The request at `t` is the window's first rejection: it sets the block, and its
        // `msBeforeNext` is the block.
        let end = if self.block > 0 && count == self.limit {
            self.now(t) + self.block
        } else {
            end
        };
        (end - self.now(t)).div_ceil(SECOND) * SECOND
    }

    /// Records a request at `t` as the store does, whether admitted or not; returns whether it
    /// was admitted.
    #[inline]
    fn count_in(&mut self, t: Micros) -> bool {
        let (end, count) = self.at(t);
        self.end = end;
        self.count = count.saturating_add(1);
        if self.block > 0 && self.count == self.limit.saturating_add(1) {
            // The first rejection blocks the key for `block` from now.
            self.end = self.now(t) + self.block;
        }
        self.count <= self.limit
    }

    /// Records an admission another gateway made at `t`.
    #[cfg_attr(not(feature = "fleet"), allow(dead_code))]
    pub(super) fn force(&mut self, t: Micros) {
        self.count_in(t);
    }

    /// Whether a request at `t` would be admitted; changes nothing.
    #[cfg_attr(not(feature = "fleet"), allow(dead_code))]
    pub(super) fn peek(&self, t: Micros) -> bool {
        self.at(t).1 < self.limit
    }
}

impl Decide for AnchoredWindow {
    #[inline]
    fn decide(&mut self, t: Micros) -> Decision {
        admitted_at(self.admit(t), t)
    }

    #[inline]
    fn admit(&mut self, t: Micros) -> bool {
        self.count_in(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_opens_at_the_first_request_and_a_request_at_its_end_opens_the_next() {
        // express-rate-limit's pattern: 1 at 0, 4 at 999 ms, 5 at 1000 ms, limit 5 per second.
        let mut l = AnchoredWindow::new(5, SECOND);
        assert!(l.admit(0));
        assert!((0..4).all(|_| l.admit(999 * MS + 900)));
        assert!(!l.admit(999 * MS + 950), "the sixth in the window");
        assert_eq!(l.retry_after(999 * MS + 950), SECOND);
        assert_eq!(
            l.header(999 * MS + 950),
            SECOND,
            "1 ms left: one second, rounded up"
        );
        assert!((0..5).all(|_| l.admit(SECOND)));
        assert!(!l.admit(SECOND + 1));
        // Nine admitted in (0, 1 s]: 2L − 1.
    }

    #[test]
    fn a_block_starts_at_the_first_rejection_and_a_request_at_its_end_opens_a_window() {
        // FINDINGS F5: points 5, duration 10 s, blockDuration 1 s.
        let mut l = AnchoredWindow::new(5, 10 * SECOND).with_block(SECOND);
        assert!((0..5).all(|_| l.admit(2 * MS)));
        assert_eq!(l.header(2 * MS + 500), SECOND, "msBeforeNext is the block");
        assert!(!l.admit(2 * MS + 500), "the sixth: blocked till 1.002 s");
        assert_eq!(l.retry_after(2 * MS + 600), SECOND + 2 * MS);
        assert!(!l.admit(SECOND + MS + 999), "still blocked, and counted");
        assert_eq!(
            l.header(SECOND + MS),
            SECOND,
            "1 ms left: a second, rounded up"
        );
        assert!((0..5).all(|_| l.admit(SECOND + 2 * MS)), "a fresh window");
        assert!(!l.admit(SECOND + 2 * MS));
        // A block longer than the window's rest keeps the key shut past the window's end.
        let mut l = AnchoredWindow::new(1, SECOND).with_block(5 * SECOND);
        assert!(l.admit(0));
        assert!(!l.admit(900 * MS));
        assert!(!l.admit(3 * SECOND), "blocked past the window's end");
        assert!(l.admit(5 * SECOND + 900 * MS));
    }

    #[test]
    fn a_rejected_request_counts_but_the_window_still_ends_on_time() {
        let mut l = AnchoredWindow::new(1, 10 * MS);
        assert!(l.admit(3 * MS));
        assert!((0..100).all(|_| !l.admit(5 * MS)));
        assert!(!l.admit(12 * MS + 999));
        assert!(
            l.admit(13 * MS),
            "a window of 10 ms from 3 ms ends at 13 ms"
        );
    }
}
