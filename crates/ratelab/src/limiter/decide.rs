//! What every limiter is: a [`Decide`] that answers each request with a [`Decision`], a
//! [`Rate`] kept as an exact fraction, and the [`State`] the explainer draws.

use crate::error::Error;
use crate::time::Micros;
use serde::{Deserialize, Serialize};

/// A limiter's answer for one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Let through, leaving at `at` (later than the arrival only for the queueing leaky bucket).
    Admit {
        /// When the request leaves the limiter.
        at: Micros,
    },
    /// Turned away.
    Reject,
}

impl Decision {
    /// Whether the request was let through.
    #[inline]
    pub fn admitted(self) -> bool {
        matches!(self, Decision::Admit { .. })
    }
}

/// A rate: `count` requests per `per` microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rate {
    /// Requests per period.
    pub count: u64,
    /// The period, in µs.
    pub per: Micros,
}

/// The interface every limiter has: a decision at a time, which must not decrease.
///
/// ```
/// use ratelab::limiter::{Decide, SlidingLog};
/// use ratelab::time::SECOND;
///
/// // The literal rule, 2 in any second: a third request inside the second is refused, and
/// // one a second after the first is admitted again.
/// let mut log = SlidingLog::new(2, SECOND, false);
/// assert!(log.admit(0) && log.admit(SECOND / 2));
/// assert!(!log.admit(SECOND - 1));
/// assert!(log.admit(SECOND));
/// ```
pub trait Decide {
    /// Decides on a request arriving at `t`.
    fn decide(&mut self, t: Micros) -> Decision;

    /// Whether a request arriving at `t` is admitted: the same decision as [`Decide::decide`],
    /// for callers that do not need the departure time. Limiters whose admissions leave at once
    /// implement it without branching on the outcome.
    #[inline]
    fn admit(&mut self, t: Micros) -> bool {
        self.decide(t).admitted()
    }

    /// A time before which it refuses every request, however many come before it (each one
    /// it refuses leaves it as sure or surer), or 0 when it knows none: what a retry storm's
    /// driver ([`crate::traffic::RetryClient::drive_fresh`]) refuses a stretch at a time. It
    /// holds from the last decision on, changes nothing, and is exact for the limiters that
    /// give one (a window's count at its limit, a log's oldest entry, a counter's estimate);
    /// a property test holds each against deciding one by one.
    #[inline(always)]
    fn refuses_before(&self) -> Micros {
        0
    }

    /// Hears a request at `t` that it refuses, as [`Decide::refuses_before`] said: the same
    /// as [`Decide::admit`], without the decision.
    #[inline(always)]
    fn refused(&mut self, t: Micros) {
        let ok = self.admit(t);
        debug_assert!(!ok, "admitted before refuses_before");
    }

    /// Hears `n` requests it refuses, as [`Decide::refuses_before`] said, all before the
    /// next one it hears, by their count alone. A limiter that keeps the times of some
    /// ([`Decide::keeps`]) must then hear that many one by one ([`Decide::refused`]) before
    /// it decides again. Every limiter with a [`Decide::refuses_before`] has it.
    #[inline(always)]
    fn refused_many(&mut self, n: u64) {
        debug_assert!(
            n == 0,
            "no refused_many for a limiter that refuses before nothing"
        );
    }

    /// How many of the latest refused requests it keeps the times of: a log that records
    /// its rejects keeps `L`.
    #[inline(always)]
    fn keeps(&self) -> u64 {
        0
    }
}

