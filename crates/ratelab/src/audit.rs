//! The auditor: checks a limiter's decisions against the literal rule "at most L in any
//! window W", using that limiter's own admitted history.
//!
//! The window convention is half-open: a decision at time `t` is audited against the
//! admissions in `(t - W, t]`. A request admitted at `t0` therefore counts for exactly `W`
//! microseconds, `[t0, t0 + W)`. With this convention a token bucket's worst window is exactly
//! `B + L - 1`, the sliding log is the literal rule, and the sliding log's served share under
//! Poisson arrivals is exactly an Erlang loss system with holding time `W`.
//!
//! Each decision costs O(1) amortised, and memory follows admissions, never arrivals: the
//! auditor keeps the expiry time (`t + W`, 8 bytes) of the latest `max(L, busiest)`
//! admissions, which include every admission still inside the window, in a buffer compacted
//! in place that stays within twice that plus a chunk. `busiest` is at most the limiter's worst
//! window ([`crate::theory::worst_case`]), so a limiter bounds its auditor whatever the
//! traffic: a flood at a 24 h window costs what a trickle does. Two entry points share the
//! buffer and give the same answers (property tests hold them equal to each other and to a
//! brute-force recount, bursts and floods included):
//! - [`Auditor::record`], one decision at a time, with a pointer to the oldest admission still
//!   inside: retries, queues, traces and probes use it.
//! - [`Auditor::decide_chunk`], the simulator's hot loop. It needs no such pointer: as in the
//!   sliding log, fewer than `L` admissions are inside `(t − W, t]` exactly when the `L`-th
//!   most recent one has left, so "full" is one load at a fixed distance behind the newest
//!   admission, and likewise "busier than any window so far" with `busiest` in place of `L`.
//!   No load depends on the one before, and no branch depends on the decision.

use crate::time::Micros;

/// The literal rule's view of one decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Audited {
    /// Admissions in `(t - W, t]` before this decision.
    pub in_window: u64,
    /// Whether the literal rule disagreed with the decision.
    pub wrong: bool,
}

/// Larger than any timestamp plus any window: ends the pointer scans without a bounds test.
/// Only ever compared, never added to. All ones, so that filling the buffer's tail with it is
/// a `memset` (in wasm one `memory.fill`; a loop of 8-byte stores took 4% of the page's study).
const SENTINEL: Micros = Micros::MAX;
/// Sentinels after the expiries: the branch-free scan looks up to three slots ahead.
const SENTINELS: usize = 4;
/// The smallest expiry buffer, in slots.
const MIN_SLOTS: usize = 256;
/// Admissions passed over at one test where none can have raised the busiest window
/// ([`Auditor::raised`]).
#[cfg(feature = "storm")]
const RAISE_BLOCK: usize = 16;
/// The most decisions [`Auditor::decide_chunk`] takes at once while no window has filled: its
/// answers are kept on the stack, one byte each (the simulator's chunks are this size).
#[cfg(feature = "storm")]
const UNFILLED_MAX: usize = 1024;

/// What decides each time of a chunk for [`Auditor::decide_chunk`]: any `FnMut(Micros) ->
/// bool`, or a state of the caller's own behind a `&mut` that implements it. The second is for
/// more than one limiter decided in one loop: a closure holds each as a reference of its own,
/// and the compiler, unable to tell that a write through one leaves the others alone, reloads
/// every state from memory at each decision; held by value behind one `&mut`, an argument of
/// the never-inlined loop, they stay in registers.
pub trait Decider {
    /// Decides on a request at `t`: whether it is admitted.
    fn decide(&mut self, t: Micros) -> bool;
}

impl<F: FnMut(Micros) -> bool> Decider for F {
    #[inline(always)]
    fn decide(&mut self, t: Micros) -> bool {
        self(t)
    }
}

