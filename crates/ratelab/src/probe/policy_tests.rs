//! The probe's retrying client under every policy: the plan sends the simulator's tries for
//! the same answers, heard at once or late and out of order; `Retry-After` heard in an
//! answer times the retry; and the worst case checked before sending holds every schedule
//! the policy's draws can make.

use super::plan::Peaks;
use super::*;
use crate::limiter::Decide;
use crate::sim::{trace, Scenario};
use crate::spec::TrafficSpec;
use crate::time::{Micros, MINUTE, MS, SECOND};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::tests::scenario;

/// Policies, each against a limiter that rejects enough of it to retry often.
const POLICIES: [(&str, &str); 11] = [
    (
        "retry:rate=15/1s,spike=40,at=1s,tries=4,policy=exponential,base=100ms,factor=1.5,cap=1s",
        "sliding-log",
    ),
    (
        "retry:rate=15/1s,spike=40,at=1s,tries=5,policy=exponential,base=50ms,cap=2s,jitter=full",
        "gcra:burst=3",
    ),
    (
        "retry:rate=15/1s,spike=40,at=1s,tries=5,every=100ms,jitter=equal",
        "fixed-window",
    ),
    (
        "retry:rate=15/1s,spike=40,at=1s,tries=6,policy=exponential,base=50ms,cap=1s,jitter=decorrelated",
        "token-bucket:burst=5",
    ),
    (
        "retry:rate=15/1s,spike=40,at=1s,tries=6,every=100ms,budget=30%",
        "sliding-log:record-rejects=true",
    ),
    (
        "retry:rate=15/1s,spike=40,at=1s,tries=4,every=100ms,retry-after=honor",
        "token-bucket:burst=5",
    ),
    (
        "retry:rate=15/1s,spike=40,at=1s,tries=4,every=100ms,retry-after=honor,jitter=full",
        "fixed-window",
    ),
    (
        "retry:rate=5/1s,spike=10,at=1s,tries=4,every=200ms,jitter=equal,clients=3",
        "sliding-log",
    ),
    (
        "retry:rate=5/1s,spike=10,at=1s,tries=5,policy=exponential,base=100ms,jitter=equal,budget=50%,clients=4",
        "gcra:burst=4",
    ),
    (
        "retry:rate=4/1s,spike=8,at=1s,tries=4,every=150ms,retry-after=honor,clients=3",
        "sliding-log",
    ),
    (
        "retry:rate=4/1s,spike=8,at=1s,tries=3,every=150ms,clients=2+clients=2,tries=5,policy=exponential,base=50ms,cap=1s,jitter=full,retry-after=honor",
        "fixed-window",
    ),
];

/// A plan's tries answered by the scenario's limiter at once, as the simulator answers them,
/// `Retry-After` (the limiter's exact answer) included for a client that honours it: (due,
/// try, admitted) of each.
fn answered_at_once(s: &Scenario) -> Vec<(Micros, u32, bool)> {
    let mut limiter = s.build_limiter(&s.limiters[0], 0).expect("limiter");
    let mut plan = Plan::new(s).expect("plan");
    let honor = plan
        .clients()
        .is_some_and(crate::traffic::RetryClients::honors);
    let mut out = Vec::new();
    while let Some(d) = plan.next() {
        let admitted = limiter.decide(d.at).admitted();
        let answer = if admitted {
            Answer::Admitted
        } else {
            Answer::Rejected {
                retry_after: if honor {
                    limiter.retry_after(d.at)
                } else {
                    None
                },
            }
        };
        plan.answered(d.ticket, answer, d.at);
        out.push((d.at, d.attempt, admitted));
    }
    out
}

