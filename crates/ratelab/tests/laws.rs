//! The laws the README states, held across every combination of limiter, coordination,
//! route, client policy and traffic (seeded property tests: each case is a whole scenario
//! drawn from those, run as `ratelab simulate` runs it):
//!
//! - `one_gateway_is_its_limiter`: behind one gateway, under `local`, `split`, `sync`,
//!   `central` (no round trip, or for a limiter that does not read a calendar a round trip of
//!   whole milliseconds) and `lease:size=1`, every number of the run is the limiter's, with
//!   clients that honour `Retry-After` too (the gateway answers it from its own view);
//! - `a_central_store_without_a_round_trip_is_one_shared_limiter`: any number of gateways,
//!   any route;
//! - `a_central_sliding_log_makes_no_wrong_decision`: at any round trip, any clients;
//! - `every_fleet_stays_within_its_bound_and_its_audit_adds_up`: the busiest window within
//!   the theory's bound for the fleet, and the tallies adding up per gateway and in all
//!   (admitted and rejected are the decisions; a request is admitted once or given up);
//! - and no accepted scenario panics (a panic fails any of them).

use proptest::prelude::*;
use ratelab::sim::{simulate_run, RunStats, Scenario};
use ratelab::spec::{FleetSpec, LimiterSpec, TrafficSpec};
use ratelab::theory;
use ratelab::time::MINUTE;

/// Every limiter a fleet takes (a queue is refused: a gateway answers at once).
const KINDS: [&str; 21] = [
    "fixed-window",
    "sliding-log",
    "sliding-window-counter",
    // Counting their rejects: the retry storm's lockout.
    "fixed-window:record-rejects=true",
    "sliding-log:record-rejects=true",
    "sliding-window-counter:record-rejects=true",
    "haproxy",
    "token-bucket:burst=7",
    "gcra:burst=4",
    "leaky-bucket:burst=3",
    "nginx:burst=5,nodelay",
    "haproxy:record-rejects=false",
    "express-rate-limit",
    "rate-limiter-flexible:points=5,duration=20",
    "go-rate:b=4",
    "redis-cell:max-burst=3,count=30,period=60",
    "redis-cell:max-burst=3,count=30,period=60,quantity=2",
    "vsthrottle:limit=15,period=10s",
    "limits:rate=5/20seconds",
    "limits:rate=20/minute,strategy=moving-window",
    "limits:strategy=sliding-window-counter",
];

/// Limiters that only compare instants (no calendar window, no millisecond clock): a round
/// trip, moving every decision alike, moves nothing else.
fn compares_instants(kind: &str) -> bool {
    ["sliding-log", "token-bucket", "gcra", "leaky-bucket"]
        .iter()
        .any(|k| kind.starts_with(k))
}

/// A client policy, as the keys of a `retry` spec or of a group of a mix.
fn policy() -> impl Strategy<Value = String> {
    let backoff = prop_oneof![
        (1u64..20).prop_map(|s| format!("every={s}s")),
        (1u64..5, 1u64..4).prop_map(|(b, c)| format!("policy=exponential,base={b}s,cap={c}min")),
    ];
    (
        backoff,
        0usize..4,
        prop::option::of(1u64..60),
        any::<bool>(),
        1u32..8,
    )
        .prop_map(|(backoff, jitter, budget, honor, tries)| {
            let exponential = backoff.starts_with("policy=exponential");
            let jitters = ["none", "full", "equal", "decorrelated"];
            // Decorrelated jitter grows from the last wait: exponential backoff only.
            let jitter = match jitters[jitter] {
                "decorrelated" if !exponential => "full",
                j => j,
            };
            let mut keys = format!("tries={tries},{backoff},jitter={jitter}");
            if let Some(b) = budget {
                keys.push_str(&format!(",budget={b}%"));
            }
            if honor {
                keys.push_str(",retry-after=honor");
            }
            keys
        })
}