/// Counts a limiter's admissions in the trailing window and tallies disagreements.
///
/// ```
/// use ratelab::audit::Auditor;
///
/// // "At most 2 in any 10 µs": three admissions at 0, 5 and 9 break it at 9.
/// let mut audit = Auditor::new(2, 10);
/// assert!(!audit.admit(0).wrong);
/// assert!(!audit.admit(5).wrong);
/// let third = audit.admit(9);
/// assert_eq!((third.in_window, third.wrong), (2, true));
/// // At 10, `(0, 10]` holds 5 and 9: full, so rejecting is right; at 15, `(5, 15]` holds
/// // only 9: there is room, so rejecting is wrong.
/// assert!(!audit.reject(10).wrong);
/// assert!(audit.reject(15).wrong);
/// assert_eq!((audit.busiest, audit.wrong_admits, audit.wrong_rejects), (3, 1, 1));
/// ```
#[derive(Debug, Clone)]
pub struct Auditor {
    limit: u64,
    window: Micros,
    /// When each of the latest admissions leaves the window (its time plus `W`), oldest
    /// first: `expiries[..end]`, at least the latest `max(L, busiest)` of them (or all). Every
    /// slot from `end` on holds [`SENTINEL`], and there are at least [`SENTINELS`] of them.
    expiries: Vec<Micros>,
    /// For [`Auditor::record`]: no later than the oldest admission still inside the window of
    /// the last time it audited (the hot loop does not move it; the next scan catches up).
    live: usize,
    end: usize,
    /// The largest number of admissions seen in any trailing window.
    pub busiest: u64,
    /// Where the first busiest window ends (the time of the admission that completed it).
    pub busiest_at: Micros,
    /// Decisions audited.
    pub decisions: u64,
    /// Admissions audited.
    pub admits: u64,
    /// Admitted while `L` admissions were already in the window.
    pub wrong_admits: u64,
    /// Rejected while the window had room.
    pub wrong_rejects: u64,
    /// Whether wrong decisions are counted: `false` for an auditor of the busiest window
    /// alone ([`Auditor::bound_only`]), whose two tallies above then mean nothing. (The
    /// study's build only: the page's other modules count them always, and weigh less.)
    #[cfg(feature = "storm")]
    counts_wrong: bool,
}

impl Auditor {
    /// An auditor of the rule "at most `limit` in any `window`". It allocates little until
    /// admissions fill its window.
    pub fn new(limit: u64, window: Micros) -> Self {
        Auditor {
            limit,
            window,
            expiries: vec![SENTINEL; MIN_SLOTS + SENTINELS],
            live: 0,
            end: 0,
            busiest: 0,
            busiest_at: 0,
            decisions: 0,
            admits: 0,
            wrong_admits: 0,
            wrong_rejects: 0,
            #[cfg(feature = "storm")]
            counts_wrong: true,
        }
    }

    /// An auditor of the busiest window alone, for a caller that reads no wrong decisions
    /// (the study's lanes other than the counter's): [`Auditor::decide_chunk`] then makes no
    /// test of its own per decision once a window has held `L`, only one per admission after
    /// each chunk, and [`Auditor::wrong`] is `None`. The busiest window, where it ends, and
    /// the decisions and admissions are the same as [`Auditor::new`]'s (a test holds them
    /// equal). The core's `storm` feature (the study's build) only.
    #[cfg(feature = "storm")]
    pub fn bound_only(limit: u64, window: Micros) -> Self {
        Auditor {
            counts_wrong: false,
            ..Auditor::new(limit, window)
        }
    }

    /// The wrong admissions and wrong rejections, if this auditor counts them (every auditor
    /// but a [`Auditor::bound_only`] one).
    pub fn wrong(&self) -> Option<(u64, u64)> {
        #[cfg(feature = "storm")]
        if !self.counts_wrong {
            return None;
        }
        Some((self.wrong_admits, self.wrong_rejects))
    }

    /// Audits an admission at `t`. Times passed to the auditor must not decrease.
    #[inline]
    pub fn admit(&mut self, t: Micros) -> Audited {
        self.record(t, true)
    }

    /// Audits a rejection at `t`.
    #[inline]
    pub fn reject(&mut self, t: Micros) -> Audited {
        self.record(t, false)
    }

    /// Audits one decision.
    #[inline]
    pub fn record(&mut self, t: Micros, admitted: bool) -> Audited {
        self.make_room(1);
        scan(&self.expiries, &mut self.live, t);
        let before = (self.end - self.live) as u64;
        if admitted {
            self.expiries[self.end] = t + self.window;
            self.end += 1;
        }
        let full = before >= self.limit;
        let after = before + u64::from(admitted);
        if after > self.busiest {
            self.busiest = after;
            self.busiest_at = t;
        }
        self.decisions += 1;
        self.admits += u64::from(admitted);
        self.wrong_admits += u64::from(admitted & full);
        self.wrong_rejects += u64::from(!admitted & !full);
        Audited {
            in_window: before,
            wrong: admitted == full,
        }
    }

