//! The report: per-run results combined over runs into one line per limiter (mean and
//! standard error of the share served, busiest windows, wrong decisions, delay quantiles),
//! and its digest.

#[cfg(feature = "clients")]
use super::ClientStats;
use super::{RunStats, Scenario};
use crate::histogram::Histogram;
use crate::spec::LimiterSpec;
use crate::theory;
use crate::time::Micros;
use serde::{Deserialize, Serialize};

/// One limiter's results over all runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LimiterReport {
    /// The spec as given.
    pub limiter: String,
    /// Requests offered, over all runs.
    pub offered: u64,
    /// Requests admitted, over all runs.
    pub admitted: u64,
    /// Decisions, over all runs (retries included).
    pub decisions: u64,
    /// Mean over runs of the share served.
    pub served_share: Option<f64>,
    /// Its standard error (runs ≥ 2).
    pub served_share_se: Option<f64>,
    /// The busiest trailing window of any run.
    pub busiest_window_max: u64,
    /// The busiest trailing window, averaged over runs.
    pub busiest_window_mean: f64,
    /// Wrong admits as a fraction of decisions.
    pub wrong_admits: f64,
    /// Wrong rejects as a fraction of decisions.
    pub wrong_rejects: f64,
    /// The theoretical worst window for this limiter under any traffic, where one is known.
    pub bound: Option<u64>,
    /// Median queueing delay (queueing limiters), µs: nearest rank, to the delay histogram's
    /// precision (exact below 256 µs; above, at most 0.8% below the exact value).
    pub delay_p50_us: Option<Micros>,
    /// 99th percentile queueing delay (queueing limiters), µs, to the same precision.
    pub delay_p99_us: Option<Micros>,
    /// A fleet's room instants over all runs: admissions that one limiter holding every
    /// gateway's admissions would have refused (`--gateways` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub room_instants: Option<u64>,
    /// Each gateway's offered and admitted requests over all runs, and its busiest window of
    /// its own admissions in any run (`--gateways` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gateways: Option<Vec<GatewayReport>>,
    /// What the retrying clients went through (`retry` traffic only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(not(feature = "clients"), serde(skip))]
    pub client: Option<ClientReport>,
}

/// The retrying clients against one limiter, over all runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientReport {
    /// The policy's keys that differ from the essays' client (empty for that client), as
    /// the spec writes them; with a mix, every group's keys joined by `+`.
    pub policy: String,
    /// Clients per run (every group's, with a mix).
    pub clients: u64,
    /// Requests: first tries.
    pub requests: u64,
    /// Tries, retries included.
    pub attempts: u64,
    /// Tries per request.
    pub amplification: Option<f64>,
    /// Requests never admitted: out of tries, of retry budget, or of time.
    pub gave_up: u64,
    /// Median time from a request's first try to its admission, µs, to the histogram's
    /// precision (exact below 256 µs, within 0.8% above).
    pub success_p50_us: Option<Micros>,
    /// Its 99th percentile, to the same precision.
    pub success_p99_us: Option<Micros>,
    /// The most tries in any trailing second of any run.
    pub peak_attempts_per_second: u64,
    /// The share of clients (over all runs) served under half of their requests.
    pub lockout_share: f64,
    /// With a mix (`retry:...+clients=M,...`), each group's numbers, in the spec's order;
    /// its `policy` is the group's keys as the spec writes them.
    #[cfg(feature = "mix")]
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<ClientReport>,
}

/// One gateway of a fleet, over all runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GatewayReport {
    /// Requests routed to it.
    pub offered: u64,
    /// Requests it admitted.
    pub admitted: u64,
    /// The most of its own admissions in any window of any run.
    pub busiest_window_max: u64,
}

/// What a scenario produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// One entry per limiter, in scenario order.
    pub results: Vec<LimiterReport>,
}

impl Report {
    /// Combines per-run results (`runs[r][i]` is limiter `i` in run `r`).
    pub fn from_runs(scenario: &Scenario, runs: &[Vec<RunStats>]) -> Report {
        let results = scenario
            .limiters
            .iter()
            .enumerate()
            .map(|(i, spec)| {
                let stats: Vec<&RunStats> = runs.iter().map(|r| &r[i]).collect();
                summarize(scenario, spec, &stats)
            })
            .collect();
        Report { results }
    }

