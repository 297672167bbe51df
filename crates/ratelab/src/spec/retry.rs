//! The retrying client's part of the scenario language: `retry:rate=N/DUR,spike=S,at=DUR,
//! tries=M,policy=fixed|exponential,...` with its backoff, jitter, budget, `Retry-After` and
//! fleet size.

#[cfg(feature = "mix")]
use super::parse::split_pairs;
use super::parse::{parse_count, parse_rate, Keys, MAX_TRIES};
use crate::error::Error;
use crate::limiter::Rate;
#[cfg(feature = "clients")]
use crate::time::MINUTE;
use crate::time::{parse_duration, SECOND};
use crate::traffic::{Backoff, ClientGroup, Jitter, RetryPolicy};

/// The most clients of one retrying fleet.
pub const MAX_CLIENTS: u64 = 10_000;

/// The keys `retry` accepts, for messages.
#[cfg(not(feature = "clients"))]
pub(super) const RETRY_KEYS: &str = "rate=N/DUR, spike=S, at=DUR, tries=M, every=DUR";
/// The keys `retry` accepts, for messages.
#[cfg(feature = "clients")]
pub(super) const RETRY_KEYS: &str = "rate=N/DUR, spike=S, at=DUR, tries=M, every=DUR, policy=fixed|exponential, base=DUR, factor=X, cap=DUR, jitter=none|full|equal|decorrelated, budget=X%, retry-after=ignore|honor, clients=M";

/// `retry`'s keys, read: what `TrafficSpec::Retry` holds, but its mix.
pub(super) struct RetryKeys {
    pub(super) rate: Rate,
    pub(super) spike: u64,
    pub(super) at: crate::time::Micros,
    pub(super) tries: u32,
    pub(super) every: crate::time::Micros,
    pub(super) policy: RetryPolicy,
    pub(super) clients: u32,
}

/// Parses `retry`'s keys.
pub(super) fn parse_retry(get: &mut Keys<'_>) -> Result<RetryKeys, Error> {
    let rate = match get.take("rate") {
        Some(v) => parse_rate("retry: rate", v)?,
        None => Rate {
            count: 25,
            per: 60 * SECOND,
        },
    };
    let spike = match get.take("spike") {
        Some(v) => parse_count("retry: spike", v, 0, 10_000_000)?,
        None => 200,
    };
    let at = match get.take("at") {
        Some(v) => parse_duration("retry: at", v)?,
        None => 5 * 60 * SECOND,
    };
    let tries = parse_tries(get)?;
    let (every, policy, clients) = parse_policy(get)?;
    Ok(RetryKeys {
        rate,
        spike,
        at,
        tries,
        every,
        policy,
        clients,
    })
}

/// `tries=M`: tries per request in all, 5 if not given.
fn parse_tries(get: &mut Keys<'_>) -> Result<u32, Error> {
    match get.take("tries") {
        Some(v) => Ok(parse_count("retry: tries", v, 1, MAX_TRIES)? as u32),
        None => Ok(5),
    }
}

/// The most groups of one mix, the spec's own included.
pub const MAX_GROUPS: usize = 8;

/// The keys a group of a mix accepts, for messages.
#[cfg(feature = "mix")]
const GROUP_KEYS: &str = "clients=M, tries=M, every=DUR, policy=fixed|exponential, base=DUR, factor=X, cap=DUR, jitter=none|full|equal|decorrelated, budget=X%, retry-after=ignore|honor (rate, spike and at are the spec's, for every client)";

