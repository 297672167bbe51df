//! The guard on bucket rates: `Scenario::build_limiter` accepts a token bucket, GCRA or leaky
//! bucket only when its scaled time (`horizon × rate count + (burst + 1) × rate period`, in
//! 64 bits, with `period × servers` too) cannot overflow, because the buckets' hot path adds and
//! multiplies without checks. Here the boundary is found with 128-bit arithmetic, the largest
//! accepted rate is run to the end of the horizon with exact expectations (so an overflow shows
//! as a wrong count in release builds and a panic in the checked `ci` profile), and one µs more
//! of period is refused.

use ratelab::sim::Scenario;
use ratelab::spec::{LimiterSpec, TrafficSpec, MAX_BURST};
use ratelab::time::MINUTE;
use ratelab::Decide;

/// 100,000 minutes: the longest accepted run.
const HORIZON: u64 = 100_000 * MINUTE;
/// The largest accepted rate count.
const COUNT: u64 = 1_000_000;

fn scenario() -> Scenario {
    Scenario {
        limiters: Vec::new(),
        traffic: TrafficSpec::Steady { load: 0.8 },
        limit: 100,
        window: MINUTE,
        duration: HORIZON,
        runs: 1,
        seed: 1,
    }
}

/// Does `horizon × count + (burst + 1) × per` fit in 64 bits (and `per × servers`)?
fn fits(burst: u64, per: u64, servers: u64) -> bool {
    let scaled = u128::from(HORIZON) * u128::from(COUNT) + u128::from(burst + 1) * u128::from(per);
    scaled <= u128::from(u64::MAX) && u128::from(per) * u128::from(servers) <= u128::from(u64::MAX)
}

/// The largest period (µs) that fits with this burst.
fn largest_period(burst: u64) -> u64 {
    let room = u128::from(u64::MAX) - u128::from(HORIZON) * u128::from(COUNT);
    u64::try_from(room / u128::from(burst + 1)).expect("fits")
}

#[test]
fn the_largest_accepted_bucket_rate_runs_to_the_horizon_exactly() {
    let s = scenario();
    assert_eq!(s.horizon(), HORIZON);
    // The leaky bucket's burst is one less than the token bucket it equals (as a meter).
    let b = MAX_BURST - 1;
    for (kind, burst) in [("token-bucket", b), ("gcra", b), ("leaky-bucket", b - 1)] {
        let tokens = if kind == "leaky-bucket" {
            burst + 1
        } else {
            burst
        };
        let per = largest_period(burst);
        assert!(fits(burst, per, 1) && !fits(burst, per + 1, 1));
        let spec = |per: u64| {
            LimiterSpec::parse(&format!("{kind}:burst={burst},rate={COUNT}/{per}us"))
                .expect("a valid spec")
        };
        assert!(
            s.build_limiter(&spec(per + 1), 0).is_err(),
            "{kind}: a period of {} µs overflows and must be refused",
            per + 1
        );
        let mut limiter = s
            .build_limiter(&spec(per), 0)
            .expect("the largest period fits");
        // Empty the full bucket at 0, then wait until the horizon: it refills
        // ⌊horizon × count / per⌋ whole tokens (fewer than the burst here), no more, no less.
        let mut admitted = 0;
        while limiter.admit(0) {
            admitted += 1;
        }
        assert_eq!(admitted, tokens, "{kind}: starts full");
        let refilled = u128::from(HORIZON) * u128::from(COUNT) / u128::from(per);
        let refilled = u64::try_from(refilled).expect("small");
        assert!(refilled > 0 && refilled < tokens, "{refilled}");
        let t = HORIZON - 1;
        let mut again = 0;
        while limiter.decide(t).admitted() {
            again += 1;
        }
        // At HORIZON − 1 the refill is ⌊(horizon − 1) × count / per⌋.
        let want = (u128::from(t) * u128::from(COUNT) / u128::from(per)) as u64;
        assert_eq!(again, want, "{kind}: tokens refilled by the horizon");
    }
}

#[test]
fn a_split_bucket_s_period_times_servers_must_fit_too() {
    let s = Scenario {
        duration: MINUTE,
        ..scenario()
    };
    // Each of K servers refills at count per (period × K). A leaky bucket of burst 0 keeps the
    // scaled time small, so that product is the binding limit: (2^64 − 1)/4 µs fits four
    // servers, one µs more does not.
    let spec = |per: u64| {
        LimiterSpec::parse(&format!("leaky-bucket:burst=0,rate=1/{per}us,servers=4"))
            .expect("a valid spec")
    };
    let largest = u64::MAX / 4;
    assert!(fits(0, largest, 4) && !fits(0, largest + 1, 4));
    assert!(
        s.build_limiter(&spec(largest + 1), 0).is_err(),
        "4 × 2^62 overflows"
    );
    let mut limiter = s
        .build_limiter(&spec(largest), 0)
        .expect("4 × ((2^64 − 1)/4) fits");
    // Each server's meter admits one request and refills almost never: at most 4 in all.
    let admitted = (0..100)
        .filter(|&i| limiter.admit(i * MINUTE / 100))
        .count();
    assert!((1..=4).contains(&admitted), "{admitted}");
}
