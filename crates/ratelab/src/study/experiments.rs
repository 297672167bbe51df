//! The study's experiments: the shapes, loads, limiters and grids each is run over, where each
//! limiter sits in its jobs' scenarios (so no table indexes results by a bare number), the
//! kinds of job, and the one definition of each experiment the page's sections share with the
//! study: its scenario at a given [`Size`] and what is measured of its results.

use crate::decimal::shortest;
use crate::error::Error;
use crate::optimum::OptimalityCheck;
use crate::sim::{RunStats, Scenario};
use crate::spec::{LimiterSpec, TrafficSpec};
use crate::theory;
use crate::time::{Micros, MINUTE, MS};
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
/// in order, then, in honest jobs only, [`TWIN`]. This one is `fixed-window`.
pub const FIXED_WINDOW: usize = 0;
/// `sliding-log` in [`LIMITERS`].
pub const SLIDING_LOG: usize = 1;
/// `sliding-window-counter` in [`LIMITERS`].
pub const COUNTER: usize = 2;
/// `token-bucket:burst=50` in [`LIMITERS`].
pub const BUCKET_50: usize = 3;
/// `token-bucket:burst=75` in [`LIMITERS`].
pub const BUCKET_75: usize = 4;
/// `gcra` in [`LIMITERS`].
pub const GCRA: usize = 5;
/// [`TWIN`], after [`LIMITERS`] in honest jobs.
pub(super) const GCRA_TWIN: usize = LIMITERS.len();
/// The check run beside every honest cell: a token bucket of GCRA's burst, which must admit
/// exactly what GCRA admits in every run.
pub const TWIN: &str = "token-bucket:burst=100";
/// Refill rates (per minute) searched for the best bucket that never breaks the rule, each
/// with the largest capacity the essay's condition allows, `B = L − rate` (so `B + rate ≤ L`).
/// The essay's own example, B = 40 refilling at 60 a minute, is among them.
pub(super) const OBEYING_RATES: [u64; 9] = [10, 20, 30, 40, 50, 60, 70, 80, 90];
/// The essay's rule-obeying bucket's rate, in [`OBEYING_RATES`] (its capacity is 40).
pub(super) const OBEYING_ESSAY_RATE: u64 = 60;
/// Client rates (per minute) and tries of the retry-lockout grid. The essay's "a quarter of
/// its quota" is 25 a minute; the grid reaches 100 a minute so that two tries can lock out
/// too, and the lockout point of each number of tries is found between two of its rates.
pub(super) const RETRY_RATES: [u64; 10] = [10, 15, 20, 25, 30, 40, 50, 60, 80, 100];
pub(super) const RETRY_TRIES: [u32; 6] = [2, 3, 4, 6, 8, 12];
/// Server counts of the split experiment.
pub(super) const SERVERS: [u32; 4] = [1, 4, 10, 20];
/// K = 10 in [`SERVERS`].
pub(super) const SERVERS_10: usize = 2;
/// The limiters of a retry job: the sliding log that forgets its rejects, then the one that
/// records them; in the study's jobs, then the fixed window and the sliding-window counter,
/// each forgetting and recording ([`RETRY_ALL`]).
pub const RETRY_LIMITERS: [&str; 2] = ["sliding-log", "sliding-log:record-rejects=true"];
/// The limiters of the study's retry jobs: [`RETRY_LIMITERS`], then the fixed window and the
/// counter, each without and with recording.
pub const RETRY_ALL: [&str; 6] = [
    "sliding-log",
    "sliding-log:record-rejects=true",
    "fixed-window",
    "fixed-window:record-rejects=true",
    "sliding-window-counter",
    "sliding-window-counter:record-rejects=true",
];
/// The sliding log that forgets rejects, in [`RETRY_LIMITERS`] and [`RETRY_ALL`].
pub const RETRY_FORGETTING: usize = 0;
/// The sliding log that records rejects, in [`RETRY_LIMITERS`] and [`RETRY_ALL`].
pub const RETRY_RECORDING: usize = 1;
/// The fixed window, forgetting and recording, in [`RETRY_ALL`].
pub(super) const RETRY_FIXED: usize = 2;
pub(super) const RETRY_FIXED_RECORDING: usize = 3;
/// The sliding-window counter, forgetting and recording, in [`RETRY_ALL`].
pub(super) const RETRY_COUNTER: usize = 4;
pub(super) const RETRY_COUNTER_RECORDING: usize = 5;
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
/// The on/off client's place in [`SHAPES`].
pub(super) const ON_OFF: usize = 4;
/// The on/off client's mean active period, which the essay does not give, swept beside
/// ratelab's 30 s at each load of the honest table ([`JobKind::OnOffActive`]), in seconds.
pub(super) const ON_OFF_ACTIVES: [u64; 3] = [3, 6, 12];
/// The active period the report's other reading of the on/off rows takes, in seconds.
pub(super) const ON_OFF_READING: u64 = 6;
/// How far either side of the reset the two-tick attack's ticks come, swept (the essay says
/// only "the last moment" and "the first moment"), in milliseconds ([`JobKind::TickOffset`]).
pub(super) const TICK_OFFSETS_MS: [u64; 5] = [1, 100, 500, 5_000, 29_000];