#[test]
fn every_policy_sends_the_simulators_tries_for_the_same_answers() {
    for (traffic, limiter) in POLICIES {
        let s = scenario(traffic, limiter);
        let sent = answered_at_once(&s);
        let (stats, sim) = trace(&s, 0, 0).expect("trace");
        let times: Vec<Micros> = sent.iter().map(|t| t.0).collect();
        assert_eq!(times, sim.times, "{traffic} {limiter}");
        let admitted: Vec<bool> = sent.iter().map(|t| t.2).collect();
        assert_eq!(admitted, sim.admitted, "{traffic} {limiter}");
        let firsts = sent.iter().filter(|t| t.1 == 1).count() as u64;
        assert_eq!(firsts, stats.offered, "{traffic}");
        // The policy was exercised: retries were sent, and some went past the second try.
        assert!(sent.iter().any(|t| t.1 > 2), "{traffic} {limiter}");
    }
}

/// A plan's tries as a probe's sender takes them: each decided by the limiter when sent (at
/// its due time), its answer heard `latency(k)` later for the k-th try, answers heard in the
/// order they come (not the order sent), and every answer heard by a try's due time told to
/// the plan before that try is taken.
fn answered_late(s: &Scenario, mut latency: impl FnMut(u64) -> Micros) -> Vec<(Micros, bool)> {
    let mut limiter = s.build_limiter(&s.limiters[0], 0).expect("limiter");
    let mut plan = Plan::new(s).expect("plan");
    let mut flight: BinaryHeap<Reverse<(Micros, u64, bool)>> = BinaryHeap::new();
    let mut out = Vec::new();
    loop {
        let heard_first = match (flight.peek(), plan.peek()) {
            (Some(&Reverse((h, _, _))), Some(due)) => h <= due,
            (Some(_), None) => true,
            (None, None) => break,
            (None, Some(_)) => false,
        };
        if heard_first {
            let Some(Reverse((h, ticket, admitted))) = flight.pop() else {
                break;
            };
            let answer = if admitted {
                Answer::Admitted
            } else {
                Answer::Rejected { retry_after: None }
            };
            plan.answered(ticket, answer, h);
            continue;
        }
        let d = plan.next().expect("a try");
        let admitted = limiter.decide(d.at).admitted();
        flight.push(Reverse((d.at + latency(d.ticket), d.ticket, admitted)));
        out.push((d.at, admitted));
    }
    out
}

#[test]
fn answers_heard_late_and_out_of_order_within_the_gap_give_the_simulators_tries() {
    // Jitter draws and a budget depend on the order a client hears its rejections in: the
    // plan tells it in the order it sent them, so answers that come back in another order,
    // each before the policy's shortest gap, change nothing.
    for (traffic, limiter) in [
        (
            "retry:rate=15/1s,spike=40,at=1s,tries=5,every=100ms,jitter=equal",
            "fixed-window",
        ),
        (
            "retry:rate=15/1s,spike=40,at=1s,tries=6,policy=exponential,base=60ms,cap=1s,jitter=decorrelated,budget=40%",
            "token-bucket:burst=5",
        ),
        (
            "retry:rate=5/1s,spike=10,at=1s,tries=5,policy=exponential,base=100ms,jitter=equal,budget=50%,clients=4",
            "gcra:burst=4",
        ),
    ] {
        let s = scenario(traffic, limiter);
        let gap = Plan::new(&s).expect("plan").retry_gap().expect("a gap");
        assert!(gap >= 30 * MS, "{traffic}: {gap}");
        // Latencies from 0 to just under the gap, in a scrambled order.
        let mut x = 12_345u64;
        let sent = answered_late(&s, |_| {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (x >> 33) % gap
        });
        let (_, sim) = trace(&s, 0, 0).expect("trace");
        let times: Vec<Micros> = sent.iter().map(|t| t.0).collect();
        assert_eq!(times, sim.times, "{traffic}");
        let admitted: Vec<bool> = sent.iter().map(|t| t.1).collect();
        assert_eq!(admitted, sim.admitted, "{traffic}");
    }
    // Heard later than the gap, a retry is due when its rejection was heard, never before.
    let s = scenario(
        "retry:rate=15/1s,spike=40,at=1s,tries=4,every=20ms,jitter=full",
        "fixed-window",
    );
    let late = 35 * MS;
    let sent = answered_late(&s, |_| late);
    let (_, sim) = trace(&s, 0, 0).expect("trace");
    assert_ne!(sent.len(), 0);
    let times: Vec<Micros> = sent.iter().map(|t| t.0).collect();
    assert_ne!(
        times, sim.times,
        "the answers came too late to be the simulator's"
    );
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "in due order");
}

