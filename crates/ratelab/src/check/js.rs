//! Reading a Node library's limiter as its users write it: express-rate-limit's
//! `rateLimit({ windowMs: 15 * 60 * 1000, limit: 100, ... })` and rate-limiter-flexible's
//! `new RateLimiterMemory({ points: 6, duration: 1 })`, comments, arithmetic and the code
//! around them included. Only numbers (and arithmetic on them) are read: an option given as a
//! function or a variable is refused, naming it.

use super::config::{first_line, Config};
use crate::error::Error;
use crate::spec::LimiterSpec;
use crate::time::MS;
#[cfg(test)]
#[cfg(feature = "libraries")]
use crate::time::{Micros, SECOND};

/// `text` without `//` and `/* */` comments (JavaScript's and Go's alike; strings are left as
/// they are: the values read here are numbers), with each character's line kept.
pub(super) fn without_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('/', Some('/')) => {
                for d in chars.by_ref() {
                    if d == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for d in chars.by_ref() {
                    if d == '\n' {
                        out.push('\n');
                    }
                    if last == '*' && d == '/' {
                        break;
                    }
                    last = d;
                }
            }
            _ => out.push(c),
        }
    }
    out
}

/// An option of an object literal: its key, its value as written, and its line.
type Prop = (String, String, usize);

/// The object literal passed to the first `call(` in `code`, as its top-level properties,
/// and the line of the call.
fn options(code: &str, call: &str) -> Option<(Vec<Prop>, usize)> {
    let at = code.find(call)?;
    let line_of = |i: usize| code[..i].matches('\n').count() + 1;
    // The call's argument: an object literal, or a name the object was assigned to before
    // (`const opts = { points: 6, duration: 1 }; new RateLimiterMemory(opts)`).
    let after = at + call.len();
    let arg = code[after..].trim_start();
    let open = if arg.starts_with('{') {
        code.len() - arg.len()
    } else {
        let name: String = arg
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '$')
            .collect();
        assigned_object(&code[..at], &name)?
    };
    let mut depth = 0usize;
    let mut props = Vec::new();
    let mut start = open + 1;
    for (i, c) in code[open..].char_indices().map(|(i, c)| (open + i, c)) {
        match c {
            '{' | '(' | '[' => depth += 1,
            '}' | ')' | ']' if depth == 1 => {
                props.push((start, i));
                break;
            }
            '}' | ')' | ']' => depth -= 1,
            ',' if depth == 1 => {
                props.push((start, i));
                start = i + 1;
            }
            _ => {}
        }
    }
    let props = props
        .into_iter()
        .filter_map(|(a, b)| {
            let (key, value) = code[a..b].split_once(':')?;
            let key = key.trim().trim_matches(['"', '\'']).to_owned();
            let skipped = code[a..].len() - code[a..].trim_start().len();
            Some((key, value.trim().to_owned(), line_of(a + skipped)))
        })
        .collect();
    Some((props, line_of(at)))
}

/// Where the object literal assigned to `name` in `code` opens (`name = {` or `name: {`, the
/// last such), if it is one.
fn assigned_object(code: &str, name: &str) -> Option<usize> {
    if name.is_empty() {
        return None;
    }
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '$';
    code.match_indices(name)
        .filter(|&(i, _)| {
            !code[..i].chars().next_back().is_some_and(word)
                && !code[i + name.len()..].chars().next().is_some_and(word)
        })
        .filter_map(|(i, _)| {
            let rest = &code[i + name.len()..];
            let rest = rest.trim_start();
            let rest = rest
                .strip_prefix('=')
                .filter(|r| !r.starts_with(['=', '>']))?;
            let value = rest.trim_start();
            value.starts_with('{').then(|| code.len() - value.len())
        })
        .last()
}

