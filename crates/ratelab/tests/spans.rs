//! `theory::worst_in`: the most a limiter admits in any span shorter than its window, the
//! bound the memory estimate charges a boundary burst's two instants with. Each limiter faces
//! bursts at a few instants and random gaps between them, and the most it admitted (when
//! each admission takes effect) in any `(t − span, t]` is held to the bound, for every span.
//!
//! A bound that forgot what a sliding-window counter admits past a boundary (`L` alone), or
//! what a bucket refills within the span (its burst alone), fails here: the bursts straddle
//! boundaries, and the spans run from one µs to the window.

use proptest::prelude::*;
use ratelab::limiter::{Decide, Decision};
use ratelab::theory::{first_instant, worst_in};
use ratelab::time::{Micros, MS, SECOND};
use ratelab::{LimiterSpec, Scenario};

const KINDS: &[&str] = &[
    "fixed-window",
    "fixed-window:record-rejects=true",
    "sliding-window-counter",
    "sliding-window-counter:record-rejects=true",
    "sliding-log",
    "token-bucket",
    "token-bucket:burst=3",
    "gcra:burst=7",
    "leaky-bucket:burst=5",
    "leaky-bucket:mode=queue,burst=5",
    "nginx:rate=20r/s,burst=4,nodelay",
    "nginx:rate=600r/m,burst=4,nodelay",
    "nginx:rate=20r/s,burst=6,delay=2",
    "haproxy",
    "haproxy:record-rejects=true",
    "express-rate-limit",
    "express-rate-limit:limit=3,window-ms=250",
    "rate-limiter-flexible:points=4,duration=2.5",
    "rate-limiter-flexible:points=4,duration=2.5,block-duration=0.3",
    "rate-limiter-flexible:points=2,duration=1,block-duration=0.007",
    "rate-limiter-flexible:points=3,duration=0.5,block-duration=4",
    "go-rate:r=7,b=3",
    "go-rate:every=150ms,b=2",
    "go-rate:r=0.3,b=5",
    "redis-cell:max-burst=3,count=30,period=60",
    "redis-cell:max-burst=0,count=3,period=1",
    "redis-cell:max-burst=15,count=30,period=60,quantity=3",
    "redis-cell:max-burst=4,count=20,period=1,quantity=2",
    "redis-cell",
    "vsthrottle:limit=15,period=10s",
    "vsthrottle:limit=5,period=1s,block=3s",
    "vsthrottle:limit=3,period=700ms",
    "limits:rate=5/20seconds",
    "limits:rate=3/second",
    "limits:rate=20/minute,strategy=moving-window",
    "limits:rate=2/second,strategy=moving-window",
    "limits:strategy=sliding-window-counter",
    "limits:rate=4/second,strategy=sliding-window-counter",
];

