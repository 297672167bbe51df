//! Reading a limiter's configuration as users paste it: an nginx `limit_req_zone` with the
//! `limit_req` that uses it, or an HAProxy stick table with its `track-sc` and deny rule,
//! comments and the surrounding configuration included. Each is turned into the limiter spec
//! ratelab models it with; what is not understood is refused naming the line and what is
//! accepted.

use crate::error::Error;
use crate::limiter::Rate;
use crate::spec::LimiterSpec;
use crate::time::{format_duration, Micros, MS, SECOND};

/// What the pasted text configures: the limiter, the rule it is said to enforce, and where.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The kind of configuration recognised, for messages: `nginx`, `haproxy`.
    pub source: &'static str,
    /// The limiter spec ratelab models it with (as `ratelab simulate --limiter` takes it).
    pub spec: LimiterSpec,
    /// The rule as configured: `limit` per `period`.
    pub limit: u64,
    /// The configured period, µs: nginx's second or minute, HAProxy's `http_req_rate` period.
    pub period: Micros,
    /// The line of the text the limiter's rule was read from (1-based).
    pub line: usize,
    /// Whether the configuration leaves the library's `Retry-After` on (express-rate-limit
    /// turns it off with `legacyHeaders: false` and `standardHeaders: false`).
    pub headers: bool,
}

/// What `ratelab check` accepts, for messages.
pub const ACCEPTED: &str = "an nginx limit_req_zone (rate=Nr/s or Nr/m) with the limit_req that uses it (burst=N, nodelay or delay=N), an HAProxy stick-table storing http_req_rate(PERIOD) with an http-request deny rule on sc_http_req_rate(0) gt N (or sc0_http_req_rate), an express-rate-limit rateLimit({ windowMs, limit }) call, a rate-limiter-flexible new RateLimiterMemory({ points, duration }), a Go rate.NewLimiter(r, b), a redis-cell CL.THROTTLE key max_burst count period, a VCL's vsthrottle.is_denied(key, limit, period), or Python limits rate strings (\"100/minute\", \"200 per day\") with their strategy, alone or under Flask-Limiter or SlowAPI";

/// One statement of a configuration, its words and the line it starts on.
struct Statement {
    words: Vec<String>,
    line: usize,
}

/// The statements of nginx's syntax: `;`-terminated, `#` comments, braces as separators.
fn nginx_statements(text: &str) -> Vec<Statement> {
    let mut out = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut start = 0;
    for (n, line) in text.lines().enumerate() {
        let code = line.split('#').next().unwrap_or("");
        let mut word = String::new();
        let flush = |word: &mut String, words: &mut Vec<String>, start: &mut usize| {
            if !word.is_empty() {
                if words.is_empty() {
                    *start = n + 1;
                }
                words.push(std::mem::take(word));
            }
        };
        for c in code.chars() {
            match c {
                ';' | '{' | '}' => {
                    flush(&mut word, &mut words, &mut start);
                    if !words.is_empty() {
                        out.push(Statement {
                            words: std::mem::take(&mut words),
                            line: start,
                        });
                    }
                }
                c if c.is_whitespace() => flush(&mut word, &mut words, &mut start),
                c => word.push(c),
            }
        }
        flush(&mut word, &mut words, &mut start);
    }
    out
}

/// Reads a server's limiter configuration (nginx, HAProxy) from `text`: every limiter it
/// configures, in order.
pub(super) fn read_server(text: &str) -> Result<Vec<Config>, Error> {
    let nginx = text.contains("limit_req");
    let haproxy = text.contains("http_req_rate") || text.contains("track-sc");
    match (nginx, haproxy) {
        (true, false) => read_nginx(text),
        (false, true) => read_haproxy(text),
        (true, true) => Err(Error::invalid(
            "configuration",
            "nginx and HAProxy directives together",
            "one server's configuration at a time",
        )),
        (false, false) => Err(Error::invalid("configuration", &first_line(text), ACCEPTED)),
    }
}

/// The first line with something on it, for a message.
pub(super) fn first_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("(nothing)")
        .to_owned()
}

