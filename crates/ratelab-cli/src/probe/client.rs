//! The probe's sender: one client shared by every request's task (HTTP or Redis), each
//! request sent at its time and its answer heard, and the waits between them.

use super::setup::{Probe, Statuses, Target};
use super::show::{Heard, Progress};
use crate::text::{self, quote};
use ratelab::limiter::Router;
use ratelab::probe::{Due, Outcome, Plan, Record};
use ratelab::rng::{Rng, Stream};
use ratelab::time::{Micros, SECOND};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The client every request's task shares.
pub(super) enum Client {
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
        quantity: u64,
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
                quantity,
            } => {
                let mut conn = conns[gateway].clone();
                let admitted: i64 = script
                    .key(key)
                    .arg(sent)
                    .arg(*limit)
                    .arg(*window)
                    .arg(*burst)
                    .arg(seq)
                    .arg(*quantity)
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

pub(super) fn build_client(probe: &Probe, rt: &tokio::runtime::Runtime) -> Result<Client, String> {
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
            quantity,
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
                quantity: *quantity,
            })
        }),
    }
}

/// Sends the plan in real time and returns a record of every request. When `stop` is set
/// (Ctrl-C), nothing more is sent, and the answers in flight are awaited up to the timeout.
pub(super) fn send(
    probe: &Probe,
    mut plan: Plan,
    rt: &tokio::runtime::Runtime,
    stop: &AtomicBool,
) -> Result<(Vec<Record>, Micros), String> {
    let client = Arc::new(build_client(probe, rt)?);
    let (tx, rx) = mpsc::channel::<(u64, Record)>();
    let timeout = probe.timeout;
    let progress = Progress::new(&plan);
    // Start a little ahead, so the first sends are not late for the set-up.
    let start = Instant::now() + Duration::from_millis(20);
    // The wall clock's reading at that moment, for models whose windows are the wall clock's.
    let epoch_us = (std::time::SystemTime::now() + Duration::from_millis(20))
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as Micros);
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
    Ok((heard.records, epoch_us))
}

/// Why no answer came.
#[derive(Debug)]
pub(super) enum Wait {
    /// The deadline passed (or no sender is left).
    Late,
    /// Ctrl-C.
    Stopped,
}

/// Waits for the next answer until `deadline`, looking at `stop` every 50 ms.
pub(super) fn recv_until<T>(
    rx: &mpsc::Receiver<T>,
    deadline: Instant,
    stop: &AtomicBool,
) -> Result<T, Wait> {
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
pub(super) fn wait_until(at: Instant, stop: &AtomicBool) -> bool {
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