/// The on/off traffic with a mean active period of `seconds`, at `load`.
pub(super) fn on_off_active(seconds: u64, load: f64) -> String {
    format!("on-off:active={seconds}s,load={}", shortest(load))
}
/// The shapes of the split experiment.
pub(super) const SPLIT_SHAPES: [usize; 2] = [STEADY, PAGE_LOADS];
/// 30% in [`LOADS`].
pub(super) const LOAD_30: usize = 0;
/// 80% in [`LOADS`].
pub(super) const LOAD_80: usize = 2;

/// The capacity of the rule-obeying bucket refilling at `rate` a minute: `B = L − rate`.
pub(super) fn obeying_burst(rate: u64) -> u64 {
    100 - rate
}

/// The position of the bucket of [`OBEYING_RATES`]`[k]` in an obeying job.
pub(super) fn obeying_bucket(k: usize) -> usize {
    1 + k
}

/// The position of the sliding log split over `SERVERS``[j]` servers in a split job.
pub fn split_log(j: usize) -> usize {
    2 * j
}

/// The position of the token bucket split over `SERVERS``[j]` servers in a split job.
pub fn split_bucket(j: usize) -> usize {
    2 * j + 1
}

/// The size an experiment runs at: runs, minutes per run, and its scenario's seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size {
    /// Runs.
    pub runs: u32,
    /// Minutes per run.
    pub minutes: u64,
    /// The scenario's seed.
    pub seed: u64,
}

/// The limiters `limiters` against `traffic` at a limit of `limit` a minute, at `size`.
pub(super) fn scenario<S: AsRef<str>>(
    limiters: &[S],
    traffic: &str,
    limit: u64,
    size: Size,
) -> Result<Scenario, Error> {
    Ok(Scenario {
        limiters: limiters
            .iter()
            .map(|l| LimiterSpec::parse(l.as_ref()))
            .collect::<Result<_, _>>()?,
        traffic: TrafficSpec::parse(traffic)?,
        limit,
        window: MINUTE,
        duration: size.minutes * MINUTE,
        runs: size.runs,
        seed: size.seed,
    })
}

/// The honest client: [`LIMITERS`], then [`TWIN`], against the honest `shape` at `load` of
/// a limit of 100 a minute.
pub fn honest(shape: &str, load: f64, size: Size) -> Result<Scenario, Error> {
    let mut limiters = LIMITERS.to_vec();
    limiters.push(TWIN);
    // A shape with keys of its own takes the load beside them.
    let sep = if shape.contains(':') { ',' } else { ':' };
    scenario(
        &limiters,
        &format!("{shape}{sep}load={}", shortest(load)),
        100,
        size,
    )
}

