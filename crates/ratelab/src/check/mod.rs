//! `ratelab check`: what a limiter's configuration, as a user pasted it, really promises.
//!
//! The configuration is read into the limiter ratelab models it with ([`read_config`]); then,
//! for a window of any length, [`check`] gives the most admissions any arrivals can get into
//! one trailing window (the theory's bound, [`crate::theory::worst_case`]), arrivals that
//! reach it (searched for and run through the model, so the number beside them is the
//! simulator's, never a label), what the boundary burst gets, what `N` instances that each
//! enforce it let through together, and what the limiter tells a rejected client.

mod config;
mod go;
mod js;
mod python;
mod redis;
mod vcl;
mod words;

pub use config::{Config, ACCEPTED};

/// Reads a limiter's configuration from `text`, as users paste it: every limiter it
/// configures, in order. A server's (nginx, HAProxy) or a library's (express-rate-limit,
/// rate-limiter-flexible, Go's `x/time/rate`, redis-cell, vsthrottle, Python's `limits`) options, recognised by
/// their names.
pub fn read_config(text: &str) -> Result<Vec<Config>, Error> {
    if text.contains("RateLimiterMemory") || text.contains("rate-limiter-flexible") {
        return js::read_flexible(text);
    }
    if text.contains("rateLimit(") || text.contains("express-rate-limit") {
        return js::read_express(text);
    }
    if text.contains("NewLimiter(") {
        return go::read_go(text);
    }
    if text.to_ascii_uppercase().contains("CL.THROTTLE") {
        return redis::read_throttle(text);
    }
    if text.contains("vsthrottle") {
        return vcl::read_vsthrottle(text);
    }
    if python::is_python_limits(text) {
        return python::read_limits(text);
    }
    config::read_server(text)
}

use crate::decimal::fixed;
use crate::error::Error;
use crate::limiter::Decide;
use crate::sim::{simulate, Scenario};
use crate::spec::{Replay, TrafficSpec};
use crate::theory;
use crate::time::{format_duration, Micros, MS, SECOND};
use serde::Serialize;
use std::sync::Arc;

/// Requests at one instant: `count` of them at `at_us`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Tick {
    /// When, µs from the start of the arrivals.
    pub at_us: Micros,
    /// How many.
    pub count: u64,
}

/// Arrivals as instants, in order, each with its count.
fn ticks(times: &[Micros]) -> Vec<Tick> {
    let mut out: Vec<Tick> = Vec::new();
    for &t in times {
        match out.last_mut() {
            Some(last) if last.at_us == t => last.count += 1,
            _ => out.push(Tick { at_us: t, count: 1 }),
        }
    }
    out
}

/// What the boundary burst gets: the limit just before one of the configured periods ends and
/// the limit just after.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BurstResult {
    /// Requests sent.
    pub offered: u64,
    /// Requests admitted.
    pub admitted: u64,
    /// The most admitted in any trailing configured period.
    pub busiest: u64,
}

/// What [`check`] finds about one configured limiter.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    /// The kind of configuration read (`nginx`, `haproxy`).
    pub source: &'static str,
    /// The line of the configuration the limiter was read from.
    pub line: usize,
    /// The limiter spec it is (as `ratelab simulate --limiter` takes it).
    pub limiter: String,
    /// The rule as configured, in words.
    pub configured: String,
    /// What the configured rule allows on average in the window asked about: the limit times
    /// the window over the period.
    pub configured_in_window: f64,
    /// The window asked about, µs.
    pub window_us: Micros,
    /// The most admissions in any trailing window of that length, over any arrivals,
    /// counted as `(t − W, t]`: the theory's bound for the model.
    pub worst_window: u64,
    /// Arrivals found that reach it (or come closest): the requests of the busiest window
    /// the model let through, every one admitted.
    pub worst_arrivals: Vec<Tick>,
    /// The busiest window of those arrivals as the model decides them, simulated.
    pub worst_found: u64,
    /// Whether the arrivals found reach the bound.
    pub reached: bool,
    /// What the promise is, in words: "at most N in any W".
    pub promise: String,
    /// The boundary burst around one configured period's end.
    pub boundary_burst: BurstResult,
    /// How many instances, each enforcing this on its own, [`Check::instances_worst`] is for.
    pub instances: u32,
    /// The most those instances admit together in one window.
    pub instances_worst: u64,
    /// What a rejected client is told of when to come back, and whether it can trust it.
    pub retry_after: String,
    /// The counts behind [`Check::retry_after`], where the limiter sends one: of the flood's
    /// rejections, how many a client waiting what it said met another rejection.
    pub retry_after_counts: Option<RetryAfterCounts>,
}

