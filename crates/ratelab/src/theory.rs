//! What theory says the simulator must show: the served shares that have closed forms and the
//! worst windows each limiter allows.
//!
//! - Under Poisson arrivals the sliding log is an Erlang loss system: each admission holds
//!   one of `L` slots for exactly `W` (the half-open window), so it serves `1 − B(L, a)` with
//!   `a = load · L` Erlangs, whatever the holding-time distribution.
//! - A fixed window sees a Poisson number `N` of arrivals per window, with mean `a`, and
//!   serves `E[min(N, L)] / E[N]`.
//! - Worst windows, over every possible arrival pattern: fixed window `2L`; sliding log `L`;
//!   sliding-window counter `2L`; token bucket and GCRA `B + ⌊r·(W − 1µs)⌋`, which is
//!   `B + L − 1` when `r = L/W`; nginx's leaky bucket as a meter `burst + 1 + ⌊r·(W − 1µs)⌋`.

#[cfg(feature = "fleet")]
use crate::limiter::{Coord, Outage};
use crate::limiter::{LeakyMode, Rate};
#[cfg(feature = "fleet")]
use crate::spec::FleetSpec;
use crate::spec::{LimiterKind, LimiterSpec};
use crate::time::Micros;
#[cfg(feature = "libraries")]
use crate::time::{MS, SECOND};

/// Erlang's B formula: the blocking probability of `servers` slots offered `erlangs` of load.
///
/// A sliding log of `L` per window `W` under Poisson arrivals is this loss system with `L`
/// servers: at 80% of the limit, it refuses about 0.4%.
///
/// ```
/// let refused = ratelab::theory::erlang_b(100, 80.0);
/// assert!((refused - 0.004).abs() < 0.0005, "{refused}");
/// ```
pub fn erlang_b(servers: u64, erlangs: f64) -> f64 {
    // The standard recurrence B(k) = a B(k−1) / (k + a B(k−1)) is stable for any size.
    let mut b = 1.0;
    for k in 1..=servers {
        b = erlangs * b / (k as f64 + erlangs * b);
    }
    b
}

/// The sliding log's served share under Poisson arrivals at `load` of `limit` per window.
pub fn sliding_log_served(limit: u64, load: f64) -> f64 {
    1.0 - erlang_b(limit, load * limit as f64)
}

/// The fixed window's served share under Poisson arrivals: `E[min(N, L)] / E[N]` with `N`
/// Poisson of mean `load · L`.
pub fn fixed_window_served(limit: u64, load: f64) -> f64 {
    let a = load * limit as f64;
    // E[min(N, L)] = L − Σ_{k<L} (L − k) P(N = k); the terms are summed in log space so that
    // large means do not underflow e^{−a}.
    let ln_a = libm::log(a);
    let mut shortfall = 0.0;
    for k in 0..limit {
        let ln_p = -a + k as f64 * ln_a - libm::lgamma(k as f64 + 1.0);
        shortfall += (limit - k) as f64 * libm::exp(ln_p);
    }
    (limit as f64 - shortfall) / a
}

/// The largest number a limiter like `spec` can admit in any window `(t − W, t]`, over every
/// possible arrival pattern, where that is known exactly.
///
/// ```
/// use ratelab::{theory::worst_case, time::MINUTE, LimiterSpec};
///
/// let worst = |spec: &str| worst_case(&LimiterSpec::parse(spec).expect("a spec"), 100, MINUTE);
/// assert_eq!(worst("fixed-window"), Some(200)); // 2L: both sides of a boundary
/// assert_eq!(worst("sliding-log"), Some(100)); // the literal rule
/// assert_eq!(worst("token-bucket:burst=10"), Some(109)); // B + L − 1
/// ```
pub fn worst_case(spec: &LimiterSpec, limit: u64, window: Micros) -> Option<u64> {
    worst_in(spec, limit, window, window)
}

