//! The auditor: checks a limiter's decisions against the literal rule "at most L in any
//! window W", using that limiter's own admitted history.
//!
//! The window convention is half-open: a decision at time `t` is audited against the
//! admissions in `(t - W, t]`. A request admitted at `t0` therefore counts for exactly `W`
//! microseconds, `[t0, t0 + W)`. With this convention a token bucket's worst window is exactly
//! `B + L - 1`, the sliding log is the literal rule, and the sliding log's served share under
//! Poisson arrivals is exactly an Erlang loss system with holding time `W`.
//!
//! Each decision costs O(1) amortised: admitted timestamps sit in a ring, and each is
//! expired once.

use crate::ring::TimeRing;
use crate::time::Micros;

/// The literal rule's view of one decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Audited {
    /// Admissions in `(t - W, t]` before this decision.
    pub in_window: u64,
    /// Whether the literal rule disagreed with the decision.
    pub wrong: bool,
}

/// Counts a limiter's admissions in the trailing window and tallies disagreements.
#[derive(Debug, Clone)]
pub struct Auditor {
    limit: u64,
    window: Micros,
    admitted: TimeRing,
    /// The largest number of admissions seen in any trailing window.
    pub busiest: u64,
    /// Where the busiest window ends (the time of the admission that completed it).
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
            admitted: TimeRing::with_capacity(limit as usize * 2 + 2),
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
        self.admitted.expire_before_window(t, self.window);
        let before = self.admitted.len() as u64;
        self.admitted.push(t);
        self.decisions += 1;
        self.admits += 1;
        let wrong = before >= self.limit;
        self.wrong_admits += u64::from(wrong);
        if before + 1 > self.busiest {
            self.busiest = before + 1;
            self.busiest_at = t;
        }
        Audited {
            in_window: before,
            wrong,
        }
    }

    /// Audits a rejection at `t`.
    #[inline]
    pub fn reject(&mut self, t: Micros) -> Audited {
        self.admitted.expire_before_window(t, self.window);
        let before = self.admitted.len() as u64;
        self.decisions += 1;
        let wrong = before < self.limit;
        self.wrong_rejects += u64::from(wrong);
        Audited {
            in_window: before,
            wrong,
        }
    }

    /// Audits one decision.
    #[inline]
    pub fn record(&mut self, t: Micros, admitted: bool) -> Audited {
        if admitted {
            self.admit(t)
        } else {
            self.reject(t)
        }
    }

    /// Admissions currently in the window ending at the last audited time.
    pub fn in_window(&self) -> u64 {
        self.admitted.len() as u64
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
    }

    #[test]
    fn the_window_is_half_open() {
        let mut a = Auditor::new(1, 10);
        a.admit(0);
        // At t = 10 the admission at 0 has left (t - W, t] = (0, 10].
        assert_eq!(a.admit(10), Audited { in_window: 0, wrong: false });
        // At t = 19 the admission at 10 is still inside (9, 19].
        assert_eq!(a.reject(19), Audited { in_window: 1, wrong: false });
        assert_eq!(a.admit(19), Audited { in_window: 1, wrong: true });
        assert_eq!(a.busiest, 2);
        assert_eq!(a.busiest_at, 19);
    }
}
