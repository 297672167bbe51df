//! The retrying client, the one traffic that reacts to decisions, and fleets of them.

use super::params::{Backoff, Jitter, RetryPolicy};
use super::Arrivals;
use crate::rng::Rng;
use crate::time::Micros;
#[cfg(feature = "clients")]
use crate::time::MINUTE;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

#[cfg(feature = "storm")]
mod storm;
#[cfg(feature = "storm")]
pub use storm::{Answer, Skipped};

#[cfg(feature = "storm")]
/// First tries drawn at a time for [`RetryClient::drive_fresh`]: 8 KB.
pub const FRESH_CHUNK: usize = 1024;

/// One try of one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Try {
    /// When it is sent.
    pub at: Micros,
    /// Which try it is: 1 for a new request.
    pub attempt: u32,
    /// When the request's first try was sent.
    pub first: Micros,
    /// The gap before this try as the backoff computed it (before jitter; for decorrelated
    /// jitter, the last wait), from which the next gap grows. 0 for a first try.
    sleep: Micros,
    /// How many first tries its client had sent when it was sent, this one included: a
    /// budget counts those alone, so that a rejection heard after later tries were sent (a
    /// probe's) is judged as the simulator judges it, at once.
    seen: u64,
}

/// A retrying client: first tries from the scenario's stream plus a spike; every rejected
/// try comes back after the policy's gap until it has had `tries` tries (or the budget says
/// no). The simulator tells it each decision at once; `ratelab probe` tells it what a real
/// limiter answered.
#[derive(Debug, Clone)]
pub struct RetryClient {
    first: Arrivals,
    next_first: Option<Micros>,
    spike_left: u64,
    spike_at: Micros,
    /// Pending retries, by time, then in the order they were scheduled.
    retries: VecDeque<Try>,
    tries: u32,
    every: Micros,
    policy: RetryPolicy,
    /// Draws the jitter (read only with the core's `clients` feature).
    #[cfg_attr(not(feature = "clients"), allow(dead_code))]
    jitter: Rng,
    /// With a budget: first tries and retries of the trailing minute.
    firsts: VecDeque<Micros>,
    #[cfg_attr(not(feature = "clients"), allow(dead_code))]
    spent: VecDeque<Micros>,
    /// First tries sent, and how many of them have left `firsts` (older than a minute).
    firsts_sent: u64,
    #[cfg_attr(not(feature = "clients"), allow(dead_code))]
    firsts_gone: u64,
    /// No retry is due later than this: past it the request gives up (2^53 µs in the
    /// simulator; the probe's hour in a probe, where a server's `Retry-After` could say more).
    horizon: Micros,
    /// Requests sent, admitted, and given up (out of tries, budget or time).
    pub requests: u64,
    /// Requests admitted.
    pub admitted: u64,
    /// Requests that ran out of tries, of budget, or of time (a retry past 2^53 µs).
    pub gave_up: u64,
    /// Of those, the requests whose retry would have come past the horizon.
    pub past_horizon: u64,
}

impl RetryClient {
    /// A client whose first tries are `first`, plus `spike` tries at `spike_at`, each retried
    /// after a rejection, as `policy` says (with `every` the fixed gap), until it has had
    /// `tries` tries; `jitter` draws its jitter.
    pub fn new(
        mut first: Arrivals,
        spike: u64,
        spike_at: Micros,
        tries: u32,
        every: Micros,
        policy: RetryPolicy,
        jitter: Rng,
    ) -> Self {
        RetryClient {
            next_first: first.next(),
            first,
            spike_left: spike,
            spike_at,
            retries: VecDeque::new(),
            tries,
            every,
            policy,
            jitter,
            firsts: VecDeque::new(),
            spent: VecDeque::new(),
            firsts_sent: 0,
            firsts_gone: 0,
            horizon: crate::time::MAX_TIME,
            requests: 0,
            admitted: 0,
            gave_up: 0,
            past_horizon: 0,
        }
    }

    /// When the next try comes, without taking it.
    #[inline]
    pub fn peek(&self) -> Option<Micros> {
        // Written out rather than as the minimum of an array of options: this runs once or
        // twice per try of a retry storm, and the array's copies cost more than the rest of a
        // decision.
        let mut t = self.next_first;
        if self.spike_left > 0 && t.is_none_or(|f| self.spike_at < f) {
            t = Some(self.spike_at);
        }
        match self.retries.front() {
            Some(r) if t.is_none_or(|f| r.at < f) => Some(r.at),
            _ => t,
        }
    }