/// nginx: each `limit_req` with the zone it names.
fn read_nginx(text: &str) -> Result<Vec<Config>, Error> {
    let statements = nginx_statements(text);
    // Zones: name → (rate, line).
    let mut zones: Vec<(String, Rate, &'static str, usize)> = Vec::new();
    for s in statements.iter().filter(|s| s.words[0] == "limit_req_zone") {
        let at = |what: &str| format!("line {}: limit_req_zone {what}", s.line);
        let mut name = None;
        let mut rate = None;
        for w in &s.words[1..] {
            if let Some(z) = w.strip_prefix("zone=") {
                name = Some(z.split(':').next().unwrap_or(z).to_owned());
            } else if let Some(r) = w.strip_prefix("rate=") {
                rate = Some(nginx_rate(r).ok_or_else(|| {
                    Error::invalid(
                        &at("rate"),
                        r,
                        "a whole number of requests per second or minute: rate=10r/s, rate=30r/m",
                    )
                })?);
            }
        }
        let name = name.ok_or_else(|| Error::Missing {
            what: at("").trim_end().to_owned(),
            key: "zone=NAME:SIZE".into(),
            example: "limit_req_zone $binary_remote_addr zone=one:10m rate=10r/s;".into(),
        })?;
        let (rate, unit) = rate.ok_or_else(|| Error::Missing {
            what: at("").trim_end().to_owned(),
            key: "rate=Nr/s or rate=Nr/m".into(),
            example: "limit_req_zone $binary_remote_addr zone=one:10m rate=10r/s;".into(),
        })?;
        zones.push((name, rate, unit, s.line));
    }
    let mut out = Vec::new();
    for s in statements.iter().filter(|s| s.words[0] == "limit_req") {
        let at = |what: &str| format!("line {}: limit_req {what}", s.line);
        let mut zone = None;
        let mut burst = 0;
        let mut nodelay = false;
        let mut delay = None;
        for w in &s.words[1..] {
            if let Some(z) = w.strip_prefix("zone=") {
                zone = Some(z.to_owned());
            } else if let Some(b) = w.strip_prefix("burst=") {
                burst = b
                    .parse::<u64>()
                    .ok()
                    .filter(|&b| b <= 10_000_000)
                    .ok_or_else(|| {
                        Error::invalid(&at("burst"), b, "a whole number of requests, 0 to 10000000")
                    })?;
            } else if let Some(d) = w.strip_prefix("delay=") {
                delay = Some(
                    d.parse::<u64>()
                        .ok()
                        .filter(|&d| d <= 10_000_000)
                        .ok_or_else(|| {
                            Error::invalid(
                                &at("delay"),
                                d,
                                "a whole number of requests, 0 to 10000000",
                            )
                        })?,
                );
            } else if w == "nodelay" {
                nodelay = true;
            } else {
                return Err(Error::unknown(
                    &at("parameter"),
                    w,
                    "zone=NAME, burst=N, nodelay, delay=N",
                ));
            }
        }
        let zone = zone.ok_or_else(|| Error::Missing {
            what: at("").trim_end().to_owned(),
            key: "zone=NAME".into(),
            example: "limit_req zone=one burst=5 nodelay;".into(),
        })?;
        let Some((_, rate, unit, _)) = zones.iter().find(|z| z.0 == zone) else {
            let known: Vec<&str> = zones.iter().map(|z| z.0.as_str()).collect();
            return Err(Error::invalid(
                &at("zone"),
                &zone,
                &if known.is_empty() {
                    "a zone a limit_req_zone line defines (there is none)".to_owned()
                } else {
                    format!("a zone a limit_req_zone line defines: {}", known.join(", "))
                },
            ));
        };
        let mut text = format!("nginx:rate={}r/{unit},burst={burst}", rate.count);
        match (nodelay, delay) {
            (true, _) => text.push_str(",nodelay"),
            (false, Some(d)) => text.push_str(&format!(",delay={d}")),
            (false, None) => {}
        }
        out.push(Config {
            source: "nginx",
            spec: LimiterSpec::parse(&text)?,
            limit: rate.count,
            period: rate.per,
            line: s.line,
            headers: true,
        });
    }
    if out.is_empty() {
        return Err(match zones.first() {
            Some((name, _, _, line)) => Error::Missing {
                what: format!("line {line}: zone {name}"),
                key: format!("a limit_req zone={name} line that uses it"),
                example: format!("limit_req zone={name} burst=5 nodelay;"),
            },
            None => Error::invalid("configuration", &first_line(text), ACCEPTED),
        });
    }
    Ok(out)
}

/// nginx's `rate=`: `Nr/s` or `Nr/m`, with its unit's letter.
fn nginx_rate(text: &str) -> Option<(Rate, &'static str)> {
    let (n, unit) = text.split_once("r/")?;
    let count: u64 = n.parse().ok().filter(|&n| (1..=1_000_000).contains(&n))?;
    match unit {
        "s" => Some((Rate { count, per: SECOND }, "s")),
        "m" => Some((
            Rate {
                count,
                per: 60 * SECOND,
            },
            "m",
        )),
        _ => None,
    }
}

/// HAProxy: the stick table's `http_req_rate(PERIOD)` and the deny rule's threshold.
fn read_haproxy(text: &str) -> Result<Vec<Config>, Error> {
    let mut period = None;
    let mut rule = None;
    let mut tracked = false;
    // Named ACLs that test the tracked rate (`acl too_many sc_http_req_rate(0) gt 100`),
    // which a deny rule can name (`http-request deny if too_many`): the ACL's line, by name.
    let acls: Vec<(&str, &str)> = text
        .lines()
        .map(|raw| raw.split('#').next().unwrap_or("").trim())
        .filter_map(|line| {
            let rest = line.strip_prefix("acl ")?;
            let name = rest.split_whitespace().next()?;
            haproxy_threshold(line).map(|_| (name, line))
        })
        .collect();
    for (n, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        let at = |what: &str| format!("line {}: {what}", n + 1);
        if let Some(i) = line.find("http_req_rate(") {
            if line.contains("store") || line.starts_with("stick-table") {
                let rest = &line[i + "http_req_rate(".len()..];
                let inside = rest.split(')').next().unwrap_or("");
                period = Some((
                    haproxy_duration(inside).ok_or_else(|| {
                        Error::invalid(
                            &at("http_req_rate period"),
                            inside,
                            "a duration in HAProxy's units from 2ms to 298h: 10s, 1m, 500ms",
                        )
                    })?,
                    n + 1,
                ));
            }
        }
        if line.contains("track-sc") {
            tracked = true;
        }
        if line.starts_with("http-request deny") || line.starts_with("http-request return") {
            // The condition, written in the rule or in an ACL it names after `if`.
            let named = line.split_once(" if ").and_then(|(_, cond)| {
                cond.split_whitespace()
                    .find_map(|w| acls.iter().find(|(name, _)| *name == w))
                    .map(|&(_, acl)| acl)
            });
            let tested = haproxy_threshold(line).or_else(|| named.and_then(haproxy_threshold));
            if let Some(threshold) = tested {
                let (op, value) = threshold.map_err(|v| {
                    Error::invalid(
                        &at("deny rule's threshold"),
                        &v,
                        "a whole number after gt or ge, 1 to 10000000",
                    )
                })?;
                let limit = if op == "ge" {
                    value.saturating_sub(1)
                } else {
                    value
                };
                if limit == 0 {
                    return Err(Error::invalid(
                        &at("deny rule"),
                        line,
                        "a threshold that lets at least one request through (gt 0 or more, ge 1 or more)",
                    ));
                }
                rule = Some((limit, n + 1));
            }
        }
    }
    let (period, _) = period.ok_or_else(|| Error::Missing {
        what: "HAProxy configuration".into(),
        key: "a stick-table that stores http_req_rate(PERIOD)".into(),
        example: "stick-table type ip size 100k expire 30s store http_req_rate(10s)".into(),
    })?;
    let (limit, line) = rule.ok_or_else(|| Error::Missing {
        what: "HAProxy configuration".into(),
        key: "an http-request deny rule on sc_http_req_rate(0) gt N".into(),
        example: "http-request deny deny_status 429 if { sc_http_req_rate(0) gt 20 }".into(),
    })?;
    if !tracked {
        return Err(Error::Missing {
            what: "HAProxy configuration".into(),
            key: "an http-request track-sc0 rule that counts the requests".into(),
            example: "http-request track-sc0 src".into(),
        });
    }
    // The common recipe tracks every request before the deny rule: denied ones count too.
    let text = format!(
        "haproxy:period={},limit={limit},record-rejects=true",
        format_duration(period)
    );
    Ok(vec![Config {
        source: "haproxy",
        spec: LimiterSpec::parse(&text)?,
        limit,
        period,
        line,
        headers: true,
    }])
}

/// The deny rule's comparison on the tracked rate, `(operator, value)`; `Err` with the text
/// after the operator when it is not a number; `None` when the rule does not test the rate.
fn haproxy_threshold(line: &str) -> Option<Result<(&'static str, u64), String>> {
    let after = if let Some(i) = line.find("sc_http_req_rate(") {
        line[i..].split_once(')')?.1
    } else {
        let i = line.find("sc0_http_req_rate")?;
        let rest = &line[i + "sc0_http_req_rate".len()..];
        match rest.strip_prefix('(') {
            Some(args) => args.split_once(')')?.1,
            None => rest,
        }
    };
    let mut words = after.split_whitespace();
    let op = match words.next()? {
        "gt" | ">" => "gt",
        "ge" | ">=" => "ge",
        _ => return None,
    };
    let value = words.next().unwrap_or("").trim_end_matches('}');
    Some(
        value
            .parse::<u64>()
            .ok()
            .filter(|&v| v <= 10_000_000)
            .map(|v| (op, v))
            .ok_or_else(|| value.to_owned()),
    )
}

/// A duration in HAProxy's units (`us`, `ms`, `s`, `m`, `h`, `d`; a bare number is ms), in
/// whole milliseconds from 2 ms, as HAProxy keeps periods.
fn haproxy_duration(text: &str) -> Option<Micros> {
    let text = text.trim();
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let n: u64 = text[..digits].parse().ok()?;
    let unit = match &text[digits..] {
        "" | "ms" => MS,
        "s" => SECOND,
        "m" => 60 * SECOND,
        "h" => 3600 * SECOND,
        "d" => 86_400 * SECOND,
        _ => return None,
    };
    let us = n.checked_mul(unit)?;
    (2 * MS..=crate::spec::MAX_HAPROXY_PERIOD)
        .contains(&us)
        .then_some(us)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::read_config;

    #[test]
    fn an_nginx_config_with_comments_and_other_directives_reads_as_its_limiter() {
        let text = "http {\n    # 10 a second per address\n    limit_req_zone $binary_remote_addr zone=one:10m rate=10r/s;\n    server {\n        location /api/ {\n            limit_req zone=one burst=5 nodelay; # bursts of 5\n            proxy_pass http://backend;\n        }\n    }\n}\n";
        let configs = read_server(text).expect("reads");
        assert_eq!(configs.len(), 1);
        let c = &configs[0];
        assert_eq!(c.spec.text, "nginx:rate=10r/s,burst=5,nodelay");
        assert_eq!((c.limit, c.period, c.line), (10, SECOND, 6));
        let m = read_config("limit_req_zone $x zone=a:1m rate=30r/m;\nlimit_req zone=a;")
            .expect("reads");
        assert_eq!(m[0].spec.text, "nginx:rate=30r/m,burst=0");
        assert_eq!(m[0].period, 60 * SECOND);
    }

    #[test]
    fn an_haproxy_config_reads_as_its_counter() {
        let text = "frontend web\n    bind :80\n    stick-table type ip size 100k expire 30s store http_req_rate(10s)\n    http-request track-sc0 src\n    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 20 }\n    default_backend app\n";
        let c = &read_config(text).expect("reads")[0];
        assert_eq!(
            c.spec.text,
            "haproxy:period=10s,limit=20,record-rejects=true"
        );
        assert_eq!((c.limit, c.period, c.line), (20, 10 * SECOND, 5));
        let ge = text.replace("gt 20", "ge 20");
        assert_eq!(read_config(&ge).expect("reads")[0].limit, 19);
    }

    #[test]
    fn a_deny_rule_naming_an_acl_reads_the_acls_threshold() {
        let text = "frontend fe_main\n    bind *:80\n    stick-table type ip size 1m expire 10m store http_req_rate(1m)\n    http-request track-sc0 src\n    acl too_many sc_http_req_rate(0) gt 100\n    http-request deny deny_status 429 if too_many\n";
        let c = &read_config(text).expect("reads")[0];
        assert_eq!(
            c.spec.text,
            "haproxy:period=1min,limit=100,record-rejects=true"
        );
        assert_eq!((c.limit, c.period, c.line), (100, 60 * SECOND, 6));
        // `unless` the ACL is not a limit: refused as a configuration without a deny rule.
        let e = read_config(&text.replace(" if too_many", " unless too_many"))
            .expect_err("refused")
            .to_string();
        assert!(e.contains("deny rule"), "{e}");
    }

    #[test]
    fn what_is_not_understood_is_named_with_its_line_and_what_is_accepted() {
        let e = read_config("limit_req_zone $x zone=a:1m rate=10r/h;\nlimit_req zone=a;")
            .expect_err("refused")
            .to_string();
        assert!(
            e.contains("line 1") && e.contains("10r/h") && e.contains("r/s"),
            "{e}"
        );
        let e = read_config("limit_req_zone $x zone=a:1m rate=1r/s;\nlimit_req zone=b;")
            .expect_err("refused")
            .to_string();
        assert!(
            e.contains("line 2") && e.contains("zone") && e.contains(": a"),
            "{e}"
        );
        let e = read_config("hello world").expect_err("refused").to_string();
        assert!(
            e.contains("hello world") && e.contains("limit_req_zone"),
            "{e}"
        );
        let e = read_config("stick-table type ip store http_req_rate(10s)\nhttp-request track-sc0 src\nhttp-request deny if { sc_http_req_rate(0) gt lots }")
            .expect_err("refused")
            .to_string();
        assert!(e.contains("line 3") && e.contains("lots"), "{e}");
    }
}
