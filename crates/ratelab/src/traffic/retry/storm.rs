//! The essays' client in a retry storm, driven fast: its first tries handed over a chunk at a
//! time (drawn once for every lane), its retries in a queue with no heap, and a stretch of
//! tries its limiter is sure to refuse taken and answered as one.

use super::{RetryClient, Try, FRESH_CHUNK};
use crate::time::Micros;

/// What [`RetryClient::drive_fresh`] hands its tries to: a limiter's answers and whatever the
/// caller counts. A closure `FnMut(&Try) -> bool` is one that knows no refused stretch.
pub trait Answer {
    /// Whether `tr` is admitted.
    fn answer(&mut self, tr: &Try) -> bool;

    /// A time before which every try is refused, whatever tries come before it, as
    /// [`crate::limiter::Decide::refuses_before`] says; 0 when none is known.
    #[inline(always)]
    fn refuses_before(&self) -> Micros {
        0
    }

    /// After a skip, how many refused tries the lane must still hear one by one (at
    /// [`Answer::refuse`]) before its stretch ends: a log that records its rejects keeps the
    /// last `L` of them.
    #[inline(always)]
    fn keeps(&self) -> u64 {
        0
    }

    /// Takes in the stretch of refused tries `skipped`, told by its counts rather than one by
    /// one, and says whether it could (a lane may need them one by one: then nothing is
    /// changed, and they come to [`Answer::refuse`]). No lane can by default.
    #[inline(always)]
    fn skip(&mut self, skipped: &Skipped<'_>) -> bool {
        let _ = skipped;
        false
    }

    /// Answers `tr`, which comes before [`Answer::refuses_before`] as it was when its
    /// stretch began: it is refused, as [`Answer::answer`] would say.
    #[inline]
    fn refuse(&mut self, tr: &Try) {
        let ok = self.answer(tr);
        debug_assert!(!ok, "a try before refuses_before was admitted");
    }
}

impl<F: FnMut(&Try) -> bool> Answer for F {
    #[inline(always)]
    fn answer(&mut self, tr: &Try) -> bool {
        self(tr)
    }
}

impl RetryClient {
    /// Runs the essays' client ([`RetryClient::classic`]) to its end, one try at a time:
    /// each try, in [`RetryClient::next`]'s order, goes to `decide`, which says whether it was
    /// admitted, and a rejected one comes back `every` later until its last try. The first
    /// tries are drawn a chunk at a time ([`RetryClient::fill_fresh`]) and driven through
    /// with [`RetryClient::drive_fresh`].
    pub fn drive_classic(&mut self, mut decide: impl FnMut(&Try) -> bool) {
        let mut fresh = Vec::with_capacity(FRESH_CHUNK);
        loop {
            let until = self.fill_fresh(&mut fresh, FRESH_CHUNK);
            self.drive_fresh(&fresh, until, &mut decide);
            if until == Micros::MAX {
                return;
            }
        }
    }

    /// A copy of this client to draw its coming first tries from ([`RetryClient::fill_fresh`]):
    /// this one gives them up, so that from now on its first tries are only those handed to
    /// [`RetryClient::drive_fresh`].
    pub fn hand_over_fresh(&mut self) -> RetryClient {
        let source = self.clone();
        self.next_first = None;
        source
    }

    /// Takes up to `n` of its coming first tries (not the spike's) into `buf` (emptied
    /// first), and returns when the first one after them comes, or `Micros::MAX` if none
    /// does: what [`RetryClient::drive_fresh`] is handed, by this client or by another one
    /// whose first tries are the same (the simulator draws them once for every limiter).
    pub fn fill_fresh(&mut self, buf: &mut Vec<Micros>, n: usize) -> Micros {
        buf.clear();
        if let Some(t) = self.next_first {
            buf.push(t);
            self.first.extend_by(buf, n.saturating_sub(1));
            self.next_first = self.first.next();
        }
        self.next_first.unwrap_or(Micros::MAX)
    }

