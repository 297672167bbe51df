//! The auditor: checks a limiter's decisions against the literal rule "at most L in any
//! window W", using that limiter's own admitted history.
//!
//! The window convention is half-open: a decision at time `t` is audited against the
//! admissions in `(t - W, t]`. A request admitted at `t0` therefore counts for exactly `W`
//! microseconds, `[t0, t0 + W)`. With this convention a token bucket's worst window is exactly
//! `B + L - 1`, the sliding log is the literal rule, and the sliding log's served share under
//! Poisson arrivals is exactly an Erlang loss system with holding time `W`.
//!
//! Each decision costs O(1) amortised. Two paths give the same answers (a property test holds
//! them equal):
//! - [`Auditor::record`], one decision at a time: admitted expiry times (`t + W`) are appended
//!   to a history and a pointer passes each once. Retries, queues and traces use it.
//! - [`Auditor::decide_lagged`], the simulator's hot loop. For open-loop traffic the audit's
//!   times are the arrival times, so "which arrivals have left the window of arrival `i`" is
//!   the same for every limiter: [`WindowEdge`] works it out once per chunk (the *lag* of each
//!   arrival, the index of the first arrival still inside its window). Each limiter then keeps
//!   only a prefix count of its admissions over arrival indices, and its count in the window
//!   of arrival `i` is a subtraction: admissions before `i` minus admissions before `lag[i]`.
//!   No pointer chase per limiter, no branch on the decision.

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
const SENTINEL: Micros = Micros::MAX >> 1;
/// Sentinels after the expiries: the branch-free scan looks up to three slots ahead.
const SENTINELS: usize = 4;

/// Counts a limiter's admissions in the trailing window and tallies disagreements.
#[derive(Debug, Clone)]
pub struct Auditor {
    limit: u64,
    window: Micros,
    /// When each admission leaves the window (its time plus `W`), oldest first;
    /// `expiries[live..]` are still inside.
    expiries: Vec<Micros>,
    live: usize,
    prefix: PrefixCounts,
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
}

impl Auditor {
    /// An auditor of the rule "at most `limit` in any `window`".
    pub fn new(limit: u64, window: Micros) -> Self {
        Auditor {
            limit,
            window,
            expiries: Vec::with_capacity(limit as usize * 2 + 2),
            live: 0,
            prefix: PrefixCounts::new(),
            busiest: 0,
            busiest_at: 0,
            decisions: 0,
            admits: 0,
            wrong_admits: 0,
            wrong_rejects: 0,
        }
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
        while self.live < self.expiries.len() && self.expiries[self.live] <= t {
            self.live += 1;
        }
        let before = (self.expiries.len() - self.live) as u64;
        if admitted {
            self.expiries.push(t + self.window);
        }
        let full = before >= self.limit;
        self.tally(before, admitted, full, t);
        self.decisions += 1;
        self.admits += u64::from(admitted);
        self.wrong_admits += u64::from(admitted & full);
        self.wrong_rejects += u64::from(!admitted & !full);
        self.compact();
        Audited {
            in_window: before,
            wrong: admitted == full,
        }
    }

    #[inline]
    fn tally(&mut self, before: u64, admitted: bool, _full: bool, t: Micros) {
        let after = before + u64::from(admitted);
        if after > self.busiest {
            self.busiest = after;
            self.busiest_at = t;
        }
    }

