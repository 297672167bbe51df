//! `ratelab probe`: sends a scenario's arrivals in real time to a live limiter (an HTTP
//! gateway, or a Redis script), records how each request was answered and audits the record
//! with the simulator's auditor (`ratelab::probe`).
//!
//! Timing: the schedule runs on this thread, which sleeps until about 200 µs before each send
//! and spins the rest, then hands the request to a tokio runtime. A request's send time is
//! taken when its task starts, just before the request is written, so the reported lateness
//! includes any wait for the runtime. Requests never wait for each other: every one is its own
//! task, so a slow answer delays nothing but itself.

use crate::{flags, Format};
use ratelab::probe::{Outcome, Plan, ProbeMeta, ProbeReport, Record};
use ratelab::sim::Scenario;
use ratelab::spec::{parse_count, LimiterSpec, TrafficSpec};
use ratelab::time::{format_duration, parse_duration, Micros, SECOND};
use ratelab::Error;
use std::collections::BTreeMap;
use std::net::{IpAddr, ToSocketAddrs};
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

const SCRIPT_NAMES: &str = "sorted-set, sorted-set-record-rejects, gcra, fixed-window";

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
        format!("invalid {flag} '{part}' in '{text}': expected HTTP statuses from 100 to 599, like 2xx, 429 or 500-504, separated by commas")
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

/// Where the requests go.
#[derive(Debug)]
enum Target {
    Http {
        url: reqwest::Url,
        headers: Vec<(String, String)>,
        statuses: Statuses,
    },
    Redis {
        url: String,
        script: &'static str,
        source: &'static str,
        burst: u64,
    },
}

impl Target {
    fn describe(&self) -> String {
        match self {
            Target::Http { url, .. } => url.to_string(),
            Target::Redis { url, script, .. } => format!("{url} (script {script})"),
        }
    }
}

/// A parsed `probe` command line.
#[derive(Debug)]
struct Probe {
    scenario: Scenario,
    target: Target,
    model: Option<LimiterSpec>,
    timeout: Duration,
    format: Format,
    dry_run: bool,
}

const KNOWN: [&str; 17] = [
    "--target",
    "--redis",
    "--script",
    "--burst",
    "--traffic",
    "--limit",
    "--window",
    "--duration",
    "--seed",
    "--model",
    "--format",
    "--admit",
    "--reject",
    "--timeout",
    "--header",
    "--allow-remote",
    "--dry-run",
];

/// The longest accepted `--timeout`.
const MAX_TIMEOUT: Micros = 60 * SECOND;