/// What a limiter holds at a moment: the mechanism behind its decisions, as the explainer
/// draws it. Read with each limiter's `state(now)`, which changes nothing; `now` must be no
/// earlier than the last decision's time (the state as it stands after every decision so far,
/// with time moved on to `now`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum State {
    /// Token bucket and GCRA: the tokens available, out of `capacity`. A fraction while the
    /// bucket refills; its whole part is how many requests would be admitted back to back now.
    Tokens {
        /// Tokens available.
        tokens: f64,
        /// The bucket's capacity `B`.
        capacity: u64,
    },
    /// Sliding log: the logged requests inside `(now − W, now]`, rejected ones included when
    /// they are recorded; the log admits while there are fewer than `limit`.
    Log {
        /// Entries in the window, recorded rejects included.
        entries: u64,
        /// How many of them are recorded rejects, where known (see [`super::SlidingLog::state`]).
        rejects: Option<u64>,
        /// `L`.
        limit: u64,
    },
    /// Fixed window: the current calendar window's count (recorded rejects included).
    Count {
        /// Requests counted in the current window.
        count: u64,
        /// `L`.
        limit: u64,
    },
    /// Sliding-window counter: the two windows' counts and the weighted estimate it compares
    /// against `limit`: `previous · (W − elapsed) / W + current`.
    Estimate {
        /// The current calendar window's count.
        current: u64,
        /// The previous calendar window's count.
        previous: u64,
        /// The estimate (admits while it is below `limit`).
        estimate: f64,
        /// `L`.
        limit: u64,
    },
    /// Leaky bucket as a meter: nginx's excess, in requests (rejects above `burst`).
    Excess {
        /// The excess, leaked to `now`.
        excess: f64,
        /// nginx's `burst`.
        burst: u64,
    },
    /// Leaky bucket as a queue: admitted requests that have not left yet.
    Queue {
        /// Requests waiting (a request leaving at `now` has left).
        queued: u64,
        /// nginx's `burst`: at most that many wait.
        burst: u64,
    },
}

/// Which [`State`] a limiter has, by the name the page shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StateKind {
    /// [`State::Tokens`].
    #[default]
    Tokens,
    /// [`State::Log`].
    Log,
    /// [`State::Count`].
    Count,
    /// [`State::Estimate`].
    Estimate,
    /// [`State::Excess`].
    Excess,
    /// [`State::Queue`].
    Queue,
}

impl StateKind {
    /// `tokens`, `log`, `count`, `estimate`, `excess` or `queue`.
    pub fn name(self) -> &'static str {
        match self {
            StateKind::Tokens => "tokens",
            StateKind::Log => "log",
            StateKind::Count => "count",
            StateKind::Estimate => "estimate",
            StateKind::Excess => "excess",
            StateKind::Queue => "queue",
        }
    }
}

impl State {
    /// Which state this is.
    pub fn kind(&self) -> StateKind {
        match self {
            State::Tokens { .. } => StateKind::Tokens,
            State::Log { .. } => StateKind::Log,
            State::Count { .. } => StateKind::Count,
            State::Estimate { .. } => StateKind::Estimate,
            State::Excess { .. } => StateKind::Excess,
            State::Queue { .. } => StateKind::Queue,
        }
    }

    /// The one number shown: tokens, log entries, count, estimate, excess or queue length.
    pub fn value(&self) -> f64 {
        match *self {
            State::Tokens { tokens, .. } => tokens,
            State::Log { entries, .. } => entries as f64,
            State::Count { count, .. } => count as f64,
            State::Estimate { estimate, .. } => estimate,
            State::Excess { excess, .. } => excess,
            State::Queue { queued, .. } => queued as f64,
        }
    }

    /// What the value is drawn against: the capacity (tokens), `L` (log, count, estimate) or
    /// the burst (excess, queue).
    pub fn mark(&self) -> u64 {
        match *self {
            State::Tokens { capacity, .. } => capacity,
            State::Log { limit, .. }
            | State::Count { limit, .. }
            | State::Estimate { limit, .. } => limit,
            State::Excess { burst, .. } | State::Queue { burst, .. } => burst,
        }
    }

