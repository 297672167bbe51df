//! A `sync` fleet's views with the gateways' clocks skewed: every admission stamped by the
//! clock of the gateway that made it, and each gateway counting the stamps in its own window,
//! from where its last count found the window's edges.

use crate::time::Micros;
use std::collections::VecDeque;

/// How skewed `sync` views count the stamps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum StampRule {
    /// A sliding log: the stamps in the trailing window of the gateway's clock.
    Log,
    /// A fixed window: the stamps in the calendar window of the gateway's clock.
    Window,
    /// A sliding-window counter: the stamps in that window and the one before, weighted.
    Counter,
}

/// Skewed views' stamps: each gateway's admissions as its own clock stamped them, how each
/// gateway counts them, and where each gateway's last count found its windows' edges in each
/// gateway's stamps.
#[derive(Debug, Clone)]
pub(super) struct Skewed {
    stamped: Vec<Stamps>,
    /// Gateway `g`'s hints in gateway `h`'s stamps at `g·N + h` (see [`StampHints`]).
    hints: Vec<StampHints>,
    rule: StampRule,
}

impl Skewed {
    /// `n` gateways' views counting by `rule`, no stamps yet.
    pub(super) fn new(n: usize, rule: StampRule) -> Self {
        Skewed {
            stamped: vec![Stamps::default(); n],
            hints: vec![StampHints::default(); n * n],
            rule,
        }
    }

    /// Gateway `g`'s admission, stamped `stamp` by its clock.
    pub(super) fn push(&mut self, g: usize, stamp: Micros) {
        self.stamped[g].list.push_back(stamp);
    }

    /// Whether gateway `g`, its clock `offsets[g]` ahead of the backend's, admits at backend
    /// time `t`: at its own `T = t + o_g`, while fewer than `limit` stamps are in `(T − window,
    /// T]` (or later: a clock ahead stamps in the others' future), or in its calendar windows,
    /// among every admission of another gateway before the snapshot's instant `s` (by the
    /// backend's clock) and every admission of its own. O(N) per decision where each
    /// gateway's edges moved little since its last (O(N log) at the most); a stamp no clock
    /// can count again (at or before `t − window`: no clock is behind the backend's) is let go.
    pub(super) fn admit(
        &mut self,
        offsets: &[Micros],
        g: usize,
        t: Micros,
        s: Micros,
        limit: u64,
        window: Micros,
    ) -> bool {
        // Windows count the stamps in the calendar window of a gateway's clock, a counter
        // those of the one before too: every stamp before `start − window` is at or before
        // `t − 2·window`, and a fixed window's before `start` at or before `t − window`: let
        // go, as no clock can count them again.
        let keep = match self.rule {
            StampRule::Counter => window.saturating_mul(2),
            _ => window,
        };
        for (h, st) in self.stamped.iter_mut().enumerate() {
            let before = st.list.len();
            trim_and_cut(
                &mut st.list,
                &mut st.cut,
                keep,
                t,
                s.saturating_add(offsets[h]),
            );
            st.popped += (before - st.list.len()) as u64;
        }
        // Taken out and put back, so that the count can move them on while it reads the rest.
        let n = self.stamped.len();
        let mut hints = std::mem::take(&mut self.hints);
        let counts = self.checked_counts(offsets, g, t, s, window, &mut hints[g * n..(g + 1) * n]);
        self.hints = hints;
        self.weigh(counts, offsets, g, t, limit, window)
    }

    /// The earliest time from `t` at which gateway `g`'s view, as of the snapshot of instant
    /// `s` (the last decision's), would admit: its `Retry-After`. `None` past 2^53 µs.
    pub(super) fn retry_after(
        &self,
        offsets: &[Micros],
        g: usize,
        t: Micros,
        s: Micros,
        limit: u64,
        window: Micros,
    ) -> Option<Micros> {
        // Each time asked about from the hints as they stand (the search goes back and forth
        // in time; the hints only hold for later times).
        let n = self.stamped.len();
        let hints = &self.hints[g * n..(g + 1) * n];
        crate::limiter::retry_after::first_from(t, |at| {
            let counts = self.checked_counts(offsets, g, at, s, window, &mut hints.to_vec());
            self.weigh(counts, offsets, g, at, limit, window)
        })
    }

