//! A histogram of non-negative integers (queueing delays, in µs) with a fixed precision, so
//! that quantiles over any number of values take bounded memory.
//!
//! Log-linear buckets, as in HdrHistogram: values below `2^(P+1)` have a bucket each and are
//! exact; above, each power of two is cut into `2^P` buckets of equal width, so a bucket spans
//! less than `2^-P` of its lowest value. A quantile is reported as the lowest value of the
//! bucket holding it (raised to the smallest value recorded, if that is higher): never above
//! the exact nearest-rank value, and below it by less than `2^-P` of it. With `P` = 7:
//! exact below 256 µs, within 0.8% above (2 significant digits and more). Integers only, so
//! the same on every target; at most `(64 − P + 1) · 2^P` buckets (58 KB) whatever the count,
//! and only up to the largest value recorded (12 KB for delays up to a quarter of a second).
//! `P` = 11 was tried first: its buckets up to a few seconds of delay took 100–300 KB a run,
//! which the page's study moved from its workers and which grew the page's memory.

use crate::time::Micros;
use serde::{Deserialize, Serialize};

/// `P`: each power of two above `2^(P+1)` is cut into `2^P` buckets.
pub const PRECISION_BITS: u32 = 7;
const SUB: u64 = 1 << PRECISION_BITS;

/// Counts of values by bucket, with the exact smallest and largest value.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Histogram {
    counts: Vec<u64>,
    total: u64,
    min: Micros,
    max: Micros,
}

/// The bucket of `v`.
#[inline]
fn index(v: u64) -> usize {
    if v < 2 * SUB {
        v as usize
    } else {
        // `v` has `e + 1` bits, e > P: keep its top P + 1 bits.
        let e = 63 - v.leading_zeros();
        let shift = e - PRECISION_BITS;
        (u64::from(shift) * SUB + (v >> shift)) as usize
    }
}

/// The lowest value of bucket `i`.
fn lowest(i: usize) -> u64 {
    let i = i as u64;
    if i < 2 * SUB {
        i
    } else {
        let shift = i / SUB - 1;
        (i - shift * SUB) << shift
    }
}

impl Histogram {
    /// Adds one value.
    #[inline]
    pub fn record(&mut self, v: Micros) {
        let i = index(v);
        if i >= self.counts.len() {
            self.counts.resize(i + 1, 0);
        }
        self.counts[i] += 1;
        self.min = if self.total == 0 { v } else { self.min.min(v) };
        self.max = self.max.max(v);
        self.total += 1;
    }

    /// Adds every value of `other`.
    pub fn merge(&mut self, other: &Histogram) {
        if other.total == 0 {
            return;
        }
        if self.counts.len() < other.counts.len() {
            self.counts.resize(other.counts.len(), 0);
        }
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.min = if self.total == 0 {
            other.min
        } else {
            self.min.min(other.min)
        };
        self.max = self.max.max(other.max);
        self.total += other.total;
    }

    /// How many values were recorded.
    pub fn len(&self) -> u64 {
        self.total
    }

    /// Whether no value was recorded.
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// The nearest-rank `q` quantile (the value of rank `⌈q·n⌉`, at least 1), to the
    /// histogram's precision; `None` when empty.
    pub fn quantile(&self, q: f64) -> Option<Micros> {
        if self.total == 0 {
            return None;
        }
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut seen = 0;
        let i = self.counts.iter().position(|&c| {
            seen += c;
            seen >= rank
        })?;
        Some(lowest(i).max(self.min))
    }

    /// The bytes its buckets take.
    pub fn heap_bytes(&self) -> usize {
        self.counts.capacity() * size_of::<u64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The exact nearest-rank quantile, as the report computed it before the histogram.
    fn nearest_rank(sorted: &[Micros], q: f64) -> Micros {
        let rank = (q * sorted.len() as f64).ceil() as usize;
        sorted[rank.clamp(1, sorted.len()) - 1]
    }

    #[test]
    fn buckets_are_contiguous_and_their_lowest_values_map_back() {
        // Every bucket boundary from the exact range up to 2^63.
        let mut last = 0;
        for i in 1..(64 - PRECISION_BITS as usize + 1) * SUB as usize {
            let lo = lowest(i);
            assert!(lo > lowest(last), "bucket {i}");
            assert_eq!(index(lo), i, "lowest of {i} is {lo}");
            assert_eq!(index(lo - 1), i - 1, "just below bucket {i}");
            last = i;
        }
        assert_eq!(index(u64::MAX), last);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn quantiles_are_exact_below_2_to_the_p_plus_1_and_within_2_to_the_minus_p_above(
            values in prop::collection::vec(prop_oneof![0u64..5_000, 0u64..10_000_000, any::<u64>()], 1..400),
            split in 0usize..400,
            q in prop_oneof![Just(0.5), Just(0.99), 0.0f64..1.0],
        ) {
            // Recorded in two histograms and merged, as runs are.
            let (a, b) = values.split_at(split.min(values.len()));
            let (mut h, mut g) = (Histogram::default(), Histogram::default());
            a.iter().for_each(|&v| h.record(v));
            b.iter().for_each(|&v| g.record(v));
            h.merge(&g);
            let mut sorted = values.clone();
            sorted.sort_unstable();
            let exact = nearest_rank(&sorted, q);
            let got = h.quantile(q).unwrap_or(u64::MAX);
            prop_assert_eq!(h.len(), values.len() as u64);
            if exact < 2 * SUB {
                prop_assert_eq!(got, exact);
            } else {
                prop_assert!(got <= exact, "{} above {}", got, exact);
                prop_assert!(exact - got < exact >> PRECISION_BITS, "{} vs {}", got, exact);
            }
        }
    }

    #[test]
    fn empty_has_no_quantile_and_memory_follows_the_largest_value() {
        let mut h = Histogram::default();
        assert_eq!(h.quantile(0.5), None);
        // Below 2^(P+1) every value has its own bucket: exact.
        let values: Vec<u64> = (0..1_000_000).map(|v| v % 250).collect();
        values.iter().for_each(|&v| h.record(v));
        assert!(h.heap_bytes() <= 2 * 250 * 8, "{}", h.heap_bytes());
        let mut sorted = values.clone();
        sorted.sort_unstable();
        assert_eq!(h.quantile(0.5), Some(nearest_rank(&sorted, 0.5)));
        h.record(u64::MAX);
        assert!(h.heap_bytes() <= 2 * (64 - PRECISION_BITS as usize + 1) * SUB as usize * 8);
        assert_eq!(h.quantile(1.0), Some(lowest(index(u64::MAX))));
    }
}
