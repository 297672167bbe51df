//! The probe's plan: what to send and when, reacting to rejections for a retrying client as
//! the simulator's client does (the same [`RetryClients`], every policy), and the caps a plan
//! is checked against before anything is sent.

use crate::error::Error;
use crate::sim::Scenario;
use crate::time::{format_duration, Micros, HOUR, SECOND};
use crate::traffic::{Jitter, RetryClient, RetryClients, Try};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// The most requests one probe may send, retries included.
pub const MAX_REQUESTS: u64 = 1_000_000;
/// The most requests a probe may send within any one second: a peak, held in every
/// one-second span of the plan (worst-case retries included), not an average over the run.
pub const MAX_RATE: u64 = 5_000;
/// The most requests a probe may send within any one millisecond (worst-case retries
/// included).
pub const MAX_PER_MS: u64 = 5_000;
/// The most targets (gateways) one probe sends to: the most gateways a model fleet may have.
pub const MAX_TARGETS: u64 = 64;
/// The longest probe: no request, retries included, is due later than this after the start.
pub const MAX_DURATION: Micros = HOUR;

/// What a probe will send: the scenario's first tries and, for a retrying client, its retries.
#[derive(Debug, Clone)]
pub struct Plan {
    source: Source,
    /// What the plan will send, for the summary printed before sending.
    pub summary: PlanSummary,
}

#[derive(Debug, Clone)]
enum Source {
    Open { times: Vec<Micros>, next: usize },
    Closed(Box<Closed>),
}

/// One try the plan hands out: when it is due, which try of its request it is, and the
/// ticket by which the sender reports its answer ([`Plan::answered`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Due {
    /// When it is due, µs from the start.
    pub at: Micros,
    /// Which try it is: 1 for a new request.
    pub attempt: u32,
    /// Its number among the tries handed out, from 0.
    pub ticket: u64,
}

/// What a limiter answered to a try, as the plan's client hears it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// Admitted.
    Admitted,
    /// Rejected. `retry_after`: when the limiter said to come back, in µs from the start
    /// (an HTTP `Retry-After` of `d` seconds heard in an answer that came at `h` is `h + d`),
    /// if it said; a client that honours `Retry-After` comes back then, one that does not, or
    /// that heard none, after its policy's gap.
    Rejected {
        /// See above.
        retry_after: Option<Micros>,
    },
    /// No decision: another status, no answer, or no answer in time. The request ends there
    /// (it may or may not have reached the limiter).
    Undecided,
}

/// A retrying client's side of a plan: the simulator's clients, the tries they sent whose
/// answers they have not been told yet, and the caps a server's `Retry-After` could break.
#[derive(Debug, Clone)]
struct Closed {
    clients: RetryClients,
    /// Tries handed out and not yet told to their client, by ticket: the client, the try,
    /// and its answer once heard.
    pending: BTreeMap<u64, (u32, Try, Option<Answer>)>,
    /// The same tries by due time, for the oldest.
    unapplied: BTreeSet<(Micros, u64)>,
    /// With a policy whose client keeps state across rejections (jitter draws, a budget):
    /// each client's pending tickets in the order handed out, since its answers are told to
    /// it in that order, as the simulator tells them.
    order: Option<Vec<VecDeque<u64>>>,
    next_ticket: u64,
    /// With `Retry-After` honoured: the due times of the last second's tries, to hold the
    /// rate caps as the probe runs, and how many tries were not sent for them.
    recent: Option<VecDeque<Micros>>,
    held_back: u64,
}

/// What a plan will send, known before anything is sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanSummary {
    /// First tries (new requests).
    pub first_tries: u64,
    /// The most requests, if every retry is sent.
    pub most: u64,
    /// When the last first try is due, in µs from the start.
    pub last_at: Micros,
    /// The latest a try could be due, if every try before it is rejected: `last_at` plus
    /// `tries − 1` retry gaps (`last_at` for traffic that does not retry).
    #[serde(default)]
    pub last_try_at: Micros,
    /// The most requests due within any one millisecond, if every retry is sent.
    pub peak_per_ms: u64,
    /// The most requests due within any one second, if every retry is sent.
    pub peak_per_s: u64,
}

impl PlanSummary {
    /// One line for the terminal, before anything is sent.
    pub fn describe(&self) -> String {
        let most = if self.most > self.first_tries {
            format!(
                ", up to {} with retries (the last due by {})",
                self.most,
                format_duration(self.last_try_at.max(1))
            )
        } else {
            String::new()
        };
        format!(
            "{} request(s){most} over {}, at most {} in one second and {} in one millisecond",
            self.first_tries,
            format_duration(self.last_at.max(1)),
            self.peak_per_s,
            self.peak_per_ms
        )
    }
}