    /// Audits one decision at `t`, `admitted` or not, as [`Auditor::decide_chunk`] does each
    /// of a chunk's: "full" and "busier than any window so far" each one load at a fixed
    /// distance behind the newest admission. The same tallies as [`Auditor::record`] (which
    /// also says how many were in the window), for a caller that decides one at a time and
    /// needs only the totals: a retrying client's tries. Can be mixed with the other two as
    /// long as times do not decrease.
    #[inline(always)]
    pub fn decided(&mut self, t: Micros, admitted: bool) {
        self.make_room(1);
        let end = self.end;
        let limit = usize::try_from(self.limit).unwrap_or(usize::MAX);
        let busiest = usize::try_from(self.busiest).unwrap_or(usize::MAX);
        let full = self
            .expiries
            .get(end.wrapping_sub(limit))
            .is_some_and(|&e| e > t);
        // The slot at `end` holds a sentinel, so the first admission counts; otherwise the
        // buffer keeps at least `busiest` admissions behind `end`.
        if admitted & (self.expiries[end - busiest] > t) {
            self.busiest += 1;
            self.busiest_at = t;
        }
        if admitted {
            self.expiries[end] = t + self.window;
            self.end = end + 1;
        }
        self.decisions += 1;
        self.admits += u64::from(admitted);
        self.wrong_admits += u64::from(admitted & full);
        self.wrong_rejects += u64::from(!admitted & !full);
    }

    /// When the `L`-th latest admission leaves the window: the window is full before then
    /// (until the next admission), and has room from then on; `None` while fewer than `L`
    /// have been admitted (room at once).
    #[inline(always)]
    fn full_until(&self) -> Option<Micros> {
        let limit = usize::try_from(self.limit).unwrap_or(usize::MAX);
        self.expiries.get(self.end.wrapping_sub(limit)).copied()
    }

    /// Audits a refusal at `t`: the same tallies as [`Auditor::decided`] with it refused,
    /// without making room for an admission.
    #[inline(always)]
    pub fn refused(&mut self, t: Micros) {
        let full = self.full_until().is_some_and(|e| e > t);
        self.decisions += 1;
        self.wrong_rejects += u64::from(!full);
    }

    /// Audits `n` refusals, no earlier than the last decision, told by their count and by
    /// `from(t)`, how many of them come at `t` or later: the same tallies as
    /// [`Auditor::refused`] for each.
    #[inline]
    pub fn refused_many(&mut self, n: u64, from: impl FnOnce(Micros) -> u64) {
        // Wrong where the window had room.
        let room = self.full_until().map_or(n, from);
        self.decisions += n;
        self.wrong_rejects += room;
    }

    /// Decides a chunk of arrivals with `decider` (asked once per time, in order: a closure, or
    /// see [`Decider`]), audits each decision at its arrival time and returns how many were
    /// admitted. Can be mixed with [`Auditor::record`] as long as times do not decrease. Never
    /// inlined (see [`crate::traffic::Arrivals::fill`]).
    #[inline(never)]
    pub fn decide_chunk(&mut self, times: &[Micros], mut decider: impl Decider) -> u64 {
        let mut decide = |t| decider.decide(t);
        // While no window has held `L` (the busiest below it), a decision needs no test of
        // its own: see `decide_unfilled`. Once one has, only an admission into a full window
        // can raise the busiest window: a wrong admission, which the loop counts anyway, so
        // the loop makes no test of its own for that either, and the test is made afterwards
        // over a chunk with wrong admissions (with exactly `L`, each is a raise). The study's
        // build only: the page's other modules keep one loop, which weighs less.
        #[cfg(feature = "storm")]
        {
            let mut admitted = 0;
            for part in times.chunks(UNFILLED_MAX) {
                admitted += if self.busiest >= self.limit {
                    if self.counts_wrong {
                        self.decide_filled(part, &mut decide)
                    } else {
                        self.decide_bound(part, &mut decide)
                    }
                } else {
                    self.decide_unfilled(part, &mut decide)
                };
            }
            admitted
        }
        #[cfg(not(feature = "storm"))]
        self.decide_each(times, &mut decide)
    }