    /// The shortest gap the policy can leave between a rejected try and its retry, when the
    /// retry is not timed by a `Retry-After` (the probe's sender must have heard an answer that
    /// long before the retry is due). A `Retry-After` the probe honours counts from the
    /// moment its answer was heard, so a retry it times is never due before that.
    pub fn min_gap(&self) -> Micros {
        self.gap_bounds().iter().map(|b| b.0).min().unwrap_or(0)
    }

    /// The longest gap the policy can leave between a rejected try and its retry, without
    /// `Retry-After` (which only a limiter knows).
    pub fn max_gap(&self) -> Micros {
        self.gap_bounds().iter().map(|b| b.1).max().unwrap_or(0)
    }

    /// The shortest and longest gap before each retry, the first retry's first, when the
    /// policy times it (no `Retry-After`): the range every draw of its jitter falls in. A
    /// probe's worst case is made of these.
    pub fn gap_bounds(&self) -> Vec<(Micros, Micros)> {
        let retries = self.tries.saturating_sub(1) as usize;
        let mut out = Vec::with_capacity(retries);
        let (base, factor, cap) = match self.policy.backoff {
            Backoff::Fixed => (self.every, 1000, self.every),
            Backoff::Exponential { base, factor, cap } => (base, factor, cap),
        };
        // The backoff's own gap `d`, and the last decorrelated wait's upper bound.
        let (mut d, mut last_hi) = (base.min(cap), base);
        for _ in 0..retries {
            out.push(match self.policy.jitter {
                Jitter::None => (d, d),
                Jitter::Full => (0, d),
                Jitter::Equal => (d / 2, d / 2 + d / 2),
                Jitter::Decorrelated => {
                    let hi = last_hi.saturating_mul(3).max(base).min(cap);
                    last_hi = hi;
                    (base.min(cap), hi)
                }
            });
            d = (u128::from(d) * u128::from(factor) / 1000).min(u128::from(cap)) as Micros;
        }
        out
    }

    /// The try `attempt` due at `at` of a fixed-policy client (one that hears back times and
    /// try numbers only): its first try came `(attempt − 1) · every` before.
    pub fn fixed_try(&self, at: Micros, attempt: u32) -> Try {
        Try {
            at,
            attempt,
            first: at.saturating_sub(u64::from(attempt.saturating_sub(1)) * self.every),
            sleep: self.every,
            seen: self.firsts_sent,
        }
    }

    /// No retry later than `at`: a request whose retry would come later gives up.
    pub fn set_horizon(&mut self, at: Micros) {
        self.horizon = at.min(crate::time::MAX_TIME);
    }

    /// Its tries per request in all, the first included.
    pub fn tries(&self) -> u32 {
        self.tries
    }

    /// Its policy.
    pub fn policy(&self) -> RetryPolicy {
        self.policy
    }

    /// Whether it asks the limiter for `Retry-After`.
    pub fn honors(&self) -> bool {
        self.policy.honor
    }

    /// The next try. Ties go to retries, then the spike, then the steady stream.
    #[allow(clippy::should_implement_trait)]
    #[inline]
    pub fn next(&mut self) -> Option<Try> {
        // The earliest of the three, ties in that order (see `peek` for why it is written out).
        let spike = (self.spike_left > 0).then_some(self.spike_at);
        let fresh = match (spike, self.next_first) {
            (Some(s), Some(f)) => Some((s <= f, s.min(f))),
            (Some(s), None) => Some((true, s)),
            (None, Some(f)) => Some((false, f)),
            (None, None) => None,
        };
        if let Some(r) = self.retries.front() {
            if fresh.is_none_or(|(_, t)| r.at <= t) {
                return self.pop_retry();
            }
        }
        let (is_spike, t) = fresh?;
        if is_spike {
            self.spike_left -= 1;
        } else {
            self.next_first = self.first.next();
        }
        if self.policy.budget.is_some() {
            self.firsts.push_back(t);
        }
        Some(self.first_try(t))
    }

    /// The queue's first retry, taken, with the first tries sent so far.
    #[inline(always)]
    fn pop_retry(&mut self) -> Option<Try> {
        let seen = self.firsts_sent;
        self.retries.pop_front().map(|r| Try { seen, ..r })
    }

