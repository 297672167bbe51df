//! The mechanism behind one run of one limiter, decision by decision, for the explainer's
//! playhead: the trailing window's count, what the limiter holds, and the window boundaries
//! it resets on.
//!
//! Everything is kept in columns, one entry per decision in decision order (the trace's
//! order), so that a page holding a run of a few hundred thousand decisions can scrub to any
//! index and read it in O(1), and keep the same lists from run to run.

use super::stats::Trace;
use super::Scenario;
use crate::limiter::{Limiter, State, StateKind};
use crate::time::Micros;

/// The bytes a [`Trace`] keeps per decision, its lists sized for every decision: the time (8),
/// whether admitted (1), when it left (8), and, sized for every decision to be an admission,
/// the audited time (8) and window count (8).
pub const TRACE_BYTES_PER_DECISION: u64 = 33;

/// The most bytes a [`Mechanism`] keeps per decision: the band's count (4) and the state's
/// value (8) for every kind, plus a log's recorded rejects (4) or a counter's two windows'
/// counts (4 + 4). A list another kind used in an earlier run keeps its room, so the page's
/// buffers are counted at the most.
pub const MECHANISM_BYTES_PER_DECISION: u64 = 20;

/// Window boundaries a limiter resets on, within a run: `every`, `2 · every`, …,
/// `count · every` (the fixed window and the counter reset at each multiple of `W`; time 0,
/// where the run starts, is not one of them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Boundaries {
    /// The window `W`, in µs.
    pub every: Micros,
    /// How many boundaries fall within the run's span `(0, horizon]`.
    pub count: u64,
}

impl Boundaries {
    /// The boundaries of windows of `every` µs within `(0, end]`.
    pub fn within(every: Micros, end: Micros) -> Self {
        let every = every.max(1);
        Boundaries {
            every,
            count: end / every,
        }
    }

    /// All of them, in order.
    pub fn iter(&self) -> impl Iterator<Item = Micros> + '_ {
        self.between(0, Micros::MAX)
    }

    /// Those in `[from, to]`, in order, for the part of the axis in view: never more than
    /// that span holds, however long the run.
    pub fn between(&self, from: Micros, to: Micros) -> impl Iterator<Item = Micros> + '_ {
        let every = self.every.max(1);
        let first = from.div_ceil(every).max(1);
        let last = (to / every).min(self.count);
        (first..=last).map(move |k| k * every)
    }
}

/// What the mechanism view shows at one decision.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Frame {
    /// Admissions in the trailing window of this decision (see [`Mechanism::band`]).
    pub band: u64,
    /// Whether that is above `L`.
    pub over: bool,
    /// What the limiter holds just after this decision.
    pub state: State,
}

/// The mechanism of one run of one limiter, one entry per decision (the trace's order) in
/// each list. Filled by [`super::mechanism()`] and [`super::mechanism_into`]; every list is allocated once,
/// at the run's length, and kept when the value is reused for another run.
///
/// Memory: at most [`MECHANISM_BYTES_PER_DECISION`] (20) bytes per decision, 12 for most
/// kinds (the band, 4, and the value, 8), 16 for a log, 20 for a counter; alongside the
/// trace's [`TRACE_BYTES_PER_DECISION`] (33). 300,000 decisions take 6 MB here and 9.9 MB in
/// the trace. Counts are `u32`: a run whose lists fit in memory has fewer decisions than that.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Mechanism {
    /// Which state the limiter has, and so what [`Mechanism::value`] holds.
    pub kind: StateKind,
    /// What the value is drawn against: the bucket's capacity `B` (`tokens`), `L` (`log`,
    /// `count`, `estimate`) or nginx's burst (`excess`, `queue`).
    pub mark: u64,
    /// `L`, the band's limit.
    pub limit: u64,
    /// `W`, in µs.
    pub window: Micros,
    /// Whether the band of an admitted decision is taken when it leaves (the queueing leaky
    /// bucket) rather than when it arrives; see [`Mechanism::band`].
    pub at_departure: bool,
    /// Per decision, the admissions in its trailing window `(a − W, a]`, as the auditor counts
    /// them (the run's busiest window is the largest of these): `a` is the time the auditor
    /// audits the decision at, its arrival, except an admission by the queueing leaky bucket,
    /// audited when it leaves (the trace's `released`); the window holds the admissions of
    /// decisions up to this one that have been audited by `a`, this one included if admitted.
    /// For a rejection that is every earlier admission audited by its arrival; for an
    /// admission, every admission up to it (a queue's departures keep their order).
    pub band: Vec<u32>,
    /// Per decision, the state's value just after it (see [`State::value`]): tokens,
    /// log entries (recorded rejects included), the fixed window's count, the counter's
    /// estimate, the excess (in requests) or the queue's length.
    pub value: Vec<f64>,
    /// `log` only: how many of the entries are recorded rejects (the rest were admitted).
    /// Empty for other kinds.
    pub rejects: Vec<u32>,
    /// `estimate` only: the current window's count. Empty for other kinds.
    pub current: Vec<u32>,
    /// `estimate` only: the previous window's count. Empty for other kinds.
    pub previous: Vec<u32>,
    /// `count` and `estimate`: the window boundaries the limiter resets on, within the run.
    pub boundaries: Option<Boundaries>,
}

