//! The traffic parameters that specs name: the shapes of grouped traffic and where a flood
//! starts.

use crate::time::{Micros, SECOND};
use serde::{Deserialize, Serialize};

/// The traffic shapes made of groups of requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Shape {
    /// Groups of about 5 within 1 s.
    SmallBursts,
    /// Groups of about 20 within 1 s.
    PageLoads,
    /// Groups of about 50 within 2 s.
    BigBursts,
}

impl Shape {
    /// The mean group size.
    pub fn mean_size(self) -> f64 {
        match self {
            Shape::SmallBursts => 5.0,
            Shape::PageLoads => 20.0,
            Shape::BigBursts => 50.0,
        }
    }

    /// How long a group takes to arrive.
    pub fn span(self) -> Micros {
        match self {
            Shape::SmallBursts | Shape::PageLoads => SECOND,
            Shape::BigBursts => 2 * SECOND,
        }
    }
}

/// Where a flood starts within its window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FloodStart {
    /// This far into the window.
    Offset(Micros),
    /// `L · every` before the window's end: the worst moment for every limiter here.
    Worst,
}

/// How a retrying client waits between tries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Backoff {
    /// The same gap every time (`policy=fixed`, `every=DUR`).
    Fixed,
    /// `base · factor^n` before retry `n + 1`, at most `cap` (`policy=exponential`): each
    /// step multiplies the last gap by the factor and rounds down to the µs.
    Exponential {
        /// The first retry's gap.
        base: Micros,
        /// The factor, in thousandths (2 is 2000), from 1 to 100.
        factor: u64,
        /// The longest gap.
        cap: Micros,
    },
}

/// Randomness added to a retry's gap `d`, as in the AWS Architecture Blog's "Exponential
/// Backoff And Jitter": `none` waits `d`; `full` a uniform time in `[0, d]`; `equal`
/// `d/2` plus a uniform time in `[0, d/2]`; `decorrelated` (exponential only) a uniform time
/// in `[base, 3 · the last wait]`, at most `cap`, starting from `base`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Jitter {
    /// None.
    None,
    /// Uniform in `[0, d]`.
    Full,
    /// `d/2` plus uniform in `[0, d/2]`.
    Equal,
    /// Uniform in `[base, 3 · last]`, capped.
    Decorrelated,
}

/// How a retrying client retries: its backoff, jitter, retry budget and whether it honours
/// `Retry-After`. The default is the essays' client: a fixed gap, no jitter, no budget, no
/// `Retry-After`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetryPolicy {
    /// The gaps.
    pub backoff: Backoff,
    /// Their randomness.
    pub jitter: Jitter,
    /// `budget=X%`: a client retries only while its retries over the trailing minute, this one
    /// included, are at most X% of its first tries over that minute; in millionths of a first
    /// try (10% is 100,000). `None`: no budget.
    pub budget: Option<u64>,
    /// `retry-after=honor`: wait until the limiter's `Retry-After` (the earliest time it would
    /// admit if nothing else arrived), plus the jittered gap when there is jitter; a limiter
    /// with no answer (a split limit) leaves the gap as it is.
    pub honor: bool,
}

impl RetryPolicy {
    /// Whether this is the essays' client (the default).
    pub fn is_classic(&self) -> bool {
        *self == RetryPolicy::default()
    }
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            backoff: Backoff::Fixed,
            jitter: Jitter::None,
            budget: None,
            honor: false,
        }
    }
}

/// One group of a retrying fleet: `clients` clients, each retrying up to `tries` tries in
/// all, as `policy` says (with `every` the fixed gap). A fleet is its spec's own group, then
/// the groups of a mix (`retry:...+clients=M,jitter=full`), numbered on in that order; every
/// client has its own seed by that number, so a group's clients are the clients of a fleet
/// of one policy with the same numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientGroup {
    /// How many clients it has.
    pub clients: u32,
    /// Tries per request in all, the first one included.
    pub tries: u32,
    /// The gap between tries (`policy=fixed`).
    pub every: Micros,
    /// How they back off, jitter, budget and honour `Retry-After`.
    #[serde(default, skip_serializing_if = "RetryPolicy::is_classic")]
    pub policy: RetryPolicy,
}