/// A number written as users write one in JavaScript: digits (with `_` separators), a
/// decimal point, and `+ - * /` with parentheses.
fn number(text: &str) -> Option<f64> {
    struct P<'a> {
        s: &'a [u8],
        i: usize,
    }
    impl P<'_> {
        fn skip(&mut self) {
            while self.s.get(self.i).is_some_and(|c| c.is_ascii_whitespace()) {
                self.i += 1;
            }
        }
        fn sum(&mut self) -> Option<f64> {
            let mut v = self.product()?;
            loop {
                self.skip();
                match self.s.get(self.i) {
                    Some(b'+') => {
                        self.i += 1;
                        v += self.product()?;
                    }
                    Some(b'-') => {
                        self.i += 1;
                        v -= self.product()?;
                    }
                    _ => return Some(v),
                }
            }
        }
        fn product(&mut self) -> Option<f64> {
            let mut v = self.atom()?;
            loop {
                self.skip();
                match self.s.get(self.i) {
                    Some(b'*') => {
                        self.i += 1;
                        v *= self.atom()?;
                    }
                    Some(b'/') => {
                        self.i += 1;
                        v /= self.atom()?;
                    }
                    _ => return Some(v),
                }
            }
        }
        fn atom(&mut self) -> Option<f64> {
            self.skip();
            if self.s.get(self.i) == Some(&b'(') {
                self.i += 1;
                let v = self.sum()?;
                self.skip();
                (self.s.get(self.i) == Some(&b')')).then(|| self.i += 1)?;
                return Some(v);
            }
            let start = self.i;
            while self
                .s
                .get(self.i)
                .is_some_and(|c| c.is_ascii_digit() || *c == b'.' || *c == b'_')
            {
                self.i += 1;
            }
            let digits: String = std::str::from_utf8(&self.s[start..self.i])
                .ok()?
                .replace('_', "");
            digits.parse().ok()
        }
    }
    let mut p = P {
        s: text.as_bytes(),
        i: 0,
    };
    let v = p.sum()?;
    p.skip();
    (p.i == p.s.len() && v.is_finite()).then_some(v)
}

/// The number an option holds, or an error naming it, its line and what is accepted.
fn read_number(lib: &str, (key, value, line): &Prop, min: f64, max: f64) -> Result<f64, Error> {
    let what = format!("line {line}: {lib} {key}");
    let accepted = format!("a number from {min} to {max}, arithmetic allowed (15 * 60 * 1000); not a function or a variable");
    number(value)
        .filter(|v| (min..=max).contains(v))
        .ok_or_else(|| Error::invalid(&what, value, &accepted))
}

/// express-rate-limit's `rateLimit({...})` (or the default export called `rateLimit`,
/// `RateLimit`): `windowMs` (default 60,000) and `limit` or `max` (default 5).
pub(super) fn read_express(text: &str) -> Result<Vec<Config>, Error> {
    let code = without_comments(text);
    let call = ["rateLimit(", "RateLimit("]
        .into_iter()
        .find(|c| code.contains(c))
        .ok_or_else(|| Error::Missing {
            what: "express-rate-limit configuration".into(),
            key: "a rateLimit({ windowMs, limit }) call".into(),
            example: "rateLimit({ windowMs: 15 * 60 * 1000, limit: 100 })".into(),
        })?;
    let (props, line) = options(&code, call).ok_or_else(|| {
        Error::invalid(
            "express-rate-limit configuration",
            &first_line(text),
            "rateLimit({ windowMs: ..., limit: ... }) with its options as an object",
        )
    })?;
    let mut window_ms = 60_000.0;
    let mut limit = 5.0;
    let mut limit_given = false;
    // express-rate-limit sends `Retry-After` when either header set is on: the legacy ones
    // are by default, the standard ones are not.
    let (mut legacy, mut standard) = (true, false);
    for p in &props {
        match p.0.as_str() {
            "legacyHeaders" | "headers" => legacy = p.1 != "false",
            "standardHeaders" => standard = p.1 != "false",
            "windowMs" => window_ms = read_number("express-rate-limit", p, 1.0, f64::from(i32::MAX))?,
            "limit" => {
                limit = read_number("express-rate-limit", p, 1.0, 10_000_000.0)?;
                limit_given = true;
            }
            // `limit` wins when both are given.
            "max" if !limit_given => limit = read_number("express-rate-limit", p, 1.0, 10_000_000.0)?,
            "store" => {
                return Err(Error::invalid(
                    &format!("line {}: express-rate-limit store", p.2),
                    &p.1,
                    "the default memory store (ratelab models it; a shared store decides in its own way)",
                ))
            }
            _ => {}
        }
    }
    let (limit, window_ms) = (limit.round() as u64, window_ms.round() as u64);
    let text = format!("express-rate-limit:limit={limit},window-ms={window_ms}");
    Ok(vec![Config {
        source: "express-rate-limit",
        spec: LimiterSpec::parse(&text)?,
        limit,
        period: window_ms * MS,
        line,
        headers: legacy || standard,
    }])
}