    /// A 64-bit digest of every number in the report (FNV-1a over their bits), for comparing
    /// runs across targets.
    pub fn digest(&self) -> u64 {
        let mut h = Fnv::default();
        for r in &self.results {
            h.bytes(r.limiter.as_bytes());
            for v in [r.offered, r.admitted, r.decisions, r.busiest_window_max] {
                h.u64(v);
            }
            for v in [r.served_share, r.served_share_se] {
                h.u64(v.map_or(u64::MAX, f64::to_bits));
            }
            for v in [r.busiest_window_mean, r.wrong_admits, r.wrong_rejects] {
                h.u64(v.to_bits());
            }
            for v in [r.bound, r.delay_p50_us, r.delay_p99_us] {
                h.u64(v.unwrap_or(u64::MAX));
            }
            // A fleet's numbers, only where there is one: other digests stay as they were.
            if let Some(room) = r.room_instants {
                h.u64(room);
            }
            for g in r.gateways.iter().flatten() {
                for v in [g.offered, g.admitted, g.busiest_window_max] {
                    h.u64(v);
                }
            }
            // The clients' numbers, for any client but the essays' (whose digests stay as
            // they were: its tries and requests are in them already).
            if let Some(c) = r.client.as_ref().filter(|c| !c.policy.is_empty()) {
                h.bytes(c.policy.as_bytes());
                for v in [c.clients, c.requests, c.attempts, c.gave_up] {
                    h.u64(v);
                }
                for v in [c.success_p50_us, c.success_p99_us] {
                    h.u64(v.unwrap_or(u64::MAX));
                }
                h.u64(c.peak_attempts_per_second);
                h.u64(c.lockout_share.to_bits());
            }
        }
        h.0
    }
}

