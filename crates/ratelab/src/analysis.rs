//! What a user's own traffic did, before any limiter and through one: its busiest trailing
//! windows, and the smallest token-bucket burst that would have served a given share of it.
//!
//! Times are absolute and sorted (as [`crate::import`] gives them); windows are half-open,
//! `(t − W, t]`, as everywhere in ratelab.

use crate::error::Error;
use crate::limiter::{Decide, Rate, TokenBucket};
use crate::time::Micros;
use serde::{Deserialize, Serialize};

/// One busy trailing window of the raw traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BusyWindow {
    /// The window is `(end − W, end]`.
    pub end: Micros,
    /// Requests in it.
    pub count: u64,
}

/// The `k` busiest trailing windows of `times` that do not overlap one another, busiest first
/// (ties: earliest first). Each ends at a request, where a trailing count peaks.
pub fn busiest_windows(times: &[Micros], window: Micros, k: usize) -> Vec<BusyWindow> {
    debug_assert!(
        times.windows(2).all(|w| w[0] <= w[1]),
        "times must be sorted"
    );
    let mut lo = 0;
    let mut candidates: Vec<BusyWindow> = Vec::with_capacity(times.len());
    for (i, &t) in times.iter().enumerate() {
        while times[lo] + window <= t {
            lo += 1;
        }
        // Only the last of equal times holds the whole count.
        if times.get(i + 1) != Some(&t) {
            candidates.push(BusyWindow {
                end: t,
                count: (i - lo + 1) as u64,
            });
        }
    }
    candidates.sort_unstable_by(|a, b| b.count.cmp(&a.count).then(a.end.cmp(&b.end)));
    let mut chosen: Vec<BusyWindow> = Vec::with_capacity(k);
    for c in candidates {
        if chosen.len() == k {
            break;
        }
        // (c.end − W, c.end] and (o.end − W, o.end] overlap unless their ends are W apart.
        if chosen.iter().all(|o| c.end.abs_diff(o.end) >= window) {
            chosen.push(c);
        }
    }
    chosen
}

/// How many of `times` a token bucket of `burst` refilling at `limit` per `window` admits.
/// Fails if the span of the times is too long for exact arithmetic at this rate.
pub fn token_bucket_admits(
    times: &[Micros],
    burst: u64,
    limit: u64,
    window: Micros,
) -> Result<u64, Error> {
    let (Some(&first), Some(&last)) = (times.first(), times.last()) else {
        return Ok(0);
    };
    // The bucket's arithmetic is exact in 64 bits for spans up to 2^64 / rate / 2.
    let span = last - first;
    let fits = span
        .checked_mul(limit)
        .and_then(|x| x.checked_add(burst.checked_mul(window)?))
        .is_some_and(|x| x < u64::MAX / 2);
    if !fits {
        return Err(Error::TooLarge {
            what: "the traffic's span at this rate".into(),
            detail: format!(
                "{} s at {limit} per {} µs; use a shorter file or a smaller limit",
                span / 1_000_000,
                window
            ),
        });
    }
    let mut bucket = TokenBucket::new(
        burst,
        Rate {
            count: limit,
            per: window,
        },
    );
    Ok(times.iter().filter(|&&t| bucket.admit(t - first)).count() as u64)
}

/// The smallest burst found by [`smallest_burst`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BurstFit {
    /// The capacity `B`.
    pub burst: u64,
    /// Requests it admits.
    pub admitted: u64,
    /// Requests offered.
    pub offered: u64,
    /// The share asked for.
    pub share: f64,
    /// Its worst window over any traffic: `B + L − 1`.
    pub worst_window: u64,
}

