//! `ratelab probe` against real limiters: Debian's nginx (`limit_req`), HAProxy (a stick
//! table's `http_req_rate`) and redis-server, on loopback. `cargo xtask test` starts all three
//! (configs in tests/probe/nginx.conf and tests/probe/haproxy.cfg) and runs these with
//! `--ignored`, passing their addresses in `RATELAB_NGINX`, `RATELAB_HAPROXY` and
//! `RATELAB_REDIS`.
//!
//! Windows are one second with `L = 20`, so each probe lasts seconds; nginx's `rate=7r/m`, where
//! its integer arithmetic shows, takes 17 s.
//!
//! **Tolerance for timing jitter.** A real limiter decides at its own clock (nginx's and
//! HAProxy's have millisecond resolution and are read once per event-loop turn) on a request
//! that reaches it a little after the probe stamped it; the model decides on the stamps.
//! Every assertion here is one of three kinds, each with its margin stated where it is made
//! and measured by `cargo xtask probe-soak 20` (docs/src/performance.md has the table):
//! - exact, where send timing cannot change the answer: counts of a burst (requests due at
//!   one instant are compared by how many got through, whatever order they reached the
//!   limiter in, and both audits use the same assignment); Redis, which decides on the
//!   probe's own stamps; and every decision of nginx's and HAProxy's exact models (`nginx:`,
//!   `haproxy:`) up to the first one whose margin, how far its stamp is from where the
//!   model's decisions would flip, is within the probe's measured timing uncertainty (the
//!   slowest answer, and a millisecond for each clock: [`exact_while_far`]). The schedules are
//!   designed so that, sent on time, every such margin is tens of milliseconds;
//! - up to the timing of single admissions, where admissions come one emission interval
//!   apart and a request near the interval's end can go either way ([`matches_model`]), and
//!   facts a shift of timing cannot change (a lockout stays a lockout);
//! - latency, against nginx's documented delays: never earlier, and late by a margin
//!   measured ([`delays_match`]).

use ratelab::probe::ProbeReport;
use ratelab::{Decide, Decision, Limiter, LimiterSpec, Micros};
use serde_json::Value;
use std::process::Command;

