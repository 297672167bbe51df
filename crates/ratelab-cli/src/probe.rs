//! `ratelab probe`: sends a scenario's arrivals in real time to a live limiter (an HTTP
//! gateway, or a Redis script), records how each request was answered and audits the record
//! with the simulator's auditor (`ratelab::probe`).
//!
//! Timing: the schedule runs on this thread, which sleeps until about 200 µs before each send
//! and spins the rest, then hands the request to a tokio runtime. A request's send time is
//! taken when its task starts, just before the request is written, so the reported lateness
//! includes any wait for the runtime. Requests never wait for each other: every one is its own
//! task, so a slow answer delays nothing but itself.

use crate::args::ProbeArgs;
use crate::text::{self, quote};
use crate::{Done, Format};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use ratelab::limiter::Router;
use ratelab::probe::{Answer, Due, Outcome, Plan, ProbeMeta, ProbeReport, Record, MAX_TARGETS};
use ratelab::rng::{Rng, Stream};
use ratelab::sim::Scenario;
use ratelab::spec::{parse_count, FleetSpec, LimiterSpec, TrafficSpec};
use ratelab::time::{format_duration, parse_duration, Micros, MS, SECOND};
use ratelab::Error;
use std::io::IsTerminal;
use std::net::{IpAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The Redis recipes `--script` runs, each a Lua script in `redis/`.
pub const SCRIPTS: [(&str, &str, &str); 4] = [
    (
        "sorted-set",
        include_str!("redis/sorted-set.lua"),
        "sliding-log",
    ),
    (
        "sorted-set-record-rejects",
        include_str!("redis/sorted-set-record-rejects.lua"),
        "sliding-log:record-rejects=true",
    ),
    ("gcra", include_str!("redis/gcra.lua"), "gcra"),
    (
        "fixed-window",
        include_str!("redis/fixed-window.lua"),
        "fixed-window",
    ),
];

/// The names `--script` accepts.
pub(crate) const SCRIPT_NAMES: [&str; 4] = [
    "sorted-set",
    "sorted-set-record-rejects",
    "gcra",
    "fixed-window",
];

/// Which HTTP statuses mean what.
#[derive(Debug, Clone)]
struct Statuses {
    admit: Vec<(u16, u16)>,
    reject: Vec<(u16, u16)>,
}

impl Statuses {
    fn classify(&self, status: u16) -> Outcome {
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
fn parse_statuses(flag: &str, text: &str) -> Result<Vec<(u16, u16)>, String> {
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
enum Target {
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
        /// Gateways: separate connections running the one script on the one key.
        connections: usize,
    },
}

impl Target {
    /// The report's `target`: with one gateway, as it always was.
    fn describe(&self) -> String {
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
    fn gateways(&self) -> Vec<String> {
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
struct Probe {
    scenario: Scenario,
    target: Target,
    model: Option<LimiterSpec>,
    /// With several gateways: how many, the route, and the model fleet's coordination.
    fleet: Option<FleetSpec>,
    timeout: Duration,
    format: Format,
    dry_run: bool,
}

/// The longest accepted `--timeout`.
const MAX_TIMEOUT: Micros = 60 * SECOND;
/// The shortest accepted `--timeout`.
const MIN_TIMEOUT: Micros = MS;
/// The status of a probe stopped by Ctrl-C, as a shell reports a command ended by SIGINT.
const INTERRUPTED: u8 = 130;

pub(crate) fn main(args: &ProbeArgs, given: &[String]) -> Result<Done, String> {
    let probe = parse(args)?;
    let plan = Plan::new(&probe.scenario).map_err(|e| text::core(&e))?;
    let command = format!(
        "ratelab probe {}",
        given
            .iter()
            .map(|a| ratelab::text::shell_word(a))
            .collect::<Vec<_>>()
            .join(" ")
    );
    let what = match &probe.target {
        Target::Http { statuses, .. } => format!(
            "admitted: {}; rejected: {}",
            show_statuses(&statuses.admit),
            show_statuses(&statuses.reject)
        ),
        Target::Redis { .. } => "admitted: the script returns 1; rejected: 0".into(),
    };
    let to = match &probe.fleet {
        Some(f) => format!(
            "{} gateways, --route {}: {}",
            f.gateways,
            f.route_text(),
            probe.target.describe()
        ),
        None => probe.target.describe(),
    };
    let line = format!(
        "ratelab probe: {} {} to {}, {} per {}; {what}; timeout {}",
        if probe.dry_run {
            "would send"
        } else {
            "sending"
        },
        plan.summary.describe(),
        to,
        probe.scenario.limit,
        format_duration(probe.scenario.window),
        format_duration(probe.timeout.as_micros() as u64),
    );
    if probe.dry_run {
        text::note(&line);
        return Ok(Done::ok(String::new()));
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    // Ctrl-C is caught from here on (before the line that says sending starts).
    let stop = catch_ctrl_c(&rt)?;
    text::note(&line);
    let records = send(&probe, plan, &rt, &stop)?;
    rt.shutdown_timeout(Duration::from_millis(100));
    let partial = stop.load(Ordering::SeqCst);
    let model = match &probe.model {
        Some(spec) => Some((
            spec.text.as_str(),
            probe
                .scenario
                .build_limiter(spec, 0)
                .map_err(|e| text::core(&e))?,
        )),
        None => None,
    };
    let mut report = ProbeReport::new(
        ProbeMeta {
            target: probe.target.describe(),
            scenario: &probe.scenario,
            command: Some(command),
            gateways: if probe.fleet.is_some() {
                probe.target.gateways()
            } else {
                Vec::new()
            },
            route: probe.fleet.map(|f| f.route_text()),
        },
        &records,
        model,
    );
    report.partial = partial;
    if let Some(c) = &mut report.comparison {
        c.model = crate::parsed_spec(&c.model);
        c.coord = probe.fleet.map(|f| f.coord_text());
    }
    let out = match probe.format {
        Format::Json => {
            let mut s = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
            s.push('\n');
            s
        }
        Format::Table => table(&report),
    };
    Ok(Done {
        text: out,
        status: if partial { INTERRUPTED } else { 0 },
    })
}

/// Sets the returned flag on Ctrl-C (SIGINT); a second Ctrl-C ends the program at once.
/// The handler is in place when this returns.
fn catch_ctrl_c(rt: &tokio::runtime::Runtime) -> Result<Arc<AtomicBool>, String> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let _entered = rt.enter();
        let mut sigint =
            signal(SignalKind::interrupt()).map_err(|e| format!("cannot catch Ctrl-C: {e}"))?;
        rt.spawn(async move {
            if sigint.recv().await.is_some() {
                flag.store(true, Ordering::SeqCst);
                text::note("ratelab probe: Ctrl-C: sending stopped; waiting for the answers in flight (Ctrl-C again to quit without a report)");
            }
            if sigint.recv().await.is_some() {
                text::note("ratelab probe: stopped without a report");
                std::process::exit(i32::from(INTERRUPTED));
            }
        });
    }
    #[cfg(not(unix))]
    rt.spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            flag.store(true, Ordering::SeqCst);
            text::note("ratelab probe: Ctrl-C: sending stopped; waiting for the answers in flight (Ctrl-C again to quit without a report)");
        }
        if tokio::signal::ctrl_c().await.is_ok() {
            text::note("ratelab probe: stopped without a report");
            std::process::exit(i32::from(INTERRUPTED));
        }
    });
    Ok(stop)
}

fn show_statuses(ranges: &[(u16, u16)]) -> String {
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
fn parse_header(given: &str) -> Result<(String, String), String> {
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

fn parse(args: &ProbeArgs) -> Result<Probe, String> {
    let e = |err: Error| text::core(&err);
    let mut scenario = Scenario {
        limit: crate::limit(&args.limit)?,
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
        replay.times = crate::read_replay(replay)?;
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
            if script.is_some() || burst.is_some() {
                return Err("--script and --burst go with --redis, not --target".into());
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
            if burst.is_some() && name != "gcra" {
                return Err(format!("--burst goes with --script gcra, not {name}"));
            }
            Target::Redis {
                // As parsed: the URL spec drops tabs and newlines, and so does the report.
                url: parsed.to_string(),
                script: name,
                source,
                burst: burst.unwrap_or(scenario.limit),
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
        if let Target::Redis { script, burst, .. } = &target {
            // A Redis recipe's own model, unless another is asked for.
            let spec = SCRIPTS.iter().find(|s| s.0 == *script).map_or("", |s| s.2);
            let spec = if *script == "gcra" {
                format!("gcra:burst={burst}")
            } else {
                spec.to_owned()
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
fn check_host(given: &str, url: &reqwest::Url, allow_remote: bool) -> Result<(), String> {
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

/// The client every request's task shares.
enum Client {
    Http {
        client: reqwest::Client,
        /// One a gateway.
        urls: Vec<reqwest::Url>,
        headers: reqwest::header::HeaderMap,
        statuses: Statuses,
    },
    Redis {
        /// One connection a gateway.
        conns: Vec<redis::aio::MultiplexedConnection>,
        script: redis::Script,
        key: String,
        limit: u64,
        window: Micros,
        burst: u64,
    },
}

/// The delay an HTTP `Retry-After` gives, in µs: RFC 9110's delay-seconds, a whole number of
/// seconds (a number too large to hold saturates, and is then past any probe's hour). An
/// HTTP-date, or anything else, is not read: a date has one-second resolution on the server's
/// clock against the probe's, no timing to test a client by.
pub(crate) fn retry_after(value: &[u8]) -> Option<Micros> {
    let digits = value.trim_ascii();
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let seconds = digits.iter().fold(0u64, |n, &d| {
        n.saturating_mul(10).saturating_add(u64::from(d - b'0'))
    });
    Some(seconds.saturating_mul(SECOND))
}

impl Client {
    /// Sends one request: how it was answered, and the `Retry-After` a rejection carried.
    async fn ask(
        &self,
        sent: Micros,
        seq: u64,
        gateway: usize,
    ) -> Result<(Outcome, Option<Micros>), String> {
        match self {
            Client::Http {
                client,
                urls,
                headers,
                statuses,
            } => {
                let resp = client
                    .get(urls[gateway].clone())
                    .headers(headers.clone())
                    .send()
                    .await
                    .map_err(|e| e.to_string())?;
                let status = resp.status().as_u16();
                let outcome = statuses.classify(status);
                let after = match outcome {
                    Outcome::Rejected => resp
                        .headers()
                        .get(reqwest::header::RETRY_AFTER)
                        .and_then(|v| retry_after(v.as_bytes())),
                    _ => None,
                };
                // Read the body so the connection goes back to the pool.
                resp.bytes().await.map_err(|e| e.to_string())?;
                Ok((outcome, after))
            }
            Client::Redis {
                conns,
                script,
                key,
                limit,
                window,
                burst,
            } => {
                let mut conn = conns[gateway].clone();
                let admitted: i64 = script
                    .key(key)
                    .arg(sent)
                    .arg(*limit)
                    .arg(*window)
                    .arg(*burst)
                    .arg(seq)
                    .invoke_async(&mut conn)
                    .await
                    .map_err(|e| e.to_string())?;
                // The recipes' replies carry no Retry-After.
                Ok((
                    if admitted == 1 {
                        Outcome::Admitted
                    } else {
                        Outcome::Rejected
                    },
                    None,
                ))
            }
        }
    }
}

fn build_client(probe: &Probe, rt: &tokio::runtime::Runtime) -> Result<Client, String> {
    match &probe.target {
        Target::Http {
            urls,
            headers,
            statuses,
        } => {
            let mut map = reqwest::header::HeaderMap::new();
            for (name, value) in headers {
                let n = reqwest::header::HeaderName::from_bytes(name.as_bytes())
                    .map_err(|e| format!("invalid --header name {}: {e}", quote(name)))?;
                let v = reqwest::header::HeaderValue::from_str(value)
                    .map_err(|e| format!("invalid --header value {}: {e}", quote(value)))?;
                map.append(n, v);
            }
            let client = reqwest::Client::builder()
                .no_proxy()
                .tcp_nodelay(true)
                .pool_max_idle_per_host(usize::MAX)
                .build()
                .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
            Ok(Client::Http {
                client,
                urls: urls.clone(),
                headers: map,
                statuses: statuses.clone(),
            })
        }
        Target::Redis {
            url,
            source,
            burst,
            script,
            connections,
        } => rt.block_on(async {
            let cannot = |e: redis::RedisError| format!("cannot reach Redis at {url}: {e}");
            let client = redis::Client::open(url.as_str()).map_err(cannot)?;
            // Each call opens a connection of its own: one a gateway.
            let mut conns = Vec::with_capacity(*connections);
            for _ in 0..*connections {
                conns.push(
                    client
                        .get_multiplexed_tokio_connection()
                        .await
                        .map_err(cannot)?,
                );
            }
            let lua = redis::Script::new(source);
            lua.prepare_invoke()
                .load_async(&mut conns[0])
                .await
                .map_err(|e| format!("Redis refused the {script} script: {e}"))?;
            // A fresh key a probe, so no earlier probe's state leaks in.
            let key = format!(
                "ratelab:probe:{}:{}:{}",
                script,
                std::process::id(),
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos())
            );
            Ok(Client::Redis {
                conns,
                script: lua,
                key,
                limit: probe.scenario.limit,
                window: probe.scenario.window,
                burst: *burst,
            })
        }),
    }
}

/// Sends the plan in real time and returns a record of every request. When `stop` is set
/// (Ctrl-C), nothing more is sent, and the answers in flight are awaited up to the timeout.
fn send(
    probe: &Probe,
    mut plan: Plan,
    rt: &tokio::runtime::Runtime,
    stop: &AtomicBool,
) -> Result<Vec<Record>, String> {
    let client = Arc::new(build_client(probe, rt)?);
    let (tx, rx) = mpsc::channel::<(u64, Record)>();
    let timeout = probe.timeout;
    let progress = Progress::new(&plan);
    // Start a little ahead, so the first sends are not late for the set-up.
    let start = Instant::now() + Duration::from_millis(20);
    let now = || Instant::now().saturating_duration_since(start).as_micros() as Micros;
    let mut heard = Heard {
        records: Vec::with_capacity(plan.summary.first_tries as usize),
        outstanding: 0,
        admitted: 0,
    };
    let mut seq = 0u64;
    let gap = plan.retry_gap();
    // The fleet's own router, as the model fleet routes run 0 of the scenario.
    let mut router = probe.fleet.map(|f| {
        Router::new(
            f.route,
            f.gateways as usize,
            Rng::new(probe.scenario.seed, 0, Stream::Routing),
        )
    });
    loop {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        progress.show(start, seq, &heard);
        while let Ok(a) = rx.try_recv() {
            heard.take(a, &mut plan, now());
        }
        let Some(due) = plan.peek() else {
            if gap.is_some() && heard.outstanding > 0 {
                // A retrying client may still get rejections that bring retries.
                let deadline = Instant::now() + timeout + Duration::from_secs(1);
                match recv_until(&rx, deadline, stop) {
                    Ok(a) => heard.take(a, &mut plan, now()),
                    _ => break,
                }
                continue;
            }
            break;
        };
        if let (Some(gap), Some(oldest)) = (gap, plan.oldest_unanswered()) {
            // Before sending at `due`, hear every try that could bring a retry due before it
            // (tries due at one instant go out together, whatever their answers).
            if oldest < due && oldest + gap <= due {
                let deadline = start + Duration::from_micros(oldest) + timeout * 2;
                match recv_until(&rx, deadline, stop) {
                    Ok(a) => heard.take(a, &mut plan, now()),
                    Err(Wait::Stopped) => break,
                    // No answer in time: it cannot bring a retry any more.
                    Err(Wait::Late) => plan.give_up_oldest(now()),
                }
                continue;
            }
        }
        if !wait_until(start + Duration::from_micros(due), stop) {
            break;
        }
        let Some(Due {
            at: due,
            attempt,
            ticket,
        }) = plan.next_by(due)
        else {
            // (A try over a cap was held back: look again.)
            continue;
        };
        let gateway = router.as_mut().map_or(0, Router::pick);
        heard.outstanding += 1;
        seq += 1;
        let (client, tx) = (client.clone(), tx.clone());
        rt.spawn(async move {
            let began = Instant::now();
            let sent = began.saturating_duration_since(start).as_micros() as Micros;
            let (outcome, retry_after) =
                match tokio::time::timeout(timeout, client.ask(sent, seq, gateway)).await {
                    Ok(Ok(answer)) => answer,
                    Ok(Err(_)) => (Outcome::Error, None),
                    Err(_) => (Outcome::Timeout, None),
                };
            let latency = began.elapsed().as_micros() as Micros;
            let _ = tx.send((
                ticket,
                Record {
                    due,
                    sent,
                    attempt,
                    outcome,
                    latency,
                    gateway: gateway as u32,
                    retry_after,
                },
            ));
        });
    }
    drop(tx);
    if stop.load(Ordering::SeqCst) {
        // Stopped: every request in flight ends within its timeout; wait that long, no more.
        let deadline = Instant::now() + timeout + Duration::from_millis(200);
        while heard.outstanding > 0 {
            match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(a) => heard.take(a, &mut plan, now()),
                Err(_) => break,
            }
            progress.show(start, seq, &heard);
        }
    } else {
        // Every task ends within its timeout.
        while heard.outstanding > 0 {
            match rx.recv_timeout(timeout + Duration::from_secs(1)) {
                Ok(a) => heard.take(a, &mut plan, now()),
                Err(_) => break,
            }
            progress.show(start, seq, &heard);
        }
    }
    progress.done();
    if heard.outstanding > 0 {
        text::note(&format!(
            "ratelab probe: {} request(s) got no answer in time and are left out of the report",
            heard.outstanding
        ));
    }
    if plan.held_back() > 0 {
        text::note(&format!(
            "ratelab probe: {} retry(ies) not sent: a Retry-After put them past the probe's hour, or over {} requests in one second or {} in one millisecond",
            plan.held_back(),
            ratelab::probe::MAX_RATE,
            ratelab::probe::MAX_PER_MS
        ));
    }
    Ok(heard.records)
}

/// The answers heard so far.
struct Heard {
    records: Vec<Record>,
    outstanding: u64,
    admitted: u64,
}

impl Heard {
    /// The answer to the try with `ticket`, heard at `now` (µs from the start), told to the
    /// plan: a `Retry-After` counts from the moment the answer came.
    fn take(&mut self, (ticket, r): (u64, Record), plan: &mut Plan, now: Micros) {
        self.outstanding -= 1;
        let answer = match r.outcome {
            Outcome::Admitted => {
                self.admitted += 1;
                Answer::Admitted
            }
            Outcome::Rejected => Answer::Rejected {
                retry_after: r
                    .retry_after
                    .map(|d| r.sent.saturating_add(r.latency).saturating_add(d)),
            },
            _ => Answer::Undecided,
        };
        plan.answered(ticket, answer, now);
        self.records.push(r);
    }
}

/// Why no answer came.
#[derive(Debug)]
enum Wait {
    /// The deadline passed (or no sender is left).
    Late,
    /// Ctrl-C.
    Stopped,
}

/// Waits for the next answer until `deadline`, looking at `stop` every 50 ms.
fn recv_until<T>(rx: &mpsc::Receiver<T>, deadline: Instant, stop: &AtomicBool) -> Result<T, Wait> {
    loop {
        if stop.load(Ordering::SeqCst) {
            return Err(Wait::Stopped);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Wait::Late);
        }
        match rx.recv_timeout(left.min(Duration::from_millis(50))) {
            Ok(r) => return Ok(r),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => return Err(Wait::Late),
        }
    }
}

/// Sleeps until about 200 µs before `at`, then spins; returns false, early, if `stop` is set
/// (looked at every 50 ms at most).
fn wait_until(at: Instant, stop: &AtomicBool) -> bool {
    loop {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        let now = Instant::now();
        if now >= at {
            return true;
        }
        let left = at - now;
        if left > Duration::from_micros(1_200) {
            std::thread::sleep(
                (left - Duration::from_micros(1_000)).min(Duration::from_millis(50)),
            );
        } else if left > Duration::from_micros(200) {
            std::thread::sleep(left - Duration::from_micros(150));
        } else {
            std::hint::spin_loop();
        }
    }
}

/// The progress bar on stderr, drawn only when stderr is a terminal: sent, answered and
/// admitted so far, elapsed and remaining time, redrawn at most ten times a second.
struct Progress {
    bar: Option<ProgressBar>,
    planned: Micros,
    /// "of 400", or "of up to 640" when retries may come.
    of: String,
    last: std::cell::Cell<Option<Instant>>,
}

impl Progress {
    fn new(plan: &Plan) -> Self {
        let planned = plan.summary.last_at.max(1);
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::with_draw_target(
                Some(planned / 1_000 + 1),
                ProgressDrawTarget::stderr_with_hz(10),
            );
            if let Ok(style) = ProgressStyle::with_template("[{bar:30}] {msg}") {
                bar.set_style(style.progress_chars("#>-"));
            }
            bar
        });
        Progress {
            bar,
            planned,
            of: if plan.summary.most > plan.summary.first_tries {
                format!("of up to {}", plan.summary.most)
            } else {
                format!("of {}", plan.summary.most)
            },
            last: std::cell::Cell::new(None),
        }
    }

    fn show(&self, start: Instant, sent: u64, heard: &Heard) {
        let Some(bar) = &self.bar else { return };
        let now = Instant::now();
        if self
            .last
            .get()
            .is_some_and(|t| now - t < Duration::from_millis(100))
        {
            return;
        }
        self.last.set(Some(now));
        let elapsed = now.saturating_duration_since(start).as_micros() as Micros;
        let left = self.planned.saturating_sub(elapsed);
        bar.set_position(elapsed.min(self.planned) / 1_000);
        bar.set_message(format!(
            "sent {sent} {}, answered {}, admitted {}; {} elapsed, {} left",
            self.of,
            heard.records.len(),
            heard.admitted,
            clock(elapsed),
            clock(left)
        ));
    }

    fn done(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// µs as `m:ss`.
fn clock(us: Micros) -> String {
    let s = us / SECOND;
    format!("{}:{:02}", s / 60, s % 60)
}

fn table(r: &ProbeReport) -> String {
    let pct = |v: Option<f64>| v.map_or("-".to_owned(), |v| format!("{:.2}%", 100.0 * v));
    let ms = |us: Micros| format!("{:.3} ms", us as f64 / 1_000.0);
    let mut out = String::new();
    if r.partial {
        out += &format!(
            "PARTIAL: stopped by Ctrl-C after {} request(s); this report is of what was sent\n",
            r.sent
        );
    }
    out += &format!(
        "probe of {}: {} per {}, traffic {}, seed {}\n",
        r.target,
        r.limit,
        format_duration(r.window_us),
        r.traffic,
        r.seed
    );
    out += &format!(
        "sent {} ({} first tries): admitted {}, rejected {}, other {}, errors {}, timeouts {}\n",
        r.sent, r.offered, r.audit.admitted, r.audit.rejected, r.other, r.errors, r.timeouts
    );
    out += &format!(
        "served {}, busiest window {} (the rule allows {}), wrong admits {}, wrong rejects {}\n",
        pct(r.audit.served_share),
        r.audit.busiest,
        r.limit,
        r.audit.wrong_admits,
        r.audit.wrong_rejects
    );
    out += &format!(
        "send lateness p50 {}, p99 {}, max {}; answers p50 {}, p99 {}, max {}\n",
        ms(r.lateness.p50_us),
        ms(r.lateness.p99_us),
        ms(r.lateness.max_us),
        ms(r.latency.p50_us),
        ms(r.latency.p99_us),
        ms(r.latency.max_us)
    );
    if let Some(c) = &r.comparison {
        out += &format!(
            "model {}: agrees on {} of {} decisions ({}); admitted only by the real limiter {}, only by the model {}; the model serves {}, busiest window {}\n",
            text::escaped(&c.model),
            c.agree,
            c.compared,
            pct(c.agreement),
            c.real_only,
            c.model_only,
            pct(c.audit.served_share),
            c.audit.busiest
        );
        if c.delayed > 0 {
            out += &format!(
                "the model delays {} of its admissions, the longest by {}\n",
                c.delayed,
                ms(c.longest_wait_us)
            );
        }
    }
    out + &gateway_lines(r)
}

/// With several gateways: what the lines above describe, and each gateway's part.
fn gateway_lines(r: &ProbeReport) -> String {
    if r.gateways.is_empty() {
        return String::new();
    }
    let model = match r.comparison.as_ref().and_then(|c| c.coord.as_deref()) {
        Some(coord) => format!(
            "; the model is {} such gateways, --coord {coord}, each request decided at the gateway it was sent to",
            r.gateways.len()
        ),
        None => String::new(),
    };
    let mut out = format!(
        "\n{} gateways, --route {}: the lines above are the whole fleet against the global rule{model}\n",
        r.gateways.len(),
        r.route.as_deref().unwrap_or("round-robin"),
    );
    for (i, g) in r.gateways.iter().enumerate() {
        out += &format!(
            "gateway {i} {}: sent {}, admitted {}, rejected {}, busiest window {}",
            g.target, g.sent, g.admitted, g.rejected, g.busiest
        );
        if let Some(m) = &g.model {
            out += &format!(
                "; model admits {}, busiest window {}, agrees on {} of {}",
                m.admitted, m.busiest, m.agree, m.compared
            );
        }
        out.push('\n');
    }
    out
}
