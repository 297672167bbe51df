//! The probe's set-up: its flags read into a [`Probe`] (what to send, where, how to read
//! the answers), checked before anything is sent.

use crate::args::Format;
use crate::args::{ProbeArgs, SCRIPT_NAMES};
use crate::text::{self, quote};
use ratelab::probe::{Outcome, MAX_TARGETS};
use ratelab::sim::Scenario;
use ratelab::spec::{parse_count, FleetSpec, LimiterSpec, TrafficSpec};
use ratelab::time::{parse_duration, Micros, MS, SECOND};
use ratelab::Error;
use std::net::{IpAddr, ToSocketAddrs};
use std::time::Duration;

/// The Redis recipes `--script` runs, each a Lua script in `redis/`.
pub const SCRIPTS: [(&str, &str, &str); 5] = [
    (
        "sorted-set",
        include_str!("../redis/sorted-set.lua"),
        "sliding-log",
    ),
    (
        "sorted-set-record-rejects",
        include_str!("../redis/sorted-set-record-rejects.lua"),
        "sliding-log:record-rejects=true",
    ),
    ("gcra", include_str!("../redis/gcra.lua"), "gcra"),
    (
        "fixed-window",
        include_str!("../redis/fixed-window.lua"),
        "fixed-window",
    ),
    // (The model is redis-cell's, with --burst, --limit and --window: see below.)
    (
        "redis-cell",
        include_str!("../redis/redis-cell.lua"),
        "redis-cell",
    ),
];

/// Which HTTP statuses mean what.
#[derive(Debug, Clone)]
pub(super) struct Statuses {
    pub(super) admit: Vec<(u16, u16)>,
    pub(super) reject: Vec<(u16, u16)>,
}

impl Statuses {
    pub(super) fn classify(&self, status: u16) -> Outcome {
        let within = |ranges: &[(u16, u16)]| ranges.iter().any(|&(a, b)| (a..=b).contains(&status));
        if within(&self.admit) {
            Outcome::Admitted
        } else if within(&self.reject) {
            Outcome::Rejected
        } else {
            Outcome::Other
        }
    }
}

/// Parses `2xx`, `429`, `500-599` lists, comma-separated.
pub(super) fn parse_statuses(flag: &str, text: &str) -> Result<Vec<(u16, u16)>, String> {
    let bad = |part: &str| {
        format!(
            "invalid {flag} {} in {}: expected HTTP statuses from 100 to 599, like 2xx, 429 or 500-504, separated by commas",
            quote(part),
            quote(text)
        )
    };
    let code = |s: &str| -> Option<u16> {
        let v: u16 = s.parse().ok()?;
        (100..=599).contains(&v).then_some(v)
    };
    let mut out = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        let range = if let Some(class) = part.strip_suffix("xx") {
            match class {
                "1" | "2" | "3" | "4" | "5" => {
                    let c: u16 = class.parse().map_err(|_| bad(part))?;
                    (c * 100, c * 100 + 99)
                }
                _ => return Err(bad(part)),
            }
        } else if let Some((a, b)) = part.split_once('-') {
            match (code(a), code(b)) {
                (Some(a), Some(b)) if a <= b => (a, b),
                _ => return Err(bad(part)),
            }
        } else {
            let c = code(part).ok_or_else(|| bad(part))?;
            (c, c)
        };
        out.push(range);
    }
    Ok(out)
}

/// Where the requests go: one gateway, or several that the router spreads them over.
#[derive(Debug)]
pub(super) enum Target {
    Http {
        /// One URL a gateway.
        urls: Vec<reqwest::Url>,
        headers: Vec<(String, String)>,
        statuses: Statuses,
    },
    Redis {
        url: String,
        script: &'static str,
        source: &'static str,
        burst: u64,
        /// redis-cell's quantity (the other recipes take none).
        quantity: u64,
        /// Gateways: separate connections running the one script on the one key.
        connections: usize,
    },
}