/// The flood starts the essay names for the counter: 30 s (worst 150) and 59 s ("nearly 200").
pub(super) const COUNTER_STARTS_MS: [u64; 2] = [30_000, 59_000];

/// The counter's flood offsets run from 0 to the last start that leaves the flood's first
/// millisecond in the window, in this many steps.
pub const OFFSET_STEPS: u64 = 50;

/// Where the flood of counter-offset `index` (0 to [`OFFSET_STEPS`]) starts into a window,
/// at a limit of `limit` a minute, in whole milliseconds.
pub fn counter_offset_start(limit: u64, index: u64) -> Micros {
    index * MINUTE.saturating_sub(limit * MS) / OFFSET_STEPS / MS * MS
}

/// The counter against a flood: the sliding-window counter alone, under a flood from
/// [`counter_offset_start`].
pub fn counter_offset(limit: u64, index: u64, size: Size) -> Result<Scenario, Error> {
    let start_ms = counter_offset_start(limit, index) / MS;
    scenario(
        &["sliding-window-counter"],
        &format!("flood:start={start_ms}ms"),
        limit,
        size,
    )
}

/// What a counter-offset result measures: the flood's start (s), the counter's worst window
/// in the first run, and the formula's.
pub fn counter_offset_measure(
    limit: u64,
    index: u64,
    result: &JobResult,
) -> (f64, u64, Option<u64>) {
    let start = counter_offset_start(limit, index);
    (
        start as f64 / 1e6,
        result.runs[0][SWC_ALONE].busiest,
        theory::swc_flood_worst(limit, MINUTE, start, MS),
    )
}

/// The counter-offset measures as two named lines: simulated and the formula.
pub fn counter_offset_lines(
    measures: &[(f64, u64, Option<u64>)],
) -> [(String, Vec<(f64, f64)>); 2] {
    let simulated = measures.iter().map(|&(x, s, _)| (x, s as f64)).collect();
    let formula = measures
        .iter()
        .filter_map(|&(x, _, f)| f.map(|f| (x, f as f64)))
        .collect();
    [
        ("simulated".into(), simulated),
        ("L + ⌈L(s − 1 ms)/W⌉".into(), formula),
    ]
}

/// The retry lockout: [`RETRY_LIMITERS`] against a client retrying up to `tries` times a
/// second apart, at `rate` a minute, after a spike of twice the limit at minute 5.
pub fn lockout(limit: u64, rate: u64, tries: u32, size: Size) -> Result<Scenario, Error> {
    scenario(
        &RETRY_LIMITERS,
        &lockout_traffic(limit, rate, tries),
        limit,
        size,
    )
}

/// The study's retry lockout: [`lockout`] with every limiter of [`RETRY_ALL`].
pub fn lockout_all(limit: u64, rate: u64, tries: u32, size: Size) -> Result<Scenario, Error> {
    scenario(
        &RETRY_ALL,
        &lockout_traffic(limit, rate, tries),
        limit,
        size,
    )
}

/// The retrying client of the lockout experiment, as a traffic spec.
pub(super) fn lockout_traffic(limit: u64, rate: u64, tries: u32) -> String {
    format!(
        "retry:rate={rate}/1min,spike={},at=5min,tries={tries},every=1s",
        2 * limit
    )
}

/// The limiters of the boundary-burst essay's experiments, at its limit of 60 a minute.
pub(super) const BOUNDARY_LIMITERS: [&str; 4] = [
    "fixed-window",
    "sliding-log",
    "token-bucket:burst=60",
    "token-bucket:burst=10",
];
/// The boundary-burst essay's limit.
pub(super) const BOUNDARY_LIMIT: u64 = 60;
/// The attack behind the boundary table's busiest and rejected rows: 180 requests, 60 before
/// the boundary and 120 after, so that the fixed window rejects 60 and the log 120.
pub(super) const BOUNDARY_ROWS_TRAFFIC: &str = "boundary-burst:first=60,second=120";
/// A client offering twice the limit of 60 a minute, one request every 500 ms from a
/// window's start, for an hour: 120 in every window.
pub(super) const EVENLY_TRAFFIC: &str = "flood:every=500ms,start=0s,for=60min";
/// Positions in [`BOUNDARY_LIMITERS`].
pub(super) const BOUNDARY_FIXED: usize = 0;
pub(super) const BOUNDARY_LOG: usize = 1;
pub(super) const BOUNDARY_BUCKET_60: usize = 2;
pub(super) const BOUNDARY_BUCKET_10: usize = 3;

