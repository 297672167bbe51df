//! One lane of a run: a limiter with its auditor and tallies, the hot loop that decides and
//! audits a chunk of arrivals, and what a retrying client's lane counts of its client (its
//! busiest second).

use super::mechanism::Mechanism;
#[cfg(feature = "clients")]
use super::stats::ClientStats;
use super::stats::{RunStats, Trace};
use super::{Scenario, CHUNK};
use crate::audit::Auditor;
#[cfg(feature = "storm")]
use crate::audit::Decider;
use crate::limiter::{Decide, Decision, Limiter};
use crate::ring::TimeRing;
use crate::time::Micros;
#[cfg(feature = "clients")]
use crate::time::SECOND;
#[cfg(feature = "clients")]
use crate::traffic::RetryClient;

/// A limiter with its auditor and tallies: one lane of a run.
#[derive(Debug)]
pub(super) struct Lane {
    pub(super) limiter: Limiter,
    pub(super) audit: Auditor,
    pub(super) queue: Option<TimeRing>,
    pub(super) stats: RunStats,
    pub(super) trace: Option<Trace>,
    /// Each decision's limiter state, kept beside the trace (never without it).
    pub(super) mech: Option<Mechanism>,
    /// How long after its arrival every decision reaches the backend ([`Limiter::shift`]):
    /// rejections are audited then, as the admissions, which leave the queue then.
    pub(super) shift: Micros,
}

impl Lane {
    pub(super) fn new(limiter: Limiter, scenario: &Scenario) -> Self {
        // A uniform delay needs no queue: every decision is audited that much later.
        let shift = limiter.shift();
        let queue = (limiter.delays() && shift == 0).then(TimeRing::default);
        Lane {
            shift,
            limiter,
            audit: Auditor::new(scenario.limit, scenario.window),
            queue,
            stats: RunStats::default(),
            trace: None,
            mech: None,
        }
    }

    /// A lane whose auditor counts wrong decisions if `counts_wrong`, and otherwise audits the
    /// busiest window alone ([`Auditor::bound_only`]). The study's build only.
    #[cfg(feature = "storm")]
    pub(super) fn audited(limiter: Limiter, scenario: &Scenario, counts_wrong: bool) -> Self {
        let mut lane = Lane::new(limiter, scenario);
        if !counts_wrong {
            lane.audit = Auditor::bound_only(scenario.limit, scenario.window);
        }
        lane
    }

    /// Decides a chunk of new requests: the hot loop.
    pub(super) fn run_chunk(&mut self, times: &[Micros]) {
        if self.queue.is_some() || self.trace.is_some() || self.shift > 0 {
            for &t in times {
                self.step(t);
            }
            self.stats.offered += times.len() as u64;
            return;
        }
        let admitted = decide_and_audit(&mut self.limiter, &mut self.audit, times);
        self.stats.offered += times.len() as u64;
        self.stats.admitted += admitted;
    }

    #[cfg(feature = "storm")]
    /// Whether the lane is nothing but decisions and their audit (no queue, shift, trace or
    /// mechanism): what a storm's lanes driven together and a riding twin need.
    pub(super) fn plain(&self) -> bool {
        self.queue.is_none() && self.trace.is_none() && self.shift == 0 && self.mech.is_none()
    }

    #[cfg(feature = "storm")]
    /// Decides a chunk as [`Lane::run_chunk`], and `rider`'s limiter on every request beside
    /// it; returns whether the two decided every one alike (then the rider's audit would be
    /// this lane's, request for request). Both must be plain.
    pub(super) fn run_chunk_with(&mut self, times: &[Micros], rider: &mut Limiter) -> bool {
        let mut same = true;
        let audit = &mut self.audit;
        let admitted = match (&mut self.limiter, rider) {
            // The study's twins, each loop made for its pair, on copies held together (see
            // `Decider`): through two references, the two limiters' states were reloaded from
            // memory at each decision.
            (Limiter::Gcra(g), Limiter::TokenBucket(b)) => {
                let mut pair = Pair::new(g.clone(), b.clone());
                let admitted = audit.decide_chunk(times, &mut pair);
                (*g, *b, same) = (pair.host, pair.rider, pair.same);
                admitted
            }
            (Limiter::TokenBucket(b), Limiter::Gcra(g)) => {
                let mut pair = Pair::new(b.clone(), g.clone());
                let admitted = audit.decide_chunk(times, &mut pair);
                (*b, *g, same) = (pair.host, pair.rider, pair.same);
                admitted
            }
            (host, rider) => audit.decide_chunk(times, |t| {
                let ok = host.admit(t);
                same &= rider.admit(t) == ok;
                ok
            }),
        };
        self.stats.offered += times.len() as u64;
        self.stats.admitted += admitted;
        same
    }

