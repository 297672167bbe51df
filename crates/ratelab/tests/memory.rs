//! Memory is bounded by design: what a run keeps does not grow with the arrivals of a window
//! or the requests of a run, and a scenario whose state would still pass the budget is refused
//! before it runs, in one line saying why and what would fit.

use ratelab::sim::{simulate, trace, Scenario};
use ratelab::spec::{LimiterSpec, TrafficSpec};
use ratelab::time::{Micros, MINUTE, SECOND};

fn scenario(limiters: &[&str], traffic: &str, limit: u64, window: Micros) -> Scenario {
    Scenario {
        limiters: limiters
            .iter()
            .map(|l| LimiterSpec::parse(l).expect("valid limiter"))
            .collect(),
        traffic: TrafficSpec::parse(traffic).expect("valid traffic"),
        limit,
        window,
        duration: 60 * MINUTE,
        runs: 3,
        seed: 7,
    }
}

/// The exact nearest-rank quantile of every queueing delay of every run, from the traces.
fn exact_delays(s: &Scenario) -> Vec<Micros> {
    let mut delays = Vec::new();
    for run in 0..s.runs {
        let (_, t) = trace(s, 0, run).expect("valid scenario");
        for i in 0..t.times.len() {
            if t.admitted[i] {
                delays.push(t.released[i] - t.times[i]);
            }
        }
    }
    delays.sort_unstable();
    delays
}

fn nearest_rank(sorted: &[Micros], q: f64) -> Micros {
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

#[test]
fn delay_quantiles_are_the_exact_ones_to_the_histograms_precision() {
    // Delays up to 3 ms and up to 12 s: exact below 2^(P+1) µs, within 2^-P below above.
    let mut logged = false;
    for (s, _) in [
        (
            scenario(
                &["leaky-bucket:burst=3,mode=queue"],
                "steady:load=1.2",
                1_000,
                SECOND,
            ),
            true,
        ),
        (
            scenario(
                &["leaky-bucket:burst=20,mode=queue"],
                "page-loads:load=1.2",
                100,
                MINUTE,
            ),
            false,
        ),
    ] {
        let report = simulate(&s).expect("valid scenario");
        let delays = exact_delays(&s);
        let got = [
            report.results[0].delay_p50_us,
            report.results[0].delay_p99_us,
        ];
        for (q, got) in [0.5, 0.99].into_iter().zip(got) {
            let want = nearest_rank(&delays, q);
            let got = got.expect("a queueing limiter reports delays");
            let p = ratelab::histogram::PRECISION_BITS;
            if want < 2 << p {
                assert_eq!(got, want, "q {q}: exact below 2^(P+1)");
            } else {
                logged = true;
                assert!(
                    got <= want && want - got < want >> p,
                    "q {q}: {got} vs {want}"
                );
            }
        }
    }
    assert!(logged, "the scenarios exercise the log buckets");
}

fn refusal(s: &Scenario) -> String {
    let e = s.validate().expect_err("refused").to_string();
    assert!(!e.contains('\n'), "one line: {e}");
    assert!(e.contains("512 MB"), "{e}");
    e
}

#[test]
fn a_million_limit_with_many_limiters_is_refused_saying_how_many_would_fit() {
    let forty = vec!["fixed-window"; 40];
    let mut s = scenario(&forty, "steady:load=1", 1_000_000, MINUTE);
    s.duration = MINUTE;
    s.runs = 1;
    let e = refusal(&s);
    // A window's arrivals at most (a minute at load 1: L and eight standard deviations).
    let kept = s.memory().lanes[0].kept;
    assert!((1_000_000..1_010_000).contains(&kept), "{kept}");
    assert!(
        e.contains("40 limiters") && e.contains(&format!("{kept} admissions")),
        "{e}"
    );
    let fit: usize = e
        .split("use at most ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("says how many fit: {e}"));
    // As many as it says fit are accepted, and one more is not.
    s.limiters.truncate(fit);
    assert_eq!(s.validate(), Ok(()));
    assert!(s.memory().total(1) <= ratelab::sim::MEMORY_BUDGET);
    s.limiters.push(s.limiters[0].clone());
    refusal(&s);
}

#[test]
fn a_big_retry_spike_is_refused_and_a_smaller_one_is_not() {
    let mut s = scenario(
        &["token-bucket"],
        "retry:rate=1/1s,spike=10000000,at=1min,tries=4,every=1s",
        100,
        MINUTE,
    );
    s.runs = 1;
    let e = refusal(&s);
    assert!(e.contains("pending retries") && e.contains("spike"), "{e}");
    s.traffic = TrafficSpec::parse("retry:rate=1/1s,spike=1000000,at=1min,tries=4,every=1s")
        .expect("valid traffic");
    assert_eq!(s.validate(), Ok(()));
}

#[test]
fn results_of_many_runs_and_limiters_are_counted() {
    let mut s = scenario(&vec!["fixed-window"; 50], "steady:load=0.01", 1, MINUTE);
    s.duration = MINUTE;
    s.runs = 100_000;
    let e = refusal(&s);
    assert!(e.contains("fewer runs"), "{e}");
    s.runs = 10_000;
    assert_eq!(s.validate(), Ok(()));
}

#[test]
fn memory_does_not_grow_with_arrivals_per_window_or_requests_per_run() {
    let day = 24 * 60 * MINUTE;
    let flood = |every: &str| {
        let mut s = scenario(
            &["sliding-log", "sliding-log:record-rejects=true", "gcra"],
            &format!("flood:every={every},for=1h"),
            1_000,
            day,
        );
        s.runs = 1;
        s.validate().expect("accepted");
        s.memory().total(1)
    };
    // A thousand times the arrivals per window, the same memory.
    assert_eq!(flood("10ms"), flood("10us"));
    assert!(flood("10us") < 16 << 20, "{}", flood("10us"));
    // A queue's run ten times longer, the same memory.
    let queue = |minutes: u64| {
        let mut s = scenario(
            &["leaky-bucket:burst=100,mode=queue"],
            "steady:load=2",
            1_000,
            SECOND,
        );
        s.duration = minutes * MINUTE;
        s.memory().total(1)
    };
    assert_eq!(queue(100), queue(1_000));
}
