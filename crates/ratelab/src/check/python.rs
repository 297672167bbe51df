//! Reading Python's `limits` as its users write it, alone or under Flask-Limiter or SlowAPI:
//! rate strings (`"200 per day"`, `"5/minute"`, `"1/second;5/minute"`) wherever they are
//! quoted (`default_limits=[...]`, `@limiter.limit(...)`, `parse(...)`,
//! `RATELIMIT_DEFAULT = ...`), `RateLimitItemPerMinute(10)`, and the strategy
//! (`strategy="moving-window"`, `RATELIMIT_STRATEGY`, or the strategy's class), comments and
//! the rest of the program included. Each rate string's item is one limiter, as limits keeps
//! one counter per item.

use super::config::Config;
use crate::error::Error;
use crate::spec::{limits_rate_text, parse_limits_rate, LimiterSpec, LimitsStrategy};
use crate::time::Micros;

/// Whether `text` looks like Python using `limits`.
pub(super) fn is_python_limits(text: &str) -> bool {
    [
        "flask_limiter",
        "slowapi",
        "from limits",
        "import limits",
        "RATELIMIT_",
        "default_limits",
        "WindowRateLimiter",
        "WindowCounterRateLimiter",
        "RateLimitItemPer",
        "@limiter.limit(",
        "limits.parse",
    ]
    .iter()
    .any(|k| text.contains(k))
}

/// A string literal of the code, its text and the line it starts on.
struct Literal {
    text: String,
    line: usize,
    /// Byte offset in the source.
    at: usize,
}

/// The code's string literals (`'…'`, `"…"`, triple-quoted too, prefixes like `f`/`r` taken
/// as plain), `#` comments left out.
fn literals(text: &str) -> Vec<Literal> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    while i < b.len() {
        match b[i] {
            b'\n' => {
                line += 1;
                i += 1;
            }
            b'#' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            q @ (b'"' | b'\'') => {
                let triple = b.get(i + 1) == Some(&q) && b.get(i + 2) == Some(&q);
                let start_line = line;
                let at = i;
                i += if triple { 3 } else { 1 };
                let start = i;
                loop {
                    if i >= b.len() {
                        break;
                    }
                    if b[i] == b'\\' {
                        i += 2;
                        continue;
                    }
                    if b[i] == b'\n' {
                        line += 1;
                        if !triple {
                            break;
                        }
                    }
                    if b[i] == q
                        && (!triple || (b.get(i + 1) == Some(&q) && b.get(i + 2) == Some(&q)))
                    {
                        break;
                    }
                    i += 1;
                }
                let end = i.min(b.len());
                out.push(Literal {
                    text: text.get(start..end).unwrap_or("").to_owned(),
                    line: start_line,
                    at,
                });
                i = end + if triple { 3 } else { 1 };
            }
            _ => i += 1,
        }
    }
    out
}