/// Parses the groups of a mix, `+clients=M,key=value,...` each, after a retry spec: clients
/// with the same first tries as the spec's (its rate, spike and at) and their own tries and
/// policy. Refuses a mix of more than [`MAX_GROUPS`] groups or [`MAX_CLIENTS`] clients.
#[cfg(feature = "mix")]
pub(super) fn parse_mix<'a>(
    clients: u32,
    mix: &mut Vec<ClientGroup>,
    groups: impl Iterator<Item = &'a str>,
) -> Result<(), Error> {
    for text in groups {
        let pairs = split_pairs("retry mix", text)?;
        let mut get = Keys::new("retry", pairs);
        let tries = parse_tries(&mut get)?;
        let (every, policy, m) = parse_policy(&mut get)?;
        if let Some((k, _)) = get.pairs.first() {
            return Err(Error::unknown(
                "key for a group of a retry mix",
                k,
                GROUP_KEYS,
            ));
        }
        mix.push(ClientGroup {
            clients: m,
            tries,
            every,
            policy,
        });
        if mix.len() + 1 > MAX_GROUPS {
            return Err(Error::invalid(
                "retry: mix",
                &format!("{} groups", mix.len() + 1),
                &format!("at most {MAX_GROUPS} groups of clients, the spec's own included"),
            ));
        }
    }
    let all = u64::from(clients) + mix.iter().map(|g| u64::from(g.clients)).sum::<u64>();
    if all > MAX_CLIENTS {
        return Err(Error::invalid(
            "retry: clients",
            &format!("{all} in all"),
            &format!("at most {MAX_CLIENTS} clients over every group of the mix"),
        ));
    }
    Ok(())
}

/// Without the core's `clients` feature (the page's wasm modules): the essays' client only;
/// the policy's keys are unknown keys.
#[cfg(not(feature = "clients"))]
fn parse_policy(get: &mut Keys<'_>) -> Result<(crate::time::Micros, RetryPolicy, u32), Error> {
    Ok((
        get.duration_min("every", SECOND, 1)?,
        RetryPolicy::default(),
        1,
    ))
}

/// The gap, the policy and the fleet size.
#[cfg(feature = "clients")]
fn parse_policy(get: &mut Keys<'_>) -> Result<(crate::time::Micros, RetryPolicy, u32), Error> {
    let exponential = match get.take("policy") {
        None | Some("fixed") => false,
        Some("exponential") => true,
        Some(v) => return Err(Error::invalid("retry: policy", v, "fixed or exponential")),
    };
    let only = |key: &str, policy: &str| {
        Error::invalid(
            &format!("retry: {key}"),
            &format!(
                "policy={}",
                if exponential { "exponential" } else { "fixed" }
            ),
            &format!("{key}= only with policy={policy}"),
        )
    };
    let (every, backoff) = if exponential {
        if get.take("every").is_some() {
            return Err(only(
                "every",
                "fixed (exponential backoff takes base, factor, cap)",
            ));
        }
        let base = get.duration_min("base", SECOND, 1)?;
        let factor = match get.take("factor") {
            None => 2000,
            Some(v) => parse_thousandths(
                "retry: factor",
                v,
                1000,
                100_000,
                "a factor from 1 to 100 with at most 3 decimals, like 2 or 1.5",
            )?,
        };
        let cap = get.duration_min("cap", MINUTE, 1)?;
        if cap < base {
            return Err(Error::invalid(
                "retry: cap",
                &crate::time::format_duration(cap),
                &format!(
                    "a cap of at least base ({})",
                    crate::time::format_duration(base)
                ),
            ));
        }
        (SECOND, Backoff::Exponential { base, factor, cap })
    } else {
        for key in ["base", "factor", "cap"] {
            if get.take(key).is_some() {
                return Err(only(key, "exponential"));
            }
        }
        (get.duration_min("every", SECOND, 1)?, Backoff::Fixed)
    };
    let jitter = match get.take("jitter") {
        None | Some("none") => Jitter::None,
        Some("full") => Jitter::Full,
        Some("equal") => Jitter::Equal,
        Some("decorrelated") if exponential => Jitter::Decorrelated,
        Some("decorrelated") => {
            return Err(Error::invalid(
                "retry: jitter",
                "decorrelated",
                "none, full or equal with policy=fixed (decorrelated grows from the last wait: policy=exponential)",
            ))
        }
        Some(v) => {
            return Err(Error::invalid(
                "retry: jitter",
                v,
                "none, full, equal or decorrelated",
            ))
        }
    };
    let budget = match get.take("budget") {
        None => None,
        Some(v) => {
            let accepted =
                "a percentage of first tries from 0% to 1000% with at most 4 decimals, like 10%";
            // X% with 4 decimals, in ten-thousandths of a percent: millionths of a first try.
            let ppm = v
                .strip_suffix('%')
                .and_then(|n| parse_scaled(n, 4))
                .filter(|&p| p <= 10_000_000)
                .ok_or_else(|| Error::invalid("retry: budget", v, accepted))?;
            Some(ppm)
        }
    };
    let honor = match get.take("retry-after") {
        None | Some("ignore") => false,
        Some("honor") => true,
        Some(v) => return Err(Error::invalid("retry: retry-after", v, "ignore or honor")),
    };
    let clients = match get.take("clients") {
        None => 1,
        Some(v) => parse_count("retry: clients", v, 1, MAX_CLIENTS)? as u32,
    };
    Ok((
        every,
        RetryPolicy {
            backoff,
            jitter,
            budget,
            honor,
        },
        clients,
    ))
}

