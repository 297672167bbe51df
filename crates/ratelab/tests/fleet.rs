//! Fleets of gateways against theory: the cases where a fleet must be a known limiter exactly,
//! the worst windows it must reach, and the bounds it must never pass.

mod common;

use common::flood_busiest;
use proptest::prelude::*;
use ratelab::sim::Scenario;
use ratelab::spec::{FleetSpec, LimiterSpec, TrafficSpec};
use ratelab::theory;
use ratelab::time::{MINUTE, MS};
use ratelab::traffic::FloodStart;
use ratelab::{Decide, Micros};

const KINDS: [&str; 16] = [
    "fixed-window",
    "sliding-log",
    "sliding-window-counter",
    "token-bucket:burst=10",
    "gcra:burst=30",
    "leaky-bucket:burst=5",
    "nginx:burst=5,nodelay",
    "haproxy:record-rejects=false",
    "express-rate-limit",
    "rate-limiter-flexible:points=7,duration=0.25",
    "go-rate:r=0.5,b=6",
    "redis-cell:max-burst=5,count=7,period=3",
    "vsthrottle",
    "limits:rate=7/3seconds",
    "limits:strategy=moving-window",
    "limits:rate=5/2seconds,strategy=sliding-window-counter",
];

fn spec(kind: &str, fleet: Option<(&str, Option<&str>, Option<&str>)>) -> LimiterSpec {
    let mut s = LimiterSpec::parse(kind).expect("valid spec");
    s.fleet = fleet.map(|(n, r, c)| FleetSpec::parse(n, r, c).expect("valid fleet"));
    s
}

fn scenario(limiters: Vec<LimiterSpec>, traffic: &str, limit: u64) -> Scenario {
    Scenario {
        limiters,
        traffic: TrafficSpec::parse(traffic).expect("valid traffic"),
        limit,
        window: MINUTE,
        duration: 20 * MINUTE,
        runs: 1,
        seed: 11,
    }
}

/// Each decision of `spec` in run 0 of `traffic`.
fn decisions(s: &Scenario, spec: &LimiterSpec) -> Vec<bool> {
    let mut l = s.build_limiter(spec, 0).expect("builds");
    s.arrivals(0).map(|t| l.admit(t)).collect()
}

#[test]
fn one_gateway_is_the_limiter_itself() {
    for kind in KINDS {
        let s = scenario(vec![], "page-loads:load=1.3", 60);
        let plain = decisions(&s, &spec(kind, None));
        for coord in [
            "local",
            "split",
            "sync:every=1s,delay=300ms",
            "central",
            "lease:size=1",
        ] {
            let fleet = spec(kind, Some(("1", Some("random"), Some(coord))));
            assert_eq!(decisions(&s, &fleet), plain, "{kind} --coord {coord}");
        }
    }
}

#[test]
fn a_central_store_without_a_round_trip_is_one_shared_limiter() {
    for kind in KINDS {
        let s = scenario(vec![], "big-bursts:load=1.5", 60);
        let plain = decisions(&s, &spec(kind, None));
        for route in ["round-robin", "random", "skewed:hot=0.9"] {
            let fleet = spec(kind, Some(("16", Some(route), Some("central"))));
            assert_eq!(decisions(&s, &fleet), plain, "{kind} --route {route}");
        }
    }
}

#[test]
fn split_with_random_routing_is_servers_k() {
    for kind in [
        "sliding-log",
        "token-bucket:burst=60",
        "fixed-window",
        "leaky-bucket:burst=6",
    ] {
        let s = scenario(vec![], "steady:load=1.1", 60);
        let servers = spec(
            &format!(
                "{kind}{}servers=3",
                if kind.contains(':') { "," } else { ":" }
            ),
            None,
        );
        let fleet = spec(kind, Some(("3", Some("random"), Some("split"))));
        assert_eq!(decisions(&s, &fleet), decisions(&s, &servers), "{kind}");
    }
}

#[test]
fn local_gateways_under_a_round_robin_flood_each_take_a_whole_limit() {
    for kind in [
        "sliding-log",
        "fixed-window",
        "token-bucket:burst=10",
        "gcra",
    ] {
        for n in ["2", "4", "7"] {
            let single = flood_busiest(vec![spec(kind, None)], 60, FloodStart::Worst)[0];
            let fleet = spec(kind, Some((n, Some("round-robin"), Some("local"))));
            let n: u64 = n.parse().expect("a number");
            // The single limiter's worst start, with room for each gateway's share before the
            // boundary: N · L ms before it.
            let got = flood_busiest(
                vec![fleet.clone()],
                60,
                FloodStart::Offset(MINUTE - n * 60 * MS),
            )[0];
            assert_eq!(got, n * single, "{kind} on {n} gateways");
            assert_eq!(theory::worst_case(&fleet, 60, MINUTE), Some(got), "{kind}");
        }
    }
}