#[test]
fn a_retry_after_heard_times_the_retry_and_none_leaves_the_policys_gap() {
    let s = scenario(
        "retry:rate=1/1h,spike=3,at=1s,tries=3,every=100ms,retry-after=honor",
        "sliding-log",
    );
    let mut plan = Plan::new(&s).expect("plan");
    let firsts: Vec<Due> = (0..3).map(|_| plan.next().expect("a first try")).collect();
    assert!(firsts.iter().all(|d| d.at == SECOND && d.attempt == 1));
    // The first is told to come back 2 s after its answer came (at 1.004 s); the second
    // hears no Retry-After; the third is admitted.
    let came = SECOND + 4 * MS;
    plan.answered(
        firsts[0].ticket,
        Answer::Rejected {
            retry_after: Some(came + 2 * SECOND),
        },
        came,
    );
    plan.answered(
        firsts[1].ticket,
        Answer::Rejected { retry_after: None },
        came,
    );
    plan.answered(firsts[2].ticket, Answer::Admitted, came);
    let a = plan.next().expect("the policy's retry");
    assert_eq!((a.at, a.attempt), (SECOND + 100 * MS, 2));
    let b = plan.next().expect("the honoured retry");
    assert_eq!((b.at, b.attempt), (came + 2 * SECOND, 2));
    // A Retry-After past the probe's hour: the request gives up, counted as held back.
    plan.answered(
        b.ticket,
        Answer::Rejected {
            retry_after: Some(2 * crate::time::HOUR),
        },
        b.at,
    );
    plan.answered(a.ticket, Answer::Admitted, a.at);
    assert_eq!(plan.next(), None);
    assert_eq!(plan.held_back(), 1);
    // A client that ignores Retry-After keeps its own gap, whatever the answer says.
    let s = scenario(
        "retry:rate=1/1h,spike=1,at=1s,tries=3,every=100ms,retry-after=ignore",
        "sliding-log",
    );
    let mut plan = Plan::new(&s).expect("plan");
    let d = plan.next().expect("first");
    plan.answered(
        d.ticket,
        Answer::Rejected {
            retry_after: Some(came + 2 * SECOND),
        },
        came,
    );
    assert_eq!(plan.next().map(|d| d.at), Some(SECOND + 100 * MS));
    // With jitter, the jittered wait is added to the Retry-After, as in the simulator.
    let s = scenario(
        "retry:rate=1/1h,spike=1,at=1s,tries=3,every=100ms,retry-after=honor,jitter=full",
        "sliding-log",
    );
    let mut plan = Plan::new(&s).expect("plan");
    let d = plan.next().expect("first");
    plan.answered(
        d.ticket,
        Answer::Rejected {
            retry_after: Some(came + 2 * SECOND),
        },
        came,
    );
    let at = plan.next().expect("retry").at;
    assert!(
        (came + 2 * SECOND..=came + 2 * SECOND + 100 * MS).contains(&at),
        "{at}"
    );
}

