//! Runs: each limiter in a lane with its auditor and tallies, the chunked run loop (limiter
//! by limiter for a retrying client), and the per-decision trace of one limiter for plots
//! (with, for the playhead, its mechanism: see [`super::mechanism`](mod@super::mechanism)).
//! What a run gives back is in [`super::stats`].

#[cfg(feature = "clients")]
use super::lane::{count_client, peak, Second};
use super::lane::{decide_and_audit_each, run_open_loop, Lane};
use super::mechanism::{Mechanism, MECHANISM_BYTES_PER_DECISION, TRACE_BYTES_PER_DECISION};
use super::stats::{ClientStats, RunStats, Trace};
#[cfg(feature = "storm")]
use super::storm::{classic_lanes, drive_lanes, Classic};
use super::{format_bytes, Scenario, CHUNK, MEMORY_BUDGET};
use crate::error::Error;
use crate::traffic::Try;

/// Runs run `run` of the scenario for every limiter. The scenario must have been validated.
pub fn simulate_run(scenario: &Scenario, run: u32) -> Result<Vec<RunStats>, Error> {
    run_lanes(scenario, run, true, &|_| true)
}

/// [`simulate_run`] without a retrying client's own numbers (its busiest second, its time to
/// success: [`RunStats::client`] is `None`), and with the wrong decisions counted only in
/// the lanes `counts_wrong` names by position (elsewhere [`RunStats::wrong_admits`] and
/// [`RunStats::wrong_rejects`] are `None`, the busiest window audited alone:
/// [`crate::audit::Auditor::bound_only`]): what the study runs, which reads only those. Every
/// other number is the same (a test holds it). Without the core's `storm` feature (the page's
/// modules other than the study's) every lane's wrong decisions are counted.
pub fn simulate_run_lanes(
    scenario: &Scenario,
    run: u32,
    counts_wrong: &dyn Fn(usize) -> bool,
) -> Result<Vec<RunStats>, Error> {
    run_lanes(scenario, run, false, counts_wrong)
}

fn run_lanes(
    scenario: &Scenario,
    run: u32,
    client_numbers: bool,
    // (Not generic: one body in every module, whoever asks.)
    counts_wrong: &dyn Fn(usize) -> bool,
) -> Result<Vec<RunStats>, Error> {
    let mut lanes = Vec::with_capacity(scenario.limiters.len());
    for (i, spec) in scenario.limiters.iter().enumerate() {
        let limiter = scenario.build_limiter(spec, run)?;
        #[cfg(feature = "storm")]
        lanes.push(Lane::audited(limiter, scenario, counts_wrong(i)));
        #[cfg(not(feature = "storm"))]
        {
            let _ = counts_wrong(i);
            lanes.push(Lane::new(limiter, scenario));
        }
    }
    if scenario.traffic.closed_loop() {
        #[cfg(feature = "storm")]
        let lanes = match classic_lanes(scenario, run, lanes, client_numbers) {
            Ok(stats) => return Ok(stats),
            Err(lanes) => lanes,
        };
        return Ok(lanes
            .into_iter()
            .map(|lane| {
                let mut stats = run_closed_loop(scenario, run, lane).0;
                if !client_numbers {
                    stats.client = None;
                }
                stats
            })
            .collect());
    }
    // The study's build rides a twin lane on its twin ([`super::twins`]).
    #[cfg(feature = "storm")]
    let stats = super::twins::open_loop(scenario, run, lanes, super::twins::twins);
    #[cfg(not(feature = "storm"))]
    let stats = {
        let mut lanes = lanes;
        let mut arrivals = scenario.arrivals(run);
        let mut chunk = Vec::with_capacity(CHUNK);
        loop {
            let more = arrivals.fill(&mut chunk, CHUNK);
            for lane in &mut lanes {
                lane.run_chunk(&chunk);
            }
            if !more {
                break;
            }
        }
        lanes.into_iter().map(|lane| lane.finish().0).collect()
    };
    Ok(stats)
}

fn run_closed_loop(scenario: &Scenario, run: u32, lane: Lane) -> (RunStats, Option<Trace>) {
    let (stats, trace, _) = closed_loop(scenario, run, lane);
    (stats, trace)
}