    /// Decides a chunk of arrivals with `decide` (called once per time, in order) and audits
    /// each decision, using the lags [`WindowEdge::advance`] computed for the chunk; returns how
    /// many were admitted. `first` is the index of the chunk's first arrival in the run. An
    /// auditor is used either this way or through [`Auditor::record`], never both.
    #[inline(never)]
    pub fn decide_lagged(
        &mut self,
        times: &[Micros],
        first: u64,
        lags: &[u64],
        mut decide: impl FnMut(Micros) -> bool,
    ) -> u64 {
        debug_assert_eq!(times.len(), lags.len());
        let n = times.len() as u64;
        if let Some(&oldest) = lags.first() {
            self.prefix.make_room(oldest, first + n);
        }
        let limit = self.limit;
        let prefix = self.prefix.counts.as_mut_slice();
        // Masking with `len − 1` (a power of two less one) lets the compiler see every index
        // is in bounds.
        let mask = prefix.len() - 1;
        // Admissions so far, kept modulo 2^32: only differences within a window are needed.
        let mut pos = self.prefix.pos;
        let (mut full, mut wrong_admits, mut admits) = (0u64, 0u64, 0u64);
        // The busiest window is kept as a plain maximum in the loop (a branch on it costs more
        // than the rest of the audit); where it was first reached is looked up after, from the
        // prefix counts, and only in a chunk that raised it.
        let mut busiest = self.busiest;
        for ((&t, &lag), g) in times.iter().zip(lags).zip(first..) {
            prefix[g as usize & mask] = pos;
            let before = u64::from(pos.wrapping_sub(prefix[lag as usize & mask]));
            let ok = decide(t);
            let is_full = before >= limit;
            full += u64::from(is_full);
            wrong_admits += u64::from(ok & is_full);
            admits += u64::from(ok);
            busiest = busiest.max(before + u64::from(ok));
            pos = pos.wrapping_add(u32::from(ok));
        }
        if busiest > self.busiest {
            let after = |i: usize| {
                let g = first + i as u64;
                let next = if i + 1 < times.len() {
                    prefix[(g + 1) as usize & mask]
                } else {
                    pos
                };
                u64::from(next.wrapping_sub(prefix[lags[i] as usize & mask]))
            };
            if let Some(i) = (0..times.len()).find(|&i| after(i) == busiest) {
                self.busiest_at = times[i];
            }
            self.busiest = busiest;
        }
        self.prefix.pos = pos;
        self.decisions += n;
        self.admits += admits;
        self.wrong_admits += wrong_admits;
        // Rejected while not full: every decision not full, less the admitted ones.
        self.wrong_rejects += (n - full) - (admits - wrong_admits);
        admits
    }

    /// Drops expired history once it is most of the buffer: amortised O(1) per admission.
    #[inline]
    fn compact(&mut self) {
        if self.live > 1024 && self.live * 2 > self.expiries.len() {
            self.expiries.drain(..self.live);
            self.live = 0;
        }
    }

    /// Admissions in the window ending at the last audited time.
    pub fn in_window(&self) -> u64 {
        (self.expiries.len() - self.live) as u64
    }
}

/// A limiter's admissions counted over arrival indices: `counts[g & mask]` is how many of
/// arrivals `0..g` it admitted (modulo 2^32), for the indices still needed.
#[derive(Debug, Clone)]
struct PrefixCounts {
    counts: Vec<u32>,
    mask: u64,
    /// Admissions so far (modulo 2^32).
    pos: u32,
}

impl PrefixCounts {
    fn new() -> Self {
        PrefixCounts {
            counts: vec![0; 4096],
            mask: 4095,
            pos: 0,
        }
    }

    /// Makes sure indices `oldest..end` fit without wrapping onto each other.
    fn make_room(&mut self, oldest: u64, end: u64) {
        if end - oldest > self.mask {
            let size = (end - oldest + 1).next_power_of_two();
            let mut counts = vec![0; size as usize];
            // The indices before this chunk were held by the old ring (it was large enough for
            // the last chunk, whose oldest lag was no later than this one's); the chunk's own
            // are written before they are read.
            for g in oldest..end {
                counts[(g & (size - 1)) as usize] = self.counts[(g & self.mask) as usize];
            }
            self.counts = counts;
            self.mask = size - 1;
        }
    }
}

/// The trailing edge of the window, shared by every limiter of a run: for each arrival, the
/// index of the first arrival still inside its window `(t − W, t]`.
#[derive(Debug, Clone)]
pub struct WindowEdge {
    window: Micros,
    /// When each recent arrival leaves the window (`t + W`), then sentinels.
    expiries: Vec<Micros>,
    /// The run index of `expiries[0]`.
    base: u64,
    /// The first arrival (local index) still inside the last window.
    live: usize,
    lags: Vec<u64>,
}