fn server(var: &str) -> String {
    std::env::var(var).unwrap_or_else(|_| {
        panic!("{var} is not set: run these through `cargo xtask test`, which starts nginx, HAProxy and redis-server on loopback")
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

/// A probe at HAProxy path `path` (tests/probe/haproxy.cfg), keyed apart from every other.
fn haproxy(path: &str, key: &str, args: &[&str]) -> Value {
    let target = format!("{}{path}", server("RATELAB_HAPROXY"));
    let header = format!("X-Probe-Key:{key}-{}", std::process::id());
    let mut all = vec!["--target", &target, "--header", &header];
    all.extend_from_slice(args);
    probe(&all)
}

/// A probe of the three nginx gateways (three nginx processes from tests/probe/nginx.conf,
/// each with its own zones; `RATELAB_NGINX_FLEET`), at location `path` of each.
fn nginx_fleet(path: &str, key: &str, args: &[&str]) -> Value {
    let urls: Vec<String> = server("RATELAB_NGINX_FLEET")
        .split(',')
        .map(|u| format!("{u}{path}"))
        .collect();
    assert_eq!(urls.len(), 3, "three nginx gateways: {urls:?}");
    let header = format!("X-Probe-Key:{key}-{}", std::process::id());
    let mut all = Vec::new();
    for url in &urls {
        all.extend(["--target", url.as_str()]);
    }
    all.extend(["--header", &header]);
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

/// A column of the report's trace (`sent_us`, `due_us`, ...), as times.
fn column(r: &Value, key: &str) -> Vec<u64> {
    r["trace"][key]
        .as_array()
        .unwrap_or_else(|| panic!("no trace.{key} in {r}"))
        .iter()
        .map(|t| t.as_u64().expect("a time"))
        .collect()
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
    within_jitter(label, r, INTERVAL_US);
}

/// [`matches_model`] for a limiter whose admissions come at least `interval` µs apart.
fn within_jitter(label: &str, r: &Value, interval: Micros) {
    all_answered(r);
    margin(label, "agreement", f(r, "/comparison/agreement"));
    margin(label, "lateness-max-us", u(r, "/lateness/max_us") as f64);
    // A decision falls somewhere between the request's stamp and its answer, so each
    // admission may sit up to the slowest answer away from where the model put it, and the
    // admissions that can cross one edge (of a bin, of the busiest window, of the run) are as
    // many emission intervals as that covers, rounded up: 1 on an idle machine, more on a
    // loaded one (the soak saw answers up to 370 ms late).
    let per_edge = (u(r, "/latency/max_us") + 1_000).div_ceil(interval);
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
    let times = |k: &str| column(r, k);
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

/// The decided requests of a report as it compares them with a model: in groups whose order
/// of arrival is not known (requests due at one instant, and any later-due request stamped
/// before one of them: the core's rule), each decided in due order at its stamp, never
/// earlier than the decision before it.
struct Decided {
    /// (when the model decides it, its group, its index in the trace), in decision order.
    seq: Vec<(Micros, usize, usize)>,
    groups: usize,
}

fn decided(r: &Value) -> Decided {
    let trace = &r["trace"];
    let times = |k: &str| column(r, k);
    let (sent, due) = (times("sent_us"), times("due_us"));
    let letters = trace["outcome"].as_str().expect("outcomes").as_bytes();
    let mut order: Vec<usize> = (0..sent.len())
        .filter(|&k| matches!(letters[k], b'A' | b'R'))
        .collect();
    order.sort_by_key(|&k| (due[k], sent[k]));
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut latest = 0;
    for k in order {
        let joins = groups
            .last()
            .is_some_and(|g| due[g[0]] == due[k] || sent[k] < latest);
        match groups.last_mut() {
            Some(g) if joins => g.push(k),
            _ => groups.push(vec![k]),
        }
        latest = latest.max(sent[k]);
    }
    let mut seq = Vec::new();
    let mut last = 0;
    for (g, members) in groups.iter().enumerate() {
        let mut members = members.clone();
        members.sort_by_key(|&k| (due[k], sent[k]));
        for k in members {
            last = sent[k].max(last);
            seq.push((last, g, k));
        }
    }
    Decided {
        seq,
        groups: groups.len(),
    }
}

/// The model `spec` as the report's scenario builds it.
fn model(r: &Value, spec: &str) -> Limiter {
    let report: ProbeReport = serde_json::from_value(r.clone()).expect("a probe report");
    let spec = LimiterSpec::parse(spec).expect("a model spec");
    report
        .scenario(&spec)
        .build_limiter(&spec, 0)
        .expect("the model builds")
}

/// How many of each group `limiter` admits, deciding `seq` (sorted by time) in order.
fn admits(limiter: &Limiter, seq: &[(Micros, usize)], groups: usize) -> Vec<u64> {
    let mut l = limiter.clone();
    let mut out = vec![0; groups];
    for &(t, g) in seq {
        out[g] += u64::from(l.decide(t).admitted());
    }
    out
}

/// How far the model's decisions are from flipping, as the shortest distance (µs) each
/// request's stamp could move, every other stamp left where it is, before the model admits a
/// different number of some group: of its own, or of any later one (a move can put it in
/// another of HAProxy's periods, or move nginx's `last`, and change what follows; the first
/// request's margin is that of every other moved against it, since HAProxy's periods start
/// there). The exact models decide on whole milliseconds, so a request is moved a millisecond
/// at a time, up to `reach_ms`, and its margin is the distance to the first millisecond at
/// which something flips (`reach_ms` if none does); past a neighbour it is decided after it.
/// A burst is also moved as a whole, 100 µs at a time (its requests cross millisecond
/// boundaries at different moves): its requests reach the limiter together, a little late
/// together, and a burst decided a millisecond later than its stamps can fare otherwise than
/// any one of its requests moved alone (seen: HAProxy admitted one more of a spike its
/// period had begun a millisecond before). Each request's margin is the smaller of the two.
fn margins(limiter: &Limiter, d: &Decided, reach_ms: u64) -> Vec<Micros> {
    let base_seq: Vec<(Micros, usize)> = d.seq.iter().map(|&(t, g, _)| (t, g)).collect();
    let base = admits(limiter, &base_seq, d.groups);
    let flips = |seq: &[(Micros, usize)]| admits(limiter, seq, d.groups) != base;
    let mut out: Vec<Micros> = (0..base_seq.len())
        .map(|k| {
            let (t, g) = base_seq[k];
            let mut margin = reach_ms * 1000;
            for later in [true, false] {
                for m in 1..=reach_ms {
                    let moved = if later {
                        (t / 1000 + m) * 1000
                    } else if t / 1000 >= m {
                        (t / 1000 - m) * 1000 + 999
                    } else {
                        break;
                    };
                    let distance = moved.abs_diff(t);
                    if distance >= margin {
                        break;
                    }
                    let mut seq = base_seq.clone();
                    seq.remove(k);
                    let at = if later {
                        seq.partition_point(|&(u, _)| u <= moved)
                    } else {
                        seq.partition_point(|&(u, _)| u < moved)
                    };
                    seq.insert(at, (moved, g));
                    if flips(&seq) {
                        margin = distance;
                        break;
                    }
                }
            }
            margin
        })
        .collect();
    for g in 0..d.groups {
        let members: Vec<usize> = (0..base_seq.len())
            .filter(|&k| base_seq[k].1 == g)
            .collect();
        if members.len() < 2 {
            continue;
        }
        let mut margin = reach_ms * 1000;
        for later in [true, false] {
            for step in 1..=reach_ms * 10 {
                let by = step * 100;
                if by >= margin {
                    break;
                }
                let mut seq = base_seq.clone();
                for &k in &members {
                    seq[k].0 = if later {
                        seq[k].0 + by
                    } else {
                        seq[k].0.saturating_sub(by)
                    };
                }
                seq.sort_by_key(|&(t, _)| t);
                if flips(&seq) {
                    margin = by;
                    break;
                }
            }
        }
        for k in members {
            out[k] = out[k].min(margin);
        }
    }
    out
}

/// How far the real limiter's decisions could be from where the model `spec` puts them: a
/// request is decided between its stamp and its answer (nginx and HAProxy read their clock
/// when the request's data is ready, after the stamp), and each server counts whole
/// milliseconds on a clock whose millisecond boundaries fall anywhere against the probe's: the
/// slowest answer, and a millisecond for each end of a difference of two times.
///
/// HAProxy's clock, unlike nginx's, can also fall behind: it takes a date more than 100 ms
/// past its poll timeout for a jump of the system clock and does not follow it
/// (`clock_update_date`), so a stall of the process while it had work pending leaves its clock
/// that much behind for the rest of the run. A soak on a loaded machine saw it: the sender
/// stalled 192 ms just after the first request, and from then on HAProxy decided as the model
/// does on stamps 180 to 214 ms earlier (a request 25 ms into the second period by the stamps
/// was denied as the first period's 21st). A stall the machine puts on everything shows as the
/// probe's send lateness, which is added for HAProxy; a stall of HAProxy with a request in
/// flight shows as that request's answer time. (Left: HAProxy alone stalled over 100 ms with
/// work pending but no request in flight, while the sender ran on time.)
fn uncertainty(r: &Value, spec: &str) -> Micros {
    let stalled = if spec.starts_with("haproxy") {
        u(r, "/lateness/max_us")
    } else {
        0
    };
    u(r, "/latency/max_us") + stalled + 2_000
}

/// The real limiter decides as the exact model `spec`, group for group, on every decision up
/// to the first one whose margin ([`margins`]) is within the probe's timing [`uncertainty`]:
/// those, timing cannot have changed. From that one on, a decision may have gone either way,
/// and what follows may differ; the caller asserts what timing cannot change there. Prints the
/// uncertainty, the smallest margin checked and the share of decisions checked. Returns how
/// many groups of decisions (single requests, but for bursts) were checked, of how many.
fn exact_while_far(label: &str, r: &Value, spec: &str) -> (usize, usize) {
    all_answered(r);
    let mut d = decided(r);
    // A model whose windows are the wall clock's decides at the wall clock's phase, as the
    // probe's own comparison does.
    let phase = ratelab::probe::wall_clock_phase(spec, u(r, "/window_us"), u(r, "/epoch_us"));
    for s in &mut d.seq {
        s.0 += phase;
    }
    let limiter = model(r, spec);
    let margin_of = margins(&limiter, &d, REACH_MS);
    let seq: Vec<(Micros, usize)> = d.seq.iter().map(|&(t, g, _)| (t, g)).collect();
    let model_admits = admits(&limiter, &seq, d.groups);
    let letters = r["trace"]["outcome"].as_str().expect("outcomes").as_bytes();
    let mut real_admits = vec![0u64; d.groups];
    for &(_, g, k) in &d.seq {
        real_admits[g] += u64::from(letters[k] == b'A');
    }
    // The report's own comparison used the same model on the same stamps.
    assert_eq!(
        r.pointer("/comparison/model").and_then(Value::as_str),
        Some(spec),
        "{r}"
    );
    assert_eq!(
        model_admits.iter().sum::<u64>(),
        u(r, "/comparison/audit/admitted"),
        "{r}"
    );
    let within = uncertainty(r, spec);
    // The groups before the first one holding a decision within the uncertainty.
    let first_close = d
        .seq
        .iter()
        .zip(&margin_of)
        .find(|(_, &m)| m <= within)
        .map_or(d.groups, |(&(_, g, _), _)| g);
    let checked = d.seq.iter().filter(|&&(_, g, _)| g < first_close).count();
    let closest = d
        .seq
        .iter()
        .zip(&margin_of)
        .filter(|(&(_, g, _), _)| g < first_close)
        .map(|(_, &m)| m)
        .min()
        .unwrap_or(0);
    margin(label, "uncertainty-us", within as f64);
    margin(label, "closest-checked-us", closest as f64);
    margin(
        label,
        "exact-share",
        checked as f64 / d.seq.len().max(1) as f64,
    );
    margin(label, "agreement", f(r, "/comparison/agreement"));
    for g in 0..first_close {
        assert_eq!(
            real_admits[g], model_admits[g],
            "decision group {g} of {}: {} admitted, {} by {spec}, though every decision up to it was more than {within} µs from flipping (margins {:?}): {r}",
            d.groups, real_admits[g], model_admits[g],
            d.seq.iter().zip(&margin_of).filter(|(&(_, h, _), _)| h == g).map(|(_, m)| m).collect::<Vec<_>>()
        );
    }
    (first_close, d.groups)
}

/// A burst's admitted requests: the model's (leaving time, wait) and the real leaving times.
type Leaves = (Vec<(Micros, Micros)>, Vec<Micros>);

/// How much earlier than the exact model a real answer may leave: nginx's timer counts whole
/// milliseconds from a clock read in whole milliseconds, and the model's wait is rounded down
/// to one from the stamp's millisecond, so each side may round a millisecond away.
const EARLY_US: i64 = 3_000;

/// nginx's answers, at once and late, against the exact model `spec`'s: in each burst of which
/// the real limiter admitted as many as the model, the k-th admitted answer leaves no earlier
/// than the model's k-th, [`EARLY_US`] of rounding aside (nginx anchors every wait on its
/// clock at the burst's first request, which it reads at or after that request's stamp: no
/// answer leaves before its documented delay). How much later is not asserted, only printed
/// (`answer-late-max-us`): nothing in a report bounds how late a timer fires in a process the
/// machine is not running. Seen: an answer 184 ms after the model's time in a soak on a
/// machine running other builds, when the burst's rejections had been answered within 12 ms
/// (the old bound, the queued burst's slowest answer within 400 ms, failed there too); 98 ms
/// late when the answers given at once had taken 2 ms and the sender had woken at most 21 ms
/// late. Prints how many the model answers at once and late, how many of the real answers
/// came before any delayed one could, the model's longest wait, and the measured differences.
/// Returns, for each burst compared, how long its sends took (first stamp to last) and how
/// many of its admitted requests the model answers at once and late.
fn delays_match(label: &str, r: &Value, spec: &str) -> Vec<(Micros, usize, usize)> {
    let d = decided(r);
    let mut limiter = model(r, spec);
    let trace = &r["trace"];
    let sent: Vec<u64> = serde_json::from_value(trace["sent_us"].clone()).expect("stamps");
    let latency: Vec<u64> =
        serde_json::from_value(trace["latency_us"].clone()).expect("answer times");
    let letters = trace["outcome"].as_str().expect("outcomes").as_bytes();
    // How long nginx took to answer at once (a rejection), printed beside the delays.
    let slowest_reject = (0..letters.len())
        .filter(|&k| letters[k] == b'R')
        .map(|k| latency[k])
        .max()
        .unwrap_or(0);
    // Per group: the model's admitted requests' leaving times and waits, and the real
    // admitted answers' leaving times.
    let mut leaves: Vec<Leaves> = vec![(Vec::new(), Vec::new()); d.groups];
    for &(t, g, k) in &d.seq {
        if let Decision::Admit { at } = limiter.decide(t) {
            leaves[g].0.push((at, at - t));
        }
        if letters[k] == b'A' {
            leaves[g].1.push(sent[k] + latency[k]);
        }
    }
    let (mut at_once, mut late, mut longest, mut before_any_wait) = (0, 0, 0, 0);
    let mut bursts = Vec::new();
    let (mut lowest, mut highest, mut compared) = (i64::MAX, i64::MIN, 0);
    for (g, (mut model_at, mut real_at)) in leaves.into_iter().enumerate() {
        if model_at.len() != real_at.len() {
            // A burst spread over a leak (allowed by `bursts_match`): not paired.
            continue;
        }
        model_at.sort_unstable();
        real_at.sort_unstable();
        let stamps = d
            .seq
            .iter()
            .filter(|&&(_, h, _)| h == g)
            .map(|&(.., k)| sent[k]);
        let spread = stamps.clone().max().unwrap_or(0) - stamps.min().unwrap_or(0);
        let once = model_at.iter().filter(|&&(_, w)| w == 0).count();
        bursts.push((spread, once, model_at.len() - once));
        // The real answers that left before the model lets its first delayed one leave:
        // answered at once (at most the model's at-once count, by the bound below).
        if let Some(&(first_wait, _)) = model_at.iter().find(|&&(_, w)| w > 0) {
            before_any_wait += real_at
                .iter()
                .filter(|&&a| (a as i64) < first_wait as i64 - EARLY_US)
                .count();
        }
        for (&(m, wait), a) in model_at.iter().zip(&real_at) {
            if wait == 0 {
                at_once += 1;
            } else {
                late += 1;
            }
            longest = longest.max(wait);
            let diff = *a as i64 - m as i64;
            lowest = lowest.min(diff);
            highest = highest.max(diff);
            compared += 1;
            assert!(
                diff >= -EARLY_US,
                "burst {g}: an answer left at {a} µs, before {spec} lets it leave at {m} µs ({diff} µs; {} allowed): real {real_at:?}, model {model_at:?}",
                -EARLY_US
            );
        }
    }
    margin(label, "model-at-once", at_once as f64);
    margin(label, "model-late", late as f64);
    margin(label, "real-before-any-wait", before_any_wait as f64);
    margin(label, "model-longest-wait-us", longest as f64);
    margin(label, "answer-late-min-us", lowest as f64);
    margin(label, "answer-late-max-us", highest as f64);
    margin(label, "slowest-reject-us", slowest_reject as f64);
    margin(label, "lateness-max-us", u(r, "/lateness/max_us") as f64);
    margin(label, "lateness-p99-us", u(r, "/lateness/p99_us") as f64);
    margin(
        label,
        "paired-share",
        compared as f64 / letters.iter().filter(|&&c| c == b'A').count().max(1) as f64,
    );
    bursts
}

/// How far [`margins`] looks: a decision further than this from flipping is counted as this far.
const REACH_MS: u64 = 200;

const L20: [&str; 4] = ["--limit", "20", "--window", "1s"];

/// The exact models of tests/probe/nginx.conf's /nodelay and /delay.
const NODELAY: &str = "nginx:rate=20r/s,burst=5,nodelay";
const QUEUED: &str = "nginx:rate=20r/s,burst=5";

fn with(extra: &[&'static str]) -> Vec<&'static str> {
    let mut v = L20.to_vec();
    v.extend_from_slice(extra);
    v
}

#[test]
#[ignore = "needs nginx on loopback: cargo xtask test starts it"]
fn nginx_nodelay_boundary_burst_is_its_exact_model() {
    let r = nginx(
        "/nodelay",
        "bb",
        &with(&["--traffic", "boundary-burst", "--model", NODELAY]),
    );
    all_answered(&r);
    // Each burst's count is nginx's arithmetic exactly while the burst was decided well
    // within an emission interval (its first rejected request would have needed about 50 ms
    // more to find a request leaked).
    exact_while_far("nginx-boundary", &r, NODELAY);
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
fn nginx_flood_matches_its_exact_model_within_jitter() {
    for (path, model, burst) in [("/nodelay", NODELAY, 5), ("/strict", "nginx:rate=20r/s", 0)] {
        let r = nginx(
            path,
            "flood",
            &with(&["--traffic", "flood:every=9ms,for=3s", "--model", model]),
        );
        // Exact while no decision came within the timing of a flip (a flood 9 ms apart
        // against 50 ms intervals puts some within a millisecond or two); then as the model
        // up to when single admissions fell.
        exact_while_far(&format!("flood{path}"), &r, model);
        matches_model(&format!("flood{path}"), &r);
        // What nginx promises whatever the timing: the first request and `burst` more, then
        // one per emission interval over the span its decisions took (from the first stamp
        // to the last answer). The model, deciding on the same stamps, is compared above;
        // that the model itself admits about 20 a second of this flood is a core test.
        let stamps = column(&r, "sent_us");
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
    let args = with(&["--traffic", "boundary-burst", "--model", QUEUED]);
    let queued = nginx("/delay", "queue", &args);
    all_answered(&queued);
    let allowance = bursts_match("nginx-delay", &queued);
    // Each admitted answer leaves when nginx's arithmetic says: the first of each burst at
    // once, the next five 50 to 250 ms later.
    // A burst sent within an emission interval leaks less than a request meanwhile: its
    // first request at once and five late, exactly.
    for (spread, at_once, late) in delays_match("nginx-delay", &queued, QUEUED) {
        if spread < INTERVAL_US {
            assert_eq!((at_once, late), (1, 5), "sent over {spread} µs: {queued}");
        }
    }
    let admitted = u(&queued, "/audit/admitted");
    assert!(
        (12..=12 + allowance).contains(&admitted),
        "{admitted} admitted, 12 to {} expected: {queued}",
        12 + allowance
    );
    // The fifth queued request waits 5 emission intervals of 50 ms before nginx answers:
    // 250 ms by nginx's clock, asserted answer by answer above (never earlier). The old upper
    // bound, 400 ms, is gone: a soak on a loaded machine saw 434 ms.
    margin(
        "nginx-delay",
        "slowest-us",
        u(&queued, "/latency/max_us") as f64,
    );
    // With nodelay nothing waits for a timer: nginx decides a burst's requests in the order it
    // reads them, admitting the first ones, and answers each in the turn that decides it, so
    // every admitted answer is written before the burst's last rejection is. Allowed: one
    // emission interval more (the shortest wait nginx would impose on a queued request), for
    // the probe's own threads, which may hear an answer late. The old bound, every answer
    // within 100 ms, was luck on a loaded machine (seen 95 ms).
    let at_once = nginx("/nodelay", "queue-nodelay", &args);
    all_answered(&at_once);
    margin(
        "nginx-delay",
        "nodelay-slowest-us",
        u(&at_once, "/latency/max_us") as f64,
    );
    let d = decided(&at_once);
    let trace = &at_once["trace"];
    let sent: Vec<u64> = serde_json::from_value(trace["sent_us"].clone()).expect("stamps");
    let latency: Vec<u64> =
        serde_json::from_value(trace["latency_us"].clone()).expect("answer times");
    let letters = trace["outcome"].as_str().expect("outcomes").as_bytes();
    let mut worst = i64::MIN;
    for g in 0..d.groups {
        let last = |letter: u8| {
            d.seq
                .iter()
                .filter(|&&(_, h, k)| h == g && letters[k] == letter)
                .map(|&(.., k)| sent[k] + latency[k])
                .max()
        };
        if let (Some(admitted), Some(rejected)) = (last(b'A'), last(b'R')) {
            let after = admitted as i64 - rejected as i64;
            worst = worst.max(after);
            assert!(
                after <= INTERVAL_US as i64,
                "burst {g}: an admitted answer left {after} µs after the last rejection: {at_once}"
            );
        }
    }
    margin("nginx-delay", "nodelay-admit-after-reject-us", worst as f64);
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
            NODELAY,
        ]),
    );
    exact_while_far("nginx-retry", &r, NODELAY);
    matches_model("nginx-retry", &r);
    // The retries were sent in reaction to real rejections: more requests than first tries.
    assert!(u(&r, "/sent") > u(&r, "/offered"), "{r}");
}

/// The trace's rows: (due, sent, answer time, letter, Retry-After heard) of each request.
/// A request of a trace: (due, sent, answer time, letter, Retry-After heard).
type Row = (u64, u64, u64, char, Option<u64>);

fn trace_rows(r: &Value) -> Vec<Row> {
    let (due, sent, latency) = (
        column(r, "due_us"),
        column(r, "sent_us"),
        column(r, "latency_us"),
    );
    let letters: Vec<char> = r["trace"]["outcome"]
        .as_str()
        .expect("outcome")
        .chars()
        .collect();
    let heard: Vec<Option<u64>> = match r["trace"].get("retry_after_us") {
        Some(v) => serde_json::from_value(v.clone()).expect("retry_after_us"),
        None => vec![None; sent.len()],
    };
    (0..sent.len())
        .map(|i| (due[i], sent[i], sent[i] + latency[i], letters[i], heard[i]))
        .collect()
}

/// nginx's /retry-after (tests/probe/nginx.conf: 20r/s, burst=5 nodelay, and `add_header
/// Retry-After 1` on its 429s) against a spike of 10 at 100 ms, each retried up to twice
/// 200 ms later. nginx admits 6 of the spike and rejects 4, each with `Retry-After: 1`.
/// Honoured, each retry is due 1 s after its rejection's answer came: exactly, from the
/// trace's own times (the due time is the plan's arithmetic on the answer's time, not a
/// measurement), and it is sent no earlier; by then nginx has drained the whole burst, so all
/// four are admitted. Ignored, the header is still heard and kept in the trace, and the
/// retries are due 200 ms after their tries, at 300 ms exactly. Timing can only make a send
/// late (printed: `lateness-max-us`); the spike's count is compared with the model within its
/// send spread, as every burst is.
#[test]
#[ignore = "needs nginx on loopback: cargo xtask test starts it"]
fn nginx_retry_after_is_honoured_or_ignored_as_the_client_says() {
    const RETRY: &str = "retry:rate=1/1h,spike=10,at=100ms,tries=3,every=200ms";
    let honour = format!("{RETRY},retry-after=honor");
    let r = nginx(
        "/retry-after",
        "retry-after-honor",
        &[
            &L20[..],
            &[
                "--traffic",
                honour.as_str(),
                "--duration",
                "3s",
                "--model",
                NODELAY,
            ],
        ]
        .concat(),
    );
    all_answered(&r);
    bursts_match("nginx-retry-after", &r);
    let rows = trace_rows(&r);
    margin(
        "nginx-retry-after",
        "lateness-max-us",
        u(&r, "/lateness/max_us") as f64,
    );
    let (spike, retries): (Vec<&Row>, Vec<&Row>) = rows.iter().partition(|x| x.0 == 100_000);
    assert_eq!(spike.len(), 10, "{r}");
    let rejected: Vec<&Row> = spike.iter().copied().filter(|x| x.3 == 'R').collect();
    assert!(
        !rejected.is_empty(),
        "nginx rejected none of the spike: {r}"
    );
    assert!(
        rejected.iter().all(|x| x.4 == Some(1_000_000)),
        "Retry-After: 1 on every 429: {r}"
    );
    assert!(
        spike.iter().filter(|x| x.3 == 'A').all(|x| x.4.is_none()),
        "none on a 200: {r}"
    );
    let mut expected: Vec<u64> = rejected.iter().map(|x| x.2 + 1_000_000).collect();
    let mut due: Vec<u64> = retries.iter().map(|x| x.0).collect();
    expected.sort_unstable();
    due.sort_unstable();
    assert_eq!(
        due, expected,
        "each retry due 1 s after its rejection's answer: {r}"
    );
    assert!(
        retries.iter().all(|x| x.1 >= x.0 && x.3 == 'A'),
        "sent on or after due, admitted: {r}"
    );
    // Ignored: the policy's own 200 ms.
    let ignore = format!("{RETRY},retry-after=ignore");
    let r = nginx(
        "/retry-after",
        "retry-after-ignore",
        &[
            &L20[..],
            &[
                "--traffic",
                ignore.as_str(),
                "--duration",
                "3s",
                "--model",
                NODELAY,
            ],
        ]
        .concat(),
    );
    all_answered(&r);
    bursts_match("nginx-retry-after-ignored", &r);
    let rows = trace_rows(&r);
    let rejected = rows.iter().filter(|x| x.0 == 100_000 && x.3 == 'R').count();
    assert!(rejected > 0, "{r}");
    assert_eq!(
        rows.iter().filter(|x| x.4 == Some(1_000_000)).count(),
        rows.iter().filter(|x| x.3 == 'R').count(),
        "{r}"
    );
    let retried: Vec<u64> = rows
        .iter()
        .filter(|x| x.0 != 100_000)
        .map(|x| x.0)
        .collect();
    assert!(retried.len() >= rejected, "{r}");
    assert!(
        retried.iter().all(|&d| d == 300_000 || d == 500_000),
        "every retry 200 ms after its try: {r}"
    );
    assert_eq!(
        retried.iter().filter(|&&d| d == 300_000).count(),
        rejected,
        "{r}"
    );
}

/// nginx's `rate=7r/m`, as nginx stores it: 116 thousandths of a request a second.
const SEVEN: &str = "nginx:rate=7r/m";

#[test]
#[ignore = "needs nginx on loopback: cargo xtask test starts it"]
fn nginx_seven_a_minute_is_one_per_8_621_s_not_8_571() {
    // One request every 100 ms for 17.4 s (a replay, so that the first is sent at once and
    // the audit's window is the rate's minute). nginx admits the first, rejects everything
    // until 8,621 ms after it (its 116 thousandths a second leak a whole request then), and
    // admits the request at 8.7 s; the exact rate, 8,571.4 ms a request, would admit the one
    // at 8.6 s. Sent on time, every decision of nginx's model is 20 ms or more from flipping:
    // the request at 8.6 s is 21 ms before nginx's flip and 28.6 ms after the exact rate's.
    let path = std::env::temp_dir().join(format!("ratelab-7rm-{}.ms", std::process::id()));
    let times: String = (0..175).map(|k| format!("{}\n", k * 100)).collect();
    std::fs::write(&path, times).expect("write the schedule");
    let traffic = format!("replay:file={},format=ms", path.display());
    let r = nginx(
        "/per-minute",
        "7rm",
        &[
            "--limit",
            "7",
            "--window",
            "1min",
            "--traffic",
            &traffic,
            "--model",
            SEVEN,
        ],
    );
    let _ = std::fs::remove_file(&path);
    let label = "nginx-7r/m";
    let (checked, groups) = exact_while_far(label, &r, SEVEN);
    // Past a decision timing could have flipped: as the model up to where its admissions
    // fell, one at most every 8,621 ms.
    within_jitter(label, &r, 8_621_000);
    // The exact rate on the same stamps.
    let d = decided(&r);
    let seq: Vec<(Micros, usize)> = d.seq.iter().map(|&(t, g, _)| (t, g)).collect();
    let ideal = admits(&model(&r, "leaky-bucket:rate=7/1min"), &seq, d.groups);
    let nginx_says = admits(&model(&r, SEVEN), &seq, d.groups);
    let letters = r["trace"]["outcome"].as_str().expect("outcomes").as_bytes();
    let real: Vec<u64> = d
        .seq
        .iter()
        .map(|&(.., k)| u64::from(letters[k] == b'A'))
        .collect();
    let split = (0..groups).find(|&g| ideal[g] != nginx_says[g]);
    let differs = (0..checked).filter(|&g| real[g] != ideal[g]).count();
    margin(label, "ideal-differs", differs as f64);
    let lateness = u(&r, "/lateness/max_us");
    // Sent less than 20 ms late, the request due at 8.6 s is stamped in nginx's gap: after
    // 8,571.4 ms and before 8,621 ms from the first request's stamp.
    if lateness < 20_000 {
        assert!(
            split.is_some(),
            "sent at most {lateness} µs late, yet the exact rate decides every request as nginx: {r}"
        );
    }
    // Where that decision was checked, nginx decided it as its own arithmetic and not as the
    // exact rate.
    if let Some(g) = split.filter(|&g| g < checked) {
        assert_ne!(real[g], ideal[g], "decision {g}: {r}");
    }
    assert_eq!(u(&r, "/audit/wrong_admits"), 0, "{r}");
}

/// nginx's /delay4: `rate=20r/s burst=10 delay=4`.
const DELAY4: &str = "nginx:rate=20r/s,burst=10,delay=4";

#[test]
#[ignore = "needs nginx on loopback: cargo xtask test starts it"]
fn nginx_delay_lets_five_through_at_once_and_delays_six() {
    // Two bursts of 20, 1 s apart (the bucket is empty again): in each, the first request
    // and 4 more (an excess up to delay=4) are answered at once, 6 more wait (excess − 4) /
    // 20 s, 50 to 300 ms, and 9 are rejected. A burst spread over a leak may get more.
    let r = nginx(
        "/delay4",
        "delay4",
        &with(&["--traffic", "boundary-burst", "--model", DELAY4]),
    );
    all_answered(&r);
    let allowance = bursts_match("nginx-delay4", &r);
    let admitted = u(&r, "/audit/admitted");
    assert!(
        (22..=22 + allowance).contains(&admitted),
        "{admitted} admitted, 22 to {} expected: {r}",
        22 + allowance
    );
    // A burst sent within an emission interval leaks less than a request meanwhile: 5 at
    // once and 6 late, exactly (the first request finds a new key, the next four an excess
    // of at most 4).
    for (spread, at_once, late) in delays_match("nginx-delay4", &r, DELAY4) {
        if spread < INTERVAL_US {
            assert_eq!((at_once, late), (5, 6), "sent over {spread} µs: {r}");
        }
    }
}

/// HAProxy's common recipe on tests/probe/haproxy.cfg's /rate: `gt 20` per 1 s, denied
/// requests counted.
const HAPROXY: &str = "haproxy:period=1s,limit=20";
/// Its /kept: `table_http_req_rate ge 20` read before tracking, only admissions counted.
const HAPROXY_KEPT: &str = "haproxy:period=1s,limit=20,record-rejects=false";

/// The admissions of `spec` on a report's stamps.
fn admitted_by(r: &Value, spec: &str) -> u64 {
    let d = decided(r);
    let seq: Vec<(Micros, usize)> = d.seq.iter().map(|&(t, g, _)| (t, g)).collect();
    admits(&model(r, spec), &seq, d.groups).iter().sum()
}

#[test]
#[ignore = "needs HAProxy on loopback: cargo xtask test starts it"]
fn haproxy_counts_what_it_denies_and_locks_a_flood_out() {
    // 25 a second for 3 s. HAProxy's period starts at the first request: it admits 20 of its
    // first 25, then counts every denied request too, so the estimate never falls to 20
    // again. Sent on time, no decision is within 40 ms of flipping (the 21st request would
    // have to move into the next period, and after it the estimate stays near 25).
    let r = haproxy(
        "/rate",
        "flood",
        &with(&["--traffic", "flood:every=40ms,for=3s", "--model", HAPROXY]),
    );
    let label = "haproxy-flood";
    exact_while_far(label, &r, HAPROXY);
    // The lockout, which no counter of admissions alone predicts: on the same stamps, the
    // recipe that does not count denied requests and the sliding-window counter admit about
    // 20 a second.
    let real = u(&r, "/audit/admitted");
    let (kept, counter) = (
        admitted_by(&r, HAPROXY_KEPT),
        admitted_by(&r, "sliding-window-counter"),
    );
    margin(label, "admitted", real as f64);
    margin(label, "kept-admitted", kept as f64);
    margin(label, "counter-admitted", counter as f64);
    assert!(f(&r, "/audit/served_share") < 0.5, "{r}");
    assert!(
        kept >= 2 * real && counter >= 2 * real,
        "{real}, {kept}, {counter}: {r}"
    );
}

#[test]
#[ignore = "needs HAProxy on loopback: cargo xtask test starts it"]
fn haproxy_reading_before_tracking_is_its_exact_model() {
    // A request at 0, then one every 50 ms from 25 ms, for 3 s, at /kept (only admissions
    // counted). From the second period on, HAProxy admits a request at x ms into the period
    // with c admitted there so far when 20 · (1000 − x) / 1000 + c < 20, that is when
    // x > 50c: every request lands 25 ms from that line and from the period's edges, so the
    // weighting by the part of the last period still inside is tested to the millisecond.
    let path = std::env::temp_dir().join(format!("ratelab-kept-{}.ms", std::process::id()));
    let times: String = std::iter::once(0)
        .chain((0..60).map(|k| 25 + 50 * k))
        .map(|t| format!("{t}\n"))
        .collect();
    std::fs::write(&path, times).expect("write the schedule");
    let traffic = format!("replay:file={},format=ms", path.display());
    let r = haproxy(
        "/kept",
        "kept",
        &[
            "--limit",
            "20",
            "--window",
            "1s",
            "--traffic",
            &traffic,
            "--model",
            HAPROXY_KEPT,
        ],
    );
    let _ = std::fs::remove_file(&path);
    let (checked, groups) = exact_while_far("haproxy-kept", &r, HAPROXY_KEPT);
    margin("haproxy-kept", "admitted", u(&r, "/audit/admitted") as f64);
    // Sent less than 24 ms late, every request stays on its side of every flip (each is 25 ms
    // from one), and the model on the stamps admits all but the 21st request of the first
    // period: where every decision was also checked, so did HAProxy, 60 of 61. (A soak saw the
    // first request sent 102 ms late, and 58 admitted, by HAProxy and the model alike.)
    if checked == groups && u(&r, "/lateness/max_us") < 24_000 {
        assert_eq!(u(&r, "/audit/admitted"), u(&r, "/sent") - 1, "{r}");
    }
}

#[test]
#[ignore = "needs HAProxy on loopback: cargo xtask test starts it"]
fn haproxy_retry_storm_locks_out_only_where_denials_are_counted() {
    // The storm of the other tests with seed 27, whose first request comes 84 ms in: sent on
    // time, every decision of the common recipe's model is then 85 ms or more from flipping.
    // (With seed 1 the first request comes at 1 ms, HAProxy's second period begins as the
    // spike is sent, and the spike's count depends on the millisecond it is read in.) The
    // recipe that reads before it tracks has decisions near flipping from the start, whatever
    // the seed: its estimate moves with every admission.
    let storm = with(&[
        "--traffic",
        "retry:rate=15/1s,spike=40,at=1s,tries=4,every=100ms",
        "--duration",
        "6s",
        "--seed",
        "27",
        "--model",
    ]);
    let mut args = storm.clone();
    args.push(HAPROXY);
    let counted = haproxy("/rate", "storm", &args);
    let mut args = storm;
    args.push(HAPROXY_KEPT);
    let kept = haproxy("/kept", "storm", &args);
    exact_while_far("haproxy-storm", &counted, HAPROXY);
    exact_while_far("haproxy-storm-kept", &kept, HAPROXY_KEPT);
    // Past a decision that timing could have flipped, the lockout holds whatever the timing:
    // the spike and its retries, all counted, keep the estimate above 20 while the storm
    // lasts, where only admissions counted serve most first tries.
    let (locked, free) = (
        f(&counted, "/audit/served_share"),
        f(&kept, "/audit/served_share"),
    );
    margin("haproxy-storm", "served", locked);
    margin("haproxy-storm-kept", "served", free);
    assert!(locked < 0.5, "the common recipe served {locked}: {counted}");
    assert!(free >= 0.5, "reading before tracking served {free}: {kept}");
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
        let times =
            |k: &str| -> Vec<u64> { serde_json::from_value(r["trace"][k].clone()).expect("times") };
        let (sent, due) = (times("sent_us"), times("due_us"));
        match script {
            // The boundary burst doubles a fixed window: 2L in a trailing window, when the
            // first burst is stamped before the boundary at 1 s (it is due 10 ms before it; a
            // soak once saw it sent 16 ms late, in the same window as the second, and then
            // only 20 got through, decision for decision as the model on the stamps).
            "fixed-window" => {
                let first_in_time = sent
                    .iter()
                    .zip(&due)
                    .all(|(&t, &d)| d >= 1_000_000 || t < 1_000_000);
                margin("redis-fixed-window", "busiest", busiest as f64);
                if first_in_time {
                    assert_eq!(busiest, 40, "{r}");
                }
            }
            // GCRA with burst 5: 5 at once, and 20 ms later not one more interval (50 ms), when
            // the sends span less than an interval.
            _ => {
                let span = sent.last().unwrap_or(&0) - sent.first().unwrap_or(&0);
                if span < 50_000 {
                    assert_eq!(busiest, 5, "{r}");
                }
            }
        }
    }
}

/// Both fleet probes' traffic: two bursts of 20, 500 ms apart (250 ms either side of the
/// boundary at 1 s), both inside one window. nginx's bucket at 20r/s with burst 5 has drained
/// 300 ms after a burst, so each burst finds every zone empty, 200 ms from where it would not;
/// a sliding log of 20 still holds the whole first burst when the second comes.
const FLEET_BURST: &str = "boundary-burst:before=250ms,after=250ms";

/// One gateway's part of a fleet report as a one-target report: its requests' trace, and its
/// own and the model's counts from the report's `gateways` entry. Under `--coord local` each
/// gateway is its own limiter and the model fleet decides each request at the gateway it was
/// sent to, so a gateway's part is a probe of that gateway alone against one model limiter,
/// and every check of one target applies to it (the test's own model, deciding the part's
/// stamps, must give the report's per-gateway count: `exact_while_far` asserts that).
fn gateway_part(r: &Value, g: usize) -> Value {
    let gateway = column(r, "gateway");
    let keep: Vec<usize> = (0..gateway.len())
        .filter(|&k| gateway[k] == g as u64)
        .collect();
    let mut part = r.clone();
    let trace = &r["trace"];
    for key in ["sent_us", "due_us", "latency_us"] {
        part["trace"][key] = keep.iter().map(|&k| trace[key][k].clone()).collect();
    }
    for key in ["outcome", "model"] {
        let letters: Vec<char> = trace[key].as_str().expect("letters").chars().collect();
        part["trace"][key] = Value::from(keep.iter().map(|&k| letters[k]).collect::<String>());
    }
    let obj = part.as_object_mut().expect("a report");
    obj.remove("gateways");
    obj.remove("route");
    part["trace"]
        .as_object_mut()
        .expect("a trace")
        .remove("gateway");
    let mine = &r["gateways"][g];
    part["sent"] = Value::from(keep.len());
    part["audit"]["admitted"] = mine["admitted"].clone();
    part["audit"]["rejected"] = mine["rejected"].clone();
    part["audit"]["busiest"] = mine["busiest"].clone();
    part["comparison"]["audit"]["admitted"] = mine["model"]["admitted"].clone();
    part["comparison"]["audit"]["busiest"] = mine["model"]["busiest"].clone();
    part
}

/// `report` compared again, from its trace alone, with `spec` as a fleet of three gateways
/// round-robin under `coord`, each request decided at the gateway it was sent to.
fn as_fleet(r: &Value, spec: &str, coord: &str) -> ProbeReport {
    let report: ProbeReport = serde_json::from_value(r.clone()).expect("a probe report");
    let mut spec = LimiterSpec::parse(spec).expect("a model spec");
    spec.fleet = Some(
        ratelab::spec::FleetSpec::parse("3", Some("round-robin"), Some(coord)).expect("a fleet"),
    );
    report.with_model(&spec).expect("the model builds")
}

#[test]
#[ignore = "needs three nginx on loopback: cargo xtask test starts them"]
fn nginx_three_gateways_with_their_own_zones_admit_three_times_one_zone() {
    let r = nginx_fleet(
        "/nodelay",
        "fleet",
        &with(&[
            "--traffic",
            FLEET_BURST,
            "--model",
            NODELAY,
            "--coord",
            "local",
        ]),
    );
    all_answered(&r);
    assert_eq!(r["route"], "round-robin", "{r}");
    assert_eq!(r["comparison"]["coord"], "local", "{r}");
    let gateways = r["gateways"].as_array().expect("the gateways");
    assert_eq!(gateways.len(), 3, "{r}");
    // Round-robin, on from one burst to the next: 7, 7 and 6 of the first burst of 20, then
    // 6, 7 and 7 of the second (it starts at gateway 2).
    let sent: Vec<u64> = gateways.iter().map(|g| u(g, "/sent")).collect();
    assert_eq!(sent, [14, 13, 13], "{r}");
    // Each gateway is its own nginx, its part exactly the exact model's while far from a
    // flip (the first request and 5 more of each burst, about 50 ms from the sixth excess
    // request finding one leaked), and burst by burst within what the sends' spread allows.
    let mut allowance = 0;
    for g in 0..3 {
        let label = format!("nginx-fleet/{g}");
        let part = gateway_part(&r, g);
        exact_while_far(&label, &part, NODELAY);
        allowance += bursts_match(&label, &part);
    }
    // The fleet: 6 a burst at each of three gateways, 36, three times what one zone admits
    // of the same requests (12; the model fleet under `central` is that one zone, shared by
    // every gateway), and more than the limit in one window: the bursts are 500 ms apart.
    let admitted = u(&r, "/audit/admitted");
    let busiest = u(&r, "/audit/busiest");
    let one_zone = as_fleet(&r, NODELAY, "central")
        .comparison
        .expect("compared")
        .audit;
    margin("nginx-fleet", "admitted", admitted as f64);
    margin("nginx-fleet", "busiest", busiest as f64);
    margin("nginx-fleet", "one-zone-admitted", one_zone.admitted as f64);
    margin("nginx-fleet", "agreement", f(&r, "/comparison/agreement"));
    assert!(
        (36..=36 + allowance).contains(&admitted),
        "{admitted} admitted by three zones, 36 to {} expected: {r}",
        36 + allowance
    );
    assert!(
        (36..=36 + allowance).contains(&busiest),
        "busiest {busiest}, 36 to {} expected: {r}",
        36 + allowance
    );
    // One zone on the same stamps: 6 a burst, or what a burst spread over a leak adds.
    assert!(
        (12..=12 + allowance).contains(&one_zone.admitted),
        "one zone: {one_zone:?}"
    );
    assert!(
        admitted >= 3 * 12 && admitted > 2 * one_zone.admitted,
        "{r}"
    );
    // The report's model fleet is the local one, and the report's numbers are the parts'.
    let model_admitted: u64 = gateways.iter().map(|g| u(g, "/model/admitted")).sum();
    assert_eq!(model_admitted, u(&r, "/comparison/audit/admitted"), "{r}");
    let real: u64 = gateways.iter().map(|g| u(g, "/admitted")).sum();
    assert_eq!(real, admitted, "{r}");
    let again = as_fleet(&r, NODELAY, "local");
    assert_eq!(
        again.comparison.expect("compared").audit.admitted,
        u(&r, "/comparison/audit/admitted")
    );
}

#[test]
#[ignore = "needs redis-server on loopback: cargo xtask test starts it"]
fn redis_reached_from_three_gateways_keeps_the_limit() {
    let r = redis(
        "sorted-set",
        &with(&["--traffic", FLEET_BURST, "--gateways", "3"]),
    );
    all_answered(&r);
    assert_eq!(r["route"], "round-robin", "{r}");
    assert_eq!(r["comparison"]["coord"], "central", "{r}");
    assert_eq!(r["comparison"]["model"], "sliding-log", "{r}");
    let gateways = r["gateways"].as_array().expect("the gateways");
    assert_eq!(gateways.len(), 3, "{r}");
    // Three connections, one key: the sorted set decides on the probe's stamps, a burst by
    // how many got through (the connections' scripts run in any order inside it), so every
    // decision is the central model's, and the fleet keeps L: the first burst's 20, none of
    // the second's, whichever gateway each came through.
    decides_as_model("redis-fleet", &r);
    assert_eq!(
        u(&r, "/comparison/agree"),
        u(&r, "/comparison/compared"),
        "{r}"
    );
    let (admitted, busiest) = (u(&r, "/audit/admitted"), u(&r, "/audit/busiest"));
    margin("redis-fleet", "admitted", admitted as f64);
    margin("redis-fleet", "busiest", busiest as f64);
    assert_eq!((admitted, busiest), (20, 20), "{r}");
    assert_eq!(u(&r, "/audit/wrong_admits"), 0, "{r}");
    let parts: u64 = gateways.iter().map(|g| u(g, "/admitted")).sum();
    assert_eq!(parts, 20, "{r}");
    for (g, part) in gateways.iter().enumerate() {
        margin(
            "redis-fleet",
            &format!("agreement/{g}"),
            f(part, "/model/agreement"),
        );
    }
    // Three gateways each enforcing the whole limit (`local`) on the same requests would
    // have let the second burst through too: the real fleet is not that.
    let local = as_fleet(&r, "sliding-log", "local")
        .comparison
        .expect("compared");
    assert_eq!(local.audit.admitted, 40, "{local:?}");
}

/// express-rate-limit, as npm installs it, `rateLimit({ limit: 5, windowMs: 1000 })`.
const ERL: &str = "express-rate-limit:limit=5,window-ms=1000";
/// rate-limiter-flexible's `new RateLimiterMemory({ points: 5, duration: 1 })`.
const FLEXIBLE: &str = "rate-limiter-flexible:points=5,duration=1";
/// The same with `blockDuration: 0.35`: the first rejection blocks the key for 350 ms.
const FLEXIBLE_BLOCK: &str = "rate-limiter-flexible:points=5,duration=1,block-duration=0.35";

#[test]
#[ignore = "needs Node's libraries on loopback: cargo xtask test starts them"]
fn node_libraries_decide_as_their_models() {
    // (path, model, its flood, how far every flood decision is from flipping, µs)
    let cases = [
        ("/erl", ERL, "flood:every=80ms", 40_000),
        ("/flexible", FLEXIBLE, "flood:every=80ms", 40_000),
        (
            "/flexible-block",
            FLEXIBLE_BLOCK,
            "flood:every=100ms",
            50_000,
        ),
    ];
    for (path, spec, flood, far_us) in cases {
        let target = format!("{}{path}", server("RATELAB_LIBRARIES"));
        // A flood every 80 ms against 5 a second: a window opens at a request and holds
        // that one and the next 12, the last 40 ms before the window ends and the next 40 ms
        // after it, so sent on time every decision is 40 ms from where it would flip. With a
        // block of 350 ms, a flood every 100 ms: five admitted, the sixth blocks the key
        // till 50 ms before the tenth, which opens a window, so every decision is 50 ms from
        // its edge. Then Poisson arrivals at twice the limit, whose close calls
        // `exact_while_far` stops at.
        // Node compiles its handlers on their first calls: a few requests to /free first,
        // so that the probe measures answers, not the compiler.
        warm(&format!("{}/free", server("RATELAB_LIBRARIES")));
        for (traffic, duration) in [(flood, "6s"), ("steady:load=2", "10s")] {
            let header = format!("X-Probe-Key:{path}-{traffic}-{}", std::process::id());
            let r = probe(&[
                "--target",
                &target,
                "--header",
                &header,
                "--traffic",
                traffic,
                "--limit",
                "5",
                "--window",
                "1s",
                "--duration",
                duration,
                "--seed",
                "11",
                "--model",
                spec,
            ]);
            let label = format!("node{path}-{}", traffic.split(':').next().unwrap_or(""));
            let (checked, groups) = exact_while_far(&label, &r, spec);
            if traffic.starts_with("flood") {
                // The Node server answers within a few ms on an idle machine; a decision
                // 40 ms from its edge (39 with the clocks' milliseconds) is inside the
                // uncertainty only if an answer took over 36 ms, which the soak records
                // (`margin ... uncertainty-us`).
                let within = uncertainty(&r, spec);
                if within < far_us - 2_000 {
                    assert_eq!(
                        checked, groups,
                        "every decision {far_us} µs from its edge: {r}"
                    );
                }
            }
        }
    }
}

#[test]
#[ignore = "needs Go's rate, Varnish and Python's limits on loopback: cargo xtask test starts them"]
fn go_varnish_and_python_libraries_decide_as_their_models() {
    // Each as its users install it (tests/probe/go-rate.go, vsthrottle.vcl, limits_server.py)
    // at 5 a second, keyed on the probe's X-Probe-Key. A flood, then Poisson arrivals at twice
    // the limit: every decision up to the first one within the probe's timing uncertainty of
    // flipping (its own or a later one's) must be the model's (`exact_while_far`).
    for (var, path, spec, (flood, lasting, far_us)) in LIBRARY_CASES {
        let base = server(var);
        warm(&format!("{base}/free"));
        for (traffic, duration) in [(flood, lasting), ("steady:load=2", "6s")] {
            let header = format!("X-Probe-Key:{path}-{traffic}-{}", std::process::id());
            let r = probe(&[
                "--target",
                &format!("{base}{path}"),
                "--header",
                &header,
                "--traffic",
                traffic,
                "--limit",
                "5",
                "--window",
                "1s",
                "--duration",
                duration,
                "--seed",
                "11",
                "--model",
                spec,
            ]);
            let label = format!(
                "{}{path}-{}",
                spec.split(':').next().unwrap_or(""),
                traffic.split(':').next().unwrap_or("")
            );
            let (checked, groups) = exact_while_far(&label, &r, spec);
            // Every flood decision is `far_us` from its edge: all are checked unless an
            // answer took nearly that long (the soak records the uncertainty).
            if traffic == flood && uncertainty(&r, spec) + 1_000 < far_us {
                assert_eq!(
                    checked, groups,
                    "{label}: every decision {far_us} µs from its edge: {r}"
                );
            }
        }
    }
}

/// The floods of [`go_varnish_and_python_libraries_decide_as_their_models`]: the traffic, how
/// long, and how far every decision is from its edge (µs). Against windows of a second that
/// open at a request or slide, a request every 80 ms is 40 ms from each edge. Against a bucket
/// refilling one every 200 ms (Go's rate, vsthrottle, redis-cell's GCRA), the k-th request of a
/// flood every `s` ms finds a level of k·s/200 tokens plus a whole number, at an edge when k·s
/// is a multiple of 200: every 77 ms for a second (`for=1s`: k up to 12) comes no nearer than 15 ms
/// (k·77 mod 200 is 185 at k = 5 and 16 at k = 8, never nearer 0 or 200), the farthest
/// twelve steps of any spacing from 60 to 140 ms get. limits' sliding-window counter has the
/// wall clock's windows, which fall anywhere: 0, checked only as far as it is far.
/// A library's server (its variable), path and model, and its flood: traffic, how long, how far.
type LibraryCase = (
    &'static str,
    &'static str,
    &'static str,
    (&'static str, &'static str, Micros),
);

const LIBRARY_CASES: [LibraryCase; 5] = [
    (
        "RATELAB_GO_RATE",
        "/limited",
        "go-rate:r=5,b=3",
        ("flood:every=77ms,for=1s", "3s", 15_000),
    ),
    (
        "RATELAB_VSTHROTTLE",
        "/limited",
        "vsthrottle:limit=5,period=1s",
        ("flood:every=77ms,for=1s", "3s", 15_000),
    ),
    (
        "RATELAB_LIMITS",
        "/fixed",
        "limits:rate=5/second,strategy=fixed-window",
        ("flood:every=80ms", "4s", 40_000),
    ),
    (
        "RATELAB_LIMITS",
        "/moving",
        "limits:rate=5/second,strategy=moving-window",
        ("flood:every=80ms", "4s", 40_000),
    ),
    (
        "RATELAB_LIMITS",
        "/counter",
        "limits:rate=5/second,strategy=sliding-window-counter",
        ("flood:every=80ms", "4s", 0),
    ),
];

#[test]
#[ignore = "needs redis-server with redis-cell loaded on loopback: cargo xtask test starts it"]
fn redis_cells_throttle_decides_as_its_model() {
    // redis-cell 0.2.2, built from crates.io and loaded into Debian's redis-server,
    // `CL.THROTTLE key 2 5 1`: 5 a second, a max_burst of 2 (3 at once); and `CL.THROTTLE key
    // 3 5 1 2`, each request 2 of its 4 cells (2 at once, then one each 400 ms). The probe's
    // redis-cell recipe calls it once a request; its model is redis-cell's own arithmetic on
    // the probe's send times (the module reads Redis's clock, in nanoseconds). Exact up to the
    // first decision within the timing uncertainty of flipping, its own or a later one's; the
    // flood's every decision is 15 ms from its edge in both, as for the buckets of
    // LIBRARY_CASES.
    let cases = [
        ("redis-cell:max-burst=2,count=5,period=1", "2", "1"),
        (
            "redis-cell:max-burst=3,count=5,period=1,quantity=2",
            "3",
            "2",
        ),
    ];
    let mut checked_all = 0;
    for (spec, burst, quantity) in cases {
        for (traffic, duration) in [("flood:every=77ms,for=1s", "3s"), ("steady:load=2", "6s")] {
            let mut args = vec![
                "--burst",
                burst,
                "--traffic",
                traffic,
                "--limit",
                "5",
                "--window",
                "1s",
                "--duration",
                duration,
                "--seed",
                "11",
            ];
            if quantity != "1" {
                args.extend(["--quantity", quantity]);
            }
            let r = redis("redis-cell", &args);
            // Without --model, the recipe's own: redis-cell with the probe's settings.
            assert_eq!(
                r.pointer("/comparison/model").and_then(Value::as_str),
                Some(spec),
                "{r}"
            );
            let label = format!(
                "redis-cell-q{quantity}-{}",
                traffic.split(':').next().unwrap_or("")
            );
            let (checked, groups) = exact_while_far(&label, &r, spec);
            if traffic.starts_with("flood") && uncertainty(&r, spec) + 1_000 < 15_000 {
                assert_eq!(checked, groups, "every decision 15 ms from its edge: {r}");
            }
            checked_all += checked;
        }
    }
    margin("redis-cell", "checked", checked_all as f64);
}

/// Sends 20 plain GETs to `url` (http://HOST:PORT/PATH) and reads each answer.
fn warm(url: &str) {
    use std::io::{Read, Write};
    let rest = url.strip_prefix("http://").expect("an http URL");
    let (host, path) = rest.split_once('/').expect("a path");
    for _ in 0..20 {
        let mut c = std::net::TcpStream::connect(host).expect("the server listens");
        write!(
            c,
            "GET /{path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
        )
        .expect("sent");
        let mut answer = String::new();
        c.read_to_string(&mut answer).expect("an answer");
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    }
}

/// Runs `ratelab fit FILE --key all --format json` on the lines of `log` that hold `key`.
fn fit_lines(log: &str, key: &str) -> Value {
    let text = std::fs::read_to_string(log).unwrap_or_else(|e| panic!("cannot read {log}: {e}"));
    let lines: String = text
        .lines()
        .filter(|l| l.contains(key))
        .map(|l| format!("{l}\n"))
        .collect();
    let file = std::env::temp_dir().join(format!("ratelab-fit-{key}.log"));
    std::fs::write(&file, lines).expect("written");
    let out = Command::new(env!("CARGO_BIN_EXE_ratelab"))
        .args([
            "fit",
            file.to_str().expect("a path"),
            "--key",
            "all",
            "--format",
            "json",
        ])
        .output()
        .expect("ratelab runs");
    let _ = std::fs::remove_file(&file);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

/// The fit named `spec` (as a fit or as deciding alike with one), and its fit.
fn fit_named<'a>(v: &'a Value, spec: &str) -> Option<&'a Value> {
    v["fits"].as_array()?.iter().find(|f| {
        f["limiter"] == spec
            || f["same_as"]
                .as_array()
                .is_some_and(|s| s.iter().any(|x| x == spec))
    })
}

#[test]
#[ignore = "needs nginx and HAProxy on loopback: cargo xtask test starts them"]
fn a_live_servers_log_is_fitted_back_to_its_configuration() {
    // nginx's /fit: rate=10r/s, burst=5 nodelay, logged with $msec. nginx decides on its
    // monotonic millisecond clock and logs $msec from the wall clock's, so a decision a
    // millisecond from its edge can disagree with its logged time: every request the fit's
    // replay decides otherwise must be one it decides as nginx did a millisecond off.
    let key = format!("fit-{}", std::process::id());
    let r = nginx(
        "/fit",
        &key,
        &[
            "--traffic",
            "steady:load=2",
            "--limit",
            "10",
            "--window",
            "1s",
            "--duration",
            "20s",
            "--seed",
            "5",
        ],
    );
    all_answered(&r);
    let spec = "nginx:rate=10r/s,burst=5,nodelay";
    let v = fitted_back("fit-nginx", "RATELAB_NGINX_FIT_LOG", &key, spec);
    assert_eq!(
        v["fits"][0]["limiter"], spec,
        "nginx's log names nginx first: {v}"
    );
    // HAProxy's /rate: http_req_rate(1s), deny over 20, the denied counted too; its httplog
    // line has the accept date to the millisecond and the captured key.
    let key = format!("fit-h-{}", std::process::id());
    let r = haproxy(
        "/rate",
        &key,
        &[
            "--traffic",
            "steady:load=2",
            "--limit",
            "20",
            "--window",
            "1s",
            "--duration",
            "20s",
            "--seed",
            "5",
        ],
    );
    all_answered(&r);
    fitted_back(
        "fit-haproxy",
        "RATELAB_HAPROXY_LOG",
        &key,
        "haproxy:period=1s,limit=20",
    );
}

/// Fits the lines of the log in env `log_var` that hold `key`, and requires `spec` among the
/// fits within 2% of the best, each request it decides otherwise one it decides as the log
/// says a millisecond off. Returns the fit report.
fn fitted_back(label: &str, log_var: &str, key: &str, spec: &str) -> Value {
    let v = fit_lines(&server(log_var), key);
    let best = v["fits"][0]["agreement"].as_f64().expect("a best fit");
    let f = fit_named(&v, spec).unwrap_or_else(|| panic!("{spec} not among the fits: {v}"));
    let agreement = f["agreement"].as_f64().expect("a share");
    margin(label, "agreement", agreement);
    assert_eq!(f["replayed_otherwise"], f["within_a_step"], "{v}");
    assert!(agreement + 0.02 >= best, "{v}");
    v
}