impl Plan {
    /// The plan for run 0 of `scenario`, refused before anything is sent when it breaks a cap:
    /// [`MAX_REQUESTS`], [`MAX_DURATION`], [`MAX_RATE`] and [`MAX_PER_MS`]. The caps hold for
    /// the worst case of a retrying client, in which every try but the last is rejected: its
    /// last retry is due `tries − 1` gaps after its last first try, and the rate caps are
    /// peaks over every span of one second (one millisecond) of all the tries it could send.
    pub fn new(scenario: &Scenario) -> Result<Plan, Error> {
        if scenario.duration > MAX_DURATION {
            return Err(Error::invalid(
                "probe: duration",
                &format_duration(scenario.duration),
                "a duration up to 1h",
            ));
        }
        check_size(scenario)?;
        let closed = scenario.retry_clients(0);
        let mut first: Vec<Micros> = Vec::new();
        // The gaps before each retry in the worst case, shortest and longest.
        let mut bounds: Vec<(Micros, Micros)> = Vec::new();
        let mut fixed = None;
        // Every request's tries if each is rejected to its last: its client's tries.
        let mut most: u64 = 0;
        match &closed {
            Some(clients) => {
                // Over a mix, each retry's gaps from the shortest and longest of any group's:
                // a worst case no client's tries can exceed.
                bounds = envelope(clients.clients().iter().map(|c| c.gap_bounds()));
                let groups: Vec<_> = scenario.traffic.client_groups().collect();
                if let [g] = groups.as_slice() {
                    if g.policy.backoff == crate::traffic::Backoff::Fixed
                        && g.policy.jitter == Jitter::None
                    {
                        fixed = Some(g.every);
                    }
                }
                // Every client's first tries, spikes included: the clients' own, as they
                // send them when every try is admitted.
                let mut all = clients.clone();
                while let Some((c, tr)) = all.next() {
                    first.push(tr.at);
                    most += u64::from(clients.clients()[c as usize].tries());
                    if first.len() as u64 > MAX_REQUESTS {
                        return Err(too_many(first.len() as u64));
                    }
                }
            }
            None => {
                for t in scenario.arrivals(0) {
                    first.push(t);
                    most += 1;
                    if first.len() as u64 > MAX_REQUESTS {
                        return Err(too_many(first.len() as u64));
                    }
                }
            }
        }
        let tries = bounds.len() as u64 + 1;
        first.sort_unstable();
        let first_tries = first.len() as u64;
        if most > MAX_REQUESTS {
            return Err(too_many(most));
        }
        let last_at = first.last().copied().unwrap_or(0);
        // Each try's earliest and latest offset from its request's first try.
        let mut lo: Vec<Micros> = vec![0];
        let mut hi: Vec<Micros> = vec![0];
        for &(a, b) in &bounds {
            lo.push(lo[lo.len() - 1].saturating_add(a));
            hi.push(hi[hi.len() - 1].saturating_add(b));
        }
        let last_try_at = last_at.saturating_add(hi[hi.len() - 1]);
        if last_try_at > MAX_DURATION {
            let detail = if let (true, Some(every)) = (tries > 1, fixed) {
                format!(
                    "its last retry could be due at {} (the last new request at {}, then up to {} more tries {} apart); a probe lasts at most 1h, retries included (fewer tries, a shorter gap or an earlier spike)",
                    format_duration(last_try_at),
                    format_duration(last_at),
                    tries - 1,
                    format_duration(every)
                )
            } else if tries > 1 {
                format!(
                    "its last retry could be due at {} (the last new request at {}, then up to {} more tries, {} in all at the longest gaps the policy allows); a probe lasts at most 1h, retries included (fewer tries, a shorter cap or base, or an earlier spike)",
                    format_duration(last_try_at),
                    format_duration(last_at),
                    tries - 1,
                    format_duration(hi[hi.len() - 1])
                )
            } else {
                format!(
                    "its last request is due at {}; a probe lasts at most 1h (a shorter window or duration)",
                    format_duration(last_at)
                )
            };
            return Err(Error::TooLarge {
                what: "probe traffic".into(),
                detail,
            });
        }
        // Every time is now at most an hour, so the shifted copies cannot overflow.
        let peaks = Peaks::within(&first, &lo, &hi);
        let summary = PlanSummary {
            first_tries,
            most,
            last_at,
            last_try_at,
            peak_per_ms: peaks.per_ms,
            peak_per_s: peaks.per_s,
        };
        let retries = if tries > 1 { ", retries included" } else { "" };
        if summary.peak_per_ms > MAX_PER_MS {
            return Err(Error::TooLarge {
                what: "probe traffic".into(),
                detail: format!(
                    "up to {} requests in one millisecond (at {}{retries}); a probe sends at most {MAX_PER_MS} in one millisecond and {MAX_RATE} in any one second",
                    summary.peak_per_ms,
                    format_duration(peaks.per_ms_at.max(1)),
                ),
            });
        }
        if summary.peak_per_s > MAX_RATE {
            return Err(Error::TooLarge {
                what: "probe traffic".into(),
                detail: format!(
                    "up to {} requests in one second (the second ending at {}{retries}); a probe sends at most {MAX_RATE} in any one second, a peak and not an average, and {MAX_PER_MS} in one millisecond",
                    summary.peak_per_s,
                    format_duration(peaks.per_s_at.max(1)),
                ),
            });
        }
        let source = match closed {
            Some(mut clients) => {
                // A server's `Retry-After` could say more than an hour.
                clients.set_horizon(MAX_DURATION);
                let policies = || clients.clients().iter().map(|c| c.policy());
                let ordered = policies().any(|p| p.jitter != Jitter::None || p.budget.is_some());
                let honor = policies().any(|p| p.honor);
                Source::Closed(Box::new(Closed {
                    order: ordered.then(|| vec![VecDeque::new(); clients.clients().len()]),
                    recent: honor.then(VecDeque::new),
                    clients,
                    pending: BTreeMap::new(),
                    unapplied: BTreeSet::new(),
                    next_ticket: 0,
                    held_back: 0,
                }))
            }
            None => Source::Open {
                times: first,
                next: 0,
            },
        };
        Ok(Plan { source, summary })
    }