impl WindowEdge {
    /// The edge of windows of `window` µs.
    pub fn new(window: Micros) -> Self {
        WindowEdge {
            window,
            expiries: Vec::new(),
            base: 0,
            live: 0,
            lags: Vec::new(),
        }
    }

    /// Takes the next chunk of arrivals; returns the run index of its first arrival and the lag
    /// of each of its arrivals. Never inlined (see [`crate::traffic::Arrivals::fill`]).
    #[inline(never)]
    pub fn advance(&mut self, times: &[Micros]) -> (u64, &[u64]) {
        if self.live > 4096 && self.live * 2 > self.expiries.len() {
            self.expiries.drain(..self.live);
            self.base += self.live as u64;
            self.live = 0;
        }
        let first = self.base + self.expiries.len() as u64;
        self.expiries.extend(times.iter().map(|&t| t + self.window));
        self.expiries.extend([SENTINEL; SENTINELS]);
        let n = times.len();
        self.lags.resize(n, 0);
        // Four quarters scanned side by side: four independent pointer chains instead of one.
        // Each starts from a binary search for the oldest arrival inside its first window.
        let quarter = n / 4;
        let bounds = [0, quarter, 2 * quarter, 3 * quarter, n];
        let (expiries, local_first) = (&self.expiries, (first - self.base) as usize);
        let mut live = [0usize; 4];
        for (k, l) in live.iter_mut().enumerate() {
            *l = match times.get(bounds[k]) {
                Some(&t0) => {
                    self.live
                        + expiries[self.live..local_first + bounds[k]].partition_point(|&e| e <= t0)
                }
                None => self.live,
            };
        }
        let base = self.base;
        let (lags01, lags23) = self.lags.split_at_mut(bounds[2]);
        let (lags0, lags1) = lags01.split_at_mut(bounds[1]);
        let (lags2, lags3) = lags23.split_at_mut(quarter);
        let (times0, times1, times2, times3) = (
            &times[..quarter],
            &times[bounds[1]..bounds[2]],
            &times[bounds[2]..bounds[3]],
            &times[bounds[3]..],
        );
        let [l0, l1, l2, l3] = &mut live;
        for j in 0..quarter {
            lags0[j] = base + scan(expiries, l0, times0[j]) as u64;
            lags1[j] = base + scan(expiries, l1, times1[j]) as u64;
            lags2[j] = base + scan(expiries, l2, times2[j]) as u64;
            lags3[j] = base + scan(expiries, l3, times3[j]) as u64;
        }
        for (lag, &t) in lags3[quarter..].iter_mut().zip(&times3[quarter..]) {
            *lag = base + scan(expiries, l3, t) as u64;
        }
        self.live = live[3];
        self.expiries.truncate(self.expiries.len() - SENTINELS);
        (first, &self.lags)
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
        fn lagged_audit_equals_the_per_decision_audit(
            limit in 1u64..8,
            window in 1u64..200,
            chunks in prop::collection::vec(prop::collection::vec((prop_oneof![Just(0u64), 0u64..9, 0u64..400], any::<bool>()), 0..3000), 1..5),
        ) {
            let mut t = 0;
            let mut edge = WindowEdge::new(window);
            let mut one = Auditor::new(limit, window);
            let mut lagged = Auditor::new(limit, window);
            for chunk in &chunks {
                let times: Vec<Micros> = chunk.iter().map(|&(dt, _)| { t += dt; t }).collect();
                let oks: Vec<bool> = chunk.iter().map(|&(_, ok)| ok).collect();
                for (&t, &ok) in times.iter().zip(&oks) {
                    one.record(t, ok);
                }
                let (first, lags) = edge.advance(&times);
                let mut decisions = oks.iter();
                lagged.decide_lagged(&times, first, lags, |_| decisions.next().copied().unwrap_or(false));
                prop_assert_eq!(
                    (lagged.busiest, lagged.busiest_at, lagged.wrong_admits, lagged.wrong_rejects, lagged.decisions, lagged.admits),
                    (one.busiest, one.busiest_at, one.wrong_admits, one.wrong_rejects, one.decisions, one.admits)
                );
            }
        }
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