/// rate-limiter-flexible's `new RateLimiterMemory({ points, duration, blockDuration })`:
/// the first two required (the library throws without them), the block 0 unless given.
pub(super) fn read_flexible(text: &str) -> Result<Vec<Config>, Error> {
    let code = without_comments(text);
    let example = "new RateLimiterMemory({ points: 6, duration: 1 })";
    let (props, line) = options(&code, "RateLimiterMemory(").ok_or_else(|| Error::Missing {
        what: "rate-limiter-flexible configuration".into(),
        key: "a new RateLimiterMemory({ points, duration })".into(),
        example: example.into(),
    })?;
    let mut points = None;
    let mut duration = None;
    let mut block = None;
    for p in &props {
        match p.0.as_str() {
            "points" => points = Some(read_number("rate-limiter-flexible", p, 1.0, 10_000_000.0)?),
            "duration" => {
                duration = Some(read_number("rate-limiter-flexible", p, 0.001, 2_073_600.0)?)
            }
            "blockDuration" => {
                block = Some(read_number("rate-limiter-flexible", p, 0.0, 2_073_600.0)?)
            }
            _ => {}
        }
    }
    let missing = |key: &str| Error::Missing {
        what: format!("line {line}: RateLimiterMemory"),
        key: key.into(),
        example: example.into(),
    };
    let points = points.ok_or_else(|| missing("points"))?.round() as u64;
    let ms = (duration.ok_or_else(|| missing("duration"))? * 1000.0).round() as u64;
    let mut text = format!(
        "rate-limiter-flexible:points={points},duration={}.{:03}",
        ms / 1000,
        ms % 1000
    );
    // The library blocks only for a blockDuration above 0 (its default), to the millisecond.
    let block_ms = (block.unwrap_or(0.0) * 1000.0).round() as u64;
    if block_ms > 0 {
        text.push_str(&format!(
            ",block-duration={}.{:03}",
            block_ms / 1000,
            block_ms % 1000
        ));
    }
    Ok(vec![Config {
        source: "rate-limiter-flexible",
        spec: LimiterSpec::parse(&text)?,
        limit: points,
        period: ms * MS,
        line,
        // The library hands the rejection `msBeforeNext`; the server turns it into a header.
        headers: true,
    }])
}

/// One second, for the tests' arithmetic.
#[cfg(test)]
#[cfg(feature = "libraries")]
const S: Micros = SECOND;

#[cfg(test)]
// Each reads into a limiter of the `libraries` feature.
#[cfg(feature = "libraries")]
mod tests {
    use super::*;
    use crate::check::read_config;

    #[test]
    fn express_rate_limits_readme_snippet_reads_as_its_limiter() {
        let text = "import { rateLimit } from 'express-rate-limit'\n\nconst limiter = rateLimit({\n\twindowMs: 15 * 60 * 1000, // 15 minutes\n\tlimit: 100, // Limit each IP to 100 requests per `window` (here, per 15 minutes).\n\tstandardHeaders: 'draft-8', // draft-6: `RateLimit-*` headers\n\tlegacyHeaders: false, // Disable the `X-RateLimit-*` headers.\n\tipv6Subnet: 56,\n\t// store: ... , // Redis, Memcached, etc. See below.\n})\n\n// Apply the rate limiting middleware to all requests.\napp.use(limiter)\n";
        let c = &read_config(text).expect("reads")[0];
        assert_eq!(c.spec.text, "express-rate-limit:limit=100,window-ms=900000");
        assert_eq!((c.limit, c.period, c.line), (100, 900 * S, 3));
        let max = read_config(
            "const rateLimit = require('express-rate-limit');\napp.use(rateLimit({ max: 10 }));",
        )
        .expect("reads");
        assert_eq!(
            max[0].spec.text,
            "express-rate-limit:limit=10,window-ms=60000"
        );
    }

    #[test]
    fn rate_limiter_flexibles_snippet_reads_as_its_limiter() {
        let text = "const { RateLimiterMemory } = require('rate-limiter-flexible');\nconst opts = {\n  points: 6, // 6 points\n  duration: 1, // Per second\n};\nconst rateLimiter = new RateLimiterMemory({\n  points: 6, // 6 points\n  duration: 1, // Per second\n});\n";
        let c = &read_config(text).expect("reads")[0];
        assert_eq!(c.spec.text, "rate-limiter-flexible:points=6,duration=1.000");
        assert_eq!((c.limit, c.period, c.line), (6, S, 6));
    }