    /// When the next request is due, if any is left (for a retrying client: given the
    /// answers told so far).
    pub fn peek(&self) -> Option<Micros> {
        match &self.source {
            Source::Open { times, next } => times.get(*next).copied(),
            Source::Closed(c) => c.clients.peek(),
        }
    }

    /// Takes the next request: when it is due, which try it is, and its ticket. With
    /// `Retry-After` honoured, a try that would be over [`MAX_RATE`] within the second up to
    /// its due time, or over [`MAX_PER_MS`] within the millisecond, is not handed out (a
    /// server's `Retry-After` can herd retries where the worst case checked up front has
    /// none): [`Plan::held_back`] counts them.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Option<Due> {
        self.next_by(Micros::MAX)
    }

    /// [`Plan::next`], if the next request is due by `by`: a sender that waited until one
    /// was due takes it with this, and a try held back never lets a later one out early.
    pub fn next_by(&mut self, by: Micros) -> Option<Due> {
        if self.peek()? > by {
            return None;
        }
        match &mut self.source {
            Source::Open { times, next } => {
                let t = times.get(*next).copied()?;
                let ticket = *next as u64;
                *next += 1;
                Some(Due {
                    at: t,
                    attempt: 1,
                    ticket,
                })
            }
            Source::Closed(c) => c.next(by),
        }
    }

    /// For a retrying client: the shortest gap its policy leaves between a rejected try and
    /// its retry, when no `Retry-After` times the retry (one that does is never due before
    /// its answer was heard). A sender must have heard every answer to tries due before
    /// `t − retry_gap` before it sends at `t`, or the retry it brings may be due before tries
    /// already sent; tries due at one instant need not wait for each other's answers.
    pub fn retry_gap(&self) -> Option<Micros> {
        match &self.source {
            Source::Open { .. } => None,
            Source::Closed(c) => c.clients.clients().iter().map(RetryClient::min_gap).min(),
        }
    }

    /// The earliest due time of a try whose answer the client has not been told yet.
    pub fn oldest_unanswered(&self) -> Option<Micros> {
        match &self.source {
            Source::Open { .. } => None,
            Source::Closed(c) => c.unapplied.first().map(|&(t, _)| t),
        }
    }

    /// The sender heard `answer` to the try with `ticket` at `heard` (µs from the start). A
    /// retry it brings is due when the client's policy says, and never before `heard`. With
    /// jitter or a budget a client is told its answers in the order its tries were handed
    /// out, as the simulator tells it: an answer heard before an earlier try's waits for it.
    /// A ticket already answered or given up on is ignored.
    pub fn answered(&mut self, ticket: u64, answer: Answer, heard: Micros) {
        if let Source::Closed(c) = &mut self.source {
            c.answered(ticket, answer, heard);
        }
    }

    /// Gives up on the oldest try still unanswered ([`Plan::oldest_unanswered`]), heard of at
    /// `heard`: it counts as undecided, and its answer, if it comes, is ignored.
    pub fn give_up_oldest(&mut self, heard: Micros) {
        if let Source::Closed(c) = &mut self.source {
            if let Some(&(_, ticket)) = c.unapplied.first() {
                c.answered(ticket, Answer::Undecided, heard);
            }
        }
    }

    /// Tries not handed out because a server's `Retry-After` would have put them over a
    /// rate cap or past the hour (see [`Plan::next`]): 0 unless `Retry-After` is honoured.
    pub fn held_back(&self) -> u64 {
        match &self.source {
            Source::Open { .. } => 0,
            Source::Closed(c) => {
                c.held_back
                    + c.clients
                        .clients()
                        .iter()
                        .map(|k| k.past_horizon)
                        .sum::<u64>()
            }
        }
    }

    /// The retrying clients, as told so far (`None` for traffic that does not retry).
    pub fn clients(&self) -> Option<&RetryClients> {
        match &self.source {
            Source::Open { .. } => None,
            Source::Closed(c) => Some(&c.clients),
        }
    }
}

