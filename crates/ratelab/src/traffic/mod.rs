//! Arrival streams. Each generator yields non-decreasing integer timestamps (µs) one at a
//! time, so that a run of any length needs only the memory of a burst, never the whole run.
//!
//! The distributions, chosen to match the essays' descriptions:
//! - steady: a Poisson process at `load · L / W`;
//! - small bursts, page loads, big bursts: group starts form a Poisson process; a group's
//!   size is geometric on 1, 2, ... with mean 5, 20 or 50 (so sizes vary a lot, as real page
//!   loads do); its requests fall uniformly within 1 s, 1 s or 2 s of its start;
//! - on/off: active periods are Pareto with α = 1.5 and mean 30 s (heavy-tailed), quiet
//!   periods exponential with mean 120 s, so the client is busy 20% of the time; while
//!   active it sends a Poisson stream at five times its average rate;
//! - flood: quiet for one window, then one request per `every` from `start` into the next
//!   window, for `length` (three windows unless given);
//! - boundary burst: quiet, then `L` requests at one instant `before` the end of the first
//!   window and `L` at one instant `after` it;
//! - replay: the given times, rebased to the window boundary at or before the first one so
//!   that calendar windows line up as they did when the times were recorded.

use crate::rng::{geometric_rate, ExpTables, Rng};
use crate::time::Micros;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;

mod params;
mod retry;

pub use params::{Backoff, ClientGroup, FloodStart, Jitter, RetryPolicy, Shape};
#[cfg(feature = "storm")]
pub use retry::{Answer, Skipped, FRESH_CHUNK};
pub use retry::{RetryClient, RetryClients, Try};

/// A stream of arrival times.
#[derive(Debug, Clone)]
pub enum Arrivals {
    /// A Poisson process.
    Poisson(Poisson),
    /// Groups of requests.
    Groups(Groups),
    /// On/off periods.
    OnOff(OnOff),
    /// Evenly spaced times (the flood).
    Grid {
        /// The next time.
        next: Micros,
        /// The gap.
        every: Micros,
        /// The first time not sent.
        end: Micros,
    },
    /// Fixed times, in order.
    List {
        /// The times.
        times: Arc<[Micros]>,
        /// The next index.
        next: usize,
        /// Subtracted from every time.
        base: Micros,
    },
    /// Requests at two instants (the boundary burst), held as the instants and their counts:
    /// nothing per request.
    Bursts {
        /// The instants, in order.
        at: [Micros; 2],
        /// Requests at each instant.
        counts: [u64; 2],
        /// How many have been sent.
        sent: u64,
    },
}

impl Iterator for Arrivals {
    type Item = Micros;

    #[inline]
    fn next(&mut self) -> Option<Micros> {
        match self {
            Arrivals::Poisson(p) => p.next(),
            Arrivals::Groups(g) => g.next(),
            Arrivals::OnOff(o) => o.next(),
            Arrivals::Grid { next, every, end } => {
                let t = *next;
                if t >= *end {
                    return None;
                }
                *next = t + *every;
                Some(t)
            }
            Arrivals::List { times, next, base } => {
                let t = *times.get(*next)?;
                *next += 1;
                Some(t - *base)
            }
            Arrivals::Bursts { at, counts, sent } => {
                let t = if *sent < counts[0] {
                    at[0]
                } else if *sent - counts[0] < counts[1] {
                    at[1]
                } else {
                    return None;
                };
                *sent += 1;
                Some(t)
            }
        }
    }
}

impl Arrivals {
    /// Fills `buf` (cleared first) with up to `n` arrivals; returns false once exhausted.
    ///
    /// Never inlined, like the other per-chunk steps: a WebAssembly engine swaps in its
    /// optimised code for a function only between calls, so a hot loop must be a function
    /// called often, not inlined into the one call that runs the whole job.
    #[inline(never)]
    pub fn fill(&mut self, buf: &mut Vec<Micros>, n: usize) -> bool {
        buf.clear();
        self.extend_by(buf, n);
        buf.len() == n
    }

    /// Appends up to `n` arrivals to `buf`.
    #[inline]
    pub fn extend_by(&mut self, buf: &mut Vec<Micros>, n: usize) {
        // Matching once per chunk, not per arrival, lets each loop be specialised.
        match self {
            Arrivals::Poisson(p) => p.extend_by(buf, n),
            // The study's build takes bursts and on/off periods in runs; the page's other
            // modules one by one, which weighs less in a scroll through the page.
            #[cfg(feature = "storm")]
            Arrivals::Groups(g) => g.extend_by(buf, n),
            #[cfg(feature = "storm")]
            Arrivals::OnOff(o) => o.extend_by(buf, n),
            other => buf.extend(other.take(n)),
        }
    }

