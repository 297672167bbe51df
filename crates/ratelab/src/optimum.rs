//! The clairvoyant optimum: the most arrivals any schedule can admit, knowing the whole future,
//! without any window `(t − W, t]` holding more than `L` of them.
//!
//! Admitting whenever the trailing window has room (the sliding log) attains it. The argument
//! is the classic exchange one for intervals of equal length: take an optimal schedule and the
//! first request where it and the greedy one differ. Greedy admits it (otherwise the window
//! was full in both); the optimum skipped it, and swapping in this request for the optimum's
//! next admission keeps every window within `L`, because any window holding that later one
//! and not this one ends later still. The tests check it by brute force on thousands of cases.

use crate::audit::Auditor;
use crate::limiter::{Decide, SlidingLog};
use crate::time::Micros;

/// Whether admitting exactly the requests in `chosen` keeps every window within `limit`.
pub fn feasible(times: &[Micros], chosen: &[bool], limit: u64, window: Micros) -> bool {
    let mut audit = Auditor::new(limit, window);
    for (&t, &c) in times.iter().zip(chosen) {
        if c && audit.admit(t).wrong {
            return false;
        }
    }
    true
}

/// [`feasible`] for a subset given as a bit mask of at most 20 requests, without allocating:
/// the brute force calls it up to 2^20 times per case.
fn feasible_mask(times: &[Micros], mask: u32, limit: u64, window: Micros) -> bool {
    let mut kept = [0 as Micros; 20];
    let mut n = 0;
    for (i, &t) in times.iter().enumerate() {
        if mask >> i & 1 == 0 {
            continue;
        }
        // Admissions still inside (t − W, t] before this one.
        let inside = kept[..n].iter().filter(|&&a| a + window > t).count() as u64;
        if inside >= limit {
            return false;
        }
        kept[n] = t;
        n += 1;
    }
    true
}

/// The largest feasible number of admissions, by trying every subset. For traces of at most
/// 20 requests; `None` for longer ones.
pub fn brute_force(times: &[Micros], limit: u64, window: Micros) -> Option<u64> {
    let n = times.len();
    if n > 20 {
        return None;
    }
    let mut best = 0u64;
    for mask in 0u32..(1u32 << n) {
        let count = u64::from(mask.count_ones());
        if count > best && feasible_mask(times, mask, limit, window) {
            best = count;
        }
    }
    Some(best)
}

/// Admissions of the greedy schedule: the sliding log.
pub fn greedy(times: &[Micros], limit: u64, window: Micros) -> u64 {
    let mut log = SlidingLog::new(limit, window, false);
    times.iter().filter(|&&t| log.decide(t).admitted()).count() as u64
}

/// A deliberately weakened greedy: the sliding log that also records what it rejects. It is
/// still feasible, but a burst of rejections keeps its window full and it loses admissions.
pub fn weakened_greedy(times: &[Micros], limit: u64, window: Micros) -> u64 {
    let mut log = SlidingLog::new(limit, window, true);
    times.iter().filter(|&&t| log.decide(t).admitted()).count() as u64
}

/// The outcome of comparing greedy with the optimum on random small cases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct OptimalityCheck {
    /// Cases tried.
    pub cases: u64,
    /// Cases where greedy admitted fewer than the optimum (should be 0).
    pub greedy_beaten: u64,
    /// Cases where the weakened greedy admitted fewer than the optimum.
    pub weakened_beaten: u64,
}

/// Compares greedy and its weakened version with the brute-force optimum on `cases` random
/// traces of up to 14 requests, drawn from `rng`.
pub fn check_optimality(rng: &mut crate::rng::Rng, cases: u64) -> OptimalityCheck {
    let mut out = OptimalityCheck::default();
    for _ in 0..cases {
        let n = 1 + rng.below(14) as usize;
        let limit = 1 + u64::from(rng.below(4));
        let window = 1 + u64::from(rng.below(20));
        let mut t = 0;
        let times: Vec<Micros> = (0..n)
            .map(|_| {
                t += u64::from(rng.below(8));
                t
            })
            .collect();
        let best = brute_force(&times, limit, window).unwrap_or(0);
        out.cases += 1;
        out.greedy_beaten += u64::from(greedy(&times, limit, window) < best);
        out.weakened_beaten += u64::from(weakened_greedy(&times, limit, window) < best);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Rng, Stream};

    #[test]
    fn greedy_attains_the_optimum_and_the_weakened_greedy_does_not() {
        let mut rng = Rng::new(2024, 0, Stream::Cases);
        let check = check_optimality(&mut rng, 3_000);
        assert_eq!(check.cases, 3_000);
        assert_eq!(check.greedy_beaten, 0, "{check:?}");
        // The check can fail: the weakened version is beaten, and often.
        assert!(check.weakened_beaten > 300, "{check:?}");
    }

    #[test]
    fn brute_force_finds_a_known_optimum() {
        // Limit 1 per 10: of 0, 5, 10, 15, 20 at most 0, 10, 20 fit.
        assert_eq!(brute_force(&[0, 5, 10, 15, 20], 1, 10), Some(3));
        assert_eq!(greedy(&[0, 5, 10, 15, 20], 1, 10), 3);
        // Recording the reject at 5 blocks 10 and 15, and 15 blocks 20.
        assert_eq!(weakened_greedy(&[0, 5, 10, 15, 20], 1, 10), 1);
        assert_eq!(brute_force(&[0; 21], 1, 10), None);
        // The mask check agrees with the auditor's.
        let times = [0, 3, 3, 9, 12, 20];
        for mask in 0u32..64 {
            let chosen: Vec<bool> = (0..6).map(|i| mask >> i & 1 == 1).collect();
            assert_eq!(
                feasible_mask(&times, mask, 2, 10),
                feasible(&times, &chosen, 2, 10),
                "mask {mask:b}"
            );
        }
    }
}