    /// A new request's first try at `t`, counted.
    #[inline(always)]
    fn first_try(&mut self, t: Micros) -> Try {
        self.requests += 1;
        self.firsts_sent += 1;
        Try {
            at: t,
            attempt: 1,
            first: t,
            sleep: 0,
            seen: self.firsts_sent,
        }
    }

    /// Appends to `out` the tries [`RetryClient::next`] would give one by one while they come
    /// before `end`: at least one if any is left, at most `max` in all.
    pub fn take_before(&mut self, end: Micros, max: usize, out: &mut Vec<(u32, Try)>) {
        self.sweep(end, |tr| {
            out.push((0, tr));
            out.len() < max
        });
    }

    /// Hands `put` the tries [`RetryClient::next`] would give one by one while they come
    /// before `end` (at least one if any is left), until `put` says it has no room. The
    /// retries due before the next new request leave the queue in one sweep.
    #[inline]
    fn sweep(&mut self, end: Micros, mut put: impl FnMut(Try) -> bool) {
        let Some(tr) = self.next() else {
            return;
        };
        if !put(tr) {
            return;
        }
        loop {
            // The next new request's time (the spike's ties first), then every retry due no
            // later than it (retries win ties) and before `end`.
            let spike = (self.spike_left > 0).then_some(self.spike_at);
            let fresh = match (spike, self.next_first) {
                (Some(s), Some(f)) => s.min(f),
                (Some(s), None) => s,
                (None, Some(f)) => f,
                (None, None) => Micros::MAX,
            };
            let seen = self.firsts_sent;
            let due = fresh.min(end.saturating_sub(1));
            while let Some(r) = self.retries.front().filter(|r| r.at <= due) {
                let r = Try { seen, ..*r };
                self.retries.pop_front();
                if !put(r) {
                    return;
                }
            }
            // Nothing else before the end; otherwise the new request is next.
            if fresh >= end {
                return;
            }
            let Some(tr) = self.next() else {
                return;
            };
            if !put(tr) {
                return;
            }
        }
    }

    /// Whether this is the essays' client (a fixed gap, nothing drawn, no budget, no
    /// `Retry-After`) in a simulation (no horizon but 2^53 µs), whose tries
    /// [`RetryClient::drive_fresh`] can drive.
    pub fn classic(&self) -> bool {
        self.policy.is_classic() && self.horizon == crate::time::MAX_TIME && self.every > 0
    }

    /// `tr` was admitted.
    pub fn admitted(&mut self, _tr: Try) {
        self.admitted += 1;
    }

    /// `tr` was rejected: it comes back after the policy's gap (from `retry_after`, the
    /// limiter's answer, when the policy honours it) unless it was the last try, the budget
    /// is spent, or the retry would come past 2^53 µs. Rejections must be reported in the
    /// order of their times (the simulator does); a retry due before others is put in its
    /// place.
    pub fn rejected(&mut self, tr: Try, retry_after: Option<Micros>) {
        self.rejected_heard(tr, retry_after, 0);
    }

    /// [`RetryClient::rejected`], for a rejection heard at `heard` (a probe's): its retry is
    /// due when the policy says, but never before `heard`, since no real client retries a
    /// request before it has heard it was rejected. Rejections must be reported in the order
    /// the tries were taken ([`RetryClient::next`]), each after its try; other tries may have
    /// been taken in between, as a probe's sender takes them while answers are on their way,
    /// but none due after `heard`.
    pub fn rejected_heard(&mut self, tr: Try, retry_after: Option<Micros>, heard: Micros) {
        if tr.attempt >= self.tries || !self.budget_allows(&tr) {
            self.gave_up += 1;
            return;
        }
        let (wait, sleep) = self.gap(&tr);
        let wait = match retry_after.filter(|_| self.policy.honor) {
            Some(ra) => {
                let extra = if self.policy.jitter == Jitter::None {
                    0
                } else {
                    wait
                };
                ra.saturating_sub(tr.at).saturating_add(extra)
            }
            None => wait,
        };
        let at = tr.at.saturating_add(wait).max(heard);
        if at > self.horizon {
            self.gave_up += 1;
            self.past_horizon += 1;
            return;
        }
        let retry = Try {
            at,
            attempt: tr.attempt + 1,
            first: tr.first,
            sleep,
            // Set when it is taken.
            seen: 0,
        };
        if self.retries.back().is_none_or(|r| r.at <= at) {
            self.retries.push_back(retry);
        } else {
            let i = self.retries.partition_point(|r| r.at <= at);
            self.retries.insert(i, retry);
        }
    }