/// The most a limiter like `spec` (a limit of `limit` per `window`) can admit in any span of
/// `span` µs, no longer than the window (a longer span is taken as the window): the same
/// reasoning as [`worst_case`], with only `span` to refill, leak or reach into periods. A
/// fixed window's stays `2L` (any longer span can cross a boundary; an instant, `L`), a
/// sliding log's `L`; a bucket's
/// is its burst and what refills within the span, so two instants a millisecond apart pass
/// little more than the burst. A sliding-window counter admits after a boundary only what
/// the last window's count, weighted by the share of the window still to come, leaves of
/// `L`: a span reaching `e` µs past a boundary holds at most `L + ⌈L·e/W⌉ + 1`; HAProxy's
/// counter, the same estimator on periods, as much with `e` in whole milliseconds and two
/// more (a period may be a millisecond short).
pub fn worst_in(spec: &LimiterSpec, limit: u64, window: Micros, span: Micros) -> Option<u64> {
    let span = span.clamp(1, window.max(1));
    #[cfg(feature = "fleet")]
    if let Some(fleet) = &spec.fleet {
        return fleet_worst_in(spec, fleet, limit, window, span);
    }
    let k = u64::from(spec.servers);
    let rate = spec.rate.unwrap_or(Rate {
        count: limit,
        per: window,
    });
    // Each of K servers gets 1/K of the rate; their worst windows can coincide.
    let refill_in_span = |rate: Rate| {
        (u128::from(rate.count) * u128::from(span - 1) / u128::from(rate.per * k)) as u64
    };
    match spec.kind {
        // An instant (a span of 1 µs) lies in one calendar window.
        LimiterKind::FixedWindow if span == 1 => Some(limit),
        LimiterKind::FixedWindow => Some(2 * limit),
        LimiterKind::SlidingWindowCounter => {
            // Each of K servers counts `L / K` of its own: each can pass its part by its own
            // weighted share and the two of the estimate's rounding, and their worst spans
            // can coincide.
            let part = limit / k.max(1);
            let weighted = u128::from(part) * u128::from(span - 1) / u128::from(window);
            Some(k * (2 * part).min(part + weighted as u64 + 2))
        }
        LimiterKind::SlidingLog => Some(limit),
        LimiterKind::TokenBucket | LimiterKind::Gcra | LimiterKind::GoRate => {
            let burst = spec.burst.unwrap_or(limit);
            Some(burst + k * refill_in_span(rate))
        }
        LimiterKind::LeakyBucket => {
            let burst = spec.burst.unwrap_or(0);
            match spec.mode {
                LeakyMode::Meter => Some(burst + k * (1 + refill_in_span(rate))),
                LeakyMode::Queue => {
                    // Departures leave at least ⌊D/N⌋ µs apart.
                    let gap = rate.per / rate.count;
                    (gap > 0).then(|| (span - 1) / gap + 1)
                }
            }
        }
        LimiterKind::Nginx => {
            let rate = spec.nginx_rate(limit, window).ok()?;
            let delay = (spec.mode == LeakyMode::Queue).then_some(spec.delay);
            Some(nginx_worst(rate, spec.burst.unwrap_or(0), delay, span))
        }
        #[cfg(feature = "libraries")]
        LimiterKind::Vsthrottle => {
            // A bucket of `limit` refilled `limit` per period in whole tokens only: at most
            // the token bucket's, the fractions it throws away only ever lose.
            // Split across K gateways, each keeps its own bucket: its part of `L`, or the
            // whole of its own `limit=`.
            let l = spec.limit.unwrap_or(limit / k.max(1));
            let period = spec.period.unwrap_or(window);
            let refill = u128::from(l) * u128::from(span - 1) / u128::from(period.max(1));
            let one = l.saturating_add(refill.min(u128::from(u64::MAX)) as u64);
            Some(k.saturating_mul(one))
        }
        #[cfg(feature = "libraries")]
        LimiterKind::RedisCell => {
            // Split across K gateways, each keeps its own key: built from its part of `L`,
            // or from its own `count=` whole.
            let (burst, count, period) = redis_cell_keys(spec, limit / k.max(1), window);
            let quantity = spec.quantity.unwrap_or(1);
            Some(k.saturating_mul(redis_cell_worst_of(burst, count, period, quantity, span)))
        }
        #[cfg(feature = "libraries")]
        LimiterKind::ExpressRateLimit | LimiterKind::RateLimiterFlexible => {
            // Split across K gateways, each keeps its own windows: its part of `L`, or the
            // whole of its own `limit=`.
            let period = spec.period.unwrap_or(window);
            let part = spec.limit.unwrap_or(limit / k.max(1));
            let block = spec.block.unwrap_or(0);
            Some(k.saturating_mul(anchored_block_worst(part, period, block, span)))
        }
        #[cfg(feature = "libraries")]
        LimiterKind::Limits => {
            // Split across K gateways, each keeps its own: its part of `L`, or the whole of
            // its own rate string.
            let period = spec.period.unwrap_or(window);
            let part = spec.limit.unwrap_or(limit / k.max(1));
            let strategy = spec
                .strategy
                .unwrap_or(crate::spec::LimitsStrategy::FixedWindow);
            Some(k.saturating_mul(limits_worst(strategy, part, period, span)))
        }
        #[cfg(not(feature = "libraries"))]
        LimiterKind::Vsthrottle
        | LimiterKind::RedisCell
        | LimiterKind::ExpressRateLimit
        | LimiterKind::RateLimiterFlexible
        | LimiterKind::Limits => None,
        LimiterKind::Haproxy => {
            let period = spec.haproxy_period(window).ok()?;
            let limit = spec.limit.unwrap_or(limit);
            let periods = haproxy_worst(limit, period, span);
            let shortest = (period / 1000 - (period / 1000) % 2).max(2);
            let ms = span.div_ceil(1000) + 2;
            let weighted = u128::from(limit) * u128::from(ms) / u128::from(shortest);
            // (Shown for a span within one period, where it crosses one boundary at most.)
            if span <= period {
                Some(periods.min(limit.saturating_add(weighted as u64).saturating_add(3)))
            } else {
                Some(periods)
            }
        }
    }
}

