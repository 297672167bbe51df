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

impl ProbeReport {
    /// The scenario a report was recorded with, holding `model` as its one limiter (the
    /// traffic is not needed again: the report's trace is what was sent).
    pub fn scenario(&self, model: &crate::LimiterSpec) -> Scenario {
        Scenario {
            limiters: vec![model.clone()],
            limit: self.limit,
            window: self.window_us,
            duration: self.duration_us.max(1),
            ..Scenario::default()
        }
    }

    /// The same report compared with another model, from its trace alone: how a reader asks
    /// "does my gateway behave like this limiter?" of a report they recorded.
    pub fn with_model(&self, model: &crate::LimiterSpec) -> Result<ProbeReport, Error> {
        let scenario = self.scenario(model);
        let limiter = scenario.build_limiter(model, 0)?;
        let records: Vec<Record> = self
            .trace
            .sent_us
            .iter()
            .zip(self.trace.outcome.chars())
            .enumerate()
            .map(|(i, (&sent, c))| Record {
                due: self.trace.due_us.get(i).copied().unwrap_or(sent),
                sent,
                attempt: 1,
                outcome: Outcome::from_letter(c).unwrap_or(Outcome::Other),
                latency: 0,
            })
            .collect();
        let groups = groups(&records);
        let (comparison, letters) = compare(
            &scenario,
            &records,
            &groups,
            self.offered,
            &model.text,
            limiter,
        );
        let mut out = self.clone();
        out.comparison = Some(comparison);
        out.trace.model = Some(letters);
        Ok(out)
    }

    /// Checks that a report read from a file is whole and consistent, so that what the page
    /// shows of it is what was recorded: a trace of one time and letter a request sent, in
    /// order, whose letters add up to the counts, within the simulator's ranges.
    pub fn check(&self) -> Result<(), Error> {
        let bad = |problem: String| Error::BadFile {
            problem,
            accepted: "a report written by `ratelab probe --format json`".into(),
        };
        let (lo, hi) = crate::sim::LIMIT_RANGE;
        if !(lo..=hi).contains(&self.limit) {
            return Err(bad(format!(
                "has a limit of {}, outside {lo} to {hi}",
                self.limit
            )));
        }
        let (lo, hi) = crate::sim::WINDOW_RANGE;
        if !(lo..=hi).contains(&self.window_us) {
            return Err(bad(format!(
                "has a window of {} µs, outside 1ms to 24h",
                self.window_us
            )));
        }
        if self.sent > MAX_REQUESTS {
            return Err(bad(format!(
                "has {} requests, more than a probe sends ({MAX_REQUESTS})",
                self.sent
            )));
        }
        let n = self.trace.sent_us.len() as u64;
        let letters = self.trace.outcome.chars().count() as u64;
        if n != self.sent || letters != self.sent {
            return Err(bad(format!(
                "says {} requests were sent but its trace has {n} times and {letters} outcomes",
                self.sent
            )));
        }
        if self.offered > self.sent {
            return Err(bad(format!(
                "has more first tries ({}) than requests ({})",
                self.offered, self.sent
            )));
        }
        if let Some(i) = self.trace.sent_us.windows(2).position(|w| w[0] > w[1]) {
            return Err(bad(format!(
                "has its trace out of order at request {}",
                i + 2
            )));
        }
        if let Some(c) = self
            .trace
            .outcome
            .chars()
            .find(|&c| Outcome::from_letter(c).is_none())
        {
            return Err(bad(format!(
                "has an outcome letter {c:?} in its trace (accepted: A, R, O, E, T)"
            )));
        }
        let count = |c: char| self.trace.outcome.chars().filter(|&x| x == c).count() as u64;
        for (what, letter, said) in [
            ("admitted", 'A', self.audit.admitted),
            ("rejected", 'R', self.audit.rejected),
            ("other", 'O', self.other),
            ("errors", 'E', self.errors),
            ("timeouts", 'T', self.timeouts),
        ] {
            if count(letter) != said {
                return Err(bad(format!(
                    "says {said} {what} but its trace has {}",
                    count(letter)
                )));
            }
        }
        if !self.trace.due_us.is_empty() && self.trace.due_us.len() as u64 != n {
            return Err(bad(format!(
                "has {} due times for {n} requests in its trace",
                self.trace.due_us.len()
            )));
        }
        if let Some(m) = &self.trace.model {
            if m.chars().count() as u64 != n || m.chars().any(|c| !"AR-".contains(c)) {
                return Err(bad(
                    "has a model trace that is not one A, R or - a request".into()
                ));
            }
        }
        Ok(())
    }
}

/// The busiest millisecond and second of a plan's worst case, and where they end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Peaks {
    per_ms: u64,
    per_ms_at: Micros,
    per_s: u64,
    per_s_at: Micros,
}