    #[test]
    fn a_block_duration_is_read_and_the_worst_it_allows_is_reached() {
        // The library's brute-force recipe: a block longer than the window changes nothing.
        let text = "const limiter = new RateLimiterMemory({\n  points: 10, // 10 requests\n  duration: 1, // per 1 second by IP\n  blockDuration: 60, // block for a minute\n});\n";
        let c = &read_config(text).expect("reads")[0];
        assert_eq!(
            c.spec.text,
            "rate-limiter-flexible:points=10,duration=1.000,block-duration=60.000"
        );
        let found = crate::check::check(c, None, 1).expect("checks");
        assert_eq!((found.worst_window, found.reached), (20, true));
        // A block shorter than the window lets a window open every block (FINDINGS F5, to
        // the microsecond): 55 in 10 s, and 59 in 10.5 s, each reached by arrivals found.
        let text = "new RateLimiterMemory({ points: 5, duration: 10, blockDuration: 1 })";
        let c = &read_config(text).expect("reads")[0];
        for (window, want) in [(10 * S, 55), (10 * S + S / 2, 59)] {
            let found = crate::check::check(c, Some(window), 1).expect("checks");
            assert_eq!((found.worst_window, found.worst_found), (want, want));
        }
        // 0, the library's default, is no block; a negative one is refused.
        let c =
            &read_config("new RateLimiterMemory({ points: 5, duration: 10, blockDuration: 0 })")
                .expect("reads")[0];
        assert_eq!(
            c.spec.text,
            "rate-limiter-flexible:points=5,duration=10.000"
        );
        let e =
            read_config("new RateLimiterMemory({ points: 5, duration: 10, blockDuration: -1 })")
                .expect_err("refused")
                .to_string();
        assert!(e.contains("blockDuration"), "{e}");
    }

    #[test]
    fn options_passed_by_name_are_read_where_the_name_is_assigned() {
        // rate-limiter-flexible's README, as it stands: the options in a const, then a
        // `.then(... => { ... })` whose braces must not be read as them.
        let text = "const { RateLimiterMemory } = require('rate-limiter-flexible');\n\nconst opts = {\n  points: 6, // 6 points\n  duration: 1, // Per second\n};\n\nconst rateLimiter = new RateLimiterMemory(opts);\n\nrateLimiter.consume(remoteAddress, 2) // consume 2 points\n    .then((rateLimiterRes) => {\n      // 2 points consumed\n    })\n    .catch((rateLimiterRes) => {\n      // Not enough points to consume\n    });\n";
        let c = &read_config(text).expect("reads")[0];
        assert_eq!(c.spec.text, "rate-limiter-flexible:points=6,duration=1.000");
        assert_eq!((c.limit, c.period, c.line), (6, S, 8));
        let text = "const options = { windowMs: 60 * 1000, limit: 30 };\nconst equal = options == null;\napp.use(rateLimit(options));\n";
        let c = &read_config(text).expect("reads")[0];
        assert_eq!(c.spec.text, "express-rate-limit:limit=30,window-ms=60000");
        // A name never assigned an object is refused as before.
        let e = read_config("new RateLimiterMemory(opts)")
            .expect_err("refused")
            .to_string();
        assert!(e.contains("points"), "{e}");
    }

    #[test]
    fn a_function_or_a_missing_option_is_named_with_its_line() {
        let e = read_config("app.use(rateLimit({\n  windowMs: 60000,\n  limit: (req) => 5,\n}))")
            .expect_err("refused")
            .to_string();
        assert!(
            e.contains("line 3") && e.contains("limit") && e.contains("function"),
            "{e}"
        );
        let e = read_config("new RateLimiterMemory({ points: 5 })")
            .expect_err("refused")
            .to_string();
        assert!(e.contains("duration"), "{e}");
        assert_eq!(number("15 * 60 * 1000"), Some(900_000.0));
        assert_eq!(number("(1_000 + 500) / 2"), Some(750.0));
        assert_eq!(number("MINUTE * 2"), None);
    }
}
