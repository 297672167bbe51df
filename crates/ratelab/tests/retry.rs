//! The retrying client against a plain re-implementation: which try comes when (ties go to
//! retries, then the spike, then the steady stream; retries due at one instant in the order
//! they were rejected), how many tries a request gets, and what the simulator counts.

mod common;

use ratelab::sim::{simulate_run, Scenario};
use ratelab::spec::TrafficSpec;
use ratelab::time::{Micros, MS, SECOND};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// A sliding log written out plainly: admitted (or, recording rejects, all) times in the
/// window `(t − W, t]`, admit while fewer than `L`.
struct PlainLog {
    limit: usize,
    window: Micros,
    record_rejects: bool,
    log: VecDeque<Micros>,
}

impl PlainLog {
    fn admit(&mut self, t: Micros) -> bool {
        while self.log.front().is_some_and(|&t0| t0 + self.window <= t) {
            self.log.pop_front();
        }
        let ok = self.log.len() < self.limit;
        if ok || self.record_rejects {
            self.log.push_back(t);
        }
        ok
    }
}

/// Every try of a retrying client in order, `(time, try number, admitted)`, by an event queue
/// keyed on (time, class, order of scheduling): class 0 for retries, 1 for the spike, 2 for
/// the steady stream.
fn reference(scenario: &Scenario, run: u32, limiter: &mut PlainLog) -> Vec<(Micros, u32, bool)> {
    let TrafficSpec::Retry {
        spike,
        at,
        tries,
        every,
        ..
    } = scenario.traffic
    else {
        panic!("retrying traffic");
    };
    let mut queue = BinaryHeap::new();
    let mut order = 0u64;
    for t in scenario.arrivals(run) {
        queue.push(Reverse((t, 2u8, order, 1u32)));
        order += 1;
    }
    for _ in 0..spike {
        queue.push(Reverse((at, 1, order, 1)));
        order += 1;
    }
    let mut out = Vec::new();
    while let Some(Reverse((t, _, _, attempt))) = queue.pop() {
        let ok = limiter.admit(t);
        out.push((t, attempt, ok));
        if !ok && attempt < tries {
            queue.push(Reverse((t + every, 0, order, attempt + 1)));
            order += 1;
        }
    }
    out
}

fn scenario(traffic: &str, limiters: &[&str], limit: u64, window: Micros) -> Scenario {
    common::scenario(traffic, limiters, (limit, window), 6 * SECOND, (3, 5))
}

/// The client's own tries, driven by the plain log.
fn driven(s: &Scenario, run: u32, limiter: &mut PlainLog) -> Vec<(Micros, u32, bool)> {
    let mut client = s.retry_client(run).expect("a retrying client");
    let mut out = Vec::new();
    while let Some(tr) = client.next() {
        let ok = limiter.admit(tr.at);
        if !ok {
            client.rejected(tr, None);
        }
        out.push((tr.at, tr.attempt, ok));
    }
    out
}

#[test]
fn the_retrying_client_and_the_simulator_equal_a_plain_event_queue() {
    // The probe's retry storm: 25 a second against L = 20 a second, a spike of 40, four tries.
    let traffic = "retry:rate=25/1s,spike=40,at=1s,tries=4,every=100ms";
    let s = scenario(
        traffic,
        &["sliding-log", "sliding-log:record-rejects=true"],
        20,
        SECOND,
    );
    for run in 0..s.runs {
        let mut simulated = simulate_run(&s, run).expect("runs").into_iter();
        for record_rejects in [false, true] {
            let log = || PlainLog {
                limit: 20,
                window: SECOND,
                record_rejects,
                log: VecDeque::new(),
            };
            let want = reference(&s, run, &mut log());
            let got = driven(&s, run, &mut log());
            assert_eq!(got, want, "run {run}, record rejects {record_rejects}");
            // No request gets more than its four tries, and retries come every 100 ms.
            assert!(want.iter().all(|&(_, a, _)| (1..=4).contains(&a)));
            assert!(
                want.iter().any(|&(_, a, _)| a == 4),
                "some request used every try"
            );
            let stats = simulated.next().expect("a result per limiter");
            let first = want.iter().filter(|r| r.1 == 1).count() as u64;
            let admitted = want.iter().filter(|r| r.2).count() as u64;
            assert_eq!(
                (stats.offered, stats.admitted, stats.decisions),
                (first, admitted, want.len() as u64),
                "the simulator's counts, run {run}, record rejects {record_rejects}"
            );
        }
    }
}