fn closed_loop(
    scenario: &Scenario,
    run: u32,
    mut lane: Lane,
) -> (RunStats, Option<Trace>, Option<Mechanism>) {
    if let Some(mut clients) = scenario.retry_clients(run) {
        let honor = clients.honors();
        #[cfg_attr(not(feature = "clients"), allow(unused_mut))]
        let mut tally = ClientStats::default();
        // The tries of the trailing second, for its peak: at most the tries of one second.
        #[cfg(feature = "clients")]
        let mut second = Second::default();
        // With a mix, each client's group, and each group's tally and trailing second.
        #[cfg(feature = "mix")]
        let (group_of, mut seconds) = {
            let groups: Vec<_> = scenario.traffic.client_groups().collect();
            let mut group_of = Vec::new();
            if groups.len() > 1 {
                for (i, g) in groups.iter().enumerate() {
                    group_of.extend(std::iter::repeat_n(i as u8, g.clients as usize));
                }
                tally.groups = vec![ClientStats::default(); groups.len()];
            }
            (group_of, vec![Second::default(); tally.groups.len()])
        };
        // Batches: no retry comes sooner than `gap` after the try it retries, so every try
        // due before the first pending one plus `gap` is known before any of them is decided,
        // and the batch goes through the open loop's chunked path. The tries, and so every
        // decision, are those of one try at a time: the rejections are reported in the order
        // the tries were taken, as a probe reports them, and each retry is due at or after
        // the batch's end (a test holds the two ways equal). One try at a time where a
        // decision's answer times its retry (Retry-After), where a retry can come at once, and
        // where the lane queues, shifts, traces or draws.
        let gap = clients.min_gap();
        let batched = !honor
            && gap > 0
            && lane.queue.is_none()
            && lane.shift == 0
            && lane.trace.is_none()
            && lane.mech.is_none();
        let (mut batch, mut times, mut decided) = (Vec::new(), Vec::new(), Vec::new());
        // The essays' client alone: one try at a time in a loop made for each limiter, its
        // retries a queue in time order (no heap), each try decided and audited as it comes.
        #[cfg(all(feature = "storm", feature = "mix"))]
        let alone = group_of.is_empty();
        #[cfg(all(feature = "storm", not(feature = "mix")))]
        let alone = true;
        #[cfg(feature = "storm")]
        if let Some(client) = clients
            .single_mut()
            .filter(|c| batched && alone && c.classic())
        {
            let mut source = client.hand_over_fresh();
            let mut one = [Classic {
                lane: &mut lane,
                client,
                tally: &mut tally,
                #[cfg(feature = "clients")]
                second: &mut second,
                #[cfg(feature = "clients")]
                client_numbers: true,
            }];
            drive_lanes(&mut source, &mut one);
        }
        while let Some(first) = clients.peek() {
            let end = if batched {
                first.saturating_add(gap)
            } else {
                first
            };
            batch.clear();
            // (At most a chunk: a long gap at a high rate would otherwise hold its tries.)
            clients.take_before(end, CHUNK, &mut batch);
            for &(_c, tr) in &batch {
                lane.stats.offered += u64::from(tr.attempt == 1);
                #[cfg(feature = "clients")]
                {
                    peak(&mut second, &mut tally, tr.at);
                    #[cfg(feature = "mix")]
                    if let Some(&g) = group_of.get(_c as usize) {
                        let group = &mut tally.groups[g as usize];
                        group.requests += u64::from(tr.attempt == 1);
                        group.attempts += 1;
                        peak(&mut seconds[g as usize], group, tr.at);
                    }
                }
            }
            if batched {
                times.clear();
                times.extend(batch.iter().map(|(_, tr): &(u32, Try)| tr.at));
                decided.clear();
                lane.stats.admitted +=
                    decide_and_audit_each(&mut lane.limiter, &mut lane.audit, &times, |ok| {
                        decided.push(ok)
                    });
            }
            for (i, &(c, tr)) in batch.iter().enumerate() {
                let admitted = if batched {
                    decided[i]
                } else {
                    lane.step(tr.at)
                };
                if admitted {
                    #[cfg(feature = "clients")]
                    {
                        tally.success.record(tr.at - tr.first);
                        #[cfg(feature = "mix")]
                        if let Some(&g) = group_of.get(c as usize) {
                            tally.groups[g as usize].success.record(tr.at - tr.first);
                        }
                    }
                    clients.admitted(c, tr);
                } else {
                    // (Only a client of the core's `clients` feature honours `Retry-After`.)
                    #[cfg(feature = "clients")]
                    // (Asked only for a client that honours it: a counter's answer is a search.)
                    let retry_after = if honor && clients.clients()[c as usize].honors() {
                        lane.limiter.retry_after(tr.at)
                    } else {
                        None
                    };
                    #[cfg(not(feature = "clients"))]
                    let retry_after = None;
                    clients.rejected(c, tr, retry_after);
                }
            }
        }
        // (The clients' metrics are the core's `clients` feature: the page's modules skip them.)
        #[cfg(feature = "clients")]
        {
            for (_i, c) in clients.clients().iter().enumerate() {
                let locked = count_client(&mut tally, c);
                #[cfg(feature = "mix")]
                if let Some(&g) = group_of.get(_i) {
                    let group = &mut tally.groups[g as usize];
                    group.gave_up += c.gave_up;
                    group.clients += 1;
                    group.locked += locked;
                }
                #[cfg(not(feature = "mix"))]
                let _ = locked;
            }
            lane.stats.client = Some(tally);
        }
        #[cfg(not(feature = "clients"))]
        let _ = tally;
    }
    lane.finish_all()
}

