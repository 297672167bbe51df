//! Where an axis's tick labels go: plotters' `compute_f64_key_points` (plotters 0.3.7, MIT),
//! the same steps, except that the scale it starts from, `10^⌊log10(span)⌋`, is a power of
//! ten made by multiplying and dividing tens, not `powf`: the power function is 2.2 KB of each
//! page module that nothing else needs. For exponents from −22 to 22 (every axis here) the
//! two agree exactly: 10^k is exact, and 1 / 10^k is correctly rounded, as the tests check
//! against `powf` and check the whole against plotters' own key points.

use plotters::coord::cartesian::Cartesian2d;
use plotters::coord::ranged1d::{KeyPointHint, NoDefaultFormatting, Ranged};
use plotters::coord::types::RangedCoordf64;
use plotters::drawing::DrawingArea;
use std::ops::Range;

/// An XY chart's plot, on `f64 × f64` coordinates, as every chart here is built.
pub(crate) type Chart<DB> = DrawingArea<DB, Cartesian2d<Axis, Axis>>;

/// An axis of `f64`: plotters' `RangedCoordf64` with its key points from [`key_points`], so
/// that a chart's mesh never reaches plotters' own (and its power function).
pub(crate) struct Axis(RangedCoordf64);

impl From<Range<f64>> for Axis {
    fn from(range: Range<f64>) -> Self {
        Axis(RangedCoordf64::from(range))
    }
}

impl Ranged for Axis {
    type FormatOption = NoDefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.0.map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        let r = self.0.range();
        key_points((r.start, r.end), hint.max_num_points())
    }

    fn range(&self) -> Range<f64> {
        self.0.range()
    }
}

/// `10^e` for a whole `e`: exact up to 10^22, correctly rounded down to 10^−22.
fn pow10(e: f64) -> f64 {
    let mut p = 1.0;
    for _ in 0..(e.abs().min(400.0) as u32) {
        p *= 10.0;
    }
    if e < 0.0 {
        1.0 / p
    } else {
        p
    }
}

/// Euclid's remainder of `a` by `b`, 0 when it is within `f64::EPSILON` of `b` (plotters').
fn rem_euclid(a: f64, b: f64) -> f64 {
    let ret = if b > 0.0 {
        a - (a / b).floor() * b
    } else {
        a - (a / b).ceil() * b
    };
    if (ret - b).abs() < f64::EPSILON {
        0.0
    } else {
        ret
    }
}

/// At most `max_points` round values spanning `range`, as plotters' `RangedCoordf64` gives.
pub(crate) fn key_points(range: (f64, f64), max_points: usize) -> Vec<f64> {
    if max_points == 0 {
        return vec![];
    }
    let range = (range.0.min(range.1), range.1.max(range.0));
    if range.0.is_nan() || range.1.is_nan() {
        return vec![];
    }
    if (range.0 - range.1).abs() < f64::EPSILON {
        return vec![range.0];
    }
    let mut scale = pow10((range.1 - range.0).log(10.0).floor());
    let mut value_granularity = scale / 10.0;
    if 1 + ((range.1 - range.0) / scale).floor() as usize > max_points {
        scale *= 10.0;
        value_granularity *= 10.0;
    }
    'outer: loop {
        let old_scale = scale;
        for nxt in [2.0, 5.0, 10.0] {
            let mut new_left = range.0 - rem_euclid(range.0, old_scale / nxt);
            if new_left < range.0 {
                new_left += old_scale / nxt;
            }
            let new_right = range.1 - rem_euclid(range.1, old_scale / nxt);
            let npoints = 1.0 + ((new_right - new_left) / old_scale * nxt);
            if npoints.round() as usize > max_points {
                break 'outer;
            }
            scale = old_scale / nxt;
        }
        scale = old_scale / 10.0;
        value_granularity /= 10.0;
    }
    let mut ret = vec![];
    let left = {
        let mut value = range.0 - rem_euclid(range.0, scale);
        if value < range.0 {
            value += scale;
        }
        value
    };
    let left_base = (left / value_granularity).floor() * value_granularity;
    let mut left_relative = left - left_base;
    let right = range.1 - rem_euclid(range.1, scale);
    while (right - left_relative - left_base) >= -f64::EPSILON {
        let new_left_relative = (left_relative / value_granularity).round() * value_granularity;
        if new_left_relative < 0.0 {
            left_relative += value_granularity;
        }
        ret.push(left_relative + left_base);
        left_relative += scale;
    }
    ret
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_powers_of_ten_are_powf_s() {
        for k in -22..=22 {
            assert_eq!(pow10(f64::from(k)), 10f64.powf(f64::from(k)), "10^{k}");
        }
    }

    #[test]
    fn the_key_points_are_plotters_own() {
        let theirs = |a: f64, b: f64, n: usize| RangedCoordf64::from(a..b).key_points(n);
        let mut cases = 0;
        // Every axis shape the charts have: counts from zero, times in seconds, shares, a
        // window's edge at a power of ten, spans across 10^−3 to 10^9, and any hint.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut ranges: Vec<(f64, f64)> = Vec::new();
        for k in -3..=9 {
            let p = 10f64.powi(k);
            for m in [1.0, 1.5, 2.0, 2.5, 3.0, 5.0, 7.5, 9.99] {
                ranges.push((0.0, m * p));
                ranges.push((p, p + m * p));
                ranges.push((-m * p, m * p));
            }
        }
        for _ in 0..20_000 {
            let scale = 10f64.powi((next() % 13) as i32 - 3);
            let a = (next() % 10_000) as f64 / 100.0 * scale;
            let b = a + ((next() % 100_000) + 1) as f64 / 1_000.0 * scale;
            ranges.push((a, b));
        }
        for (a, b) in ranges {
            for n in [1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 25, 61] {
                assert_eq!(
                    key_points((a, b), n),
                    theirs(a, b, n),
                    "{a}..{b} at most {n}"
                );
                cases += 1;
            }
        }
        assert!(cases > 200_000);
        assert_eq!(key_points((5.0, 5.0), 4), vec![5.0]);
        assert!(key_points((0.0, 1.0), 0).is_empty());
        // The charts' axis gives them, and maps as plotters' does.
        let axis = Axis::from(0.0..60.0);
        assert_eq!(axis.key_points(7), theirs(0.0, 60.0, 7));
        assert_eq!(
            axis.map(&30.0, (0, 100)),
            RangedCoordf64::from(0.0..60.0).map(&30.0, (0, 100))
        );
    }
}
