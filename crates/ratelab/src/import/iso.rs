//! ISO 8601 dates and times, and the civil-calendar arithmetic the access-log times share.

use super::epoch::POW10;
use super::reason::Reason;
use super::END_SECS;
use crate::time::Micros;

/// Two ASCII digits at `i` as a number.
#[inline]
pub(super) fn two(s: &[u8], i: usize) -> Option<u32> {
    let a = s.get(i)?.wrapping_sub(b'0');
    let b = s.get(i + 1)?.wrapping_sub(b'0');
    (a <= 9 && b <= 9).then(|| u32::from(a) * 10 + u32::from(b))
}

/// Four ASCII digits at `i` as a number.
#[inline]
pub(super) fn four(s: &[u8], i: usize) -> Option<u32> {
    Some(two(s, i)? * 100 + two(s, i + 2)?)
}

/// Parses `YYYY-MM-DDTHH:MM:SS[.frac][Z|±HH:MM|±HHMM|±HH]` into µs.
pub(super) fn parse_iso(s: &[u8]) -> Result<Micros, Reason> {
    let at = |i: usize| s.get(i).copied().unwrap_or(0);
    let (Some(year), Some(month), Some(day), Some(hour), Some(minute), Some(second)) = (
        four(s, 0),
        two(s, 5),
        two(s, 8),
        two(s, 11),
        two(s, 14),
        two(s, 17),
    ) else {
        return Err(Reason::NotIso);
    };
    if at(4) != b'-'
        || at(7) != b'-'
        || !matches!(at(10), b'T' | b't' | b' ')
        || at(13) != b':'
        || at(16) != b':'
    {
        return Err(Reason::NotIso);
    }
    let mut i = 19;
    let mut micros: u64 = 0;
    if at(i) == b'.' {
        i += 1;
        let start = i;
        while let Some(&b) = s.get(i) {
            let d = b.wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            if i - start < 6 {
                micros = micros * 10 + u64::from(d);
            }
            i += 1;
        }
        let digits = i - start;
        if digits == 0 {
            return Err(Reason::NotIso);
        }
        micros *= POW10[6 - digits.min(6)];
    }
    let offset: i64 = match at(i) {
        0 if i == s.len() => 0,
        b'Z' | b'z' if i + 1 == s.len() => 0,
        sign @ (b'+' | b'-') => {
            let hours = two(s, i + 1).ok_or(Reason::BadZone)?;
            let minutes = match s.len() - i {
                3 => 0,
                5 => two(s, i + 3).ok_or(Reason::BadZone)?,
                6 if at(i + 3) == b':' => two(s, i + 4).ok_or(Reason::BadZone)?,
                _ => return Err(Reason::BadZone),
            };
            if hours > 23 || minutes > 59 {
                return Err(Reason::BadZone);
            }
            let offset = i64::from(hours * 3600 + minutes * 60);
            if sign == b'-' {
                -offset
            } else {
                offset
            }
        }
        _ => return Err(Reason::NotIso),
    };
    let secs = civil_seconds(year, month, day, hour, minute, second, offset)?;
    Ok(secs * 1_000_000 + micros)
}

/// Seconds since the epoch of a local date and time at a UTC offset, all checked.
pub(super) fn civil_seconds(
    year: u32,
    month: u32,
    day: u32,
    hour: u32,
    minute: u32,
    second: u32,
    offset: i64,
) -> Result<u64, Reason> {
    if !(1970..=9999).contains(&year) {
        return Err(Reason::BadYear);
    }
    if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
        return Err(Reason::BadDate);
    }
    if hour > 23 || minute > 59 || second > 59 {
        return Err(Reason::BadClock);
    }
    let days = days_from_civil(i64::from(year), month, day);
    let secs = days * 86_400 + i64::from(hour * 3600 + minute * 60 + second) - offset;
    if secs < 0 {
        return Err(Reason::Before1970);
    }
    let secs = secs as u64;
    if secs >= END_SECS {
        return Err(Reason::TooLate);
    }
    Ok(secs)
}

pub(super) fn is_leap(year: u32) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

pub(super) fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
pub(super) fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400); // [0, 399]
    let mp = i64::from((month + 9) % 12); // March is 0
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1; // [0, 365]
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy; // [0, 146096]
    era * 146_097 + doe - 719_468
}

/// Year, month (1–12) and day (1–31) of a day count since 1970-01-01, in the proleptic
/// Gregorian calendar (Howard Hinnant's `civil_from_days`): the inverse of the day count the
/// ISO reader works out, tested against it over every day of 1970 to 9999.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}
