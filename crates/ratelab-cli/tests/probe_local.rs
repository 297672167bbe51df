//! `ratelab probe` against a tiny HTTP server of this test's own, on loopback: how statuses
//! are classified (the defaults, and `--admit`/`--reject`), what a timeout and a dropped
//! connection count as, and how late the sends were, each checked against counts worked out
//! by hand from the server's script and against the report's own trace.
//!
//! The server answers the n-th request it reads with the n-th step of its script, whatever
//! order the requests arrive in: every count below depends only on how many times each step
//! comes round, never on timing. Only the lateness bound depends on timing; its margin is
//! stated where it is checked.

use serde_json::Value;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// What the server does with a request.
#[derive(Clone, Copy, Debug)]
enum Step {
    /// Answers with this status (and `Connection: close`).
    Status(u16),
    /// Holds the connection open, unanswered, for 1.5 s: past the probe's timeout.
    Hang,
    /// Closes the connection without an answer.
    Drop,
}

/// Ten steps, each twice in a probe of 20 requests.
const SCRIPT: [Step; 10] = [
    Step::Status(200),
    Step::Status(204),
    Step::Status(299),
    Step::Status(300),
    Step::Status(404),
    Step::Status(429),
    Step::Status(500),
    Step::Status(503),
    Step::Hang,
    Step::Drop,
];

/// Reads one request's head; false if the connection ended first.
fn read_head(stream: &mut TcpStream) -> bool {
    let mut head = Vec::new();
    let mut byte = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut byte) {
            Ok(0) | Err(_) => return false,
            Ok(n) => head.extend_from_slice(&byte[..n]),
        }
    }
    true
}

/// Starts the scripted server; returns its URL and the count of requests it has read.
fn scripted_server() -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let url = format!(
        "http://127.0.0.1:{}/api",
        listener.local_addr().expect("address").port()
    );
    let seen = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&seen);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let counter = Arc::clone(&counter);
            std::thread::spawn(move || {
                if !read_head(&mut stream) {
                    return;
                }
                let n = counter.fetch_add(1, Ordering::SeqCst);
                match SCRIPT[n % SCRIPT.len()] {
                    Step::Status(code) => {
                        let _ = write!(
                            stream,
                            "HTTP/1.1 {code} X\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                        );
                    }
                    Step::Hang => std::thread::sleep(Duration::from_millis(1_500)),
                    Step::Drop => {}
                }
            });
        }
    });
    (url, seen)
}

