//! The scenario language's grammar and its accepted ranges: `name:key=value,...` split into
//! its pairs, each pair taken once so that leftovers can be reported, and the numbers, rates,
//! shares and durations in them read with a message that says what is accepted.

use crate::error::Error;
use crate::limiter::Rate;
use crate::time::{format_duration, parse_duration, Micros, SECOND};

/// The largest accepted burst.
pub const MAX_BURST: u64 = 10_000_000;
/// The largest accepted server count.
pub const MAX_SERVERS: u64 = 1_000;
/// The largest accepted load, as a share of the limit.
pub const MAX_LOAD: f64 = 100.0;
/// The most tries a retrying request may have.
pub const MAX_TRIES: u64 = 1_000;
/// The largest rate count `N` in `rate=N/DUR`.
pub const MAX_RATE_COUNT: u64 = 1_000_000;
/// The most requests a boundary burst's tick may hold (`first`, `second`): a hundred times
/// the largest limit.
pub const MAX_TICK: u64 = 100_000_000;

/// Key-value pairs of a traffic spec, taken one by one so that leftovers can be reported.
pub(super) struct Keys<'a> {
    pub(super) name: &'a str,
    pub(super) pairs: Vec<(&'a str, &'a str)>,
}

impl<'a> Keys<'a> {
    pub(super) fn new(name: &'a str, pairs: Vec<(&'a str, &'a str)>) -> Self {
        Keys { name, pairs }
    }

    pub(super) fn take(&mut self, key: &str) -> Option<&'a str> {
        let i = self.pairs.iter().position(|(k, _)| *k == key)?;
        Some(self.pairs.remove(i).1)
    }

    pub(super) fn load(&mut self) -> Result<f64, Error> {
        match self.take("load") {
            None => Ok(0.8),
            Some(v) => parse_load(&format!("{}: load", self.name), v),
        }
    }

    /// A whole number in `min..=max`, if given.
    pub(super) fn count(&mut self, key: &str, min: u64, max: u64) -> Result<Option<u64>, Error> {
        let what = format!("{}: {key}", self.name);
        self.take(key)
            .map(|v| parse_count(&what, v, min, max))
            .transpose()
    }

    pub(super) fn duration_min(
        &mut self,
        key: &str,
        default: Micros,
        min: Micros,
    ) -> Result<Micros, Error> {
        let what = format!("{}: {key}", self.name);
        match self.take(key) {
            None => Ok(default),
            Some(v) => {
                let d = parse_duration(&what, v)?;
                if d < min {
                    let least = format!("a duration of at least {}", format_duration(min.max(1)));
                    return Err(Error::invalid(&what, v, &least));
                }
                Ok(d)
            }
        }
    }

    /// No key is left over; else an error naming it and the `accepted` keys.
    pub(super) fn finish(self, accepted: &str) -> Result<(), Error> {
        match self.pairs.first() {
            None => Ok(()),
            Some((k, _)) => Err(Error::unknown(
                &format!("key for {}", self.name),
                k,
                accepted,
            )),
        }
    }
}

/// The `key=value` pairs of a spec, in order.
type Pairs<'a> = Vec<(&'a str, &'a str)>;

/// Splits `name[:key=value,...]`, rejecting repeated keys and pairs without `=`.
pub(super) fn split_spec(text: &str) -> Result<(&str, Pairs<'_>), Error> {
    let text = text.trim();
    let (name, rest) = match text.split_once(':') {
        Some((n, r)) => (n, Some(r)),
        None => (text, None),
    };
    if name.is_empty() {
        return Err(Error::invalid(
            "spec",
            text,
            "name[:key=value,...], e.g. token-bucket:burst=10",
        ));
    }
    match rest {
        Some(rest) => Ok((name, split_pairs(name, rest)?)),
        None => Ok((name, Vec::new())),
    }
}

/// Splits `key=value,...` of spec `name`, rejecting repeated keys and pairs without `=`.
pub(super) fn split_pairs<'a>(name: &str, rest: &'a str) -> Result<Pairs<'a>, Error> {
    let mut pairs: Vec<(&str, &str)> = Vec::new();
    for part in rest.split(',') {
        // nginx's one bare word.
        let (k, v) = if part.trim() == "nodelay" {
            ("nodelay", "true")
        } else {
            part.split_once('=')
                .ok_or_else(|| Error::invalid(&format!("{name}: option"), part, "key=value"))?
        };
        let (k, v) = (k.trim(), v.trim());
        if pairs.iter().any(|(seen, _)| *seen == k) {
            return Err(Error::invalid(
                &format!("{name}: {k}"),
                part,
                "each key once",
            ));
        }
        pairs.push((k, v));
    }
    Ok(pairs)
}

pub(super) fn names<'a>(it: impl Iterator<Item = &'a str>) -> String {
    it.collect::<Vec<_>>().join(", ")
}

