//! The probe's plan: what to send and when, reacting to rejections for a retrying client as
//! the simulator's client does, and the caps a plan is checked against before anything is sent.

use crate::error::Error;
use crate::sim::Scenario;
use crate::time::{format_duration, Micros, HOUR, SECOND};
use crate::traffic::RetryClient;
use serde::{Deserialize, Serialize};

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
    Closed(Box<RetryClient>),
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
        if let crate::TrafficSpec::Retry {
            policy, clients, ..
        } = &scenario.traffic
        {
            let keys = crate::spec::policy_keys(policy, *clients);
            if !keys.is_empty() {
                return Err(Error::invalid(
                    "probe: traffic",
                    &keys.join(","),
                    "the essays' retrying client (policy=fixed, one client, no jitter, budget or retry-after): the probe's client has no other policy yet",
                ));
            }
        }
        let closed = scenario.retry_client(0);
        let mut first: Vec<Micros> = Vec::new();
        let (tries, every) = match &scenario.traffic {
            crate::TrafficSpec::Retry {
                tries,
                spike,
                at,
                every,
                ..
            } => {
                // First tries are the steady stream plus the spike.
                first.extend(std::iter::repeat_n(
                    *at,
                    (*spike).min(MAX_REQUESTS + 1) as usize,
                ));
                (u64::from(*tries), *every)
            }
            _ => (1, 0),
        };
        for t in scenario.arrivals(0) {
            first.push(t);
            if first.len() as u64 > MAX_REQUESTS {
                return Err(too_many(first.len() as u64));
            }
        }
        first.sort_unstable();
        let first_tries = first.len() as u64;
        let most = first_tries.saturating_mul(tries);
        if most > MAX_REQUESTS {
            return Err(too_many(most));
        }
        let last_at = first.last().copied().unwrap_or(0);
        let last_try_at = last_at.saturating_add((tries - 1).saturating_mul(every));
        if last_try_at > MAX_DURATION {
            let detail = if tries > 1 {
                format!(
                    "its last retry could be due at {} (the last new request at {}, then up to {} more tries {} apart); a probe lasts at most 1h, retries included (fewer tries, a shorter gap or an earlier spike)",
                    format_duration(last_try_at),
                    format_duration(last_at),
                    tries - 1,
                    format_duration(every)
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
        let peaks = Peaks::of(&first, tries, every);
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
            Some(client) => Source::Closed(Box::new(client)),
            None => Source::Open {
                times: first,
                next: 0,
            },
        };
        Ok(Plan { source, summary })
    }

    /// When the next request is due, if any is left (for a retrying client: given the
    /// rejections reported so far).
    pub fn peek(&self) -> Option<Micros> {
        match &self.source {
            Source::Open { times, next } => times.get(*next).copied(),
            Source::Closed(c) => c.peek(),
        }
    }

    /// Takes the next request: when it is due, and which try it is (1 for a new request).
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Option<(Micros, u32)> {
        match &mut self.source {
            Source::Open { times, next } => {
                let t = times.get(*next).copied()?;
                *next += 1;
                Some((t, 1))
            }
            Source::Closed(c) => c.next().map(|tr| (tr.at, tr.attempt)),
        }
    }

    /// For a retrying client: how long after a rejected try its retry is due. A sender must
    /// have heard every answer to tries due before `t − retry_gap` before it sends at `t`.
    pub fn retry_gap(&self) -> Option<Micros> {
        match &self.source {
            Source::Open { .. } => None,
            Source::Closed(c) => Some(c.min_gap()),
        }
    }

    /// Reports that the try due at `at` was rejected; a retrying client sends it again later.
    pub fn rejected(&mut self, at: Micros, attempt: u32) {
        if let Source::Closed(c) = &mut self.source {
            let tr = c.fixed_try(at, attempt);
            c.rejected(tr, None);
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
    /// and, if all its tries are rejected, `tries − 1` retries `every` apart. The tries are
    /// never held all at once: `tries` shifted copies of `first` are merged on the fly, a
    /// leading merge counting into each span and a trailing one per span counting out, so
    /// the work is O(n log tries) for n tries and the memory O(tries).
    pub(super) fn of(first: &[Micros], tries: u64, every: Micros) -> Peaks {
        let mut tail_ms = Merged::new(first, tries, every).peekable();
        let mut tail_s = Merged::new(first, tries, every).peekable();
        let (mut seen, mut left_ms, mut left_s) = (0u64, 0u64, 0u64);
        let mut peaks = Peaks {
            per_ms: 0,
            per_ms_at: 0,
            per_s: 0,
            per_s_at: 0,
        };
        for t in Merged::new(first, tries, every) {
            seen += 1;
            // A span of length d ending at t holds the tries due in (t − d, t].
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

/// `tries` copies of the sorted `first`, the j-th shifted by `j × every`, merged in order.
pub(super) struct Merged<'a> {
    first: &'a [Micros],
    every: Micros,
    /// The next time of each copy that has one: (time, copy, index into `first`).
    heads: std::collections::BinaryHeap<std::cmp::Reverse<(Micros, u64, usize)>>,
}

impl<'a> Merged<'a> {
    pub(super) fn new(first: &'a [Micros], tries: u64, every: Micros) -> Self {
        let heads = match first.first() {
            Some(&t) => (0..tries)
                .map(|j| std::cmp::Reverse((t.saturating_add(j.saturating_mul(every)), j, 0)))
                .collect(),
            None => std::collections::BinaryHeap::new(),
        };
        Merged {
            first,
            every,
            heads,
        }
    }
}

impl Iterator for Merged<'_> {
    type Item = Micros;

    fn next(&mut self) -> Option<Micros> {
        let std::cmp::Reverse((t, j, i)) = self.heads.pop()?;
        if let Some(&next) = self.first.get(i + 1) {
            let shifted = next.saturating_add(j.saturating_mul(self.every));
            self.heads.push(std::cmp::Reverse((shifted, j, i + 1)));
        }
        Some(t)
    }
}

/// Refuses, from the expected number of requests alone, traffic far beyond [`MAX_REQUESTS`]:
/// a check cheap enough to make before anything else.
pub fn check_size(scenario: &Scenario) -> Result<(), Error> {
    let tries = match &scenario.traffic {
        crate::TrafficSpec::Retry { tries, .. } => f64::from(*tries),
        _ => 1.0,
    };
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
