//! The checks of fuzz target `limiter_laws`: a random trace (sorted µs times, up to 8,192 requests, limits up
//! to 16, windows up to 2,000 µs) through every limiter kind, each decision checked against a
//! plain recount of the admitted times, where a request admitted at `t0` counts in the window
//! `(t − W, t]` exactly when `t0 ≤ t < t0 + W`:
//!
//! - the sliding log (without recorded rejects) is the literal rule, so no window holds more
//!   than `L`; with recorded rejects it admits exactly when fewer than `L` requests of any
//!   outcome are in the window;
//! - a token bucket of burst `B` at `N` per `D` never has more than `B + ⌊N·(W − 1)/D⌋` in a
//!   window, so at most `B + L − 1` at `L` per `W`; GCRA admits exactly the same requests;
//! - the fixed window admits exactly while its calendar window has fewer than `L`, so never
//!   more than `2L` in a window, recorded rejects or not;
//! - the sliding-window counter admits exactly while `prev·(W − e) + cur·W < L·W`;
//! - nginx's leaky bucket as a meter is a token bucket one larger; as a queue it admits the
//!   same requests, and its departures keep order, wait at most `burst/rate` and respect
//!   `theory::worst_case`;
//! - every kind built from a spec by `Scenario::build_limiter`, split over `K` servers too,
//!   stays within `theory::worst_case`, and `admit` agrees with `decide`;
//! - nginx's own `limit_req` (times and window scaled by 500, so the trace crosses its
//!   millisecond clock at half milliseconds, and the window reaches up to a second) keeps its
//!   departures in order, never before their arrival, within `theory::nginx_worst`; at whole
//!   milliseconds with an `r/s` rate it decides as the exact leaky bucket;
//! - HAProxy's counter (the same scaling) stays within `theory::haproxy_worst`, both recipes;
//! - the auditor's per-decision and chunked paths agree with the recount.
use arbitrary::{Arbitrary, Unstructured};
use ratelab::audit::Auditor;
use ratelab::limiter::{
    FixedWindow, Gcra, Haproxy, LeakyBucket, LeakyMode, Nginx, SlidingLog, SlidingWindowCounter,
    TokenBucket,
};
use ratelab::{theory, Decide, Decision, LimiterSpec, Micros, Rate, Scenario};
use std::collections::BTreeMap;

/// The most requests in a trace: enough for the auditor's buffer to compact and grow (from
/// 256 slots) many times.
const MAX_REQUESTS: usize = 8_192;

#[derive(Debug, Arbitrary)]
struct Case {
    limit: u8,
    window: u16,
    burst: u8,
    leaky_burst: u8,
    rate: Option<(u8, u16)>,
    servers: u8,
    chunk: u16,
    start: u16,
    /// Mostly 1; else the gaps are repeated, so that short inputs make long traces too.
    repeat: u8,
    gaps: Vec<Gap>,
}

/// The gap before a request: none, a small part of the window, about a window, or longer.
#[derive(Debug, Arbitrary)]
enum Gap {
    Same,
    Small(u8),
    Near(u16),
    Far(u16),
}

/// Checks one input; panics on a broken law. Returns whether the input decoded to a `Case`
/// (the rest are ignored).
///
/// The bytes are decoded exactly as libfuzzer-sys decodes a typed target's input: too short
/// for `Case`'s size hint, or refused by `arbitrary_take_rest`, and the input is skipped; so the
/// committed corpus means the same here as under `cargo fuzz`.
pub fn check(data: &[u8]) -> bool {
    if data.len() < <Case as Arbitrary>::size_hint(0).0 {
        return false;
    }
    match Case::arbitrary_take_rest(Unstructured::new(data)) {
        Ok(case) => {
            laws(&case);
            true
        }
        Err(_) => false,
    }
}