/// Parses a whole number in `min..=max`.
pub fn parse_count(what: &str, text: &str, min: u64, max: u64) -> Result<u64, Error> {
    let accepted = || format!("a whole number from {min} to {max}");
    let n: u64 = text
        .parse()
        .map_err(|_| Error::invalid(what, text, &accepted()))?;
    if n < min || n > max {
        return Err(Error::invalid(what, text, &accepted()));
    }
    Ok(n)
}

/// Parses a load: a share of the limit like `0.8`, or a percentage like `80%`.
pub fn parse_load(what: &str, text: &str) -> Result<f64, Error> {
    let accepted = "a share of the limit above 0 and at most 100, like 0.8 or 80%";
    parse_fraction(what, text, MAX_LOAD, accepted)
}

/// A plain decimal or a percentage above 0 and at most `most`, else `accepted` in the message.
pub(super) fn parse_fraction(
    what: &str,
    text: &str,
    most: f64,
    accepted: &str,
) -> Result<f64, Error> {
    let (number, scale) = match text.strip_suffix('%') {
        Some(n) => (n, 100.0),
        None => (text, 1.0),
    };
    // Only plain decimals: no `inf`, `NaN` or exponents.
    let v = crate::decimal::parse(number).ok_or_else(|| Error::invalid(what, text, accepted))?;
    let v = v / scale;
    if !(v > 0.0 && v <= most) {
        return Err(Error::invalid(what, text, accepted));
    }
    Ok(v)
}

/// Parses a share of time above 0 and at most 1: `0.2` or `20%`.
pub fn parse_share(what: &str, text: &str) -> Result<f64, Error> {
    parse_fraction(
        what,
        text,
        1.0,
        "a share above 0 and at most 1, like 0.2 or 20%",
    )
}

/// Parses `N/DUR`, e.g. `100/1min` or `100/min`.
pub fn parse_rate(what: &str, text: &str) -> Result<Rate, Error> {
    let accepted = format!("N/DUR with N from 1 to {MAX_RATE_COUNT}, like 100/1min or 5/s");
    let (n, d) = text
        .split_once('/')
        .ok_or_else(|| Error::invalid(what, text, &accepted))?;
    let count = parse_count(what, n, 1, MAX_RATE_COUNT)
        .map_err(|_| Error::invalid(what, text, &accepted))?;
    let per = parse_duration(what, d).map_err(|_| Error::invalid(what, text, &accepted))?;
    if per == 0 {
        return Err(Error::invalid(what, text, &accepted));
    }
    Ok(Rate { count, per })
}

/// Parses nginx's `rate=`: `Nr/s` or `Nr/m`, kept as `N` per second or minute.
pub fn parse_nginx_rate(what: &str, text: &str) -> Result<Rate, Error> {
    let accepted =
        format!("nginx's Nr/s or Nr/m with N from 1 to {MAX_RATE_COUNT}, like 10r/s or 100r/m");
    let (n, per) = if let Some(n) = text.strip_suffix("r/s") {
        (n, SECOND)
    } else if let Some(n) = text.strip_suffix("r/m") {
        (n, 60 * SECOND)
    } else {
        return Err(Error::invalid(what, text, &accepted));
    };
    let count = parse_count(what, n, 1, MAX_RATE_COUNT)
        .map_err(|_| Error::invalid(what, text, &accepted))?;
    Ok(Rate { count, per })
}

/// The longest HAProxy period accepted: HAProxy keeps `remain` in a signed 32-bit count of ms.
pub const MAX_HAPROXY_PERIOD: Micros = (i32::MAX as u64 / 2) * 1000;

/// Parses HAProxy's period: a duration of whole milliseconds, at least 2 ms.
pub(super) fn parse_haproxy_period(what: &str, text: &str) -> Result<Micros, Error> {
    let accepted =
        "a duration of whole milliseconds from 2ms to 298h, like 10s (HAProxy counts in ms)";
    let d = parse_duration(what, text).map_err(|_| Error::invalid(what, text, accepted))?;
    if d % 1000 != 0 || !(2000..=MAX_HAPROXY_PERIOD).contains(&d) {
        return Err(Error::invalid(what, text, accepted));
    }
    Ok(d)
}

pub(super) fn parse_positive_duration(what: &str, text: &str) -> Result<Micros, Error> {
    match parse_duration(what, text)? {
        0 => Err(Error::invalid(what, text, "a duration above zero")),
        d => Ok(d),
    }
}

pub(super) fn parse_bool(what: &str, text: &str) -> Result<bool, Error> {
    match text {
        "true" | "1" | "yes" | "on" => Ok(true),
        "false" | "0" | "no" | "off" => Ok(false),
        _ => Err(Error::invalid(what, text, "true or false")),
    }
}