#[test]
fn a_small_case_by_hand() {
    // A spike of 3 at 1 s, no steady client to speak of (one request in 1,000 hours), L = 1 a
    // second, 3 tries 100 ms apart. At 1.0 s the first is admitted and two rejected; both come
    // back at 1.1 s (try 2) and again at 1.2 s (try 3), rejected each time, the first admission
    // still in the window: 7 tries, 1 admitted, 2 requests given up after their third try.
    let s = scenario(
        "retry:rate=1/1000h,spike=3,at=1s,tries=3,every=100ms",
        &["sliding-log"],
        1,
        SECOND,
    );
    let mut log = PlainLog {
        limit: 1,
        window: SECOND,
        record_rejects: false,
        log: VecDeque::new(),
    };
    let (a, b, c) = (SECOND, SECOND + 100 * MS, SECOND + 200 * MS);
    let want = vec![
        (a, 1, true),
        (a, 1, false),
        (a, 1, false),
        (b, 2, false),
        (b, 2, false),
        (c, 3, false),
        (c, 3, false),
    ];
    assert_eq!(driven(&s, 0, &mut log), want);
    let stats = &simulate_run(&s, 0).expect("runs")[0];
    assert_eq!((stats.offered, stats.admitted, stats.decisions), (3, 1, 7));
}

#[test]
fn ties_go_to_retries_then_the_spike_then_the_steady_stream() {
    let s = scenario(
        "retry:rate=1/1000h,spike=2,at=1s,tries=3,every=100ms",
        &["sliding-log"],
        1,
        SECOND,
    );
    let mut client = s.retry_client(0).expect("a retrying client");
    // Two rejections reported at 0.9 s (out of the simulator's order, as a probe may): their
    // retries are due at 1 s, with the spike, and come first, in the order rejected.
    for attempt in [2, 1] {
        let tr = client.fixed_try(900 * MS, attempt);
        client.rejected(tr, None);
    }
    assert_eq!(client.peek(), Some(SECOND));
    let tries: Vec<(Micros, u32)> = std::iter::from_fn(|| client.next())
        .map(|tr| (tr.at, tr.attempt))
        .collect();
    assert_eq!(
        tries,
        [(SECOND, 3), (SECOND, 2), (SECOND, 1), (SECOND, 1)],
        "retries first, in the order rejected, then the spike"
    );
    // A last try that is rejected does not come back.
    let mut client = s.retry_client(0).expect("a retrying client");
    let tr = client.fixed_try(500 * MS, 3);
    client.rejected(tr, None);
    assert_eq!(client.peek(), Some(SECOND), "only the spike is left");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(400))]

    /// The essays' client driven a chunk of first tries at a time (as the simulator draws
    /// them once for every limiter) tries and is answered exactly as one try at a time, with
    /// chunks as small as one try and times on a 100 ms grid, so that retries, the spike and
    /// first tries tie, at chunk boundaries too.
    #[test]
    fn chunks_of_first_tries_drive_as_one_try_at_a_time(
        gaps in proptest::collection::vec(0u64..4, 1..60),
        spike in 0u64..8,
        spike_step in 0u64..40,
        tries in 1u32..5,
        every_step in 1u64..5,
        limit in 1usize..4,
        record_rejects: bool,
        chunk in 1usize..5,
    ) {
        use ratelab::rng::{Rng, Stream};
        use ratelab::traffic::{Arrivals, RetryClient, RetryPolicy};
        let step = 100 * MS;
        let mut t = 0;
        let times: Vec<Micros> = gaps.iter().map(|g| { t += g * step; t }).collect();
        let client = || {
            RetryClient::new(
                Arrivals::replay(times.clone().into(), 1),
                spike,
                spike_step * step,
                tries,
                every_step * step,
                RetryPolicy::default(),
                Rng::new(1, 0, Stream::Jitter),
            )
        };
        let log = || PlainLog { limit, window: SECOND, record_rejects, log: VecDeque::new() };
        let (mut one, mut by_one) = (client(), log());
        let mut want = Vec::new();
        while let Some(tr) = one.next() {
            let ok = by_one.admit(tr.at);
            if ok {
                one.admitted(tr);
            } else {
                one.rejected(tr, None);
            }
            want.push((tr.at, tr.attempt, tr.first, ok));
        }
        let (mut chunked, mut by_chunk) = (client(), log());
        proptest::prop_assert!(chunked.classic());
        let mut got = Vec::new();
        let mut fresh = Vec::new();
        loop {
            let until = chunked.fill_fresh(&mut fresh, chunk);
            chunked.drive_fresh(&fresh, until, |tr: &ratelab::traffic::Try| {
                let ok = by_chunk.admit(tr.at);
                got.push((tr.at, tr.attempt, tr.first, ok));
                ok
            });
            if until == Micros::MAX {
                break;
            }
        }
        proptest::prop_assert_eq!(&got, &want);
        proptest::prop_assert_eq!(
            (chunked.requests, chunked.admitted, chunked.gave_up),
            (one.requests, one.admitted, one.gave_up)
        );
    }
}
