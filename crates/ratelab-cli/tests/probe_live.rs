//! `ratelab probe` against real limiters: Debian's nginx (`limit_req`) and redis-server, on
//! loopback. `cargo xtask test` starts both (config in tests/probe/nginx.conf) and runs these
//! with `--ignored`, passing their addresses in `RATELAB_NGINX` and `RATELAB_REDIS`.
//!
//! Windows are one second with `L = 20`, so each probe lasts seconds.
//!
//! **Tolerance for timing jitter.** A real limiter decides at its own clock (nginx's has
//! millisecond resolution and is read once per event-loop turn) on a request that reaches it a
//! little after the probe stamped it; the model decides on the stamps. Every assertion here
//! is one of three kinds, each with its margin stated where it is made and measured by
//! `cargo xtask probe-soak 30` (the README has the table):
//! - exact, where send timing cannot change the answer: counts of a burst (requests due at
//!   one instant are compared by how many got through, whatever order they reached the
//!   limiter in, and both audits use the same assignment), and Redis, which decides on the
//!   probe's own stamps;
//! - up to the timing of single admissions, where admissions come one emission interval
//!   apart and a request near the interval's end can go either way ([`matches_model`]);
//! - latency, against nginx's documented delays, with the margin measured.

use serde_json::Value;
use std::process::Command;

fn server(var: &str) -> String {
    std::env::var(var).unwrap_or_else(|_| {
        panic!("{var} is not set: run these through `cargo xtask test`, which starts nginx and redis-server on loopback")
    })
}

/// Runs `ratelab probe ARGS --format json` and returns the report.
fn probe(args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_ratelab"))
        .arg("probe")
        .args(args)
        .args(["--format", "json"])
        .output()
        .expect("ratelab runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "probe {args:?} failed: {stderr}");
    assert!(
        stderr.contains("ratelab probe: sending"),
        "no summary before sending: {stderr}"
    );
    serde_json::from_slice(&out.stdout).expect("the report is JSON")
}

/// A probe at nginx location `path`, keyed apart from every other probe.
fn nginx(path: &str, key: &str, args: &[&str]) -> Value {
    let target = format!("{}{path}", server("RATELAB_NGINX"));
    let header = format!("X-Probe-Key:{key}-{}", std::process::id());
    let mut all = vec!["--target", &target, "--header", &header];
    all.extend_from_slice(args);
    probe(&all)
}

fn redis(script: &str, args: &[&str]) -> Value {
    let url = server("RATELAB_REDIS");
    let mut all = vec!["--redis", url.as_str(), "--script", script];
    all.extend_from_slice(args);
    probe(&all)
}

fn u(v: &Value, path: &str) -> u64 {
    v.pointer(path)
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("no {path} in {v}"))
}

fn f(v: &Value, path: &str) -> f64 {
    v.pointer(path)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("no {path} in {v}"))
}

/// Every request answered, and nothing but admits and rejects.
fn all_answered(r: &Value) {
    assert_eq!(
        (u(r, "/errors"), u(r, "/timeouts"), u(r, "/other")),
        (0, 0, 0),
        "{r}"
    );
}

/// Prints what a timing tolerance is measured against, one line per probe, for
/// `cargo xtask probe-soak` to collect (it runs these tests with `--nocapture`).
fn margin(label: &str, what: &str, value: f64) {
    eprintln!("margin {label} {what} {value}");
}

/// Admissions in each window-long bin of the trace (by send time), by the real limiter and
/// by the model: the letters `outcome` and `model` of the report's trace.
fn admitted_per_window(r: &Value) -> Vec<(u64, u64)> {
    let window = u(r, "/window_us");
    let trace = &r["trace"];
    let sent = trace["sent_us"].as_array().expect("send times");
    let real = trace["outcome"].as_str().expect("outcomes").as_bytes();
    let model = trace["model"].as_str().expect("model letters").as_bytes();
    let mut bins: Vec<(u64, u64)> = Vec::new();
    for ((t, &a), &m) in sent.iter().zip(real).zip(model) {
        let bin = (t.as_u64().expect("a time") / window) as usize;
        if bins.len() <= bin {
            bins.resize(bin + 1, (0, 0));
        }
        bins[bin].0 += u64::from(a == b'A');
        bins[bin].1 += u64::from(m == b'A');
    }
    bins
}