/// Traffic: steady, bursty, on/off, a flood, a boundary burst (either tick's count given), or
/// retrying clients (one policy or a
/// mix of two).
fn traffic() -> impl Strategy<Value = String> {
    prop_oneof![
        (1u32..30).prop_map(|l| format!("steady:load={}", f64::from(l) / 10.0)),
        (1u32..30).prop_map(|l| format!("page-loads:load={}", f64::from(l) / 10.0)),
        (1u64..500, 1u64..90).prop_map(|(ms, s)| format!("flood:every={ms}ms,for={s}s")),
        Just("boundary-burst".to_owned()),
        (1u64..900, 0u64..900, 0u64..300, 0u64..300).prop_map(|(b, a, first, second)| {
            format!("boundary-burst:before={b}ms,after={a}ms,first={first},second={second}")
        }),
        (1u32..30, 1u64..60, 1u32..10).prop_map(|(l, active, busy)| {
            format!(
                "on-off:load={},active={active}s,busy={}",
                f64::from(l) / 10.0,
                f64::from(busy) / 10.0
            )
        }),
        (
            1u32..30,
            0u32..40,
            policy(),
            prop::option::of((1u32..10, policy()))
        )
            .prop_map(|(clients, spike, keys, mix)| {
                let mut t =
                    format!("retry:rate=6/5min,spike={spike},at=1min,clients={clients},{keys}");
                if let Some((m, other)) = mix {
                    t.push_str(&format!("+clients={m},{other}"));
                }
                t
            }),
    ]
}

fn scenario(
    kind: &str,
    fleet: Option<FleetSpec>,
    traffic: &str,
    limit: u64,
    seed: u64,
) -> Scenario {
    let mut spec = LimiterSpec::parse(kind).expect("valid limiter");
    spec.fleet = fleet;
    Scenario {
        limiters: vec![spec],
        traffic: TrafficSpec::parse(traffic).expect("valid traffic"),
        limit,
        // A minute, so nginx's rate is L per W in its own units.
        window: MINUTE,
        duration: 5 * MINUTE,
        runs: 1,
        seed,
    }
}

fn fleet(n: u32, route: &str, coord: &str) -> Option<FleetSpec> {
    Some(FleetSpec::parse(&n.to_string(), Some(route), Some(coord)).expect("valid fleet"))
}

/// Whether a fleet refuses `kind` up front: a limiter counting its rejects (a fleet shares its
/// admissions only; the refusal and its message are the CLI's tests'). The fleet laws start
/// where a fleet accepts the limiter.
fn refused_behind_gateways(kind: &str) -> bool {
    scenario(kind, fleet(1, "random", "local"), "steady:load=0.5", 100, 1)
        .validate()
        .is_err()
}

/// The fleet laws skip exactly the limiters that count their rejects, no other.
#[test]
fn only_limiters_counting_rejects_are_refused_behind_gateways() {
    let refused: Vec<&str> = KINDS
        .into_iter()
        .filter(|k| refused_behind_gateways(k))
        .collect();
    assert_eq!(
        refused,
        [
            "fixed-window:record-rejects=true",
            "sliding-log:record-rejects=true",
            "sliding-window-counter:record-rejects=true",
            "haproxy",
        ]
    );
}

/// The run's numbers, validated first (an accepted scenario must run).
fn run(s: &Scenario) -> RunStats {
    s.validate().expect("an accepted scenario");
    simulate_run(s, 0).expect("runs").remove(0)
}

/// What a fleet's run must share with its one limiter's: everything but where the fleet's
/// tallies, the busiest window's instant and the delays of a round trip live.
fn same_as(fleet: &RunStats, one: &RunStats) -> Result<(), TestCaseError> {
    let strip = |r: &RunStats| {
        let mut r = r.clone();
        r.fleet = None;
        r.busiest_at = 0;
        r.delays = Default::default();
        r
    };
    let (a, b) = (strip(fleet), strip(one));
    if a != b {
        let short = |r: &RunStats| {
            let c = r.client.as_ref().map(|c| {
                (
                    c.gave_up,
                    c.success.len(),
                    c.success.quantile(1.0),
                    c.peak_second,
                    c.locked,
                )
            });
            format!(
                "offered {} admitted {} decisions {} busiest {} wrong {:?}/{:?} client {c:?}",
                r.offered, r.admitted, r.decisions, r.busiest, r.wrong_admits, r.wrong_rejects
            )
        };
        return Err(TestCaseError::fail(format!(
            "fleet: {}; limiter: {}",
            short(&a),
            short(&b)
        )));
    }
    Ok(())
}