    /// A flood: one request per `every` from `first` until `end`.
    pub fn grid(first: Micros, every: Micros, end: Micros) -> Self {
        Arrivals::Grid {
            next: first,
            every,
            end,
        }
    }

    /// A replay of sorted absolute times, rebased to the window boundary at or before the
    /// first of them.
    pub fn replay(times: Arc<[Micros]>, window: Micros) -> Self {
        let base = times.first().map_or(0, |&t| t - t % window);
        Arrivals::List {
            times,
            next: 0,
            base,
        }
    }

    /// Where a flood of one request per `every` starts within its window, for a limit of
    /// `limit` per `window`.
    pub fn flood_offset(start: FloodStart, limit: u64, window: Micros, every: Micros) -> Micros {
        match start {
            FloodStart::Offset(s) => s,
            FloodStart::Worst => window.saturating_sub(limit.saturating_mul(every)),
        }
    }
}

/// 2^63 as a time in µs: a time below it converts to µs through `i64` ([`Poisson::extend_by`]).
const I64_TIMES: f64 = 9_223_372_036_854_775_808.0;

/// 2^52 as a time in µs (142 years): a time at or above zero and below it is a whole number
/// of µs and a fraction that `whole_pair` takes apart exactly.
#[cfg(not(target_arch = "wasm32"))]
const EXACT_TIMES: f64 = 4_503_599_627_370_496.0;

/// Two times in `[0, 2^52)` µs in whole µs, rounded down, as `t as u64` gives them, in one
/// SSE2 register: the compiler makes each line below one instruction on both times at once.
/// (`t as i64` is one instruction and four to saturate it, for each time; times from
/// `Poisson` need none of the four.)
///
/// `t + 2^52` is a number whose last bit is worth 1: its bits are 2^52's plus `t` rounded to
/// the nearest whole number, `r`. Taking `2^52` away again gives `r` exactly as a number;
/// where it is above `t`, `t` rounds down to `r − 1`. A comparison's mask is −1 where it
/// holds, so the bits plus the mask, less 2^52's bits, are `t` rounded down.
#[cfg(not(target_arch = "wasm32"))]
#[inline(always)]
fn whole_pair(a: f64, b: f64) -> [Micros; 2] {
    let whole = |t: f64| {
        let shifted = t + EXACT_TIMES;
        let above = shifted - EXACT_TIMES > t;
        shifted
            .to_bits()
            .wrapping_sub(EXACT_TIMES.to_bits())
            .wrapping_sub(u64::from(above))
    };
    [whole(a), whole(b)]
}

/// A Poisson process of the given mean gap, until `end`.
#[derive(Debug, Clone)]
pub struct Poisson {
    rng: Rng,
    mean_gap: f64,
    t: f64,
    end: f64,
}

impl Poisson {
    /// Arrivals at `rate_per_us` per µs from time `start` until `end`.
    pub fn new(rng: Rng, rate_per_us: f64, start: Micros, end: Micros) -> Self {
        Poisson {
            rng,
            mean_gap: 1.0 / rate_per_us,
            t: start as f64,
            end: end as f64,
        }
    }
}

impl Poisson {
    /// Appends up to `n` arrivals to `buf`: [`Poisson::next`]'s, in a loop of their own.
    #[inline]
    fn extend_by(&mut self, buf: &mut Vec<Micros>, n: usize) {
        // Times below 2^63 are converted through `i64`: one instruction on x86-64, where `u64`
        // takes two conversions and a select, and the same value. A run's times stay below
        // 2^53 µs; a test's extreme end need not, and takes the general loop.
        // Natively, times below 2^52 are converted two at a time, in one SSE2 register
        // (`whole_pair`); WebAssembly converts one in one instruction.
        #[cfg(not(target_arch = "wasm32"))]
        if self.end <= EXACT_TIMES {
            return self.extend_with(buf, n, |t| t as i64 as Micros, whole_pair);
        }
        if self.end <= I64_TIMES {
            let whole = |t: f64| t as i64 as Micros;
            self.extend_with(buf, n, whole, |a, b| [whole(a), whole(b)]);
        } else {
            let whole = |t: f64| t as Micros;
            self.extend_with(buf, n, whole, |a, b| [whole(a), whole(b)]);
        }
    }