/// Every decision of run `run` of limiter `index`, for plots.
///
/// ```
/// use ratelab::sim::{trace, Scenario};
/// use ratelab::spec::{LimiterSpec, TrafficSpec};
///
/// // A token bucket of 10 facing the boundary burst at 100 a minute: the first 10 of the
/// // 100 that come at once get through.
/// let scenario = Scenario {
///     limiters: vec![LimiterSpec::parse("token-bucket:burst=10")?],
///     traffic: TrafficSpec::parse("boundary-burst")?,
///     ..Scenario::default()
/// };
/// let (stats, trace) = trace(&scenario, 0, 0)?;
/// assert_eq!(trace.times.len() as u64, stats.decisions);
/// assert!(trace.admitted[..10].iter().all(|&ok| ok) && !trace.admitted[10]);
/// # Ok::<(), ratelab::Error>(())
/// ```
pub fn trace(scenario: &Scenario, index: usize, run: u32) -> Result<(RunStats, Trace), Error> {
    trace_into(scenario, index, run, Trace::default())
}

/// [`trace`], into `buf`'s lists (emptied first): a caller that traces run after run, as the
/// page does at each move of a dial, keeps one set of lists at the longest run's size instead
/// of allocating new ones each time and leaving holes behind them.
pub fn trace_into(
    scenario: &Scenario,
    index: usize,
    run: u32,
    mut buf: Trace,
) -> Result<(RunStats, Trace), Error> {
    let mut lane = lane_of(scenario, index, run)?;
    buf.clear();
    let (stats, trace) = if scenario.traffic.closed_loop() {
        lane.trace = Some(buf);
        run_closed_loop(scenario, run, lane)
    } else {
        // Counted first, so that each of the trace's lists is allocated once at its final
        // size: grown by doubling, a long trace left holes of every size behind it, and in the
        // page a later run's trace of the same length then needed fresh memory.
        buf.reserve(scenario.arrivals(run).count());
        lane.trace = Some(buf);
        run_open_loop(scenario, run, &mut lane);
        lane.finish()
    };
    Ok((stats, trace.unwrap_or_default()))
}

/// The limiter `index` of the scenario, built for run `run`, or an error naming the index.
fn lane_of(scenario: &Scenario, index: usize, run: u32) -> Result<Lane, Error> {
    let spec = scenario.limiters.get(index).ok_or_else(|| {
        Error::invalid(
            "limiter index",
            &index.to_string(),
            "an index into the scenario's limiters",
        )
    })?;
    Ok(Lane::new(scenario.build_limiter(spec, run)?, scenario))
}

/// Every decision of run `run` of limiter `index`, with its mechanism: the trace as
/// [`super::trace`] gives it and, decision by decision, the band and the limiter's state.
pub fn mechanism(
    scenario: &Scenario,
    index: usize,
    run: u32,
) -> Result<(RunStats, Trace, Mechanism), Error> {
    mechanism_into(scenario, index, run, Trace::default(), Mechanism::default())
}

/// [`mechanism`], into the lists of a trace and a mechanism kept from an earlier run (emptied
/// first), as [`super::trace_into`] does: each list is allocated once, at this run's length,
/// if it has not that room already.
///
/// The run's decisions are counted first (the arrivals, or for a retrying client the run
/// itself, decided once without keeping anything), and a run whose lists would take the
/// memory over [`MEMORY_BUDGET`], with what the run itself needs ([`Scenario::memory`]), is
/// refused before anything is kept: [`playback_memory`].
pub fn mechanism_into(
    scenario: &Scenario,
    index: usize,
    run: u32,
    trace: Trace,
    mech: Mechanism,
) -> Result<(RunStats, Trace, Mechanism), Error> {
    let decisions = count_decisions(scenario, index, run)?;
    let need = playback_memory(scenario, decisions);
    if need > MEMORY_BUDGET {
        let each = TRACE_BYTES_PER_DECISION + MECHANISM_BYTES_PER_DECISION;
        let fit = MEMORY_BUDGET.saturating_sub(scenario.memory().total(1)) / each;
        return Err(Error::TooLarge {
            what: "the run to play back".into(),
            detail: format!(
                "about {} ({decisions} decisions kept at {each} bytes each, and the run itself); the most is {}: use fewer minutes, a lower load or a shorter flood (about {fit} decisions fit)",
                format_bytes(need),
                format_bytes(MEMORY_BUDGET)
            ),
        });
    }
    trace_with_mechanism(scenario, index, run, decisions as usize, (trace, mech))
}

