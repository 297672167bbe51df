//! The pure half of `ratelab probe`: what to send to a real limiter, and what its answers mean.
//!
//! A [`Plan`] turns a scenario's traffic into send times (µs from the start of the probe),
//! reacting to rejections for a retrying client exactly as the simulator's client does. The
//! sender (in the CLI, with a real clock and a real network) records one [`Record`] per
//! request; [`ProbeReport::new`] audits those records with the same auditor as the simulator
//! and, given a model limiter, replays the same send times through it and compares decision by
//! decision. Nothing here reads a clock or does I/O.

use crate::audit::Auditor;
use crate::error::Error;
use crate::limiter::{Decide, Limiter};
use crate::sim::{RetryClient, Scenario};
use crate::time::{format_duration, Micros, HOUR, SECOND};
use serde::{Deserialize, Serialize};

/// The most requests one probe may send, retries included.
pub const MAX_REQUESTS: u64 = 1_000_000;
/// The highest average send rate of a probe, in requests per second.
pub const MAX_RATE: u64 = 5_000;
/// The most requests a probe may send within one millisecond.
pub const MAX_PER_MS: u64 = 5_000;
/// The longest probe.
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
    /// The most first tries due within one millisecond.
    pub peak_per_ms: u64,
    /// The most first tries due within one second.
    pub peak_per_s: u64,
}

