//! A retry storm driven a stretch at a time equals it driven one try at a time.
//!
//! [`RetryClient::drive_fresh`] hands a stretch its limiter is sure to refuse to the lane at
//! once: counted where it is long ([`Answer::skip`]), else try by try ([`Answer::refuse`]).
//! Here a lane with a real limiter and auditor is driven that way, and the same client and
//! limiter one try at a time ([`RetryClient::next`]): every try's time, in order (the skipped
//! ones from [`Skipped::latest`]), every answered try's number and answer, the client's counts,
//! the auditor's tallies and the limiter afterwards are the same. A test that would pass
//! without any skip proves nothing, so `storms_that_lock_out_are_skipped` checks they happen.

use proptest::prelude::*;
use ratelab::audit::Auditor;
use ratelab::limiter::{Decide, FixedWindow, Limiter, SlidingLog, SlidingWindowCounter};
use ratelab::rng::{Rng, Stream};
use ratelab::time::{Micros, MS, SECOND};
use ratelab::traffic::{Answer, Arrivals, RetryClient, RetryPolicy, Skipped, Try};

/// One lane as the simulator drives it, writing down what it was told.
struct Lane {
    limiter: Limiter,
    audit: Auditor,
    /// Lets the client skip (else every stretch comes one by one).
    skips: bool,
    /// Every try told one by one: time, try number, first try's time, admitted.
    told: Vec<(Micros, u32, Micros, bool)>,
    /// Every skip: how many tries were told before it, its tries' times, its first tries.
    skipped: Vec<(usize, Vec<Micros>, u64)>,
}

impl Answer for &mut Lane {
    fn answer(&mut self, tr: &Try) -> bool {
        let ok = self.limiter.admit(tr.at);
        self.audit.decided(tr.at, ok);
        self.told.push((tr.at, tr.attempt, tr.first, ok));
        ok
    }

    fn refuses_before(&self) -> Micros {
        self.limiter.refuses_before()
    }

    fn keeps(&self) -> u64 {
        self.limiter.keeps()
    }

    fn skip(&mut self, s: &Skipped<'_>) -> bool {
        if !self.skips {
            return false;
        }
        let mut times = Vec::new();
        s.latest(s.from(), &mut times);
        let n = s.tries();
        assert_eq!(times.len() as u64, n, "latest and tries disagree");
        assert!(times.first().is_none_or(|&t| t >= s.from()));
        assert!(times.last().is_none_or(|&t| t < s.to()));
        // Its counts from any time, against its tries.
        for &t in times.iter().step_by(7) {
            let from = times.iter().filter(|&&x| x >= t).count() as u64;
            assert_eq!(s.tries_from(t), from, "tries from {t}");
        }
        // No more tries in any second than it says at most.
        let mut lo = 0;
        for hi in 0..times.len() {
            while times[hi] - times[lo] >= SECOND {
                lo += 1;
            }
            assert!((hi - lo + 1) as u64 <= s.most_within(SECOND));
        }
        self.limiter.refused_many(n);
        self.audit.refused_many(n, |t| s.tries_from(t));
        self.skipped.push((self.told.len(), times, s.first_tries()));
        true
    }

    fn refuse(&mut self, tr: &Try) {
        assert!(tr.at < self.limiter.refuses_before() || !self.skipped.is_empty());
        self.limiter.refused(tr.at);
        self.audit.refused(tr.at);
        self.told.push((tr.at, tr.attempt, tr.first, false));
    }
}

fn limiter(kind: usize, limit: u64, window: Micros, record: bool) -> Limiter {
    match kind {
        0 => Limiter::SlidingLog(SlidingLog::new(limit, window, record)),
        1 => Limiter::FixedWindow(FixedWindow::new(limit, window, record)),
        _ => Limiter::SlidingWindowCounter(SlidingWindowCounter::new(limit, window, record)),
    }
}

/// A storm: first tries, `spike` more at `spike_at`, `tries` each, `every` apart.
#[derive(Debug, Clone)]
struct Storm {
    firsts: Vec<Micros>,
    spike: u64,
    spike_at: Micros,
    tries: u32,
    every: Micros,
}

/// First tries at `rate` a minute (uniform gaps up to twice the mean, drawn from `seed`), on
/// a grid of `grid` µs.
fn firsts(seed: u64, rate: u64, n: usize, grid: Micros) -> Vec<Micros> {
    let mut rng = Rng::new(seed, 0, Stream::Cases);
    let mean = 60 * SECOND / rate.max(1);
    let mut t = 0;
    (0..n)
        .map(|_| {
            // Now and then two at one instant: ties between first tries.
            if rng.below(16) > 0 {
                t += rng.between(0, 2 * mean);
            }
            // On a coarse grid, first tries fall on other requests' retries: ties between
            // chains at different tries.
            t / grid * grid
        })
        .collect()
}

impl Storm {
    fn client(&self) -> RetryClient {
        RetryClient::new(
            Arrivals::replay(self.firsts.clone().into(), 1),
            self.spike,
            self.spike_at,
            self.tries,
            self.every,
            RetryPolicy::default(),
            Rng::new(1, 0, Stream::Jitter),
        )
    }
}