/// The memory a run of `decisions` decisions needs with its trace and mechanism kept: what
/// the run itself needs ([`Scenario::memory`], one run) and, per decision,
/// [`TRACE_BYTES_PER_DECISION`] and [`MECHANISM_BYTES_PER_DECISION`].
pub fn playback_memory(scenario: &Scenario, decisions: u64) -> u64 {
    let each = TRACE_BYTES_PER_DECISION + MECHANISM_BYTES_PER_DECISION;
    scenario
        .memory()
        .total(1)
        .saturating_add(decisions.saturating_mul(each))
}

/// How many decisions limiter `index` makes in run `run`: the arrivals, counted without
/// deciding them, or for a retrying client (whose retries depend on the decisions) the run
/// itself, decided without keeping anything.
pub(super) fn count_decisions(scenario: &Scenario, index: usize, run: u32) -> Result<u64, Error> {
    let lane = lane_of(scenario, index, run)?;
    Ok(if scenario.traffic.closed_loop() {
        closed_loop(scenario, run, lane).0.decisions
    } else {
        scenario.arrivals(run).count() as u64
    })
}

/// A run of limiter `index` with every decision kept in `trace` and, beside it, its state in
/// `mech`, both emptied and then sized for `decisions` decisions exactly; `mech` is finished
/// from the trace once the run is over.
pub(super) fn trace_with_mechanism(
    scenario: &Scenario,
    index: usize,
    run: u32,
    decisions: usize,
    (mut trace, mut mech): (Trace, Mechanism),
) -> Result<(RunStats, Trace, Mechanism), Error> {
    let mut lane = lane_of(scenario, index, run)?;
    trace.clear();
    trace.reserve(decisions);
    let record_rejects = scenario.limiters[index].record_rejects;
    mech.start(&lane.limiter, scenario, decisions);
    lane.trace = Some(trace);
    lane.mech = Some(mech);
    let delays = lane.queue.is_some();
    let (stats, trace, mech) = if scenario.traffic.closed_loop() {
        closed_loop(scenario, run, lane)
    } else {
        run_open_loop(scenario, run, &mut lane);
        lane.finish_all()
    };
    let (trace, mut mech) = (trace.unwrap_or_default(), mech.unwrap_or_default());
    mech.finish(&trace, delays, record_rejects);
    Ok((stats, trace, mech))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SECOND;

    #[test]
    fn a_trace_into_a_used_buffer_is_the_trace_and_keeps_the_buffer() {
        let scenario = |traffic: &str| Scenario {
            limiters: vec![crate::LimiterSpec::parse("sliding-log").expect("spec")],
            traffic: crate::TrafficSpec::parse(traffic).expect("traffic"),
            limit: 10,
            window: SECOND,
            duration: crate::time::MINUTE,
            runs: 1,
            seed: 7,
        };
        let long = scenario("flood:every=1ms");
        let short = scenario("steady:load=1");
        let (_, first) = trace(&long, 0, 0).expect("runs");
        let cap = first.times.capacity();
        assert!(
            cap >= first.times.len() && first.times.len() >= 3_000,
            "{cap}"
        );
        let (stats, again) = trace_into(&short, 0, 0, first).expect("runs");
        assert_eq!(
            (stats.clone(), again.clone()),
            trace(&short, 0, 0).expect("runs")
        );
        assert_eq!(
            again.times.capacity(),
            cap,
            "the longer run's lists are kept"
        );
    }

    #[test]
    fn a_reserved_trace_is_empty_with_room_in_every_list() {
        let mut t = Trace::default();
        t.reserve(1000);
        assert_eq!(t, Trace::default(), "no decisions yet");
        assert!(t.times.capacity() >= 1000);
        assert!(t.admitted.capacity() >= 1000);
        assert!(t.released.capacity() >= 1000);
        assert!(t.window_times.capacity() >= 1000);
        assert!(t.window_counts.capacity() >= 1000);
    }

    #[test]
    fn a_trace_has_every_decision_and_its_admissions_in_the_window() {
        let scenario = Scenario {
            limiters: vec![crate::spec::LimiterSpec::parse("fixed-window").expect("limiter")],
            limit: 2,
            ..Scenario::default()
        };
        let (stats, t) = trace(&scenario, 0, 0).expect("a trace");
        assert_eq!(t.times.len() as u64, stats.offered);
        assert_eq!(t.admitted.len(), t.times.len());
        let admitted = t.admitted.iter().filter(|&&a| a).count() as u64;
        assert_eq!(admitted, stats.admitted);
        assert_eq!(t.window_times.len() as u64, admitted);
        assert!(t.window_counts.iter().all(|&c| (1..=4).contains(&c)));
        assert!(trace(&scenario, 1, 0).is_err(), "there is one limiter");
    }
}
