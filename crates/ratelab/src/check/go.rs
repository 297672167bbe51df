//! Reading Go's `golang.org/x/time/rate` limiter as Go code writes it:
//! `rate.NewLimiter(10, 5)`, `rate.NewLimiter(rate.Limit(2.5), 1)`,
//! `rate.NewLimiter(rate.Every(100*time.Millisecond), 5)`, comments and the code around it
//! included.

use super::config::{first_line, Config};
use super::js::without_comments;
use crate::error::Error;
use crate::spec::LimiterSpec;
use crate::time::{format_duration, Micros};

/// Go's duration units, in ns.
const UNITS: [(&str, f64); 6] = [
    ("time.Nanosecond", 1.0),
    ("time.Microsecond", 1e3),
    ("time.Millisecond", 1e6),
    ("time.Second", 1e9),
    ("time.Minute", 6e10),
    ("time.Hour", 3.6e12),
];

/// The arguments of the call starting at `open` (just after its `(`), split at top-level
/// commas, and where the call ends.
fn arguments(code: &str, open: usize) -> Option<Vec<&str>> {
    let mut depth = 0usize;
    let mut args = Vec::new();
    let mut start = open;
    for (i, c) in code[open..].char_indices().map(|(i, c)| (open + i, c)) {
        match c {
            '(' => depth += 1,
            ')' if depth == 0 => {
                args.push(code[start..i].trim());
                return Some(args);
            }
            ')' => depth -= 1,
            ',' if depth == 0 => {
                args.push(code[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    None
}

/// A product of numbers and Go duration units (`100*time.Millisecond`, `time.Second / 10`,
/// `2 * time.Minute`), in ns; or a plain number when `units` is false.
fn product(text: &str, units: bool) -> Option<f64> {
    let mut value = 1.0;
    let mut op = '*';
    let mut rest = text.trim();
    let mut any = false;
    while !rest.is_empty() {
        let end = rest.find(['*', '/']).unwrap_or(rest.len());
        let word = rest[..end].trim();
        let word = word.trim_start_matches('(').trim_end_matches(')').trim();
        let factor = if let Some(&(_, ns)) = UNITS.iter().find(|(u, _)| *u == word) {
            if !units {
                return None;
            }
            ns
        } else {
            let w = word
                .trim_start_matches("time.Duration(")
                .trim_start_matches("float64(")
                .trim_end_matches(')');
            w.replace('_', "").parse::<f64>().ok()?
        };
        value = if op == '*' {
            value * factor
        } else {
            value / factor
        };
        any = true;
        if end == rest.len() {
            break;
        }
        op = rest.as_bytes()[end] as char;
        rest = &rest[end + 1..];
    }
    (any && value.is_finite()).then_some(value)
}

/// Go's `rate.NewLimiter(r, b)`.
pub(super) fn read_go(text: &str) -> Result<Vec<Config>, Error> {
    let code = without_comments(text);
    let example = "rate.NewLimiter(rate.Every(100*time.Millisecond), 5) or rate.NewLimiter(10, 5)";
    let at = code.find("NewLimiter(").ok_or_else(|| Error::Missing {
        what: "Go configuration".into(),
        key: "a rate.NewLimiter(r, b) call".into(),
        example: example.into(),
    })?;
    let line = code[..at].matches('\n').count() + 1;
    let what = |part: &str| format!("line {line}: rate.NewLimiter {part}");
    let args = arguments(&code, at + "NewLimiter(".len())
        .filter(|a| a.len() == 2)
        .ok_or_else(|| {
            Error::invalid(
                &what("call"),
                &first_line(&code[at..]),
                &format!("two arguments, the rate and the burst: {example}"),
            )
        })?;
    let (r, b) = (args[0], args[1]);
    let rate_key = if let Some(inner) = r
        .strip_prefix("rate.Every(")
        .and_then(|s| s.strip_suffix(')'))
    {
        let ns = product(inner, true).filter(|&ns| ns > 0.0).ok_or_else(|| {
            Error::invalid(
                &what("rate.Every"),
                inner,
                "a duration above 0 from numbers and time units, like 100*time.Millisecond",
            )
        })?;
        let us = ns / 1e3;
        if us.fract() != 0.0 || us > 1e15 {
            return Err(Error::invalid(
                &what("rate.Every"),
                inner,
                "a whole number of microseconds (ratelab's clock), up to 31 years",
            ));
        }
        format!("every={}", format_duration(us as Micros))
    } else {
        let inner = r
            .strip_prefix("rate.Limit(")
            .and_then(|s| s.strip_suffix(')'))
            .unwrap_or(r);
        let v = product(inner, false)
            .filter(|&v| v > 0.0 && v <= 1e6)
            .ok_or_else(|| {
                Error::invalid(
                    &what("rate"),
                    r,
                    "events a second above 0, a number (10, 2.5) or rate.Limit(X) or rate.Every(DURATION); rate.Inf is no limit",
                )
            })?;
        let text = crate::decimal::fixed(v, 6);
        let text = text.trim_end_matches('0').trim_end_matches('.');
        format!("r={text}")
    };
    let burst = product(b, false)
        .filter(|&v| v.fract() == 0.0 && (0.0..=10_000_000.0).contains(&v))
        .ok_or_else(|| {
            Error::invalid(&what("burst"), b, "a whole number of tokens, 0 to 10000000")
        })?;
    let text = format!("go-rate:{rate_key},b={}", burst as u64);
    let spec = LimiterSpec::parse(&text)?;
    let rate = spec
        .rate
        .ok_or_else(|| Error::invalid(&what("rate"), r, example))?;
    Ok(vec![Config {
        source: "go-rate",
        spec,
        limit: rate.count,
        period: rate.per,
        line,
        // A middleware in front of it sends the reservation's delay, rounded up (echo's).
        headers: true,
    }])
}

#[cfg(test)]
// Each reads into a limiter of the `libraries` feature.
#[cfg(feature = "libraries")]
mod tests {
    use crate::check::read_config;
    use crate::time::{MS, SECOND};

    #[test]
    fn go_code_reads_as_its_limiter() {
        let text = "package main\n\nimport (\n\t\"time\"\n\t\"golang.org/x/time/rate\"\n)\n\n// ten a second, bursts of five\nvar limiter = rate.NewLimiter(rate.Every(100*time.Millisecond), 5)\n";
        let c = &read_config(text).expect("reads")[0];
        assert_eq!(c.spec.text, "go-rate:every=100ms,b=5");
        assert_eq!((c.limit, c.period, c.line), (1, 100 * MS, 9));
        let c = &read_config("l := rate.NewLimiter(2.5, 1) // two and a half a second")
            .expect("reads")[0];
        assert_eq!(c.spec.text, "go-rate:r=2.5,b=1");
        assert_eq!((c.limit, c.period), (25, 10 * SECOND));
        let c = &read_config("rate.NewLimiter(rate.Limit(10), 20)").expect("reads")[0];
        assert_eq!(c.spec.text, "go-rate:r=10,b=20");
        let e = read_config("rate.NewLimiter(rate.Every(d), 5)")
            .expect_err("refused")
            .to_string();
        assert!(e.contains("line 1") && e.contains("rate.Every"), "{e}");
    }
}