#[test]
fn room_instants_are_what_one_shared_limiter_would_have_refused() {
    // A store that decides everything never admits what it would refuse.
    let s = scenario(
        vec![
            spec("sliding-log", Some(("8", Some("random"), Some("central")))),
            spec("sliding-log", Some(("8", Some("random"), Some("local")))),
            spec(
                "sliding-log",
                Some(("8", Some("random"), Some("sync:every=1s"))),
            ),
            spec(
                "sliding-log",
                Some(("8", Some("random"), Some("sync:every=10s"))),
            ),
        ],
        "steady:load=1.5",
        100,
    );
    s.validate().expect("valid");
    let r = ratelab::simulate(&s).expect("runs");
    let room: Vec<u64> = r
        .results
        .iter()
        .map(|x| x.room_instants.expect("a fleet"))
        .collect();
    assert_eq!(room[0], 0);
    // Each local gateway sees an eighth of the traffic and admits it all.
    assert!(room[1] > 1000, "{room:?}");
    // Syncing shrinks them, and syncing more often shrinks them more.
    assert!(room[2] < room[3] && room[3] < room[1], "{room:?}");
    // Room instants are admissions the literal rule disagrees with too, for the log.
    for x in &r.results {
        let wrong = (x.wrong_admits * x.decisions as f64).round() as u64;
        assert!(x.room_instants.expect("a fleet") <= wrong.max(x.room_instants.unwrap_or(0)));
        let gateways = x.gateways.as_ref().expect("per gateway");
        assert_eq!(gateways.len(), 8);
        assert_eq!(gateways.iter().map(|g| g.offered).sum::<u64>(), x.offered);
        assert_eq!(gateways.iter().map(|g| g.admitted).sum::<u64>(), x.admitted);
    }
}

/// The trailing-window recount of sorted times: the most in any `(t − W, t]`.
fn busiest(times: &[Micros], window: Micros) -> u64 {
    let (mut tail, mut most) = (0, 0);
    for (i, &t) in times.iter().enumerate() {
        while times[tail] + window <= t {
            tail += 1;
        }
        most = most.max((i + 1 - tail) as u64);
    }
    most
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// A synced or leasing fleet never passes its stated bound, whatever the arrivals: bursts
    /// at one instant, floods, long gaps, and gateways reached in any order.
    #[test]
    fn synced_and_leasing_fleets_stay_within_their_bounds(
        gaps in proptest::collection::vec(
            prop_oneof![0u64..3, 0u64..300_000, 0u64..12_000_000, 0u64..120_000_000],
            1..1_500,
        ),
        kind in 0usize..KINDS.len(),
        n in 2u32..9,
        every_ms in prop_oneof![1u64..50, 50u64..5_000, 5_000u64..120_000],
        delay_ms in prop_oneof![Just(0u64), 0u64..3_000, 0u64..90_000],
        lease in 1u64..12,
        route in prop_oneof![Just("round-robin"), Just("random"), Just("skewed:hot=0.8")],
    ) {
        let window = MINUTE;
        for coord in [
            format!("sync:every={every_ms}ms,delay={delay_ms}ms"),
            format!("lease:size={lease},ttl={every_ms}ms"),
        ] {
            let mut s = spec(KINDS[kind], None);
            s.fleet = Some(FleetSpec::parse(&n.to_string(), Some(route), Some(&coord)).expect("valid"));
            let sc = Scenario { limiters: vec![], window, limit: 12, ..Scenario::default() };
            let mut l = sc.build_limiter(&s, 0).expect("builds");
            let mut t = 0;
            let mut admitted = Vec::new();
            for &g in &gaps {
                t += g;
                if l.admit(t) {
                    admitted.push(t);
                }
            }
            let bound = theory::worst_case(&s, 12, window).expect("a bound");
            let got = busiest(&admitted, window);
            prop_assert!(got <= bound, "{} --gateways {n} --coord {coord}: {got} > {bound}", KINDS[kind]);
        }
    }
}