impl PlanSummary {
    /// One line for the terminal, before anything is sent.
    pub fn describe(&self) -> String {
        let most = if self.most > self.first_tries {
            format!(", up to {} with retries", self.most)
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
    /// [`MAX_REQUESTS`], [`MAX_RATE`] on average, [`MAX_PER_MS`], [`MAX_DURATION`].
    pub fn new(scenario: &Scenario) -> Result<Plan, Error> {
        if scenario.duration > MAX_DURATION {
            return Err(Error::invalid(
                "probe: duration",
                &format_duration(scenario.duration),
                "a duration up to 1h",
            ));
        }
        let closed = RetryClient::new(scenario, 0);
        let mut first: Vec<Micros> = Vec::new();
        let tries = match &scenario.traffic {
            crate::TrafficSpec::Retry {
                tries, spike, at, ..
            } => {
                // First tries are the steady stream plus the spike.
                first.extend(std::iter::repeat_n(
                    *at,
                    (*spike).min(MAX_REQUESTS + 1) as usize,
                ));
                u64::from(*tries)
            }
            _ => 1,
        };
        let expected = scenario.expected_arrivals() * tries as f64;
        if expected > 2.0 * MAX_REQUESTS as f64 {
            return Err(too_many(expected as u64));
        }
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
        if last_at > MAX_DURATION {
            return Err(Error::invalid(
                "probe: traffic",
                &format_duration(last_at),
                "traffic whose sends end within 1h (a shorter window or duration)",
            ));
        }
        let peak = |span: Micros| {
            let (mut lo, mut best) = (0, 0);
            for (hi, &t) in first.iter().enumerate() {
                while first[lo] + span <= t {
                    lo += 1;
                }
                best = best.max(hi + 1 - lo);
            }
            best as u64
        };
        let summary = PlanSummary {
            first_tries,
            most,
            last_at,
            peak_per_ms: peak(1_000),
            peak_per_s: peak(SECOND),
        };
        let seconds = (last_at as f64 / SECOND as f64).max(1.0);
        if summary.peak_per_ms > MAX_PER_MS || most as f64 / seconds > MAX_RATE as f64 {
            return Err(Error::TooLarge {
                what: "probe traffic".into(),
                detail: format!(
                    "{} requests in {}, {} in one millisecond; a probe sends at most {MAX_RATE} a second on average and {MAX_PER_MS} in one millisecond",
                    most,
                    format_duration(last_at.max(1)),
                    summary.peak_per_ms
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
            Source::Closed(c) => c.next(),
        }
    }

    /// For a retrying client: how long after a rejected try its retry is due. A sender must
    /// have heard every answer to tries due before `t − retry_gap` before it sends at `t`.
    pub fn retry_gap(&self) -> Option<Micros> {
        match &self.source {
            Source::Open { .. } => None,
            Source::Closed(c) => Some(c.every()),
        }
    }

    /// Reports that the try due at `at` was rejected; a retrying client sends it again later.
    pub fn rejected(&mut self, at: Micros, attempt: u32) {
        if let Source::Closed(c) = &mut self.source {
            c.rejected(at, attempt);
        }
    }
}

fn too_many(n: u64) -> Error {
    Error::TooLarge {
        what: "probe traffic".into(),
        detail: format!(
            "about {n} requests; a probe sends at most {MAX_REQUESTS} (a shorter duration or lower rate)"
        ),
    }
}

/// How a real limiter answered one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// An admitted status (2xx by default), or a Redis script's 1.
    Admitted,
    /// A rejected status (429 or 503 by default), or a Redis script's 0.
    Rejected,
    /// Any other status: neither admitted nor rejected.
    Other,
    /// No answer: the connection failed or the server sent an error.
    Error,
    /// No answer within the timeout.
    Timeout,
}

impl Outcome {
    /// One letter a decision, for the compact trace in a report.
    pub fn letter(self) -> char {
        match self {
            Outcome::Admitted => 'A',
            Outcome::Rejected => 'R',
            Outcome::Other => 'O',
            Outcome::Error => 'E',
            Outcome::Timeout => 'T',
        }
    }

    /// The outcome a letter of [`Outcome::letter`] stands for.
    pub fn from_letter(c: char) -> Option<Outcome> {
        Some(match c {
            'A' => Outcome::Admitted,
            'R' => Outcome::Rejected,
            'O' => Outcome::Other,
            'E' => Outcome::Error,
            'T' => Outcome::Timeout,
            _ => return None,
        })
    }
}

/// One request a probe sent, as its sender saw it. Times are µs from the start of the probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    /// When the plan said to send it.
    pub due: Micros,
    /// When it was sent.
    pub sent: Micros,
    /// Which try it was (1 for a new request).
    pub attempt: u32,
    /// The answer.
    pub outcome: Outcome,
    /// How long the answer took.
    pub latency: Micros,
}

/// p50, p99 and the maximum of a set of durations, in µs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Quantiles {
    /// The median.
    pub p50_us: Micros,
    /// The 99th percentile.
    pub p99_us: Micros,
    /// The largest.
    pub max_us: Micros,
}

impl Quantiles {
    /// Nearest-rank quantiles (0 for an empty set).
    pub fn of(mut values: Vec<Micros>) -> Self {
        values.sort_unstable();
        let rank = |q: f64| {
            if values.is_empty() {
                return 0;
            }
            let i = ((q * values.len() as f64).ceil() as usize).clamp(1, values.len());
            values[i - 1]
        };
        Quantiles {
            p50_us: rank(0.5),
            p99_us: rank(0.99),
            max_us: values.last().copied().unwrap_or(0),
        }
    }
}

/// What the literal rule "at most L in any window W" says of a sequence of decisions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Audit {
    /// Requests admitted.
    pub admitted: u64,
    /// Requests rejected.
    pub rejected: u64,
    /// Admitted requests as a share of first tries.
    pub served_share: Option<f64>,
    /// The most admissions in any trailing window.
    pub busiest: u64,
    /// Where the first busiest window ends, in µs from the start.
    pub busiest_at_us: Micros,
    /// Admissions while `L` were already in the window.
    pub wrong_admits: u64,
    /// Rejections while the window had room.
    pub wrong_rejects: u64,
}

/// How a model limiter decided the same send times, against the real one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelComparison {
    /// The model's spec, as given.
    pub model: String,
    /// The model's decisions, audited like the real ones.
    pub audit: Audit,
    /// Decisions on which model and real limiter agree.
    pub agree: u64,
    /// Decisions compared (admitted or rejected by the real limiter).
    pub compared: u64,
    /// `agree / compared`.
    pub agreement: Option<f64>,
    /// Admitted by the real limiter, rejected by the model.
    pub real_only: u64,
    /// Rejected by the real limiter, admitted by the model.
    pub model_only: u64,
}

/// The compact per-request trace in a report: times and one letter a request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceData {
    /// When each request was sent, µs from the start, in order.
    pub sent_us: Vec<Micros>,
    /// The real outcome of each, one [`Outcome::letter`] each.
    pub outcome: String,
    /// The model's decision on each request it was compared on (`A` or `R`), `-` elsewhere.
    pub model: Option<String>,
}

/// What a probe found: counts, timing, the audit, the model's verdict and the trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeReport {
    /// What was probed: a URL, or a Redis URL and script.
    pub target: String,
    /// The traffic spec.
    pub traffic: String,
    /// `L`.
    pub limit: u64,
    /// `W`, in µs.
    pub window_us: Micros,
    /// The scenario's duration, in µs.
    pub duration_us: Micros,
    /// The seed of the arrivals.
    pub seed: u64,
    /// The command that produced the report, if the sender gives it.
    pub command: Option<String>,
    /// Requests sent, retries included.
    pub sent: u64,
    /// First tries.
    pub offered: u64,
    /// Answers that were neither admitted nor rejected.
    pub other: u64,
    /// Requests that got no answer.
    pub errors: u64,
    /// Requests that timed out.
    pub timeouts: u64,
    /// How late sends were against the plan.
    pub lateness: Quantiles,
    /// How long answers took.
    pub latency: Quantiles,
    /// The audit of the real limiter's decisions.
    pub audit: Audit,
    /// The model, if one was given.
    pub comparison: Option<ModelComparison>,
    /// Every request.
    pub trace: TraceData,
}