    /// Decides one request (new or a retry); returns whether it was admitted.
    pub(super) fn step(&mut self, t: Micros) -> bool {
        let decision = self.limiter.decide(t);
        // What has left the queue by now is audited first: the queue holds only departures
        // still to come (at most a burst's), whatever the decisions.
        self.release_through(t);
        match (decision, self.queue.as_mut()) {
            (Decision::Admit { at }, Some(queue)) => {
                queue.push(at);
                self.stats.delays.record(at - t);
            }
            (Decision::Admit { at }, None) => {
                // A central store's answer is back a round trip later, every one alike.
                if self.shift > 0 {
                    self.stats.delays.record(at - t);
                }
                let at = t + self.shift;
                let seen = self.audit.admit(at);
                if let Some(trace) = &mut self.trace {
                    trace.window_times.push(at);
                    trace.window_counts.push(seen.in_window + 1);
                }
            }
            (Decision::Reject, _) => {
                self.audit.reject(t + self.shift);
            }
        }
        let admitted = decision.admitted();
        self.stats.admitted += u64::from(admitted);
        if let Some(trace) = &mut self.trace {
            trace.times.push(t);
            trace.admitted.push(admitted);
            trace.released.push(match decision {
                Decision::Admit { at } => at,
                Decision::Reject => t,
            });
        }
        if let Some(mech) = &mut self.mech {
            mech.record(&self.limiter, t);
        }
        admitted
    }

    /// Audits the queued requests that have left by `t`.
    pub(super) fn release_through(&mut self, t: Micros) {
        if let Some(queue) = &mut self.queue {
            while queue.front().is_some_and(|d| d <= t) {
                let d = queue.pop_front().unwrap_or(t);
                let seen = self.audit.admit(d);
                if let Some(trace) = &mut self.trace {
                    trace.window_times.push(d);
                    trace.window_counts.push(seen.in_window + 1);
                }
            }
        }
    }

    pub(super) fn finish(self) -> (RunStats, Option<Trace>) {
        let (stats, trace, _) = self.finish_all();
        (stats, trace)
    }

    pub(super) fn finish_all(mut self) -> (RunStats, Option<Trace>, Option<Mechanism>) {
        self.release_through(Micros::MAX);
        let a = &self.audit;
        self.stats.decisions = a.decisions;
        self.stats.busiest = a.busiest;
        self.stats.busiest_at = a.busiest_at;
        let wrong = a.wrong();
        self.stats.wrong_admits = wrong.map(|(admits, _)| admits);
        self.stats.wrong_rejects = wrong.map(|(_, rejects)| rejects);
        #[cfg(feature = "fleet")]
        if let Limiter::Fleet(f) = &self.limiter {
            self.stats.fleet = Some(f.stats());
        }
        (self.stats, self.trace, self.mech)
    }
}

/// A lane's limiter and the twin riding on it, decided side by side.
#[cfg(feature = "storm")]
struct Pair<H, R> {
    host: H,
    rider: R,
    /// Whether the rider has decided every request as the host has.
    same: bool,
}

#[cfg(feature = "storm")]
impl<H, R> Pair<H, R> {
    fn new(host: H, rider: R) -> Self {
        Pair {
            host,
            rider,
            same: true,
        }
    }
}

#[cfg(feature = "storm")]
impl<H: Decide, R: Decide> Decider for &mut Pair<H, R> {
    #[inline(always)]
    fn decide(&mut self, t: Micros) -> bool {
        let ok = self.host.admit(t);
        self.same &= self.rider.admit(t) == ok;
        ok
    }
}

/// Feeds run `run`'s arrivals to one lane, chunk by chunk.
pub(super) fn run_open_loop(scenario: &Scenario, run: u32, lane: &mut Lane) {
    let mut arrivals = scenario.arrivals(run);
    let mut chunk = Vec::with_capacity(CHUNK);
    loop {
        let more = arrivals.fill(&mut chunk, CHUNK);
        lane.run_chunk(&chunk);
        if !more {
            break;
        }
    }
}

/// Decides a chunk of arrivals and audits each decision at its arrival time; returns how many
/// were admitted. The limiter's kind is matched once per chunk, so each kind gets a loop of
/// its own. (A queueing limiter's admissions belong at their departures: [`super::simulate_run`]
/// audits those one by one.)
pub fn decide_and_audit(limiter: &mut Limiter, audit: &mut Auditor, times: &[Micros]) -> u64 {
    decide_and_audit_each(limiter, audit, times, |_| {})
}

