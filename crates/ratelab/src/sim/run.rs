//! Runs: each limiter in a lane with its auditor and tallies, the chunked run loop (limiter
//! by limiter for a retrying client), and the per-decision trace of one limiter for plots
//! (with, for the playhead, its mechanism: see [`super::mechanism`]). What a run gives back
//! is in [`super::stats`].

use super::mechanism::{Mechanism, MECHANISM_BYTES_PER_DECISION, TRACE_BYTES_PER_DECISION};
use super::stats::{ClientStats, RunStats, Trace};
use super::{format_bytes, Scenario, CHUNK, MEMORY_BUDGET};
use crate::audit::Auditor;
use crate::error::Error;
use crate::limiter::{Decide, Decision, Limiter};
use crate::ring::TimeRing;
use crate::time::Micros;
#[cfg(feature = "clients")]
use crate::time::SECOND;
#[cfg(any(feature = "storm", feature = "clients"))]
use crate::traffic::RetryClient;
use crate::traffic::Try;
#[cfg(feature = "storm")]
use crate::traffic::{RetryClients, FRESH_CHUNK};

/// A limiter with its auditor and tallies: one lane of a run.
#[derive(Debug)]
struct Lane {
    limiter: Limiter,
    audit: Auditor,
    queue: Option<TimeRing>,
    stats: RunStats,
    trace: Option<Trace>,
    /// Each decision's limiter state, kept beside the trace (never without it).
    mech: Option<Mechanism>,
    /// How long after its arrival every decision reaches the backend ([`Limiter::shift`]):
    /// rejections are audited then, as the admissions, which leave the queue then.
    shift: Micros,
}

impl Lane {
    fn new(limiter: Limiter, scenario: &Scenario) -> Self {
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

    /// Decides a chunk of new requests: the hot loop.
    fn run_chunk(&mut self, times: &[Micros]) {
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

    /// Decides one request (new or a retry); returns whether it was admitted.
    fn step(&mut self, t: Micros) -> bool {
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
    fn release_through(&mut self, t: Micros) {
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

    fn finish(self) -> (RunStats, Option<Trace>) {
        let (stats, trace, _) = self.finish_all();
        (stats, trace)
    }

    fn finish_all(mut self) -> (RunStats, Option<Trace>, Option<Mechanism>) {
        self.release_through(Micros::MAX);
        let a = &self.audit;
        self.stats.decisions = a.decisions;
        self.stats.busiest = a.busiest;
        self.stats.busiest_at = a.busiest_at;
        self.stats.wrong_admits = a.wrong_admits;
        self.stats.wrong_rejects = a.wrong_rejects;
        #[cfg(feature = "fleet")]
        if let Limiter::Fleet(f) = &self.limiter {
            self.stats.fleet = Some(f.stats());
        }
        (self.stats, self.trace, self.mech)
    }
}

/// Decides a chunk of arrivals and audits each decision at its arrival time; returns how many
/// were admitted. The limiter's kind is matched once per chunk, so each kind gets a loop of
/// its own. (A queueing limiter's admissions belong at their departures: [`simulate_run`]
/// audits those one by one.)
pub fn decide_and_audit(limiter: &mut Limiter, audit: &mut Auditor, times: &[Micros]) -> u64 {
    decide_and_audit_each(limiter, audit, times, |_| {})
}

/// [`decide_and_audit`], telling `each` every decision in order (a retrying client's batch
/// needs them one by one).
#[inline]
fn decide_and_audit_each(
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
        Limiter::Split(l) => audit.decide_chunk(times, |t| decided(l.admit(t))),
        #[cfg(feature = "fleet")]
        Limiter::Fleet(l) => audit.decide_chunk(times, |t| decided(l.admit(t))),
    }
}

#[cfg(feature = "storm")]
/// One lane driven by the essays' client ([`RetryClient::classic`]): the lane, its client and
/// the client's tallies.
struct Classic<'a> {
    lane: &'a mut Lane,
    client: &'a mut RetryClient,
    #[cfg_attr(not(feature = "clients"), allow(dead_code))]
    tally: &'a mut ClientStats,
    #[cfg(feature = "clients")]
    second: &'a mut Second,
}

#[cfg(feature = "storm")]
/// Drives every lane's essays' client through the run: the first tries, the same for every
/// lane, drawn once from `source` a chunk at a time, then each lane's tries through that
/// chunk ([`RetryClient::drive_fresh`]), one try at a time in a loop made for its limiter.
fn drive_lanes(source: &mut RetryClient, lanes: &mut [Classic<'_>]) {
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
            };
            let client = &mut *c.client;
            let fresh = fresh.as_slice();
            // In the page's modules one loop for every kind: each byte is fetched there.
            #[cfg(target_arch = "wasm32")]
            drive(client, fresh, until, &mut c.lane.limiter, audit, &mut each);
            #[cfg(not(target_arch = "wasm32"))]
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

#[cfg(feature = "storm")]
/// Where [`drive`] counts each try of a lane's essays' client and its answer: the lane's
/// numbers and, with the core's `clients` feature, its client's busiest second and time to
/// success.
struct Counts<'a> {
    stats: &'a mut RunStats,
    #[cfg(feature = "clients")]
    tally: &'a mut ClientStats,
    #[cfg(feature = "clients")]
    second: &'a mut Second,
}

#[cfg(feature = "storm")]
impl Counts<'_> {
    /// Inlined into each limiter's loop ([`drive`]): as a closure, left a call per try, it
    /// cost a fifth of a locked-out lane's time.
    #[inline(always)]
    fn count(&mut self, tr: &Try, ok: bool) {
        self.stats.offered += u64::from(tr.attempt == 1);
        self.stats.admitted += u64::from(ok);
        #[cfg(feature = "clients")]
        {
            peak(self.second, self.tally, tr.at);
            if ok {
                self.tally.success.record(tr.at - tr.first);
            }
        }
    }
}

#[cfg(feature = "storm")]
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
    client.drive_fresh(fresh, until, |tr| {
        let ok = limiter.admit(tr.at);
        audit.decided(tr.at, ok);
        each.count(tr, ok);
        ok
    });
}