/// The code with comments and string literals blanked (lines kept), for finding names.
fn code_only(text: &str, lits: &[Literal]) -> String {
    let mut out: Vec<u8> = text.as_bytes().to_vec();
    let mut in_comment = false;
    let mut lit = lits.iter().peekable();
    let mut i = 0;
    while i < out.len() {
        if let Some(l) = lit.peek() {
            if i == l.at {
                // Blank the literal, quotes and all, keeping newlines.
                let q = out[i];
                let triple = out.get(i + 1) == Some(&q) && out.get(i + 2) == Some(&q);
                let len = l.text.len() + if triple { 6 } else { 2 };
                for c in out.iter_mut().skip(i).take(len) {
                    if *c != b'\n' {
                        *c = b' ';
                    }
                }
                i += len;
                lit.next();
                continue;
            }
        }
        if out[i] == b'#' {
            in_comment = true;
        }
        if out[i] == b'\n' {
            in_comment = false;
        } else if in_comment {
            out[i] = b' ';
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The items of a rate string (`;`, `,` or `|` between them), if all of it is one.
fn rate_items(text: &str) -> Option<Vec<(u64, Micros)>> {
    let t = text.trim();
    if t.is_empty() || !t.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    t.split([';', ',', '|'])
        .map(|item| parse_limits_rate("rate", item.trim().trim_end_matches(':')).ok())
        .collect()
}

/// Whether `text` has a rate string's shape (digits, `/` or `per`, a word) though limits may
/// refuse it (`5/min`): said so rather than passed over.
fn looks_like_a_rate(text: &str) -> bool {
    text.split([';', ',', '|']).all(|item| {
        let t = item.trim().to_ascii_lowercase();
        let Some(rest) = t.strip_prefix(|c: char| c.is_ascii_digit()) else {
            return false;
        };
        let rest = rest
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .trim_start();
        let rest = match rest.strip_prefix('/').or_else(|| rest.strip_prefix("per")) {
            Some(r) => r
                .trim_start()
                .trim_start_matches(|c: char| c.is_ascii_digit())
                .trim(),
            None => return false,
        };
        !rest.is_empty() && rest.chars().all(|c| c.is_ascii_alphabetic())
    })
}

/// Reads every limit of a Python program using `limits`.
pub(super) fn read_limits(text: &str) -> Result<Vec<Config>, Error> {
    let lits = literals(text);
    let code = code_only(text, &lits);
    let line_at = |i: usize| text[..i].matches('\n').count() + 1;
    // The code just before and after a literal, without whitespace.
    let flat = |range: std::ops::Range<usize>| -> String {
        let (mut a, mut b) = (range.start.min(code.len()), range.end.min(code.len()));
        while !code.is_char_boundary(a) {
            a -= 1;
        }
        while !code.is_char_boundary(b) {
            b += 1;
        }
        code[a..b].split_whitespace().collect()
    };
    // The literal before `k` is the setting's name (`config["RATELIMIT_STRATEGY"] = …`,
    // `{"RATELIMIT_STRATEGY": …}`).
    let keyed = |k: usize, name: &str| {
        k > 0 && lits[k - 1].text == name && {
            let between = flat(lits[k - 1].at + lits[k - 1].text.len() + 1..lits[k].at);
            between == "]=" || between == ":"
        }
    };
    // The strategy: a keyword argument or setting naming it, or the strategy's class.
    let mut strategies: Vec<(LimitsStrategy, usize)> = Vec::new();
    for (k, l) in lits.iter().enumerate() {
        let before = flat(l.at.saturating_sub(40)..l.at);
        if before.ends_with("strategy=")
            || before.ends_with("RATELIMIT_STRATEGY=")
            || keyed(k, "RATELIMIT_STRATEGY")
        {
            let s = LimitsStrategy::parse(&format!("line {}: strategy", l.line), &l.text)?;
            strategies.push((s, l.line));
        }
    }
    for (class, s) in [
        ("FixedWindowRateLimiter", LimitsStrategy::FixedWindow),
        ("MovingWindowRateLimiter", LimitsStrategy::MovingWindow),
        (
            "SlidingWindowCounterRateLimiter",
            LimitsStrategy::SlidingWindowCounter,
        ),
    ] {
        if let Some(at) = code.find(&format!("{class}(")) {
            strategies.push((s, line_at(at)));
        }
    }
    strategies.sort_by_key(|&(_, line)| line);
    strategies.dedup_by_key(|s| s.0);
    if strategies.len() > 1 {
        let named: Vec<String> = strategies
            .iter()
            .map(|(s, line)| format!("{} (line {line})", s.name()))
            .collect();
        return Err(Error::invalid(
            "strategy",
            &named.join(", "),
            "one strategy per program (limits applies one to every limit): check each part on its own",
        ));
    }
    let strategy = strategies
        .first()
        .map(|s| s.0)
        .unwrap_or(LimitsStrategy::FixedWindow);
    // Flask-Limiter and SlowAPI send their headers, Retry-After among them, only when asked.
    let all: String = code.split_whitespace().collect();
    let headers = all.contains("headers_enabled=True")
        || all.contains("RATELIMIT_HEADERS_ENABLED=True")
        || lits.iter().any(|l| {
            l.text == "RATELIMIT_HEADERS_ENABLED" && {
                // The literal itself is blanked in `code`.
                let after = flat(l.at..l.at + l.text.len() + 16);
                after.starts_with("]=True") || after.starts_with(":True")
            }
        });
    let mut items: Vec<(u64, Micros, usize)> = Vec::new();
    for l in &lits {
        if let Some(found) = rate_items(&l.text) {
            items.extend(found.into_iter().map(|(n, w)| (n, w, l.line)));
        } else if looks_like_a_rate(&l.text) {
            // Looks like a rate string but is not one limits reads: say so.
            for item in l.text.split([';', ',', '|']) {
                parse_limits_rate(&format!("line {}: rate string", l.line), item.trim())?;
            }
        }
    }
    // RateLimitItemPerMinute(10) or RateLimitItemPerSecond(10, 2).
    for unit in ["Second", "Minute", "Hour", "Day", "Month", "Year"] {
        let call = format!("RateLimitItemPer{unit}(");
        let mut from = 0;
        while let Some(found) = code[from..].find(&call) {
            let at = from + found;
            from = at + call.len();
            let args: &str = code[from..].split(')').next().unwrap_or("");
            let line = line_at(at);
            let what = format!("line {line}: RateLimitItemPer{unit}");
            let nums: Vec<&str> = args
                .split(',')
                .map(|a| a.trim().trim_start_matches("multiples=").trim())
                .filter(|a| !a.is_empty())
                .collect();
            let whole = |i: usize| nums.get(i).map(|n| n.parse::<u64>().ok());
            let (amount, multiples) = match (whole(0), whole(1), nums.len()) {
                (Some(Some(a)), None, 1) => (a, 1),
                (Some(Some(a)), Some(Some(m)), 2) => (a, m),
                _ => {
                    return Err(Error::invalid(
                        &what,
                        args,
                        "whole numbers: (amount) or (amount, multiples), e.g. RateLimitItemPerMinute(10)",
                    ))
                }
            };
            // The same checks as the rate string `AMOUNT/MULTIPLES UNITs`.
            let (n, w) = parse_limits_rate(&what, &format!("{amount}/{multiples}{unit}s"))?;
            items.push((n, w, line));
        }
    }
    items.sort_by_key(|i| i.2);
    if items.is_empty() {
        return Err(Error::Missing {
            what: "limits".into(),
            key: "a rate string such as \"100/minute\" or \"200 per day\" (in default_limits, @limiter.limit, parse) or a RateLimitItemPerMinute(N)".into(),
            example: "limiter = Limiter(get_remote_address, app=app, default_limits=[\"200 per day\", \"50 per hour\"], strategy=\"moving-window\")".into(),
        });
    }
    items
        .into_iter()
        .map(|(limit, period, line)| {
            let spec = LimiterSpec::parse(&format!(
                "limits:rate={},strategy={}",
                limits_rate_text(limit, period),
                strategy.name()
            ))?;
            Ok(Config {
                source: "limits",
                spec,
                limit,
                period,
                line,
                headers,
            })
        })
        .collect()
}

#[cfg(test)]
// Each reads into a limiter of the `libraries` feature.
#[cfg(feature = "libraries")]
mod tests {
    use super::*;
    use crate::time::{MINUTE, SECOND};

    #[test]
    fn flask_limiters_readme_reads_as_its_limits() {
        let text = r#"
from flask import Flask
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address

app = Flask(__name__)
limiter = Limiter(
    get_remote_address,
    app=app,
    default_limits=["200 per day", "50 per hour"],  # "1/second" in a comment is not a limit
    storage_uri="memory://",
    strategy="moving-window",
)

@app.route("/slow")
@limiter.limit("1 per day")
def slow():
    return ":("

@app.route("/medium")
@limiter.limit("1/second", override_defaults=False)
def medium():
    return ":|"
"#;
        let found = read_limits(text).expect("reads");
        let got: Vec<(u64, Micros, usize, &str)> = found
            .iter()
            .map(|c| (c.limit, c.period, c.line, c.spec.text.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    200,
                    86_400 * SECOND,
                    10,
                    "limits:rate=200/day,strategy=moving-window"
                ),
                (
                    50,
                    3600 * SECOND,
                    10,
                    "limits:rate=50/hour,strategy=moving-window"
                ),
                (
                    1,
                    86_400 * SECOND,
                    16,
                    "limits:rate=1/day,strategy=moving-window"
                ),
                (1, SECOND, 21, "limits:rate=1/second,strategy=moving-window"),
            ]
        );
        assert!(
            !found[0].headers,
            "Flask-Limiter's headers are off by default"
        );
    }

    #[test]
    fn the_limits_library_alone_and_flask_settings_read_too() {
        let text = "from limits import storage, strategies, parse\n\
                    memory_storage = storage.MemoryStorage()\n\
                    moving_window = strategies.MovingWindowRateLimiter(memory_storage)\n\
                    one_per_minute = parse(\"1/minute\")\n\
                    ten = RateLimitItemPerSecond(10, 2)\n";
        let found = read_limits(text).expect("reads");
        assert_eq!(found.len(), 2);
        assert_eq!((found[0].limit, found[0].period), (1, MINUTE));
        assert_eq!(
            (found[1].limit, found[1].period, found[1].line),
            (10, 2 * SECOND, 5)
        );
        assert_eq!(found[0].spec.strategy, Some(LimitsStrategy::MovingWindow));
        let flask = "app.config[\"RATELIMIT_STRATEGY\"] = \"sliding-window-counter\"\n\
                     app.config[\"RATELIMIT_HEADERS_ENABLED\"] = True\n\
                     app.config[\"RATELIMIT_DEFAULT\"] = \"100/minute;1000/hour\"\n";
        let found = read_limits(flask).expect("reads");
        assert_eq!(found.len(), 2);
        assert!(found[0].headers);
        assert_eq!(
            found[0].spec.strategy,
            Some(LimitsStrategy::SlidingWindowCounter)
        );
        let class = "RATELIMIT_STRATEGY = 'fixed-window'\nRATELIMIT_DEFAULT = '5 per 10 seconds'";
        let found = read_limits(class).expect("reads");
        assert_eq!((found[0].limit, found[0].period), (5, 10 * SECOND));
    }

    #[test]
    fn what_limits_would_refuse_is_refused_naming_the_line() {
        let e = read_limits("from slowapi import Limiter\n@limiter.limit(\"5/min\")\n")
            .expect_err("min is not a unit")
            .to_string();
        assert!(e.contains("line 2") && e.contains("second, minute"), "{e}");
        let e = read_limits("import limits\nx = strategies.MovingWindowRateLimiter(s)\nstrategy=\"fixed-window\"\nparse('1/second')")
            .expect_err("two strategies")
            .to_string();
        assert!(
            e.contains("moving-window (line 2)") && e.contains("fixed-window (line 3)"),
            "{e}"
        );
        let e = read_limits("from flask_limiter import Limiter\n")
            .expect_err("no limit")
            .to_string();
        assert!(e.contains("rate string"), "{e}");
    }
}
