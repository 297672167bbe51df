//! The checks of fuzz target `scenario`: any text read as a scenario, one `key value` a line
//! (`limiter`, `traffic`, `limit`, `window`, `minutes`, `seed`, `gateways`, `route`, `coord`;
//! `limiter` may repeat), through the core's own parsers, as `ratelab simulate` reads its
//! flags. Nothing may panic: parsing, validating, estimating memory, and running what is
//! accepted. What runs is held to the laws the README states: the audit adds up (per
//! gateway and in all), the busiest window stays within the stated bound, a request is
//! admitted once or given up. Runs are capped small (at most 200,000 expected decisions and 64 MB estimated)
//! so that a fuzzer spends its time on inputs, not on long runs.

use ratelab::sim::{simulate_run, Scenario};
use ratelab::spec::{parse_count, FleetSpec};
use ratelab::theory;
use ratelab::time::{parse_duration, MINUTE};
use ratelab::{LimiterSpec, TrafficSpec};

/// The largest run the check makes.
const MAX_DECISIONS: f64 = 200_000.0;
const MAX_BYTES: u64 = 64 << 20;

/// Checks one input; panics on a broken law. Returns whether the input named a scenario
/// (at least one line the reader knows).
///
/// (The memory estimate is held to the allocator's count by `ratelab`'s `memory_peak` test;
/// a fuzz target cannot count allocations without a global allocator of its own.)
pub fn check(data: &[u8]) -> bool {
    let text = String::from_utf8_lossy(data);
    let Some(read) = read(&text) else {
        return false;
    };
    let Ok(scenario) = read else {
        return true;
    };
    if scenario.validate().is_err() {
        return true;
    }
    // An accepted scenario's memory estimate is computed without a panic, whatever its size.
    let memory = scenario.memory();
    if scenario.expected_decisions() > MAX_DECISIONS || memory.total(1) > MAX_BYTES {
        return true;
    }
    let stats = simulate_run(&scenario, 0).expect("an accepted scenario runs");
    for (spec, run) in scenario.limiters.iter().zip(&stats) {
        let what = &spec.text;
        assert!(
            run.admitted <= run.decisions,
            "{what}: admitted > decisions"
        );
        assert!(run.offered <= run.decisions, "{what}: offered > decisions");
        // `simulate_run` counts every lane's wrong decisions.
        let (Some(wrong_admits), Some(wrong_rejects)) = (run.wrong_admits, run.wrong_rejects)
        else {
            panic!("{what}: wrong decisions not counted");
        };
        assert!(wrong_admits <= run.admitted, "{what}: wrong admits");
        assert!(
            wrong_rejects <= run.decisions - run.admitted,
            "{what}: wrong rejects"
        );
        assert!(run.busiest <= run.admitted, "{what}: busiest > admitted");
        if let Some(bound) = theory::worst_case(spec, scenario.limit, scenario.window) {
            assert!(
                run.busiest <= bound,
                "{what}: busiest {} > bound {bound}",
                run.busiest
            );
        }
        match &run.client {
            Some(c) => assert_eq!(run.admitted + c.gave_up, run.offered, "{what}: requests"),
            None => assert_eq!(run.offered, run.decisions, "{what}: arrivals"),
        }
        if let Some(fleet) = &run.fleet {
            let offered: u64 = fleet.gateways.iter().map(|g| g.offered).sum();
            let admitted: u64 = fleet.gateways.iter().map(|g| g.admitted).sum();
            assert_eq!(offered, run.decisions, "{what}: decisions per gateway");
            assert_eq!(admitted, run.admitted, "{what}: admissions per gateway");
            assert!(fleet.room_instants <= run.admitted, "{what}: room instants");
        }
    }
    true
}

/// The scenario a text names: `None` when no line has a known key; otherwise the scenario,
/// or the first error a parser gave.
fn read(text: &str) -> Option<Result<Scenario, ratelab::Error>> {
    let mut known = false;
    let mut limiters = Vec::new();
    let mut fleet: (Option<&str>, Option<&str>, Option<&str>) = (None, None, None);
    let mut scenario = Scenario {
        limiters: Vec::new(),
        runs: 1,
        ..Scenario::default()
    };
    let mut error = None;
    for line in text.lines() {
        let (key, value) = line.split_once(' ').unwrap_or((line, ""));
        let result = match key {
            "limiter" => LimiterSpec::parse(value).map(|l| limiters.push(l)),
            "traffic" => TrafficSpec::parse(value).map(|t| scenario.traffic = t),
            "limit" => parse_count("limit", value, 0, u64::MAX).map(|l| scenario.limit = l),
            "window" => parse_duration("window", value).map(|w| scenario.window = w),
            "minutes" => parse_count("minutes", value, 0, u64::MAX)
                .map(|m| scenario.duration = m.saturating_mul(MINUTE)),
            "seed" => parse_count("seed", value, 0, u64::MAX).map(|s| scenario.seed = s),
            "gateways" => {
                fleet.0 = Some(value);
                Ok(())
            }
            "route" => {
                fleet.1 = Some(value);
                Ok(())
            }
            "coord" => {
                fleet.2 = Some(value);
                Ok(())
            }
            _ => continue,
        };
        known = true;
        if let (Err(e), None) = (result, &error) {
            error = Some(e);
        }
    }
    if !known {
        return None;
    }
    if let Some(e) = error {
        return Some(Err(e));
    }
    if fleet != (None, None, None) {
        let f = match FleetSpec::parse(fleet.0.unwrap_or("1"), fleet.1, fleet.2) {
            Ok(f) => f,
            Err(e) => return Some(Err(e)),
        };
        for l in &mut limiters {
            l.fleet = Some(f);
        }
    }
    scenario.limiters = limiters;
    Some(Ok(scenario))
}