/// The split limit: for each of `servers`, a sliding log and a token bucket (`B` = 100)
/// split over that many servers with random routing ([`split_log`], [`split_bucket`]), against
/// the honest `shape` at 80% of a limit of 100 a minute.
pub fn split(shape: &str, servers: &[u32], size: Size) -> Result<Scenario, Error> {
    let mut limiters = Vec::new();
    for k in servers {
        limiters.push(format!("sliding-log:servers={k}"));
        limiters.push(format!("token-bucket:burst=100,servers={k}"));
    }
    scenario(&limiters, &format!("{shape}:load=0.8"), 100, size)
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
    /// The sliding-window counter under a flood starting `start_ms` into a window (the
    /// essay's 30 s and 59 s).
    CounterAt {
        /// Milliseconds into the window.
        start_ms: u64,
    },
    /// The boundary-burst essay's two-tick attack on `BOUNDARY_LIMITERS` at a limit of 60.
    Boundary,
    /// The same limiters against a steady client offering twice the limit, over the study's
    /// runs: the essay's "requests admitted" row.
    Overdriven,
    /// The honest table's limiters against the on/off client with a mean active period of
    /// `seconds` (`ON_OFF_ACTIVES`) at one load.
    OnOffActive {
        /// The mean active period, s.
        seconds: u64,
        /// Index into [`LOADS`].
        load: usize,
    },
    /// The two-tick attack on `BOUNDARY_LIMITERS` with its ticks `ms` either side of the
    /// reset (`TICK_OFFSETS_MS`).
    TickOffset {
        /// Milliseconds before and after the reset.
        ms: u64,
    },
    /// The attack the essay's table's busiest and rejected rows both come from: 60 requests
    /// 0.5 s before a boundary and 120 0.5 s after (`BOUNDARY_ROWS_TRAFFIC`).
    BoundaryRows,
    /// The same limiters against an evenly spaced client offering twice the limit
    /// (`EVENLY_TRAFFIC`): the other reading of "a client offering twice" the allowance.
    Evenly,
    /// The sliding log and the fixed window against theory at one load.
    Theory {
        /// 0.8, 1.0 or 1.2.
        load: f64,
    },
    /// Greedy against the brute-force optimum on small cases.
    Optimality,
}

/// The result of a job: per run, per limiter.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct JobResult {
    /// `runs[r][i]`: limiter `i` in run `r`.
    pub runs: Vec<Vec<RunStats>>,
    /// Set for the optimality job.
    pub optimality: Option<OptimalityCheck>,
}

impl JobKind {
    /// Whether the study reads the wrong decisions of lane `lane` of a job of this kind: the
    /// counter's at 80% of steady traffic and of page loads (table counter-wrong and the
    /// counter essay's claims), and every lane of a retry job (table lockout compares the
    /// fixed window's two lanes whole). Every other lane's auditor finds the busiest window
    /// alone ([`crate::audit::Auditor::bound_only`]), and its wrong decisions are `None`.
    pub fn counts_wrong(&self, lane: usize) -> bool {
        match *self {
            JobKind::Honest { shape, load } => {
                lane == COUNTER && load == LOAD_80 && (shape == STEADY || shape == PAGE_LOADS)
            }
            JobKind::Retry { .. } => true,
            _ => false,
        }
    }