pub(crate) fn main(args: &[String]) -> Result<String, String> {
    let probe = parse(args)?;
    let plan = Plan::new(&probe.scenario).map_err(|e| e.to_string())?;
    let command = format!(
        "ratelab probe {}",
        args.iter()
            .map(|a| shell_word(a))
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
    eprintln!(
        "ratelab probe: {} {} to {}, {} per {}; {what}; timeout {}",
        if probe.dry_run {
            "would send"
        } else {
            "sending"
        },
        plan.summary.describe(),
        probe.target.describe(),
        probe.scenario.limit,
        format_duration(probe.scenario.window),
        format_duration(probe.timeout.as_micros() as u64),
    );
    if probe.dry_run {
        return Ok(String::new());
    }
    let records = send(&probe, plan)?;
    let model = match &probe.model {
        Some(spec) => Some((
            spec.text.as_str(),
            probe
                .scenario
                .build_limiter(spec, 0)
                .map_err(|e| e.to_string())?,
        )),
        None => None,
    };
    let report = ProbeReport::new(
        ProbeMeta {
            target: probe.target.describe(),
            scenario: &probe.scenario,
            command: Some(command),
        },
        &records,
        model,
    );
    Ok(match probe.format {
        Format::Json => {
            let mut s = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
            s.push('\n');
            s
        }
        Format::Table => table(&report),
    })
}

fn shell_word(a: &str) -> String {
    if !a.is_empty()
        && a.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_=:,./%@+".contains(&b))
    {
        a.to_owned()
    } else {
        format!("'{}'", a.replace('\'', r"'\''"))
    }
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

fn parse(args: &[String]) -> Result<Probe, String> {
    // Flags without a value.
    let mut allow_remote = false;
    let mut dry_run = false;
    let args: Vec<String> = args
        .iter()
        .filter(|a| match a.as_str() {
            "--allow-remote" => {
                allow_remote = true;
                false
            }
            "--dry-run" => {
                dry_run = true;
                false
            }
            _ => true,
        })
        .cloned()
        .collect();
    let e = |err: Error| err.to_string();
    let mut scenario = Scenario {
        duration: 10 * SECOND,
        ..Scenario::default()
    };
    let mut traffic = None;
    let (mut target, mut redis, mut script, mut burst) = (None, None, None, None);
    let (mut model, mut format, mut timeout) = (None, Format::Table, 2 * SECOND);
    let mut statuses = Statuses {
        admit: vec![(200, 299)],
        reject: vec![(429, 429), (503, 503)],
    };
    let (mut admit_given, mut reject_given) = (false, false);
    let mut headers = Vec::new();
    // The two flags without a value are taken out above; an unknown flag's message names them.
    let pairs = flags(&args, &KNOWN[..15], &["--header"]).map_err(|m| {
        if m.starts_with("unknown flag") {
            format!("{m}, --allow-remote, --dry-run")
        } else {
            m
        }
    })?;
    for (flag, value) in pairs {
        match flag {
            "--target" => target = Some(value),
            "--redis" => redis = Some(value),
            "--script" => {
                script = Some(SCRIPTS.iter().find(|s| s.0 == value).ok_or_else(|| {
                    format!("unknown --script '{value}': accepted are {SCRIPT_NAMES}")
                })?)
            }
            "--burst" => burst = Some(parse_count("--burst", &value, 1, 1_000_000).map_err(e)?),
            "--traffic" => traffic = Some(TrafficSpec::parse(&value).map_err(e)?),
            "--limit" => {
                scenario.limit = parse_count("--limit", &value, 1, 1_000_000).map_err(e)?
            }
            "--window" => scenario.window = parse_duration("--window", &value).map_err(e)?,
            "--duration" => {
                scenario.duration = parse_duration("--duration", &value).map_err(e)?;
                if scenario.duration > ratelab::probe::MAX_DURATION {
                    return Err(format!(
                        "invalid --duration '{value}': expected a duration up to 1h"
                    ));
                }
            }
            "--seed" => scenario.seed = parse_count("--seed", &value, 0, u64::MAX).map_err(e)?,
            "--model" => model = Some(LimiterSpec::parse(&value).map_err(e)?),
            "--format" => format = Format::parse(&value)?,
            "--admit" => {
                admit_given = true;
                statuses.admit = parse_statuses("--admit", &value)?
            }
            "--reject" => {
                reject_given = true;
                statuses.reject = parse_statuses("--reject", &value)?
            }
            "--timeout" => {
                timeout = parse_duration("--timeout", &value).map_err(e)?;
                if timeout > MAX_TIMEOUT {
                    return Err(format!(
                        "invalid --timeout '{value}': expected a duration from 1ms to 60s"
                    ));
                }
            }
            _ => {
                let (name, v) = value
                    .split_once(':')
                    .filter(|(n, _)| {
                        !n.is_empty()
                            && n.bytes()
                                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
                    })
                    .ok_or_else(|| {
                        format!("invalid --header '{value}': expected NAME:VALUE, like X-Client:probe-1")
                    })?;
                headers.push((name.to_owned(), v.trim().to_owned()));
            }
        }
    }
    for (a, b) in &statuses.admit {
        if statuses.reject.iter().any(|(c, d)| a <= d && c <= b) {
            return Err(format!(
                "--admit {} and --reject {} overlap: a status can mean only one",
                show_statuses(&statuses.admit),
                show_statuses(&statuses.reject)
            ));
        }
    }
    let mut traffic = traffic.ok_or(
        "probe needs --traffic SPEC, e.g. --traffic boundary-burst or --traffic flood:every=10ms",
    )?;
    if let TrafficSpec::Replay(replay) = &mut traffic {
        replay.times = crate::read_replay(replay)?;
    }
    scenario.traffic = traffic;
    let target = match (target, redis) {
        (Some(_), Some(_)) => return Err("give --target URL or --redis URL, not both".into()),
        (None, None) => {
            return Err(
                "probe needs --target URL (an HTTP limiter) or --redis URL --script NAME".into(),
            )
        }
        (Some(url), None) => {
            if script.is_some() || burst.is_some() {
                return Err("--script and --burst go with --redis, not --target".into());
            }
            let parsed = reqwest::Url::parse(&url).map_err(|err| {
                format!("invalid --target '{url}': {err}; expected a URL like http://127.0.0.1:8080/api")
            })?;
            if parsed.scheme() != "http" {
                return Err(format!(
                    "invalid --target '{url}': expected an http:// URL (probe speaks plain HTTP)"
                ));
            }
            check_host(&url, &parsed, allow_remote)?;
            Target::Http {
                url: parsed,
                headers,
                statuses,
            }
        }
        (None, Some(url)) => {
            if admit_given || reject_given || !headers.is_empty() {
                return Err("--admit, --reject and --header go with --target, not --redis".into());
            }
            let parsed = reqwest::Url::parse(&url).map_err(|err| {
                format!(
                    "invalid --redis '{url}': {err}; expected a URL like redis://127.0.0.1:6379"
                )
            })?;
            if parsed.scheme() != "redis" {
                return Err(format!("invalid --redis '{url}': expected a redis:// URL"));
            }
            check_host(&url, &parsed, allow_remote)?;
            let &(name, source, _) = script.ok_or(format!(
                "--redis needs --script NAME: one of {SCRIPT_NAMES}"
            ))?;
            if burst.is_some() && name != "gcra" {
                return Err(format!("--burst goes with --script gcra, not {name}"));
            }
            Target::Redis {
                url,
                script: name,
                source,
                burst: burst.unwrap_or(scenario.limit),
            }
        }
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
    scenario.limiters = vec![model
        .clone()
        .unwrap_or_else(|| LimiterSpec::of(ratelab::LimiterKind::SlidingLog))];
    ratelab::probe::check_size(&scenario).map_err(e)?;
    scenario.validate().map_err(e)?;
    Ok(Probe {
        scenario,
        target,
        model,
        timeout: Duration::from_micros(timeout.max(1)),
        format,
        dry_run,
    })
}

/// Refuses a host that is not a loopback address, unless `--allow-remote` is given.
fn check_host(given: &str, url: &reqwest::Url, allow_remote: bool) -> Result<(), String> {
    if allow_remote {
        return Ok(());
    }
    let host = url
        .host_str()
        .ok_or_else(|| format!("'{given}' has no host"))?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let port = url.port_or_known_default().unwrap_or(6379);
    let addrs: Vec<IpAddr> = match host.parse::<IpAddr>() {
        Ok(ip) => vec![ip],
        Err(_) => (host, port)
            .to_socket_addrs()
            .map_err(|err| format!("cannot resolve '{host}' in '{given}': {err}"))?
            .map(|a| a.ip())
            .collect(),
    };
    if addrs.is_empty() || addrs.iter().any(|ip| !ip.is_loopback()) {
        return Err(format!(
            "'{host}' in '{given}' is not a loopback address: probe sends real traffic, so by default only to 127.0.0.0/8, ::1 or localhost; add --allow-remote to send it to {host}"
        ));
    }
    Ok(())
}

/// The client every request's task shares.
enum Client {
    Http {
        client: reqwest::Client,
        url: reqwest::Url,
        headers: reqwest::header::HeaderMap,
        statuses: Statuses,
    },
    Redis {
        conn: redis::aio::MultiplexedConnection,
        script: redis::Script,
        key: String,
        limit: u64,
        window: Micros,
        burst: u64,
    },
}

impl Client {
    async fn ask(&self, sent: Micros, seq: u64) -> Result<Outcome, String> {
        match self {
            Client::Http {
                client,
                url,
                headers,
                statuses,
            } => {
                let resp = client
                    .get(url.clone())
                    .headers(headers.clone())
                    .send()
                    .await
                    .map_err(|e| e.to_string())?;
                let status = resp.status().as_u16();
                // Read the body so the connection goes back to the pool.
                resp.bytes().await.map_err(|e| e.to_string())?;
                Ok(statuses.classify(status))
            }
            Client::Redis {
                conn,
                script,
                key,
                limit,
                window,
                burst,
            } => {
                let mut conn = conn.clone();
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
                Ok(if admitted == 1 {
                    Outcome::Admitted
                } else {
                    Outcome::Rejected
                })
            }
        }
    }
}

fn build_client(probe: &Probe, rt: &tokio::runtime::Runtime) -> Result<Client, String> {
    match &probe.target {
        Target::Http {
            url,
            headers,
            statuses,
        } => {
            let mut map = reqwest::header::HeaderMap::new();
            for (name, value) in headers {
                let n = reqwest::header::HeaderName::from_bytes(name.as_bytes())
                    .map_err(|e| format!("invalid --header name '{name}': {e}"))?;
                let v = reqwest::header::HeaderValue::from_str(value)
                    .map_err(|e| format!("invalid --header value '{value}': {e}"))?;
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
                url: url.clone(),
                headers: map,
                statuses: statuses.clone(),
            })
        }
        Target::Redis {
            url,
            source,
            burst,
            script,
        } => rt.block_on(async {
            let cannot = |e: redis::RedisError| format!("cannot reach Redis at {url}: {e}");
            let client = redis::Client::open(url.as_str()).map_err(cannot)?;
            let mut conn = client
                .get_multiplexed_tokio_connection()
                .await
                .map_err(cannot)?;
            let lua = redis::Script::new(source);
            lua.prepare_invoke()
                .load_async(&mut conn)
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
                conn,
                script: lua,
                key,
                limit: probe.scenario.limit,
                window: probe.scenario.window,
                burst: *burst,
            })
        }),
    }
}

