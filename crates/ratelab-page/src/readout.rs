//! What a figure shows beside its plots: the numbers of a run, the sentences that explain it
//! and the verdict, as the page's logic hands them to the page.

use serde::{Deserialize, Serialize};

/// What a figure shows beside its plots.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Readout {
    /// The busiest trailing window of the run.
    pub worst_window: u64,
    /// When it ended, in seconds.
    pub worst_at_s: f64,
    /// The theoretical worst case for these settings, over any traffic.
    pub bound: Option<u64>,
    /// The share served, 0..1.
    pub served_share: f64,
    /// Wrong admits as a fraction of decisions.
    pub wrong_admits: f64,
    /// Wrong rejects as a fraction of decisions.
    pub wrong_rejects: f64,
    /// Requests offered (retries not counted again).
    pub offered: u64,
    /// Requests admitted.
    pub admitted: u64,
    /// Whether no trailing window held more than the limit.
    pub invariant_ok: bool,
    /// The limit, for the page's sentences.
    pub limit: u64,
    /// The equivalent command line's arguments (the page shows [`Readout::command`]).
    #[serde(skip)]
    pub cli: Vec<String>,
    /// The same, as one line to paste into a shell.
    pub command: String,
    /// Under the retry storm, for a limiter that can record rejected requests: the share
    /// served in the same run with recording the other way round (set by [`crate::page::run`]), so the
    /// explanation can say what recording did.
    pub served_other_recording: Option<f64>,
    /// What the run showed, in a few sentences (set by [`crate::page::run`]).
    pub explanation: String,
    /// The verdict beside the read-outs: the rule kept or broken.
    pub verdict: String,
    /// The run's horizon, in seconds.
    pub horizon_s: f64,
    /// Tries sent (decisions made), retries included.
    #[serde(skip)]
    pub tries: u64,
    /// What a retrying client went through (the retry storm only), for the sentences.
    #[serde(skip)]
    pub client: Option<ratelab::sim::ClientStats>,
}