/// Drives `storm` against a fresh limiter both ways and compares everything; returns how many
/// tries were skipped.
fn same_both_ways(
    storm: &Storm,
    rule: (usize, u64, Micros, bool),
    chunk: usize,
    skips: bool,
) -> u64 {
    let (kind, limit, window, record) = rule;
    let lim = || limiter(kind, limit, window, record);
    // One try at a time.
    let (mut one, mut by_one) = (storm.client(), lim());
    let mut audit_one = Auditor::new(limit, window);
    let mut want = Vec::new();
    while let Some(tr) = one.next() {
        let ok = by_one.admit(tr.at);
        audit_one.decided(tr.at, ok);
        if ok {
            one.admitted(tr);
        } else {
            one.rejected(tr, None);
        }
        want.push((tr.at, tr.attempt, tr.first, ok));
    }
    // A stretch at a time.
    let mut lane = Lane {
        limiter: lim(),
        audit: Auditor::new(limit, window),
        skips,
        told: Vec::new(),
        skipped: Vec::new(),
    };
    let mut client = storm.client();
    assert!(client.classic());
    let mut fresh = Vec::new();
    loop {
        let until = client.fill_fresh(&mut fresh, chunk);
        client.drive_fresh(&fresh, until, &mut lane);
        if until == Micros::MAX {
            break;
        }
    }
    // Every try's time in order, the skipped ones in their place; the others as told.
    let mut times = Vec::new();
    let mut told = lane.told.iter();
    let mut at = 0;
    let mut skipped = 0;
    for (before, skip, firsts) in &lane.skipped {
        for &(t, ..) in told.by_ref().take(before - at) {
            times.push(t);
        }
        at = *before;
        // Each skip's tries are refused where one at a time they are, and as many are first.
        let start = times.len();
        times.extend_from_slice(skip);
        let theirs = &want[start.min(want.len())..(start + skip.len()).min(want.len())];
        assert!(
            theirs.iter().all(|w| !w.3),
            "a skipped try was admitted one at a time"
        );
        assert_eq!(theirs.iter().filter(|w| w.1 == 1).count() as u64, *firsts);
        skipped += skip.len() as u64;
    }
    times.extend(told.map(|&(t, ..)| t));
    let want_times: Vec<Micros> = want.iter().map(|w| w.0).collect();
    assert_eq!(times, want_times, "the tries' times");
    // The told ones, try by try, against one at a time at the same place.
    let mut s = lane.skipped.iter().peekable();
    let mut offset = 0;
    for (i, got) in lane.told.iter().enumerate() {
        while let Some((before, skip, _)) = s.peek() {
            if *before <= i {
                offset += skip.len();
                s.next();
            } else {
                break;
            }
        }
        assert_eq!(*got, want[i + offset], "told try {i}");
    }
    assert_eq!(
        (client.requests, client.admitted, client.gave_up),
        (one.requests, one.admitted, one.gave_up),
        "the client's counts"
    );
    let tallies = |a: &Auditor| {
        (
            a.decisions,
            a.admits,
            a.busiest,
            a.wrong_admits,
            a.wrong_rejects,
        )
    };
    assert_eq!(
        tallies(&lane.audit),
        tallies(&audit_one),
        "the auditor's tallies"
    );
    // The limiter afterwards: what it holds and how it decides from then on.
    let end = want.last().map_or(0, |w| w.0);
    for k in 0..24 {
        let t = end + k * window / 7;
        assert_eq!(lane.limiter.state(t), by_one.state(t), "state at {t}");
        assert_eq!(lane.limiter.admit(t), by_one.admit(t), "deciding at {t}");
    }
    skipped
}

