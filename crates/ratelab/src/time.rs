//! Time in ratelab: integer microseconds, passed in and never read from a clock.
//!
//! Durations on the command line and in URLs are written like `60s`, `1min`, `250ms`,
//! `1.5s` or `2h`. They are parsed here exactly, in integers, so that `0.1s` is 100,000 µs
//! and not the nearest binary fraction of it.

use crate::error::Error;

/// A point in simulated time or a duration, in microseconds.
pub type Micros = u64;

/// One millisecond.
pub const MS: Micros = 1_000;
/// One second.
pub const SECOND: Micros = 1_000_000;
/// One minute.
pub const MINUTE: Micros = 60 * SECOND;
/// One hour.
pub const HOUR: Micros = 60 * MINUTE;

/// The units a duration may be written in, longest suffix first so that `ms` is not read
/// as `m` followed by garbage.
const UNITS: &[(&str, Micros)] = &[
    ("min", MINUTE),
    ("us", 1),
    ("µs", 1),
    ("ms", MS),
    ("s", SECOND),
    ("h", HOUR),
];

/// What a duration is accepted as, for error messages.
pub const DURATION_FORMS: &str =
    "a number with a unit: us, ms, s, min or h (e.g. 60s, 1min, 250ms, 1.5s)";

/// Parses a duration such as `60s`, `1min`, `250ms`, `1.5s` or `2h` into microseconds.
///
/// `what` names the parameter for the error message. A bare unit (`min`) means one of it,
/// which makes rates such as `100/min` read naturally.
pub fn parse_duration(what: &str, text: &str) -> Result<Micros, Error> {
    let bad = || Error::invalid(what, text, DURATION_FORMS);
    let t = text.trim();
    let (number, unit) = UNITS
        .iter()
        .find_map(|&(suffix, unit)| t.strip_suffix(suffix).map(|n| (n, unit)))
        .ok_or_else(bad)?;
    if number.is_empty() {
        return Ok(unit);
    }
    parse_decimal_scaled(number, unit).ok_or_else(bad)
}

/// Parses a non-negative decimal `number` and multiplies it by `scale` exactly, rounding
/// to the nearest integer (halves up). Returns `None` for anything that is not a plain
/// decimal, or on overflow.
pub fn parse_decimal_scaled(number: &str, scale: u64) -> Option<u64> {
    let (int_part, frac_part) = match number.split_once('.') {
        Some((i, f)) => (i, f),
        None => (number, ""),
    };
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    let digits_ok = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if !digits_ok(int_part) || !digits_ok(frac_part) || frac_part.len() > 18 {
        return None;
    }
    let int: u64 = if int_part.is_empty() {
        0
    } else {
        int_part.parse().ok()?
    };
    let mut value = u128::from(int) * u128::from(scale);
    if !frac_part.is_empty() {
        let frac: u128 = frac_part.parse().ok()?;
        let denom = 10u128.pow(frac_part.len() as u32);
        value += (frac * u128::from(scale) * 2 + denom) / (2 * denom);
    }
    u64::try_from(value).ok()
}

/// The latest time, in µs from a run's start, that any arrival, retry or window end of an
/// accepted scenario may reach: 2^53 − 1 (about 285 years). Far from 64-bit overflow once a
/// window or a bucket's capacity is added, and exact as a JavaScript number.
pub const MAX_TIME: Micros = (1 << 53) - 1;

/// Formats a duration in the largest unit that divides it exactly (`60s` prints as `1min`).
pub fn format_duration(d: Micros) -> String {
    for &(suffix, unit) in &[("h", HOUR), ("min", MINUTE), ("s", SECOND), ("ms", MS)] {
        if d >= unit && d % unit == 0 {
            return format!("{}{suffix}", d / unit);
        }
    }
    if d >= SECOND {
        // Exactly, in decimal: a float would round past 2^53 / 10^6 seconds.
        let fraction = format!("{:06}", d % SECOND);
        return format!("{}.{}s", d / SECOND, fraction.trim_end_matches('0'));
    }
    format!("{d}us")
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_duration_is_written_exactly_however_long() {
        assert_eq!(format_duration(9_007_199_254_740_991), "9007199254.740991s");
        assert_eq!(format_duration(1_500_000), "1500ms");
        assert_eq!(format_duration(1_000_001), "1.000001s");
        assert_eq!(format_duration(90 * SECOND), "90s");
        assert_eq!(format_duration(999), "999us");
    }

    use super::*;

    #[test]
    fn parses_the_documented_forms() {
        let check = |text: &str, want: Micros| {
            assert_eq!(parse_duration("window", text), Ok(want), "{text}");
        };
        check("60s", 60 * SECOND);
        check("1min", MINUTE);
        check("250ms", 250 * MS);
        check("1.5s", 1_500_000);
        check("0.1s", 100_000);
        check("2h", 2 * HOUR);
        check("7us", 7);
        check("min", MINUTE);
        check(".5s", 500_000);
    }

    #[test]
    fn rejects_what_is_not_a_duration() {
        for text in [
            "",
            "60",
            "1m",
            "-1s",
            "1e3s",
            "s1",
            "1.2.3s",
            "NaNs",
            "infs",
            "1 s x",
            "99999999999999999999h",
        ] {
            let err = parse_duration("window", text).expect_err(text);
            let msg = err.to_string();
            assert!(msg.contains("window"), "{msg}");
            assert!(msg.contains("ms, s, min"), "{msg}");
        }
    }

    #[test]
    fn formats_in_the_largest_exact_unit() {
        assert_eq!(format_duration(MINUTE), "1min");
        assert_eq!(format_duration(90 * SECOND), "90s");
        assert_eq!(format_duration(250 * MS), "250ms");
        assert_eq!(format_duration(1_500_000), "1500ms");
        assert_eq!(format_duration(3), "3us");
    }
}