#[test]
fn retries_a_retry_after_herds_over_a_cap_are_held_back_as_the_probe_runs() {
    // 6,000 first tries over 2 s pass the caps (3,000 in any second, their retries 10 s
    // later); a server telling every one to come back at 5 s would send 6,000 in one
    // millisecond: 5,000 go, 1,000 are held back.
    let mut s = scenario(
        "retry:rate=3000/1s,spike=0,tries=2,every=10s,retry-after=honor",
        "sliding-log",
    );
    s.limit = 1_000;
    s.duration = 2 * SECOND;
    let mut plan = Plan::new(&s).expect("within the caps");
    assert!(plan.summary.peak_per_s <= MAX_RATE, "{:?}", plan.summary);
    let mut retries = 0u64;
    let mut at_five = 0u64;
    while let Some(d) = plan.next() {
        if d.attempt == 1 {
            plan.answered(
                d.ticket,
                Answer::Rejected {
                    retry_after: Some(5 * SECOND),
                },
                d.at,
            );
        } else {
            retries += 1;
            at_five += u64::from(d.at == 5 * SECOND);
            plan.answered(d.ticket, Answer::Admitted, d.at);
        }
    }
    assert_eq!((retries, at_five), (MAX_PER_MS, MAX_PER_MS));
    assert_eq!(plan.held_back(), plan.summary.first_tries - MAX_PER_MS);
    // Without Retry-After honoured, nothing is held back: the checked worst case holds.
    s.traffic = TrafficSpec::parse("retry:rate=3000/1s,spike=0,tries=2,every=10s").expect("t");
    let mut plan = Plan::new(&s).expect("plan");
    while let Some(d) = plan.next() {
        let answer = Answer::Rejected {
            retry_after: Some(5 * SECOND),
        };
        plan.answered(d.ticket, answer, d.at);
    }
    assert_eq!(plan.held_back(), 0);
}

/// Every try of a plan in which every try but the last is rejected, in due order.
fn all_rejected(s: &Scenario) -> Vec<Micros> {
    let mut plan = Plan::new(s).expect("plan");
    let mut out = Vec::new();
    while let Some(d) = plan.next() {
        plan.answered(d.ticket, Answer::Rejected { retry_after: None }, d.at);
        out.push(d.at);
    }
    out
}

fn peak(times: &[Micros], span: Micros) -> u64 {
    let mut best = 0;
    let mut from = 0;
    for (i, &t) in times.iter().enumerate() {
        while times[from] + span <= t {
            from += 1;
        }
        best = best.max((i + 1 - from) as u64);
    }
    best
}