    /// [`Skewed::counts`], and in the unit tests' build the same counts found by binary
    /// searches beside them (`s`: the delivered snapshot's instant, which they search for).
    fn checked_counts(
        &self,
        offsets: &[Micros],
        g: usize,
        t: Micros,
        s: Micros,
        window: Micros,
        hints: &mut [StampHints],
    ) -> (usize, usize) {
        let counts = self.counts(offsets, g, t, window, hints);
        #[cfg(test)]
        assert_eq!(
            counts,
            self.counts_searched(offsets, g, t, s, window),
            "gateway {g} at {t}: the hinted counts against the searched ones"
        );
        #[cfg(not(test))]
        let _ = s;
        counts
    }

    /// What gateway `g`'s view, as of the delivered snapshot (whose instant the stamps were
    /// last cut at), counts at backend time `t`: the stamps in its window (a log's trailing
    /// one, or the calendar window of its clock), and in the calendar window before (a
    /// counter's; 0 for the others). Reads the stamps, changes nothing but
    /// `hints`, `g`'s row of [`Skewed::hints`], which it moves on to where it found the edges.
    /// Each edge is looked for from its hint on (the first stamps checked, then steps that
    /// double), so a count costs O(N) where the edges moved little since `g`'s last, not N
    /// binary searches of stamps that run to a window's admissions (7.7 s for 6 million
    /// decisions of 8 gateways at a limit of a million, 0.16 s without the skew, before).
    fn counts(
        &self,
        offsets: &[Micros],
        g: usize,
        t: Micros,
        window: Micros,
        hints: &mut [StampHints],
    ) -> (usize, usize) {
        let now = t.saturating_add(offsets[g]);
        let start = now - now % window;
        let (mut count, mut previous) = (0, 0);
        for (h, (st, hint)) in self.stamped.iter().zip(hints.iter_mut()).enumerate() {
            // The others' stamps before the snapshot's instant by their clocks: the first
            // `cut`, which the trim before this count (or the last decision's, for a
            // `Retry-After`: no stamp made since is before the instant) counted on to there.
            let known = if h == g { st.list.len() } else { st.cut };
            if self.rule == StampRule::Log {
                let gone = hint.find(0, st, |a| a.saturating_add(window) <= now);
                count += known.saturating_sub(gone);
            } else {
                let this_end = start.saturating_add(window);
                let below_end = hint.find(2, st, |a| a < this_end).min(known);
                let below_start = hint.find(1, st, |a| a < start).min(known);
                count += below_end - below_start;
                if self.rule == StampRule::Counter {
                    let last_start = start.saturating_sub(window);
                    let below_last = hint.find(0, st, |a| a < last_start).min(known);
                    previous += below_start - below_last;
                }
            }
        }
        (count, previous)
    }

    /// Room for one more at gateway `g` at backend time `t`, with `count` stamps in its
    /// window and `previous` in the one before ([`Skewed::counts`]): as the limiter itself
    /// weighs them.
    fn weigh(
        &self,
        (count, previous): (usize, usize),
        offsets: &[Micros],
        g: usize,
        t: Micros,
        limit: u64,
        window: Micros,
    ) -> bool {
        let into = t.saturating_add(offsets[g]) % window;
        match self.rule {
            // As the counter itself weighs them, in 128 bits (the counts may pass `L`).
            StampRule::Counter => {
                let w = u128::from(window);
                let left = u128::from(window - into);
                (previous as u128) * left + (count as u128) * w < u128::from(limit) * w
            }
            _ => (count as u64) < limit,
        }
    }

