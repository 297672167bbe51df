//! The limiters that count a window: the fixed window, the sliding log (the literal rule) and
//! the sliding-window counter.

use super::decide::{admitted_at, Decide, Decision, State};
use crate::time::Micros;

/// Fixed window: a counter per calendar window `[kW, (k+1)W)`, reset at each boundary.
#[derive(Debug, Clone)]
pub struct FixedWindow {
    pub(super) limit: u64,
    pub(super) window: Micros,
    pub(super) window_end: Micros,
    pub(super) count: u64,
    pub(super) record_rejects: bool,
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

    /// The window's end while its count is at the limit: only a new window admits.
    #[inline]
    fn refuses_before(&self) -> Micros {
        if self.count >= self.limit {
            self.window_end
        } else {
            0
        }
    }

    #[inline(always)]
    fn refused(&mut self, _t: Micros) {
        self.count += u64::from(self.record_rejects);
    }

    #[inline(always)]
    fn refused_many(&mut self, n: u64) {
        self.count += n * u64::from(self.record_rejects);
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
    pub(super) window: Micros,
    /// At most this many in the window.
    pub(super) limit: usize,
    /// When each of the last `limit` logged requests leaves the window, in a ring that grows
    /// as requests are logged (a log that never fills holds what it logged, not `limit`
    /// slots): `last[next]` is the oldest once the ring is full, `last[0]` before.
    pub(super) last: Vec<Micros>,
    pub(super) next: usize,
    pub(super) record_rejects: bool,
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
    pub(super) fn oldest(&self) -> Micros {
        if self.last.len() == self.limit {
            self.last[self.next]
        } else {
            0
        }
    }

    /// Logs a request at `t`: over the oldest once the ring is full, else a slot more.
    #[inline]
    pub(super) fn enter(&mut self, t: Micros) {
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

    /// When the oldest of the last `L` logged requests leaves: a refused request logged
    /// (recorded rejects) is newer, so it can only push that later.
    #[inline(always)]
    fn refuses_before(&self) -> Micros {
        self.oldest()
    }

    #[inline(always)]
    fn refused(&mut self, t: Micros) {
        if self.record_rejects {
            self.enter(t);
        }
    }

    /// Nothing: it keeps the last `L` logged, which it hears one by one ([`Decide::keeps`]).
    #[inline(always)]
    fn refused_many(&mut self, _n: u64) {}

    #[inline(always)]
    fn keeps(&self) -> u64 {
        if self.record_rejects {
            self.limit as u64
        } else {
            0
        }
    }
}

/// Sliding-window counter (Cloudflare, 2017): this window's count plus last window's,
/// weighted by the share of last window still inside the trailing window. Admits while that
/// estimate is below the limit. Computed exactly: `prev·(W − e) + cur·W < L·W`.
#[derive(Debug, Clone)]
pub struct SlidingWindowCounter {
    pub(super) limit: u64,
    pub(super) window: Micros,
    pub(super) index: u64,
    pub(super) window_start: Micros,
    pub(super) window_end: Micros,
    pub(super) prev: u64,
    pub(super) cur: u64,
    /// `(L − cur)·W`, the room the estimate has left scaled by `W`, while neither rejects nor
    /// admissions made elsewhere are recorded (`cur` then never passes `L`): a decision then
    /// compares it with `prev·(W − e)` and takes `W` off it, so that the chain from one
    /// decision to the next is a compare and a subtraction, not a multiply by `cur`.
    pub(super) room: u64,
    pub(super) record_rejects: bool,
    /// Whether admissions made elsewhere were recorded ([`super::Shared::force`]), so that the
    /// counts may pass `L` and need 128-bit arithmetic, as with recorded rejects.
    pub(super) wide: bool,
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
            room: limit.saturating_mul(window),
            record_rejects,
            wide: false,
        }
    }

    /// The last window's count, this one's and how far into this one `now` is (the counts
    /// moved on if `now` is in a later window).
    pub fn counts_at(&self, now: Micros) -> (u64, u64, Micros) {
        let (previous, current, start) = if now >= self.window_end {
            let index = now / self.window;
            let previous = if index == self.index + 1 { self.cur } else { 0 };
            (previous, 0, index * self.window)
        } else {
            (self.prev, self.cur, self.window_start)
        };
        (previous, current, now - start)
    }

    /// Both windows' counts at `now` and the weighted estimate it would compare against `L`
    /// (the counts moved on if `now` is in a later window).
    pub fn state(&self, now: Micros) -> State {
        let (previous, current, elapsed) = self.counts_at(now);
        let left = self.window - elapsed;
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
            // (Saturating: with recorded rejects or admissions made elsewhere, the room is not read
            // and the limit and window need not keep the product within 64 bits.)
            self.room = self.limit.saturating_mul(self.window);
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
            // fits in 64 bits (128-bit arithmetic is slow in wasm), and `cur·W + prev·(W − e)
            // < L·W` is `prev·(W − e) < room`.
            let ok = self.prev * (self.window - elapsed) < self.room;
            self.room -= std::hint::select_unpredictable(ok, self.window, 0);
            ok
        };
        self.cur += u64::from(ok | self.record_rejects);
        ok
    }

    /// Within this window, the first moment the estimate falls below `L`: it refuses at
    /// `e` into the window while `prev·(W − e) ≥ (L − cur)·W`, which only falls as `e` grows
    /// and a recorded reject (`cur` + 1) only raises. At most this window's end: the next
    /// one's counts are not known yet.
    #[inline]
    fn refuses_before(&self) -> Micros {
        if self.cur >= self.limit {
            return self.window_end;
        }
        // Admitting now (or, without recorded rejects, a count that never passes `L`: its
        // refusals come few at a time, not worth a division each).
        if self.prev < self.limit - self.cur || !self.record_rejects {
            return 0;
        }
        let w = u128::from(self.window);
        // The least `W − e` that still refuses: at least 1, as `L − cur` ≥ 1.
        let need = (u128::from(self.limit - self.cur) * w).div_ceil(u128::from(self.prev));
        match u64::try_from(need) {
            Ok(need) if need <= self.window => self.window_start + (self.window - need) + 1,
            _ => 0,
        }
    }

    #[inline(always)]
    fn refused(&mut self, _t: Micros) {
        self.cur += u64::from(self.record_rejects);
    }

    #[inline(always)]
    fn refused_many(&mut self, n: u64) {
        self.cur += n * u64::from(self.record_rejects);
    }
}