    /// [`Auditor::decide_chunk`] while the busiest window so far holds fewer than `L`, for at
    /// most [`UNFILLED_MAX`] times. If the busiest window is still below `L` after the chunk,
    /// no decision of it met a full window: a refusal's window holds no more than the window
    /// of the latest admission before it, and an admission into a full window would make one
    /// of `L + 1`. So the loop only decides and lays out the admissions; the busiest window is
    /// found after it, over the admissions alone ([`Auditor::raised`]), and only a chunk in
    /// which some window reached `L` is audited again decision by decision, from the answers
    /// kept.
    #[cfg(feature = "storm")]
    #[inline(always)]
    fn decide_unfilled(&mut self, times: &[Micros], mut decide: impl FnMut(Micros) -> bool) -> u64 {
        let n = times.len();
        debug_assert!(n <= UNFILLED_MAX && self.busiest < self.limit);
        self.make_room(n);
        let window = self.window;
        let expiries = self.expiries.as_mut_slice();
        let mut answers = [false; UNFILLED_MAX];
        let mut end = self.end;
        let start = end;
        for (&t, answer) in times.iter().zip(&mut answers) {
            let ok = decide(t);
            *answer = ok;
            // A refusal's slot is written too, and overwritten by the next decision; the
            // sentinel is put back after the loop, which reads no slot.
            expiries[end] = t + window;
            end += usize::from(ok);
        }
        expiries[end] = SENTINEL;
        self.end = end;
        if self.raised(start) {
            self.raise_busiest(start, window);
        }
        let (full, wrong_admits) = if self.busiest >= self.limit && self.counts_wrong {
            self.recount(start, times, &answers[..n])
        } else {
            (0, 0)
        };
        self.tally(n as u64, (end - start) as u64, full, wrong_admits)
    }

    /// [`Auditor::decide_chunk`] once a window has held `L`, for an auditor that counts wrong
    /// decisions: then at least `L` admissions are kept behind `end` (see
    /// [`Auditor::compact`]), and "full" is one load `L` admissions behind the newest, with no
    /// test of its own. The wrong admissions are counted after the loop, over the admissions
    /// alone: the one in slot `k` met a full window exactly when the admission `L` before it,
    /// in slot `k − L`, had not left the window by its time, `expiries[k] − W`.
    #[cfg(feature = "storm")]
    #[inline(always)]
    fn decide_filled(&mut self, times: &[Micros], mut decide: impl FnMut(Micros) -> bool) -> u64 {
        let n = times.len();
        self.make_room(n);
        let window = self.window;
        let limit = usize::try_from(self.limit).unwrap_or(usize::MAX);
        let expiries = self.expiries.as_mut_slice();
        let mut end = self.end;
        let start = end;
        debug_assert!(start >= limit && self.busiest >= self.limit);
        let mut full = 0;
        for &t in times {
            // Decided before anything that could panic (the indexing below), so that the
            // compiler keeps the limiter's state in registers across the loop: it may only
            // do so where each turn has written it before any way out of the loop.
            let ok = decide(t);
            let is_full = t < expiries[end - limit];
            // A refusal's slot is written too, and overwritten by the next decision; the
            // sentinel is put back after the loop.
            expiries[end] = t + window;
            end += usize::from(ok);
            full += u64::from(is_full);
        }
        expiries[end] = SENTINEL;
        self.end = end;
        // In a loop of its own, two admissions at a time in one SSE2 register natively:
        // `before > t` as the sign of `t − before`, both below 2^63 (a run's times stay below
        // `MAX_TIME`, 2^53, and an expiry is a window later). SSE2 has no 64-bit comparison;
        // the sign takes it three instructions (the decisions and audit alone 2.61 → 2.08 ns a
        // decision against `u64::from(before > t)`).
        debug_assert!(end == start || expiries[end - 1] < 1 << 63);
        let wrong_admits: u64 = expiries[start..end]
            .iter()
            .zip(&expiries[start - limit..end - limit])
            .map(|(&e, &before)| (e - window).wrapping_sub(before) >> 63)
            .sum();
        // A wrong admission made a window of `L + 1`: busier than any before it if the
        // busiest held `L`, and otherwise busier only where `raised` finds it so.
        if wrong_admits > 0 && (self.busiest == self.limit || self.raised(start)) {
            self.raise_busiest(start, window);
        }
        self.tally(n as u64, (end - start) as u64, full, wrong_admits)
    }