/// [`decide_and_audit`], telling `each` every decision in order (a retrying client's batch
/// needs them one by one).
#[inline]
pub(super) fn decide_and_audit_each(
    limiter: &mut Limiter,
    audit: &mut Auditor,
    times: &[Micros],
    mut each: impl FnMut(bool),
) -> u64 {
    let mut decided = |ok: bool| {
        each(ok);
        ok
    };
    match limiter {
        Limiter::FixedWindow(l) => audit.decide_chunk(times, |t| decided(l.admit(t))),
        Limiter::SlidingLog(l) => audit.decide_chunk(times, |t| decided(l.admit(t))),
        Limiter::SlidingWindowCounter(l) => audit.decide_chunk(times, |t| decided(l.admit(t))),
        Limiter::TokenBucket(l) => audit.decide_chunk(times, |t| decided(l.admit(t))),
        Limiter::Gcra(l) => audit.decide_chunk(times, |t| decided(l.admit(t))),
        Limiter::LeakyBucket(l) => audit.decide_chunk(times, |t| decided(l.admit(t))),
        Limiter::Nginx(l) => audit.decide_chunk(times, |t| decided(l.admit(t))),
        Limiter::Haproxy(l) => audit.decide_chunk(times, |t| decided(l.admit(t))),
        #[cfg(feature = "libraries")]
        Limiter::Anchored(l) => audit.decide_chunk(times, |t| decided(l.admit(t))),
        #[cfg(feature = "libraries")]
        Limiter::GoRate(l) => audit.decide_chunk(times, |t| decided(l.admit(t))),
        #[cfg(feature = "libraries")]
        Limiter::RedisCell(l) => audit.decide_chunk(times, |t| decided(l.admit(t))),
        #[cfg(feature = "libraries")]
        Limiter::Vsthrottle(l) => audit.decide_chunk(times, |t| decided(l.admit(t))),
        #[cfg(feature = "libraries")]
        Limiter::Limits(l) => audit.decide_chunk(times, |t| decided(l.admit(t))),
        #[cfg(feature = "storm")]
        Limiter::Split(l) => l.decide_chunk(audit, times, decided),
        #[cfg(not(feature = "storm"))]
        Limiter::Split(l) => audit.decide_chunk(times, |t| decided(l.admit(t))),
        #[cfg(feature = "fleet")]
        Limiter::Fleet(l) => audit.decide_chunk(times, |t| decided(l.admit(t))),
    }
}

/// Adds client `c`'s numbers to `tally`; returns 1 if it was locked out (served under half
/// its requests), else 0.
#[cfg(feature = "clients")]
pub(super) fn count_client(tally: &mut ClientStats, c: &RetryClient) -> u64 {
    let locked = u64::from(2 * c.admitted < c.requests);
    tally.gave_up += c.gave_up;
    tally.clients += 1;
    tally.locked += locked;
    locked
}

/// The latest tries, oldest first: at least the latest `peak_second` of them (or all), which
/// include every try of the trailing second; dropped down to those once there are over twice
/// as many and a thousand more, so that it holds at most about twice the busiest second's.
#[cfg(feature = "clients")]
#[derive(Debug, Clone, Default)]
pub(super) struct Second {
    pub(super) times: Vec<Micros>,
}

/// Counts a try at `at` in the trailing second `second`, raising `tally`'s peak. As in the
/// auditor, the second `(at − 1 s, at]` is busier than any before exactly when the
/// `peak`-th latest try before this one is still inside it: one load, no scan.
#[cfg(feature = "clients")]
#[inline]
pub(super) fn peak(second: &mut Second, tally: &mut ClientStats, at: Micros) {
    let times = &mut second.times;
    let p = usize::try_from(tally.peak_second).unwrap_or(usize::MAX);
    let raised = match times.len().checked_sub(p) {
        // (`i` is the length when the peak is 0: the first try raises it.)
        Some(i) => times.get(i).is_none_or(|&x| x + SECOND > at),
        // Never: the latest `peak` tries are kept.
        None => false,
    };
    if raised {
        tally.peak_second += 1;
        tally.peak_second_at = at;
    }
    times.push(at);
    let keep = usize::try_from(tally.peak_second).unwrap_or(usize::MAX);
    if times.len() > keep.saturating_mul(2).saturating_add(1024) {
        times.drain(..times.len() - keep);
    }
}

#[cfg(all(test, feature = "clients"))]
mod tests {
    use super::*;

    #[cfg(feature = "clients")]
    proptest::proptest! {
        /// After a skipped stretch the busiest-second buffer holds only the stretch's tries of
        /// its last second: every try after it raises the peak exactly as with the whole
        /// history kept.
        #[test]
        fn the_last_second_is_all_the_busiest_second_needs(
            gaps in proptest::collection::vec(0u64..300, 2..400),
            cut in 0usize..400,
            extra in 0u64..2_000,
        ) {
            let mut t = SECOND;
            let times: Vec<Micros> = gaps.iter().map(|g| { t += g * crate::time::MS; t }).collect();
            let cut = cut % times.len();
            let (mut whole, mut tally) = (Second::default(), ClientStats::default());
            for &at in &times[..cut] {
                peak(&mut whole, &mut tally, at);
            }
            let mut cut_tally = tally.clone();
            let mut last = Second::default();
            if let Some(&end) = times[..cut].last() {
                // As `Driven::skip` leaves it: the tries of the last second before the
                // stretch's end `to`, which is after its last try and no later than the next.
                let to = (end + 1 + extra * crate::time::MS).min(times[cut]);
                let since = to.saturating_sub(SECOND - 1);
                last.times = times[..cut].iter().copied().filter(|&x| x >= since).collect();
            }
            for &at in &times[cut..] {
                peak(&mut whole, &mut tally, at);
                peak(&mut last, &mut cut_tally, at);
                proptest::prop_assert_eq!(
                    (tally.peak_second, tally.peak_second_at),
                    (cut_tally.peak_second, cut_tally.peak_second_at)
                );
            }
        }
    }
}