impl Peaks {
    /// The peaks of every try a retrying client could send: each first try in `first` (sorted)
    /// and, if all its tries are rejected, `tries − 1` retries `every` apart. The tries are
    /// never held all at once: `tries` shifted copies of `first` are merged on the fly, a
    /// leading merge counting into each span and a trailing one per span counting out, so
    /// the work is O(n log tries) for n tries and the memory O(tries).
    fn of(first: &[Micros], tries: u64, every: Micros) -> Peaks {
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
struct Merged<'a> {
    first: &'a [Micros],
    every: Micros,
    /// The next time of each copy that has one: (time, copy, index into `first`).
    heads: std::collections::BinaryHeap<std::cmp::Reverse<(Micros, u64, usize)>>,
}

impl<'a> Merged<'a> {
    fn new(first: &'a [Micros], tries: u64, every: Micros) -> Self {
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
    /// The order of outcomes at one instant in a trace: admissions first.
    fn rank(self) -> u8 {
        match self {
            Outcome::Admitted => 0,
            Outcome::Rejected => 1,
            Outcome::Timeout => 2,
            Outcome::Error => 3,
            Outcome::Other => 4,
        }
    }

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
    /// When the plan made each due (empty in a report that does not give it: then the send
    /// times stand in).
    #[serde(default)]
    pub due_us: Vec<Micros>,
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
    /// The seed of the arrivals. Read leniently: a reader whose JSON parser keeps numbers as
    /// doubles (a browser's) may hand a seed above 2^53 over rounded.
    #[serde(deserialize_with = "lenient_u64")]
    pub seed: u64,
    /// The command that produced the report, if the sender gives it.
    pub command: Option<String>,
    /// Whether the probe was stopped before it had sent its whole plan (Ctrl-C): the report
    /// is then of what was sent. Absent (false) in reports written before it was recorded.
    #[serde(default)]
    pub partial: bool,
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

fn lenient_u64<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    struct V;
    impl serde::de::Visitor<'_> for V {
        type Value = u64;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a whole number from 0 to 2^64 − 1")
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<u64, E> {
            Ok(v)
        }
        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<u64, E> {
            u64::try_from(v).map_err(|_| E::custom("a seed below 0"))
        }
        fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<u64, E> {
            if v.fract() == 0.0 && (0.0..=u64::MAX as f64).contains(&v) {
                // Saturating: 2^64 − 1 arrives as 2^64.
                Ok(v as u64)
            } else {
                Err(E::custom(format!("a seed of {v}")))
            }
        }
    }
    d.deserialize_any(V)
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
        // In send order; at one µs, admissions before rejections (a limiter admits until it is
        // full), then the rest, so that neither the audit nor the trace depends on the order
        // the answers came in.
        records.sort_by_key(|r| (r.sent, r.due, r.outcome.rank()));
        let groups = groups(&records);
        let real_admits: Vec<u64> = groups
            .iter()
            .map(|g| {
                g.iter()
                    .filter(|&&k| records[k].outcome == Outcome::Admitted)
                    .count() as u64
            })
            .collect();
        let offered = records.iter().filter(|r| r.attempt == 1).count() as u64;
        let real_audit = audit(
            scenario,
            &canonical(&records, &groups, &real_admits),
            offered,
        );
        let count = |o: Outcome| records.iter().filter(|r| r.outcome == o).count() as u64;
        let (comparison, model_letters) = match model {
            Some((spec, limiter)) => {
                let (c, letters) = compare(scenario, &records, &groups, offered, spec, limiter);
                (Some(c), Some(letters))
            }
            None => (None, None),
        };
        let trace = TraceData {
            sent_us: records.iter().map(|r| r.sent).collect(),
            due_us: records.iter().map(|r| r.due).collect(),
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
            partial: false,
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

/// The decided requests (admitted or rejected) in groups whose order of arrival at the
/// limiter is not known, in due order, each sorted by send stamp. Requests the plan made due
/// at the same µs (a burst) are one group: the sender puts them on the wire one after another,
/// on separate connections, and which of them the limiter saw first is not known. A
/// later-due request stamped before one of a group's joins it: on a loaded machine the sends
/// of two bursts 20 ms apart can interleave, and then their order is not known either.
fn groups(records: &[Record]) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..records.len())
        .filter(|&k| matches!(records[k].outcome, Outcome::Admitted | Outcome::Rejected))
        .collect();
    order.sort_by_key(|&k| (records[k].due, records[k].sent));
    let mut out: Vec<Vec<usize>> = Vec::new();
    let mut latest_sent = 0;
    for k in order {
        let r = &records[k];
        let joins = out
            .last()
            .is_some_and(|g: &Vec<usize>| records[g[0]].due == r.due || r.sent < latest_sent);
        if joins {
            if let Some(g) = out.last_mut() {
                g.push(k);
            }
        } else {
            out.push(vec![k]);
        }
        latest_sent = latest_sent.max(r.sent);
    }
    for g in &mut out {
        g.sort_by_key(|&k| (records[k].sent, records[k].due));
    }
    out
}

/// What the auditor is given for a limiter that admitted `admits[i]` of group `i`: since the
/// order in which a group reached the limiter is not known, its admissions are taken to be
/// its earliest-stamped requests (a limiter admits the first it sees). The real limiter and a
/// model are audited this way alike, so where they admitted as many of each group their
/// audits are equal, however a burst was spread on the wire; in send order, admissions first
/// at one µs.
fn canonical(records: &[Record], groups: &[Vec<usize>], admits: &[u64]) -> Vec<(Micros, bool)> {
    let mut out: Vec<(Micros, bool)> = groups
        .iter()
        .zip(admits)
        .flat_map(|(g, &a)| {
            g.iter()
                .enumerate()
                .map(move |(rank, &k)| (records[k].sent, (rank as u64) < a))
        })
        .collect();
    out.sort_by_key(|&(t, admitted)| (t, !admitted));
    out
}

/// Decides the real limiter's decided requests with `limiter` and compares, group by group
/// (see [`groups`]): a group is compared by how many each admitted, and the model's admits are
/// matched with the real ones first in the model's letters. Returns the comparison and the
/// model's letters (`-` for unanswered requests).
fn compare(
    scenario: &Scenario,
    records: &[Record],
    groups: &[Vec<usize>],
    offered: u64,
    spec: &str,
    mut limiter: Limiter,
) -> (ModelComparison, String) {
    let mut letters = vec!['-'; records.len()];
    let (mut agree, mut real_only, mut model_only, mut compared) = (0, 0, 0, 0u64);
    let mut model_admits_per_group = Vec::with_capacity(groups.len());
    // The model decides each request at its send time, never earlier than the one before.
    let mut last = 0;
    for group in groups {
        let mut decide_order = group.clone();
        decide_order.sort_by_key(|&k| (records[k].due, records[k].sent));
        let mut model_admits = 0u64;
        for &k in &decide_order {
            let t = records[k].sent.max(last);
            last = t;
            model_admits += u64::from(limiter.decide(t).admitted());
            compared += 1;
        }
        model_admits_per_group.push(model_admits);
        let real_admits = group
            .iter()
            .filter(|&&k| records[k].outcome == Outcome::Admitted)
            .count() as u64;
        agree += group.len() as u64 - model_admits.abs_diff(real_admits);
        real_only += real_admits.saturating_sub(model_admits);
        model_only += model_admits.saturating_sub(real_admits);
        // Real admits first, then real rejects: the model's admits go to the front.
        let (mut ordered, rejects): (Vec<usize>, Vec<usize>) = group
            .iter()
            .partition(|&&k| records[k].outcome == Outcome::Admitted);
        ordered.extend(rejects);
        for (rank, &k) in ordered.iter().enumerate() {
            letters[k] = if (rank as u64) < model_admits {
                'A'
            } else {
                'R'
            };
        }
    }
    let comparison = ModelComparison {
        model: spec.to_owned(),
        audit: audit(
            scenario,
            &canonical(records, groups, &model_admits_per_group),
            offered,
        ),
        agree,
        compared,
        agreement: (compared > 0).then(|| agree as f64 / compared as f64),
        real_only,
        model_only,
    };
    (comparison, letters.into_iter().collect())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::trace;
    use crate::spec::{LimiterSpec, TrafficSpec};
    use crate::time::{MINUTE, MS};

    fn scenario(traffic: &str, limiter: &str) -> Scenario {
        Scenario {
            limiters: vec![LimiterSpec::parse(limiter).expect("limiter")],
            traffic: TrafficSpec::parse(traffic).expect("traffic"),
            limit: 20,
            window: SECOND,
            duration: 10 * SECOND,
            ..Scenario::default()
        }
    }

    /// Sends a plan to a simulated limiter that answers at once, as a perfect network would.
    fn answered_by_model(s: &Scenario) -> Vec<Record> {
        let mut plan = Plan::new(s).expect("plan");
        let mut limiter = s.build_limiter(&s.limiters[0], 0).expect("limiter");
        let mut out = Vec::new();
        while let Some((due, attempt)) = plan.next() {
            let admitted = limiter.decide(due).admitted();
            if !admitted {
                plan.rejected(due, attempt);
            }
            out.push(Record {
                due,
                sent: due,
                attempt,
                outcome: if admitted {
                    Outcome::Admitted
                } else {
                    Outcome::Rejected
                },
                latency: 0,
            });
        }
        out
    }

    fn report(s: &Scenario, records: &[Record], model: bool) -> ProbeReport {
        let model = model.then(|| {
            let spec = &s.limiters[0];
            (spec.text.as_str(), s.build_limiter(spec, 0).expect("model"))
        });
        let meta = ProbeMeta {
            target: "test".into(),
            scenario: s,
            command: None,
        };
        ProbeReport::new(meta, records, model)
    }

    #[test]
    fn a_plan_sends_the_simulators_arrivals_and_retries() {
        for (traffic, limiter) in [
            ("steady:load=1.5", "sliding-log"),
            ("boundary-burst:before=10ms,after=10ms", "fixed-window"),
            ("flood:every=7ms", "token-bucket:burst=5"),
            (
                "retry:rate=15/1s,spike=40,at=1s,tries=4,every=100ms",
                "sliding-log:record-rejects=true",
            ),
            (
                "retry:rate=15/1s,spike=40,at=1s,tries=4,every=100ms",
                "gcra:burst=3",
            ),
        ] {
            let s = scenario(traffic, limiter);
            let records = answered_by_model(&s);
            let (stats, sim) = trace(&s, 0, 0).expect("trace");
            let times: Vec<Micros> = records.iter().map(|r| r.due).collect();
            assert_eq!(times, sim.times, "{traffic} {limiter}");
            let admitted: Vec<bool> = records
                .iter()
                .map(|r| r.outcome == Outcome::Admitted)
                .collect();
            assert_eq!(admitted, sim.admitted, "{traffic} {limiter}");
            // The audit of those records is the simulator's, and the model agrees with all.
            let r = report(&s, &records, true);
            assert_eq!(r.offered, stats.offered, "{traffic}");
            assert_eq!(r.audit.admitted, stats.admitted, "{traffic}");
            assert_eq!(r.audit.busiest, stats.busiest, "{traffic}");
            assert_eq!(r.audit.wrong_admits, stats.wrong_admits, "{traffic}");
            assert_eq!(r.audit.wrong_rejects, stats.wrong_rejects, "{traffic}");
            assert_eq!(r.audit.served_share, stats.served_share(), "{traffic}");
            let c = r.comparison.expect("compared");
            assert_eq!((c.agree, c.compared), (r.sent, r.sent), "{traffic}");
            assert_eq!(c.audit, r.audit);
        }
        // The retrying client sent retries, in reaction to the rejections.
        let s = scenario(
            "retry:rate=15/1s,spike=40,at=1s,tries=4,every=100ms",
            "sliding-log",
        );
        let records = answered_by_model(&s);
        assert!(records.iter().any(|r| r.attempt > 1));
    }

    #[test]
    fn disagreements_are_counted_both_ways_and_unanswered_requests_are_left_out() {
        let s = scenario("boundary-burst:before=10ms,after=10ms", "sliding-log");
        let mut records = answered_by_model(&s);
        // Flip one admit and one reject; lose two answers.
        let first_reject = records
            .iter()
            .position(|r| r.outcome == Outcome::Rejected)
            .expect("a reject");
        records[0].outcome = Outcome::Rejected;
        records[first_reject].outcome = Outcome::Admitted;
        records[1].outcome = Outcome::Timeout;
        records[2].outcome = Outcome::Error;
        let r = report(&s, &records, true);
        // Answers come in any order: the audit is of the send times.
        let mut shuffled = records.clone();
        shuffled.reverse();
        let again = report(&s, &shuffled, true);
        assert_eq!(again.audit, r.audit);
        assert_eq!(again.comparison, r.comparison);
        assert_eq!((r.timeouts, r.errors, r.sent), (1, 1, 40));
        let c = r.comparison.expect("compared");
        // The first burst: 18 answered, the real limiter admitted 17 and the model, with room
        // for 20, all 18. The second: the real one admitted 1, the model 2 (its window holds
        // only 18 admissions, the unanswered two having never reached it).
        assert_eq!((c.compared, c.real_only, c.model_only), (38, 0, 2));
        assert_eq!(c.agree, 36);
        // Sorted by send time whatever order the answers came in, and at one µs admissions
        // first: the first burst's 17 admits, then its reject, timeout and error.
        assert!(r.trace.sent_us.windows(2).all(|w| w[0] <= w[1]));
        let model = r.trace.model.expect("letters");
        assert_eq!(&r.trace.outcome[..20], "AAAAAAAAAAAAAAAAARTE");
        assert_eq!(&model[..20], "AAAAAAAAAAAAAAAAAA--");
        assert_eq!(again.trace.outcome, r.trace.outcome);
        assert!(r
            .trace
            .outcome
            .chars()
            .all(|c| Outcome::from_letter(c).is_some_and(|o| o.letter() == c)));
    }

    #[test]
    fn a_burst_is_compared_by_how_many_got_through_whatever_order_it_arrived_in() {
        let s = scenario("boundary-burst:before=10ms,after=10ms", "sliding-log");
        let mut records = answered_by_model(&s);
        // Each burst is sent over 20 µs, one request a µs.
        for (i, r) in records.iter_mut().enumerate() {
            r.sent += i as u64 % 20;
        }
        let first: Vec<Outcome> = records[..20].iter().map(|r| r.outcome).collect();
        assert!(first.iter().all(|&o| o == Outcome::Admitted));
        // The second burst is all rejected by the model; say the real one admitted its last
        // two and rejected two of the first burst's first sends instead.
        records[0].outcome = Outcome::Rejected;
        records[1].outcome = Outcome::Rejected;
        records[38].outcome = Outcome::Admitted;
        records[39].outcome = Outcome::Admitted;
        let c = report(&s, &records, true).comparison.expect("compared");
        // Each burst is one group: 18 of 20 and 2 of 20 admitted against the model's 20 and 0.
        assert_eq!((c.real_only, c.model_only, c.agree), (2, 2, 36));
        // Within a group, which requests got through does not matter, only how many.
        records[0].outcome = Outcome::Admitted;
        records[7].outcome = Outcome::Rejected;
        records[20].outcome = Outcome::Admitted;
        records[38].outcome = Outcome::Rejected;
        let again = report(&s, &records, true).comparison.expect("compared");
        assert_eq!((again.real_only, again.model_only), (2, 2));
        // And a report read back compares the same, by its due times.
        let r = report(&s, &records, true);
        let back = r.with_model(&s.limiters[0]).expect("model");
        assert_eq!(back.comparison, r.comparison);
    }

    #[test]
    fn a_burst_admitted_in_another_order_is_audited_like_the_model() {
        // A boundary burst 1 s apart, as the live nginx test sends it: which of the first
        // burst's admissions are still inside the trailing window of the second depends on
        // which of the spread-out sends were admitted. The real limiter admitted the last sent
        // of each burst, the model (deciding in send order) the first: the audits must agree.
        let s = scenario("boundary-burst", "token-bucket:burst=5");
        let mut records = answered_by_model(&s);
        let mut bursts: Vec<Micros> = records.iter().map(|r| r.due).collect();
        bursts.dedup();
        assert_eq!(bursts.len(), 2, "two instants");
        assert_eq!(bursts[1] - bursts[0], SECOND, "one window apart");
        // Each burst leaves over 1.9 ms, one request every 100 µs.
        for (i, r) in records.iter_mut().enumerate() {
            r.sent += (i as u64 % 20) * 100;
        }
        // Reverse who got through inside each burst.
        for burst in records.chunks_mut(20) {
            let admitted: Vec<Outcome> = burst.iter().map(|r| r.outcome).collect();
            for (r, o) in burst.iter_mut().zip(admitted.into_iter().rev()) {
                r.outcome = o;
            }
        }
        let r = report(&s, &records, true);
        let c = r.comparison.clone().expect("compared");
        assert_eq!((c.agree, c.compared), (40, 40));
        // Which members of a burst got through is not what the audit goes by (the order they
        // reached the limiter in is not known): a burst's admissions are audited at its
        // earliest stamps, for the real limiter and the model alike, so the audits are equal.
        assert_eq!(c.audit, r.audit);
        // The same as if the real limiter had admitted the first sent of each burst.
        let spread: Vec<Record> = answered_by_model(&s)
            .into_iter()
            .enumerate()
            .map(|(i, mut r)| {
                r.sent += (i as u64 % 20) * 100;
                r
            })
            .collect();
        let spread = report(&s, &spread, true);
        assert_eq!(spread.audit, r.audit);
        // Audited at the stamps of the requests that got through, the busiest window would
        // end elsewhere: the test tells the two apart.
        let by_stamp = audit(&s, &records_by_stamp(&records), r.offered);
        assert_ne!(by_stamp.busiest_at_us, r.audit.busiest_at_us);
    }

    #[test]
    fn a_burst_reject_stamped_before_its_admits_is_not_a_wrong_reject() {
        // Seen in the soak against Redis's literal sliding log: the spike's requests leave
        // spread out, and the script saw one stamped early after others; audited in stamp
        // order its reject came while the window still had room, a "wrong reject" of the
        // literal rule itself. Audited by count, a burst's admissions come first.
        let s = scenario(
            "retry:rate=15/1s,spike=40,at=1s,tries=1,every=100ms",
            "sliding-log",
        );
        let mut records = answered_by_model(&s);
        let spike: Vec<usize> = (0..records.len())
            .filter(|&k| records[k].due == SECOND)
            .collect();
        assert_eq!(spike.len(), 40);
        for (i, &k) in spike.iter().enumerate() {
            records[k].sent += i as u64 * 10;
        }
        let in_order = report(&s, &records, true);
        assert_eq!(in_order.audit.wrong_rejects, 0);
        // The spike's first-stamped request rejected, its last admitted instead.
        let (first, last) = (spike[0], spike[39]);
        assert_eq!(records[first].outcome, Outcome::Admitted);
        assert_eq!(records[last].outcome, Outcome::Rejected);
        records[first].outcome = Outcome::Rejected;
        records[last].outcome = Outcome::Admitted;
        let swapped = report(&s, &records, true);
        assert_eq!(swapped.audit, in_order.audit);
        let c = swapped.comparison.expect("compared");
        assert_eq!((c.agree, c.compared), (c.compared, records.len() as u64));
        // In stamp order the swapped reject would have been counted wrong.
        let by_stamp = audit(&s, &records_by_stamp(&records), swapped.offered);
        assert!(by_stamp.wrong_rejects > 0, "{by_stamp:?}");
    }

    /// The decisions in stamp order with the real letters, as the audit was before bursts
    /// were audited by count.
    fn records_by_stamp(records: &[Record]) -> Vec<(Micros, bool)> {
        let mut v: Vec<(Micros, bool)> = records
            .iter()
            .filter(|r| matches!(r.outcome, Outcome::Admitted | Outcome::Rejected))
            .map(|r| (r.sent, r.outcome == Outcome::Admitted))
            .collect();
        v.sort_unstable();
        v
    }

    #[test]
    fn the_retry_storm_keeps_a_log_that_records_rejects_full() {
        // The live Redis test's scenario: after the spike, every try of the steady stream is
        // rejected and retried, so the log (rejects included) holds far more than L = 20.
        let s = scenario(
            "retry:rate=15/1s,spike=40,at=1s,tries=4,every=100ms",
            "sliding-log:record-rejects=true",
        );
        let s = Scenario {
            duration: 6 * SECOND,
            ..s
        };
        let (_, tr) = trace(&s, 0, 0).expect("trace");
        // The fewest entries in the log just before a try after 2.5 s, counted directly.
        let fewest = tr
            .times
            .iter()
            .enumerate()
            .filter(|&(_, &t)| t > 2_500_000)
            .map(|(i, &t)| tr.times[..i].iter().filter(|&&u| u + SECOND > t).count())
            .min()
            .expect("tries after the spike");
        // The margin the live test relies on: 21 entries above the limit.
        assert_eq!(fewest, 41);
        let late = tr
            .times
            .iter()
            .zip(&tr.admitted)
            .filter(|&(&t, &a)| t > 2_500_000 && a)
            .count();
        assert_eq!(late, 0);
    }

    #[test]
    fn bursts_whose_sends_interleave_are_one_group() {
        // Seen in the soak on a loaded machine: two bursts due 20 ms apart left 53 ms late,
        // and one request of the second was stamped before the first burst's; Redis admitted
        // it and four of the first burst, five in all, as the model did.
        let s = scenario("boundary-burst:before=10ms,after=10ms", "gcra:burst=5");
        let mut records = answered_by_model(&s);
        assert_eq!(records.len(), 40);
        for (i, r) in records.iter_mut().enumerate() {
            r.sent = 1_063_423 + i as u64 * 3;
            r.outcome = Outcome::Rejected;
        }
        records[20].sent = 1_063_301;
        for k in [20, 0, 1, 2, 3] {
            records[k].outcome = Outcome::Admitted;
        }
        let r = report(&s, &records, true);
        let c = r.comparison.expect("compared");
        assert_eq!((c.agree, c.compared), (40, 40), "{c:?}");
        assert_eq!(c.audit.admitted, 5);
        // Sent in order, the two bursts stay two groups: a first-burst request admitted in
        // place of a second-burst one is a disagreement.
        let mut apart = answered_by_model(&s);
        for (i, r) in apart.iter_mut().enumerate() {
            r.sent = 1_063_423 + i as u64 * 3;
        }
        apart[4].outcome = Outcome::Rejected;
        apart[20].outcome = Outcome::Admitted;
        let c = report(&s, &apart, true).comparison.expect("compared");
        assert_eq!((c.agree, c.real_only, c.model_only), (38, 1, 1), "{c:?}");
    }

    #[test]
    fn with_distinct_times_each_flip_is_one_disagreement() {
        let s = scenario("steady:load=1.5", "sliding-log");
        let mut records = answered_by_model(&s);
        let reject = records
            .iter()
            .position(|r| r.outcome == Outcome::Rejected)
            .expect("a reject");
        records[reject].outcome = Outcome::Admitted;
        let c = report(&s, &records, true).comparison.expect("compared");
        assert_eq!((c.real_only, c.model_only), (1, 0));
        assert_eq!(c.agree + 1, c.compared);
    }

    #[test]
    fn a_checked_report_can_be_compared_again_and_a_tampered_one_is_refused() {
        let s = scenario(
            "retry:rate=15/1s,spike=40,at=1s,tries=4,every=100ms",
            "sliding-log:record-rejects=true",
        );
        let r = report(&s, &answered_by_model(&s), true);
        assert_eq!(r.check(), Ok(()));
        // Compared again with the same model, from the trace alone: the same verdict.
        let again = r.with_model(&s.limiters[0]).expect("model");
        assert_eq!(again.comparison, r.comparison);
        assert_eq!(again.trace.model, r.trace.model);
        // Another model disagrees on the lockout.
        let other = r
            .with_model(&LimiterSpec::parse("sliding-log").expect("spec"))
            .expect("model");
        let c = other.comparison.expect("compared");
        assert!(c.model_only > 50, "{c:?}");
        let mut bad = Vec::new();
        let mut t = r.clone();
        t.trace.sent_us.pop();
        bad.push((t, "trace has"));
        let mut t = r.clone();
        t.trace.outcome = t.trace.outcome.replacen('A', "X", 1);
        bad.push((t, "letter 'X'"));
        let mut t = r.clone();
        t.trace.sent_us.swap(0, 5);
        t.trace.sent_us[0] = u64::MAX / 2;
        bad.push((t, "out of order"));
        let mut t = r.clone();
        t.audit.admitted += 1;
        bad.push((t, "admitted"));
        let mut t = r.clone();
        t.limit = 0;
        bad.push((t, "limit of 0"));
        let mut t = r.clone();
        t.offered = t.sent + 1;
        bad.push((t, "first tries"));
        for (t, wanted) in bad {
            let e = t.check().expect_err(wanted).to_string();
            assert!(e.contains(wanted), "{wanted}: {e}");
            assert!(e.contains("ratelab probe --format json"), "{e}");
        }
    }

    #[test]
    fn quantiles_are_nearest_rank() {
        let q = Quantiles::of((1..=1000).rev().collect());
        assert_eq!((q.p50_us, q.p99_us, q.max_us), (500, 990, 1000));
        let q = Quantiles::of(vec![7]);
        assert_eq!((q.p50_us, q.p99_us, q.max_us), (7, 7, 7));
        assert_eq!(Quantiles::of(Vec::new()), Quantiles::default());
    }

    #[test]
    fn plans_over_the_caps_are_refused_before_sending() {
        let mut s = scenario("flood:every=100us,for=1s", "sliding-log");
        s.limit = 100_000;
        // 10,000 a second: over the average cap.
        assert!(matches!(Plan::new(&s), Err(Error::TooLarge { .. })));
        // 6,000 at one instant: over the per-millisecond cap.
        let mut s = scenario("boundary-burst", "sliding-log");
        s.limit = 6_000;
        s.window = 10 * SECOND;
        let e = Plan::new(&s).expect_err("too many at once").to_string();
        assert!(e.contains("in one millisecond"), "{e}");
        let mut s = scenario("steady:load=100", "sliding-log");
        s.limit = 1_000;
        s.duration = HOUR;
        assert!(check_size(&s).is_err());
        s.duration = 2 * HOUR;
        assert!(Plan::new(&s).is_err());
        // Within the caps, the summary says what will be sent.
        let s = scenario("boundary-burst:before=10ms,after=10ms", "sliding-log");
        let p = Plan::new(&s).expect("plan");
        assert_eq!(p.summary.first_tries, 40);
        assert_eq!(p.summary.peak_per_ms, 20);
        assert_eq!(p.summary.peak_per_s, 40);
        assert_eq!(p.summary.last_at, SECOND + 10 * MS);
        assert!(p.summary.describe().starts_with("40 request(s)"));
    }

    #[test]
    fn the_duration_cap_counts_every_retry_a_client_could_send() {
        // Ten new requests at 59 minutes, each with up to two retries an hour apart: the last
        // could be due at 179 minutes, far past the hour (the old cap looked at first tries only).
        let mut s = scenario(
            "retry:rate=1/1min,spike=10,at=59min,tries=3,every=1h",
            "gcra",
        );
        s.duration = HOUR;
        let e = Plan::new(&s)
            .expect_err("retries past the hour")
            .to_string();
        assert!(e.contains("last retry could be due at 179min"), "{e}");
        assert!(e.contains("at most 1h, retries included"), "{e}");
        // The same client without retries, and with retries that end within the hour.
        s.traffic = TrafficSpec::parse("retry:rate=1/1min,spike=10,at=59min,tries=1,every=1h")
            .expect("traffic");
        let p = Plan::new(&s).expect("plan");
        assert_eq!(p.summary.last_try_at, p.summary.last_at);
        assert!(p.summary.last_at >= 59 * MINUTE);
        // In a run of 50 minutes, two retries 5 minutes apart end within the hour, and two
        // 11 minutes apart may not.
        s.duration = 50 * MINUTE;
        s.traffic = TrafficSpec::parse("retry:rate=1/1min,spike=10,at=40min,tries=3,every=5min")
            .expect("traffic");
        let p = Plan::new(&s).expect("plan");
        assert_eq!(p.summary.last_try_at, p.summary.last_at + 10 * MINUTE);
        assert!(p.summary.last_try_at <= HOUR);
        s.traffic = TrafficSpec::parse("retry:rate=1/1min,spike=10,at=40min,tries=3,every=11min")
            .expect("traffic");
        let e = Plan::new(&s).expect_err("past the hour").to_string();
        assert!(e.contains("then up to 2 more tries 11min apart"), "{e}");
    }

    #[test]
    fn the_rate_cap_is_a_peak_in_every_second_not_an_average() {
        // 8,000 requests within 200 ms, half an hour into the run: 4,000 a millisecond at
        // most, and on average over the run barely 4 a second (the old cap's measure).
        let mut s = scenario("boundary-burst:before=100ms,after=100ms", "sliding-log");
        s.limit = 4_000;
        s.window = 30 * MINUTE;
        s.duration = HOUR;
        let e = Plan::new(&s).expect_err("a peak over the cap").to_string();
        assert!(e.contains("up to 8000 requests in one second"), "{e}");
        assert!(e.contains("not an average"), "{e}");
        // Spread over more than a second, the same bursts pass.
        s.traffic = TrafficSpec::parse("boundary-burst:before=600ms,after=600ms").expect("t");
        let p = Plan::new(&s).expect("two bursts 1.2 s apart");
        assert_eq!(
            (p.summary.peak_per_s, p.summary.peak_per_ms),
            (4_000, 4_000)
        );
        // Retries count in the worst case: 4,000 new requests at one instant and their
        // retries 1 ms later are 8,000 within one second, though each millisecond holds 4,000.
        let mut s = scenario(
            "retry:rate=1/1min,spike=4000,at=30min,tries=2,every=1ms",
            "gcra",
        );
        s.duration = HOUR;
        let e = Plan::new(&s)
            .expect_err("retries within the second")
            .to_string();
        assert!(e.contains("requests in one second"), "{e}");
        assert!(e.contains("retries included"), "{e}");
        // Retries two seconds later fall in another second.
        s.traffic = TrafficSpec::parse("retry:rate=1/1min,spike=4000,at=30min,tries=2,every=2s")
            .expect("traffic");
        let p = Plan::new(&s).expect("retries in the next seconds");
        // The spike, and the steady stream's odd request in the same second.
        assert!(
            (4_000..4_010).contains(&p.summary.peak_per_s),
            "{:?}",
            p.summary
        );
        assert_eq!(p.summary.most, 2 * p.summary.first_tries);
    }

    #[test]
    fn the_worst_case_peaks_equal_a_recount_of_every_try() {
        // The merged, shifted copies against a plain sort of all tries and a recount.
        let first: Vec<Micros> = [0u64, 0, 300, 999, 1_000, 1_001, 2_500, 900_000, 1_000_000]
            .into_iter()
            .chain((0..200).map(|i| 1_500_000 + i * 37))
            .collect();
        for (tries, every) in [
            (1, 0),
            (2, 1),
            (3, 500),
            (4, 1_000),
            (5, 333_333),
            (7, 2_000_000),
        ] {
            let mut all: Vec<Micros> = first
                .iter()
                .flat_map(|&t| (0..tries).map(move |j| t + j * every))
                .collect();
            all.sort_unstable();
            let merged: Vec<Micros> = Merged::new(&first, tries, every).collect();
            assert_eq!(merged, all);
            let recount = |span: Micros| {
                all.iter()
                    .map(|&t| all.iter().filter(|&&u| u <= t && u + span > t).count() as u64)
                    .max()
                    .unwrap_or(0)
            };
            let p = Peaks::of(&first, tries, every);
            assert_eq!(
                (p.per_ms, p.per_s),
                (recount(1_000), recount(SECOND)),
                "{tries} {every}"
            );
        }
        assert_eq!(Peaks::of(&[], 3, 10).per_s, 0);
    }
}
