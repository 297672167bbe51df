//! The study behind "The Rule Was the Strict Part", as data: a plan of independent jobs (each a
//! scenario), and the tables assembled from their results. Callers run the jobs however they
//! like (threads in the CLI, workers in the page); the tables do not depend on the order or on
//! how many ran at once, because every job carries its own seed. The experiments are defined
//! once, at any [`Size`]: the page's section figures run them at theirs.

mod claims;
mod essays;
mod experiments;
mod measure;
mod plan;
mod render;
mod shard;
mod tables;

pub use claims::{Claim, Essay, Target, Unit, Value, Verdict};
pub use experiments::{
    counter_offset, counter_offset_lines, counter_offset_measure, counter_offset_start, honest,
    lockout, lockout_all, split, split_bucket, split_log, JobKind, JobResult, Size, BUCKET_50,
    BUCKET_75, COUNTER, FIXED_WINDOW, GCRA, LIMITERS, LOADS, OFFSET_STEPS, RETRY_ALL,
    RETRY_FORGETTING, RETRY_LIMITERS, RETRY_RECORDING, SHAPES, SLIDING_LOG, TWIN,
};
pub use measure::{busiest, served, Estimate};
pub use plan::{
    experiments_done, keep_honest, plan, run_job, run_order, run_scenario, Job, StudyConfig,
};
pub use shard::{fingerprint, merge, Merged, Part, Shard, SHARD_FORMAT};
pub use tables::{assemble, StudyPlot, StudyReport, Table};
