//! The report of a recorded probe: the records audited with the simulator's auditor and, given
//! a model limiter, compared with it decision by decision on the same send times.

use super::record::{Outcome, Record};
use crate::audit::Auditor;
use crate::limiter::{Decide, Decision, Limiter};
use crate::sim::Scenario;
use crate::time::Micros;
use serde::{Deserialize, Serialize};

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
    /// The model's admissions that leave later than they arrive (nginx without `nodelay`, or
    /// with `delay=`; a queueing leaky bucket): 0 for a model that only admits or rejects, and
    /// in reports written before it was recorded.
    #[serde(default)]
    pub delayed: u64,
    /// The longest of those delays, µs.
    #[serde(default)]
    pub longest_wait_us: Micros,
    /// With several gateways, the model fleet's coordination (`local`, `central`, ...), as
    /// `--coord` reads it: the model decided each request at the gateway it was sent to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coord: Option<String>,
}

/// One gateway of a probe sent to several: what was sent to it and what it admitted,
/// audited alone against the rule, and the model's decisions on the same requests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GatewayReport {
    /// Its URL (or Redis connection).
    pub target: String,
    /// Requests sent to it, retries included.
    pub sent: u64,
    /// First tries sent to it.
    pub offered: u64,
    /// Requests it admitted.
    pub admitted: u64,
    /// Requests it rejected.
    pub rejected: u64,
    /// The most of its own admissions in any trailing window.
    pub busiest: u64,
    /// Where its first busiest window ends, in µs from the start.
    pub busiest_at_us: Micros,
    /// The model's decisions on the requests sent to it, if a model was given.
    pub model: Option<GatewayModel>,
}

