//! Same scenario and seed, same report, natively and in WebAssembly.
//!
//! Both targets compute the digests of a fixed set of scenarios and compare them with the
//! golden file; natively with `cargo test`, in headless Chromium with
//! `cargo test --target wasm32-unknown-unknown` (see `cargo xtask test`). If the model changes
//! on purpose, `RATELAB_BLESS=1 cargo test -p ratelab --test determinism` rewrites the file
//! natively, and the wasm run must then agree with it.

use ratelab::sim::{simulate, Scenario};
use ratelab::spec::{LimiterKind, LimiterSpec, TrafficSpec};
use ratelab::time::MINUTE;

#[cfg(target_arch = "wasm32")]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

const GOLDEN: &str = include_str!("golden/digests.txt");

/// Every limiter against every kind of traffic, small enough for a debug wasm build.
fn scenarios() -> Vec<(String, Scenario)> {
    let mut limiters: Vec<LimiterSpec> = LimiterKind::ALL
        .iter()
        .map(|&k| LimiterSpec::of(k))
        .collect();
    for extra in [
        "sliding-log:record-rejects=true",
        "sliding-window-counter:record-rejects=true",
        "token-bucket:burst=10,servers=5",
        "leaky-bucket:burst=5,mode=queue",
    ] {
        limiters.push(LimiterSpec::parse(extra).expect("valid spec"));
    }
    let traffic = [
        "steady:load=0.9",
        "small-bursts:load=0.8",
        "page-loads:load=0.8",
        "big-bursts:load=1.0",
        "on-off:load=0.5",
        "flood:start=worst",
        "flood:start=30s",
        "boundary-burst",
        "retry:rate=30/1min,spike=200,at=5min,tries=8,every=1s",
        // Every part of a client's policy, and a fleet of them (jitter draws, budgets and
        // `Retry-After` searches must agree across targets too).
        "retry:rate=3/1min,spike=20,at=5min,tries=6,policy=exponential,base=1s,factor=1.5,cap=30s,jitter=full,budget=50%,retry-after=honor,clients=10",
        "retry:rate=3/1min,spike=20,at=5min,tries=6,policy=exponential,base=1s,cap=30s,jitter=decorrelated,clients=10",
        "retry:rate=3/1min,spike=20,at=5min,tries=6,every=2s,jitter=equal,retry-after=honor,clients=10",
    ];
    traffic
        .iter()
        .map(|t| {
            let scenario = Scenario {
                limiters: limiters.clone(),
                traffic: TrafficSpec::parse(t).expect("valid traffic"),
                limit: 100,
                window: MINUTE,
                duration: 30 * MINUTE,
                runs: 2,
                seed: 42,
            };
            (t.to_string(), scenario)
        })
        .collect()
}

fn digests() -> String {
    scenarios()
        .into_iter()
        .map(|(name, s)| {
            format!(
                "{name} {:016x}\n",
                simulate(&s).expect("valid scenario").digest()
            )
        })
        .collect()
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
fn reports_match_the_golden_digests() {
    let got = digests();
    #[cfg(not(target_arch = "wasm32"))]
    if std::env::var_os("RATELAB_BLESS").is_some() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/digests.txt");
        std::fs::write(path, &got).expect("write golden file");
        return;
    }
    assert_eq!(
        got, GOLDEN,
        "report digests differ from tests/golden/digests.txt"
    );
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
fn a_different_seed_gives_a_different_digest() {
    let (_, mut s) = scenarios().swap_remove(2);
    let a = simulate(&s).expect("valid").digest();
    s.seed += 1;
    assert_ne!(a, simulate(&s).expect("valid").digest());
}