    /// [`Poisson::extend_by`] with `whole` converting a time below `end` to µs, and `pair`
    /// two such times.
    #[inline(always)]
    fn extend_with(
        &mut self,
        buf: &mut Vec<Micros>,
        n: usize,
        whole: impl Fn(f64) -> Micros,
        pair: impl Fn(f64, f64) -> [Micros; 2],
    ) {
        // In locals, so that the loop keeps them in registers.
        let (gap, end) = (self.mean_gap, self.end);
        let mut t = self.t;
        let tables = ExpTables::get();
        let mut rng = self.rng.clone();
        // The study's build writes into slots made beforehand, and cuts the unused ones off
        // after: a `push` per arrival reloads and stores the vector's length each time (the
        // compiler cannot tell the write from the length), seven instructions where a slot
        // takes one. The page's other modules push, which weighs less.
        #[cfg(feature = "storm")]
        {
            let start = buf.len();
            buf.resize(start + n, 0);
            let mut made = 0;
            // Two slots a turn of the loop: its count and test, and the constants the turn
            // reloads, once for two arrivals (the arrivals alone 4.66 → 4.50 ns in
            // `vs_governor`, 0.570 → 0.556 of governor's decision). Times never decrease (a
            // gap is a product of two numbers at or above zero), so the second time below
            // `end` tells that both are, in one test, and the two are converted together
            // (4.44 → 3.86 ns an arrival). Written as `next` compares, so that a time that is
            // not a number ends it too. A turn that ends the arrivals may draw one gap more
            // than `next` would: it is past `end`, like the time it replaces.
            let mut pairs = buf[start..].chunks_exact_mut(2);
            'pairs: {
                for slots in &mut pairs {
                    let first = t + rng.exp1_from(tables) * gap;
                    t = first + rng.exp1_from(tables) * gap;
                    if t < end {
                        let [a, b] = pair(first, t);
                        slots[0] = a;
                        slots[1] = b;
                        made += 2;
                    } else {
                        if first < end {
                            slots[0] = whole(first);
                            made += 1;
                        }
                        break 'pairs;
                    }
                }
                for slot in pairs.into_remainder() {
                    t += rng.exp1_from(tables) * gap;
                    if t < end {
                        *slot = whole(t);
                        made += 1;
                    } else {
                        break;
                    }
                }
            }
            buf.truncate(start + made);
        }
        #[cfg(not(feature = "storm"))]
        {
            // One at a time here: `pair` is the study's loop's.
            let _ = pair;
            buf.reserve(n);
            for _ in 0..n {
                t += rng.exp1_from(tables) * gap;
                if t < end {
                    buf.push(whole(t));
                } else {
                    break;
                }
            }
        }
        self.rng = rng;
        self.t = t;
    }
}

impl Iterator for Poisson {
    type Item = Micros;

    #[inline]
    fn next(&mut self) -> Option<Micros> {
        self.t += self.rng.exp1() * self.mean_gap;
        (self.t < self.end).then_some(self.t as Micros)
    }
}

/// Groups of requests: Poisson group starts, geometric sizes, uniform spread.
#[derive(Debug, Clone)]
pub struct Groups {
    rng: Rng,
    mean_gap: f64,
    size_rate: f64,
    span: f64,
    next_start: f64,
    end: f64,
    /// The laid-out requests not yet sent, sorted; `pending[sent..]` are still to come.
    pending: Vec<Micros>,
    sent: usize,
    /// While groups overlap (one starts before the last has finished arriving, as they do at
    /// high rates), the requests not yet sent, in a heap: each taken in O(log n), where
    /// sorting the list at each group made a run quadratic in the rate.
    overlap: BinaryHeap<Reverse<Micros>>,
    /// A group's requests as they are laid out.
    group: Vec<u64>,
    /// Scratch for merging a group with the requests still to come.
    merged: Vec<Micros>,
    /// [`MERGE_MAX`], a field so that a test can take every overlap through the heap.
    #[cfg_attr(not(feature = "storm"), allow(dead_code))]
    merge_max: usize,
}

/// The most requests still to come that a new group is merged with (beyond, they go through
/// the heap): a merge costs their number again for each group, where the heap costs a
/// logarithm per request, and groups deep on one another would make merging quadratic.
const MERGE_MAX: usize = 64;