/// The smallest capacity `B ≥ 1` for which a token bucket refilling at `limit` per `window`
/// admits at least `share` (0 < share ≤ 1) of `times`. A bigger bucket never admits fewer
/// requests (a property test checks it), so a binary search finds it with about
/// log2(n) replays.
pub fn smallest_burst(
    times: &[Micros],
    limit: u64,
    window: Micros,
    share: f64,
) -> Result<BurstFit, Error> {
    if !(share > 0.0 && share <= 1.0) {
        return Err(Error::Invalid {
            what: "share to serve".into(),
            got: crate::decimal::shortest(share),
            accepted: "a share above 0 and at most 1 (above 0% and at most 100%)".into(),
        });
    }
    let offered = times.len() as u64;
    let needed = ((share * offered as f64).ceil() as u64).min(offered);
    // A bucket of n tokens admits all n requests.
    let (mut lo, mut hi) = (1u64, offered.max(1));
    let mut admitted_hi = token_bucket_admits(times, hi, limit, window)?;
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        let admitted = token_bucket_admits(times, mid, limit, window)?;
        if admitted >= needed {
            hi = mid;
            admitted_hi = admitted;
        } else {
            lo = mid + 1;
        }
    }
    Ok(BurstFit {
        burst: hi,
        admitted: admitted_hi,
        offered,
        share,
        worst_window: hi + limit - 1,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn brute_busiest(times: &[Micros], window: Micros) -> u64 {
        times
            .iter()
            .map(|&t| times.iter().filter(|&&a| a <= t && a + window > t).count() as u64)
            .max()
            .unwrap_or(0)
    }

    #[test]
    fn a_known_trace() {
        // L = 2 per 10 µs: 0, 1, 2 then 20, 21.
        let times = [0, 1, 2, 20, 21, 40];
        let w = busiest_windows(&times, 10, 3);
        assert_eq!(
            w,
            [
                BusyWindow { end: 2, count: 3 },
                BusyWindow { end: 21, count: 2 },
                BusyWindow { end: 40, count: 1 }
            ]
        );
        assert_eq!(token_bucket_admits(&times, 1, 2, 10).expect("fits"), 3);
        let fit = smallest_burst(&times, 2, 10, 1.0).expect("fits");
        assert_eq!((fit.burst, fit.admitted, fit.worst_window), (3, 6, 4));
        assert_eq!(smallest_burst(&times, 2, 10, 0.5).expect("fits").burst, 1);
        assert!(smallest_burst(&times, 2, 10, 0.0).is_err());
        assert!(smallest_burst(&times, 2, 10, f64::NAN).is_err());
        assert!(busiest_windows(&[], 10, 3).is_empty());
    }

    #[test]
    fn a_span_too_long_for_exact_arithmetic_is_refused() {
        let times = [0, u64::MAX / 4];
        assert!(matches!(
            token_bucket_admits(&times, 1, 100_000, 60_000_000),
            Err(Error::TooLarge { .. })
        ));
    }

    fn trace() -> impl Strategy<Value = Vec<Micros>> {
        proptest::collection::vec(0u64..30, 0..60).prop_map(|gaps| {
            let mut t = 0;
            gaps.iter()
                .map(|g| {
                    t += g;
                    t
                })
                .collect()
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]
        #[test]
        fn the_busiest_window_is_the_brute_force_one_and_the_rest_do_not_overlap(
            times in trace(), window in 1u64..50, k in 1usize..6
        ) {
            let w = busiest_windows(&times, window, k);
            prop_assert_eq!(w.first().map_or(0, |b| b.count), brute_busiest(&times, window));
            for (i, a) in w.iter().enumerate() {
                let inside = times.iter().filter(|&&t| t <= a.end && t + window > a.end).count() as u64;
                prop_assert_eq!(inside, a.count);
                for b in &w[i + 1..] {
                    prop_assert!(a.end.abs_diff(b.end) >= window);
                    prop_assert!(a.count >= b.count);
                }
            }
        }

        #[test]
        fn a_bigger_bucket_never_admits_fewer(times in trace(), limit in 1u64..5, window in 1u64..40) {
            let mut last = 0;
            for burst in 1..=times.len().max(1) as u64 + 1 {
                let admitted = token_bucket_admits(&times, burst, limit, window).expect("fits");
                prop_assert!(admitted >= last, "burst {} admits {} < {}", burst, admitted, last);
                last = admitted;
            }
        }

        #[test]
        fn the_smallest_burst_is_smallest(times in trace(), limit in 1u64..5, window in 1u64..40, pct in 1u32..=100) {
            let share = f64::from(pct) / 100.0;
            let fit = smallest_burst(&times, limit, window, share).expect("fits");
            let needed = (share * times.len() as f64).ceil() as u64;
            prop_assert!(fit.admitted >= needed);
            prop_assert_eq!(fit.admitted, token_bucket_admits(&times, fit.burst, limit, window).expect("fits"));
            if fit.burst > 1 {
                prop_assert!(token_bucket_admits(&times, fit.burst - 1, limit, window).expect("fits") < needed);
            }
        }
    }
}