impl Target {
    /// The report's `target`: with one gateway, as it always was.
    pub(super) fn describe(&self) -> String {
        match self {
            Target::Http { urls, .. } => urls
                .iter()
                .map(reqwest::Url::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            Target::Redis {
                url,
                script,
                connections: 1,
                ..
            } => format!("{url} (script {script})"),
            Target::Redis {
                url,
                script,
                connections,
                ..
            } => format!("{url} (script {script}) over {connections} connections"),
        }
    }

    /// Each gateway's target, in the router's numbering.
    pub(super) fn gateways(&self) -> Vec<String> {
        match self {
            Target::Http { urls, .. } => urls.iter().map(reqwest::Url::to_string).collect(),
            Target::Redis {
                url,
                script,
                connections,
                ..
            } => (1..=*connections)
                .map(|k| format!("{url} (script {script}), connection {k}"))
                .collect(),
        }
    }
}

/// A parsed `probe` command line.
#[derive(Debug)]
pub(super) struct Probe {
    pub(super) scenario: Scenario,
    pub(super) target: Target,
    pub(super) model: Option<LimiterSpec>,
    /// With several gateways: how many, the route, and the model fleet's coordination.
    pub(super) fleet: Option<FleetSpec>,
    pub(super) timeout: Duration,
    pub(super) format: Format,
    pub(super) dry_run: bool,
}

/// The longest accepted `--timeout`.
pub(super) const MAX_TIMEOUT: Micros = 60 * SECOND;
/// The shortest accepted `--timeout`.
pub(super) const MIN_TIMEOUT: Micros = MS;
/// The status of a probe stopped by Ctrl-C, as a shell reports a command ended by SIGINT.
pub(super) const INTERRUPTED: u8 = 130;

pub(super) fn show_statuses(ranges: &[(u16, u16)]) -> String {
    ranges
        .iter()
        .map(|&(a, b)| {
            if a == b {
                a.to_string()
            } else if a % 100 == 0 && b == a + 99 {
                format!("{}xx", a / 100)
            } else {
                format!("{a}-{b}")
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Checks a `--header NAME:VALUE`: a token for a name, and a value with no CR, LF or other
/// control character that HTTP refuses (a tab is fine), so nothing can be smuggled into
/// the request.
pub(super) fn parse_header(given: &str) -> Result<(String, String), String> {
    let bad = |why: &str| format!("invalid --header {}: {why}", quote(given));
    let (name, value) = given
        .split_once(':')
        .filter(|(n, _)| {
            !n.is_empty()
                && n.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
        .ok_or_else(|| bad("expected NAME:VALUE, like X-Client:probe-1"))?;
    if value.contains(['\r', '\n']) {
        return Err(bad(
            "a header value cannot hold a CR or LF (it would end the header)",
        ));
    }
    let value = value.trim();
    reqwest::header::HeaderName::from_bytes(name.as_bytes())
        .map_err(|e| bad(&format!("the name is not a header name ({e})")))?;
    reqwest::header::HeaderValue::from_str(value).map_err(|_| {
        bad("a header value holds visible ASCII, spaces and tabs, not control characters")
    })?;
    Ok((name.to_owned(), value.to_owned()))
}

pub(super) fn parse(args: &ProbeArgs) -> Result<Probe, String> {
    let e = |err: Error| text::core(&err);
    let mut scenario = Scenario {
        limit: crate::input::limit(&args.limit)?,
        window: parse_duration("--window", &args.window).map_err(e)?,
        duration: parse_duration("--duration", &args.duration).map_err(e)?,
        seed: parse_count("--seed", &args.seed, 0, u64::MAX).map_err(e)?,
        ..Scenario::default()
    };
    if scenario.duration > ratelab::probe::MAX_DURATION {
        return Err(format!(
            "invalid --duration {}: expected a duration up to 1h",
            quote(&args.duration)
        ));
    }
    let timeout = parse_duration("--timeout", &args.timeout).map_err(e)?;
    if !(MIN_TIMEOUT..=MAX_TIMEOUT).contains(&timeout) {
        return Err(format!(
            "invalid --timeout {}: expected a duration from 1ms to 60s",
            quote(&args.timeout)
        ));
    }
    let script = args
        .script
        .as_deref()
        .map(|name| {
            SCRIPTS.iter().find(|s| s.0 == name).ok_or_else(|| {
                format!(
                    "unknown --script {}: accepted are {}",
                    quote(name),
                    SCRIPT_NAMES.join(", ")
                )
            })
        })
        .transpose()?;
    let burst = args
        .burst
        .as_deref()
        .map(|b| parse_count("--burst", b, 1, 1_000_000))
        .transpose()
        .map_err(e)?;
    let quantity = args
        .quantity
        .as_deref()
        .map(|q| parse_count("--quantity", q, 1, 1_000_000))
        .transpose()
        .map_err(e)?;
    let mut model = args
        .model
        .as_deref()
        .map(LimiterSpec::parse)
        .transpose()
        .map_err(e)?;
    let mut statuses = Statuses {
        admit: vec![(200, 299)],
        reject: vec![(429, 429), (503, 503)],
    };
    if let Some(admit) = &args.admit {
        statuses.admit = parse_statuses("--admit", admit)?;
    }
    if let Some(reject) = &args.reject {
        statuses.reject = parse_statuses("--reject", reject)?;
    }
    let headers = args
        .header
        .iter()
        .map(|h| parse_header(h))
        .collect::<Result<Vec<_>, _>>()?;
    for (a, b) in &statuses.admit {
        if statuses.reject.iter().any(|(c, d)| a <= d && c <= b) {
            return Err(format!(
                "--admit {} and --reject {} overlap: a status can mean only one",
                show_statuses(&statuses.admit),
                show_statuses(&statuses.reject)
            ));
        }
    }
    let mut traffic = args
        .traffic
        .as_deref()
        .map(TrafficSpec::parse)
        .transpose()
        .map_err(e)?
        .ok_or(
            "probe needs --traffic SPEC, e.g. --traffic boundary-burst or --traffic flood:every=10ms",
        )?;
    if let TrafficSpec::Replay(replay) = &mut traffic {
        replay.times = crate::input::read_replay(replay)?;
    }
    scenario.traffic = traffic;
    if args.target.len() as u64 > MAX_TARGETS {
        return Err(format!(
            "{} --target URLs: a probe sends to at most {MAX_TARGETS} gateways (one --target each)",
            args.target.len()
        ));
    }
    let gateways = args
        .gateways
        .as_deref()
        .map(|n| parse_count("--gateways", n, 1, MAX_TARGETS))
        .transpose()
        .map_err(e)?;
    let target = match (args.target.as_slice(), &args.redis) {
        ([_, ..], Some(_)) => {
            return Err("give --target URL (repeated for several gateways) or --redis URL (with --gateways N for several connections), not both".into())
        }
        ([], None) => {
            return Err(
                "probe needs --target URL (an HTTP limiter) or --redis URL --script NAME".into(),
            )
        }
        (urls, None) => {
            if script.is_some() || burst.is_some() || quantity.is_some() {
                return Err("--script, --burst and --quantity go with --redis, not --target".into());
            }
            if let Some(n) = gateways.filter(|&n| n != urls.len() as u64) {
                return Err(format!(
                    "--gateways {n} with {} --target URL(s): with --target each URL is one gateway, so leave --gateways out or give as many URLs",
                    urls.len()
                ));
            }
            let mut parsed_urls = Vec::with_capacity(urls.len());
            for url in urls {
                let parsed = reqwest::Url::parse(url).map_err(|err| {
                    format!(
                        "invalid --target {}: {err}; expected a URL like http://127.0.0.1:8080/api",
                        quote(url)
                    )
                })?;
                if parsed.scheme() != "http" {
                    return Err(format!(
                        "invalid --target {}: expected an http:// URL (probe speaks plain HTTP)",
                        quote(url)
                    ));
                }
                check_host(url, &parsed, args.allow_remote)?;
                parsed_urls.push(parsed);
            }
            Target::Http {
                urls: parsed_urls,
                headers,
                statuses,
            }
        }
        ([], Some(url)) => {
            if args.admit.is_some() || args.reject.is_some() || !headers.is_empty() {
                return Err("--admit, --reject and --header go with --target, not --redis".into());
            }
            let parsed = reqwest::Url::parse(url).map_err(|err| {
                format!(
                    "invalid --redis {}: {err}; expected a URL like redis://127.0.0.1:6379",
                    quote(url)
                )
            })?;
            if parsed.scheme() != "redis" {
                return Err(format!(
                    "invalid --redis {}: expected a redis:// URL",
                    quote(url)
                ));
            }
            check_host(url, &parsed, args.allow_remote)?;
            let &(name, source, _) = script.ok_or(format!(
                "--redis needs --script NAME: one of {}",
                SCRIPT_NAMES.join(", ")
            ))?;
            if burst.is_some() && !matches!(name, "gcra" | "redis-cell") {
                return Err(format!(
                    "--burst goes with --script gcra or redis-cell, not {name}"
                ));
            }
            if quantity.is_some() && name != "redis-cell" {
                return Err(format!(
                    "--quantity goes with --script redis-cell, not {name}"
                ));
            }
            if name == "redis-cell" && scenario.window % 1_000_000 != 0 {
                return Err(format!(
                    "--script redis-cell takes a period of whole seconds (CL.THROTTLE's period): --window {} is not one; the nearest is {}s",
                    ratelab::time::format_duration(scenario.window),
                    ((scenario.window + 500_000) / 1_000_000).max(1)
                ));
            }
            Target::Redis {
                // As parsed: the URL spec drops tabs and newlines, and so does the report.
                url: parsed.to_string(),
                script: name,
                source,
                burst: burst.unwrap_or(scenario.limit),
                quantity: quantity.unwrap_or(1),
                connections: gateways.unwrap_or(1) as usize,
            }
        }
    };
    let (n, default_coord) = match &target {
        Target::Http { urls, .. } => (urls.len(), "local"),
        Target::Redis { connections, .. } => (*connections, "central"),
    };
    let several =
        "several gateways: --target repeated (one URL a gateway) or --redis with --gateways N";
    if n == 1 {
        if let Some(route) = &args.route {
            return Err(format!("--route {} needs {several}", quote(route)));
        }
        if let Some(coord) = &args.coord {
            return Err(format!("--coord {} needs {several}", quote(coord)));
        }
    }
    if let (Some(coord), None, Target::Http { .. }) = (&args.coord, &model, &target) {
        return Err(format!(
            "--coord {} is the model fleet's coordination: give --model SPEC too, e.g. --model nginx:rate=20r/s,burst=5,nodelay --coord local",
            quote(coord)
        ));
    }
    let fleet = if n > 1 {
        Some(
            FleetSpec::parse(
                &n.to_string(),
                args.route.as_deref(),
                Some(args.coord.as_deref().unwrap_or(default_coord)),
            )
            .map_err(e)?,
        )
    } else {
        None
    };
    if model.is_none() {
        if let Target::Redis {
            script,
            burst,
            quantity,
            ..
        } = &target
        {
            // A Redis recipe's own model, unless another is asked for.
            let spec = SCRIPTS.iter().find(|s| s.0 == *script).map_or("", |s| s.2);
            let spec = match *script {
                "gcra" => format!("gcra:burst={burst}"),
                "redis-cell" if *quantity > 1 => format!(
                    "redis-cell:max-burst={burst},count={},period={},quantity={quantity}",
                    scenario.limit,
                    scenario.window / 1_000_000
                ),
                "redis-cell" => format!(
                    "redis-cell:max-burst={burst},count={},period={}",
                    scenario.limit,
                    scenario.window / 1_000_000
                ),
                _ => spec.to_owned(),
            };
            model = Some(LimiterSpec::parse(&spec).map_err(e)?);
        }
    }
    if let Some(m) = &mut model {
        m.fleet = fleet;
    }
    scenario.limiters = vec![model
        .clone()
        .unwrap_or_else(|| LimiterSpec::of(ratelab::LimiterKind::SlidingLog))];
    ratelab::probe::check_size(&scenario).map_err(e)?;
    scenario.validate().map_err(e)?;
    Ok(Probe {
        scenario,
        target,
        model,
        fleet,
        timeout: Duration::from_micros(timeout),
        format: args.format,
        dry_run: args.dry_run,
    })
}

/// Refuses a host that is not a loopback address, unless `--allow-remote` is given.
pub(super) fn check_host(
    given: &str,
    url: &reqwest::Url,
    allow_remote: bool,
) -> Result<(), String> {
    if allow_remote {
        return Ok(());
    }
    let host = url
        .host_str()
        .ok_or_else(|| format!("{} has no host", quote(given)))?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let port = url.port_or_known_default().unwrap_or(6379);
    let addrs: Vec<IpAddr> = match host.parse::<IpAddr>() {
        Ok(ip) => vec![ip],
        Err(_) => (host, port)
            .to_socket_addrs()
            .map_err(|err| format!("cannot resolve {} in {}: {err}", quote(host), quote(given)))?
            .map(|a| a.ip())
            .collect(),
    };
    if addrs.is_empty() || addrs.iter().any(|ip| !ip.is_loopback()) {
        return Err(format!(
            "{} in {} is not a loopback address: probe sends real traffic, so by default only to 127.0.0.0/8, ::1 or localhost; add --allow-remote to send it to {host}",
            quote(host),
            quote(given)
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scripts_are_the_names_script_accepts() {
        let names: Vec<&str> = SCRIPTS.iter().map(|s| s.0).collect();
        assert_eq!(names, SCRIPT_NAMES);
    }
}
