//! `ratelab fit` from the command line: a log in, the limiter that explains it out.

use serde_json::Value;
use std::io::Write;
use std::process::{Command, Stdio};

fn ratelab(args: &[&str], input: &str) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ratelab"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ratelab runs");
    // A command refused before it reads its input closes the pipe: not an error here.
    if let Err(e) = child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
    {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    }
    let out = child.wait_with_output().expect("ratelab ends");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A CSV log of `n` requests a few hundred ms apart (a fixed LCG), decided by a fixed window
/// of `limit` a second on the epoch's seconds.
fn fixed_window_log(n: usize, limit: u32) -> String {
    let mut out = String::from("time,status\n");
    let (mut t_ms, mut x): (u64, u64) = (1_796_464_800_000, 7);
    let (mut second, mut count) = (0, 0);
    for _ in 0..n {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        t_ms += 1 + (x >> 33) % 180;
        if t_ms / 1000 != second {
            (second, count) = (t_ms / 1000, 0);
        }
        count += 1;
        let status = if count <= limit { 200 } else { 429 };
        out += &format!("{t_ms},{status}\n");
    }
    out
}

#[test]
fn a_fixed_windows_log_is_fitted_back_to_a_fixed_window() {
    let log = fixed_window_log(2_000, 7);
    let (code, out, err) = ratelab(&["fit", "-", "--format", "json"], &log);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["requests"], 2_000);
    let fits = v["fits"].as_array().expect("fits");
    assert_eq!(fits[0]["agreement"], 1.0, "{out}");
    let exact: Vec<&str> = fits
        .iter()
        .filter(|f| f["agreement"] == 1.0)
        .flat_map(|f| {
            std::iter::once(f["limiter"].as_str().expect("spec")).chain(
                f["same_as"]
                    .as_array()
                    .expect("list")
                    .iter()
                    .map(|s| s.as_str().expect("spec")),
            )
        })
        .collect();
    let fixed = fits
        .iter()
        .find(|f| f["limiter"] == "fixed-window")
        .expect("the fixed window among the fits");
    assert!(exact.contains(&"fixed-window"), "{exact:?}");
    assert_eq!(fixed["limit"], 7);
    assert_eq!(fixed["window_us"], 1_000_000);
    // The text names it, its promise and the command to run it.
    let (code, text, err) = ratelab(&["fit", "-"], &log);
    assert_eq!(code, 0, "{err}");
    assert!(
        text.contains("fixed-window  (--limit 7 --window 1s)") && text.contains("agreement 100"),
        "{text}"
    );
}

#[test]
fn bad_statuses_and_unreadable_lines_are_named() {
    let (code, _, err) = ratelab(&["fit", "-", "--status", "42"], "1796464800,200\n");
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--status") && err.contains("100 to 599"),
        "{err}"
    );
    let (code, _, err) = ratelab(&["fit", "-"], "1796464800,200\n1796464801,teapot\n");
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("log line 2") && err.contains("HTTP status"),
        "{err}"
    );
    let (code, _, err) = ratelab(&["fit", "-", "--key", "everyone"], "1796464800,200\n");
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("client") && err.contains("all"), "{err}");
}

#[test]
fn a_log_with_nothing_rejected_says_it_cannot_tell() {
    let (code, out, err) = ratelab(
        &["fit", "-"],
        "1796464800,200\n1796464801,200\n1796464802,200\n",
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("no request of the 3 was rejected"), "{out}");
    // Times to the second: what the order within a second does is said.
    assert!(out.contains("whole seconds"), "{out}");
}

/// `ratelab fit FILE --format json` of a file in docs/examples/fit.
fn fit_example(name: &str) -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/examples/fit/").to_owned() + name;
    let (code, out, err) = ratelab(&["fit", &path, "--format", "json"], "");
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).expect("JSON")
}

#[test]
fn real_servers_logs_are_fitted_back_to_their_configurations() {
    // Recorded from Debian's nginx (rate=10r/s, burst=5 nodelay) with $msec appended to the
    // combined format (docs/examples/fit/record.sh).
    let v = fit_example("nginx-msec.log");
    assert_eq!(v["format"], "access-log+msec");
    let best = &v["fits"][0];
    assert_eq!(best["limiter"], "nginx:rate=10r/s,burst=5,nodelay", "{v}");
    // nginx decides on its monotonic millisecond clock and logs $msec from the wall clock's:
    // each request the model decides otherwise, it decides as nginx did a millisecond
    // earlier or later.
    assert!(
        best["agreement"].as_f64().expect("a share") > 0.95,
        "{best}"
    );
    assert_eq!(best["replayed_otherwise"], best["within_a_step"], "{best}");
    // HAProxy (http_req_rate(10s), deny over 10, option httplog): exact.
    let v = fit_example("haproxy.log");
    assert_eq!(v["format"], "haproxy");
    let best = &v["fits"][0];
    assert_eq!(best["limiter"], "haproxy:period=10s,limit=10", "{v}");
    assert_eq!(best["agreement"], 1.0);
}

#[test]
fn a_queueing_nginxs_log_is_fitted_back_to_its_rate() {
    // Recorded from Debian's nginx with rate=4r/s, burst=8 and no nodelay
    // (docs/examples/fit/nginx-queue.conf): every admitted request is logged when nginx
    // serves it, up to two seconds after it arrived. The fit puts them back: nginx at 4r/s,
    // queueing, deciding every request as the log says, with burst 8 in the range it names
    // (the log's rejections allow any burst in that range: it shows when requests were
    // served, not when they came).
    let v = fit_example("nginx-queue.log");
    let best = &v["fits"][0];
    let limiter = best["limiter"].as_str().expect("a spec");
    assert!(
        limiter.starts_with("nginx:rate=4r/s,burst=") && !limiter.contains("nodelay"),
        "{v}"
    );
    assert_eq!(best["agreement"], 1.0, "{best}");
    let lo = best["range"][0].as_u64().expect("a burst");
    let hi = best["range"][1].as_u64().unwrap_or(u64::MAX);
    assert!(lo <= 8 && 8 <= hi, "{best}");
    assert!(best["served_late"].as_u64() > Some(100), "{best}");
    // The same log read as if nginx logged requests when they came: no fit is exact.
    let (code, out, err) = ratelab(&["fit", "-", "--format", "json"], &queue_log_as_arrivals());
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).expect("JSON");
    assert!(v["fits"][0]["agreement"].as_f64() < Some(1.0), "{v}");
}

/// nginx-queue.log with every line's `$msec` moved a random 5 to 20 ms earlier: no longer a
/// queue's served times (its gaps no longer gather at one interval).
fn queue_log_as_arrivals() -> String {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/examples/fit/nginx-queue.log"
    );
    let text = std::fs::read_to_string(path).expect("the example");
    let mut x: u64 = 7;
    text.lines()
        .map(|l| {
            let (head, msec) = l.rsplit_once(' ').expect("a $msec");
            let (s, ms) = msec.split_once('.').expect("seconds.millis");
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let t = s.parse::<u64>().expect("s") * 1000 + ms.parse::<u64>().expect("ms")
                - 5
                - (x >> 33) % 16;
            format!("{head} {}.{:03}\n", t / 1000, t % 1000)
        })
        .collect()
}