    /// Drives the essays' client ([`RetryClient::classic`]) through every try due before
    /// `until`, its first tries taken from `fresh` (in order, all of them no later than
    /// `until`) in place of its own stream: each try, in [`RetryClient::next`]'s order (ties
    /// to retries, then the spike, then first tries), goes to `lane`, which says whether it
    /// was admitted, and a rejected one comes back `every` later until its last try. Tries
    /// come in time order and the gap is fixed, so each retry joins the back of the queue: no
    /// heap. A retry or the spike due at `until` or later waits for the next call, whose
    /// first tries start at `until` (and lose ties to it).
    ///
    /// Where a try comes before [`Answer::refuses_before`], the tries up to then are a
    /// stretch of refusals: counted as a whole where it is long ([`Answer::skip`]), the rest
    /// told one by one without a decision ([`Answer::refuse`]). A client its limiter locks
    /// out is driven a stretch at a time. Tests (tests/storm.rs, tests/retry.rs) hold every
    /// try, answer and count equal to [`RetryClient::next`] with [`RetryClient::rejected`]
    /// one by one, stretches or not.
    #[inline]
    pub fn drive_fresh(&mut self, fresh: &[Micros], until: Micros, mut lane: impl Answer) {
        debug_assert!(self.classic());
        let mut i = 0;
        loop {
            // The earliest of the three, ties to retries, then the spike, then first tries.
            let first = fresh.get(i).copied();
            let spike = (self.spike_left > 0).then_some(self.spike_at);
            let new = match (spike, first) {
                (Some(s), Some(f)) => Some((s <= f, s.min(f))),
                (Some(s), None) => Some((true, s)),
                (None, Some(f)) => Some((false, f)),
                (None, None) => None,
            };
            let tr = match self.retries.front() {
                Some(r) if new.is_none_or(|(_, t)| r.at <= t) => {
                    // With the chunk's first tries gone, one due at `until` or later waits.
                    if first.is_none() && r.at >= until {
                        return;
                    }
                    match self.pop_retry() {
                        Some(tr) => tr,
                        None => return,
                    }
                }
                _ => {
                    let Some((is_spike, t)) = new else {
                        return;
                    };
                    if is_spike {
                        if first.is_none() && t >= until {
                            return;
                        }
                        self.spike_left -= 1;
                    } else {
                        i += 1;
                    }
                    self.first_try(t)
                }
            };
            // A try before `refuses_before` starts a stretch of refusals. (A closure knows
            // none: this is then `at < 0`, and folds away.)
            let refused = lane.refuses_before();
            if tr.at < refused {
                lane.refuse(&tr);
                self.answered(tr, false);
                let end = refused.min(until).min(spike.unwrap_or(Micros::MAX));
                i = self.refuse_stretch(fresh, i, end, &mut lane);
                continue;
            }
            let ok = lane.answer(&tr);
            self.answered(tr, ok);
        }
    }

    /// `tr` was answered `ok`: counted, or retried `every` later.
    #[inline(always)]
    fn answered(&mut self, tr: Try, ok: bool) {
        if ok {
            self.admitted += 1;
            return;
        }
        if tr.attempt >= self.tries {
            self.gave_up += 1;
            return;
        }
        let at = tr.at.saturating_add(self.every);
        if at > self.horizon {
            self.gave_up += 1;
            self.past_horizon += 1;
            return;
        }
        debug_assert!(self.retries.back().is_none_or(|r| r.at <= at));
        self.retries.push_back(Try {
            at,
            attempt: tr.attempt + 1,
            first: tr.first,
            sleep: self.every,
            seen: 0,
        });
    }

    /// Takes the tries that come before `end`, in [`RetryClient::next`]'s order from the
    /// queue and `fresh[i..]` (no spike: `end` is no later than it), and hands them to `lane`
    /// as refused, counted where it can ([`RetryClient::skip`]) and then one by one, queuing
    /// each one's retry. Returns where `fresh` goes on.
    #[inline(never)]
    fn refuse_stretch(
        &mut self,
        fresh: &[Micros],
        mut i: usize,
        end: Micros,
        lane: &mut impl Answer,
    ) -> usize {
        if let Some(next) = self.skip(fresh, i, end, lane) {
            i = next;
        }
        loop {
            let f = fresh.get(i).copied().unwrap_or(Micros::MAX);
            let tr = match self.retries.front() {
                Some(r) if r.at <= f => {
                    if r.at >= end {
                        break;
                    }
                    match self.pop_retry() {
                        Some(tr) => tr,
                        None => break,
                    }
                }
                _ => {
                    if f >= end {
                        break;
                    }
                    i += 1;
                    self.first_try(f)
                }
            };
            lane.refuse(&tr);
            self.answered(tr, false);
        }
        i
    }
}