/// How many of the requests that reach a fresh limiter like `spec` at one instant it
/// admits, when at least that many come: a window or a log its limit, a counter with nothing
/// before its limit, a bucket or GCRA its burst, a leaky meter and nginx's `nodelay` their
/// burst and one. `None` where a limiter queues (its admissions leave later), splits its rate
/// over servers, or is a fleet. (Property-tested: exactly this many, at any instant.)
pub fn first_instant(spec: &LimiterSpec, limit: u64) -> Option<u64> {
    #[cfg(feature = "fleet")]
    if spec.fleet.is_some() {
        return None;
    }
    if spec.queues() || spec.servers > 1 {
        return None;
    }
    match spec.kind {
        LimiterKind::FixedWindow | LimiterKind::SlidingLog | LimiterKind::SlidingWindowCounter => {
            Some(limit)
        }
        LimiterKind::Haproxy | LimiterKind::ExpressRateLimit | LimiterKind::RateLimiterFlexible => {
            Some(spec.limit.unwrap_or(limit))
        }
        LimiterKind::TokenBucket | LimiterKind::Gcra | LimiterKind::GoRate => {
            Some(spec.burst.unwrap_or(limit))
        }
        #[cfg(feature = "libraries")]
        LimiterKind::RedisCell => Some(
            redis_cell_keys(spec, limit, SECOND).0.saturating_add(1)
                / spec.quantity.unwrap_or(1).max(1),
        ),
        #[cfg(not(feature = "libraries"))]
        LimiterKind::RedisCell => None,
        LimiterKind::Vsthrottle | LimiterKind::Limits => Some(spec.limit.unwrap_or(limit)),
        LimiterKind::LeakyBucket | LimiterKind::Nginx => {
            Some(spec.burst.unwrap_or(0).saturating_add(1))
        }
    }
}

#[cfg(feature = "fleet")]
/// The most a fleet of gateways enforcing `spec` admits in any window, where known:
/// - `local`: each gateway's worst window at once, `N` times the single limiter's;
/// - `split`: the split limit's (each gateway `1/N` of the limit);
/// - `central`: the single limiter's (a round trip moves every decision alike); none when an
///   outage fails open (every request then passes);
/// - `lease`: the central limiter's, and what each gateway still holds of a lease it took
///   before the window, `N · (B − 1)`;
/// - `sync:every=Δ,delay=δ`: a gateway's view holds every admission up to its last snapshot,
///   taken at most `Δ + δ` before, so what it cannot see is what the other `N − 1` admitted
///   since: at most the single limiter's worst window plus `N − 1` times what one gateway
///   can admit in `Δ + δ` ([`sync_unseen`]: its worst in that span, or past a window its
///   worst window times `⌈(Δ + δ) / W⌉`), and never more than `local`'s.
///   (Property-tested against random and adversarial traffic, not proved.)
///
/// A clock skew changes no bound of `local` and `split` (each a sum of each gateway's worst
/// window, which is its own limiter's whatever its clock); a skewed `sync` fleet's is
/// `local`'s.
pub fn fleet_worst(
    spec: &LimiterSpec,
    fleet: &FleetSpec,
    limit: u64,
    window: Micros,
) -> Option<u64> {
    fleet_worst_in(spec, fleet, limit, window, window)
}