/// The lockout grid's heaviest corner and its edge: a client at 100 and 30 a minute, 12 and 4
/// tries a second apart, a spike of 200, against each limiter that can lock it out. Skips
/// happen (the stretches are long), and everything is as one at a time.
#[test]
fn storms_that_lock_out_are_skipped() {
    for (rate, tries) in [(100, 12), (30, 4), (60, 6)] {
        let storm = Storm {
            firsts: firsts(7, rate, rate as usize * 40, 1),
            spike: 200,
            spike_at: 5 * 60 * SECOND,
            tries,
            every: SECOND,
        };
        for kind in 0..3 {
            let rule = (kind, 100, 60 * SECOND, true);
            let skipped = same_both_ways(&storm, rule, 1024, true);
            // At 100 a minute and 12 tries the log and the counter lock the client out for
            // good (about 48,000 tries, nearly all refused); the fixed window refuses only the
            // ends of its windows.
            if (rate, tries) == (100, 12) {
                let least = if kind == 1 { 1_000 } else { 30_000 };
                assert!(skipped > least, "kind {kind}: only {skipped} tries skipped");
            }
            // And not skipping at all, stretches one by one.
            same_both_ways(&storm, rule, 1024, false);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn a_storm_a_stretch_at_a_time_is_one_try_at_a_time(
        seed in 0u64..1_000_000,
        rate in 1u64..400,
        n in 1usize..2_000,
        spike in 0u64..300,
        spike_s in 0u64..600,
        tries in 1u32..14,
        every_ms in prop_oneof![Just(1_000u64), 1u64..5_000],
        grid_ms in prop_oneof![Just(0u64), Just(250), Just(1_000)],
        kind in 0usize..3,
        limit in 1u64..150,
        window_s in prop_oneof![Just(60u64), 1u64..120],
        record: bool,
        chunk in prop_oneof![Just(1024usize), 1usize..64],
        skips in prop_oneof![3 => Just(true), 1 => Just(false)],
    ) {
        let storm = Storm {
            firsts: firsts(seed, rate, n, (grid_ms * MS).max(1)),
            spike,
            spike_at: spike_s * SECOND,
            tries,
            every: every_ms * MS,
        };
        same_both_ways(&storm, (kind, limit, window_s * SECOND, record), chunk, skips);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// `refuses_before` is exact: after any decisions, a request just before it is refused
    /// (and, refused and heard, leaves it no earlier), and one at it is admitted, unless it is
    /// a window's end (the counter and the fixed window know nothing past their window).
    #[test]
    fn refuses_before_is_where_admitting_starts(
        kind in 0usize..3,
        limit in 1u64..20,
        window_ms in 1u64..5_000,
        record: bool,
        gaps in proptest::collection::vec(0u64..400, 1..300),
    ) {
        let window = window_ms * MS;
        let mut l = limiter(kind, limit, window, record);
        let mut t = 0;
        for g in gaps {
            t += g * MS / 4;
            l.admit(t);
            let r = l.refuses_before();
            if r <= t + 1 {
                continue;
            }
            let mut before = l.clone();
            prop_assert!(!before.admit(r - 1), "admitted at {} before {r}", r - 1);
            let mut heard = l.clone();
            heard.refused(r - 1);
            prop_assert!(heard.refuses_before() >= r);
            let window_end = (t / window + 1) * window;
            if r != window_end {
                let mut at = l.clone();
                prop_assert!(at.admit(r), "refused at {r}");
            }
        }
    }
}

/// The study's lockout cells, heavy and light, every limiter of its lanes: each lane of one run
/// (the essays' client driven once for all, stretches skipped) has every number, the client's
/// busiest second and time to success included, that it has traced alone (one try at a time,
/// by the general event loop).
#[test]
fn the_lockout_grids_lanes_are_as_one_try_at_a_time() {
    use ratelab::sim::{simulate_run, simulate_run_lanes, trace, RunStats};
    use ratelab::study::{lockout_all, Size};
    for (rate, tries) in [(100, 12), (50, 8), (25, 4), (80, 2), (15, 12)] {
        for seed in 0..3 {
            let size = Size {
                runs: 1,
                minutes: 30,
                seed,
            };
            let s = lockout_all(100, rate, tries, size).expect("valid");
            let lanes = simulate_run(&s, 0).expect("runs");
            let bare = simulate_run_lanes(&s, 0, &|_| true).expect("runs");
            for (i, lane) in lanes.iter().enumerate() {
                let (alone, _) = trace(&s, i, 0).expect("runs");
                assert_eq!(
                    lane, &alone,
                    "lane {i} at {rate}/min, {tries} tries, seed {seed}"
                );
                // Without the client's own numbers (the study's runs), the rest the same.
                let without = RunStats {
                    client: None,
                    ..alone
                };
                assert_eq!(bare[i], without, "lane {i} without its client's numbers");
            }
        }
    }
}

/// The study's open-loop cells with the wrong decisions counted in some lanes only (here every
/// other one, so that GCRA and its twin are counted one and not the other): every number of
/// every lane is the one it has with all counted, but the wrong decisions, `None` where not
/// counted.
#[test]
fn lanes_without_wrong_counts_have_every_other_number() {
    use ratelab::sim::{simulate_run, simulate_run_lanes, RunStats};
    use ratelab::study::{honest, Size, SHAPES};
    for shape in SHAPES {
        for load in [0.3, 1.0] {
            for counted in [0, 1] {
                let size = Size {
                    runs: 1,
                    minutes: 60,
                    seed: 7,
                };
                let s = honest(shape, load, size).expect("valid");
                let all = simulate_run(&s, 0).expect("runs");
                let some = simulate_run_lanes(&s, 0, &|i| i % 2 == counted).expect("runs");
                for (i, (full, got)) in all.iter().zip(&some).enumerate() {
                    assert!(full.wrong_admits.is_some() && full.wrong_rejects.is_some());
                    let want = if i % 2 == counted {
                        full.clone()
                    } else {
                        RunStats {
                            wrong_admits: None,
                            wrong_rejects: None,
                            ..full.clone()
                        }
                    };
                    assert_eq!(got, &want, "{shape} at {load}, lane {i}");
                }
            }
        }
    }
}
