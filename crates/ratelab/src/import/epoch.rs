//! Epoch seconds and milliseconds, with an optional fraction, converted exactly into µs.

use super::reason::Reason;
use super::END_US;
use crate::time::Micros;

/// Powers of ten up to 10^6.
pub(super) const POW10: [u64; 7] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000];

/// Parses epoch seconds (or milliseconds) with an optional fraction into µs, exactly:
/// `digits[.digits]` or `.digits`, digits below 1 µs dropped.
pub(super) fn parse_epoch(s: &[u8], millis: bool) -> Result<Micros, Reason> {
    match s.strip_prefix(b"-") {
        None => parse_unsigned_epoch(s, millis),
        // A negative number is told apart from what is not a number at all.
        Some(rest) => Err(match parse_unsigned_epoch(rest, millis) {
            Ok(_) | Err(Reason::TooLate) => Reason::Negative,
            Err(other) => other,
        }),
    }
}

/// [`parse_epoch`] without a sign.
pub(super) fn parse_unsigned_epoch(s: &[u8], millis: bool) -> Result<Micros, Reason> {
    let (unit, places, not_a_number) = if millis {
        (1_000, 3, Reason::NotMillis)
    } else {
        (1_000_000, 6, Reason::NotSeconds)
    };
    let mut i = 0;
    let mut int: u64 = 0;
    let mut huge = false;
    while let Some(&b) = s.get(i) {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        if int >= 1_000_000_000_000_000 {
            huge = true;
        } else {
            int = int * 10 + u64::from(d);
        }
        i += 1;
    }
    let int_digits = i;
    let mut frac: u64 = 0;
    let mut frac_digits = 0;
    if s.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while let Some(&b) = s.get(i) {
            let d = b.wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            if i - start < places {
                frac = frac * 10 + u64::from(d);
            }
            i += 1;
        }
        frac_digits = i - start;
    }
    if i != s.len() || int_digits + frac_digits == 0 {
        return Err(not_a_number);
    }
    frac *= POW10[places - frac_digits.min(places)];
    if huge || int >= END_US / unit {
        return Err(Reason::TooLate);
    }
    Ok(int * unit + frac)
}
