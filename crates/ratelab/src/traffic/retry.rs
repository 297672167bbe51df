//! The retrying client: the one traffic that reacts to decisions.

use super::Arrivals;
use crate::time::Micros;
use std::collections::VecDeque;

/// A retrying client: first tries from the scenario's stream plus a spike; every rejected
/// try comes back `every` later until it has had `tries` tries. The simulator tells it each
/// decision at once; `ratelab probe` tells it what a real limiter answered.
#[derive(Debug, Clone)]
pub struct RetryClient {
    first: Arrivals,
    next_first: Option<Micros>,
    spike_left: u64,
    spike_at: Micros,
    retries: VecDeque<(Micros, u32)>,
    tries: u32,
    every: Micros,
}

impl RetryClient {
    /// A client whose first tries are `first`, plus `spike` tries at `spike_at`, each retried
    /// `every` after a rejection until it has had `tries` tries.
    pub fn new(
        mut first: Arrivals,
        spike: u64,
        spike_at: Micros,
        tries: u32,
        every: Micros,
    ) -> Self {
        RetryClient {
            next_first: first.next(),
            first,
            spike_left: spike,
            spike_at,
            retries: VecDeque::new(),
            tries,
            every,
        }
    }

    /// When the next try comes, without taking it.
    pub fn peek(&self) -> Option<Micros> {
        let retry = self.retries.front().map(|r| r.0);
        let spike = (self.spike_left > 0).then_some(self.spike_at);
        [retry, spike, self.next_first].into_iter().flatten().min()
    }

    /// The gap between a rejected try and the next.
    pub fn every(&self) -> Micros {
        self.every
    }

    /// The next try: its time, which try it is (1 for new requests). Ties go to retries,
    /// then the spike, then the steady stream.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Option<(Micros, u32)> {
        let retry = self.retries.front().map(|r| r.0);
        let spike = (self.spike_left > 0).then_some(self.spike_at);
        let candidates = [retry, spike, self.next_first];
        let (which, t) = candidates
            .iter()
            .enumerate()
            .filter_map(|(i, t)| t.map(|t| (i, t)))
            .min_by_key(|&(i, t)| (t, i))?;
        Some(match which {
            0 => self.retries.pop_front().unwrap_or((t, 1)),
            1 => {
                self.spike_left -= 1;
                (t, 1)
            }
            _ => {
                self.next_first = self.first.next();
                (t, 1)
            }
        })
    }

    /// Try `attempt` at `t` was rejected: it comes back `every` later unless it was the last.
    /// Rejections must be reported in the order of their times (the simulator does);
    /// one out of order is put in its place.
    pub fn rejected(&mut self, t: Micros, attempt: u32) {
        if attempt < self.tries {
            let retry = (t + self.every, attempt + 1);
            let at = self.retries.partition_point(|r| r.0 <= retry.0);
            self.retries.insert(at, retry);
        }
    }
}