/// The model's decisions on one gateway's requests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GatewayModel {
    /// Requests the model admitted at this gateway.
    pub admitted: u64,
    /// The most of those in any trailing window.
    pub busiest: u64,
    /// Decisions on which model and real gateway agree (a burst compared by how many of
    /// it each admitted at this gateway).
    pub agree: u64,
    /// Decisions compared.
    pub compared: u64,
    /// `agree / compared`.
    pub agreement: Option<f64>,
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
    /// How long each answer took, µs (empty in a report written before it was recorded):
    /// what shows a limiter that delays rather than rejects, request by request.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub latency_us: Vec<Micros>,
    /// With several gateways, the one each request was sent to (from 0); empty with one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gateway: Vec<u32>,
    /// The `Retry-After` each answer carried, as a delay in µs (`null` for an answer without
    /// one); empty, and absent, when no answer carried one. A retrying client that honours it
    /// made the retry due at the rejection's answer (`sent_us + latency_us`) plus this delay.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retry_after_us: Vec<Option<Micros>>,
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
    /// With several gateways, how requests were routed to them (`round-robin`, `random`,
    /// `skewed:hot=X`); absent with one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<String>,
    /// With several gateways, each one's part (the numbers above are the whole fleet's
    /// against the global rule); empty, and absent, with one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gateways: Vec<GatewayReport>,
    /// The wall clock at the probe's time 0, µs since the Unix epoch (0: not recorded). A
    /// model whose windows are the wall clock's (limits' sliding-window counter) decides
    /// each request at its send time plus this, so that its windows fall where the real
    /// limiter's do.
    #[serde(default)]
    pub epoch_us: Micros,
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
                Err(E::custom(format!(
                    "a seed of {}",
                    crate::decimal::shortest(v)
                )))
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
    /// With several gateways, each one's target, in the order the router numbers them, and
    /// the route's text; with one, empty and `None`, and the report is a one-target report.
    pub gateways: Vec<String>,
    /// See [`ProbeReport::route`].
    pub route: Option<String>,
    /// See [`ProbeReport::epoch_us`].
    pub epoch_us: Micros,
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
                let (c, letters) = compare(
                    scenario,
                    &records,
                    &groups,
                    offered,
                    (spec, meta.epoch_us),
                    limiter,
                );
                (Some(c), Some(letters))
            }
            None => (None, None),
        };
        let fleet = meta.gateways.len() > 1;
        let gateways = if fleet {
            gateway_reports(
                scenario,
                &records,
                &groups,
                &meta.gateways,
                model_letters.as_deref(),
            )
        } else {
            Vec::new()
        };
        let trace = TraceData {
            sent_us: records.iter().map(|r| r.sent).collect(),
            due_us: records.iter().map(|r| r.due).collect(),
            outcome: records.iter().map(|r| r.outcome.letter()).collect(),
            model: model_letters,
            latency_us: records.iter().map(|r| r.latency).collect(),
            gateway: if fleet {
                records.iter().map(|r| r.gateway).collect()
            } else {
                Vec::new()
            },
            retry_after_us: if records.iter().any(|r| r.retry_after.is_some()) {
                records.iter().map(|r| r.retry_after).collect()
            } else {
                Vec::new()
            },
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
            route: if fleet { meta.route } else { None },
            gateways,
            epoch_us: meta.epoch_us,
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
pub(super) fn groups(records: &[Record]) -> Vec<Vec<usize>> {
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
pub(super) fn canonical(
    records: &[Record],
    groups: &[Vec<usize>],
    admits: &[u64],
) -> Vec<(Micros, bool)> {
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

/// What a model `spec` adds to a probe's send times so that its windows fall where the wall
/// clock's do: the wall clock at time 0 (`epoch_us`) within the model's period, for a model
/// whose windows are the wall clock's ([`crate::LimiterSpec::wall_clock_period`]); 0 for
/// every other model, and when the wall clock was not recorded.
pub fn wall_clock_phase(spec: &str, window: Micros, epoch_us: Micros) -> Micros {
    crate::LimiterSpec::parse(spec)
        .ok()
        .and_then(|s| s.wall_clock_period(window))
        .filter(|&p| p > 0)
        .map_or(0, |p| epoch_us % p)
}

/// Decides the real limiter's decided requests with `limiter` and compares, group by group
/// (see [`groups`]): a group is compared by how many each admitted, and the model's admits are
/// matched with the real ones first in the model's letters. A model fleet decides each request
/// at the gateway it was sent to, and its letters are matched so within each gateway's part
/// of a group (with one gateway, the group). Returns the comparison and the model's letters
/// (`-` for unanswered requests).
pub(super) fn compare(
    scenario: &Scenario,
    records: &[Record],
    groups: &[Vec<usize>],
    offered: u64,
    (spec, epoch_us): (&str, Micros),
    mut limiter: Limiter,
) -> (ModelComparison, String) {
    let phase = wall_clock_phase(spec, scenario.window, epoch_us);
    let mut letters = vec!['-'; records.len()];
    let (mut agree, mut real_only, mut model_only, mut compared) = (0, 0, 0, 0u64);
    let (mut delayed, mut longest_wait_us) = (0, 0);
    let mut model_admits_per_group = Vec::with_capacity(groups.len());
    // The model decides each request at its send time, never earlier than the one before.
    let mut last = 0;
    for group in groups {
        let mut decide_order = group.clone();
        decide_order.sort_by_key(|&k| (records[k].due, records[k].sent));
        let mut model_admits = 0u64;
        // The model's admissions at each gateway (one entry with one gateway).
        let mut at_gateway: Vec<(u32, u64)> = Vec::new();
        for &k in &decide_order {
            let t = records[k].sent.max(last);
            last = t;
            let t = t + phase;
            if let Decision::Admit { at } = decide_on(&mut limiter, records[k].gateway, t) {
                match at_gateway.iter_mut().find(|e| e.0 == records[k].gateway) {
                    Some(e) => e.1 += 1,
                    None => at_gateway.push((records[k].gateway, 1)),
                }
                model_admits += 1;
                if at > t {
                    delayed += 1;
                    longest_wait_us = longest_wait_us.max(at - t);
                }
            }
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
        // Real admits first, then real rejects: the model's admits go to the front, within
        // each gateway's part of the group.
        let (mut ordered, rejects): (Vec<usize>, Vec<usize>) = group
            .iter()
            .partition(|&&k| records[k].outcome == Outcome::Admitted);
        ordered.extend(rejects);
        let mut given: Vec<(u32, u64)> = Vec::new();
        for &k in &ordered {
            let gw = records[k].gateway;
            let admits = at_gateway.iter().find(|e| e.0 == gw).map_or(0, |e| e.1);
            let rank = match given.iter_mut().find(|e| e.0 == gw) {
                Some(e) => {
                    e.1 += 1;
                    e.1 - 1
                }
                None => {
                    given.push((gw, 1));
                    0
                }
            };
            letters[k] = if rank < admits { 'A' } else { 'R' };
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
        delayed,
        longest_wait_us,
        coord: None,
    };
    (comparison, letters.into_iter().collect())
}

/// The model's decision on a request that reached `gateway`: a model fleet decides it there
/// (its router is not asked; the probe's router, the same code, already chose), any other
/// model decides it as one limiter.
fn decide_on(limiter: &mut Limiter, gateway: u32, t: Micros) -> Decision {
    #[cfg(feature = "fleet")]
    if let Limiter::Fleet(fleet) = limiter {
        return fleet.decide_on(gateway as usize, t);
    }
    let _ = gateway;
    limiter.decide(t)
}

/// Each gateway's part of a probe sent to several: its requests, audited alone with the same
/// auditor (a group's admissions at the gateway taken to be its earliest-stamped requests
/// there, as for the whole fleet), and, given the model's letters, the model's on them.
pub(super) fn gateway_reports(
    scenario: &Scenario,
    records: &[Record],
    groups: &[Vec<usize>],
    targets: &[String],
    model: Option<&str>,
) -> Vec<GatewayReport> {
    let model: Option<Vec<char>> = model.map(|m| m.chars().collect());
    targets
        .iter()
        .enumerate()
        .map(|(gw, target)| {
            let gw = gw as u32;
            let mine = |k: &usize| records[*k].gateway == gw;
            let parts: Vec<Vec<usize>> = groups
                .iter()
                .map(|g| g.iter().copied().filter(mine).collect::<Vec<usize>>())
                .filter(|p| !p.is_empty())
                .collect();
            let count = |p: &Vec<usize>, admitted: &dyn Fn(usize) -> bool| {
                p.iter().filter(|&&k| admitted(k)).count() as u64
            };
            let real_admitted = |k: usize| records[k].outcome == Outcome::Admitted;
            let real: Vec<u64> = parts.iter().map(|p| count(p, &real_admitted)).collect();
            let offered = records
                .iter()
                .filter(|r| r.gateway == gw && r.attempt == 1)
                .count() as u64;
            let audited = audit(scenario, &canonical(records, &parts, &real), offered);
            let model = model.as_ref().map(|letters| {
                let model_admitted = |k: usize| letters[k] == 'A';
                let admits: Vec<u64> = parts.iter().map(|p| count(p, &model_admitted)).collect();
                let compared: u64 = parts.iter().map(|p| p.len() as u64).sum();
                let agree: u64 = parts
                    .iter()
                    .zip(real.iter().zip(&admits))
                    .map(|(p, (&r, &m))| p.len() as u64 - r.abs_diff(m))
                    .sum();
                let a = audit(scenario, &canonical(records, &parts, &admits), offered);
                GatewayModel {
                    admitted: a.admitted,
                    busiest: a.busiest,
                    agree,
                    compared,
                    agreement: (compared > 0).then(|| agree as f64 / compared as f64),
                }
            });
            GatewayReport {
                target: target.clone(),
                sent: records.iter().filter(|r| r.gateway == gw).count() as u64,
                offered,
                admitted: audited.admitted,
                rejected: audited.rejected,
                busiest: audited.busiest,
                busiest_at_us: audited.busiest_at_us,
                model,
            }
        })
        .collect()
}

pub(super) fn audit(scenario: &Scenario, decided: &[(Micros, bool)], offered: u64) -> Audit {
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
