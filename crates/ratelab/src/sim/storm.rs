//! The essays' one retrying client against every lane of a run at once: its first tries drawn
//! once for all, each lane's tries driven in a loop made for its limiter, and the stretches
//! a limiter is sure to refuse taken together ([`RetryClient::drive_fresh`]).

use super::lane::Lane;
#[cfg(feature = "clients")]
use super::lane::{count_client, peak, Second};
use super::stats::{ClientStats, RunStats};
use super::Scenario;
use crate::audit::Auditor;
use crate::limiter::Decide;
use crate::limiter::Limiter;
use crate::time::Micros;
#[cfg(feature = "clients")]
use crate::time::SECOND;
use crate::traffic::{Answer, RetryClient, RetryClients, Skipped, Try, FRESH_CHUNK};

/// One lane driven by the essays' client ([`RetryClient::classic`]): the lane, its client and
/// the client's tallies.
pub(super) struct Classic<'a> {
    pub(super) lane: &'a mut Lane,
    pub(super) client: &'a mut RetryClient,
    #[cfg_attr(not(feature = "clients"), allow(dead_code))]
    pub(super) tally: &'a mut ClientStats,
    #[cfg(feature = "clients")]
    pub(super) second: &'a mut Second,
    /// Whether the client's own numbers are counted (its busiest second, time to success).
    #[cfg(feature = "clients")]
    pub(super) client_numbers: bool,
}

/// Drives every lane's essays' client through the run: the first tries, the same for every
/// lane, drawn once from `source` a chunk at a time, then each lane's tries through that
/// chunk ([`RetryClient::drive_fresh`]), one try at a time in a loop made for its limiter.
pub(super) fn drive_lanes(source: &mut RetryClient, lanes: &mut [Classic<'_>]) {
    let mut fresh = Vec::with_capacity(FRESH_CHUNK);
    loop {
        let until = source.fill_fresh(&mut fresh, FRESH_CHUNK);
        for c in lanes.iter_mut() {
            let audit = &mut c.lane.audit;
            let stats = &mut c.lane.stats;
            #[cfg(feature = "clients")]
            let (tally, second) = (&mut *c.tally, &mut *c.second);
            let mut each = Counts {
                stats,
                #[cfg(feature = "clients")]
                tally,
                #[cfg(feature = "clients")]
                second,
                #[cfg(feature = "clients")]
                client_numbers: c.client_numbers,
            };
            let client = &mut *c.client;
            let fresh = fresh.as_slice();
            // A loop for each kind, in the study's module too (the one wasm module with this
            // feature): with one loop for every kind, each decision and refusal was a call
            // that matched on the kind, 7% of the page's study.
            match &mut c.lane.limiter {
                Limiter::FixedWindow(l) => drive(client, fresh, until, l, audit, &mut each),
                Limiter::SlidingLog(l) => drive(client, fresh, until, l, audit, &mut each),
                Limiter::SlidingWindowCounter(l) => {
                    drive(client, fresh, until, l, audit, &mut each)
                }
                Limiter::TokenBucket(l) => drive(client, fresh, until, l, audit, &mut each),
                Limiter::Gcra(l) => drive(client, fresh, until, l, audit, &mut each),
                Limiter::LeakyBucket(l) => drive(client, fresh, until, l, audit, &mut each),
                Limiter::Nginx(l) => drive(client, fresh, until, l, audit, &mut each),
                Limiter::Haproxy(l) => drive(client, fresh, until, l, audit, &mut each),
                #[cfg(feature = "libraries")]
                Limiter::Anchored(l) => drive(client, fresh, until, l, audit, &mut each),
                #[cfg(feature = "libraries")]
                Limiter::GoRate(l) => drive(client, fresh, until, l, audit, &mut each),
                #[cfg(feature = "libraries")]
                Limiter::RedisCell(l) => drive(client, fresh, until, l, audit, &mut each),
                #[cfg(feature = "libraries")]
                Limiter::Vsthrottle(l) => drive(client, fresh, until, l, audit, &mut each),
                #[cfg(feature = "libraries")]
                Limiter::Limits(l) => drive(client, fresh, until, l, audit, &mut each),
                Limiter::Split(l) => drive(client, fresh, until, l, audit, &mut each),
                #[cfg(feature = "fleet")]
                Limiter::Fleet(l) => drive(client, fresh, until, &mut **l, audit, &mut each),
            }
        }
        if until == Micros::MAX {
            return;
        }
    }
}

/// Where [`drive`] counts each try of a lane's essays' client and its answer: the lane's
/// numbers and, with the core's `clients` feature, its client's busiest second and time to
/// success.
struct Counts<'a> {
    stats: &'a mut RunStats,
    #[cfg(feature = "clients")]
    tally: &'a mut ClientStats,
    #[cfg(feature = "clients")]
    second: &'a mut Second,
    #[cfg(feature = "clients")]
    client_numbers: bool,
}

impl Counts<'_> {
    /// Inlined into each limiter's loop ([`drive`]): as a closure, left a call per try, it
    /// cost a fifth of a locked-out lane's time.
    #[inline(always)]
    fn count(&mut self, tr: &Try, ok: bool) {
        self.stats.offered += u64::from(tr.attempt == 1);
        self.stats.admitted += u64::from(ok);
        #[cfg(feature = "clients")]
        if self.client_numbers {
            peak(self.second, self.tally, tr.at);
            if ok {
                self.tally.success.record(tr.at - tr.first);
            }
        }
    }
}