    /// [`Skewed::counts`] as they were found before, by a binary search of every gateway's
    /// stamps for each edge: what the tests hold the hinted counts to.
    #[cfg(test)]
    fn counts_searched(
        &self,
        offsets: &[Micros],
        g: usize,
        t: Micros,
        s: Micros,
        window: Micros,
    ) -> (usize, usize) {
        let now = t.saturating_add(offsets[g]);
        let start = now - now % window;
        let (mut count, mut previous) = (0, 0);
        for (h, st) in self.stamped.iter().enumerate() {
            let stamps = &st.list;
            let known = if h == g {
                stamps.len()
            } else {
                let before = s.saturating_add(offsets[h]);
                stamps.partition_point(|&a| a < before)
            };
            let below = |x: Micros| stamps.partition_point(|&a| a < x).min(known);
            if self.rule == StampRule::Log {
                let gone = stamps.partition_point(|&a| a.saturating_add(window) <= now);
                count += known.saturating_sub(gone);
            } else {
                count += below(start.saturating_add(window)) - below(start);
                if self.rule == StampRule::Counter {
                    previous += below(start) - below(start.saturating_sub(window));
                }
            }
        }
        (count, previous)
    }
}

/// One gateway's admissions in a skewed `sync` fleet, as its own clock stamped them (in order).
#[derive(Debug, Clone, Default)]
struct Stamps {
    list: VecDeque<Micros>,
    /// How many of `list` came before the delivered snapshot's instant (by this gateway's
    /// clock): the first `cut`.
    cut: usize,
    /// How many were let go from the front so far: a stamp's place counted from the first
    /// ever made is `popped` on from its place in `list`.
    popped: u64,
}

/// Where a gateway's count last found three edges in another gateway's stamps, as places
/// counted from the first stamp ever made ([`Stamps::popped`]), so that letting stamps go
/// leaves them true: a sliding log's start of the trailing window (edge 0), or the starts of
/// the calendar window before the gateway's (edge 0, a counter's), of its own (1), and of the
/// next (2). A gateway's edges move only on (its clock and the snapshot only go forward, and
/// each gateway's stamps come in order); a hint that is not (a `Retry-After`'s time in the
/// future) only costs the search from the start.
#[derive(Debug, Clone, Copy, Default)]
struct StampHints([u64; 3]);

impl StampHints {
    /// The first place in `st.list` whose stamp `below` fails (it holds for a first stretch of
    /// them and for none after), looked for from edge `edge`'s hint on, which it then holds.
    #[inline]
    fn find(&mut self, edge: usize, st: &Stamps, below: impl Fn(Micros) -> bool) -> usize {
        let list = &st.list;
        let n = list.len();
        let mut lo = (self.0[edge].saturating_sub(st.popped) as usize).min(n);
        // Every stamp before the hint must hold, as the one just before it does.
        if lo > 0 && !below(list[lo - 1]) {
            lo = 0;
        }
        // Steps that double from the hint until one fails, then halves between.
        let mut step = 1;
        let mut hi = n;
        while lo + step - 1 < n {
            let at = lo + step - 1;
            if !below(list[at]) {
                hi = at;
                break;
            }
            lo = at + 1;
            step *= 2;
        }
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if below(list[mid]) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        self.0[edge] = st.popped + lo as u64;
        lo
    }
}

/// Lets go of the first admissions of `list` (in time order) that have left the window by
/// `t`, one fewer of the `cut` counted before the snapshot for each (those left are still the
/// first), then counts on past those before `before` (the snapshot's instant never goes back).
#[inline]
pub(super) fn trim_and_cut(
    list: &mut VecDeque<Micros>,
    cut: &mut usize,
    window: Micros,
    t: Micros,
    before: Micros,
) {
    while list.front().is_some_and(|&a| a.saturating_add(window) <= t) {
        list.pop_front();
        *cut = cut.saturating_sub(1);
    }
    while *cut < list.len() && list[*cut] < before {
        *cut += 1;
    }
}