/// Fewest refused tries worth skipping over: below it, one by one costs less than the counts.
const MIN_SKIP: u64 = 128;

/// The tries a request's chain has left, its next (try `attempt`) included, at `tries` in all.
#[inline]
fn left(tries: u32, attempt: u32) -> u64 {
    u64::from(tries.saturating_sub(attempt)) + 1
}

/// How far past its first try a request's last comes, at `tries` in all, `every` apart.
#[inline]
fn reach(tries: u32, every: Micros) -> Micros {
    u64::from(tries.saturating_sub(1)) * every
}

/// How many of a chain's tries, the next at `at`, `left` in all, `every` apart, come before
/// `t`.
#[inline]
fn before(every: Micros, at: Micros, left: u64, t: Micros) -> u64 {
    if t <= at {
        0
    } else if t - at > (left - 1) * every {
        // All of them (no division: most of a long stretch's chains).
        left
    } else {
        (t - at).div_ceil(every)
    }
}

/// A stretch of refused tries from `from` to `to`: every try of the queue's chains and of the
/// first tries `fresh` (each chain a try every `every` until its `tries`-th) in that span, all
/// refused. What [`Answer::skip`] is told in place of the tries themselves.
#[derive(Debug)]
pub struct Skipped<'a> {
    from: Micros,
    to: Micros,
    every: Micros,
    tries: u32,
    queue: &'a std::collections::VecDeque<Try>,
    fresh: &'a [Micros],
    /// Its tries, counted once.
    count: u64,
}

impl Skipped<'_> {
    /// Every chain that may still try at `t` or later: where its next try is and how many it
    /// has left, the queue's first. (A first try's chain ends `(tries − 1)·every` after it,
    /// so those long before `t` are passed over.)
    fn chains(&self, t: Micros) -> impl Iterator<Item = (Micros, u64)> + '_ {
        let tries = self.tries;
        let queued = self
            .queue
            .iter()
            .map(move |r| (r.at, left(tries, r.attempt)));
        let since = t.saturating_sub(reach(tries, self.every));
        let first = self.fresh.partition_point(|&f| f < since);
        queued.chain(
            self.fresh[first..]
                .iter()
                .map(move |&f| (f, left(tries, 1))),
        )
    }

    /// How many of a chain's tries, the next at `at` with `left` in all, come before `t`.
    #[inline]
    fn before(&self, at: Micros, left: u64, t: Micros) -> u64 {
        before(self.every, at, left, t)
    }

    /// Its tries at `t` or later (and before its end).
    pub fn tries_from(&self, t: Micros) -> u64 {
        let t = t.clamp(self.from, self.to);
        self.chains(t)
            .map(|(at, left)| self.before(at, left, self.to) - self.before(at, left, t))
            .sum()
    }

    /// Where it starts: its first try.
    pub fn from(&self) -> Micros {
        self.from
    }

    /// Where it ends: after its last try.
    pub fn to(&self) -> Micros {
        self.to
    }

    /// Its tries.
    pub fn tries(&self) -> u64 {
        self.count
    }

    /// Its first tries: new requests.
    pub fn first_tries(&self) -> u64 {
        self.fresh.len() as u64
    }

    /// Appends its tries at `t` or later to `out`, in time order.
    pub fn latest(&self, t: Micros, out: &mut Vec<Micros>) {
        let t = t.clamp(self.from, self.to);
        let start = out.len();
        for (at, left) in self.chains(t) {
            for k in self.before(at, left, t)..self.before(at, left, self.to) {
                out.push(at + k * self.every);
            }
        }
        out[start..].sort_unstable();
    }

    /// At least as many as its tries in any `span` (one chain has at most one try in each
    /// `every`), counted from its chains: each chain whose tries could fall in it.
    pub fn most_within(&self, span: Micros) -> u64 {
        let per_chain = span.div_ceil(self.every);
        // A first try's chain reaches `(tries − 1)·every` past it; at most this many start
        // within any interval of that plus `span`.
        let reach = reach(self.tries, self.every) + span;
        let (mut lo, mut most) = (0, 0);
        for hi in 0..self.fresh.len() {
            while self.fresh[hi] - self.fresh[lo] >= reach {
                lo += 1;
            }
            most = most.max(hi - lo + 1);
        }
        (self.queue.len() as u64 + most as u64).saturating_mul(per_chain)
    }
}