/// Probes a fresh scripted server with 20 requests 20 ms apart and a 200 ms timeout.
fn probe(extra: &[&str]) -> Value {
    let (url, seen) = scripted_server();
    let mut args = vec![
        "probe",
        "--target",
        &url,
        "--traffic",
        "flood:every=20ms,for=400ms",
        "--limit",
        "20",
        "--window",
        "1s",
        "--timeout",
        "200ms",
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    let out = Command::new(env!("CARGO_BIN_EXE_ratelab"))
        .args(&args)
        .output()
        .expect("ratelab runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "probe {args:?} failed: {stderr}");
    let report: Value = serde_json::from_slice(&out.stdout).expect("the report is JSON");
    assert_eq!(report["sent"], 20, "{report}");
    assert_eq!(
        seen.load(Ordering::SeqCst),
        20,
        "the server read every request once"
    );
    report
}

fn u(v: &Value, key: &str) -> u64 {
    v.pointer(key)
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("{key} in {v}"))
}

/// (admitted, rejected, other, errors, timeouts), from the counts and from the trace's letters.
fn tally(report: &Value) -> (u64, u64, u64, u64, u64) {
    let counts = (
        u(report, "/audit/admitted"),
        u(report, "/audit/rejected"),
        u(report, "/other"),
        u(report, "/errors"),
        u(report, "/timeouts"),
    );
    let letters = report["trace"]["outcome"]
        .as_str()
        .expect("the outcome letters");
    let n = |c: char| letters.chars().filter(|&l| l == c).count() as u64;
    assert_eq!(
        (n('A'), n('R'), n('O'), n('E'), n('T')),
        counts,
        "the trace's letters agree with the counts: {report}"
    );
    counts
}

#[test]
fn statuses_are_classified_by_default_as_2xx_admitted_and_429_or_503_rejected() {
    let report = probe(&[]);
    // Twice each: 200, 204, 299 admitted; 429, 503 rejected; 300, 404, 500 other; the held
    // connection times out; the dropped one is an error.
    assert_eq!(tally(&report), (6, 4, 6, 2, 2));
    // A timed-out request waited the whole timeout: the slowest answer took at least 200 ms
    // (exact: the timer starts before the request is written).
    assert!(u(&report, "/latency/max_us") >= 200_000, "{report}");
}

#[test]
fn admit_and_reject_choose_which_statuses_mean_what() {
    let report = probe(&["--admit", "200,300-399", "--reject", "4xx,500"]);
    // Twice each: 200, 300 admitted; 404, 429, 500 rejected; 204, 299, 503 other.
    assert_eq!(tally(&report), (4, 6, 6, 2, 2));
}

#[test]
fn send_lateness_is_reported_from_the_trace() {
    let report = probe(&[]);
    let sent: Vec<u64> = serde_json::from_value(report["trace"]["sent_us"].clone()).expect("sent");
    let due: Vec<u64> = serde_json::from_value(report["trace"]["due_us"].clone()).expect("due");
    assert_eq!((sent.len(), due.len()), (20, 20));
    // The plan: one request every 20 ms from the worst moment of the second window.
    let step: Vec<u64> = due.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(step.iter().all(|&d| d == 20_000), "{due:?}");
    // Nothing is sent early; lateness is sent − due, and its quantiles are nearest-rank:
    // the ⌈n/2⌉-th and ⌈99n/100⌉-th smallest, here the 10th and the 20th of 20.
    assert!(sent.iter().zip(&due).all(|(s, d)| s >= d), "sent early");
    let mut late: Vec<u64> = sent.iter().zip(&due).map(|(s, d)| s - d).collect();
    late.sort_unstable();
    assert_eq!(u(&report, "/lateness/p50_us"), late[9], "{report}");
    assert_eq!(u(&report, "/lateness/p99_us"), late[19], "{report}");
    assert_eq!(u(&report, "/lateness/max_us"), late[19], "{report}");
    // Timing: at one request every 20 ms the sender keeps up on a loaded two-core machine;
    // the median send is allowed 50 ms late, more than two gaps, where a sender that waited
    // for answers (timeouts of 200 ms) would be seconds late.
    assert!(late[9] < 50_000, "median send {} µs late", late[9]);
}

/// A server that answers every request with `status`; returns its URL and how many it read.
fn fixed_server(status: u16) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let url = format!(
        "http://127.0.0.1:{}/api",
        listener.local_addr().expect("address").port()
    );
    let seen = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&seen);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let counter = Arc::clone(&counter);
            std::thread::spawn(move || {
                while read_head(&mut stream) {
                    counter.fetch_add(1, Ordering::SeqCst);
                    let answer = format!("HTTP/1.1 {status} X\r\ncontent-length: 0\r\n\r\n");
                    if stream.write_all(answer.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    (url, seen)
}

/// Three gateways, the second of which refuses everything: each request goes to the gateway
/// the fleet's router picks (round-robin in turn; random as `ratelab::limiter::Router` draws
/// for the seed, run 0), which the trace's `gateway` column and each server's count show, and
/// each gateway's part of the report is what its server answered. Nothing here depends on
/// timing: the servers answer by who they are, not when.
#[test]
fn several_targets_each_get_the_requests_the_fleets_router_sends_them() {
    use ratelab::limiter::{Route, Router};
    use ratelab::rng::{Rng, Stream};
    for (route, seed) in [("round-robin", "1"), ("random", "5")] {
        let servers = [fixed_server(200), fixed_server(429), fixed_server(204)];
        let mut args = vec!["probe"];
        for (url, _) in &servers {
            args.extend(["--target", url.as_str()]);
        }
        args.extend([
            "--route",
            route,
            "--seed",
            seed,
            "--traffic",
            "flood:every=10ms,for=300ms",
            "--limit",
            "20",
            "--window",
            "1s",
            "--model",
            "fixed-window",
            "--format",
            "json",
        ]);
        let out = Command::new(env!("CARGO_BIN_EXE_ratelab"))
            .args(&args)
            .output()
            .expect("ratelab runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{route}: {stderr}");
        assert!(stderr.contains("3 gateways, --route"), "{stderr}");
        let r: Value = serde_json::from_slice(&out.stdout).expect("the report is JSON");
        let sent = u(&r, "/sent") as usize;
        assert_eq!(sent, 30, "{r}");
        let gateway: Vec<usize> =
            serde_json::from_value(r["trace"]["gateway"].clone()).expect("the gateway column");
        let mut router = Router::new(
            if route == "random" {
                Route::Random
            } else {
                Route::RoundRobin
            },
            3,
            Rng::new(seed.parse().expect("a seed"), 0, Stream::Routing),
        );
        // The flood's requests are due 10 ms apart, so the trace (in send order) is the plan's.
        let picked: Vec<usize> = (0..sent).map(|_| router.pick()).collect();
        assert_eq!(gateway, picked, "{route}");
        if route == "random" {
            assert_ne!(picked, (0..sent).map(|k| k % 3).collect::<Vec<_>>());
        }
        let letters = r["trace"]["outcome"].as_str().expect("letters").as_bytes();
        for (k, &g) in gateway.iter().enumerate() {
            assert_eq!(
                letters[k],
                if g == 1 { b'R' } else { b'A' },
                "{route}: request {k}"
            );
        }
        let gateways = r["gateways"].as_array().expect("the gateways");
        assert_eq!(gateways.len(), 3);
        assert_eq!(r["route"], route);
        assert_eq!(r["comparison"]["coord"], "local");
        for (g, ((url, seen), part)) in servers.iter().zip(gateways).enumerate() {
            let mine = gateway.iter().filter(|&&x| x == g).count() as u64;
            assert_eq!(part["target"], url.as_str());
            assert_eq!(
                seen.load(Ordering::SeqCst) as u64,
                mine,
                "{route}: gateway {g}"
            );
            assert_eq!(u(part, "/sent"), mine);
            assert_eq!(u(part, "/admitted"), if g == 1 { 0 } else { mine });
            // Each fixed window of 1 s admits up to 20 at each gateway: all it was sent.
            assert_eq!(u(part, "/model/admitted"), mine, "{part}");
        }
        assert_eq!(
            u(&r, "/audit/admitted"),
            30 - gateway.iter().filter(|&&g| g == 1).count() as u64
        );
    }
}

/// A server that rejects its first `rejections` requests with 429, each with `retry_after`
/// as a `Retry-After` header if given, and admits the rest; returns its URL.
fn rejecting_server(rejections: usize, retry_after: Option<&'static str>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let url = format!(
        "http://127.0.0.1:{}/api",
        listener.local_addr().expect("address").port()
    );
    let seen = Arc::new(AtomicUsize::new(0));
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let counter = Arc::clone(&seen);
            std::thread::spawn(move || {
                while read_head(&mut stream) {
                    let n = counter.fetch_add(1, Ordering::SeqCst);
                    let answer = match (n < rejections, retry_after) {
                        (true, Some(v)) => {
                            format!(
                                "HTTP/1.1 429 X\r\nretry-after: {v}\r\ncontent-length: 0\r\n\r\n"
                            )
                        }
                        (true, None) => "HTTP/1.1 429 X\r\ncontent-length: 0\r\n\r\n".to_owned(),
                        (false, _) => "HTTP/1.1 200 X\r\ncontent-length: 0\r\n\r\n".to_owned(),
                    };
                    if stream.write_all(answer.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    url
}

/// A spike of 3 at 100 ms, each retried up to twice 100 ms later, against a server that
/// rejects the first 3 requests with `retry_after` and admits the rest: (due, sent, latency,
/// outcome letter, Retry-After heard) of each request, in the trace's order.
fn retried(
    policy: &str,
    retry_after: Option<&'static str>,
) -> Vec<(u64, u64, u64, char, Option<u64>)> {
    let url = rejecting_server(3, retry_after);
    let traffic = format!("retry:rate=1/1h,spike=3,at=100ms,tries=3,every=100ms{policy}");
    let out = Command::new(env!("CARGO_BIN_EXE_ratelab"))
        .args([
            "probe",
            "--target",
            &url,
            "--traffic",
            &traffic,
            "--limit",
            "20",
            "--window",
            "1s",
            "--duration",
            "1s",
            "--format",
            "json",
        ])
        .output()
        .expect("ratelab runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{traffic}: {stderr}");
    let r: Value = serde_json::from_slice(&out.stdout).expect("the report is JSON");
    let list = |key: &str| -> Vec<u64> {
        serde_json::from_value(r["trace"][key].clone()).unwrap_or_else(|_| panic!("{key} in {r}"))
    };
    let heard: Vec<Option<u64>> = match r["trace"].get("retry_after_us") {
        Some(v) => serde_json::from_value(v.clone()).expect("retry_after_us"),
        None => vec![None; list("sent_us").len()],
    };
    let letters: Vec<char> = r["trace"]["outcome"]
        .as_str()
        .expect("outcome")
        .chars()
        .collect();
    let (due, sent, latency) = (list("due_us"), list("sent_us"), list("latency_us"));
    (0..sent.len())
        .map(|i| (due[i], sent[i], latency[i], letters[i], heard[i]))
        .collect()
}

/// `retry-after=honor` against a server that sends `Retry-After: 1`: each retry is due 1 s
/// after its rejection's answer came (sent + latency + 1 s, to the µs: the plan's own
/// arithmetic on the trace's times), and the trace keeps the header's delay for a reader to
/// check; `retry-after=ignore` hears it, keeps it in the trace, and retries after its own
/// 100 ms; honouring with no header falls back to the policy's gap, as the simulator's client
/// does when its limiter gives no answer. Nothing here depends on timing but the order of
/// the spike's three answers, which the checks do not assume.
#[test]
fn a_retry_after_header_times_the_retries_of_a_client_that_honours_it() {
    const S: u64 = 1_000_000;
    let honoured = retried(",retry-after=honor", Some("1"));
    assert_eq!(honoured.len(), 6, "{honoured:?}");
    type Row = (u64, u64, u64, char, Option<u64>);
    let (rejected, retries): (Vec<&Row>, Vec<&Row>) = honoured.iter().partition(|r| r.0 == 100_000);
    assert!(
        rejected.iter().all(|r| r.3 == 'R' && r.4 == Some(S)),
        "{rejected:?}"
    );
    let mut expected: Vec<u64> = rejected.iter().map(|r| r.1 + r.2 + S).collect();
    let mut due: Vec<u64> = retries.iter().map(|r| r.0).collect();
    expected.sort_unstable();
    due.sort_unstable();
    assert_eq!(due, expected, "{honoured:?}");
    assert!(
        retries
            .iter()
            .all(|r| r.3 == 'A' && r.4.is_none() && r.1 >= r.0),
        "{retries:?}"
    );
    // Ignored: the header is heard and recorded, the retries come 100 ms after their tries.
    let ignored = retried(",retry-after=ignore", Some("1"));
    assert_eq!(ignored.len(), 6, "{ignored:?}");
    assert_eq!(ignored.iter().filter(|r| r.4 == Some(S)).count(), 3);
    let due: Vec<u64> = ignored.iter().map(|r| r.0).collect();
    assert_eq!(due, [100_000, 100_000, 100_000, 200_000, 200_000, 200_000]);
    // Honoured, but no header (or one the probe does not read: an HTTP-date): the policy's
    // gap, and nothing in the trace.
    for header in [None, Some("Wed, 21 Oct 2015 07:28:00 GMT")] {
        let fallback = retried(",retry-after=honor", header);
        let due: Vec<u64> = fallback.iter().map(|r| r.0).collect();
        assert_eq!(
            due,
            [100_000, 100_000, 100_000, 200_000, 200_000, 200_000],
            "{header:?}"
        );
        assert!(fallback.iter().all(|r| r.4.is_none()), "{fallback:?}");
    }
}