#[test]
fn a_round_trip_moves_every_decision_alike_and_an_outage_fails_as_configured() {
    // The sliding log does not depend on where time starts: a store reached 5 ms later
    // decides as the gateway would have, and the backend gets each admission 10 ms late.
    let s = scenario(vec![], "page-loads:load=1.4", 60);
    let plain = decisions(&s, &spec("sliding-log", None));
    let far = spec(
        "sliding-log",
        Some(("5", Some("random"), Some("central:rtt=10ms"))),
    );
    assert_eq!(decisions(&s, &far), plain);
    let mut l = s.build_limiter(&far, 0).expect("builds");
    assert!(l.delays());
    assert_eq!(l.decide(123_456), ratelab::Decision::Admit { at: 133_456 });
    // One lease of one permit per request is the store deciding every request.
    let single = spec(
        "gcra:burst=7",
        Some(("4", Some("random"), Some("lease:size=1"))),
    );
    assert_eq!(
        decisions(&s, &single),
        decisions(&s, &spec("gcra:burst=7", None))
    );
    // The store unreachable from the 5th to the 7th minute (requests reaching it then).
    let (from, to) = (5 * MINUTE, 7 * MINUTE);
    for (fail, expect_all) in [("open", true), ("closed", false)] {
        let coord = format!("central:rtt=2ms,outage=5min+2min,fail={fail}");
        let fleet = spec("sliding-log", Some(("3", Some("random"), Some(&coord))));
        let mut l = s.build_limiter(&fleet, 0).expect("builds");
        let times: Vec<Micros> = s.arrivals(0).collect();
        let mut inside = 0;
        for t in times {
            let ok = l.admit(t);
            let reach = t + MS;
            if reach >= from && reach < to {
                inside += 1;
                assert_eq!(ok, expect_all, "fail={fail} at {t}");
            }
        }
        assert!(inside > 100, "{inside} requests in the outage");
    }
    let open = spec(
        "sliding-log",
        Some(("3", None, Some("central:outage=5min+2min,fail=open"))),
    );
    assert_eq!(
        theory::worst_case(&open, 60, MINUTE),
        None,
        "failing open has no bound"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(120))]

    /// `sync` against its definition, recomputed from scratch at every decision: a gateway
    /// decides as a fresh limiter that has seen every admission before the last snapshot to
    /// have reached it (taken at `kΔ`, arrived at `kΔ + δ`) and its own admissions since.
    #[test]
    fn sync_is_its_definition(
        gaps in proptest::collection::vec(prop_oneof![0u64..3, 0u64..400_000, 0u64..4_000_000], 1..250),
        kind in prop_oneof![Just("sliding-log"), Just("gcra:burst=4"), Just("fixed-window"), Just("nginx:burst=3,nodelay"), Just("sliding-window-counter")],
        n in 1u32..6,
        every_ms in 1u64..3_000,
        delay_ms in 0u64..5_000,
    ) {
        use ratelab::limiter::Shared;
        let sc = Scenario { limiters: vec![], window: MINUTE, limit: 6, ..Scenario::default() };
        let mut s = spec(kind, None);
        let plain = sc.build_limiter(&s, 0).expect("builds");
        let coord = format!("sync:every={every_ms}ms,delay={delay_ms}ms");
        s.fleet = Some(FleetSpec::parse(&n.to_string(), Some("round-robin"), Some(&coord)).expect("valid"));
        let mut fleet = sc.build_limiter(&s, 0).expect("builds");
        let (every, delay) = (every_ms * MS, delay_ms * MS);
        let mut log: Vec<(Micros, usize)> = Vec::new();
        let mut t = 0;
        for (i, &g) in gaps.iter().enumerate() {
            t += g;
            let gw = i % n as usize;
            // The last snapshot to have arrived: instant kΔ with kΔ + δ ≤ t (0: none yet).
            let k = t.saturating_sub(delay) / every;
            let instant = if t >= delay { k * every } else { 0 };
            let mut fresh = plain.clone();
            for &(a, h) in &log {
                if a < instant || h == gw {
                    fresh.force(a);
                }
            }
            let want = fresh.peek(t);
            let got = fleet.admit(t);
            prop_assert_eq!(got, want, "request {} at {} on gateway {}", i, t, gw);
            if got {
                log.push((t, gw));
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Sliding logs' `sync` views are counted, not built from snapshots: decision for decision,
    /// with the same room instants and each gateway's tallies, a counted fleet is the fleet
    /// whose views are built (each snapshot copied, its gateway's admissions replayed).
    #[test]
    fn counted_views_decide_as_built_ones(
        gaps in proptest::collection::vec(prop_oneof![0u64..3, 0u64..400_000, 0u64..4_000_000], 1..600),
        n in 1u32..9,
        limit in 1u64..12,
        every_ms in 1u64..90_000,
        delay_ms in 0u64..20_000,
        route in prop_oneof![Just("round-robin"), Just("random"), Just("skewed:hot=0.7")],
    ) {
        let sc = Scenario { limiters: vec![], window: MINUTE, limit, ..Scenario::default() };
        let coord = format!("sync:every={every_ms}ms,delay={delay_ms}ms");
        let s = spec("sliding-log", Some((&n.to_string(), Some(route), Some(&coord))));
        let fleet = |counted: bool| match sc.build_limiter(&s, 0).expect("builds") {
            ratelab::Limiter::Fleet(mut f) => {
                if !counted {
                    f.build_views();
                }
                f
            }
            _ => unreachable!("a fleet"),
        };
        let (mut counted, mut built) = (fleet(true), fleet(false));
        let mut t = 0;
        for (i, &g) in gaps.iter().enumerate() {
            t += g;
            prop_assert_eq!(counted.admit(t), built.admit(t), "request {} at {}", i, t);
        }
        prop_assert_eq!(counted.stats(), built.stats());
    }
}

/// The router `ratelab probe` sends with is the fleet's: for the scenario's seed and run 0, a
/// `Router` picks, request by request, the gateway the fleet sends each arrival to, so a
/// fleet deciding every request at the gateway the router picked (`decide_on`, as a probe's
/// model does) decides exactly as the fleet routing by itself, under every route.
#[test]
fn the_probes_router_is_the_fleets() {
    use ratelab::limiter::{Limiter, Router};
    use ratelab::rng::{Rng, Stream};
    for route in ["round-robin", "random", "skewed:hot=0.6"] {
        for coord in ["local", "central", "sync:every=1s,delay=300ms"] {
            let fleet = spec("sliding-log", Some(("3", Some(route), Some(coord))));
            let s = scenario(vec![fleet.clone()], "page-loads:load=1.3", 60);
            let f = fleet.fleet.expect("a fleet");
            let mut router = Router::new(f.route, 3, Rng::new(s.seed, 0, Stream::Routing));
            let (mut routed, mut forced) = (
                s.build_limiter(&fleet, 0).expect("builds"),
                s.build_limiter(&fleet, 0).expect("builds"),
            );
            let Limiter::Fleet(forced_fleet) = &mut forced else {
                panic!("a fleet")
            };
            let mut picks = [0u64; 3];
            for t in s.arrivals(0) {
                let g = router.pick();
                picks[g] += 1;
                assert_eq!(
                    routed.decide(t),
                    forced_fleet.decide_on(g, t),
                    "{route} {coord} at {t}"
                );
            }
            let Limiter::Fleet(routed_fleet) = &routed else {
                panic!("a fleet")
            };
            let stats = routed_fleet.stats();
            assert_eq!(stats, forced_fleet.stats(), "{route} {coord}");
            let offered: Vec<u64> = stats.gateways.iter().map(|g| g.offered).collect();
            assert_eq!(offered, picks, "{route} {coord}");
            if route != "round-robin" {
                assert!(picks.iter().all(|&p| p > 0), "{route}: {picks:?}");
            }
        }
    }
}

/// What each gateway believed against what the fleet decided: for sliding logs, a gateway
/// admits exactly when it believes the window holds fewer than `L`, and an admission is a room
/// instant exactly when the window truly held `L` or more; and the trace's decisions and room
/// instants are the simulator's own.
fn check_gateway_trace(s: &Scenario) {
    let g = ratelab::sim::gateway_trace(s, 0, 0).expect("a fleet's trace");
    let (stats, trace) = ratelab::sim::trace(s, 0, 0).expect("runs");
    assert_eq!(g.times, trace.times);
    assert_eq!(g.admitted, trace.admitted);
    let fleet = stats.fleet.expect("a fleet");
    assert_eq!(
        g.room.iter().filter(|&&r| r).count() as u64,
        fleet.room_instants
    );
    for (k, gw) in fleet.gateways.iter().enumerate() {
        let mine = g.gateway.iter().filter(|&&x| x as usize == k).count() as u64;
        assert_eq!(mine, gw.offered, "gateway {k}");
    }
    let l = s.limit;
    for i in 0..g.times.len() {
        let what = || {
            format!(
                "decision {i} at {} µs: {:?}",
                g.times[i], s.limiters[0].fleet
            )
        };
        assert_eq!(g.admitted[i], g.believed[i] < l, "{}", what());
        assert_eq!(g.room[i], g.admitted[i] && g.global[i] >= l, "{}", what());
        // The views at any instant (the page's playhead), read at a decision's own: that
        // decision's counts, when no other decision shares its instant.
        if i > 0 && g.times[i - 1] == g.times[i] {
            continue;
        }
        let fleet = s.limiters[0].fleet.expect("a fleet");
        let n = fleet.gateways as usize;
        let (truth, views) = g.views_at(fleet.coord, s.window, n, g.times[i]);
        assert_eq!(truth, g.global[i], "{}", what());
        assert_eq!(views.len(), n);
        assert_eq!(views[g.gateway[i] as usize], g.believed[i], "{}", what());
    }
}

#[test]
fn each_gateway_admits_what_it_believes_has_room_and_room_instants_are_true_counts_at_l() {
    for (n, route, coord) in [
        ("1", "round-robin", "local"),
        ("4", "round-robin", "local"),
        ("8", "random", "local"),
        ("4", "random", "central"),
        ("1", "random", "sync:every=1s,delay=200ms"),
        ("8", "random", "sync:every=1s,delay=100ms"),
        ("8", "round-robin", "sync:every=10s"),
        ("3", "skewed:hot=0.7", "sync:every=250ms,delay=2s"),
        ("16", "random", "sync:every=2min,delay=30s"),
        ("4", "round-robin", "local:skew=30s"),
    ] {
        for traffic in ["steady:load=1.5", "page-loads:load=0.9"] {
            let s = scenario(
                vec![spec("sliding-log", Some((n, Some(route), Some(coord))))],
                traffic,
                60,
            );
            check_gateway_trace(&s);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    #[test]
    fn a_sync_fleets_gateways_believe_what_their_views_hold(
        n in 1u32..=12,
        every_ms in 1u64..=90_000,
        delay_ms in 0u64..=30_000,
        random in any::<bool>(),
        load in 0.5f64..3.0,
        limit in 1u64..=120,
        seed in 0u64..1000,
    ) {
        let coord = format!("sync:every={every_ms}ms,delay={delay_ms}ms");
        let route = if random { "random" } else { "round-robin" };
        let mut s = scenario(
            vec![spec("sliding-log", Some((&n.to_string(), Some(route), Some(&coord))))],
            &format!("steady:load={load}"),
            limit,
        );
        s.duration = 5 * MINUTE;
        s.seed = seed;
        check_gateway_trace(&s);
    }
}

#[test]
fn a_gateway_trace_refuses_what_it_cannot_show() {
    let plain = scenario(vec![spec("sliding-log", None)], "steady:load=1", 60);
    let e = ratelab::sim::gateway_trace(&plain, 0, 0).expect_err("no fleet");
    assert!(e.to_string().contains("--gateways"), "{e}");
    let lease = scenario(
        vec![spec("sliding-log", Some(("4", None, Some("lease:size=5"))))],
        "steady:load=1",
        60,
    );
    let e = ratelab::sim::gateway_trace(&lease, 0, 0).expect_err("a lease");
    assert!(e.to_string().contains("sync or central"), "{e}");
    let retry = scenario(
        vec![spec("sliding-log", Some(("4", None, Some("local"))))],
        "retry:rate=25/1min,spike=200,at=5min,tries=5",
        60,
    );
    let e = ratelab::sim::gateway_trace(&retry, 0, 0).expect_err("a retrying client");
    assert!(e.to_string().contains("does not retry"), "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Clock skew under `local` and `split`: each gateway's limiter runs on its own clock. A
    /// limiter that only compares instants (sliding log, token bucket, GCRA, the leaky bucket
    /// as a meter) decides exactly as with the clocks agreeing; and the stated bound, which a
    /// skew does not move, holds for every limiter.
    #[test]
    fn skewed_clocks_change_only_what_reads_the_clock(
        gaps in proptest::collection::vec(prop_oneof![0u64..3, 0u64..400_000, 0u64..12_000_000], 1..800),
        kind in 0usize..KINDS.len(),
        n in prop_oneof![Just(1u32), Just(2u32), Just(3u32), Just(4u32), Just(6u32), Just(12u32)],
        skew_ms in 1u64..200_000,
        split in any::<bool>(),
        route in prop_oneof![Just("round-robin"), Just("random"), Just("skewed:hot=0.8")],
    ) {
        let sc = Scenario { limiters: vec![], window: MINUTE, limit: 12, ..Scenario::default() };
        let base = if split { "split" } else { "local" };
        let build = |coord: &str| {
            let mut s = spec(KINDS[kind], None);
            s.fleet = Some(FleetSpec::parse(&n.to_string(), Some(route), Some(coord)).expect("valid"));
            s
        };
        let skewed = build(&format!("{base}:skew={skew_ms}ms"));
        let Ok(mut a) = sc.build_limiter(&skewed, 0) else {
            // A split the burst does not allow (nginx's 5, the leaky bucket's 5).
            prop_assume!(false);
            unreachable!()
        };
        let mut b = sc.build_limiter(&build(base), 0).expect("builds as the skewed one did");
        // Local, in turn: gateway g is the plain limiter on a clock g·skew/(N − 1) ahead.
        let offsets = skewed.fleet.expect("a fleet").offsets();
        let mut alone: Vec<_> = (0..n).map(|_| sc.build_limiter(&spec(KINDS[kind], None), 0).expect("builds")).collect();
        let mut t = 0;
        let mut admitted = Vec::new();
        let mut differ = false;
        for (i, &g) in gaps.iter().enumerate() {
            t += g;
            let ok = a.admit(t);
            differ |= ok != b.admit(t);
            if ok {
                admitted.push(t);
            }
            if !split && route == "round-robin" {
                let gw = i % n as usize;
                prop_assert_eq!(ok, alone[gw].admit(t + offsets[gw]), "request {} at {} on gateway {}", i, t, gw);
            }
        }
        let moves = ["fixed-window", "sliding-window-counter", "nginx:burst=5,nodelay", "haproxy:record-rejects=false", "limits:rate=5/2seconds,strategy=sliding-window-counter"];
        if !moves.contains(&KINDS[kind]) {
            prop_assert!(!differ, "{} --coord {base}:skew={skew_ms}ms decided otherwise", KINDS[kind]);
        }
        let bound = theory::worst_case(&skewed, 12, MINUTE).expect("a bound");
        prop_assert_eq!(theory::worst_case(&build(base), 12, MINUTE), Some(bound));
        let got = busiest(&admitted, MINUTE);
        prop_assert!(got <= bound, "{} --coord {base}:skew={skew_ms}ms: {got} > {bound}", KINDS[kind]);
    }
}

/// Skew moves each gateway's fixed window: a boundary burst timed on the backend's clock
/// finds the window just begun only at the gateway whose clock agrees. A split of 60 over 4
/// gateways (15 each a minute), round robin, clocks 0, 10, 20 and 30 s ahead: 60 requests just
/// before the minute and 60 just after. With the clocks agreeing, every gateway's window
/// begins between the two bursts and all 120 pass; skewed, gateways 1 to 3 are already in
/// their next window for both bursts and pass 15 each, gateway 0 passes 15 of each: 75.
#[test]
fn skew_moves_each_gateways_fixed_window() {
    let burst = |coord: &str| {
        let sc = Scenario {
            limiters: vec![],
            window: MINUTE,
            limit: 60,
            ..Scenario::default()
        };
        let s = spec(
            "fixed-window",
            Some(("4", Some("round-robin"), Some(coord))),
        );
        let mut l = sc.build_limiter(&s, 0).expect("builds");
        let before = (0..60).filter(|_| l.admit(MINUTE - 1)).count();
        let after = (0..60).filter(|_| l.admit(MINUTE + 1)).count();
        (before, after)
    };
    assert_eq!(burst("split"), (60, 60));
    assert_eq!(burst("split:skew=30s"), (60, 15));
    // Local: each gateway alone takes its whole 60 in its window, so the 15 requests each
    // gets before the minute all pass, and after it too, skewed or not.
    assert_eq!(burst("local:skew=30s"), (60, 60));
}

/// A bucket keeps time scaled by its rate's count in 64 bits; a gateway whose clock is ahead
/// reads past the run by its skew, so the check that refuses a rate too fine for the run counts
/// the skew too (an hour at most).
#[test]
fn a_skew_counts_in_the_check_of_a_buckets_scaled_time() {
    let s = |coord: &str| {
        let mut s = scenario(
            vec![spec("gcra:rate=1000000/1s", Some(("2", None, Some(coord))))],
            "steady:load=1",
            100,
        );
        // Just under 2^64 µs / 10^6: the run alone fits, an hour more does not.
        s.duration = 307_400 * MINUTE;
        s
    };
    let plain = s("split");
    assert_eq!(plain.build_limiter(&plain.limiters[0], 0).err(), None);
    let skewed = s("split:skew=1h");
    let e = skewed
        .build_limiter(&skewed.limiters[0], 0)
        .expect_err("an hour past the run overflows");
    assert!(e.to_string().contains("stays below 1.8e19"), "{e}");
    let e = FleetSpec::parse("2", None, Some("split:skew=61min")).expect_err("over an hour");
    assert!(e.to_string().contains("from 0 to 1h"), "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A room instant is an admission that one limiter holding every admission before it would
    /// have refused, for every limiter a fleet takes: recomputed here with a peek and a record
    /// at each admission (the fleet's own limiter admits in one call where it can).
    #[test]
    fn room_instants_are_the_shared_limiters_refusals_for_every_limiter(
        gaps in proptest::collection::vec(prop_oneof![0u64..3, 0u64..400_000, 0u64..4_000_000], 1..600),
        kind in 0usize..KINDS.len(),
        n in 1u32..7,
        coord in prop_oneof![Just("local"), Just("sync:every=2s,delay=300ms"), Just("lease:size=3,ttl=5s")],
    ) {
        use ratelab::limiter::Shared;
        let sc = Scenario { limiters: vec![], window: MINUTE, limit: 12, ..Scenario::default() };
        let s = spec(KINDS[kind], Some((&n.to_string(), Some("random"), Some(coord))));
        let ratelab::Limiter::Fleet(mut fleet) = sc.build_limiter(&s, 0).expect("builds") else {
            unreachable!("a fleet")
        };
        // A fleet of token buckets is kept as the GCRA it equals.
        let alone = KINDS[kind].replace("token-bucket", "gcra");
        let mut shared = sc.build_limiter(&spec(&alone, None), 0).expect("builds");
        let mut t = 0;
        for (i, &gap) in gaps.iter().enumerate() {
            t += gap;
            let g = fleet.pick();
            let (decision, room) = fleet.decide_traced(g, t);
            if decision.admitted() {
                let want = !shared.peek(t);
                shared.force(t);
                prop_assert_eq!(room, want, "request {} at {} on gateway {}", i, t, g);
            } else {
                prop_assert!(!room);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(240))]

    /// `sync` with the clocks skewed, against its definition recomputed at every decision:
    /// each admission is stamped by the clock of the gateway that made it (`a + o_h`), and
    /// gateway `g` at backend time `t` counts, among every other gateway's admissions before
    /// its last snapshot and all of its own, a sliding log the stamps later than `T − W` (`T =
    /// t + o_g`), a fixed window those in the calendar window of `T`, and a sliding-window
    /// counter those and the window before's, weighted by how much of it is still within `W`
    /// of `T`; it admits while that is under `L`. And the fleet stays within its stated bound,
    /// `local`'s.
    #[test]
    fn a_skewed_sync_fleet_is_its_definition(
        kind in 0usize..3,
        gaps in proptest::collection::vec(prop_oneof![0u64..3, 0u64..400_000, 0u64..4_000_000], 1..400),
        n in 1u32..6,
        every_ms in 1u64..3_000,
        delay_ms in 0u64..5_000,
        // (At least a millisecond: without a skew, `sync` has its own, tighter bound.)
        skew_ms in prop_oneof![1u64..2_000, 1u64..90_000, 1u64..3_600_000],
        limit in 1u64..9,
    ) {
        let window = MINUTE;
        let sc = Scenario { limiters: vec![], window, limit, ..Scenario::default() };
        let coord = format!("sync:every={every_ms}ms,delay={delay_ms}ms,skew={skew_ms}ms");
        let name = ["sliding-log", "fixed-window", "sliding-window-counter"][kind];
        let s = spec(name, Some((&n.to_string(), Some("round-robin"), Some(&coord))));
        let offsets = s.fleet.expect("a fleet").offsets();
        let mut fleet = sc.build_limiter(&s, 0).expect("builds");
        let (every, delay) = (every_ms * MS, delay_ms * MS);
        let mut log: Vec<(Micros, usize)> = Vec::new();
        let mut t = 0;
        for (i, &gap) in gaps.iter().enumerate() {
            t += gap;
            let g = i % n as usize;
            let instant = if t >= delay { (t - delay) / every * every } else { 0 };
            let now = t + offsets[g];
            // The stamps gateway `g` knows of, those `within` a span of its clock.
            let known = |within: &dyn Fn(Micros) -> bool| {
                log.iter()
                    .filter(|&&(a, h)| (a < instant || h == g) && within(a + offsets[h]))
                    .count() as u128
            };
            let (w, l) = (u128::from(window), u128::from(limit));
            let k = now / window;
            let open = match kind {
                0 => known(&|x| x + window > now) < l,
                1 => known(&|x| x / window == k) < l,
                _ => {
                    let previous = if k > 0 { known(&|x| x / window == k - 1) } else { 0 };
                    let left = u128::from(window - now % window);
                    previous * left + known(&|x| x / window == k) * w < l * w
                }
            };
            let got = fleet.admit(t);
            prop_assert_eq!(got, open, "{} request {} at {} on gateway {}", name, i, t, g);
            if got {
                log.push((t, g));
            }
        }
        let admitted: Vec<Micros> = log.iter().map(|&(a, _)| a).collect();
        let bound = theory::worst_case(&s, limit, window).expect("a bound");
        let single = if kind == 0 { limit } else { 2 * limit };
        prop_assert_eq!(bound, u64::from(n) * single, "local's");
        prop_assert!(busiest(&admitted, window) <= bound);
    }
}

#[test]
fn a_skew_under_sync_is_for_logs_and_windows_and_their_traces_keep_clocks_that_agree() {
    let sc = scenario(vec![], "steady:load=1", 60);
    for kind in ["gcra", "token-bucket:burst=10", "leaky-bucket"] {
        let s = spec(kind, Some(("4", None, Some("sync:every=1s,skew=2s"))));
        let e = sc.build_limiter(&s, 0).expect_err("only logs and windows");
        assert!(
            e.to_string()
                .contains("a sliding log, a fixed window or a sliding-window counter for --coord sync with a skew"),
            "{e}"
        );
    }
    // A skew moves each synced fixed window's boundary: with the gateways' windows no longer
    // starting together, a gateway's window holds the others' admissions from two of theirs,
    // and a steady client at 1.5 L to 4 gateways synced every second finds room the backend
    // does not have about seven times as often (16 room instants with the clocks agreeing, 111
    // with them 10 s apart each; held to more than three times) and gets more through.
    let run = |coord: &str| {
        let s = scenario(
            vec![spec(
                "fixed-window",
                Some(("4", Some("random"), Some(coord))),
            )],
            "steady:load=1.5",
            100,
        );
        let r = ratelab::simulate(&s).expect("runs").results.remove(0);
        (r.room_instants.expect("a fleet"), r.admitted)
    };
    let (agree, apart) = (run("sync:every=1s"), run("sync:every=1s,skew=30s"));
    assert!(
        apart.0 > 3 * agree.0 && apart.1 > agree.1,
        "{agree:?} against {apart:?}"
    );
    let skewed = scenario(
        vec![spec(
            "sliding-log",
            Some(("4", None, Some("sync:every=1s,skew=2s"))),
        )],
        "steady:load=1",
        60,
    );
    let e = ratelab::sim::gateway_trace(&skewed, 0, 0).expect_err("stamps");
    assert!(e.to_string().contains("clocks that agree"), "{e}");
    // Skew makes a synced fleet of logs let more through: gateways ahead see the others'
    // admissions as older (here 3 of 4 clocks are 20 s to a minute ahead).
    let run = |coord: &str| {
        let s = scenario(
            vec![spec(
                "sliding-log",
                Some(("4", Some("random"), Some(coord))),
            )],
            "steady:load=1.5",
            100,
        );
        ratelab::simulate(&s).expect("runs").results[0].busiest_window_max
    };
    let (agree, apart) = (run("sync:every=1s"), run("sync:every=1s,skew=1min"));
    assert!(apart >= agree + 10, "{agree} against {apart}");
}

/// A skewed synced fleet keeps each gateway's stamps until the backend's clock has seen them
/// leave, a window and that gateway's lead: the memory check counts them (never more than the
/// run's arrivals: `memory_peak.rs` holds the estimate to the allocator's count).
#[test]
fn a_skewed_sync_fleets_stamps_count_in_its_memory() {
    let fleet = |coord: &str| {
        let mut s = scenario(
            vec![spec(
                "sliding-log",
                Some(("64", Some("random"), Some(coord))),
            )],
            "steady:load=1",
            1000,
        );
        s.window = ratelab::time::SECOND;
        s.runs = 8;
        s
    };
    let plain = fleet("sync:every=1s");
    let skewed = fleet("sync:every=1s,skew=1h");
    assert_eq!(plain.validate(), Ok(()));
    assert_eq!(skewed.validate(), Ok(()));
    let bytes = |s: &Scenario| s.memory().per_run();
    // Gateway g of 64 reads g/63 of an hour ahead and keeps its stamps that long and a
    // window: those of the whole 20-minute run for the 43 an hour's third ahead or more, a
    // share of it for the rest. At least 8 bytes a stamp, for the run's mean arrivals.
    let offsets = skewed.limiters[0].fleet.expect("a fleet").offsets();
    let held: f64 = offsets
        .iter()
        .map(|&o| ((skewed.window + o) as f64 / skewed.duration as f64).min(1.0))
        .sum::<f64>()
        / offsets.len() as f64;
    assert!(held > 0.8, "{held}");
    let stamps = held * skewed.expected_arrivals();
    assert!(
        bytes(&skewed) as f64 >= bytes(&plain) as f64 + 8.0 * stamps,
        "{} vs {} ({stamps} stamps held)",
        bytes(&skewed),
        bytes(&plain)
    );
}

/// A library's limiter split across gateways with its own parameters given keeps them whole
/// on each gateway (`count=`, `limit=`, `points=`), so the split fleet's bound is each
/// gateway's: found by the laws test as a 3-way split of `CL.THROTTLE k 3 30 60` admitting 38
/// in a minute against a bound of 33.
#[test]
fn a_librarys_own_limit_is_each_split_gateways_whole() {
    let sc = Scenario {
        limiters: vec![],
        window: MINUTE,
        limit: 100,
        ..Scenario::default()
    };
    for (kind, one) in [
        ("redis-cell:max-burst=3,count=30,period=60", 33),
        ("vsthrottle:limit=15,period=1min", 29),
        ("rate-limiter-flexible:points=5,duration=60", 10),
    ] {
        let s = spec(kind, Some(("3", Some("round-robin"), Some("split"))));
        assert_eq!(
            theory::worst_case(&s, sc.limit, sc.window),
            Some(3 * one),
            "{kind}"
        );
    }
}