fn laws(case: &Case) {
    let limit = 1 + u64::from(case.limit % 16);
    let window = 1 + u64::from(case.window % 2_000);
    let burst = 1 + u64::from(case.burst % 24);
    let leaky_burst = u64::from(case.leaky_burst % 24);
    let rate = match case.rate {
        None => Rate {
            count: limit,
            per: window,
        },
        Some((n, d)) => Rate {
            count: 1 + u64::from(n % 16),
            per: 1 + u64::from(d % 4_000),
        },
    };
    let chunk = 1 + usize::from(case.chunk) % 1_024;
    let repeat = match case.repeat {
        0..=239 => 1,
        r => 2 + 2 * usize::from(r - 240),
    };
    let mut t = u64::from(case.start);
    let times: Vec<Micros> = case
        .gaps
        .iter()
        .cycle()
        .take((case.gaps.len() * repeat).min(MAX_REQUESTS))
        .map(|g| {
            t += match *g {
                Gap::Same => 0,
                Gap::Small(x) => u64::from(x) % (window / 4 + 1),
                Gap::Near(x) => u64::from(x) % (2 * window + 1),
                Gap::Far(x) => window + u64::from(x),
            };
            t
        })
        .collect();
    let ctx = Ctx {
        times: &times,
        limit,
        window,
        chunk,
    };

    // Sliding log: the literal rule.
    let log = ctx.run(&mut SlidingLog::new(limit, window, false));
    let counted = ctx.recount(&log);
    for (i, (&ok, &before)) in log.iter().zip(&counted.before).enumerate() {
        assert_eq!(
            ok,
            before < limit,
            "sliding log, request {i} at {}",
            times[i]
        );
    }
    assert!(counted.busiest <= limit);
    // With recorded rejects every request is logged, admitted or not.
    let strict = ctx.run(&mut SlidingLog::new(limit, window, true));
    let everything = ctx.recount(&vec![true; times.len()]);
    for (i, (&ok, &before)) in strict.iter().zip(&everything.before).enumerate() {
        assert_eq!(ok, before < limit, "recording sliding log, request {i}");
    }
    assert!(ctx.recount(&strict).busiest <= limit);

    // Token bucket and GCRA.
    let bucket = ctx.run(&mut TokenBucket::new(burst, rate));
    let gcra = ctx.run(&mut Gcra::new(burst, rate));
    assert_eq!(
        bucket, gcra,
        "GCRA admits exactly what the token bucket admits"
    );
    let bucket_bound = burst + rate.count * (window - 1) / rate.per;
    let busiest = ctx.recount(&bucket).busiest;
    assert!(
        busiest <= bucket_bound,
        "token bucket B={burst} at {rate:?}: {busiest} in a window of {window} µs"
    );
    if case.rate.is_none() {
        // At L per W the bound is B + L − ⌈L/W⌉: B + L − 1 once W ≥ L µs, less before.
        assert_eq!(bucket_bound, burst + limit - limit.div_ceil(window));
        assert!(busiest < burst + limit, "at most B + L − 1");
    }

    // Fixed window, with and without recorded rejects: the same admissions.
    let fixed = ctx.run(&mut FixedWindow::new(limit, window, false));
    assert_eq!(ctx.run(&mut FixedWindow::new(limit, window, true)), fixed);
    let mut calendar: BTreeMap<u64, u64> = BTreeMap::new();
    for (i, (&t, &ok)) in times.iter().zip(&fixed).enumerate() {
        let count = calendar.entry(t / window).or_default();
        assert_eq!(ok, *count < limit, "fixed window, request {i} at {t}");
        *count += u64::from(ok);
    }
    assert!(ctx.recount(&fixed).busiest <= 2 * limit);

    // Sliding-window counter, recomputed from per-window counts.
    for record_rejects in [false, true] {
        let swc = ctx.run(&mut SlidingWindowCounter::new(
            limit,
            window,
            record_rejects,
        ));
        let mut counts: BTreeMap<u64, u64> = BTreeMap::new();
        for (i, (&t, &ok)) in times.iter().zip(&swc).enumerate() {
            let k = t / window;
            let prev = if k == 0 {
                0
            } else {
                counts.get(&(k - 1)).copied().unwrap_or(0)
            };
            let cur = counts.get(&k).copied().unwrap_or(0);
            let elapsed = t - k * window;
            let estimate = u128::from(prev) * u128::from(window - elapsed)
                + u128::from(cur) * u128::from(window);
            assert_eq!(
                ok,
                estimate < u128::from(limit) * u128::from(window),
                "sliding-window counter (record rejects {record_rejects}), request {i} at {t}"
            );
            *counts.entry(k).or_default() += u64::from(ok || record_rejects);
        }
        assert!(ctx.recount(&swc).busiest <= 2 * limit);
    }

    // nginx's leaky bucket.
    let meter = ctx.run(&mut LeakyBucket::new(leaky_burst, rate, LeakyMode::Meter));
    assert_eq!(
        meter,
        ctx.run(&mut TokenBucket::new(leaky_burst + 1, rate)),
        "the leaky meter is a token bucket one larger"
    );
    let mut queue = LeakyBucket::new(leaky_burst, rate, LeakyMode::Queue);
    let mut departures = Vec::new();
    for (i, &t) in times.iter().enumerate() {
        let decision = queue.decide(t);
        assert_eq!(
            decision.admitted(),
            meter[i],
            "queue and meter, request {i}"
        );
        if let Decision::Admit { at } = decision {
            assert!(
                at >= t && at <= t + leaky_burst * rate.per / rate.count,
                "{at} for {t}"
            );
            assert!(departures.last().is_none_or(|&last| at >= last), "in order");
            departures.push(at);
        }
    }
    let queue_ctx = Ctx {
        times: &departures,
        ..ctx
    };
    let departed = queue_ctx.recount(&vec![true; departures.len()]).busiest;
    let queue_spec = LimiterSpec::parse(&format!(
        "leaky-bucket:burst={leaky_burst},rate={}/{}us,mode=queue",
        rate.count, rate.per
    ))
    .expect("a valid spec");
    if let Some(bound) = theory::worst_case(&queue_spec, limit, window) {
        assert!(departed <= bound, "leaky queue: {departed} > {bound}");
    }

    real_servers(case, &times, window, leaky_burst, limit);

    // Every kind from its spec, on one server and split over K, against the theory.
    let divisors: Vec<u64> = (1..=limit).filter(|k| limit % k == 0).collect();
    let servers = divisors[usize::from(case.servers) % divisors.len()];
    let scenario = Scenario {
        limit,
        window,
        ..Scenario::default()
    };
    let r = format!("rate={}/{}us", rate.count, rate.per);
    for k in [1, servers] {
        let (b, lb) = (k * burst, k * leaky_burst);
        let specs = [
            "fixed-window".to_owned(),
            "fixed-window:record-rejects=true".to_owned(),
            "sliding-log".to_owned(),
            "sliding-log:record-rejects=true".to_owned(),
            "sliding-window-counter".to_owned(),
            "sliding-window-counter:record-rejects=true".to_owned(),
            "token-bucket".to_owned(),
            format!("token-bucket:burst={b},{r}"),
            format!("gcra:burst={b},{r}"),
            format!("leaky-bucket:burst={lb},{r}"),
        ];
        for text in specs {
            let spec = LimiterSpec::parse(&format!("{text}{}servers={k}", sep(&text)))
                .expect("a valid spec");
            let built = scenario
                .build_limiter(&spec, 0)
                .unwrap_or_else(|e| panic!("{text} (K={k}, L={limit}) not built: {e}"));
            let decided = ctx.run(&mut built.clone());
            let mut admitting = built;
            let admitted: Vec<bool> = times.iter().map(|&t| admitting.admit(t)).collect();
            assert_eq!(
                admitted, decided,
                "{text} (K={k}): admit agrees with decide"
            );
            let bound = theory::worst_case(&spec, limit, window).expect("a known bound");
            let busiest = ctx.recount(&decided).busiest;
            assert!(
                busiest <= bound,
                "{text} (K={k}, L={limit}, W={window}): {busiest} > {bound}"
            );
            if k == 1 && text.starts_with("token-bucket:") {
                assert_eq!(bound, bucket_bound, "theory's token-bucket bound");
                assert_eq!(decided, bucket, "built from the spec as from new");
            }
        }
    }
}