/// Sends the plan in real time and returns a record of every request.
fn send(probe: &Probe, mut plan: Plan) -> Result<Vec<Record>, String> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let client = Arc::new(build_client(probe, &rt)?);
    let (tx, rx) = mpsc::channel::<Record>();
    let timeout = probe.timeout;
    // Start a little ahead, so the first sends are not late for the set-up.
    let start = Instant::now() + Duration::from_millis(20);
    let mut records = Vec::with_capacity(plan.summary.first_tries as usize);
    // Tries sent and not yet answered, by due time (a retrying client needs their answers).
    let mut waiting: BTreeMap<Micros, u32> = BTreeMap::new();
    let mut outstanding = 0u64;
    let mut seq = 0u64;
    let gap = plan.retry_gap();
    let mut take =
        |r: Record, plan: &mut Plan, waiting: &mut BTreeMap<Micros, u32>, outstanding: &mut u64| {
            *outstanding -= 1;
            if let Some(n) = waiting.get_mut(&r.due) {
                *n -= 1;
                if *n == 0 {
                    waiting.remove(&r.due);
                }
            }
            if r.outcome == Outcome::Rejected {
                plan.rejected(r.due, r.attempt);
            }
            records.push(r);
        };
    loop {
        while let Ok(a) = rx.try_recv() {
            take(a, &mut plan, &mut waiting, &mut outstanding);
        }
        let Some(due) = plan.peek() else {
            if gap.is_some() && outstanding > 0 {
                // A retrying client may still get rejections that bring retries.
                match rx.recv_timeout(timeout + Duration::from_secs(1)) {
                    Ok(a) => take(a, &mut plan, &mut waiting, &mut outstanding),
                    Err(_) => break,
                }
                continue;
            }
            break;
        };
        if let Some(gap) = gap {
            // Before sending at `due`, hear every try that could bring a retry due before it.
            if let Some((&oldest, _)) = waiting.first_key_value() {
                if oldest + gap <= due {
                    let deadline = start + Duration::from_micros(oldest) + timeout * 2;
                    match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                        Ok(a) => take(a, &mut plan, &mut waiting, &mut outstanding),
                        Err(_) => {
                            // No answer in time: it cannot bring a retry any more.
                            waiting.remove(&oldest);
                        }
                    }
                    continue;
                }
            }
        }
        wait_until(start + Duration::from_micros(due));
        let Some((due, attempt)) = plan.next() else {
            break;
        };
        outstanding += 1;
        seq += 1;
        if gap.is_some() {
            *waiting.entry(due).or_default() += 1;
        }
        let (client, tx) = (client.clone(), tx.clone());
        rt.spawn(async move {
            let began = Instant::now();
            let sent = began.saturating_duration_since(start).as_micros() as Micros;
            let outcome = match tokio::time::timeout(timeout, client.ask(sent, seq)).await {
                Ok(Ok(outcome)) => outcome,
                Ok(Err(_)) => Outcome::Error,
                Err(_) => Outcome::Timeout,
            };
            let latency = began.elapsed().as_micros() as Micros;
            let _ = tx.send(Record {
                due,
                sent,
                attempt,
                outcome,
                latency,
            });
        });
    }
    drop(tx);
    // Every task ends within its timeout.
    while outstanding > 0 {
        match rx.recv_timeout(timeout + Duration::from_secs(1)) {
            Ok(a) => take(a, &mut plan, &mut waiting, &mut outstanding),
            Err(_) => break,
        }
    }
    rt.shutdown_timeout(Duration::from_millis(100));
    Ok(records)
}

/// Sleeps until about 200 µs before `at`, then spins.
fn wait_until(at: Instant) {
    loop {
        let now = Instant::now();
        if now >= at {
            return;
        }
        let left = at - now;
        if left > Duration::from_micros(1_200) {
            std::thread::sleep(left - Duration::from_micros(1_000));
        } else if left > Duration::from_micros(200) {
            std::thread::sleep(left - Duration::from_micros(150));
        } else {
            std::hint::spin_loop();
        }
    }
}

fn table(r: &ProbeReport) -> String {
    let pct = |v: Option<f64>| v.map_or("-".to_owned(), |v| format!("{:.2}%", 100.0 * v));
    let ms = |us: Micros| format!("{:.3} ms", us as f64 / 1_000.0);
    let mut out = format!(
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
            c.model,
            c.agree,
            c.compared,
            pct(c.agreement),
            c.real_only,
            c.model_only,
            pct(c.audit.served_share),
            c.audit.busiest
        );
    }
    out
}
