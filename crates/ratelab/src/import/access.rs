//! nginx and Apache access logs (common and combined): a line's time and the fields a filter
//! compares.

use super::iso::{civil_seconds, four, two};
use super::reason::Reason;
use super::scan::find_either;
use super::{Field, Filter};
use crate::time::Micros;

/// The fields of an access-log line, as written (quoted ones still escaped).
#[derive(Debug)]
pub(super) struct Fields<'a> {
    host: &'a [u8],
    ident: &'a [u8],
    user: &'a [u8],
    request: &'a [u8],
    status: &'a [u8],
    bytes: &'a [u8],
    referer: Option<&'a [u8]>,
    user_agent: Option<&'a [u8]>,
}

impl<'a> Fields<'a> {
    /// The client, as written.
    #[cfg_attr(not(feature = "fit"), allow(dead_code))]
    pub(super) fn host(&self) -> &'a [u8] {
        self.host
    }

    /// The status, three digits.
    #[cfg_attr(not(feature = "fit"), allow(dead_code))]
    pub(super) fn status(&self) -> &'a [u8] {
        self.status
    }

    pub(super) fn matches(&self, filter: &Filter) -> bool {
        let want = filter.value.as_bytes();
        let mut words = self.request.split(|&b| b == b' ').filter(|w| !w.is_empty());
        match filter.field {
            Field::Host => self.host == want,
            Field::Ident => self.ident == want,
            Field::User => self.user == want,
            Field::Status => self.status == want,
            Field::Bytes => self.bytes == want,
            Field::Request => unescaped_eq(self.request, want),
            Field::Method => words.next().is_some_and(|w| unescaped_eq(w, want)),
            Field::Path => words.nth(1).is_some_and(|w| unescaped_eq(w, want)),
            Field::Referer => self.referer.is_some_and(|r| unescaped_eq(r, want)),
            Field::UserAgent => self.user_agent.is_some_and(|u| unescaped_eq(u, want)),
        }
    }
}

/// Whether a quoted field, with `\"` and `\\` read as `"` and `\`, equals `want`.
pub(super) fn unescaped_eq(raw: &[u8], want: &[u8]) -> bool {
    if !raw.contains(&b'\\') {
        return raw == want;
    }
    let mut unescaped = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        match (raw[i], raw.get(i + 1)) {
            (b'\\', Some(&next @ (b'"' | b'\\'))) => {
                unescaped.push(next);
                i += 2;
            }
            (b, _) => {
                unescaped.push(b);
                i += 1;
            }
        }
    }
    unescaped == want
}

/// The bytes up to the next space, then past the spaces.
#[inline]
pub(super) fn token<'a>(s: &'a [u8], i: &mut usize) -> &'a [u8] {
    let rest = &s[*i..];
    let end = find_either(rest, b' ', b' ').unwrap_or(rest.len());
    *i += end;
    skip_spaces(s, i);
    &rest[..end]
}

#[inline]
pub(super) fn skip_spaces(s: &[u8], i: &mut usize) {
    while s.get(*i) == Some(&b' ') {
        *i += 1;
    }
}

/// A `"..."` field at `i`, its inner text still escaped, then past the spaces.
#[inline]
pub(super) fn quoted<'a>(s: &'a [u8], i: &mut usize) -> Result<&'a [u8], Reason> {
    if s.get(*i) != Some(&b'"') {
        return Err(Reason::NotAccess);
    }
    let start = *i + 1;
    let mut j = start;
    loop {
        let rest = s.get(j..).ok_or(Reason::UnclosedQuote)?;
        j += find_either(rest, b'"', b'\\').ok_or(Reason::UnclosedQuote)?;
        if s[j] == b'"' {
            break;
        }
        j += 2; // a backslash and the character it escapes
    }
    *i = j + 1;
    skip_spaces(s, i);
    Ok(&s[start..j])
}

/// Parses a common or combined log line: its time and its fields.
pub(super) fn parse_access(s: &[u8]) -> Result<(Micros, Fields<'_>), Reason> {
    let mut i = 0;
    let host = token(s, &mut i);
    let ident = token(s, &mut i);
    let user = token(s, &mut i);
    if ident.is_empty() || user.is_empty() || s.get(i) != Some(&b'[') {
        return Err(Reason::NotAccess);
    }
    let time = s.get(i + 1..i + 27).ok_or(Reason::BadClfTime)?;
    if s.get(i + 27) != Some(&b']') {
        return Err(Reason::BadClfTime);
    }
    let t = parse_clf_time(time)?;
    i += 28;
    skip_spaces(s, &mut i);
    let request = quoted(s, &mut i)?;
    let status = token(s, &mut i);
    if status.len() != 3 || !status.iter().all(u8::is_ascii_digit) {
        return Err(Reason::BadStatus);
    }
    let bytes = token(s, &mut i);
    if bytes.is_empty() || (bytes != b"-" && !bytes.iter().all(u8::is_ascii_digit)) {
        return Err(Reason::BadBytes);
    }
    let referer = if s.get(i) == Some(&b'"') {
        Some(quoted(s, &mut i)?)
    } else {
        None
    };
    let user_agent = if referer.is_some() && s.get(i) == Some(&b'"') {
        Some(quoted(s, &mut i)?)
    } else {
        None
    };
    // Anything after (nginx's $http_x_forwarded_for, timings) is not read.
    Ok((
        t,
        Fields {
            host,
            ident,
            user,
            request,
            status,
            bytes,
            referer,
            user_agent,
        },
    ))
}

/// Parses `10/Oct/2000:13:55:36 -0700` (exactly 26 bytes) into µs.
pub(super) fn parse_clf_time(d: &[u8]) -> Result<Micros, Reason> {
    let (Some(day), Some(year), Some(hour), Some(minute), Some(second), Some(zh), Some(zm)) = (
        two(d, 0),
        four(d, 7),
        two(d, 12),
        two(d, 15),
        two(d, 18),
        two(d, 22),
        two(d, 24),
    ) else {
        return Err(Reason::BadClfTime);
    };
    if d[2] != b'/'
        || d[6] != b'/'
        || d[11] != b':'
        || d[14] != b':'
        || d[17] != b':'
        || d[20] != b' '
    {
        return Err(Reason::BadClfTime);
    }
    let month = match &d[3..6] {
        b"Jan" => 1,
        b"Feb" => 2,
        b"Mar" => 3,
        b"Apr" => 4,
        b"May" => 5,
        b"Jun" => 6,
        b"Jul" => 7,
        b"Aug" => 8,
        b"Sep" => 9,
        b"Oct" => 10,
        b"Nov" => 11,
        b"Dec" => 12,
        _ => return Err(Reason::BadClfTime),
    };
    if zh > 23 || zm > 59 {
        return Err(Reason::BadZone);
    }
    let offset = i64::from(zh * 3600 + zm * 60);
    let offset = match d[21] {
        b'+' => offset,
        b'-' => -offset,
        _ => return Err(Reason::BadClfTime),
    };
    Ok(civil_seconds(year, month, day, hour, minute, second, offset)? * 1_000_000)
}