/// nginx's emission interval at 20 a second.
const INTERVAL_US: u64 = 50_000;

/// The real limiter is the model up to when single admissions fell.
///
/// Decision-for-decision agreement is the wrong measure where admissions come one emission
/// interval apart (nginx's 50 ms at 20 a second). nginx decides on its own millisecond clock a
/// moment after the probe stamped the request, so a request stamped within a millisecond or
/// so of the interval's end can go either way; from there on, the real limiter's admissions
/// run one tick before or after the model's, and every later pair of decisions differs
/// though the same number get through. Measured with `cargo xtask probe-soak`: agreement as
/// low as 0.88 with equal counts, busiest window and served share.
///
/// What such a shift cannot change: the admissions in each window-long bin differ by at most
/// what can cross the bin's two edges, the busiest window likewise, and the total by what can
/// cross the run's two ends; an edge is crossed by at most one admission per emission
/// interval within the slowest answer (1 on an idle machine). A model with another burst or
/// rate breaks these: burst 5 puts 5 more in the first bin, 21 a second gains one in every
/// bin and 3 over a 3 s flood.
fn matches_model(label: &str, r: &Value) {
    all_answered(r);
    margin(label, "agreement", f(r, "/comparison/agreement"));
    margin(label, "lateness-max-us", u(r, "/lateness/max_us") as f64);
    // A decision falls somewhere between the request's stamp and its answer, so each
    // admission may sit up to the slowest answer away from where the model put it, and the
    // admissions that can cross one edge (of a bin, of the busiest window, of the run) are as
    // many emission intervals as that covers, rounded up: 1 on an idle machine, more on a
    // loaded one (the soak saw answers up to 370 ms late).
    let per_edge = (u(r, "/latency/max_us") + 1_000).div_ceil(INTERVAL_US);
    let allowed = 2 * per_edge;
    margin(label, "edge-allowance", allowed as f64);
    let bins = admitted_per_window(r);
    let worst_bin = bins.iter().map(|&(a, m)| a.abs_diff(m)).max().unwrap_or(0);
    margin(label, "bin-diff", worst_bin as f64);
    assert!(
        worst_bin <= allowed,
        "admitted per window, real and model: {bins:?}, {allowed} allowed: {r}"
    );
    let (real, model) = (u(r, "/audit/busiest"), u(r, "/comparison/audit/busiest"));
    margin(label, "busiest-diff", real.abs_diff(model) as f64);
    assert!(
        real.abs_diff(model) <= allowed,
        "busiest {real} against the model's {model}, {allowed} allowed: {r}"
    );
    let (real, model) = (u(r, "/audit/admitted"), u(r, "/comparison/audit/admitted"));
    margin(label, "admitted-diff", real.abs_diff(model) as f64);
    assert!(
        real.abs_diff(model) <= allowed,
        "admitted {real} against the model's {model}, {allowed} allowed: {r}"
    );
}

/// The real limiter decides as the model does, request for request: for the Redis recipes,
/// which decide on the probe's own send stamp (passed to the script), so send timing cannot
/// change a decision. Two scripts can still run in an order other than their stamps' on the
/// multiplexed connection, which can flip a decision taken exactly at the limit: at least 95%
/// must agree (measured with `cargo xtask probe-soak`, on a machine busier than the soak's
/// one spinning core: 98.6% at the lowest, 100% in most runs).
fn decides_as_model(label: &str, r: &Value) {
    matches_model(label, r);
    let agreement = f(r, "/comparison/agreement");
    assert!(agreement >= 0.95, "agreement {agreement}: {r}");
}