    /// Without the core's `clients` feature the policy is the essays': no budget.
    #[cfg(not(feature = "clients"))]
    fn budget_allows(&mut self, _: &Try) -> bool {
        true
    }

    /// Without the core's `clients` feature the policy is the essays': a fixed gap.
    #[cfg(not(feature = "clients"))]
    fn gap(&mut self, _: &Try) -> (Micros, Micros) {
        (self.every, self.every)
    }

    #[cfg(feature = "clients")]
    /// Whether the budget allows one more retry of `tr` (and if so, spends it): its client's
    /// retries over the trailing minute, this one included, against the first tries of that
    /// minute sent up to `tr` (`tr.seen` of them in all; later ones, sent while a probe's
    /// answer was on its way, are not counted, as the simulator has not sent them yet).
    fn budget_allows(&mut self, tr: &Try) -> bool {
        let Some(ppm) = self.policy.budget else {
            return true;
        };
        let from = tr.at.saturating_sub(MINUTE - 1);
        while self.firsts.front().is_some_and(|&x| x < from) {
            self.firsts.pop_front();
            self.firsts_gone += 1;
        }
        while self.spent.front().is_some_and(|&x| x < from) {
            self.spent.pop_front();
        }
        let firsts = tr.seen.saturating_sub(self.firsts_gone);
        let ok = (self.spent.len() as u128 + 1) * 1_000_000 <= u128::from(firsts) * u128::from(ppm);
        if ok {
            self.spent.push_back(tr.at);
        }
        ok
    }

    #[cfg(feature = "clients")]
    /// The wait before the retry of `tr`, and the sleep it grows from next time.
    fn gap(&mut self, tr: &Try) -> (Micros, Micros) {
        let (d, base, cap) = match self.policy.backoff {
            Backoff::Fixed => (self.every, self.every, self.every),
            Backoff::Exponential { base, factor, cap } => {
                let d = if tr.attempt == 1 {
                    base
                } else {
                    (u128::from(tr.sleep) * u128::from(factor) / 1000).min(u128::from(cap))
                        as Micros
                };
                (d.min(cap), base, cap)
            }
        };
        match self.policy.jitter {
            Jitter::None => (d, d),
            Jitter::Full => (self.jitter.between(0, d), d),
            Jitter::Equal => (d / 2 + self.jitter.between(0, d / 2), d),
            Jitter::Decorrelated => {
                let last = if tr.attempt == 1 { base } else { tr.sleep };
                let hi = last.saturating_mul(3).max(base);
                let w = self.jitter.between(base, hi).min(cap);
                (w, w)
            }
        }
    }
}

/// Clients sharing one key: each with its own first tries, spike and jitter, the same
/// policy; their tries merged in time order (ties to the lower client number).
///
/// The queue holds each client's next time under a generation number; a rejection that brings
/// a client's next try earlier queues it again under a new generation, and the entry it
/// replaces is dropped when it comes up. Memory: one entry per client, plus one per such
/// rejection until its stale entry comes up.
#[derive(Debug, Clone)]
pub struct RetryClients {
    clients: Vec<RetryClient>,
    queue: BinaryHeap<Reverse<(Micros, u32, u64)>>,
    generation: Vec<u64>,
}

impl RetryClients {
    /// The fleet `clients` (at least one).
    pub fn new(clients: Vec<RetryClient>) -> Self {
        let queue = clients
            .iter()
            .enumerate()
            .filter_map(|(i, c)| c.peek().map(|t| Reverse((t, i as u32, 0))))
            .collect();
        let generation = vec![0; clients.len()];
        RetryClients {
            clients,
            queue,
            generation,
        }
    }

    /// The clients.
    pub fn clients(&self) -> &[RetryClient] {
        &self.clients
    }

    #[cfg(feature = "storm")]
    /// The one client, taken out, when there is one.
    pub fn into_single(self) -> Option<RetryClient> {
        let mut clients = self.clients;
        match clients.len() {
            1 => clients.pop(),
            _ => None,
        }
    }

