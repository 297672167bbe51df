//! Twin lanes: a lane whose limiter is an earlier lane's twin (GCRA and the token bucket of
//! its burst and rate, which the study's claim says admit alike) rides on it, decided beside
//! it and compared decision by decision, one audit kept while they agree. The study's build
//! only (the `storm` feature): the page's other modules do without, and weigh less.

use super::lane::{run_open_loop, Lane};
use super::stats::RunStats;
use super::{Scenario, CHUNK};
use crate::limiter::Limiter;

/// Whether the limiter of a later lane (`b`) is expected to decide as an earlier one's (`a`):
/// a token bucket and GCRA of the same burst and rate, the study's twins.
pub(super) fn twins(a: &Limiter, b: &Limiter) -> bool {
    match (a, b) {
        (Limiter::Gcra(g), Limiter::TokenBucket(t))
        | (Limiter::TokenBucket(t), Limiter::Gcra(g)) => t.twin_of(g),
        _ => false,
    }
}

/// Runs every lane on run `run`'s arrivals, chunk by chunk. A lane whose limiter `alike` says
/// decides as an earlier plain lane's rides on it: its limiter decides beside that lane's in
/// one loop, compared decision by decision, and while they agree the two lanes' audits would
/// be one, so one is kept. If they ever disagree, the rider is run again alone from the
/// start. Either way its numbers are those it has alone (a test pairs every lane with every
/// other, alike or not).
pub(super) fn open_loop(
    scenario: &Scenario,
    run: u32,
    mut lanes: Vec<Lane>,
    alike: impl Fn(&Limiter, &Limiter) -> bool,
) -> Vec<RunStats> {
    let n = lanes.len();
    // `host[j]`: the lane lane `j` rides on; `rider[i]`: the lane riding on lane `i`.
    let mut host: Vec<Option<usize>> = vec![None; n];
    let mut rider: Vec<Option<usize>> = vec![None; n];
    for j in 0..n {
        if !lanes[j].plain() {
            continue;
        }
        let found = (0..j).find(|&i| {
            host[i].is_none()
                && rider[i].is_none()
                && lanes[i].plain()
                && lanes[i].audit.wrong().is_some() == lanes[j].audit.wrong().is_some()
                && alike(&lanes[i].limiter, &lanes[j].limiter)
        });
        if let Some(i) = found {
            host[j] = Some(i);
            rider[i] = Some(j);
        }
    }
    // Each rider's limiter as it starts, to run it again alone if it comes apart, and
    // whether its auditor counts wrong decisions (as its host's does).
    let spare: Vec<Option<Limiter>> = (0..n)
        .map(|j| host[j].map(|_| lanes[j].limiter.clone()))
        .collect();
    let counts_wrong: Vec<bool> = lanes.iter().map(|l| l.audit.wrong().is_some()).collect();
    let mut apart = vec![false; n];
    let mut arrivals = scenario.arrivals(run);
    let mut chunk = Vec::with_capacity(CHUNK);
    loop {
        let more = arrivals.fill(&mut chunk, CHUNK);
        for i in 0..n {
            if host[i].is_some() {
                continue;
            }
            match rider[i] {
                Some(j) if !apart[j] => {
                    let (left, right) = lanes.split_at_mut(j);
                    apart[j] = !left[i].run_chunk_with(&chunk, &mut right[0].limiter);
                }
                _ => lanes[i].run_chunk(&chunk),
            }
        }
        if !more {
            break;
        }
    }
    let mut stats: Vec<RunStats> = lanes.into_iter().map(|lane| lane.finish().0).collect();
    for (j, spare) in spare.into_iter().enumerate() {
        match (host[j], spare) {
            // Rare, and never for the twins so far: the rider alone, from the start.
            (Some(_), Some(limiter)) if apart[j] => {
                let mut alone = Lane::audited(limiter, scenario, counts_wrong[j]);
                run_open_loop(scenario, run, &mut alone);
                stats[j] = alone.finish().0;
            }
            (Some(i), _) => stats[j] = stats[i].clone(),
            _ => {}
        }
    }
    stats
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::trace;

    fn lanes_of(s: &Scenario, run: u32) -> Vec<Lane> {
        s.limiters
            .iter()
            .map(|spec| Lane::new(s.build_limiter(spec, run).expect("valid"), s))
            .collect()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        /// A lane riding on another has the numbers it has alone: twins that agree, and (every
        /// lane made to ride on the first before it, alike or not) riders that come apart and
        /// run again.
        #[test]
        fn a_riding_lane_is_as_it_is_alone(
            traffic in proptest::sample::select(vec![
                "steady:load=0.9", "page-loads:load=1.5", "big-bursts:load=0.6",
                "on-off:load=1.2", "flood:every=300ms,for=40s", "boundary-burst",
            ]),
            limit in 1u64..150,
            seed in 0u64..1_000,
            run in 0u32..3,
        ) {
            let specs = [
                "gcra", "token-bucket:burst=50", "token-bucket", "sliding-log",
                "gcra:burst=7", "token-bucket:burst=7", "fixed-window",
                "leaky-bucket:burst=5,mode=queue", "token-bucket:burst=100",
            ];
            let s = Scenario {
                limiters: specs
                    .iter()
                    .map(|l| crate::spec::LimiterSpec::parse(l).expect("limiter"))
                    .collect(),
                traffic: crate::spec::TrafficSpec::parse(traffic).expect("traffic"),
                limit,
                duration: 20 * crate::time::MINUTE,
                seed,
                ..Scenario::default()
            };
            if s.validate().is_err() {
                return Ok(());
            }
            let alone: Vec<RunStats> = (0..specs.len())
                .map(|i| trace(&s, i, run).expect("runs").0)
                .collect();
            let twinned = open_loop(&s, run, lanes_of(&s, run), twins);
            proptest::prop_assert_eq!(&twinned, &alone);
            let forced = open_loop(&s, run, lanes_of(&s, run), |_, _| true);
            proptest::prop_assert_eq!(&forced, &alone);
        }
    }

    #[test]
    fn gcra_and_the_bucket_of_its_burst_and_rate_are_twins() {
        let s = Scenario {
            limiters: ["gcra", "token-bucket:burst=100", "token-bucket:burst=99"]
                .iter()
                .map(|l| crate::spec::LimiterSpec::parse(l).expect("limiter"))
                .collect(),
            ..Scenario::default()
        };
        let l = lanes_of(&s, 0);
        assert!(twins(&l[0].limiter, &l[1].limiter) && twins(&l[1].limiter, &l[0].limiter));
        assert!(!twins(&l[0].limiter, &l[2].limiter));
        assert!(!twins(&l[1].limiter, &l[2].limiter));
    }
}