/// Who and what a report is about: the parts of a report the records do not hold.
#[derive(Debug, Clone)]
pub struct ProbeMeta<'a> {
    /// See [`ProbeReport::target`].
    pub target: String,
    /// The scenario probed with.
    pub scenario: &'a Scenario,
    /// See [`ProbeReport::command`].
    pub command: Option<String>,
}

impl ProbeReport {
    /// Audits `records` (in any order) and compares them with `model`, built for the same
    /// scenario, if given. Only admitted and rejected requests are audited and compared: a
    /// request with no answer may or may not have reached the limiter.
    pub fn new(
        meta: ProbeMeta<'_>,
        records: &[Record],
        model: Option<(&str, Limiter)>,
    ) -> ProbeReport {
        let scenario = meta.scenario;
        let mut records = records.to_vec();
        records.sort_by_key(|r| (r.sent, r.due));
        let decided: Vec<(Micros, bool)> = records
            .iter()
            .filter_map(|r| match r.outcome {
                Outcome::Admitted => Some((r.sent, true)),
                Outcome::Rejected => Some((r.sent, false)),
                _ => None,
            })
            .collect();
        let offered = records.iter().filter(|r| r.attempt == 1).count() as u64;
        let real_audit = audit(scenario, &decided, offered);
        let count = |o: Outcome| records.iter().filter(|r| r.outcome == o).count() as u64;
        let mut model_letters = None;
        let comparison = model.map(|(spec, mut limiter)| {
            let mut letters = String::with_capacity(records.len());
            let mut model_decisions = Vec::with_capacity(decided.len());
            let (mut agree, mut real_only, mut model_only) = (0, 0, 0);
            for r in &records {
                let real = match r.outcome {
                    Outcome::Admitted => true,
                    Outcome::Rejected => false,
                    _ => {
                        letters.push('-');
                        continue;
                    }
                };
                let m = limiter.decide(r.sent).admitted();
                letters.push(if m { 'A' } else { 'R' });
                model_decisions.push((r.sent, m));
                match (real, m) {
                    (true, false) => real_only += 1,
                    (false, true) => model_only += 1,
                    _ => agree += 1,
                }
            }
            model_letters = Some(letters);
            let compared = decided.len() as u64;
            ModelComparison {
                model: spec.to_owned(),
                audit: audit(scenario, &model_decisions, offered),
                agree,
                compared,
                agreement: (compared > 0).then(|| agree as f64 / compared as f64),
                real_only,
                model_only,
            }
        });
        let trace = TraceData {
            sent_us: records.iter().map(|r| r.sent).collect(),
            outcome: records.iter().map(|r| r.outcome.letter()).collect(),
            model: model_letters,
        };
        ProbeReport {
            target: meta.target,
            traffic: scenario.traffic.name().to_owned(),
            limit: scenario.limit,
            window_us: scenario.window,
            duration_us: scenario.duration,
            seed: scenario.seed,
            command: meta.command,
            sent: records.len() as u64,
            offered,
            other: count(Outcome::Other),
            errors: count(Outcome::Error),
            timeouts: count(Outcome::Timeout),
            lateness: Quantiles::of(
                records
                    .iter()
                    .map(|r| r.sent.saturating_sub(r.due))
                    .collect(),
            ),
            latency: Quantiles::of(records.iter().map(|r| r.latency).collect()),
            audit: real_audit,
            comparison,
            trace,
        }
    }
}

fn audit(scenario: &Scenario, decided: &[(Micros, bool)], offered: u64) -> Audit {
    let mut auditor = Auditor::new(scenario.limit, scenario.window);
    for &(t, admitted) in decided {
        auditor.record(t, admitted);
    }
    let admitted = decided.iter().filter(|d| d.1).count() as u64;
    Audit {
        admitted,
        rejected: decided.len() as u64 - admitted,
        served_share: (offered > 0).then(|| admitted as f64 / offered as f64),
        busiest: auditor.busiest,
        busiest_at_us: auditor.busiest_at,
        wrong_admits: auditor.wrong_admits,
        wrong_rejects: auditor.wrong_rejects,
    }
}