/// The most of `times` (sorted) in any `(t − span, t]`.
fn most_in(times: &[Micros], span: Micros) -> u64 {
    let (mut first, mut most) = (0, 0);
    for (i, &t) in times.iter().enumerate() {
        while times[first] + span <= t {
            first += 1;
        }
        most = most.max((i + 1 - first) as u64);
    }
    most
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    #[test]
    fn no_limiter_admits_more_in_a_span_than_its_bound(
        kind in 0..KINDS.len(),
        limit in 1u64..40,
        window_ms in 2u64..3_000,
        // Instants: (gap from the last, in µs; how many requests there).
        instants in proptest::collection::vec((0u64..1_500_000, 1u64..80), 1..40),
        spans in proptest::collection::vec(1u64..3_000_000, 1..6),
    ) {
        let window = window_ms * MS;
        let spec = LimiterSpec::parse(KINDS[kind]).expect("valid");
        let scenario = Scenario { limit, window, ..Scenario::default() };
        let Ok(mut limiter) = scenario.build_limiter(&spec, 0) else {
            // A limiter this scenario can't build (none here but nginx's rate finer than a
            // millisecond's leak) is refused by its checks.
            return Ok(());
        };
        let mut admitted = Vec::new();
        let mut t = window - 1;
        for (gap, count) in instants {
            t += gap;
            for _ in 0..count {
                if let Decision::Admit { at } = limiter.decide(t) {
                    admitted.push(at);
                }
            }
        }
        admitted.sort_unstable();
        for span in spans.into_iter().chain([1, MS, SECOND / 2, window]) {
            let span = span.clamp(1, window);
            let bound = worst_in(&spec, limit, window, span).expect("a known bound");
            let got = most_in(&admitted, span);
            prop_assert!(
                got <= bound,
                "{}: {got} admitted within {span} µs, over the bound {bound} (L = {limit}, W = {window} µs)",
                KINDS[kind]
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    /// `theory::first_instant`, which the memory estimate takes as the least a fleet's
    /// gateways admit of a boundary burst's first tick: a fresh limiter, at any instant, facing
    /// more requests than that, admits exactly that many (one that queues has none).
    #[test]
    fn a_fresh_limiter_admits_its_first_instant_at_one_instant(
        kind in 0..KINDS.len(),
        limit in 1u64..40,
        window_ms in 2u64..3_000,
        at in 0u64..10_000_000,
        extra in 0u64..50,
    ) {
        let window = window_ms * MS;
        let spec = LimiterSpec::parse(KINDS[kind]).expect("valid");
        let scenario = Scenario { limit, window, ..Scenario::default() };
        let Ok(mut limiter) = scenario.build_limiter(&spec, 0) else {
            return Ok(());
        };
        let Some(first) = first_instant(&spec, limit) else {
            prop_assert!(spec.queues(), "{}: no first instant, yet it does not queue", KINDS[kind]);
            return Ok(());
        };
        let admitted = (0..first + extra)
            .filter(|_| limiter.decide(at).admitted())
            .count() as u64;
        prop_assert_eq!(admitted, first, "{} at {} µs (L = {}, W = {} µs)", KINDS[kind], at, limit, window);
    }
}

/// A window a key's first request opens (express-rate-limit, rate-limiter-flexible) reaches
/// its bound: 2L in one window when the opener came late in its millisecond (the library's
/// clock reads it at the millisecond's start, so the next window opens a whole window after
/// that start, while the opener is still inside the trailing window), 2L − 1 when it came at
/// the start of its millisecond, and L at an instant.
#[test]
fn a_librarys_window_reaches_its_bound_with_its_opener_late_in_its_millisecond() {
    use ratelab::audit::Auditor;
    use ratelab::limiter::{AnchoredWindow, Decide};
    use ratelab::theory::anchored_worst;
    use ratelab::time::{MS, SECOND};
    for (limit, window) in [(5u64, SECOND), (1, 10 * MS), (7, 60 * SECOND)] {
        for (opener, want) in [(MS - 1, 2 * limit), (0, 2 * limit - 1)] {
            let mut times = vec![opener];
            times.extend(std::iter::repeat_n(window - 1, limit as usize - 1));
            times.extend(std::iter::repeat_n(window, limit as usize));
            let mut l = AnchoredWindow::new(limit, window);
            let mut audit = Auditor::new(limit, window);
            for &t in &times {
                let ok = l.admit(t);
                assert!(ok, "every request of the pattern is admitted: {t}");
                audit.record(t, ok);
            }
            assert_eq!(
                audit.busiest, want,
                "L = {limit}, W = {window}, opener at {opener}"
            );
            assert_eq!(anchored_worst(limit, window, window), 2 * limit);
            assert!(audit.busiest <= anchored_worst(limit, window, window));
        }
        assert_eq!(anchored_worst(limit, window, 1), limit);
        assert_eq!(anchored_worst(limit, window, window - MS), 2 * limit - 1);
    }
}

/// rate-limiter-flexible with a `blockDuration` shorter than its window: a window every block,
/// `L` in each, reaches `theory::anchored_block_worst` both ways it can (FINDINGS F5's 5 per
/// 10 s with a 1 s block): eleven blocked windows, the first's admissions late in their
/// millisecond, 55 in 10 s; and, over 10.5 s, a window that ends unblocked with its opener
/// outside and `L − 1` inside, then eleven blocked ones, 59.
#[test]
fn a_blocked_window_opens_a_window_every_block_and_reaches_its_bound() {
    use ratelab::audit::Auditor;
    use ratelab::limiter::{AnchoredWindow, Decide};
    use ratelab::theory::anchored_block_worst;
    let (limit, window, block) = (5u64, 10 * SECOND, SECOND);
    // (the requests, each at its µs; the span audited; the most expected)
    let mut blocked = Vec::new();
    for k in 0..=10u64 {
        let at = (2 + 1000 * k) * MS + if k == 0 { MS - 1 } else { 0 };
        blocked.extend(std::iter::repeat_n(at, limit as usize + 1));
    }
    let mut after_one = vec![0, 9_999_999, 9_999_999, 9_999_999, 9_999_999];
    for k in 0..=10u64 {
        after_one.extend(std::iter::repeat_n(
            10 * SECOND + k * SECOND,
            limit as usize + 1,
        ));
    }
    for (times, span, want) in [
        (blocked, window, 55),
        (after_one, 10 * SECOND + SECOND / 2, 59),
    ] {
        let mut l = AnchoredWindow::new(limit, window).with_block(block);
        let mut audit = Auditor::new(limit, span);
        for &t in &times {
            let ok = l.admit(t);
            audit.record(t, ok);
        }
        assert_eq!(audit.busiest, want, "over {span} µs");
        assert_eq!(anchored_block_worst(limit, window, block, span), want);
    }
    // A block no shorter than the window changes nothing.
    for b in [window, 2 * window] {
        assert_eq!(
            anchored_block_worst(limit, window, b, window),
            ratelab::theory::anchored_worst(limit, window, window)
        );
    }
}