#[cfg(feature = "fleet")]
/// [`fleet_worst`] over any span of `span` µs up to the window: each part the single
/// limiter's [`worst_in`] that span (a `sync` gateway's unseen admissions still bounded by
/// what it can admit in `Δ + δ`).
pub fn fleet_worst_in(
    spec: &LimiterSpec,
    fleet: &FleetSpec,
    limit: u64,
    window: Micros,
    span: Micros,
) -> Option<u64> {
    let mut one = spec.clone();
    one.fleet = None;
    let single = worst_in(&one, limit, window, span)?;
    let n = u64::from(fleet.gateways);
    let local = single.saturating_mul(n);
    match fleet.coord {
        Coord::Local => Some(local),
        Coord::Split => {
            one.servers = fleet.gateways;
            worst_in(&one, limit, window, span)
        }
        Coord::Central {
            outage: Some(Outage { open: true, .. }),
            ..
        } => None,
        Coord::Central { .. } => Some(single),
        Coord::Lease { size, .. } => Some(single.saturating_add(n.saturating_mul(size - 1))),
        // Skewed, what one gateway cannot see is no longer bounded by the sync interval (the
        // others' stamps look older to a gateway ahead); but every gateway counts all of its
        // own admissions by its own clock, so each stays within its limiter's worst window.
        Coord::Sync { .. } if fleet.skew > 0 => Some(local),
        // A window a key's first request opens moves with the admissions a gateway's view
        // holds, so others' admissions can open a view's window sooner and give room where
        // the gateway alone had none; but each view's windows still open a window apart and
        // hold at most `L` each, so each gateway stays within its limiter's worst window.
        Coord::Sync { .. } if spec.opens_at_a_request() => Some(local),
        Coord::Sync { every, delay } => {
            let own = sync_unseen(&one, limit, window, every, delay)?;
            Some(local.min(single.saturating_add((n - 1).saturating_mul(own))))
        }
    }
}

#[cfg(feature = "fleet")]
/// The most one gateway of a `sync:every=Δ,delay=δ` fleet admits that another has not seen:
/// its admissions since the other's last snapshot, taken after `t − Δ − δ`. Within a
/// window, its limiter's worst in that span ([`worst_in`]); past one, its worst window in
/// each window of it.
pub fn sync_unseen(
    one: &LimiterSpec,
    limit: u64,
    window: Micros,
    every: Micros,
    delay: Micros,
) -> Option<u64> {
    let stale = every.saturating_add(delay);
    if stale < window {
        worst_in(one, limit, window, stale.saturating_add(1))
    } else {
        Some(worst_case(one, limit, window)?.saturating_mul(stale.div_ceil(window)))
    }
}

/// The most nginx's `limit_req` (`rate`, `burst`, `delay`: `None` for `nodelay`) lets
/// through in any window `(t − W, t]`, in nginx's arithmetic: the first request and `burst`
/// more at once, then what leaks in one window, `⌊rate · span / 10⁶⌋` with `rate` in
/// thousandths a second and `span` the most milliseconds nginx's clock can count within the
/// window (`⌈(W − 1 µs) / 1 ms⌉`: one more than an exact clock can, when the window starts
/// late in one millisecond and ends early in another).
///
/// The excess after each admission is at least the one before plus 1,000 less what leaked,
/// and at most `burst × 1000`, which gives the bound; a window that starts with an empty
/// bucket, admits `burst + 1` in its first millisecond and then one each time a whole request
/// has leaked reaches it. When requests can wait (`delay` below `burst`), the window counts
/// them when they leave: each leaves when its excess would have leaked down to `delay`, up
/// to a millisecond early, so at most `1 + delay` and what leaks in `⌈W / 1 ms⌉ + 1` ms
/// leave in it (a bound; property-tested, not shown to be reached).
pub fn nginx_worst(rate: Rate, burst: u64, delay: Option<u64>, window: Micros) -> u64 {
    let per_second = u128::from(crate::limiter::thousandths_per_second(rate));
    let span = u128::from((window.max(1) - 1).div_ceil(1000));
    match delay {
        Some(d) if d < burst => {
            // From the first departure's arrival to the last departure: under `W + 1 ms`.
            let span = u128::from(window.div_ceil(1000) + 1);
            d + 1 + (per_second * span / 1_000_000).min(u128::from(u64::MAX / 2)) as u64
        }
        _ => burst + 1 + (per_second * span / 1_000_000).min(u128::from(u64::MAX / 2)) as u64,
    }
}