impl RetryClient {
    /// Skips over the start of a refused stretch from the next try to `end` where it is long:
    /// the tries up to a point at least [`Answer::keeps`] tries before `end` are counted, not
    /// taken one by one, if there are [`MIN_SKIP`] of them and the lane takes them
    /// ([`Answer::skip`]). The queue is then as taking them would have left it. Returns where
    /// `fresh` goes on.
    fn skip(
        &mut self,
        fresh: &[Micros],
        i: usize,
        end: Micros,
        lane: &mut impl Answer,
    ) -> Option<usize> {
        let every = self.every;
        let from = self.retries.front().map_or(Micros::MAX, |r| r.at);
        let from = from.min(fresh.get(i).copied().unwrap_or(Micros::MAX));
        // No chain may pass the horizon (the queue's next tries stay short of it).
        if from >= end || end.saturating_add(every) > self.horizon {
            return None;
        }
        let keeps = lane.keeps();
        // Not worth counting where even every chain trying throughout falls short.
        let j = i + fresh[i..].partition_point(|&f| f < end);
        let rounds = (end - from).div_ceil(every).min(u64::from(self.tries));
        let most = (self.retries.len() + j - i) as u64 * rounds;
        if most < MIN_SKIP + keeps {
            return None;
        }
        let stretch = |to: Micros| {
            let j = i + fresh[i..].partition_point(|&f| f < to);
            let mut skipped = Skipped {
                from,
                to,
                every,
                tries: self.tries,
                queue: &self.retries,
                fresh: &fresh[i..j],
                count: 0,
            };
            skipped.count = skipped.tries_from(from);
            (skipped, j)
        };
        // Where the tries the lane keeps start: doubling back from `end`.
        let mut to = end;
        if keeps > 0 {
            let all = stretch(end).0;
            // A first guess from the stretch's average rate, a quarter more.
            let n = all.tries().max(1);
            let mut back = ((end - from) / n)
                .saturating_mul(keeps + keeps / 4)
                .max(every);
            loop {
                to = end.saturating_sub(back);
                if to <= from {
                    return None;
                }
                if all.tries_from(to) >= keeps {
                    break;
                }
                back = back.saturating_mul(2);
            }
        }
        let (skipped, j) = stretch(to);
        if skipped.tries() < MIN_SKIP || !lane.skip(&skipped) {
            return None;
        }
        // Each chain moves on to its first try at `to` or later, or has given up. Chains that
        // meet keep the order their tries were taken in: the queue's before the first tries'
        // (a retry wins a tie), the queue's in its order, except that those a full `every`
        // ahead (retries of the try just taken at `from`) go before those due at `from`,
        // whose retries will come after them. `seen`, reset to 0 as a queued retry has it,
        // holds that rank while sorting.
        let tries = self.tries;
        let moved = |r: &mut Try, rank: u64| -> bool {
            let left = left(tries, r.attempt);
            let done = before(every, r.at, left, to);
            if done == left {
                return false;
            }
            // `done` < `left` ≤ `tries`, so it fits. Every chain left is a retry now (a first
            // try comes before `to`).
            r.at += done * every;
            r.attempt += done as u32;
            r.sleep = every;
            r.seen = rank;
            true
        };
        let queued = self.retries.len() as u64;
        let ahead = from.saturating_add(every);
        let (mut rank, mut gave_up) = (0, 0);
        self.retries.retain_mut(|r| {
            rank += 1;
            let alive = moved(r, if r.at >= ahead { rank } else { queued + rank });
            gave_up += u64::from(!alive);
            alive
        });
        rank = 2 * queued;
        for &f in &fresh[i..j] {
            rank += 1;
            let mut r = Try {
                at: f,
                attempt: 1,
                first: f,
                sleep: 0,
                seen: 0,
            };
            if moved(&mut r, rank) {
                self.retries.push_back(r);
            } else {
                gave_up += 1;
            }
        }
        self.retries
            .make_contiguous()
            .sort_unstable_by_key(|r| (r.at, r.seen));
        for r in self.retries.iter_mut() {
            r.seen = 0;
        }
        let firsts = (j - i) as u64;
        self.requests += firsts;
        self.firsts_sent += firsts;
        self.gave_up += gave_up;
        Some(j)
    }
}