    /// [`Auditor::decide_chunk`] for a [`Auditor::bound_only`] auditor once a window has held
    /// `L`: the loop only decides and lays out the admissions, as [`Auditor::decide_unfilled`]
    /// does, and the busiest window is found after it over the admissions alone
    /// ([`Auditor::raised`]).
    #[cfg(feature = "storm")]
    #[inline(always)]
    fn decide_bound(&mut self, times: &[Micros], mut decide: impl FnMut(Micros) -> bool) -> u64 {
        let n = times.len();
        self.make_room(n);
        let window = self.window;
        let expiries = self.expiries.as_mut_slice();
        let mut end = self.end;
        let start = end;
        for &t in times {
            let ok = decide(t);
            // A refusal's slot is written too, and overwritten by the next decision; the
            // sentinel is put back after the loop.
            expiries[end] = t + window;
            end += usize::from(ok);
        }
        expiries[end] = SENTINEL;
        self.end = end;
        if self.raised(start) {
            self.raise_busiest(start, window);
        }
        self.tally(n as u64, (end - start) as u64, 0, 0)
    }

    /// Whether an admission among `expiries[start..end]`, the chunk just decided, made a
    /// window busier than any before it: exactly when the `busiest`-th latest admission before
    /// it was still inside its window, the test [`Auditor::decided`] makes of each (the buffer
    /// keeps at least `busiest` admissions behind the chunk's first).
    #[cfg(feature = "storm")]
    #[inline(always)]
    fn raised(&self, start: usize) -> bool {
        let end = self.end;
        let Ok(busiest) = usize::try_from(self.busiest) else {
            return false;
        };
        if busiest == 0 {
            // The first admission of a run makes a window of one.
            return end > start;
        }
        let window = self.window;
        // (As two slices side by side: no bounds test per admission.) A block of admissions
        // is passed over at one test where even its first admission's window (the earliest)
        // starts after the last of the admissions `busiest` before them (the latest): both
        // only grow, so then none of the block's is inside. Mostly the windows are far from
        // their busiest, and only the blocks near it are tested admission by admission.
        self.expiries[start - busiest..end - busiest]
            .chunks(RAISE_BLOCK)
            .zip(self.expiries[start..end].chunks(RAISE_BLOCK))
            .any(|(before, e)| {
                let (Some(&latest), Some(&first)) = (before.last(), e.first()) else {
                    return false;
                };
                latest > first - window
                    && before
                        .iter()
                        .zip(e)
                        .any(|(&before, &e)| before > e - window)
            })
    }

    /// Of the chunk just decided, `times` with its `answers` and its admissions from `start`
    /// on: the decisions that met a full window, and the admissions among them, as
    /// [`Auditor::decide_filled`] counts them.
    #[cfg(feature = "storm")]
    #[cold]
    #[inline(never)]
    fn recount(&self, start: usize, times: &[Micros], answers: &[bool]) -> (u64, u64) {
        let limit = usize::try_from(self.limit).unwrap_or(usize::MAX);
        let (mut end, mut full, mut wrong_admits) = (start, 0, 0);
        for (&t, &ok) in times.iter().zip(answers) {
            let is_full = self
                .expiries
                .get(end.wrapping_sub(limit))
                .is_some_and(|&e| e > t);
            full += u64::from(is_full);
            wrong_admits += u64::from(ok & is_full);
            end += usize::from(ok);
        }
        (full, wrong_admits)
    }

    /// Adds a chunk's `n` decisions, `admits` admissions, decisions into a full window
    /// (`full`) and admissions among them (`wrong_admits`) to the tallies; returns `admits`.
    #[inline(always)]
    fn tally(&mut self, n: u64, admits: u64, full: u64, wrong_admits: u64) -> u64 {
        self.decisions += n;
        self.admits += admits;
        // (Not counted by an auditor of the busiest window alone: they would mean nothing.)
        #[cfg(feature = "storm")]
        if !self.counts_wrong {
            return admits;
        }
        self.wrong_admits += wrong_admits;
        // Rejected while not full: every decision not full, less the admitted ones.
        self.wrong_rejects += (n - full) - (admits - wrong_admits);
        admits
    }