impl Mechanism {
    /// How many decisions it holds.
    pub fn len(&self) -> usize {
        self.band.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.band.is_empty()
    }

    /// What to show at decision `i`, if there is one.
    pub fn at(&self, i: usize) -> Option<Frame> {
        let band = u64::from(*self.band.get(i)?);
        Some(Frame {
            band,
            over: band > self.limit,
            state: self.state(i)?,
        })
    }

    /// The state just after decision `i`.
    pub fn state(&self, i: usize) -> Option<State> {
        let value = *self.value.get(i)?;
        let mark = self.mark;
        Some(match self.kind {
            StateKind::Tokens => State::Tokens {
                tokens: value,
                capacity: mark,
            },
            StateKind::Log => State::Log {
                entries: value as u64,
                rejects: self.rejects.get(i).map(|&r| u64::from(r)),
                limit: mark,
            },
            StateKind::Count => State::Count {
                count: value as u64,
                limit: mark,
            },
            StateKind::Estimate => State::Estimate {
                current: u64::from(*self.current.get(i)?),
                previous: u64::from(*self.previous.get(i)?),
                estimate: value,
                limit: mark,
            },
            StateKind::Excess => State::Excess {
                excess: value,
                burst: mark,
            },
            StateKind::Queue => State::Queue {
                queued: value as u64,
                burst: mark,
            },
        })
    }

    /// Where decision `i`'s band ends: its arrival, or its departure for an admission that
    /// queued ([`Mechanism::at_departure`]). `trace` is the run's trace.
    pub fn band_end(&self, trace: &Trace, i: usize) -> Option<Micros> {
        if self.at_departure && *trace.admitted.get(i)? {
            trace.released.get(i).copied()
        } else {
            trace.times.get(i).copied()
        }
    }

    /// The largest band count, which is the run's busiest window.
    pub fn busiest(&self) -> u64 {
        self.band.iter().copied().max().map_or(0, u64::from)
    }

    /// Empties every list, keeping what each has allocated.
    pub fn clear(&mut self) {
        self.band.clear();
        self.value.clear();
        self.rejects.clear();
        self.current.clear();
        self.previous.clear();
        self.boundaries = None;
    }