impl Closed {
    fn next(&mut self, by: Micros) -> Option<Due> {
        loop {
            if self.clients.peek()? > by {
                return None;
            }
            let (client, tr) = self.clients.next()?;
            if let Some(recent) = &mut self.recent {
                while recent.front().is_some_and(|&u| u + SECOND <= tr.at) {
                    recent.pop_front();
                }
                let in_ms = recent.len() - recent.partition_point(|&u| u + 1_000 <= tr.at);
                if recent.len() as u64 >= MAX_RATE || in_ms as u64 >= MAX_PER_MS {
                    // Over a cap: not sent, and its request ends here.
                    self.held_back += 1;
                    continue;
                }
                recent.push_back(tr.at);
            }
            let ticket = self.next_ticket;
            self.next_ticket += 1;
            self.pending.insert(ticket, (client, tr, None));
            self.unapplied.insert((tr.at, ticket));
            if let Some(order) = &mut self.order {
                order[client as usize].push_back(ticket);
            }
            return Some(Due {
                at: tr.at,
                attempt: tr.attempt,
                ticket,
            });
        }
    }

    fn answered(&mut self, ticket: u64, answer: Answer, heard: Micros) {
        let Some(entry) = self.pending.get_mut(&ticket) else {
            return;
        };
        if entry.2.is_some() {
            return;
        }
        entry.2 = Some(answer);
        let client = entry.0;
        match &mut self.order {
            None => self.tell(ticket, heard),
            Some(order) => {
                // Its client's answers so far, in the order its tries were handed out.
                let mut ready = Vec::new();
                let queue = &mut order[client as usize];
                while let Some(&t) = queue.front() {
                    if self.pending.get(&t).is_some_and(|e| e.2.is_some()) {
                        ready.push(t);
                        queue.pop_front();
                    } else {
                        break;
                    }
                }
                for t in ready {
                    self.tell(t, heard);
                }
            }
        }
    }

    /// Tells a try's client its answer.
    fn tell(&mut self, ticket: u64, heard: Micros) {
        let Some((client, tr, Some(answer))) = self.pending.remove(&ticket) else {
            return;
        };
        self.unapplied.remove(&(tr.at, ticket));
        match answer {
            Answer::Admitted => self.clients.admitted(client, tr),
            Answer::Rejected { retry_after } => {
                self.clients.rejected_heard(client, tr, retry_after, heard);
            }
            Answer::Undecided => {}
        }
    }
}

/// The busiest millisecond and second of a plan's worst case, and where they end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Peaks {
    pub(super) per_ms: u64,
    per_ms_at: Micros,
    pub(super) per_s: u64,
    per_s_at: Micros,
}

impl Peaks {
    /// The peaks of every try a retrying client could send: each first try in `first` (sorted)
    /// and, if all its tries are rejected, `tries − 1` retries `every` apart.
    #[cfg(test)]
    pub(super) fn of(first: &[Micros], tries: u64, every: Micros) -> Peaks {
        let offsets: Vec<Micros> = (0..tries).map(|j| j.saturating_mul(every)).collect();
        Peaks::within(first, &offsets, &offsets)
    }