/// How a limiter's `Retry-After` fared over [`check`]'s flood.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RetryAfterCounts {
    /// Rejections of the flood that carried a `Retry-After`.
    pub rejections: u64,
    /// Of them, those where waiting what it said met another rejection.
    pub early: u64,
    /// The longest a client came back before the limiter would admit it, µs.
    pub longest_early_us: Micros,
}

/// The shortest and longest window [`check`] takes.
pub const WINDOW_RANGE: (Micros, Micros) = (MS, 24 * 3600 * SECOND);
/// The most instances [`check`] adds up.
pub const MOST_INSTANCES: u32 = 10_000;

/// Checks one configured limiter over windows of `window` µs (`None`: its own period) and
/// `instances` instances enforcing it each on its own.
pub fn check(config: &Config, window: Option<Micros>, instances: u32) -> Result<Check, Error> {
    let window = window.unwrap_or(config.period);
    if !(WINDOW_RANGE.0..=WINDOW_RANGE.1).contains(&window) {
        return Err(Error::invalid(
            "--window",
            &format_duration(window),
            "a duration from 1ms to 24h",
        ));
    }
    if !(1..=MOST_INSTANCES).contains(&instances) {
        return Err(Error::invalid(
            "--instances",
            &instances.to_string(),
            "a whole number from 1 to 10000",
        ));
    }
    let spec = &config.spec;
    let bound = theory::worst_case(spec, config.limit, window).ok_or_else(|| {
        Error::invalid(
            "limiter",
            &spec.text,
            "a limiter whose worst window is known (ratelab check does not take this one yet)",
        )
    })?;
    // Arrivals that try for the bound: from an empty limiter at one moment of the period
    // (its start, a quarter, half, late, a millisecond and a microsecond before its end), each
    // request sent at the earliest instant the model would admit it (its `retry_after`), for
    // the window and two periods, so that the window can sit anywhere after the start. Every
    // one is admitted, so a limiter that counts rejections counts none, but for a rejection
    // that lets the limiter admit sooner (a block shorter than the window).
    let period = config.period;
    let span = window.saturating_add(2 * period);
    let offsets = [
        0,
        period / 4,
        period / 2,
        period - period / 60,
        period - MS,
        period - 1,
    ];
    // Then the same late starts after one request at 0: a limiter whose periods start at a
    // key's first request (HAProxy's) is anchored there, so that the greedy sender fills the
    // end of that period and then the next as its weight fades.
    let starts = offsets
        .iter()
        .map(|&o| (None, o))
        .chain(offsets[3..].iter().map(|&o| (Some(0), o)));
    let mut best: Option<(u64, Vec<Tick>)> = None;
    for (anchor, start) in starts {
        let times = greedy(config, anchor, start, start.saturating_add(span))?;
        let (found, kept) = busiest(config, window, times)?;
        if best.as_ref().is_none_or(|(b, _)| found > *b) {
            best = Some((found, kept));
        }
        if found >= bound {
            break;
        }
    }
    let (found, arrivals) = best.ok_or_else(|| Error::invalid("limiter", &spec.text, ACCEPTED))?;
    let boundary = boundary_burst(config)?;
    let (retry_after, retry_after_counts) = retry_after_trust(config)?;
    Ok(Check {
        source: config.source,
        line: config.line,
        limiter: spec.text.clone(),
        configured: format!("{} per {}", config.limit, format_duration(period)),
        configured_in_window: config.limit as f64 * window as f64 / period as f64,
        window_us: window,
        worst_window: bound,
        worst_arrivals: arrivals,
        worst_found: found,
        reached: found >= bound,
        promise: format!("at most {bound} in any {}", format_duration(window)),
        boundary_burst: boundary,
        instances,
        instances_worst: bound.saturating_mul(u64::from(instances)),
        retry_after,
        retry_after_counts,
    })
}

/// The limiter `config` configures, fresh, at its own rule (its limit per its period).
fn model(config: &Config) -> Result<crate::limiter::Limiter, Error> {
    let scenario = Scenario {
        limiters: vec![config.spec.clone()],
        limit: config.limit,
        window: config.period,
        ..Scenario::default()
    };
    scenario.build_limiter(&config.spec, 0)
}