    /// Empties the lists and makes room for `n` decisions of `limiter` in the ones its kind
    /// uses, exactly.
    pub(super) fn start(&mut self, limiter: &Limiter, scenario: &Scenario, n: usize) {
        self.clear();
        let state = limiter.state(0);
        self.kind = state.kind();
        self.mark = state.mark();
        self.limit = scenario.limit;
        self.window = scenario.window;
        self.at_departure = limiter.delays();
        self.band.reserve_exact(n);
        self.value.reserve_exact(n);
        match self.kind {
            StateKind::Log => self.rejects.reserve_exact(n),
            StateKind::Estimate => {
                self.current.reserve_exact(n);
                self.previous.reserve_exact(n);
            }
            _ => {}
        }
        // Calendar windows; HAProxy's periods and a library's window start at a request.
        #[cfg(feature = "libraries")]
        let anchored = matches!(limiter, Limiter::Anchored(_) | Limiter::Limits(_));
        #[cfg(not(feature = "libraries"))]
        let anchored = false;
        if matches!(self.kind, StateKind::Count | StateKind::Estimate)
            && !matches!(limiter, Limiter::Haproxy(_))
            && !anchored
        {
            self.boundaries = Some(Boundaries::within(scenario.window, scenario.horizon()));
        }
    }

    /// Records the limiter's state just after its decision at `t`. A log's entries are
    /// counted from the decisions when the run is over (the limiter keeps only the last `L`).
    pub(super) fn record(&mut self, limiter: &Limiter, t: Micros) {
        if self.kind == StateKind::Log {
            return;
        }
        let state = limiter.state(t);
        self.value.push(state.value());
        if let State::Estimate {
            current, previous, ..
        } = state
        {
            self.current.push(small(current));
            self.previous.push(small(previous));
        }
    }

    /// Fills the band (and a log's entries) from the finished run's trace. `at_departure`:
    /// whether the auditor audited admissions when they left; `record_rejects`: whether a log
    /// logged its rejections.
    pub(super) fn finish(&mut self, trace: &Trace, at_departure: bool, record_rejects: bool) {
        self.at_departure = at_departure;
        fill_band(&mut self.band, trace, self.window, at_departure);
        if self.kind == StateKind::Log {
            self.fill_log(trace, record_rejects);
        }
    }

    /// A log's entries in `(t − W, t]` after each decision at `t`: every logged decision up to
    /// it (the admitted ones, and the rejected ones when rejects are recorded) still inside,
    /// split into admitted and recorded rejects. What the sorted set the log stands for holds.
    fn fill_log(&mut self, trace: &Trace, record_rejects: bool) {
        let times = &trace.times;
        let (mut tail, mut admitted, mut rejected) = (0, 0u64, 0u64);
        for (i, &t) in times.iter().enumerate() {
            if trace.admitted[i] {
                admitted += 1;
            } else if record_rejects {
                rejected += 1;
            }
            while times[tail] + self.window <= t {
                if trace.admitted[tail] {
                    admitted -= 1;
                } else if record_rejects {
                    rejected -= 1;
                }
                tail += 1;
            }
            self.value.push((admitted + rejected) as f64);
            self.rejects.push(small(rejected));
        }
    }
}