/// How a burst's decisions may differ from the model's through send timing alone.
///
/// A burst (requests due at one instant) leaves over a millisecond or two on an idle machine,
/// but over up to 130 ms on a loaded one (seen in the soak). The model decides each request
/// at its send stamp; nginx decides it when it reads it, somewhere between its stamp and its
/// answer, on a clock read once per event-loop turn. The bucket leaks one request per
/// emission interval, so a burst whose requests were decided over a span of `s` µs may have
/// seen up to `s / interval` leaks more or fewer than the model did (rounded up: a span of
/// any length can straddle one leak). The span is taken from the burst's first stamp to its
/// last plus the slowest answer of the probe. Returns, per burst of the trace, the real and
/// the model's admissions and that allowance: 1 for a burst sent and answered within one
/// interval, as on an idle machine.
fn bursts(r: &Value) -> Vec<(u64, u64, u64)> {
    let trace = &r["trace"];
    let times = |k: &str| -> Vec<u64> {
        trace[k]
            .as_array()
            .expect("times")
            .iter()
            .map(|t| t.as_u64().expect("a time"))
            .collect()
    };
    let (sent, due) = (times("sent_us"), times("due_us"));
    let real = trace["outcome"].as_str().expect("outcomes").as_bytes();
    let model = trace["model"].as_str().expect("model letters").as_bytes();
    let slowest_answer = u(r, "/latency/max_us");
    let mut out = Vec::new();
    let mut instants: Vec<u64> = due.clone();
    instants.sort_unstable();
    instants.dedup();
    for at in instants {
        let group: Vec<usize> = (0..due.len()).filter(|&i| due[i] == at).collect();
        let first = group.iter().map(|&i| sent[i]).min().unwrap_or(at);
        let last = group.iter().map(|&i| sent[i]).max().unwrap_or(at);
        let span = last - first + slowest_answer;
        let count = |letters: &[u8]| group.iter().filter(|&&i| letters[i] == b'A').count() as u64;
        out.push((count(real), count(model), span.div_ceil(INTERVAL_US)));
    }
    out
}

/// Each burst admitted as many as the model, within what its send spread allows; returns
/// the total allowance.
fn bursts_match(label: &str, r: &Value) -> u64 {
    let b = bursts(r);
    let allowance: u64 = b.iter().map(|g| g.2).sum();
    margin(label, "burst-allowance", allowance as f64);
    margin(
        label,
        "burst-diff",
        b.iter().map(|g| g.0.abs_diff(g.1)).sum::<u64>() as f64,
    );
    for &(real, model, allow) in &b {
        assert!(
            real.abs_diff(model) <= allow,
            "a burst: {real} admitted against the model's {model}, {allow} allowed by its spread: {b:?}: {r}"
        );
    }
    allowance
}

const L20: [&str; 4] = ["--limit", "20", "--window", "1s"];