#[derive(Debug)]
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    fn bytes(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        self.bytes_end();
    }

    fn bytes_end(&mut self) {
        self.0 = (self.0 ^ 0xff).wrapping_mul(0x0100_0000_01b3);
    }

    fn u64(&mut self, v: u64) {
        for b in v.to_le_bytes() {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// Mean and standard error of the mean (`None` with fewer than two values).
pub fn mean_se(values: &[f64]) -> (Option<f64>, Option<f64>) {
    if values.is_empty() {
        return (None, None);
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    if values.len() < 2 {
        return (Some(mean), None);
    }
    let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1.0);
    (Some(mean), Some((var / n).sqrt()))
}

fn summarize(scenario: &Scenario, spec: &LimiterSpec, stats: &[&RunStats]) -> LimiterReport {
    let shares: Vec<f64> = stats.iter().filter_map(|s| s.served_share()).collect();
    let (served_share, served_share_se) = mean_se(&shares);
    let total = |f: fn(&RunStats) -> u64| stats.iter().map(|s| f(s)).sum::<u64>();
    let decisions = total(|s| s.decisions);
    let fraction = |n: u64| {
        if decisions == 0 {
            0.0
        } else {
            n as f64 / decisions as f64
        }
    };
    let mut delays = Histogram::default();
    for s in stats {
        delays.merge(&s.delays);
    }
    let queueing = spec.queues();
    let (p50, p99) = if queueing {
        (delays.quantile(0.50), delays.quantile(0.99))
    } else {
        (None, None)
    };
    let (room_instants, gateways) = fleet(stats);
    let client = client(scenario, stats);
    debug_assert!(stats
        .iter()
        .all(|s| s.wrong_admits.is_some() && s.wrong_rejects.is_some()));
    LimiterReport {
        limiter: spec.text.clone(),
        offered: total(|s| s.offered),
        admitted: total(|s| s.admitted),
        decisions,
        served_share,
        served_share_se,
        busiest_window_max: stats.iter().map(|s| s.busiest).max().unwrap_or(0),
        busiest_window_mean: stats.iter().map(|s| s.busiest as f64).sum::<f64>()
            / stats.len().max(1) as f64,
        // (`simulate` counts every lane's: only the study asks for a lane without.)
        wrong_admits: fraction(total(|s| s.wrong_admits.unwrap_or(0))),
        wrong_rejects: fraction(total(|s| s.wrong_rejects.unwrap_or(0))),
        bound: theory::worst_case(spec, scenario.limit, scenario.window),
        delay_p50_us: p50,
        delay_p99_us: p99,
        room_instants,
        gateways,
        client,
    }
}

/// Without the core's `clients` feature (the page's modules), no client numbers.
#[cfg(not(feature = "clients"))]
fn client(_: &Scenario, _: &[&RunStats]) -> Option<ClientReport> {
    None
}

/// The retrying clients' numbers over all runs, for `retry` traffic.
#[cfg(feature = "clients")]
fn client(scenario: &Scenario, stats: &[&RunStats]) -> Option<ClientReport> {
    let crate::spec::TrafficSpec::Retry {
        policy, clients, ..
    } = &scenario.traffic
    else {
        return None;
    };
    let each: Vec<&ClientStats> = stats.iter().filter_map(|s| s.client.as_ref()).collect();
    let requests: u64 = stats.iter().map(|s| s.offered).sum();
    let attempts: u64 = stats.iter().map(|s| s.decisions).sum();
    let mut report = client_numbers(&each, requests, attempts);
    report.policy = crate::spec::policy_keys(policy, *clients).join(",");
    report.clients = u64::from(*clients);
    #[cfg(feature = "mix")]
    mix_numbers(scenario, &each, &mut report);
    Some(report)
}

/// A mix's clients in all, every group's keys, and each group's numbers.
#[cfg(feature = "mix")]
fn mix_numbers(scenario: &Scenario, each: &[&ClientStats], report: &mut ClientReport) {
    let groups: Vec<_> = scenario.traffic.client_groups().collect();
    if groups.len() > 1 {
        // A mix: its clients in all, and every group's keys (the spec's own group's too, with
        // its tries and gap) joined by `+`.
        report.clients = scenario.traffic.client_count();
        report.policy = groups
            .iter()
            .map(|g| crate::spec::group_keys(g).join(","))
            .collect::<Vec<_>>()
            .join("+");
        report.groups = groups
            .iter()
            .enumerate()
            .map(|(i, g)| {
                let of: Vec<&ClientStats> = each.iter().filter_map(|c| c.groups.get(i)).collect();
                let requests = of.iter().map(|c| c.requests).sum();
                let attempts = of.iter().map(|c| c.attempts).sum();
                ClientReport {
                    policy: crate::spec::group_keys(g).join(","),
                    clients: u64::from(g.clients),
                    ..client_numbers(&of, requests, attempts)
                }
            })
            .collect();
    }
}

/// The numbers of retrying clients whose runs' tallies are `each`, with `requests` and
/// `attempts` in all (without their policy and client count).
#[cfg(feature = "clients")]
fn client_numbers(each: &[&ClientStats], requests: u64, attempts: u64) -> ClientReport {
    let mut success = Histogram::default();
    for c in each {
        success.merge(&c.success);
    }
    let all: u64 = each.iter().map(|c| c.clients).sum();
    let locked: u64 = each.iter().map(|c| c.locked).sum();
    ClientReport {
        policy: String::new(),
        clients: 0,
        requests,
        attempts,
        amplification: (requests > 0).then(|| attempts as f64 / requests as f64),
        gave_up: each.iter().map(|c| c.gave_up).sum(),
        success_p50_us: success.quantile(0.50),
        success_p99_us: success.quantile(0.99),
        peak_attempts_per_second: each.iter().map(|c| c.peak_second).max().unwrap_or(0),
        lockout_share: if all == 0 {
            0.0
        } else {
            locked as f64 / all as f64
        },
        #[cfg(feature = "mix")]
        groups: Vec::new(),
    }
}

/// A fleet's room instants and gateways over all runs, if the limiter was a fleet.
#[cfg(feature = "fleet")]
fn fleet(stats: &[&RunStats]) -> (Option<u64>, Option<Vec<GatewayReport>>) {
    let f: Vec<_> = stats.iter().filter_map(|s| s.fleet.as_ref()).collect();
    if f.is_empty() {
        return (None, None);
    }
    let n = f.iter().map(|s| s.gateways.len()).max().unwrap_or(0);
    let gateways = (0..n)
        .map(|g| {
            let each = f.iter().filter_map(|s| s.gateways.get(g));
            GatewayReport {
                offered: each.clone().map(|x| x.offered).sum(),
                admitted: each.clone().map(|x| x.admitted).sum(),
                busiest_window_max: each.map(|x| x.busiest).max().unwrap_or(0),
            }
        })
        .collect();
    (
        Some(f.iter().map(|s| s.room_instants).sum()),
        Some(gateways),
    )
}

/// Without fleets (the page's modules build the core without them), there are none.
#[cfg(not(feature = "fleet"))]
fn fleet(_: &[&RunStats]) -> (Option<u64>, Option<Vec<GatewayReport>>) {
    (None, None)
}

/// Moves the delay histograms of one run's results (`from`) into another's (`into`), limiter
/// by limiter, so that a caller keeping every run's results holds a histogram per limiter, not
/// per run. The report is the same: histograms add exactly, in any order.
pub fn fold_delays(into: &mut [RunStats], from: &mut [RunStats]) {
    for (a, b) in into.iter_mut().zip(from) {
        if !b.delays.is_empty() {
            a.delays.merge(&b.delays);
            b.delays = Histogram::default();
        }
        // The same for the retrying clients' times to success.
        if let (Some(ca), Some(cb)) = (a.client.as_mut(), b.client.as_mut()) {
            let fold = |a: &mut Histogram, b: &mut Histogram| {
                if !b.is_empty() {
                    a.merge(b);
                    *b = Histogram::default();
                }
            };
            fold(&mut ca.success, &mut cb.success);
            #[cfg(feature = "mix")]
            for (ga, gb) in ca.groups.iter_mut().zip(&mut cb.groups) {
                fold(&mut ga.success, &mut gb.success);
            }
        }
    }
}

/// The statistic every statistical check relies on, against hand computations (the delay
/// quantiles' nearest rank is tested in `histogram`).
#[cfg(test)]
mod statistics_tests {
    use super::mean_se;

    #[test]
    fn mean_se_is_the_mean_and_the_sample_standard_error() {
        assert_eq!(mean_se(&[]), (None, None));
        assert_eq!(
            mean_se(&[5.0]),
            (Some(5.0), None),
            "no spread from one value"
        );
        assert_eq!(mean_se(&[2.0, 2.0, 2.0]), (Some(2.0), Some(0.0)));
        // 1, 2, 3, 4: mean 2.5; squared deviations 2.25 + 0.25 + 0.25 + 2.25 = 5 over n − 1 = 3
        // (the sample variance, not 5/4); SE = sqrt(5/3 / 4) = sqrt(5/12).
        let (m, se) = mean_se(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(m, Some(2.5));
        let se = se.expect("an SE");
        assert!((se - (5.0f64 / 12.0).sqrt()).abs() < 1e-15, "{se}");
        // 0.7 and 0.9: mean 0.8, variance 0.02, SE = sqrt(0.02 / 2) = 0.1.
        let (m, se) = mean_se(&[0.7, 0.9]);
        assert!((m.expect("a mean") - 0.8).abs() < 1e-15);
        assert!((se.expect("an SE") - 0.1).abs() < 1e-15);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(offered: u64, admitted: u64, busiest: u64) -> RunStats {
        RunStats {
            offered,
            admitted,
            decisions: offered,
            busiest,
            wrong_admits: Some(1),
            wrong_rejects: Some(0),
            ..RunStats::default()
        }
    }

    #[test]
    fn a_report_from_two_hand_made_runs_adds_counts_and_averages_shares() {
        let scenario = Scenario {
            limiters: vec![
                LimiterSpec::parse("sliding-log").expect("limiter"),
                LimiterSpec::parse("token-bucket:burst=10").expect("limiter"),
            ],
            limit: 10,
            ..Scenario::default()
        };
        let runs = vec![
            vec![stats(10, 5, 5), stats(10, 10, 10)],
            vec![stats(10, 7, 7), stats(20, 10, 10)],
        ];
        let report = Report::from_runs(&scenario, &runs);
        let log = &report.results[0];
        assert_eq!(log.limiter, "sliding-log");
        assert_eq!((log.offered, log.admitted, log.decisions), (20, 12, 20));
        assert_eq!(log.served_share, Some(0.6));
        assert_eq!(log.busiest_window_max, 7);
        assert_eq!(log.busiest_window_mean, 6.0);
        assert_eq!(log.wrong_admits, 2.0 / 20.0);
        assert_eq!(log.bound, Some(10));
        assert_eq!(log.delay_p50_us, None, "not a queueing limiter");
        let bucket = &report.results[1];
        assert_eq!((bucket.offered, bucket.admitted), (30, 20));
        assert_eq!(bucket.served_share, Some(0.75));
        assert_eq!(bucket.bound, Some(19), "B + L - 1");
        assert_ne!(
            report.digest(),
            Report::from_runs(&scenario, &runs[..1]).digest()
        );
    }
}