#[test]
fn the_worst_case_holds_every_schedule_the_policys_draws_make() {
    for traffic in [
        "retry:rate=20/1s,spike=50,at=1s,tries=5,every=100ms,jitter=full",
        "retry:rate=20/1s,spike=50,at=1s,tries=5,every=100ms,jitter=equal",
        "retry:rate=20/1s,spike=50,at=1s,tries=6,policy=exponential,base=10ms,factor=3,cap=2s",
        "retry:rate=20/1s,spike=50,at=1s,tries=6,policy=exponential,base=10ms,cap=2s,jitter=full",
        "retry:rate=20/1s,spike=50,at=1s,tries=6,policy=exponential,base=10ms,cap=2s,jitter=decorrelated",
        "retry:rate=10/1s,spike=20,at=1s,tries=4,every=50ms,jitter=equal,clients=5",
        // A mix: the worst case over both groups' gaps, and each request's own tries.
        "retry:rate=10/1s,spike=20,at=1s,tries=2,every=300ms,clients=3+clients=2,tries=5,policy=exponential,base=10ms,cap=1s,jitter=full",
    ] {
        for seed in 1..=5 {
            let mut s = scenario(traffic, "sliding-log");
            s.seed = seed;
            let summary = Plan::new(&s).expect("plan").summary;
            let times = all_rejected(&s);
            assert_eq!(times.len() as u64, summary.most, "{traffic}");
            assert!(
                times.last().is_some_and(|&t| t <= summary.last_try_at),
                "{traffic}: {:?} {summary:?}",
                times.last()
            );
            assert!(peak(&times, MS) <= summary.peak_per_ms, "{traffic}");
            assert!(peak(&times, SECOND) <= summary.peak_per_s, "{traffic}");
        }
    }
    // Full jitter can retry at once: the worst case puts a spike's every try in its
    // millisecond, where the fixed gap spreads them.
    let s = scenario(
        "retry:rate=1/1h,spike=2000,at=1s,tries=3,policy=exponential,base=10s,cap=1min,jitter=full",
        "gcra",
    );
    let e = Plan::new(&s)
        .expect_err("6,000 in one millisecond")
        .to_string();
    assert!(e.contains("up to 6000 requests in one millisecond"), "{e}");
    let s = scenario(
        "retry:rate=1/1h,spike=2000,at=1s,tries=3,policy=exponential,base=10s,cap=1min",
        "gcra",
    );
    let p = Plan::new(&s).expect("spread 10 s and 20 s apart");
    assert_eq!(p.summary.peak_per_ms, 2_000);
    // Equal jitter waits at least half the gap: 2,000 at 1 s and up to 2,000 from 1.05 s.
    let s = scenario(
        "retry:rate=1/1h,spike=2000,at=1s,tries=2,every=100ms,jitter=equal",
        "gcra",
    );
    let p = Plan::new(&s).expect("plan");
    assert_eq!(
        (p.summary.peak_per_ms, p.summary.peak_per_s),
        (2_000, 4_000)
    );
    // A budget only lowers the count: the worst case is the same without it.
    let with = scenario(
        "retry:rate=5/1s,spike=10,at=1s,tries=4,every=100ms,budget=10%",
        "gcra",
    );
    let without = scenario("retry:rate=5/1s,spike=10,at=1s,tries=4,every=100ms", "gcra");
    assert_eq!(
        Plan::new(&with).expect("plan").summary,
        Plan::new(&without).expect("plan").summary
    );
    // Decorrelated jitter's longest gaps (3 × the last, up to the cap: 30, 60 and 60 min)
    // count in the hour.
    let mut s = scenario(
        "retry:rate=1/1h,spike=1,at=1s,tries=4,policy=exponential,base=10min,cap=1h,jitter=decorrelated",
        "gcra",
    );
    s.duration = MINUTE;
    let e = Plan::new(&s).expect_err("past the hour").to_string();
    assert!(
        e.contains("up to 3 more tries, 150min in all at the longest gaps"),
        "{e}"
    );
}

#[test]
fn the_worst_case_peaks_bound_a_recount_of_every_range() {
    // The ranges' peaks against a brute-force count of the ranges meeting each span.
    let first: Vec<Micros> = [0u64, 0, 300, 999, 1_000, 1_001, 2_500, 900_000]
        .into_iter()
        .chain((0..100).map(|i| 1_500_000 + i * 37))
        .collect();
    for (lo, hi) in [
        (vec![0, 0, 0], vec![0, 1_000, 3_000]),
        (vec![0, 500, 1_000], vec![0, 1_500, 3_000]),
        (vec![0, 10_000], vec![0, 2_000_000]),
        (vec![0, 250_000, 500_000], vec![0, 250_000, 500_000]),
    ] {
        let ranges: Vec<(Micros, Micros)> = first
            .iter()
            .flat_map(|&f| lo.iter().zip(&hi).map(move |(&a, &b)| (f + a, f + b)))
            .collect();
        let recount = |span: Micros| {
            ranges
                .iter()
                .map(|&(a, _)| {
                    // Spans ending at each range's start: the busiest ends at one.
                    ranges
                        .iter()
                        .filter(|&&(c, d)| c <= a && d + span > a)
                        .count() as u64
                })
                .max()
                .unwrap_or(0)
        };
        let p = Peaks::within(&first, &lo, &hi);
        assert_eq!(
            (p.per_ms, p.per_s),
            (recount(MS), recount(SECOND)),
            "{lo:?} {hi:?}"
        );
    }
}