/// nginx's and HAProxy's limiters, on the trace scaled by 500 (and by 1,000 for nginx's
/// exact case).
fn real_servers(case: &Case, times: &[Micros], window: Micros, burst: u64, limit: u64) {
    let count = 1 + case
        .rate
        .map_or(u64::from(case.limit), |(n, _)| u64::from(n))
        % 40;
    let per = if case.servers % 2 == 0 {
        1_000_000
    } else {
        60_000_000
    };
    let rate = Rate { count, per };
    let delay = match case.chunk % 3 {
        0 => None,
        1 => Some(0),
        _ => Some(u64::from(case.start % 8)),
    };
    let scaled: Vec<Micros> = times.iter().map(|&t| t * 500).collect();
    let w = window * 500;
    let mut nginx = Nginx::new(rate, burst, delay);
    let mut departures = Vec::new();
    for &t in &scaled {
        if let Decision::Admit { at } = nginx.decide(t) {
            assert!(at >= t, "nginx: leaves at {at}, before its arrival {t}");
            assert!(
                departures.last().is_none_or(|&l| at >= l),
                "nginx: out of order"
            );
            departures.push(at);
        }
    }
    let ctx = Ctx {
        times: &departures,
        limit,
        window: w,
        chunk: 1_024,
    };
    let busiest = ctx.recount(&vec![true; departures.len()]).busiest;
    let bound = theory::nginx_worst(rate, burst, delay, w);
    assert!(
        busiest <= bound,
        "nginx {rate:?} burst {burst} delay {delay:?}: {busiest} > {bound}"
    );
    // Whole milliseconds and an r/s rate: nothing for nginx to round.
    if per == 1_000_000 {
        let mode = if delay.is_none() {
            LeakyMode::Meter
        } else {
            LeakyMode::Queue
        };
        let mut nginx = Nginx::new(rate, burst, delay.map(|_| 0));
        let mut exact = LeakyBucket::new(burst, rate, mode);
        for &t in times {
            let t = t * 1000;
            assert_eq!(
                nginx.admit(t),
                exact.admit(t),
                "nginx and the leaky bucket at {t}"
            );
        }
    }
    let period = (w / 1000).max(2) * 1000;
    for record_rejects in [false, true] {
        let mut h = Haproxy::new(limit, period, record_rejects);
        let admitted: Vec<Micros> = scaled.iter().copied().filter(|&t| h.admit(t)).collect();
        let ctx = Ctx {
            times: &admitted,
            ..ctx
        };
        let busiest = ctx.recount(&vec![true; admitted.len()]).busiest;
        let bound = theory::haproxy_worst(limit, period, w);
        assert!(
            busiest <= bound,
            "haproxy {limit} per {period} µs: {busiest} > {bound}"
        );
    }
}