/// The most arrivals a greedy sender gets through before `end`, from `start` (after one
/// request at `anchor`, if given): each request at the earliest instant the model admits it.
/// At most [`MOST_ARRIVALS`].
fn greedy(
    config: &Config,
    anchor: Option<Micros>,
    start: Micros,
    end: Micros,
) -> Result<Vec<Micros>, Error> {
    let mut limiter = model(config)?;
    let mut times = Vec::new();
    if let Some(at) = anchor.filter(|&at| at < start) {
        if limiter.decide(at).admitted() {
            times.push(at);
        }
    }
    let mut t = start;
    while t < end && times.len() < MOST_ARRIVALS {
        match limiter.retry_after(t) {
            Some(at) if at < end => {
                // A limiter that blocks after a rejection (rate-limiter-flexible's
                // `blockDuration`) can open its next window sooner for one: the sender sends
                // it when it does.
                if at > t {
                    let mut rejected = limiter.clone();
                    if !rejected.decide(t).admitted()
                        && rejected.retry_after(t).is_some_and(|sooner| sooner < at)
                    {
                        limiter = rejected;
                        times.push(t);
                        continue;
                    }
                }
                if limiter.decide(at).admitted() {
                    times.push(at);
                }
                t = at;
            }
            _ => break,
        }
    }
    Ok(times)
}

/// The most arrivals [`check`]'s sender makes from one start.
pub const MOST_ARRIVALS: usize = 2_000_000;

/// Whether a client that waits what the limiter's `Retry-After` says is admitted: over a
/// flood of four times the limit for three periods, each rejection's header is followed on a
/// copy of the limiter, as if nothing else arrived, and the refusals counted.
fn retry_after_trust(config: &Config) -> Result<(String, Option<RetryAfterCounts>), Error> {
    let mut limiter = model(config)?;
    if !config.headers {
        let text: String = if config.source == "limits" {
            "none: Flask-Limiter and SlowAPI send Retry-After only when their headers are turned on (RATELIMIT_HEADERS_ENABLED = True, headers_enabled=True), which this configuration does not do, and limits alone sends none: a rejected client is told nothing".into()
        } else {
            format!(
                "none: the configuration turns off {}'s headers (legacyHeaders and standardHeaders false), so a rejected client is told nothing",
                config.source
            )
        };
        return Ok((text, None));
    }
    if limiter.header(0).is_none() {
        let text: String = match config.source {
            "nginx" => "nginx sends no Retry-After with its 503 (or limit_req_status) unless the configuration adds one: a rejected client is told nothing".into(),
            "haproxy" => "HAProxy's deny sends no Retry-After unless the configuration adds one: a rejected client is told nothing".into(),
            other => format!("{other} sends no Retry-After: a rejected client is told nothing"),
        };
        return Ok((text, None));
    }
    let every = (config.period / (4 * config.limit).max(1)).max(1);
    // Each request is moved on by a share of a second (or of `every`, if shorter) that the
    // golden ratio spreads evenly, so that the flood meets a header at every phase of the
    // clock's second, as clients do, not only at whole seconds.
    let spread = every.min(SECOND);
    let (mut rejected, mut refused, mut longest_early) = (0u64, 0u64, 0);
    let mut k: u64 = 0;
    loop {
        let t = k * every + (k.wrapping_mul(618_034) % spread);
        k += 1;
        if t >= 3 * config.period || rejected >= 100_000 {
            break;
        }
        let wait = limiter.header(t);
        if !limiter.decide(t).admitted() {
            rejected += 1;
            if let Some(wait) = wait {
                let mut copy = limiter.clone();
                let back = t.saturating_add(wait);
                if !copy.decide(back).admitted() {
                    refused += 1;
                    let admits = limiter.retry_after(t).unwrap_or(back);
                    longest_early = longest_early.max(admits.saturating_sub(back));
                }
            }
        }
    }
    let sent = match config.source {
        "go-rate" => "sent by the middleware in front of it (echo's: the wait rounded up to whole seconds; the library itself sends none)",
        "redis-cell" => "sent as CL.THROTTLE's retry_after, the wait truncated to whole seconds",
        "limits" => "sent by Flask-Limiter as int(int(reset + 1) − now): whole seconds to the second after the reset, truncated",
        _ => "sent, in whole seconds rounded up",
    };
    let text = if refused == 0 {
        format!("{sent}: a client that waits what it says was admitted after every one of {rejected} rejections of a flood at four times the limit")
    } else {
        format!(
            "{sent}, but too early: waiting what it says gets another rejection in {refused} of {rejected} cases ({}%), up to {} early",
            fixed(100.0 * refused as f64 / rejected.max(1) as f64, 1),
            format_duration(longest_early)
        )
    };
    let counts = RetryAfterCounts {
        rejections: rejected,
        early: refused,
        longest_early_us: longest_early,
    };
    Ok((text, Some(counts)))
}