    /// [`Auditor::decide_chunk`] in one loop for every state of the audit: the page's modules
    /// other than the study's, for which one loop weighs less.
    #[cfg(not(feature = "storm"))]
    #[inline(always)]
    fn decide_each(&mut self, times: &[Micros], mut decide: impl FnMut(Micros) -> bool) -> u64 {
        let n = times.len();
        self.make_room(n);
        let window = self.window;
        let limit = usize::try_from(self.limit).unwrap_or(usize::MAX);
        let busiest = usize::try_from(self.busiest).unwrap_or(usize::MAX);
        let expiries = self.expiries.as_mut_slice();
        let mut end = self.end;
        let start = end;
        let (mut full, mut wrong_admits, mut raised) = (0u64, 0u64, false);
        for &t in times {
            // Full exactly when the L-th most recent admission is still inside (t − W, t].
            let is_full = expiries
                .get(end.wrapping_sub(limit))
                .is_some_and(|&e| e > t);
            let ok = decide(t);
            // Likewise, an admission makes a window busier than any before the chunk exactly
            // when the `busiest`-th most recent admission is still inside. (The slot at `end`
            // holds a sentinel, so the first admission of a run counts.)
            raised |= ok & (expiries[end - busiest] > t);
            expiries[end] = if ok { t + window } else { SENTINEL };
            end += usize::from(ok);
            full += u64::from(is_full);
            wrong_admits += u64::from(ok & is_full);
        }
        self.end = end;
        if raised {
            self.raise_busiest(start, window);
        }
        self.tally(n as u64, (end - start) as u64, full, wrong_admits)
    }

    /// Finds the busiest window among the admissions `expiries[start..end]` of a chunk that
    /// raised it, and where it was first reached: after each admission, the window holds it and
    /// the earlier admissions that have not expired by its time. Rejections do not change a
    /// window's count, so the admissions alone tell.
    #[cold]
    #[inline(never)]
    fn raise_busiest(&mut self, start: usize, window: Micros) {
        let expiries = &self.expiries;
        let mut live = 0;
        for k in start..self.end {
            let t = expiries[k] - window;
            // Expiries are in order and `t` only grows: step past those expired by now (a few
            // at each admission; a binary search over the whole window costs more).
            while live < k && expiries[live] <= t {
                live += 1;
            }
            let after = (k + 1 - live) as u64;
            if after > self.busiest {
                self.busiest = after;
                self.busiest_at = t;
            }
        }
    }

    /// Makes sure `n` more admissions fit before the sentinels: once the end is reached, moves
    /// the latest `max(L, busiest)` expiries to the front, and grows the buffer to twice those
    /// and `n` when they fill two thirds of it. Amortised O(1) per admission; the buffer stays
    /// within `2 · (max(L, busiest) + n)` slots.
    #[inline]
    fn make_room(&mut self, n: usize) {
        if self.end + n + SENTINELS > self.expiries.len() {
            self.compact(n);
        }
    }

    #[cold]
    #[inline(never)]
    fn compact(&mut self, n: usize) {
        // The hot loop looks back `L` and `busiest` admissions, and every admission still in
        // the window is among the last `busiest`; older ones can go.
        let keep = self.keep().min(self.end);
        let from = self.end - keep;
        self.expiries.copy_within(from..self.end, 0);
        self.expiries[keep..self.end].fill(SENTINEL);
        self.live = self.live.saturating_sub(from);
        self.end = keep;
        // Grown by at least a third each time, so compactions stay O(1) per admission.
        let slots = self.expiries.len() - SENTINELS;
        if 3 * (keep + n) > 2 * slots {
            let len = (2 * (keep + n)).max(MIN_SLOTS) + SENTINELS;
            // Exactly: `resize` alone would round the capacity up to twice the old one.
            self.expiries.reserve_exact(len - self.expiries.len());
            self.expiries.resize(len, SENTINEL);
        }
    }

    /// How many of the latest admissions the auditor keeps: `max(L, busiest)`.
    fn keep(&self) -> usize {
        usize::try_from(self.limit.max(self.busiest)).unwrap_or(usize::MAX)
    }

    /// Admissions in the window `(t − W, t]`, for a `t` no earlier than the last audited time.
    pub fn in_window_at(&mut self, t: Micros) -> u64 {
        scan(&self.expiries, &mut self.live, t);
        (self.end - self.live) as u64
    }

    /// The bytes the auditor holds on the heap (its expiry buffer).
    pub fn heap_bytes(&self) -> usize {
        self.expiries.capacity() * size_of::<Micros>()
    }
}

/// Moves `live` past every expiry `<= t` and returns it. The expired ones are a prefix: four
/// are tested at once without branching, and the loop runs only after a lull.
#[inline(always)]
fn scan(expiries: &[Micros], live: &mut usize, t: Micros) -> usize {
    let ahead = &expiries[*live..*live + SENTINELS];
    let gone = usize::from(ahead[0] <= t)
        + usize::from(ahead[1] <= t)
        + usize::from(ahead[2] <= t)
        + usize::from(ahead[3] <= t);
    *live += gone;
    if gone == SENTINELS {
        while expiries[*live] <= t {
            *live += 1;
        }
    }
    *live
}