fn sep(text: &str) -> &'static str {
    if text.contains(':') {
        ","
    } else {
        ":"
    }
}

#[derive(Clone, Copy)]
struct Ctx<'a> {
    times: &'a [Micros],
    limit: u64,
    window: Micros,
    chunk: usize,
}

/// What a plain recount says of one limiter's decisions.
struct Recount {
    /// For each request, the admissions before it in `(t − W, t]`.
    before: Vec<u64>,
    /// The most admissions in any window.
    busiest: u64,
}

impl Ctx<'_> {
    /// Each request's decision, in order.
    fn run(&self, limiter: &mut impl Decide) -> Vec<bool> {
        self.times
            .iter()
            .map(|&t| limiter.decide(t).admitted())
            .collect()
    }

    /// Recounts the windows of `admitted` and checks both audit paths against the recount.
    fn recount(&self, admitted: &[bool]) -> Recount {
        let (times, window) = (self.times, self.window);
        let mut kept: Vec<Micros> = Vec::new();
        let mut before = Vec::with_capacity(times.len());
        let mut busiest = 0;
        let (mut wrong_admits, mut wrong_rejects) = (0, 0);
        for (&t, &ok) in times.iter().zip(admitted) {
            // Admitted at t0 counts at t exactly when t0 <= t < t0 + W.
            let inside = kept
                .iter()
                .rev()
                .take_while(|&&t0| t0 <= t && t < t0 + window)
                .count() as u64;
            before.push(inside);
            if ok {
                busiest = busiest.max(inside + 1);
                wrong_admits += u64::from(inside >= self.limit);
                kept.push(t);
            } else {
                wrong_rejects += u64::from(inside < self.limit);
            }
        }
        let mut one = Auditor::new(self.limit, window);
        for (&t, &ok) in times.iter().zip(admitted) {
            one.record(t, ok);
        }
        let got = (one.busiest, one.wrong_admits, one.wrong_rejects, one.admits);
        let admits = admitted.iter().filter(|&&ok| ok).count() as u64;
        assert_eq!(
            got,
            (busiest, wrong_admits, wrong_rejects, admits),
            "auditor"
        );
        let mut chunked = Auditor::new(self.limit, window);
        for (part, oks) in times.chunks(self.chunk).zip(admitted.chunks(self.chunk)) {
            let mut next = oks.iter();
            chunked.decide_chunk(part, |_| next.next().copied().unwrap_or(false));
        }
        assert_eq!(
            (
                chunked.busiest,
                chunked.busiest_at,
                chunked.wrong_admits,
                chunked.wrong_rejects
            ),
            (
                one.busiest,
                one.busiest_at,
                one.wrong_admits,
                one.wrong_rejects
            ),
            "chunked audit, chunks of {}",
            self.chunk
        );
        assert_eq!(
            (chunked.decisions, chunked.admits),
            (one.decisions, one.admits)
        );
        Recount { before, busiest }
    }
}
