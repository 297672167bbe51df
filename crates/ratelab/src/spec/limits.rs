//! Python `limits`' rate strings (`10/minute`, `100 per 2 hours`) and strategies, as limits
//! 5.8.0 reads them (`limits/util.py`: `AMOUNT (/ | per) [MULTIPLES] UNIT`, any case,
//! whitespace optional; a month is 30 days, a year 360; a multiple of 0 is taken as 1).

use crate::error::Error;
use crate::time::{Micros, SECOND};

/// One `limits` rate string: `amount` per `window` µs.
pub fn parse_limits_rate(what: &str, text: &str) -> Result<(u64, Micros), Error> {
    let accepted = "AMOUNT/UNIT or AMOUNT per [N] UNIT, UNIT one of second, minute, hour, day, month, year (or their plurals), e.g. 10/minute or 100 per 2 hours";
    let bad = || Error::invalid(what, text, accepted);
    let s = text.trim();
    let digits = |s: &str| s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let n = digits(s);
    if n == 0 {
        return Err(bad());
    }
    let amount_text = &s[..n];
    let mut rest = s[n..].trim_start();
    if let Some(r) = rest.strip_prefix('/') {
        rest = r;
    } else if rest.len() >= 3 && rest[..3].eq_ignore_ascii_case("per") {
        rest = &rest[3..];
    } else {
        return Err(bad());
    }
    rest = rest.trim_start();
    let m = digits(rest);
    let multiples: u64 = if m == 0 {
        1
    } else {
        // limits: `int(multiples) or None`, then `or 1`: 0 is taken as 1.
        rest[..m]
            .parse::<u64>()
            .ok()
            .filter(|&v| v <= 1_000_000)
            .map(|v| v.max(1))
            .ok_or_else(bad)?
    };
    let unit = rest[m..].trim().to_ascii_lowercase();
    let seconds: u64 = match unit.trim_end_matches('s') {
        "second" => 1,
        "minute" => 60,
        "hour" => 3600,
        "day" => 86_400,
        "month" => 86_400 * 30,
        "year" => 86_400 * 360,
        _ => {
            return Err(Error::invalid(
                what,
                text,
                &format!("{accepted} (limits refuses the unit {unit:?})"),
            ))
        }
    };
    if unit.ends_with("ss") || !unit.chars().all(|c| c.is_ascii_alphabetic()) {
        return Err(bad());
    }
    let amount: u64 = amount_text.parse().map_err(|_| bad())?;
    if amount == 0 {
        return Err(Error::invalid(
            what,
            text,
            "an amount of at least 1 (limits takes 0, which refuses every request), e.g. 1/minute",
        ));
    }
    if amount > super::MAX_BURST {
        return Err(Error::invalid(
            what,
            text,
            &format!("an amount up to {}", super::MAX_BURST),
        ));
    }
    let window = seconds * multiples * SECOND;
    if window > 366 * 86_400 * SECOND {
        return Err(Error::invalid(
            what,
            text,
            "a window of at most 366 days, e.g. 100 per 30 days",
        ));
    }
    Ok((amount, window))
}

/// The rate string ratelab writes for `amount` per `window` (whole seconds): the largest
/// unit that divides it.
pub fn limits_rate_text(amount: u64, window: Micros) -> String {
    let s = window / SECOND;
    for (unit, len) in [
        ("day", 86_400),
        ("hour", 3600),
        ("minute", 60),
        ("second", 1),
    ] {
        if s % len == 0 {
            let n = s / len;
            return if n == 1 {
                format!("{amount}/{unit}")
            } else {
                format!("{amount}/{n}{unit}s")
            };
        }
    }
    format!("{amount}/{s}seconds")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::MINUTE;

    #[test]
    fn rate_strings_read_as_limits_reads_them() {
        let p = |s: &str| parse_limits_rate("rate", s);
        assert_eq!(p("10/minute").expect("ok"), (10, MINUTE));
        assert_eq!(p("10 per minute").expect("ok"), (10, MINUTE));
        assert_eq!(p("10per minute").expect("ok"), (10, MINUTE));
        assert_eq!(p("10/2 minutes").expect("ok"), (10, 2 * MINUTE));
        assert_eq!(
            p("10/0 minutes").expect("ok"),
            (10, MINUTE),
            "0 is taken as 1"
        );
        assert_eq!(p("200 PER DAY").expect("ok"), (200, 86_400 * SECOND));
        assert_eq!(p("1/month").expect("ok").1, 30 * 86_400 * SECOND);
        let e = p("10/min").expect_err("min is not a unit").to_string();
        assert!(e.contains("second, minute, hour"), "{e}");
        assert!(p("0/second").is_err());
        assert!(p("ten/second").is_err());
        assert!(p("10/secondss").is_err());
        for (n, w) in [
            (10, MINUTE),
            (5, 2 * MINUTE),
            (3, 7 * SECOND),
            (1, 86_400 * SECOND),
        ] {
            assert_eq!(p(&limits_rate_text(n, w)).expect("ours"), (n, w));
        }
    }
}
