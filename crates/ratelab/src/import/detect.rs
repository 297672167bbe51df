//! Format detection: which format a line looks like, for `auto`.

use super::Format;

/// Which format a line looks like, for [`Format::Auto`].
pub(super) fn detect(line: &[u8]) -> Option<Format> {
    if looks_like_access_log(line) {
        return Some(Format::AccessLog);
    }
    let digit = |i: usize| line.get(i).is_some_and(u8::is_ascii_digit);
    let dash = |i: usize| line.get(i) == Some(&b'-');
    if (0..4).all(digit) && dash(4) && (5..7).all(digit) && dash(7) && (8..10).all(digit) {
        return Some(Format::Iso8601);
    }
    let number = line.strip_prefix(b"-").unwrap_or(line);
    match number.first() {
        Some(b'0'..=b'9' | b'.') => {
            let digits = number.iter().take_while(|b| b.is_ascii_digit()).count();
            // At least 10^11, i.e. 12 digits after leading zeros.
            let significant = number[..digits].iter().skip_while(|&&b| b == b'0').count();
            Some(if significant >= 12 {
                Format::Millis
            } else {
                Format::Seconds
            })
        }
        _ => None,
    }
}

/// Whether the line has a `[dd/Mon/yyyy:`.
pub(super) fn looks_like_access_log(line: &[u8]) -> bool {
    let Some(i) = line.iter().position(|&b| b == b'[') else {
        return false;
    };
    line.get(i + 1..i + 13).is_some_and(|d| {
        d[..2].iter().all(u8::is_ascii_digit)
            && d[2] == b'/'
            && d[3..6].iter().all(u8::is_ascii_alphabetic)
            && d[6] == b'/'
            && d[7..11].iter().all(u8::is_ascii_digit)
            && d[11] == b':'
    })
}