fn route() -> impl Strategy<Value = &'static str> {
    prop_oneof![Just("round-robin"), Just("random"), Just("skewed:hot=0.8")]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(160))]

    #[test]
    fn one_gateway_is_its_limiter(
        kind in 0usize..KINDS.len(),
        traffic in traffic(),
        limit in 1u64..40,
        seed in 0u64..1_000,
        every_ms in 1u64..30_000,
        delay_ms in 0u64..30_000,
        rtt_ms in 0u64..3_000,
        ttl_ms in 1u64..60_000,
        route in route(),
    ) {
        let kind = KINDS[kind];
        if refused_behind_gateways(kind) {
            return Ok(());
        }
        let one = run(&scenario(kind, None, &traffic, limit, seed));
        let rtt = if compares_instants(kind) { 2 * rtt_ms } else { 0 };
        for coord in [
            "local".to_owned(),
            "split".to_owned(),
            format!("sync:every={every_ms}ms,delay={delay_ms}ms"),
            format!("central:rtt={rtt}ms"),
            format!("lease:size=1,ttl={ttl_ms}ms"),
        ] {
            let got = run(&scenario(kind, fleet(1, route, &coord), &traffic, limit, seed));
            same_as(&got, &one).map_err(|e| TestCaseError::fail(format!("{kind} --coord {coord} {traffic}: {e}")))?;
        }
    }

    #[test]
    fn a_central_store_without_a_round_trip_is_one_shared_limiter(
        kind in 0usize..KINDS.len(),
        traffic in traffic(),
        limit in 1u64..40,
        seed in 0u64..1_000,
        n in 2u32..12,
        route in route(),
    ) {
        let kind = KINDS[kind];
        if refused_behind_gateways(kind) {
            return Ok(());
        }
        let one = run(&scenario(kind, None, &traffic, limit, seed));
        let got = run(&scenario(kind, fleet(n, route, "central"), &traffic, limit, seed));
        same_as(&got, &one).map_err(|e| TestCaseError::fail(format!("{kind} x{n} {route} {traffic}: {e}")))?;
    }

    #[test]
    fn a_central_sliding_log_makes_no_wrong_decision(
        traffic in traffic(),
        limit in 1u64..40,
        seed in 0u64..1_000,
        n in 1u32..12,
        rtt_us in prop_oneof![0u64..10, 0u64..2_000_000, 0u64..60_000_000],
        route in route(),
    ) {
        let coord = format!("central:rtt={rtt_us}us");
        let got = run(&scenario("sliding-log", fleet(n, route, &coord), &traffic, limit, seed));
        prop_assert_eq!((got.wrong_admits, got.wrong_rejects), (Some(0), Some(0)), "x{} {} {}", n, coord, traffic);
        prop_assert!(got.busiest <= limit);
    }

    #[test]
    fn every_fleet_stays_within_its_bound_and_its_audit_adds_up(
        kind in 0usize..KINDS.len(),
        traffic in traffic(),
        limit in 1u64..40,
        seed in 0u64..1_000,
        n in 1u32..10,
        route in route(),
        coord in prop_oneof![
            Just("local".to_owned()),
            Just("split".to_owned()),
            (1u64..30_000, 0u64..30_000).prop_map(|(e, d)| format!("sync:every={e}ms,delay={d}ms")),
            (1u64..30_000, 0u64..30_000, 1u64..60_000).prop_map(|(e, d, s)| format!("sync:every={e}ms,delay={d}ms,skew={s}ms")),
            (1u64..60_000).prop_map(|s| format!("local:skew={s}ms")),
            (1u64..60_000).prop_map(|s| format!("split:skew={s}ms")),
            (0u64..5_000).prop_map(|r| format!("central:rtt={r}ms")),
            (0u64..5_000, 0u64..120, 1u64..60).prop_map(|(r, a, l)| format!("central:rtt={r}ms,outage={a}s+{l}s,fail=closed")),
            (0u64..5_000, 0u64..120, 1u64..60).prop_map(|(r, a, l)| format!("central:rtt={r}ms,outage={a}s+{l}s,fail=open")),
            (1u64..12, 1u64..60_000).prop_map(|(b, t)| format!("lease:size={b},ttl={t}ms")),
            (1u64..12).prop_map(|b| format!("lease:size={b}")),
        ],
    ) {
        let kind = KINDS[kind];
        if refused_behind_gateways(kind) {
            return Ok(());
        }
        let f = FleetSpec::parse(&n.to_string(), Some(route), Some(&coord)).expect("valid fleet");
        let s = scenario(kind, Some(f), &traffic, limit, seed);
        // A split the limit does not allow, or a skew a synced limiter cannot count, is
        // refused in one line naming why; anything accepted runs.
        if let Err(e) = s.validate() {
            let line = e.to_string();
            prop_assert!(!line.is_empty() && !line.contains('\n'), "{}", line);
            let skewed_sync = coord.starts_with("sync") && coord.contains("skew");
            let split_small = coord == "split" || coord.starts_with("split:");
            prop_assert!(skewed_sync || split_small, "{kind} x{n} {coord} {traffic} refused: {line}");
            return Ok(());
        }
        let got = run(&s);
        if let Some(bound) = theory::worst_case(&s.limiters[0], limit, s.window) {
            prop_assert!(got.busiest <= bound, "{kind} x{n} {coord} {traffic}: busiest {} > bound {bound}", got.busiest);
        } else {
            // Only failing open has no bound.
            prop_assert!(coord.contains("fail=open"), "{kind} x{n} {coord}: no bound");
        }
        // The memory estimate's auditor holds the busiest window the run can have.
        let kept = s.memory().lanes[0].kept;
        prop_assert!(got.busiest <= kept.max(limit), "{kind} x{n} {coord} {traffic}: busiest {} > the estimate's {kept}", got.busiest);
        let fleet = got.fleet.as_ref().expect("a fleet's tallies");
        prop_assert_eq!(fleet.gateways.len(), n as usize);
        let offered: u64 = fleet.gateways.iter().map(|g| g.offered).sum();
        let admitted: u64 = fleet.gateways.iter().map(|g| g.admitted).sum();
        prop_assert_eq!(offered, got.decisions, "each decision at one gateway");
        prop_assert_eq!(admitted, got.admitted, "each admission at one gateway");
        for g in &fleet.gateways {
            prop_assert!(g.admitted <= g.offered && g.busiest <= g.admitted);
        }
        prop_assert!(fleet.room_instants <= got.admitted);
        // `simulate` counts every lane's wrong decisions.
        let (Some(wrong_admits), Some(wrong_rejects)) = (got.wrong_admits, got.wrong_rejects) else {
            return Err(TestCaseError::fail("wrong decisions not counted"));
        };
        prop_assert!(wrong_admits <= got.admitted);
        prop_assert!(wrong_rejects <= got.decisions - got.admitted);
        prop_assert!(got.busiest <= got.admitted);
        match &got.client {
            // A request is admitted once, or given up (out of tries, budget or time).
            Some(c) => prop_assert_eq!(got.admitted + c.gave_up, got.offered, "{}", traffic),
            None => prop_assert_eq!(got.offered, got.decisions),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(120))]

    /// A gateway's `Retry-After` is when its own view admits again if nothing else arrives:
    /// the same gateway admits a request then, and refuses one a µs before (under `local` and
    /// `split`, skewed clocks included, `central` at any round trip, and `lease`; a `sync`
    /// view's next snapshot may show it more or less, so it is held only by the laws above).
    #[test]
    fn a_gateways_retry_after_is_when_its_view_admits_again(
        kind in 0usize..KINDS.len(),
        gaps in proptest::collection::vec(prop_oneof![0u64..3, 0u64..300_000, 0u64..20_000_000], 1..400),
        n in 1u32..6,
        limit in 1u64..20,
        coord in prop_oneof![
            Just("local".to_owned()),
            Just("split".to_owned()),
            (1u64..30_000).prop_map(|s| format!("local:skew={s}ms")),
            (0u64..3_000).prop_map(|r| format!("central:rtt={r}ms")),
            (1u64..8, 1u64..60_000).prop_map(|(b, t)| format!("lease:size={b},ttl={t}ms")),
        ],
        route in route(),
    ) {
        let kind = KINDS[kind];
        let f = FleetSpec::parse(&n.to_string(), Some(route), Some(&coord)).expect("valid fleet");
        let s = scenario(kind, Some(f), "steady", limit, 0);
        if s.validate().is_err() {
            return Ok(());
        }
        let Ok(ratelab::Limiter::Fleet(mut fleet)) = s.build_limiter(&s.limiters[0], 0) else {
            panic!("a fleet");
        };
        let mut t = 0;
        for gap in gaps {
            t += gap;
            let g = fleet.pick();
            if fleet.decide_on(g, t).admitted() {
                continue;
            }
            let Some(r) = fleet.retry_after(t) else { continue };
            prop_assert!(r >= t);
            prop_assert!(fleet.clone().decide_on(g, r).admitted(), "{kind} {coord}: not admitted at its Retry-After {r} (t {t})");
            if r > t {
                prop_assert!(!fleet.clone().decide_on(g, r - 1).admitted(), "{kind} {coord}: admitted before its Retry-After {r}");
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(160))]

    /// The simulator decides a retrying client's tries in batches (every try due before the
    /// first pending one plus the shortest retry gap, through the open loop's chunked path);
    /// a trace decides them one at a time. Every number of the run is the same either way,
    /// for every limiter, behind a fleet or not, under every client policy and mix.
    #[test]
    fn a_retrying_clients_batches_decide_as_one_try_at_a_time(
        kind in 0usize..KINDS.len(),
        // One client as often as several: one essays' client has a path of its own.
        clients in prop_oneof![Just(1u32), 1u32..12],
        spike in 0u32..60,
        rate in 1u64..40,
        keys in prop_oneof![
            (1u32..13, 1u64..20).prop_map(|(t, e)| format!("tries={t},every={e}s")),
            policy(),
        ],
        mix in prop_oneof![Just(None), prop::option::of((1u32..6, policy()))],
        gateways in prop::option::of((2u32..5, prop_oneof![Just("local"), Just("split"), Just("central")])),
        limit in 1u64..30,
        seed in 0u64..1_000,
    ) {
        let mut traffic =
            format!("retry:rate={rate}/1min,spike={spike},at=30s,clients={clients},{keys}");
        if let Some((m, other)) = mix {
            traffic.push_str(&format!("+clients={m},{other}"));
        }
        let f = gateways.and_then(|(n, coord)| fleet(n, "round-robin", coord));
        let s = scenario(KINDS[kind], f, &traffic, limit, seed);
        if s.validate().is_err() {
            return Ok(());
        }
        let batched = run(&s);
        let (one_at_a_time, _) = ratelab::sim::trace(&s, 0, 0).expect("runs");
        prop_assert_eq!(batched, one_at_a_time, "{} {}", KINDS[kind], traffic);
        // Every kind in one run as well: the essays' one client's first tries are drawn once
        // for all its lanes. Each lane decides as it does traced alone.
        let mut all = s.clone();
        for other in KINDS {
            let mut spec = LimiterSpec::parse(other).expect("valid limiter");
            spec.fleet = s.limiters[0].fleet;
            all.limiters.push(spec);
        }
        if all.validate().is_err() {
            return Ok(());
        }
        let lanes = simulate_run(&all, 0).expect("runs");
        for (i, lane) in lanes.iter().enumerate() {
            let (alone, _) = ratelab::sim::trace(&all, i, 0).expect("runs");
            prop_assert_eq!(lane, &alone, "lane {} of {} {}", i, KINDS[kind], traffic);
        }
    }
}