/// A count as stored (it cannot reach `u32::MAX` in a run that fits in memory).
fn small(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// How many admitted decisions before `bound` were audited by `x`, as `x` grows. Admitted
/// decisions' audit times never decrease in decision order, so they are a prefix of the
/// admitted ones, and a pointer that only moves forward finds it.
#[derive(Default)]
struct AuditedBy {
    next: usize,
    count: u64,
}

impl AuditedBy {
    fn advance(
        &mut self,
        bound: usize,
        x: Micros,
        admitted: &[bool],
        audit: impl Fn(usize) -> Micros,
    ) {
        while self.next < bound && (!admitted[self.next] || audit(self.next) <= x) {
            self.count += u64::from(admitted[self.next]);
            self.next += 1;
        }
    }
}

/// The band: per decision, the admissions in `(a − W, a]` with `a` its audit time, over the
/// decisions up to it, as [`Mechanism::band`] defines them. O(n): three pointers that only
/// move forward.
fn fill_band(band: &mut Vec<u32>, trace: &Trace, window: Micros, at_departure: bool) {
    let admitted = &trace.admitted;
    let audit = |j: usize| {
        if at_departure && admitted[j] {
            trace.released[j]
        } else {
            trace.times[j]
        }
    };
    let n = trace.times.len();
    // For admissions: the earlier admissions that have left their window. For rejections: the
    // earlier admissions audited by then, and those of them that have left its window.
    let (mut left_a, mut audited_r, mut left_r) = (
        AuditedBy::default(),
        AuditedBy::default(),
        AuditedBy::default(),
    );
    let mut admissions = 0u64;
    for i in 0..n {
        let a = audit(i);
        let count = if admitted[i] {
            admissions += 1;
            // Admissions after this one were audited no earlier, so cannot have left.
            if let Some(x) = a.checked_sub(window) {
                left_a.advance(n, x, admitted, audit);
            }
            admissions - left_a.count.min(admissions)
        } else {
            audited_r.advance(i, a, admitted, audit);
            if let Some(x) = a.checked_sub(window) {
                left_r.advance(i, x, admitted, audit);
            }
            audited_r.count - left_r.count
        };
        band.push(small(count));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{
        mechanism, mechanism_into, playback_memory, trace, trace_into, RunStats, MEMORY_BUDGET,
    };
    use crate::spec::{LimiterSpec, TrafficSpec};
    use crate::time::{MINUTE, SECOND};

    const LIMITERS: &[&str] = &[
        "fixed-window",
        "fixed-window:record-rejects=true",
        "sliding-log",
        "sliding-log:record-rejects=true",
        "sliding-log:servers=3",
        "sliding-window-counter",
        "sliding-window-counter:record-rejects=true",
        "token-bucket:burst=10",
        "token-bucket:burst=60",
        "gcra:burst=10",
        "leaky-bucket:burst=10",
        "leaky-bucket:burst=10,mode=queue",
        "leaky-bucket:burst=30,mode=queue,rate=90/60s",
        "nginx:burst=10,nodelay",
        "nginx:rate=7r/s,burst=10,delay=3",
    ];

    /// The page's traffics at L = 60 per minute: honest ones, and its three attacks.
    const TRAFFICS: &[&str] = &[
        "steady:load=0.8",
        "page-loads:load=1.2",
        "boundary-burst:before=500ms,after=500ms",
        "flood:start=worst,every=10ms",
        "retry:rate=15/60s,spike=120,at=60s,tries=20,every=1s",
    ];

    fn scenario(limiter: &str, traffic: &str) -> Scenario {
        let traffic = TrafficSpec::parse(traffic).expect("traffic");
        let minutes = if traffic.closed_loop() { 30 } else { 10 };
        Scenario {
            limiters: vec![LimiterSpec::parse(limiter).expect("limiter")],
            traffic,
            limit: 60,
            window: MINUTE,
            duration: minutes * MINUTE,
            runs: 1,
            seed: 11,
        }
    }

    /// Every combination, run with its mechanism.
    fn runs() -> impl Iterator<Item = (String, Scenario, RunStats, Trace, Mechanism)> {
        LIMITERS.iter().flat_map(|l| {
            TRAFFICS.iter().map(move |t| {
                let s = scenario(l, t);
                let (stats, trace, mech) = mechanism(&s, 0, 0).expect("runs");
                (format!("{l} × {t}"), s, stats, trace, mech)
            })
        })
    }

    /// Some decisions spread over the run, and those at the busiest window.
    fn samples(mech: &Mechanism) -> Vec<usize> {
        let n = mech.len();
        let top = mech.busiest();
        let mut at: Vec<usize> = (0..64).map(|k| k * n / 64).collect();
        at.extend((0..n).filter(|&i| u64::from(mech.band[i]) == top).take(8));
        at
    }

    #[test]
    fn the_largest_band_is_the_busiest_window_for_every_limiter_and_traffic() {
        let mut over = 0;
        for (name, s, stats, trace, mech) in runs() {
            assert_eq!(mech.len(), trace.times.len(), "{name}");
            assert_eq!(mech.len() as u64, stats.decisions, "{name}");
            assert!(stats.busiest > 0, "{name}");
            assert_eq!(mech.busiest(), stats.busiest, "{name}");
            over += usize::from(stats.busiest > s.limit);
            // Taken at each admission, the band is the auditor's own count after it.
            let at_admissions: Vec<u64> = (0..mech.len())
                .filter(|&i| trace.admitted[i])
                .map(|i| u64::from(mech.band[i]))
                .collect();
            assert_eq!(at_admissions, trace.window_counts, "{name}");
            for i in (0..mech.len()).step_by(97) {
                let f = mech.at(i).expect("a frame");
                assert_eq!(f.over, f.band > s.limit, "{name} at {i}");
            }
        }
        assert!(over > 10, "the attacks take windows over the limit: {over}");
    }

    #[test]
    fn the_band_is_a_recount_of_the_audited_admissions() {
        for (name, s, _, trace, mech) in runs() {
            let spec = &s.limiters[0];
            // The auditor takes a queue's admissions when they leave.
            let queued = spec.queues();
            let audit = |j: usize| {
                if queued && trace.admitted[j] {
                    trace.released[j]
                } else {
                    trace.times[j]
                }
            };
            assert_eq!(mech.at_departure, queued, "{name}");
            for i in samples(&mech) {
                assert_eq!(mech.band_end(&trace, i), Some(audit(i)), "{name} at {i}");
                let end = audit(i);
                // Admissions of decisions up to this one, audited by its audit time and
                // still inside its window.
                let want = (0..=i)
                    .filter(|&j| trace.admitted[j])
                    .filter(|&j| audit(j) <= end && audit(j) + s.window > end)
                    .count() as u64;
                assert_eq!(u64::from(mech.band[i]), want, "{name} at {i}");
            }
        }
    }

    #[test]
    fn a_queue_takes_its_band_when_requests_leave() {
        let s = scenario(
            "leaky-bucket:burst=30,mode=queue,rate=90/60s",
            "boundary-burst:before=500ms,after=500ms",
        );
        let (stats, trace, mech) = mechanism(&s, 0, 0).expect("runs");
        assert!(mech.at_departure);
        assert_eq!(mech.busiest(), stats.busiest);
        // The busiest window is reached by a departure after the last arrival: a band taken
        // at arrivals alone, counting what has left by then, falls short of it.
        let last = *trace.times.last().expect("arrivals");
        let at_arrivals = (0..mech.len())
            .map(|i| {
                let t = trace.times[i];
                (0..=i)
                    .filter(|&j| trace.admitted[j])
                    .filter(|&j| trace.released[j] <= t && trace.released[j] + s.window > t)
                    .count() as u64
            })
            .max();
        assert!(at_arrivals < Some(stats.busiest), "{at_arrivals:?}");
        let busiest = (0..mech.len())
            .find(|&i| u64::from(mech.band[i]) == stats.busiest)
            .expect("the busiest decision");
        assert!(mech.band_end(&trace, busiest).expect("a time") > last);
        assert!(!scenario("leaky-bucket:burst=30", "steady")
            .limiters
            .is_empty());
        let meter = mechanism(&scenario("leaky-bucket:burst=30", "steady:load=1"), 0, 0)
            .expect("runs")
            .2;
        assert!(!meter.at_departure);
    }

    #[test]
    fn each_state_is_a_recount_from_the_arrivals_and_decisions() {
        for (name, s, _, trace, mech) in runs() {
            let spec = &s.limiters[0];
            let (t, ok) = (&trace.times, &trace.admitted);
            let w = s.window;
            let logged = |j: usize| ok[j] || spec.record_rejects;
            let samples = samples(&mech);
            match (mech.kind, spec.servers) {
                (StateKind::Tokens, 1) => {
                    // A float-free replay of the bucket from the decisions: refill, cap, take
                    // one token per admission (and an admission only when one was there).
                    let burst = spec.burst.unwrap_or(s.limit);
                    let rate = spec.rate.map_or((s.limit, w), |r| (r.count, r.per));
                    let (cap, per) = (u128::from(burst) * u128::from(rate.1), rate.1);
                    let (mut units, mut last) = (cap, 0);
                    for i in 0..mech.len() {
                        let filled = units + u128::from(t[i] - last) * u128::from(rate.0);
                        last = t[i];
                        assert_eq!(ok[i], filled >= u128::from(per), "{name} at {i}");
                        units = filled.min(cap) - if ok[i] { u128::from(per) } else { 0 };
                        let want = units as f64 / per as f64;
                        assert!((mech.value[i] - want).abs() < 1e-9, "{name} at {i}");
                    }
                    assert_eq!(mech.mark, burst, "{name}");
                }
                (StateKind::Tokens, _) => {}
                (StateKind::Log, _) => {
                    for &i in &samples {
                        let inside = |j: &usize| t[*j] + w > t[i];
                        let admitted = (0..=i).filter(|&j| ok[j]).filter(inside).count();
                        let rejects = (0..=i)
                            .filter(|&j| !ok[j] && logged(j))
                            .filter(inside)
                            .count();
                        assert_eq!(mech.value[i], (admitted + rejects) as f64, "{name} at {i}");
                        assert_eq!(mech.rejects[i] as usize, rejects, "{name} at {i}");
                    }
                }
                (StateKind::Count, _) => {
                    for &i in &samples {
                        let count = (0..=i)
                            .filter(|&j| logged(j) && t[j] / w == t[i] / w)
                            .count();
                        assert_eq!(mech.value[i], count as f64, "{name} at {i}");
                    }
                }
                (StateKind::Estimate, _) => {
                    for &i in &samples {
                        let k = t[i] / w;
                        let current = (0..=i).filter(|&j| logged(j) && t[j] / w == k).count();
                        let previous = (0..=i).filter(|&j| logged(j) && t[j] / w + 1 == k).count();
                        let left = (k + 1) * w - t[i];
                        let estimate = previous as f64 * left as f64 / w as f64 + current as f64;
                        assert_eq!(mech.current[i] as usize, current, "{name} at {i}");
                        assert_eq!(mech.previous[i] as usize, previous, "{name} at {i}");
                        assert!((mech.value[i] - estimate).abs() < 1e-9, "{name} at {i}");
                    }
                }
                (StateKind::Excess, _) if spec.kind == crate::LimiterKind::Nginx => {
                    // nginx's own arithmetic replayed from the decisions: thousandths, a
                    // millisecond clock, the rate r × 1000 / scale.
                    let rate = spec.nginx_rate(s.limit, w).expect("a rate");
                    let per_second = rate.count * 1000 / (rate.per / SECOND);
                    let (mut excess, mut last) = (0u64, None);
                    let leaked = |e: u64, since: Option<u64>, now: u64| {
                        since.map_or(0, |l| e.saturating_sub(per_second * (now - l) / 1000))
                    };
                    for i in 0..mech.len() {
                        let now = t[i] / 1000;
                        if ok[i] {
                            excess = if last.is_none() {
                                0
                            } else {
                                leaked(excess + 1000, last, now)
                            };
                            last = Some(now);
                        }
                        let want = leaked(excess, last, now) as f64 / 1000.0;
                        assert!((mech.value[i] - want).abs() < 1e-9, "{name} at {i}");
                    }
                }
                (StateKind::Excess, _) => {
                    // nginx's excess replayed from the decisions, in 1/per requests.
                    let rate = spec.rate.map_or((s.limit, w), |r| (r.count, r.per));
                    let (mut excess, mut last) = (0u128, None);
                    for i in 0..mech.len() {
                        let leaked = |e: u128, since: Option<Micros>| {
                            since.map_or(0, |l| {
                                e.saturating_sub(u128::from(t[i] - l) * u128::from(rate.0))
                            })
                        };
                        if ok[i] {
                            excess = if last.is_none() {
                                0
                            } else {
                                leaked(excess + u128::from(rate.1), last)
                            };
                            last = Some(t[i]);
                        }
                        let want = leaked(excess, last) as f64 / rate.1 as f64;
                        assert!((mech.value[i] - want).abs() < 1e-9, "{name} at {i}");
                    }
                }
                (StateKind::Queue, _) => {
                    for &i in &samples {
                        // Admitted and not yet left at its arrival.
                        let queued = (0..=i)
                            .filter(|&j| ok[j] && trace.released[j] > t[i])
                            .count();
                        assert_eq!(mech.value[i], queued as f64, "{name} at {i}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_log_that_records_rejects_is_over_full_under_the_retry_storm_and_never_otherwise() {
        let storm = "retry:rate=15/60s,spike=120,at=60s,tries=20,every=1s";
        let top = |limiter: &str, traffic: &str| {
            let (_, _, mech) = mechanism(&scenario(limiter, traffic), 0, 0).expect("runs");
            let most = mech.value.iter().copied().fold(0.0, f64::max);
            let rejects = mech.rejects.iter().copied().max().unwrap_or(0);
            (most, rejects)
        };
        let (recorded, rejects) = top("sliding-log:record-rejects=true", storm);
        assert!(recorded > 60.0, "{recorded}");
        assert!(rejects > 0);
        for traffic in TRAFFICS {
            let (plain, rejects) = top("sliding-log", traffic);
            assert!(plain <= 60.0, "{traffic}: {plain}");
            assert_eq!(rejects, 0, "{traffic}");
        }
    }

    #[test]
    fn the_boundaries_are_where_the_windows_reset() {
        for (name, s, _, trace, mech) in runs() {
            let Some(b) = mech.boundaries else {
                assert!(
                    !matches!(mech.kind, StateKind::Count | StateKind::Estimate),
                    "{name}"
                );
                continue;
            };
            let all: Vec<Micros> = b.iter().collect();
            assert_eq!(all.len() as u64, s.horizon() / s.window, "{name}");
            assert!(all
                .iter()
                .all(|&x| x % s.window == 0 && x > 0 && x <= s.horizon()));
            assert!(
                *trace.times.last().expect("decisions")
                    < all.last().copied().unwrap_or(0) + s.window
            );
            let (from, to) = (s.window / 2 + 7, 3 * s.window);
            let want: Vec<Micros> = all
                .iter()
                .copied()
                .filter(|&x| x >= from && x <= to)
                .collect();
            assert_eq!(b.between(from, to).collect::<Vec<_>>(), want, "{name}");
            if mech.kind != StateKind::Count {
                continue;
            }
            // A fixed window's count falls only across a boundary, and after one it starts
            // again from at most the decision that crossed it.
            for i in 1..mech.len() {
                let (a, z) = (trace.times[i - 1], trace.times[i]);
                let crossed = all.iter().any(|&x| a < x && x <= z);
                if crossed {
                    assert!(mech.value[i] <= 1.0, "{name} at {i}");
                } else {
                    assert!(mech.value[i] >= mech.value[i - 1], "{name} at {i}");
                }
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        /// Small random runs of every kind: the band at every decision is the brute-force
        /// recount of the auditor's window, and its largest is the busiest window.
        #[test]
        fn the_band_is_the_auditors_window_in_random_runs(
            kind in 0usize..LIMITERS.len(),
            traffic in 0usize..3,
            limit in 1u64..30,
            window_s in 1u64..20,
            load in 0.2f64..4.0,
            seed in 0u64..1_000,
        ) {
            let traffic = match traffic {
                0 => format!("steady:load={load}"),
                1 => format!("page-loads:load={load}"),
                _ => format!("retry:rate={}/{window_s}s,spike={},at=1s,tries=5,every=300ms", limit, 2 * limit),
            };
            let s = Scenario {
                limit,
                window: window_s * SECOND,
                duration: 2 * MINUTE,
                seed,
                ..scenario(LIMITERS[kind], &traffic)
            };
            let Ok(()) = s.validate() else {
                // A split limit needs a limit its servers share evenly.
                return Ok(());
            };
            let (stats, trace, mech) = mechanism(&s, 0, 0).expect("valid");
            proptest::prop_assert_eq!(mech.busiest(), stats.busiest);
            let mut admitted: Vec<Micros> = Vec::new();
            for i in 0..mech.len() {
                let end = mech.band_end(&trace, i).expect("a decision");
                if trace.admitted[i] {
                    admitted.push(end);
                }
                let want = admitted.iter().filter(|&&a| a <= end && a + s.window > end).count();
                proptest::prop_assert_eq!(mech.band[i] as usize, want, "at {}", i);
            }
        }
    }

    #[test]
    fn the_trace_beside_the_mechanism_is_the_trace() {
        for traffic in TRAFFICS {
            let s = scenario("sliding-window-counter", traffic);
            let (stats, t, _) = mechanism(&s, 0, 0).expect("runs");
            assert_eq!((stats, t), trace(&s, 0, 0).expect("runs"), "{traffic}");
        }
    }

    #[test]
    fn buffers_kept_from_a_longer_run_are_reused_and_give_the_same_answer() {
        let long = scenario(
            "sliding-log:record-rejects=true",
            "flood:start=worst,every=10ms",
        );
        let short = scenario("sliding-window-counter", "steady:load=0.8");
        let (_, t, m) = mechanism(&long, 0, 0).expect("runs");
        assert_eq!(
            m.band.capacity(),
            m.len(),
            "allocated once, at the run's length"
        );
        assert_eq!(m.value.capacity(), m.len());
        let (cap_t, cap_band) = (t.times.capacity(), m.band.capacity());
        let (stats, t, m) = mechanism_into(&short, 0, 0, t, m).expect("runs");
        let fresh = mechanism(&short, 0, 0).expect("runs");
        assert!(t.times.len() < cap_t, "a shorter run");
        assert_eq!((stats, t.clone(), m.clone()), fresh);
        assert_eq!((t.times.capacity(), m.band.capacity()), (cap_t, cap_band));
        // And from the counter to a retrying client, which reacts to the decisions.
        let storm = scenario(
            "sliding-log",
            "retry:rate=15/60s,spike=120,at=60s,tries=20,every=1s",
        );
        let (stats, t, m) = mechanism_into(&storm, 0, 0, t, m).expect("runs");
        assert_eq!(
            (stats.clone(), t),
            trace_into(&storm, 0, 0, Trace::default()).expect("runs")
        );
        assert_eq!(m.len() as u64, stats.decisions);
        assert!(stats.decisions > stats.offered, "retries were decided");
    }

    #[test]
    fn a_run_too_long_to_keep_is_refused_before_it_runs_saying_what_fits() {
        // A flood of one a µs for ten seconds: ten million decisions, 530 MB of lists.
        let s = Scenario {
            limit: 1000,
            window: SECOND,
            ..scenario("token-bucket", "flood:every=1us,for=10s")
        };
        s.validate().expect("the simulation itself fits");
        assert!(playback_memory(&s, 10_000_000) > MEMORY_BUDGET);
        let e = mechanism(&s, 0, 0).expect_err("too large").to_string();
        assert!(
            e.contains("the run to play back") && e.contains("decisions fit"),
            "{e}"
        );
        assert!(e.contains("10000000 decisions"), "{e}");
        // A tenth of it is kept.
        let fits = Scenario {
            traffic: TrafficSpec::parse("flood:every=1us,for=1s").expect("traffic"),
            ..s
        };
        let (_, _, m) = mechanism(&fits, 0, 0).expect("fits");
        assert_eq!(m.len(), 1_000_000);
        assert!(playback_memory(&fits, 1_000_000) <= MEMORY_BUDGET);
    }

    #[test]
    fn the_cost_per_decision_is_what_the_lists_hold() {
        for (name, _, _, t, m) in runs() {
            let n = m.len();
            let mech = 4 * m.band.capacity()
                + 8 * m.value.capacity()
                + 4 * (m.rejects.capacity() + m.current.capacity() + m.previous.capacity());
            assert!(mech <= MECHANISM_BYTES_PER_DECISION as usize * n, "{name}");
            let trace = 8 * t.times.capacity()
                + t.admitted.capacity()
                + 8 * (t.released.capacity()
                    + t.window_times.capacity()
                    + t.window_counts.capacity());
            assert!(trace <= TRACE_BYTES_PER_DECISION as usize * n, "{name}");
        }
    }
}