#[cfg(feature = "clients")]
/// `text` (a plain decimal with at most `digits` decimals) times `10^digits`, exactly.
fn parse_scaled(text: &str, digits: u32) -> Option<u64> {
    // (No `str::contains`: its code for a pattern of any char costs the page 2.6 KB.)
    let (whole, frac, point) = match text.split_once('.') {
        Some((whole, frac)) => (whole, frac, true),
        None => (text, "", false),
    };
    let plain = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty()
        || !plain(whole)
        || !plain(frac)
        || frac.len() > digits as usize
        || (point && frac.is_empty())
    {
        return None;
    }
    let scale = 10u64.pow(digits);
    let w: u64 = whole.parse().ok()?;
    let f: u64 = if frac.is_empty() {
        0
    } else {
        frac.parse::<u64>().ok()? * 10u64.pow(digits - frac.len() as u32)
    };
    w.checked_mul(scale)?.checked_add(f)
}

#[cfg(feature = "clients")]
/// A decimal with at most 3 decimals, in thousandths, from `min` to `max` thousandths.
fn parse_thousandths(
    what: &str,
    text: &str,
    min: u64,
    max: u64,
    accepted: &str,
) -> Result<u64, Error> {
    parse_scaled(text, 3)
        .filter(|v| (min..=max).contains(v))
        .ok_or_else(|| Error::invalid(what, text, accepted))
}

/// The keys of a retry spec that differ from the essays' client, as `key=value` (for the
/// canonical text: a classic spec's text is what it always was).
pub fn policy_keys(policy: &RetryPolicy, clients: u32) -> Vec<String> {
    let d = crate::time::format_duration;
    let mut keys = Vec::new();
    if let Backoff::Exponential { base, factor, cap } = policy.backoff {
        keys.push("policy=exponential".into());
        keys.push(format!("base={}", d(base)));
        keys.push(format!("factor={}", decimal(factor, 3)));
        keys.push(format!("cap={}", d(cap)));
    }
    match policy.jitter {
        Jitter::None => {}
        Jitter::Full => keys.push("jitter=full".into()),
        Jitter::Equal => keys.push("jitter=equal".into()),
        Jitter::Decorrelated => keys.push("jitter=decorrelated".into()),
    }
    if let Some(b) = policy.budget {
        keys.push(format!("budget={}%", decimal(b, 4)));
    }
    if policy.honor {
        keys.push("retry-after=honor".into());
    }
    if clients != 1 {
        keys.push(format!("clients={clients}"));
    }
    keys
}

/// The keys of a group of a mix, as `+` and these joined by commas write it: its clients,
/// tries, fixed gap (for the fixed policy) and the policy's keys.
pub fn group_keys(group: &ClientGroup) -> Vec<String> {
    let mut keys = vec![
        format!("clients={}", group.clients),
        format!("tries={}", group.tries),
    ];
    if group.policy.backoff == Backoff::Fixed {
        keys.push(format!(
            "every={}",
            crate::time::format_duration(group.every)
        ));
    }
    keys.extend(policy_keys(&group.policy, 1));
    keys
}

/// `v / 10^digits` as a short decimal.
fn decimal(v: u64, digits: u32) -> String {
    let scale = 10u64.pow(digits);
    let (w, f) = (v / scale, v % scale);
    if f == 0 {
        return w.to_string();
    }
    let frac = format!("{f:0width$}", width = digits as usize);
    format!("{w}.{}", frac.trim_end_matches('0'))
}