#[cfg(feature = "libraries")]
/// redis-cell's `max_burst`, `count` and `period` (s) of `spec`: as given, else a burst of
/// `L − 1` (so that a full bucket passes `L` at once) and `L` per `W` rounded up to whole
/// seconds.
pub fn redis_cell_keys(spec: &LimiterSpec, limit: u64, window: Micros) -> (u64, u64, u64) {
    let count = spec.limit.unwrap_or(limit);
    let period = spec.period.unwrap_or(window).div_ceil(SECOND).max(1);
    (spec.burst.unwrap_or(count.saturating_sub(1)), count, period)
}

#[cfg(feature = "libraries")]
/// The most redis-cell (`CL.THROTTLE key max_burst count period`) admits in any span of
/// `span` µs: a full bucket's `max_burst + 1`, and one each emission interval `T` after it,
/// `⌊(span − 1 ns)/T⌋`. Redis can let the key go up to a millisecond before its theoretical
/// arrival time (its expiry is truncated to whole milliseconds on its millisecond clock), but
/// only once the key has been left alone for most of `DVT`, and then the bucket is full (no
/// fuller): with `T` at least a millisecond, which the scenario requires, that moves nothing a
/// draining bucket admits. (Property-tested against random and bursty traffic.)
pub fn redis_cell_worst(max_burst: u64, count: u64, period_s: u64, span: Micros) -> u64 {
    redis_cell_worst_of(max_burst, count, period_s, 1, span)
}

#[cfg(feature = "libraries")]
/// [`redis_cell_worst`] for requests of `quantity` cells each (`CL.THROTTLE`'s fifth
/// argument): every admission moves `tat` on by `quantity · T`, and `tat` may run at most
/// `DVT = (max_burst + 1)·T` ahead of the clock, so `n` admissions in a span of `span − 1 ns`
/// need `n · quantity · T ≤ DVT + span − 1 ns`: `⌊((max_burst + 1)·T + span − 1 ns) / (quantity
/// · T)⌋`, reached by a full bucket's `⌊(max_burst + 1)/quantity⌋` at once and one each
/// `quantity · T` from when the cells left over make room. None with more cells than the
/// bucket holds. With `quantity` 1, `max_burst + 1 + ⌊(span − 1 ns)/T⌋`.
pub fn redis_cell_worst_of(
    max_burst: u64,
    count: u64,
    period_s: u64,
    quantity: u64,
    span: Micros,
) -> u64 {
    let interval = ((period_s as f64 * 1e9) / count.max(1) as f64) as u128;
    let cells = u128::from(max_burst) + 1;
    let quantity = u128::from(quantity.max(1));
    if quantity > cells {
        return 0;
    }
    let span_ns = u128::from(span).saturating_mul(1000);
    let most = (cells * interval + span_ns.saturating_sub(1)) / (quantity * interval).max(1);
    u64::try_from(most).unwrap_or(u64::MAX)
}

#[cfg(feature = "libraries")]
/// The most a window a key's first request opens (express-rate-limit, rate-limiter-flexible:
/// `limit` per `period`, on a millisecond clock) admits in any span of `span` µs. Each window
/// admits at most `limit`, and a span can reach into `k = ⌊(span − 1)/period⌋ + 2` of them
/// (one for an instant). The first of those was opened by a request at its start; the next
/// opens no earlier than a period later on the millisecond clock, so the opener is in the
/// span only when the opener came late in its millisecond: a span longer than `k − 1` periods
/// less 999 µs. Otherwise the span holds at most `k·limit − 1`: `2L − 1` for a span shorter
/// than the period by a millisecond, `2L` for one period (the opener late in its millisecond,
/// `L − 1` just before the window ends and `L` as the next opens).
pub fn anchored_worst(limit: u64, period: Micros, span: Micros) -> u64 {
    anchored_worst_on(limit, period, span, MS)
}