/// The busiest trailing window of `window` µs when the model decides `times`, and the
/// arrivals of that window it admitted.
fn busiest(config: &Config, window: Micros, times: Vec<Micros>) -> Result<(u64, Vec<Tick>), Error> {
    if times.is_empty() {
        return Ok((0, Vec::new()));
    }
    let times: Arc<[Micros]> = times.into();
    let last = times.last().copied().unwrap_or(0);
    let scenario = Scenario {
        limiters: vec![config.spec.clone()],
        traffic: TrafficSpec::Replay(Replay {
            file: "the arrivals found".into(),
            times: times.clone(),
            format: Default::default(),
            filter: None,
        }),
        limit: config.limit,
        window,
        duration: last.saturating_add(window).saturating_add(1),
        runs: 1,
        seed: 1,
    };
    let (stats, trace) = crate::sim::trace(&scenario, 0, 0)?;
    // The window ends at the admission that first made it the busiest, counted as the
    // auditor counts, (end − W, end]; every arrival in it was admitted.
    let base = times[0] - times[0] % window;
    let end = stats.busiest_at + base;
    let kept: Vec<Micros> = trace
        .times
        .iter()
        .zip(&trace.admitted)
        .filter(|&(&t, &ok)| ok && t + base + window > end && t + base <= end)
        .map(|(&t, _)| t + base)
        .collect();
    Ok((stats.busiest, ticks(&kept)))
}

/// The boundary burst at the configured rule: the limit half a second (or a quarter of the
/// period, if shorter) before a period ends and the limit as long after.
fn boundary_burst(config: &Config) -> Result<BurstResult, Error> {
    let gap = (config.period / 4).clamp(1, SECOND / 2);
    let scenario = Scenario {
        limiters: vec![config.spec.clone()],
        traffic: TrafficSpec::BoundaryBurst {
            before: gap,
            after: gap,
            first: None,
            second: None,
        },
        limit: config.limit,
        window: config.period,
        duration: 4 * config.period,
        runs: 1,
        seed: 1,
    };
    let r = &simulate(&scenario)?.results[0];
    Ok(BurstResult {
        offered: r.offered,
        admitted: r.admitted,
        busiest: r.busiest_window_max,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checked(text: &str, window: Option<Micros>) -> Check {
        let configs = read_config(text).expect("reads");
        check(&configs[0], window, 3).expect("checks")
    }

    #[test]
    fn nginx_with_nodelay_promises_its_burst_and_a_second_of_rate_and_the_arrivals_reach_it() {
        let c = checked(
            "limit_req_zone $binary_remote_addr zone=one:10m rate=10r/s;\nlimit_req zone=one burst=5 nodelay;",
            None,
        );
        // burst + 1 at once, then one each whole request leaked: 10 more in the second.
        assert_eq!(c.worst_window, 5 + 1 + 10);
        let sent: u64 = c.worst_arrivals.iter().map(|i| i.count).sum();
        assert_eq!(
            sent, c.worst_found,
            "the arrivals shown are the window's: {c:?}"
        );
        assert!(c.worst_arrivals.last().expect("some").at_us - c.worst_arrivals[0].at_us < SECOND);
        assert!(c.reached, "{c:?}");
        assert_eq!(c.worst_found, c.worst_window);
        assert_eq!(c.instances_worst, 3 * c.worst_window);
        assert_eq!(c.window_us, SECOND);
        // A minute: the burst and a minute of the rate.
        let m = checked(
            "limit_req_zone $x zone=one:10m rate=10r/s;\nlimit_req zone=one burst=5 nodelay;",
            Some(60 * SECOND),
        );
        assert_eq!(m.worst_window, 5 + 1 + 600);
        assert!(m.reached, "{m:?}");
    }

    #[test]
    fn haproxys_counter_that_counts_denials_is_checked_by_simulation() {
        let c = checked(
            "stick-table type ip size 100k expire 30s store http_req_rate(10s)\nhttp-request track-sc0 src\nhttp-request deny deny_status 429 if { sc_http_req_rate(0) gt 20 }",
            None,
        );
        assert_eq!(c.limiter, "haproxy:period=10s,limit=20,record-rejects=true");
        assert!(c.worst_found <= c.worst_window, "{c:?}");
        assert!(
            c.worst_found > 20,
            "the counter lets more than its limit through: {c:?}"
        );
        // Both ticks of the boundary burst fall in one period's reach: the limit gets through.
        assert!(
            c.boundary_burst.admitted >= 20 && c.boundary_burst.offered == 40,
            "{c:?}"
        );
    }

    #[test]
    fn a_window_out_of_range_is_refused_naming_it() {
        let configs = read_config("limit_req_zone $x zone=a:1m rate=1r/s;\nlimit_req zone=a;")
            .expect("reads");
        let e = check(&configs[0], Some(48 * 3600 * SECOND), 1)
            .expect_err("refused")
            .to_string();
        assert!(e.contains("--window") && e.contains("24h"), "{e}");
        let e = check(&configs[0], None, 0)
            .expect_err("refused")
            .to_string();
        assert!(e.contains("--instances"), "{e}");
    }
}