    /// Two servers' states as one: every part added (a split limit's servers each hold a
    /// share of the limit, and their parts add up to the whole). States of different kinds
    /// keep `self`.
    pub fn plus(self, other: State) -> State {
        match (self, other) {
            (
                State::Tokens { tokens, capacity },
                State::Tokens {
                    tokens: t,
                    capacity: c,
                },
            ) => State::Tokens {
                tokens: tokens + t,
                capacity: capacity + c,
            },
            (
                State::Log {
                    entries,
                    rejects,
                    limit,
                },
                State::Log {
                    entries: e,
                    rejects: r,
                    limit: l,
                },
            ) => State::Log {
                entries: entries + e,
                rejects: rejects.zip(r).map(|(a, b)| a + b),
                limit: limit + l,
            },
            (State::Count { count, limit }, State::Count { count: c, limit: l }) => State::Count {
                count: count + c,
                limit: limit + l,
            },
            (
                State::Estimate {
                    current,
                    previous,
                    estimate,
                    limit,
                },
                State::Estimate {
                    current: c,
                    previous: p,
                    estimate: e,
                    limit: l,
                },
            ) => State::Estimate {
                current: current + c,
                previous: previous + p,
                estimate: estimate + e,
                limit: limit + l,
            },
            (
                State::Excess { excess, burst },
                State::Excess {
                    excess: e,
                    burst: b,
                },
            ) => State::Excess {
                excess: excess + e,
                burst: burst + b,
            },
            (
                State::Queue { queued, burst },
                State::Queue {
                    queued: q,
                    burst: b,
                },
            ) => State::Queue {
                queued: queued + q,
                burst: burst + b,
            },
            (mine, _) => mine,
        }
    }
}

/// `units / per` as a float, its whole part exact (below 2^53).
pub(super) fn ratio(units: u64, per: u64) -> f64 {
    (units / per) as f64 + (units % per) as f64 / per as f64
}

/// The decision of a limiter whose admissions leave at once.
#[inline]
pub(super) fn admitted_at(ok: bool, t: Micros) -> Decision {
    if ok {
        Decision::Admit { at: t }
    } else {
        Decision::Reject
    }
}
/// A `limits` strategy, named as Flask-Limiter's `RATELIMIT_STRATEGY` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum LimitsStrategy {
    /// `fixed-window` (the default): a window per key opened by its first hit.
    FixedWindow,
    /// `moving-window`: a log of admissions over `[now − W, now]`.
    MovingWindow,
    /// `sliding-window-counter`: the last aligned window's count, weighted, plus this one's.
    SlidingWindowCounter,
}

impl LimitsStrategy {
    /// Every strategy, the default first.
    pub const ALL: [LimitsStrategy; 3] = [
        LimitsStrategy::FixedWindow,
        LimitsStrategy::MovingWindow,
        LimitsStrategy::SlidingWindowCounter,
    ];

    /// Its name in a spec and in Flask-Limiter's configuration.
    pub fn name(self) -> &'static str {
        match self {
            LimitsStrategy::FixedWindow => "fixed-window",
            LimitsStrategy::MovingWindow => "moving-window",
            LimitsStrategy::SlidingWindowCounter => "sliding-window-counter",
        }
    }

    /// The strategy named `text` (limits' class names and underscores taken too).
    pub fn parse(what: &str, text: &str) -> Result<Self, Error> {
        let t = text.trim().to_ascii_lowercase().replace('_', "-");
        let found = match t.as_str() {
            "fixed-window" | "fixedwindowratelimiter" | "fixed-window-elastic-expiry" => {
                Some(LimitsStrategy::FixedWindow)
            }
            "moving-window" | "movingwindowratelimiter" => Some(LimitsStrategy::MovingWindow),
            "sliding-window-counter" | "slidingwindowcounterratelimiter" => {
                Some(LimitsStrategy::SlidingWindowCounter)
            }
            _ => None,
        };
        if t == "fixed-window-elastic-expiry" {
            return Err(Error::invalid(
                what,
                text,
                "fixed-window, moving-window or sliding-window-counter (fixed-window-elastic-expiry, removed from limits 4, is not modelled)",
            ));
        }
        found.ok_or_else(|| {
            Error::invalid(
                what,
                text,
                "fixed-window, moving-window or sliding-window-counter",
            )
        })
    }
}