#[cfg(feature = "libraries")]
/// The most rate-limiter-flexible with a `blockDuration` of `block` µs admits in any span of
/// `span` µs, on its millisecond clock (`limit` per `period`). A window ends at its period's
/// end or, blocked, `block` after its first rejection, and the next request opens another; so
/// a block at least as long as the period changes nothing ([`anchored_worst`]), and a shorter
/// one lets a client that sends `L` and one more in one millisecond open a window every
/// `block`. Two ways reach the most: `m` such windows of `L` each, the first's admissions late
/// in their millisecond and the last's early in theirs, `(m − 1)·block ≤ span + 998 µs`; or
/// first a window that ends unblocked, its opener before the span and `L − 1` of its
/// admissions in it, then windows every `block` from its end, `(m − 1)·block ≤ span − 2 µs`
/// (FINDINGS F5: 54 in a 10 s span at 5 per 10 s with a 1 s block, on whole milliseconds; 55
/// with arrivals to the microsecond). (Property-tested against random and bursty traffic, and
/// against every arrival pattern of a small grid.)
pub fn anchored_block_worst(limit: u64, period: Micros, block: Micros, span: Micros) -> u64 {
    let plain = anchored_worst(limit, period, span);
    if block == 0 || block >= period {
        return plain;
    }
    let span = span.max(1);
    let blocked = limit.saturating_mul((span - 1 + (MS - 1)) / block + 1);
    let after_one =
        (limit - 1).saturating_add(limit.saturating_mul(span.saturating_sub(2) / block + 1));
    plain.max(blocked).max(after_one)
}

#[cfg(feature = "libraries")]
/// [`anchored_worst`] on a clock that reads whole `tick`s of µs: the opener of the first
/// window reached is inside the span when it can sit up to `tick − 1` µs before its tick.
pub fn anchored_worst_on(limit: u64, period: Micros, span: Micros, tick: Micros) -> u64 {
    if span <= 1 {
        return limit;
    }
    let k = (span - 1) / period.max(1) + 2;
    let opener_in = span
        > (k - 1)
            .saturating_mul(period)
            .saturating_sub(tick.max(1) - 1);
    limit
        .saturating_mul(k)
        .saturating_sub(u64::from(!opener_in))
}

#[cfg(feature = "libraries")]
/// The most Python's `limits` (`limit` per `period` with `strategy`) admits in any span of
/// `span` µs. The fixed window is express-rate-limit's on a µs clock: `2L − 1` in its period.
/// The moving window holds at most `L` in any `[t − W, t]`, so a span holds `L` for each
/// `W + 1 µs` it reaches into. The counter holds at most `L` in each aligned window, and
/// within one period at most what the weighted estimate leaves, as ratelab's counter.
pub fn limits_worst(
    strategy: crate::spec::LimitsStrategy,
    limit: u64,
    period: Micros,
    span: Micros,
) -> u64 {
    use crate::spec::LimitsStrategy;
    let span = span.max(1);
    let period = period.max(1);
    match strategy {
        LimitsStrategy::FixedWindow => anchored_worst_on(limit, period, span, 1),
        LimitsStrategy::MovingWindow => limit.saturating_mul(span.div_ceil(period + 1)),
        LimitsStrategy::SlidingWindowCounter => {
            let aligned = limit.saturating_mul((span - 1) / period + 2);
            if span <= period {
                let weighted = u128::from(limit) * u128::from(span - 1) / u128::from(period);
                aligned.min((2 * limit).min(limit + weighted as u64 + 2))
            } else {
                aligned
            }
        }
    }
}

/// The most HAProxy's counter (`limit` per `period`) admits in any window of `window` µs:
/// `limit` in each of its periods that the window reaches into. Periods follow each other at
/// least `period` apart, one millisecond less when the period is an odd number of them (the
/// tick is kept even), so a window reaches into `⌊(W − 1) / period⌋ + 2` of them: `2 × limit`
/// when the window is the period.
pub fn haproxy_worst(limit: u64, period: Micros, window: Micros) -> u64 {
    let ms = period / 1000;
    let shortest = (ms - ms % 2).max(2) * 1000;
    limit.saturating_mul((window.max(1) - 1) / shortest + 2)
}

