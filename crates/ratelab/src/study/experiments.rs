//! The study's experiments: the shapes, loads, limiters and grids each is run over, where each
//! limiter sits in its jobs' scenarios (so no table indexes results by a bare number), and the
//! kinds of job.

use serde::{Deserialize, Serialize};

/// The honest traffic shapes, in table order.
pub const SHAPES: [&str; 5] = [
    "steady",
    "small-bursts",
    "page-loads",
    "big-bursts",
    "on-off",
];
/// The loads of the honest-client table.
pub const LOADS: [f64; 4] = [0.3, 0.5, 0.8, 1.0];
/// The limiters of the honest-client table (`gcra` has the default burst, one window's worth).
pub const LIMITERS: [&str; 6] = [
    "fixed-window",
    "sliding-log",
    "sliding-window-counter",
    "token-bucket:burst=50",
    "token-bucket:burst=75",
    "gcra",
];
/// The positions of the honest and attacker jobs' limiters in their scenarios: [`LIMITERS`]
/// in order (`fixed-window` first, which no table names alone), then, in honest jobs only,
/// [`TWIN`]. This one is `sliding-log`.
pub(super) const SLIDING_LOG: usize = 1;
/// `sliding-window-counter` in [`LIMITERS`].
pub(super) const COUNTER: usize = 2;
/// `token-bucket:burst=50` in [`LIMITERS`].
pub(super) const BUCKET_50: usize = 3;
/// `token-bucket:burst=75` in [`LIMITERS`].
pub(super) const BUCKET_75: usize = 4;
/// `gcra` in [`LIMITERS`].
pub(super) const GCRA: usize = 5;
/// [`TWIN`], after [`LIMITERS`] in honest jobs.
pub(super) const GCRA_TWIN: usize = LIMITERS.len();
/// The check run beside every honest cell: a token bucket of GCRA's burst, which must admit
/// exactly what GCRA admits in every run.
pub(super) const TWIN: &str = "token-bucket:burst=100";
/// Refill rates (per minute) searched for the best bucket that never breaks the rule.
pub(super) const OBEYING_RATES: [u64; 10] = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100];
/// Client rates (per minute) and tries of the retry-lockout grid.
pub(super) const RETRY_RATES: [u64; 5] = [10, 20, 25, 30, 40];
pub(super) const RETRY_TRIES: [u32; 5] = [2, 4, 6, 8, 12];
/// Server counts of the split experiment.
pub(super) const SERVERS: [u32; 4] = [1, 4, 10, 20];
/// K = 10 in [`SERVERS`].
pub(super) const SERVERS_10: usize = 2;
/// The limiters of a retry job: the sliding log that forgets its rejects, then the one that
/// records them.
pub(super) const RETRY_LIMITERS: [&str; 2] = ["sliding-log", "sliding-log:record-rejects=true"];
/// The sliding log that forgets rejects, in [`RETRY_LIMITERS`].
pub(super) const RETRY_FORGETTING: usize = 0;
/// The sliding log that records rejects, in [`RETRY_LIMITERS`].
pub(super) const RETRY_RECORDING: usize = 1;
/// The limiters of a theory job.
pub(super) const THEORY_LIMITERS: [&str; 2] = ["sliding-log", "fixed-window"];
/// The sliding log, in [`THEORY_LIMITERS`].
pub(super) const THEORY_LOG: usize = 0;
/// The fixed window, in [`THEORY_LIMITERS`].
pub(super) const THEORY_FIXED: usize = 1;
/// The sliding log in an obeying job, before its candidate buckets.
pub(super) const OBEYING_LOG: usize = 0;
/// The sliding-window counter, alone in a counter-offset job.
pub(super) const SWC_ALONE: usize = 0;
/// `steady`, in [`SHAPES`].
pub(super) const STEADY: usize = 0;
/// `small-bursts`, in [`SHAPES`].
pub(super) const SMALL_BURSTS: usize = 1;
/// `page-loads`, in [`SHAPES`].
pub(super) const PAGE_LOADS: usize = 2;
/// `big-bursts`, in [`SHAPES`].
pub(super) const BIG_BURSTS: usize = 3;
/// The shapes of the split experiment.
pub(super) const SPLIT_SHAPES: [usize; 2] = [STEADY, PAGE_LOADS];
/// 30% in [`LOADS`].
pub(super) const LOAD_30: usize = 0;
/// 80% in [`LOADS`].
pub(super) const LOAD_80: usize = 2;

/// The position of the bucket of [`OBEYING_RATES`]`[k]` in an obeying job.
pub(super) fn obeying_bucket(k: usize) -> usize {
    1 + k
}

/// The position of the sliding log split over [`SERVERS`]`[j]` servers in a split job.
pub(super) fn split_log(j: usize) -> usize {
    2 * j
}

/// The position of the token bucket split over [`SERVERS`]`[j]` servers in a split job.
pub(super) fn split_bucket(j: usize) -> usize {
    2 * j + 1
}

/// What a job is for, so its result can be put in the right table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum JobKind {
    /// One cell of the honest-client table.
    Honest {
        /// Index into [`SHAPES`].
        shape: usize,
        /// Index into [`LOADS`].
        load: usize,
    },
    /// Every limiter under the flood from the worst moment.
    Attacker,
    /// The sliding-window counter under a flood from each of 51 offsets.
    SwcOffset {
        /// 0..=50.
        index: u64,
    },
    /// The candidate rule-obeying buckets for one shape, at 80% load.
    Obeying {
        /// Index into [`SHAPES`].
        shape: usize,
    },
    /// One cell of the retry grid.
    Retry {
        /// Client rate per minute.
        rate: u64,
        /// Tries per request.
        tries: u32,
    },
    /// The split experiment for one shape at 80%.
    Split {
        /// Index into [`SHAPES`] (steady or page loads).
        shape: usize,
    },
    /// The sliding log and the fixed window against theory at one load.
    Theory {
        /// 0.8, 1.0 or 1.2.
        load: f64,
    },
    /// Greedy against the brute-force optimum on small cases.
    Optimality,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_named_positions_point_at_their_limiters_and_shapes() {
        assert_eq!(LIMITERS[0], "fixed-window");
        assert_eq!(LIMITERS[SLIDING_LOG], "sliding-log");
        assert_eq!(LIMITERS[COUNTER], "sliding-window-counter");
        assert_eq!(LIMITERS[BUCKET_50], "token-bucket:burst=50");
        assert_eq!(LIMITERS[BUCKET_75], "token-bucket:burst=75");
        assert_eq!(LIMITERS[GCRA], "gcra");
        assert_eq!(RETRY_LIMITERS[RETRY_FORGETTING], "sliding-log");
        assert_eq!(
            RETRY_LIMITERS[RETRY_RECORDING],
            "sliding-log:record-rejects=true"
        );
        assert_eq!(THEORY_LIMITERS[THEORY_LOG], "sliding-log");
        assert_eq!(THEORY_LIMITERS[THEORY_FIXED], "fixed-window");
        assert_eq!(SHAPES[STEADY], "steady");
        assert_eq!(SHAPES[SMALL_BURSTS], "small-bursts");
        assert_eq!(SHAPES[PAGE_LOADS], "page-loads");
        assert_eq!(SHAPES[BIG_BURSTS], "big-bursts");
        assert_eq!(LOADS[LOAD_30], 0.3);
        assert_eq!(LOADS[LOAD_80], 0.8);
        assert_eq!(SERVERS[SERVERS_10], 10);
    }
}
