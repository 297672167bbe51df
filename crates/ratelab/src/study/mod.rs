//! The study behind "The Rule Was the Strict Part", as data: a plan of independent jobs (each a
//! scenario), and the tables assembled from their results. Callers run the jobs however they
//! like (threads in the CLI, workers in the page); the tables do not depend on the order or on
//! how many ran at once, because every job carries its own seed.

mod experiments;
mod plan;
mod render;
mod tables;

pub use experiments::{JobKind, LIMITERS, LOADS, SHAPES};
pub use plan::{keep_honest, plan, run_job, Job, JobResult, StudyConfig};
pub use tables::{assemble, busiest, served, Comparison, Estimate, Plot, StudyReport, Table};