/// The sliding-window counter's worst window under a flood of one request per `every` that
/// starts `start` into a window, after a quiet window.
///
/// The flood fills the first window at once (`L` admissions from `start`). In the next window
/// the counter weights those `L` by the share of the window still to come, so it admits the
/// `k`-th request at the first flood tick `e` with `L·e > (k − 1)·W`. The trailing window just
/// before `start` comes round again holds all `L` of the first window and every one of those,
/// `⌈L·(start − every) / W⌉` of them: the worst is `L + ⌈L·(start − every)/W⌉`.
///
/// Exact when the window and the start are whole multiples of `every` and the first window
/// has room for all `L` (`start + L·every ≤ W`); `None` otherwise.
pub fn swc_flood_worst(limit: u64, window: Micros, start: Micros, every: Micros) -> Option<u64> {
    let valid = every > 0
        && window % every == 0
        && start % every == 0
        && limit
            .checked_mul(every)
            .is_some_and(|span| start + span <= window);
    if !valid {
        return None;
    }
    if start < every {
        return Some(limit);
    }
    let numerator = u128::from(limit) * u128::from(start - every);
    Some(limit + numerator.div_ceil(u128::from(window)) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erlang_b_matches_known_values() {
        // Published table values: B(10, 5) = 0.018385, B(100, 100) = 0.075700.
        assert!((erlang_b(10, 5.0) - 0.018_385).abs() < 1e-6);
        assert!((erlang_b(100, 100.0) - 0.075_700).abs() < 1e-5);
        assert_eq!(erlang_b(0, 3.0), 1.0);
    }

    #[test]
    fn the_essays_theory_values() {
        // The study's reference points: 1 − B at 80/100/120%, and E[min(N, 100)]/E[N].
        let log: Vec<f64> = [0.8, 1.0, 1.2]
            .iter()
            .map(|&l| sliding_log_served(100, l))
            .collect();
        let fw: Vec<f64> = [0.8, 1.0, 1.2]
            .iter()
            .map(|&l| fixed_window_served(100, l))
            .collect();
        for (got, want) in log.iter().zip([0.9960, 0.9243, 0.8037]) {
            assert!((got - want).abs() < 5e-5, "{got} vs {want}");
        }
        for (got, want) in fw.iter().zip([0.9994, 0.9601, 0.8323]) {
            assert!((got - want).abs() < 5e-5, "{got} vs {want}");
        }
    }

    #[test]
    fn fixed_window_formula_agrees_with_direct_summation() {
        // A small case summed the naive way.
        let (limit, a) = (3u64, 2.5f64);
        let mut p = (-a).exp();
        let mut e_min = 0.0;
        for k in 0..200u64 {
            e_min += (k.min(limit)) as f64 * p;
            p *= a / (k + 1) as f64;
        }
        assert!((fixed_window_served(limit, a / limit as f64) - e_min / a).abs() < 1e-12);
    }

    #[test]
    fn worst_cases() {
        let spec = |s: &str| LimiterSpec::parse(s).expect("valid spec");
        let w = 60_000_000;
        assert_eq!(worst_case(&spec("fixed-window"), 100, w), Some(200));
        assert_eq!(
            worst_case(&spec("sliding-log:record-rejects=true"), 100, w),
            Some(100)
        );
        assert_eq!(
            worst_case(&spec("sliding-window-counter"), 100, w),
            Some(200)
        );
        assert_eq!(worst_case(&spec("token-bucket"), 100, w), Some(199));
        assert_eq!(worst_case(&spec("gcra:burst=50"), 100, w), Some(149));
        assert_eq!(worst_case(&spec("token-bucket:burst=10"), 60, w), Some(69));
        assert_eq!(worst_case(&spec("leaky-bucket:burst=5"), 100, w), Some(105));
        assert_eq!(
            worst_case(&spec("leaky-bucket:burst=5,mode=queue"), 100, w),
            Some(100)
        );
        assert_eq!(
            worst_case(&spec("token-bucket:burst=100,servers=10"), 100, w),
            Some(190)
        );
    }

    #[test]
    fn swc_flood_formula_at_the_essays_points() {
        let w = 60_000_000;
        assert_eq!(swc_flood_worst(100, w, 30_000_000, 1_000), Some(150));
        assert_eq!(swc_flood_worst(100, w, 59_000_000, 1_000), Some(199));
        assert_eq!(swc_flood_worst(100, w, 59_900_000, 1_000), Some(200));
        assert_eq!(swc_flood_worst(100, w, 0, 1_000), Some(100));
        assert_eq!(swc_flood_worst(100, w, 59_950_000, 1_000), None);
    }
}