fn with(extra: &[&'static str]) -> Vec<&'static str> {
    let mut v = L20.to_vec();
    v.extend_from_slice(extra);
    v
}

#[test]
#[ignore = "needs nginx on loopback: cargo xtask test starts it"]
fn nginx_nodelay_boundary_burst_is_the_leaky_bucket_meter() {
    let r = nginx(
        "/nodelay",
        "bb",
        &with(&[
            "--traffic",
            "boundary-burst",
            "--model",
            "leaky-bucket:burst=5,mode=meter",
        ]),
    );
    all_answered(&r);
    // Burst 5 with nodelay: the first request and 5 more at each instant (20 a second over
    // 1 s before the second burst: the bucket is empty again), 12 in all when each burst is
    // decided at one instant; a burst spread over more time may also get what leaked meanwhile.
    let allowance = bursts_match("nginx-boundary", &r);
    let admitted = u(&r, "/audit/admitted");
    assert!(
        (12..=12 + allowance).contains(&admitted),
        "{admitted} admitted, 12 to {} expected: {r}",
        12 + allowance
    );
    // The second burst comes 1 s after the first, so the trailing window that ends in it
    // holds the first burst's later admissions too, as many as the send spread leaves inside.
    let busiest = u(&r, "/audit/busiest");
    margin("nginx-boundary", "busiest", busiest as f64);
    margin(
        "nginx-boundary",
        "lateness-max-us",
        u(&r, "/lateness/max_us") as f64,
    );
    assert!((6..=12 + allowance).contains(&busiest), "{r}");
    // Both audits use the same assignment of admissions inside a burst, so they differ only
    // by admissions one of them has and the other has not.
    let model_busiest = u(&r, "/comparison/audit/busiest");
    assert!(busiest.abs_diff(model_busiest) <= allowance, "{r}");
    // The lower bound 12 is what tells nginx's burst of 5 from a burst of 4 (10 when each
    // burst is decided at one instant); which model fits is the core's comparison, tested
    // with hand-made traces in `ratelab::probe`. A live second probe with the wrong model
    // used to assert that it disagrees, but a burst whose decisions straddle a leak (seen on
    // a loaded machine) lets burst 4 admit as many, so that would be a test of luck.
}

#[test]
#[ignore = "needs nginx on loopback: cargo xtask test starts it"]
fn nginx_flood_matches_the_leaky_bucket_within_jitter() {
    for (path, model, burst) in [
        ("/nodelay", "leaky-bucket:burst=5,mode=meter", 5),
        ("/strict", "leaky-bucket:burst=0,mode=meter", 0),
    ] {
        let r = nginx(
            path,
            "flood",
            &with(&["--traffic", "flood:every=9ms,for=3s", "--model", model]),
        );
        matches_model(&format!("flood{path}"), &r);
        // What nginx promises whatever the timing: the first request and `burst` more, then
        // one per emission interval over the span its decisions took (from the first stamp
        // to the last answer). The model, deciding on the same stamps, is compared above;
        // that the model itself admits about 20 a second of this flood is a core test.
        let trace = &r["trace"]["sent_us"];
        let stamps: Vec<u64> = trace
            .as_array()
            .expect("stamps")
            .iter()
            .map(|t| t.as_u64().expect("a time"))
            .collect();
        let span = stamps.last().copied().unwrap_or(0) - stamps.first().copied().unwrap_or(0)
            + u(&r, "/latency/max_us");
        let most = 1 + burst + span.div_ceil(INTERVAL_US);
        let admitted = u(&r, "/audit/admitted");
        margin(
            &format!("flood{path}"),
            "admitted-below-most",
            (most - admitted.min(most)) as f64,
        );
        assert!(
            admitted <= most,
            "{path}: {admitted} admitted, at most {most} in {span} µs"
        );
    }
}

#[test]
#[ignore = "needs nginx on loopback: cargo xtask test starts it"]
fn nginx_without_nodelay_admits_the_same_but_late() {
    let args = with(&[
        "--traffic",
        "boundary-burst",
        "--model",
        "leaky-bucket:burst=5,mode=queue",
    ]);
    let queued = nginx("/delay", "queue", &args);
    all_answered(&queued);
    let allowance = bursts_match("nginx-delay", &queued);
    let admitted = u(&queued, "/audit/admitted");
    assert!(
        (12..=12 + allowance).contains(&admitted),
        "{admitted} admitted, 12 to {} expected: {queued}",
        12 + allowance
    );
    // The fifth queued request waits 5 emission intervals of 50 ms before nginx answers:
    // 250 ms by nginx's clock. Margins: 20 ms below (nginx's clock is read once per event-loop
    // turn and its timer may fire up to a tick early), 150 ms above (a loaded machine answers
    // late, never early). Measured over the soak: 251-254 ms.
    let slowest = u(&queued, "/latency/max_us");
    margin("nginx-delay", "slowest-us", slowest as f64);
    assert!(
        (230_000..=400_000).contains(&slowest),
        "the slowest answer took {slowest} µs"
    );
    // With nodelay nothing waits: every answer within 100 ms (one answer on loopback takes
    // well under a millisecond; measured over the soak: at most 6 ms for the slowest of 40).
    let at_once = nginx("/nodelay", "queue-nodelay", &args);
    let fastest_slowest = u(&at_once, "/latency/max_us");
    margin("nginx-delay", "nodelay-slowest-us", fastest_slowest as f64);
    assert!(fastest_slowest < 100_000, "{at_once}");
}

#[test]
#[ignore = "needs nginx on loopback: cargo xtask test starts it"]
fn nginx_retry_storm_matches_the_model_within_jitter() {
    let r = nginx(
        "/nodelay",
        "retry",
        &with(&[
            "--traffic",
            "retry:rate=15/1s,spike=40,at=1s,tries=4,every=100ms",
            "--duration",
            "5s",
            "--model",
            "leaky-bucket:burst=5,mode=meter",
        ]),
    );
    matches_model("nginx-retry", &r);
    // The retries were sent in reaction to real rejections: more requests than first tries.
    assert!(u(&r, "/sent") > u(&r, "/offered"), "{r}");
}

const STORM: [&str; 6] = [
    "--traffic",
    "retry:rate=15/1s,spike=40,at=1s,tries=4,every=100ms",
    "--duration",
    "6s",
    "--limit",
    "20",
];

#[test]
#[ignore = "needs redis-server on loopback: cargo xtask test starts it"]
fn redis_record_rejects_locks_the_retrying_client_out() {
    let mut args = STORM.to_vec();
    args.extend(["--window", "1s"]);
    let recorded = redis("sorted-set-record-rejects", &args);
    let kept = redis("sorted-set", &args);
    decides_as_model("redis-record-rejects", &recorded);
    decides_as_model("redis-sorted-set", &kept);
    // Locked out, as the study counts it: served under half its requests.
    let (locked, free) = (
        f(&recorded, "/audit/served_share"),
        f(&kept, "/audit/served_share"),
    );
    assert!(locked < 0.5, "record-rejects served {locked}");
    assert!(free >= 0.5, "sorted-set served {free}");
    // After the spike the log that records rejects stays full while the storm lasts: sent on
    // time, the simulator's trace of this scenario (seed 1) never has fewer than 41 entries in
    // the trailing second after 2.5 s, 21 more than the limit, so nothing is admitted there
    // (the core test `the_retry_storm_keeps_a_log_that_records_rejects_full` holds that).
    // Redis decides on the probe's own send stamps, so what it admitted after the spike is
    // what the model admits on those same stamps: equal, whatever the sender's timing was. Only
    // a sender stalled for most of a second could thin the log below the limit, and then the
    // model admits too; the lateness is printed for that case.
    let late = |letters: &str| {
        let trace = recorded.pointer("/trace").expect("trace");
        let sent = trace["sent_us"].as_array().expect("times");
        sent.iter()
            .zip(letters.as_bytes())
            .filter(|(t, &o)| t.as_u64().unwrap_or(0) > 2_500_000 && o == b'A')
            .count()
    };
    let real_late = late(recorded["trace"]["outcome"].as_str().expect("outcomes"));
    let model_late = late(recorded["trace"]["model"].as_str().expect("model letters"));
    let lateness = u(&recorded, "/lateness/max_us");
    margin("redis-record-rejects", "late-admits", real_late as f64);
    assert_eq!(
        real_late, model_late,
        "admitted after the spike: {real_late} by Redis, {model_late} by the model on the same send times (send lateness at most {lateness} µs)"
    );
    assert_eq!(
        real_late, 0,
        "admitted after the spike: {real_late}, by the model too: the sender was late by up to {lateness} µs"
    );
    // The literal rule disagrees with a lockout: every reject there had room. The plain
    // sorted set is the literal rule: no wrong reject (a burst's admissions are audited first,
    // whatever order its spread-out requests reached Redis in: once, in the soak, one of the
    // spike's requests stamped early was run after others and, audited in stamp order, looked
    // like a reject with room).
    assert!(u(&recorded, "/audit/wrong_rejects") > 100);
    assert_eq!(u(&kept, "/audit/wrong_rejects"), 0);
}

#[test]
#[ignore = "needs redis-server on loopback: cargo xtask test starts it"]
fn redis_gcra_and_fixed_window_are_their_models() {
    for (script, extra) in [("gcra", &["--burst", "5"][..]), ("fixed-window", &[][..])] {
        // Two bursts of L, 10 ms either side of a boundary.
        let mut args = with(&["--traffic", "boundary-burst:before=10ms,after=10ms"]);
        args.extend_from_slice(extra);
        let r = redis(script, &args);
        all_answered(&r);
        assert_eq!(
            u(&r, "/comparison/agree"),
            u(&r, "/comparison/compared"),
            "{script}: {r}"
        );
        let busiest = u(&r, "/audit/busiest");
        match script {
            // The boundary burst doubles a fixed window: 2L in a trailing window.
            "fixed-window" => assert_eq!(busiest, 40, "{r}"),
            // GCRA with burst 5: 5 at once, and 20 ms later not one more interval (50 ms).
            _ => assert_eq!(busiest, 5, "{r}"),
        }
    }
}