    /// The one client, when there is one.
    pub fn single_mut(&mut self) -> Option<&mut RetryClient> {
        match self.clients.as_mut_slice() {
            [one] => Some(one),
            _ => None,
        }
    }

    /// No retry of any of them later than `at` (see [`RetryClient::set_horizon`]).
    pub fn set_horizon(&mut self, at: Micros) {
        for c in &mut self.clients {
            c.set_horizon(at);
        }
    }

    /// When the next try of any client comes, without taking it.
    pub fn peek(&self) -> Option<Micros> {
        match self.clients.as_slice() {
            [one] => one.peek(),
            _ => self.queue.peek().map(|r| r.0 .0),
        }
    }

    /// The shortest gap any of them can leave between a rejected try and its retry, when no
    /// `Retry-After` times it ([`RetryClient::min_gap`]).
    pub fn min_gap(&self) -> Micros {
        self.clients
            .iter()
            .map(RetryClient::min_gap)
            .min()
            .unwrap_or(0)
    }

    /// Whether they ask for `Retry-After`.
    pub fn honors(&self) -> bool {
        self.clients.iter().any(RetryClient::honors)
    }

    /// The next try of any client, and whose it is.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Option<(u32, Try)> {
        if let [one] = self.clients.as_mut_slice() {
            return one.next().map(|tr| (0, tr));
        }
        self.merged()
    }

    /// Appends to `out` the tries [`RetryClients::next`] would give one by one, with their
    /// clients, while they come before `end`: at least one if any is left, at most `max` in
    /// all.
    pub fn take_before(&mut self, end: Micros, max: usize, out: &mut Vec<(u32, Try)>) {
        if let [one] = self.clients.as_mut_slice() {
            one.take_before(end, max, out);
            return;
        }
        while let Some(taken) = self.next() {
            out.push(taken);
            if out.len() >= max || self.peek().is_none_or(|t| t >= end) {
                break;
            }
        }
    }

    /// Without the core's `clients` feature there is one client (the spec has no `clients=`).
    #[cfg(not(feature = "clients"))]
    fn merged(&mut self) -> Option<(u32, Try)> {
        None
    }

    /// The next try of several clients, from the queue.
    #[cfg(feature = "clients")]
    fn merged(&mut self) -> Option<(u32, Try)> {
        loop {
            let Reverse((_, c, g)) = self.queue.pop()?;
            if g != self.generation[c as usize] {
                continue;
            }
            let client = &mut self.clients[c as usize];
            let tr = client.next()?;
            if let Some(t) = client.peek() {
                self.generation[c as usize] += 1;
                self.queue
                    .push(Reverse((t, c, self.generation[c as usize])));
            }
            self.drop_stale();
            return Some((c, tr));
        }
    }

    /// Client `c`'s try `tr` was admitted.
    #[inline]
    pub fn admitted(&mut self, c: u32, tr: Try) {
        self.clients[c as usize].admitted(tr);
    }

    /// Client `c`'s try `tr` was rejected (see [`RetryClient::rejected`]).
    #[inline]
    pub fn rejected(&mut self, c: u32, tr: Try, retry_after: Option<Micros>) {
        self.rejected_heard(c, tr, retry_after, 0);
    }

    /// Client `c`'s try `tr` was rejected, heard at `heard` (see
    /// [`RetryClient::rejected_heard`]).
    pub fn rejected_heard(&mut self, c: u32, tr: Try, retry_after: Option<Micros>, heard: Micros) {
        let several = self.clients.len() > 1;
        let client = &mut self.clients[c as usize];
        if !several {
            client.rejected_heard(tr, retry_after, heard);
            return;
        }
        let before = client.peek();
        client.rejected_heard(tr, retry_after, heard);
        let after = client.peek();
        if cfg!(feature = "clients") && after != before {
            if let Some(t) = after {
                self.generation[c as usize] += 1;
                self.queue
                    .push(Reverse((t, c, self.generation[c as usize])));
            }
            self.drop_stale();
        }
    }

    /// Drops the replaced entries at the queue's head, so that its head is a client's next
    /// time ([`RetryClients::peek`]).
    fn drop_stale(&mut self) {
        while let Some(&Reverse((_, c, g))) = self.queue.peek() {
            if g == self.generation[c as usize] {
                break;
            }
            self.queue.pop();
        }
    }
}