/// Appends the sorted `a` and `b`, merged in order, to `out`.
fn merge_into(a: &[Micros], b: &[Micros], out: &mut Vec<Micros>) {
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if b[j] < a[i] {
            out.push(b[j]);
            j += 1;
        } else {
            out.push(a[i]);
            i += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
}

impl Groups {
    /// Groups of `shape` averaging `rate_per_us` requests per µs, until `end`.
    pub fn new(rng: Rng, shape: Shape, rate_per_us: f64, end: Micros) -> Self {
        let mut g = Groups {
            rng,
            mean_gap: shape.mean_size() / rate_per_us,
            size_rate: geometric_rate(shape.mean_size()),
            span: shape.span() as f64,
            next_start: 0.0,
            end: end as f64,
            pending: Vec::new(),
            sent: 0,
            overlap: BinaryHeap::new(),
            group: Vec::new(),
            merged: Vec::new(),
            merge_max: MERGE_MAX,
        };
        g.next_start = g.rng.exp1() * g.mean_gap;
        g
    }

    #[cfg(feature = "storm")]
    /// Appends up to `n` arrivals to `buf`: what `n` calls of `next` give, a group's requests
    /// that come before the next group starts copied at once while no groups overlap.
    fn extend_by(&mut self, buf: &mut Vec<Micros>, n: usize) {
        let target = buf.len() + n;
        while buf.len() < target {
            if !self.overlap.is_empty() {
                match self.next() {
                    Some(t) => buf.push(t),
                    None => return,
                }
                continue;
            }
            // As `next`: a pending request goes out while it comes before the next group
            // starts, or no group starts again. The pending ones are sorted.
            let rest = &self.pending[self.sent..];
            let start = self.next_start;
            // Mostly the whole group comes before the next starts: one comparison, where the
            // search would take a few that the processor cannot guess.
            let k = if start >= self.end || rest.last().is_none_or(|&t| (t as f64) < start) {
                rest.len()
            } else {
                rest.partition_point(|&t| (t as f64) < start)
            };
            let k = k.min(target - buf.len());
            buf.extend_from_slice(&rest[..k]);
            self.sent += k;
            if buf.len() == target {
                return;
            }
            if self.sent == self.pending.len() && self.next_start >= self.end {
                return;
            }
            self.lay_out_group();
        }
    }

    /// Lays out the group starting at `next_start` and draws the start of the one after.
    fn lay_out_group(&mut self) {
        // k uniform points on the span, already sorted: the partial sums of k + 1 exponential
        // spacings, scaled by their total, are the order statistics of k uniforms.
        // The generator in a local and its tables fetched once, as in `Poisson::extend_with`.
        let tables = ExpTables::get();
        let mut rng = self.rng.clone();
        let k = rng.geometric(self.size_rate) as usize;
        self.group.clear();
        let mut sum = 0.0;
        // The partial sums' bits, for now; scaled into times below once the total is known.
        // (`extend` of a counted iterator makes room once and keeps the length in a register,
        // where `push` tests the room and stores the length at each.)
        self.group.extend((0..k).map(|_| {
            sum += rng.exp1_from(tables);
            sum.to_bits()
        }));
        let total = sum + rng.exp1_from(tables);
        self.rng = rng;
        let scale = if total > 0.0 { self.span / total } else { 0.0 };
        let (start, end) = (self.next_start, self.end);
        // Times below 2^63 µs are converted through `i64`, as in `Poisson::extend_by` (the
        // study's build: the page's other modules take the one loop, which weighs less).
        #[cfg(feature = "storm")]
        let kept = if end <= I64_TIMES {
            scale_group(&mut self.group, start, scale, end, |t| t as i64 as Micros)
        } else {
            scale_group(&mut self.group, start, scale, end, |t| t as Micros)
        };
        #[cfg(not(feature = "storm"))]
        let kept = scale_group(&mut self.group, start, scale, end, |t| t as Micros);
        self.group.truncate(kept);
        let waiting = self.pending.len() - self.sent;
        // (The study's build only: the page's other modules take the heap, which gives the
        // same order and weighs less in a scroll through the page.)
        #[cfg(feature = "storm")]
        let merge = waiting > 0 && waiting <= self.merge_max && self.overlap.is_empty();
        #[cfg(not(feature = "storm"))]
        let merge = false;
        if merge {
            // A group that starts before the last has finished arriving, with few of its
            // requests still to come: the two sorted lists merged, in one pass.
            self.merged.clear();
            merge_into(&self.pending[self.sent..], &self.group, &mut self.merged);
            std::mem::swap(&mut self.pending, &mut self.merged);
        } else if waiting > 0 || !self.overlap.is_empty() {
            // Many still to come (groups deep on one another, at high rates): every request
            // not yet sent goes in time order through the heap, each in O(log n).
            self.overlap
                .extend(self.pending[self.sent..].iter().map(|&t| Reverse(t)));
            self.overlap.extend(self.group.iter().map(|&t| Reverse(t)));
            self.pending.clear();
        } else {
            std::mem::swap(&mut self.pending, &mut self.group);
        }
        self.sent = 0;
        self.next_start += self.rng.exp1() * self.mean_gap;
    }
}

/// A group's partial sums (`f64` bits) in `group` scaled by `scale` into times from `start`,
/// converted by `whole`, up to the first at or past `end`: how many come before it.
#[inline(always)]
fn scale_group(
    group: &mut [u64],
    start: f64,
    scale: f64,
    end: f64,
    whole: impl Fn(f64) -> Micros,
) -> usize {
    // The sums grow, and so do their times (rounding keeps order): those before `end` are
    // the first ones. Requests past the end of the run are never sent.
    let mut kept = 0;
    for slot in group.iter_mut() {
        let t = start + f64::from_bits(*slot) * scale;
        if t < end {
            *slot = whole(t);
            kept += 1;
        } else {
            break;
        }
    }
    kept
}

impl Iterator for Groups {
    type Item = Micros;

    #[inline]
    fn next(&mut self) -> Option<Micros> {
        loop {
            let head = match self.overlap.peek() {
                Some(&Reverse(t)) => Some(t),
                None => self.pending.get(self.sent).copied(),
            };
            if let Some(t) = head {
                if (t as f64) < self.next_start || self.next_start >= self.end {
                    if self.overlap.pop().is_none() {
                        self.sent += 1;
                    }
                    return Some(t);
                }
            } else if self.next_start >= self.end {
                return None;
            }
            self.lay_out_group();
        }
    }
}

/// The tail of the on/off client's active periods.
const ON_ALPHA: f64 = 1.5;

/// On/off: Pareto active periods, exponential quiet periods, Poisson while active.
#[derive(Debug, Clone)]
pub struct OnOff {
    rng: Rng,
    periods: Periods,
    on_gap: f64,
    t: f64,
    on_end: f64,
    end: f64,
}

impl OnOff {
    /// An on/off client averaging `rate_per_us` requests per µs until `end`, active
    /// `busy` of the time in periods of mean `active` µs. Its periods come from a generator
    /// split off `rng` first ([`OnOff::periods`] lays out the same ones).
    pub fn new(mut rng: Rng, rate_per_us: f64, end: Micros, active: Micros, busy: f64) -> Self {
        let mut periods = OnOff::periods(&mut rng, active, busy);
        let (t, on_end) = periods.next().unwrap_or((f64::INFINITY, f64::INFINITY));
        OnOff {
            rng,
            periods,
            on_gap: busy / rate_per_us,
            t,
            on_end,
            end: end as f64,
        }
    }

    /// The active periods `[start, end)` (in µs) of the on/off client [`OnOff::new`] makes
    /// from `rng`, in order: what it draws its periods from, split off `rng` (the arrivals'
    /// generator, which it leaves where [`OnOff::new`] starts drawing gaps).
    pub fn periods(rng: &mut Rng, active: Micros, busy: f64) -> Periods {
        Periods {
            rng: rng.fork(),
            on_mean: active as f64,
            busy,
            on_end: 0.0,
        }
    }
}

/// On/off traffic's active periods, endless: each after an exponential quiet period (the
/// first too: the client starts at a quiet period's beginning, memoryless, so anywhere in
/// one), lasting a Pareto time of the mean active period.
#[derive(Debug, Clone)]
pub struct Periods {
    rng: Rng,
    on_mean: f64,
    busy: f64,
    on_end: f64,
}

impl Iterator for Periods {
    type Item = (f64, f64);

    fn next(&mut self) -> Option<(f64, f64)> {
        let off_mean = self.on_mean * (1.0 - self.busy) / self.busy;
        let start = self.on_end + self.rng.exp1() * off_mean;
        // Pareto with mean `on_mean`: scale x_m = mean (α − 1) / α, x = x_m · e^{E/α}.
        let x_m = self.on_mean * (ON_ALPHA - 1.0) / ON_ALPHA;
        self.on_end = start + x_m * libm::exp(self.rng.exp1() / ON_ALPHA);
        Some((start, self.on_end))
    }
}

#[cfg(feature = "storm")]
impl OnOff {
    /// Appends up to `n` arrivals to `buf`: what `n` calls of `next` give, in a loop that
    /// stays inside an active period.
    fn extend_by(&mut self, buf: &mut Vec<Micros>, n: usize) {
        // The generator in a local, as in `Poisson::extend_with`.
        let mut rng = self.rng.clone();
        // Times below 2^63 µs are converted through `i64`, as in `Poisson::extend_by`.
        if self.end <= I64_TIMES {
            self.extend_from(buf, n, &mut rng, |t| t as i64 as Micros);
        } else {
            self.extend_from(buf, n, &mut rng, |t| t as Micros);
        }
        self.rng = rng;
    }

    /// [`OnOff::extend_by`], drawing from `rng` and converting a time below the run's end to
    /// µs with `whole`.
    #[inline(always)]
    fn extend_from(
        &mut self,
        buf: &mut Vec<Micros>,
        n: usize,
        rng: &mut Rng,
        whole: impl Fn(f64) -> Micros,
    ) {
        // Slots made beforehand and the unused ones cut off after, as in
        // `Poisson::extend_with`.
        let mut filled = buf.len();
        let target = filled + n;
        buf.resize(target, 0);
        let (gap, end) = (self.on_gap, self.end);
        let tables = ExpTables::get();
        while filled < target {
            if self.t >= end {
                break;
            }
            let mut t = self.t;
            // Inside this active period and the run, as `next` would give them.
            let stop = self.on_end.min(end);
            for slot in &mut buf[filled..target] {
                t += rng.exp1_from(tables) * gap;
                if t < stop {
                    *slot = whole(t);
                    filled += 1;
                } else {
                    break;
                }
            }
            self.t = t;
            // Every slot filled (the last time drawn is before `stop`: nothing is past yet).
            if filled == target {
                break;
            }
            // Past the period (a new one starts) or past the run's end (`next` would give
            // nothing more either way).
            if t < self.on_end {
                // `t` ≥ `end` inside the period: `next` returns None from here on.
                break;
            }
            (self.t, self.on_end) = self
                .periods
                .next()
                .unwrap_or((f64::INFINITY, f64::INFINITY));
        }
        buf.truncate(filled);
    }
}

impl Iterator for OnOff {
    type Item = Micros;

    #[inline]
    fn next(&mut self) -> Option<Micros> {
        loop {
            if self.t >= self.end {
                return None;
            }
            self.t += self.rng.exp1() * self.on_gap;
            if self.t < self.on_end {
                return (self.t < self.end).then_some(self.t as Micros);
            }
            (self.t, self.on_end) = self
                .periods
                .next()
                .unwrap_or((f64::INFINITY, f64::INFINITY));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Stream;
    use crate::time::{MINUTE, SECOND};

    #[cfg(feature = "storm")]
    proptest::proptest! {
        /// Arrivals taken a chunk at a time (each shape's own `extend_by`) are those its
        /// iterator gives one by one, at any chunk size, load and run length: groups that
        /// overlap (high loads) and on/off periods that cross the run's end included.
        #[test]
        fn chunks_are_the_arrivals_one_by_one(
            seed in 0u64..10_000,
            shape in 0usize..5,
            load in 0.05f64..40.0,
            minutes in 1u64..60,
            active_s in 1u64..120,
            busy in 0.05f64..0.95,
            chunks in proptest::collection::vec(1usize..700, 1..40),
        ) {
            let end = minutes * MINUTE;
            let rate = load * 100.0 / MINUTE as f64;
            let make = || {
                let rng = Rng::new(seed, 0, Stream::Arrivals);
                match shape {
                    0 => Arrivals::Poisson(Poisson::new(rng, rate, 0, end)),
                    1 => Arrivals::Groups(Groups::new(rng, Shape::SmallBursts, rate, end)),
                    2 => Arrivals::Groups(Groups::new(rng, Shape::PageLoads, rate, end)),
                    3 => Arrivals::Groups(Groups::new(rng, Shape::BigBursts, rate, end)),
                    _ => Arrivals::OnOff(OnOff::new(rng, rate, end, active_s * SECOND, busy)),
                }
            };
            let one_by_one: Vec<Micros> = make().collect();
            let mut chunked = Vec::new();
            let mut arrivals = make();
            let mut buf = Vec::new();
            for &n in chunks.iter().cycle() {
                let full = arrivals.fill(&mut buf, n);
                chunked.extend_from_slice(&buf);
                if !full {
                    break;
                }
            }
            proptest::prop_assert_eq!(chunked.len(), one_by_one.len());
            proptest::prop_assert!(chunked == one_by_one);
        }

        /// Groups that overlap give the same requests in the same order whether a new group is
        /// merged with those still to come or they all go through the heap: at loads where
        /// groups lie one on another (up to 40 times the limit), every burst shape.
        #[test]
        fn merging_overlapping_groups_is_the_heap_order(
            seed in 0u64..10_000,
            shape in 0usize..3,
            load in 0.3f64..40.0,
            minutes in 1u64..30,
        ) {
            let shape = [Shape::SmallBursts, Shape::PageLoads, Shape::BigBursts][shape];
            let make = |merge_max| {
                let mut g = Groups::new(Rng::new(seed, 0, Stream::Arrivals), shape, rate(load), minutes * MINUTE);
                g.merge_max = merge_max;
                g
            };
            let merged: Vec<Micros> = make(MERGE_MAX).collect();
            let heaped: Vec<Micros> = make(0).collect();
            proptest::prop_assert_eq!(merged.len(), heaped.len());
            proptest::prop_assert!(merged == heaped);
        }
    }

    /// Two times converted at once are each `t as u64`: whole numbers, halves (where the
    /// rounding in `whole_pair` ties), the numbers just below and above each, the edges of
    /// the range, and times drawn across every power of two below 2^52.
    #[cfg(not(target_arch = "wasm32"))]
    #[test]
    fn times_converted_in_pairs_round_down_as_one_by_one() {
        let mut times = vec![
            0.0,
            f64::MIN_POSITIVE,
            1e-300,
            0.25,
            EXACT_TIMES.next_down(),
        ];
        for k in 0..52 {
            let p = (1u64 << k) as f64;
            for t in [p, p + 0.5, p - 0.5, p * 1.5, (p + 0.5) * 3.0] {
                if (0.0..EXACT_TIMES).contains(&t) {
                    times.extend([t, t.next_down(), t.next_up()]);
                }
            }
        }
        let mut rng = Rng::new(7, 0, Stream::Cases);
        for _ in 0..100_000 {
            let t = rng.unit() * (1u64 << rng.below(53)) as f64;
            times.push(t);
        }
        times.retain(|t| (0.0..EXACT_TIMES).contains(t));
        for pair in times.chunks(2) {
            let (a, b) = (pair[0], pair[pair.len() - 1]);
            assert_eq!(whole_pair(a, b), [a as u64, b as u64], "{a:?} and {b:?}");
            assert_eq!(whole_pair(b, a), [b as u64, a as u64], "{b:?} and {a:?}");
        }
    }

    fn rate(load: f64) -> f64 {
        load * 100.0 / MINUTE as f64
    }

    fn mean_and_se_per_minute(times: &[Micros], minutes: u64) -> (f64, f64) {
        let mut counts = vec![0f64; minutes as usize];
        for &t in times {
            counts[(t / MINUTE) as usize] += 1.0;
        }
        let n = counts.len() as f64;
        let mean = counts.iter().sum::<f64>() / n;
        let var = counts.iter().map(|c| (c - mean).powi(2)).sum::<f64>() / (n - 1.0);
        (mean, (var / n).sqrt())
    }

    fn assert_sorted(times: &[Micros]) {
        assert!(times.windows(2).all(|w| w[0] <= w[1]), "not sorted");
    }

    #[test]
    fn every_shape_averages_its_load() {
        let minutes = 20_000;
        let end = minutes * MINUTE;
        for load in [0.3, 0.8] {
            let shapes: Vec<(&str, Arrivals)> = vec![
                (
                    "steady",
                    Arrivals::Poisson(Poisson::new(
                        Rng::new(1, 0, Stream::Arrivals),
                        rate(load),
                        0,
                        end,
                    )),
                ),
                (
                    "small",
                    Arrivals::Groups(Groups::new(
                        Rng::new(2, 0, Stream::Arrivals),
                        Shape::SmallBursts,
                        rate(load),
                        end,
                    )),
                ),
                (
                    "page",
                    Arrivals::Groups(Groups::new(
                        Rng::new(3, 0, Stream::Arrivals),
                        Shape::PageLoads,
                        rate(load),
                        end,
                    )),
                ),
                (
                    "big",
                    Arrivals::Groups(Groups::new(
                        Rng::new(4, 0, Stream::Arrivals),
                        Shape::BigBursts,
                        rate(load),
                        end,
                    )),
                ),
            ];
            for (name, gen) in shapes {
                let times: Vec<Micros> = gen.collect();
                assert_sorted(&times);
                let (mean, se) = mean_and_se_per_minute(&times, minutes);
                // Per-minute counts are close to independent for these shapes; 4 SE.
                assert!(
                    (mean - 100.0 * load).abs() < 4.0 * se,
                    "{name} at {load}: {mean} ± {se}"
                );
            }
        }
    }

    #[test]
    fn on_off_arrivals_fall_in_the_periods_laid_out_alone() {
        // The memory estimate lays out a run's periods without its arrivals: the same ones.
        for run in 0..20 {
            let (active, busy) = (2 * SECOND, 0.3);
            let end = 10 * MINUTE;
            let periods: Vec<(f64, f64)> =
                OnOff::periods(&mut Rng::new(4, run, Stream::Arrivals), active, busy)
                    .take_while(|&(a, _)| a < end as f64)
                    .collect();
            let times: Vec<Micros> = OnOff::new(
                Rng::new(4, run, Stream::Arrivals),
                rate(3.0),
                end,
                active,
                busy,
            )
            .collect();
            assert!(times.len() > 100, "{} arrivals", times.len());
            let mut p = 0;
            for &t in &times {
                while periods[p].1 <= t as f64 {
                    p += 1;
                }
                assert!(
                    periods[p].0 <= t as f64,
                    "run {run}: {t} outside every period"
                );
            }
            // And most periods hold arrivals (at 3 × 100 a minute, 1 s long on average).
            assert!(periods.len() > 20);
        }
    }

    #[test]
    fn on_off_averages_its_load_over_independent_seeds() {
        // Heavy tails make minutes dependent, so use independent runs as the samples.
        let runs = 60;
        let minutes = 2_000;
        let means: Vec<f64> = (0..runs)
            .map(|run| {
                let times: Vec<Micros> = OnOff::new(
                    Rng::new(9, run, Stream::Arrivals),
                    rate(0.5),
                    minutes * MINUTE,
                    30 * SECOND,
                    0.2,
                )
                .collect();
                assert_sorted(&times);
                times.len() as f64 / minutes as f64
            })
            .collect();
        let n = runs as f64;
        let mean = means.iter().sum::<f64>() / n;
        let se = (means.iter().map(|m| (m - mean).powi(2)).sum::<f64>() / (n - 1.0) / n).sqrt();
        assert!((mean - 50.0).abs() < 4.0 * se, "{mean} ± {se}");
    }

    #[test]
    fn group_sizes_vary_like_a_geometric() {
        // With groups 200 s apart on average, requests closer than 2 s belong together.
        let end = 40_000 * MINUTE;
        let times: Vec<Micros> = Groups::new(
            Rng::new(5, 0, Stream::Arrivals),
            Shape::PageLoads,
            20.0 / 200e6,
            end,
        )
        .collect();
        assert!(times.len() > 200_000);
        let mut sizes = vec![1u64];
        for w in times.windows(2) {
            if w[1] - w[0] > 2 * SECOND {
                sizes.push(1);
            } else if let Some(last) = sizes.last_mut() {
                *last += 1;
            }
        }
        let n = sizes.len() as f64;
        let mean = sizes.iter().sum::<u64>() as f64 / n;
        let var = sizes
            .iter()
            .map(|&s| (s as f64 - mean).powi(2))
            .sum::<f64>()
            / (n - 1.0);
        // Geometric with mean 20 has variance 380 (the mean's SE is 0.18); the ~1.5% of groups
        // that merge with a neighbour push both up a little.
        assert!((mean - 20.0).abs() < 1.0, "mean {mean}");
        assert!(var > 300.0 && var < 480.0, "var {var}");
    }

    #[test]
    fn replay_keeps_calendar_alignment() {
        let times: Arc<[Micros]> = Arc::from(vec![125 * SECOND, 130 * SECOND]);
        let got: Vec<Micros> = Arrivals::replay(times, MINUTE).collect();
        assert_eq!(got, [5 * SECOND, 10 * SECOND]);
    }
}