/// Recounts a trace the slow way: for every decision, scan all earlier admissions. The
/// reference the auditor is tested against.
pub fn brute_force(limit: u64, window: Micros, trace: &[(Micros, bool)]) -> (u64, u64, u64) {
    let mut admitted: Vec<Micros> = Vec::new();
    let (mut busiest, mut wrong_admits, mut wrong_rejects) = (0, 0, 0);
    for &(t, admit) in trace {
        let count = admitted.iter().filter(|&&a| a + window > t).count() as u64;
        if admit {
            wrong_admits += u64::from(count >= limit);
            busiest = busiest.max(count + 1);
            admitted.push(t);
        } else {
            wrong_rejects += u64::from(count < limit);
        }
    }
    (busiest, wrong_admits, wrong_rejects)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        #[test]
        fn audit_equals_a_brute_force_recount(
            limit in 1u64..6,
            window in 1u64..50,
            steps in prop::collection::vec((0u64..12, any::<bool>()), 0..120),
        ) {
            let mut t = 0;
            let trace: Vec<(Micros, bool)> = steps.iter().map(|&(dt, a)| { t += dt; (t, a) }).collect();
            let mut auditor = Auditor::new(limit, window);
            for &(t, a) in &trace {
                auditor.record(t, a);
            }
            let (busiest, wa, wr) = brute_force(limit, window, &trace);
            prop_assert_eq!(auditor.busiest, busiest);
            prop_assert_eq!(auditor.wrong_admits, wa);
            prop_assert_eq!(auditor.wrong_rejects, wr);
            prop_assert_eq!(auditor.decisions, trace.len() as u64);
        }

        #[test]
        fn chunk_audit_equals_the_per_decision_audit(
            limit in 1u64..8,
            window in 1u64..200,
            chunks in prop::collection::vec(prop::collection::vec((prop_oneof![Just(0u64), 0u64..9, 0u64..400], any::<bool>()), 0..3000), 1..5),
        ) {
            let mut t = 0;
            let mut one = Auditor::new(limit, window);
            let mut chunked = Auditor::new(limit, window);
            // The busiest window alone: the same but for the wrong decisions, not counted.
            #[cfg(feature = "storm")]
            let mut bound = Auditor::bound_only(limit, window);
            for chunk in &chunks {
                let times: Vec<Micros> = chunk.iter().map(|&(dt, _)| { t += dt; t }).collect();
                let oks: Vec<bool> = chunk.iter().map(|&(_, ok)| ok).collect();
                for (&t, &ok) in times.iter().zip(&oks) {
                    one.record(t, ok);
                }
                let mut decisions = oks.iter();
                chunked.decide_chunk(&times, |_| decisions.next().copied().unwrap_or(false));
                prop_assert_eq!(
                    (chunked.busiest, chunked.busiest_at, chunked.wrong_admits, chunked.wrong_rejects, chunked.decisions, chunked.admits, chunked.in_window_at(t)),
                    (one.busiest, one.busiest_at, one.wrong_admits, one.wrong_rejects, one.decisions, one.admits, one.in_window_at(t))
                );
                #[cfg(feature = "storm")]
                {
                    let mut decisions = oks.iter();
                    let admitted = bound.decide_chunk(&times, |_| decisions.next().copied().unwrap_or(false));
                    prop_assert_eq!(admitted, oks.iter().filter(|&&ok| ok).count() as u64);
                    prop_assert_eq!(
                        (bound.busiest, bound.busiest_at, bound.decisions, bound.admits, bound.in_window_at(t), bound.wrong()),
                        (one.busiest, one.busiest_at, one.decisions, one.admits, one.in_window_at(t), None)
                    );
                }
            }
            prop_assert_eq!(one.wrong(), Some((one.wrong_admits, one.wrong_rejects)));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// Bursts (many at one µs), floods (one per µs) and lulls at small windows, with runs of
        /// admissions well over the limit so the buffer compacts and grows: both entry points,
        /// mixed in one auditor too, against the brute-force recount.
        #[test]
        fn bursts_and_floods_audit_as_a_recount(
            limit in prop_oneof![1u64..4, 1u64..400],
            window in prop_oneof![1u64..4, 1u64..300],
            segments in prop::collection::vec((0u8..4, 1usize..700, 0u64..500, 0u8..3), 1..8),
            cut in prop::collection::vec(1usize..1100, 1..4),
        ) {
            let mut trace: Vec<(Micros, bool)> = Vec::new();
            let mut t = 0;
            let mut coin = 0u64;
            for &(kind, len, gap, admit) in &segments {
                t += gap;
                for _ in 0..len {
                    // A burst stays at one time, a flood moves 1 µs, a lull 0 to 40 µs.
                    coin = coin.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                    t += match kind {
                        0 => 0,
                        1 => 1,
                        _ => (coin >> 58) % 41,
                    };
                    // All admitted, half at random, or none.
                    let ok = match admit {
                        0 => true,
                        1 => coin >> 63 == 1,
                        _ => false,
                    };
                    trace.push((t, ok));
                }
            }
            let want = brute_force(limit, window, &trace);
            let mut one = Auditor::new(limit, window);
            for &(t, ok) in &trace {
                one.record(t, ok);
            }
            prop_assert_eq!((one.busiest, one.wrong_admits, one.wrong_rejects), want);
            // In chunks of the sizes given, in turn; and the same with every other chunk
            // audited one decision at a time; and both by an auditor of the busiest window
            // alone, whose wrong decisions are not counted (the study's build).
            let cases = [(false, true), (true, true), (false, false), (true, false)];
            for (mixed, counts_wrong) in cases.into_iter().filter(|c| c.1 || cfg!(feature = "storm")) {
                #[cfg(feature = "storm")]
                let mut chunked = if counts_wrong {
                    Auditor::new(limit, window)
                } else {
                    Auditor::bound_only(limit, window)
                };
                #[cfg(not(feature = "storm"))]
                let mut chunked = Auditor::new(limit, window);
                let (mut at, mut k) = (0, 0);
                while at < trace.len() {
                    let part = &trace[at..(at + cut[k % cut.len()]).min(trace.len())];
                    if mixed && k % 2 == 1 {
                        for &(t, ok) in part {
                            chunked.record(t, ok);
                        }
                    } else {
                        let times: Vec<Micros> = part.iter().map(|p| p.0).collect();
                        let mut oks = part.iter().map(|p| p.1);
                        chunked.decide_chunk(&times, |_| oks.next().unwrap_or(false));
                    }
                    at += part.len();
                    k += 1;
                }
                let wrong = counts_wrong.then_some((one.wrong_admits, one.wrong_rejects));
                prop_assert_eq!(
                    (chunked.busiest, chunked.busiest_at, chunked.wrong(), chunked.decisions, chunked.admits),
                    (one.busiest, one.busiest_at, wrong, one.decisions, one.admits),
                    "mixed: {}, counts wrong: {}", mixed, counts_wrong
                );
            }
        }
    }

    #[test]
    fn the_buffer_holds_the_window_not_the_run() {
        // A flood of a million arrivals, one per µs, at a window of 1,000 µs, all admitted: the
        // buffer holds about one window's admissions, however long the run.
        let mut a = Auditor::new(10, 1_000);
        let times: Vec<Micros> = (0..1_000_000).collect();
        for chunk in times.chunks(1024) {
            a.decide_chunk(chunk, |_| true);
        }
        assert_eq!(a.in_window_at(999_999), 1_000);
        assert!(
            a.heap_bytes() <= 16 * (1_000 + 1024) + 64 * 1024,
            "{}",
            a.heap_bytes()
        );
        let mut b = Auditor::new(10, 1_000);
        for &t in &times {
            b.admit(t);
        }
        assert!(
            b.heap_bytes() <= 16 * (1_000 + 1) + 64,
            "{}",
            b.heap_bytes()
        );
    }

    #[test]
    fn the_window_is_half_open() {
        let mut a = Auditor::new(1, 10);
        a.admit(0);
        // At t = 10 the admission at 0 has left (t - W, t] = (0, 10].
        assert_eq!(
            a.admit(10),
            Audited {
                in_window: 0,
                wrong: false
            }
        );
        // At t = 19 the admission at 10 is still inside (9, 19].
        assert_eq!(
            a.reject(19),
            Audited {
                in_window: 1,
                wrong: false
            }
        );
        assert_eq!(
            a.admit(19),
            Audited {
                in_window: 1,
                wrong: true
            }
        );
        assert_eq!(a.busiest, 2);
        assert_eq!(a.busiest_at, 19);
    }
}
