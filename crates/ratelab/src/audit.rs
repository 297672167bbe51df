//! The auditor: checks a limiter's decisions against the literal rule "at most L in any
//! window W", using that limiter's own admitted history.
//!
//! The window convention is half-open: a decision at time `t` is audited against the
//! admissions in `(t - W, t]`. A request admitted at `t0` therefore counts for exactly `W`
//! microseconds, `[t0, t0 + W)`. With this convention a token bucket's worst window is exactly
//! `B + L - 1`, the sliding log is the literal rule, and the sliding log's served share under
//! Poisson arrivals is exactly an Erlang loss system with holding time `W`.
//!
//! Each decision costs O(1) amortised: admitted timestamps are appended to a history, a
//! pointer marks the oldest one still inside the window, and each is passed once.
//!
//! [`Auditor::record_chunk`] audits a chunk of decisions already made. Because the audit never
//! feeds back into the limiter, the chunk's admissions can all be appended first and the chunk
//! split into four parts audited side by side: four independent pointer chains instead of one,
//! which is what keeps the audit at a few nanoseconds per decision. It gives exactly the
//! per-decision result (a property test checks that).

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
/// Sentinels after the history: the branch-free scan looks up to three slots ahead.
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
    scratch: Vec<bool>,
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
            scratch: Vec::new(),
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

    /// Audits a chunk of decisions already made at non-decreasing `times`, all later than any
    /// audited before.
    pub fn record_chunk(&mut self, times: &[Micros], admitted: &[bool]) {
        debug_assert_eq!(times.len(), admitted.len());
        let mut decisions = admitted.iter();
        self.decide_chunk(times, |_| decisions.next().copied().unwrap_or(false));
    }

    /// Decides a chunk with `decide` (called once per time, in order) and audits it; returns
    /// how many were admitted. This is the simulator's hot loop.
    pub fn decide_chunk(
        &mut self,
        times: &[Micros],
        mut decide: impl FnMut(Micros) -> bool,
    ) -> u64 {
        let n = times.len();
        if n < 64 {
            let before = self.admits;
            for &t in times {
                let ok = decide(t);
                self.record(t, ok);
            }
            return self.admits - before;
        }
        let quarter = n / 4;
        let bounds = [0, quarter, 2 * quarter, 3 * quarter, n];
        let mut parts = [Part::default(); 4];
        let mut flags = std::mem::take(&mut self.scratch);
        flags.resize(n, false);

        // Decide, and append the admissions' expiries as we go (branch-free: write every slot,
        // advance on admission). Sentinels after them spare the scans below any bounds tests.
        let first = self.expiries.len();
        self.expiries.resize(first + n + SENTINELS, SENTINEL);
        let mut end = first;
        let window = self.window;
        for (k, part) in parts.iter_mut().enumerate() {
            part.pos = end;
            let range = bounds[k]..bounds[k + 1];
            for (&t, flag) in times[range.clone()].iter().zip(&mut flags[range]) {
                let ok = decide(t);
                *flag = ok;
                self.expiries[end] = t + window;
                end += usize::from(ok);
            }
        }
        self.expiries.truncate(end);
        self.expiries.extend([SENTINEL; SENTINELS]);
        let admits = (end - first) as u64;
        for (k, part) in parts.iter_mut().enumerate() {
            // The oldest admission still inside the window of the part's first decision.
            let t0 = times[bounds[k]];
            part.live =
                self.live + self.expiries[self.live..part.pos].partition_point(|&e| e <= t0);
        }
        let admitted = flags.as_slice();

        let (limit, expiries) = (self.limit, self.expiries.as_slice());
        let slice = |k: usize| {
            (
                &times[bounds[k]..bounds[k] + quarter],
                &admitted[bounds[k]..bounds[k] + quarter],
            )
        };
        let [p0, p1, p2, p3] = &mut parts;
        let ((t0, a0), (t1, a1), (t2, a2), (t3, a3)) = (slice(0), slice(1), slice(2), slice(3));
        for j in 0..quarter {
            p0.step(expiries, limit, t0[j], a0[j]);
            p1.step(expiries, limit, t1[j], a1[j]);
            p2.step(expiries, limit, t2[j], a2[j]);
            p3.step(expiries, limit, t3[j], a3[j]);
        }
        for (&t, &ok) in times[bounds[3] + quarter..]
            .iter()
            .zip(&admitted[bounds[3] + quarter..])
        {
            p3.step(expiries, limit, t, ok);
        }

        self.expiries.truncate(end);
        self.live = parts[3].live;
        self.decisions += n as u64;
        self.admits += admits;
        for part in parts {
            self.wrong_admits += part.wrong_admits;
            self.wrong_rejects += part.wrong - part.wrong_admits;
            // The parts are in time order, so the first to reach a new maximum reached it first.
            if part.best > self.busiest {
                self.busiest = part.best;
                self.busiest_at = part.best_at;
            }
        }
        self.scratch = flags;
        self.compact();
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

/// One of the four parts of a chunk audited side by side.
#[derive(Debug, Clone, Copy, Default)]
struct Part {
    /// The oldest admission still inside the window.
    live: usize,
    /// Where the next admission of this part sits in the history.
    pos: usize,
    wrong: u64,
    wrong_admits: u64,
    best: u64,
    best_at: Micros,
}

impl Part {
    #[inline(always)]
    fn step(&mut self, expiries: &[Micros], limit: u64, t: Micros, ok: bool) {
        // The expired admissions are a prefix; test four at once, loop only after a lull.
        let ahead = &expiries[self.live..self.live + SENTINELS];
        let gone = usize::from(ahead[0] <= t)
            + usize::from(ahead[1] <= t)
            + usize::from(ahead[2] <= t)
            + usize::from(ahead[3] <= t);
        self.live += gone;
        if gone == SENTINELS {
            while expiries[self.live] <= t {
                self.live += 1;
            }
        }
        let before = (self.pos - self.live) as u64;
        let full = before >= limit;
        self.wrong += u64::from(ok == full);
        self.wrong_admits += u64::from(ok & full);
        let after = before + u64::from(ok);
        if after > self.best {
            self.best = after;
            self.best_at = t;
        }
        self.pos += usize::from(ok);
    }
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
        fn chunked_audit_equals_the_per_decision_audit(
            limit in 1u64..8,
            window in 1u64..200,
            chunks in prop::collection::vec(prop::collection::vec((0u64..9, any::<bool>()), 0..400), 1..5),
        ) {
            let mut t = 0;
            let mut one = Auditor::new(limit, window);
            let mut chunked = Auditor::new(limit, window);
            for chunk in &chunks {
                let times: Vec<Micros> = chunk.iter().map(|&(dt, _)| { t += dt; t }).collect();
                let oks: Vec<bool> = chunk.iter().map(|&(_, ok)| ok).collect();
                for (&t, &ok) in times.iter().zip(&oks) {
                    one.record(t, ok);
                }
                chunked.record_chunk(&times, &oks);
                prop_assert_eq!(
                    (chunked.busiest, chunked.busiest_at, chunked.wrong_admits, chunked.wrong_rejects, chunked.decisions, chunked.admits, chunked.in_window()),
                    (one.busiest, one.busiest_at, one.wrong_admits, one.wrong_rejects, one.decisions, one.admits, one.in_window())
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