/// Drives one lane's essays' client through a chunk of first tries
/// ([`RetryClient::drive_fresh`]), auditing each decision as it is made and handing it to
/// `each`. Made once per limiter type, so the decision is a direct call.
#[inline(never)]
fn drive<L: Decide>(
    client: &mut RetryClient,
    fresh: &[Micros],
    until: Micros,
    limiter: &mut L,
    audit: &mut Auditor,
    each: &mut Counts<'_>,
) {
    client.drive_fresh(
        fresh,
        until,
        Driven {
            limiter,
            audit,
            each,
        },
    );
}

/// One lane's limiter, auditor and counts, as [`drive`] hands them to the client.
struct Driven<'l, 'c, L> {
    limiter: &'l mut L,
    audit: &'l mut Auditor,
    each: &'l mut Counts<'c>,
}

impl<L: Decide> Answer for Driven<'_, '_, L> {
    #[inline(always)]
    fn answer(&mut self, tr: &Try) -> bool {
        let ok = self.limiter.admit(tr.at);
        self.audit.decided(tr.at, ok);
        self.each.count(tr, ok);
        ok
    }

    #[inline(always)]
    fn refuses_before(&self) -> Micros {
        self.limiter.refuses_before()
    }

    #[inline(always)]
    fn keeps(&self) -> u64 {
        self.limiter.keeps()
    }

    fn skip(&mut self, skipped: &Skipped<'_>) -> bool {
        #[cfg(feature = "clients")]
        if self.each.client_numbers {
            // The client's busiest second must not rise in the stretch: it holds the tries
            // of the last second before it (all the buffer's being inside is too many to be
            // sure of) and at most `most_within` of the stretch's.
            let times = &self.each.second.times;
            let since = skipped.from().saturating_sub(SECOND);
            let before = times.len() - times.partition_point(|&x| x <= since);
            let inside = before as u64 + skipped.most_within(SECOND);
            if before == times.len() && before > 0 || inside > self.each.tally.peak_second {
                return false;
            }
        }
        let n = skipped.tries();
        self.limiter.refused_many(n);
        self.audit.refused_many(n, |t| skipped.tries_from(t));
        self.each.stats.offered += skipped.first_tries();
        #[cfg(feature = "clients")]
        if self.each.client_numbers {
            // The buffer goes on from the stretch's tries of its last second, all that a try
            // after it can count.
            let times = &mut self.each.second.times;
            times.clear();
            skipped.latest(skipped.to().saturating_sub(SECOND - 1), times);
        }
        true
    }

    #[inline(always)]
    fn refuse(&mut self, tr: &Try) {
        // Refused, as `refuses_before` said; the limiter still hears it (one that records
        // its rejects logs it).
        self.limiter.refused(tr.at);
        self.audit.refused(tr.at);
        self.each.count(tr, false);
    }
}

/// Every lane of a run against the essays' one retrying client ([`RetryClient::classic`]), its
/// first tries drawn once for them all ([`drive_lanes`]); the lanes back where that client is
/// not the scenario's, or a lane queues, shifts, traces or draws (they run one by one).
pub(super) fn classic_lanes(
    scenario: &Scenario,
    run: u32,
    mut lanes: Vec<Lane>,
    // (Without the core's `clients` feature a client has no numbers of its own to count.)
    #[cfg_attr(not(feature = "clients"), allow(unused_variables))] client_numbers: bool,
) -> Result<Vec<RunStats>, Vec<Lane>> {
    if !lanes.iter().all(Lane::plain) {
        return Err(lanes);
    }
    let mut clients = Vec::with_capacity(lanes.len());
    for _ in &lanes {
        match scenario
            .retry_clients(run)
            .and_then(RetryClients::into_single)
        {
            Some(c) if c.classic() && c.min_gap() > 0 && !c.honors() => clients.push(c),
            _ => return Err(lanes),
        }
    }
    let Some(mut source) = clients.first_mut().map(RetryClient::hand_over_fresh) else {
        return Err(lanes);
    };
    for c in clients.iter_mut().skip(1) {
        c.hand_over_fresh();
    }
    // Every lane is driven, a fixed window counting its rejects beside one that does not
    // included: the lockout grid's table says whether their runs came out equal, so each is
    // run, not copied.
    let mut tallies = vec![ClientStats::default(); lanes.len()];
    #[cfg(feature = "clients")]
    let mut seconds = vec![Second::default(); lanes.len()];
    {
        #[cfg(feature = "clients")]
        let mut seconds = seconds.iter_mut();
        let mut each: Vec<Classic<'_>> = lanes
            .iter_mut()
            .zip(clients.iter_mut())
            .zip(tallies.iter_mut())
            .map(|((lane, client), tally)| Classic {
                lane,
                client,
                tally,
                #[cfg(feature = "clients")]
                second: seconds.next().expect("one per lane"),
                #[cfg(feature = "clients")]
                client_numbers,
            })
            .collect();
        drive_lanes(&mut source, &mut each);
    }
    let stats: Vec<RunStats> = lanes
        .into_iter()
        .zip(clients.iter().zip(tallies))
        .map(|(lane, (_c, _tally))| {
            #[cfg(feature = "clients")]
            let lane = {
                let (mut lane, mut tally) = (lane, _tally);
                if client_numbers {
                    count_client(&mut tally, _c);
                    lane.stats.client = Some(tally);
                }
                lane
            };
            lane.finish_all().0
        })
        .collect();
    Ok(stats)
}