    /// The experiment the job belongs to, named as its table is, for timings.
    pub fn experiment(&self) -> &'static str {
        match self {
            JobKind::Honest { .. } => "honest",
            JobKind::Attacker => "attacker",
            JobKind::SwcOffset { .. } => "counter-offsets",
            JobKind::Obeying { .. } => "obeying",
            JobKind::Retry { .. } => "lockout",
            JobKind::Split { .. } => "split",
            JobKind::CounterAt { .. } => "counter at 30 s and 59 s",
            JobKind::Boundary => "boundary",
            JobKind::Overdriven => "boundary: twice the limit",
            JobKind::OnOffActive { .. } => "guess-on-off",
            JobKind::TickOffset { .. } => "guess-tick-offset",
            JobKind::BoundaryRows => "boundary: the attack of 180",
            JobKind::Evenly => "boundary: evenly spaced",
            JobKind::Theory { .. } => "theory",
            JobKind::Optimality => "checks: optimality",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::study::{plan, run_scenario, StudyConfig};

    const SMALL: Size = Size {
        runs: 2,
        minutes: 20,
        seed: 9,
    };

    #[test]
    fn each_experiment_takes_its_size_and_the_study_runs_the_same_definition() {
        let jobs = plan(StudyConfig::QUICK).expect("valid plan");
        let sized = |s: &Scenario| Size {
            runs: s.runs,
            minutes: s.duration / MINUTE,
            seed: s.seed,
        };
        let mut seen = 0;
        for job in &jobs {
            let s = &job.scenario;
            let again = match job.kind {
                JobKind::Honest { shape, load } => honest(SHAPES[shape], LOADS[load], sized(s)),
                JobKind::SwcOffset { index } => counter_offset(100, index, sized(s)),
                JobKind::Retry { rate, tries } => lockout_all(100, rate, tries, sized(s)),
                JobKind::Split { shape } => split(SHAPES[shape], &SERVERS, sized(s)),
                _ => continue,
            };
            assert_eq!(&again.expect("valid"), s, "{:?}", job.kind);
            seen += 1;
        }
        assert_eq!(seen, 20 + 51 + 60 + 2);
        let s = lockout(40, 10, 3, SMALL).expect("valid");
        assert_eq!(
            (s.runs, s.duration, s.seed, s.limit),
            (2, 20 * MINUTE, 9, 40)
        );
        let spike = TrafficSpec::parse("retry:rate=10/1min,spike=80,at=5min,tries=3,every=1s");
        assert_eq!(
            s.traffic,
            spike.expect("valid"),
            "a spike of twice the limit"
        );
    }

    #[test]
    fn the_flood_offsets_span_the_window_and_the_counter_meets_the_formula() {
        assert_eq!(counter_offset_start(100, 0), 0);
        assert_eq!(counter_offset_start(100, 1), 1_198 * MS);
        assert_eq!(counter_offset_start(100, OFFSET_STEPS), 59_900 * MS);
        assert_eq!(counter_offset_start(60, OFFSET_STEPS), 59_940 * MS);
        let mut measures = Vec::new();
        for index in [0, 1, 25, OFFSET_STEPS] {
            let r = run_scenario(&counter_offset(60, index, SMALL).expect("valid")).expect("runs");
            let (start, simulated, formula) = counter_offset_measure(60, index, &r);
            assert_eq!(start, counter_offset_start(60, index) as f64 / 1e6);
            assert_eq!(Some(simulated), formula, "index {index}");
            measures.push((start, simulated, formula));
        }
        let [(sim_name, sim), (_, formula)] = counter_offset_lines(&measures);
        assert_eq!(sim_name, "simulated");
        // Starting just before the boundary, the worst window is 2L.
        assert_eq!((sim.len(), sim.last()), (4, Some(&(59.94, 120.0))));
        assert_eq!(sim, formula);
    }

    #[test]
    fn the_named_positions_point_at_their_limiters_and_shapes() {
        assert_eq!(LIMITERS[FIXED_WINDOW], "fixed-window");
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