#[cfg(feature = "storm")]
/// Every lane of a run against the essays' one retrying client ([`RetryClient::classic`]), its
/// first tries drawn once for them all ([`drive_lanes`]); the lanes back where that client is
/// not the scenario's, or a lane queues, shifts, traces or draws (they run one by one).
fn classic_lanes(
    scenario: &Scenario,
    run: u32,
    mut lanes: Vec<Lane>,
) -> Result<Vec<RunStats>, Vec<Lane>> {
    let plain =
        |l: &Lane| l.queue.is_none() && l.shift == 0 && l.trace.is_none() && l.mech.is_none();
    if !lanes.iter().all(plain) {
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
    // A lane whose limiter decides as an earlier lane's does is not driven: its run is that
    // lane's, copied (a fixed window counting its rejects beside one that does not: the lockout
    // grid's). The first of each such set has no earlier one, so it is driven.
    let copy_of: Vec<Option<usize>> = (0..lanes.len())
        .map(|j| (0..j).find(|&i| decides_alike(&lanes[i].limiter, &lanes[j].limiter)))
        .collect();
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
            })
            .zip(&copy_of)
            .filter_map(|(c, copy)| copy.is_none().then_some(c))
            .collect();
        drive_lanes(&mut source, &mut each);
    }
    let mut stats: Vec<RunStats> = lanes
        .into_iter()
        .zip(clients.iter().zip(tallies))
        .map(|(lane, (_c, _tally))| {
            #[cfg(feature = "clients")]
            let lane = {
                let (mut lane, mut tally) = (lane, _tally);
                count_client(&mut tally, _c);
                lane.stats.client = Some(tally);
                lane
            };
            lane.finish_all().0
        })
        .collect();
    for (j, copy) in copy_of.iter().enumerate() {
        if let Some(&i) = copy.as_ref() {
            stats[j] = stats[i].clone();
        }
    }
    Ok(stats)
}

#[cfg(feature = "storm")]
/// Whether limiter `b` decides every try as `a` does, from the start of a run: so far, a fixed
/// window and one of the same limit and window, counting its rejects or not
/// ([`crate::limiter::FixedWindow::decides_as`]). A lane's run depends on its limiter's
/// decisions alone, so the two runs are equal; the laws' test of every limiter in one run,
/// each against itself traced alone, holds it.
fn decides_alike(a: &Limiter, b: &Limiter) -> bool {
    match (a, b) {
        (Limiter::FixedWindow(a), Limiter::FixedWindow(b)) => a.decides_as(b),
        _ => false,
    }
}

/// Adds client `c`'s numbers to `tally`; returns 1 if it was locked out (served under half
/// its requests), else 0.
#[cfg(feature = "clients")]
fn count_client(tally: &mut ClientStats, c: &RetryClient) -> u64 {
    let locked = u64::from(2 * c.admitted < c.requests);
    tally.gave_up += c.gave_up;
    tally.clients += 1;
    tally.locked += locked;
    locked
}

/// Runs run `run` of the scenario for every limiter. The scenario must have been validated.
pub fn simulate_run(scenario: &Scenario, run: u32) -> Result<Vec<RunStats>, Error> {
    let mut lanes = Vec::with_capacity(scenario.limiters.len());
    for spec in &scenario.limiters {
        lanes.push(Lane::new(scenario.build_limiter(spec, run)?, scenario));
    }
    if scenario.traffic.closed_loop() {
        #[cfg(feature = "storm")]
        let lanes = match classic_lanes(scenario, run, lanes) {
            Ok(stats) => return Ok(stats),
            Err(lanes) => lanes,
        };
        return Ok(lanes
            .into_iter()
            .map(|lane| run_closed_loop(scenario, run, lane).0)
            .collect());
    }
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
    Ok(lanes.into_iter().map(|lane| lane.finish().0).collect())
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

/// The latest tries, oldest first: at least the latest `peak_second` of them (or all), which
/// include every try of the trailing second; dropped down to those once there are over twice
/// as many and a thousand more, so that it holds at most about twice the busiest second's.
#[cfg(feature = "clients")]
#[derive(Debug, Clone, Default)]
struct Second {
    times: Vec<Micros>,
}

/// Counts a try at `at` in the trailing second `second`, raising `tally`'s peak. As in the
/// auditor, the second `(at − 1 s, at]` is busier than any before exactly when the
/// `peak`-th latest try before this one is still inside it: one load, no scan.
#[cfg(feature = "clients")]
#[inline]
fn peak(second: &mut Second, tally: &mut ClientStats, at: Micros) {
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

/// Feeds run `run`'s arrivals to one lane, chunk by chunk.
fn run_open_loop(scenario: &Scenario, run: u32, lane: &mut Lane) {
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