    /// The peaks of every try a retrying client could send, when try `j` of a request whose
    /// first try is at `f` (each in `first`, sorted) can come anywhere in `[f + lo[j], f +
    /// hi[j]]` (one try a request for every `j`; `lo[0] = hi[0] = 0`): a span holds at most
    /// the tries whose range meets it, and that count is what is bounded. With a fixed gap
    /// the ranges are points and the peaks exact. The tries are never held all at once:
    /// shifted copies of `first` are merged on the fly, a leading merge of the ranges' starts
    /// counting into each span and a trailing one of their ends, per span, counting out, so
    /// the work is O(n log tries) for n tries and the memory O(tries).
    pub(super) fn within(first: &[Micros], lo: &[Micros], hi: &[Micros]) -> Peaks {
        let mut tail_ms = Merged::shifted(first, hi).peekable();
        let mut tail_s = Merged::shifted(first, hi).peekable();
        let (mut seen, mut left_ms, mut left_s) = (0u64, 0u64, 0u64);
        let mut peaks = Peaks {
            per_ms: 0,
            per_ms_at: 0,
            per_s: 0,
            per_s_at: 0,
        };
        for t in Merged::shifted(first, lo) {
            seen += 1;
            // A span of length d ending at t meets the ranges that start at or before t and
            // end after t − d.
            while tail_ms.next_if(|&u| u + 1_000 <= t).is_some() {
                left_ms += 1;
            }
            while tail_s.next_if(|&u| u + SECOND <= t).is_some() {
                left_s += 1;
            }
            if seen - left_ms > peaks.per_ms {
                peaks.per_ms = seen - left_ms;
                peaks.per_ms_at = t;
            }
            if seen - left_s > peaks.per_s {
                peaks.per_s = seen - left_s;
                peaks.per_s_at = t;
            }
        }
        peaks
    }
}

/// Copies of the sorted `first`, the j-th shifted by `offsets[j]`, merged in order.
pub(super) struct Merged<'a> {
    first: &'a [Micros],
    offsets: Vec<Micros>,
    /// The next time of each copy that has one: (time, copy, index into `first`).
    heads: std::collections::BinaryHeap<std::cmp::Reverse<(Micros, usize, usize)>>,
}

impl<'a> Merged<'a> {
    /// `tries` copies, the j-th shifted by `j × every`.
    #[cfg(test)]
    pub(super) fn new(first: &'a [Micros], tries: u64, every: Micros) -> Self {
        let offsets: Vec<Micros> = (0..tries).map(|j| j.saturating_mul(every)).collect();
        Merged::shifted(first, &offsets)
    }

    /// A copy for each offset.
    pub(super) fn shifted(first: &'a [Micros], offsets: &[Micros]) -> Self {
        let heads = match first.first() {
            Some(&t) => offsets
                .iter()
                .enumerate()
                .map(|(j, &o)| std::cmp::Reverse((t.saturating_add(o), j, 0)))
                .collect(),
            None => std::collections::BinaryHeap::new(),
        };
        Merged {
            first,
            offsets: offsets.to_vec(),
            heads,
        }
    }
}

impl Iterator for Merged<'_> {
    type Item = Micros;

    fn next(&mut self) -> Option<Micros> {
        let std::cmp::Reverse((t, j, i)) = self.heads.pop()?;
        if let Some(&next) = self.first.get(i + 1) {
            let shifted = next.saturating_add(self.offsets[j]);
            self.heads.push(std::cmp::Reverse((shifted, j, i + 1)));
        }
        Some(t)
    }
}

/// Refuses, from the expected number of requests alone, traffic far beyond [`MAX_REQUESTS`]:
/// a check cheap enough to make before anything else.
pub fn check_size(scenario: &Scenario) -> Result<(), Error> {
    // Over a mix, the most tries of any group.
    let tries = (scenario.traffic.client_groups())
        .map(|g| f64::from(g.tries))
        .fold(1.0, f64::max);
    let expected = scenario.expected_arrivals() * tries;
    if expected > 2.0 * MAX_REQUESTS as f64 {
        return Err(too_many(expected.min(1e18) as u64));
    }
    Ok(())
}

fn too_many(n: u64) -> Error {
    Error::TooLarge {
        what: "probe traffic".into(),
        detail: format!(
            "about {n} requests; a probe sends at most {MAX_REQUESTS} (a shorter duration or lower rate)"
        ),
    }
}

/// The gaps before each retry that no client of `each` (their [`RetryClient::gap_bounds`])
/// goes outside: retry `k`'s shortest and longest over the clients that have a retry `k`.
fn envelope(each: impl Iterator<Item = Vec<(Micros, Micros)>>) -> Vec<(Micros, Micros)> {
    let mut out: Vec<(Micros, Micros)> = Vec::new();
    for bounds in each {
        for (k, &(lo, hi)) in bounds.iter().enumerate() {
            match out.get_mut(k) {
                Some(b) => *b = (b.0.min(lo), b.1.max(hi)),
                None => out.push((lo, hi)),
            }
        }
    }
    out
}
