//! The scenario: everything that determines a simulation, the ranges it is checked against,
//! its validation, its arrivals and limiters, and the bound on the memory it needs.

use crate::decimal::fixed;
use crate::error::Error;
use crate::import::MAX_REPLAY;
#[cfg(feature = "fleet")]
use crate::limiter::{Coord, Fleet, Outage, Route};
use crate::limiter::{
    FixedWindow, Gcra, Haproxy, LeakyBucket, LeakyMode, Limiter, Nginx, Rate, SlidingLog,
    SlidingWindowCounter, Split, TokenBucket,
};
use crate::rng::{Rng, Stream};
#[cfg(feature = "fleet")]
use crate::spec::FleetSpec;
use crate::spec::{LimiterKind, LimiterSpec, TrafficSpec};
use crate::theory;
use crate::time::{format_duration, Micros, MINUTE, MS, SECOND};
use crate::traffic::{
    Arrivals, Backoff, ClientGroup, FloodStart, Groups, Jitter, OnOff, Poisson, RetryClient,
    RetryClients,
};
use serde::{Deserialize, Serialize};

/// Everything that determines a simulation. Same scenario, same report, on every target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scenario {
    /// The limiters to compare, in report order.
    pub limiters: Vec<LimiterSpec>,
    /// The traffic every limiter faces.
    pub traffic: TrafficSpec,
    /// `L`: requests allowed per window.
    pub limit: u64,
    /// `W`, in µs.
    pub window: Micros,
    /// How long shaped and retrying traffic runs, in µs (floods and bursts set their own).
    pub duration: Micros,
    /// Independent runs.
    pub runs: u32,
    /// The seed of every random choice.
    pub seed: u64,
}

impl Default for Scenario {
    fn default() -> Self {
        Scenario {
            limiters: Vec::new(),
            traffic: TrafficSpec::Steady { load: 0.8 },
            limit: 100,
            window: MINUTE,
            duration: 60 * MINUTE,
            runs: 1,
            seed: 1,
        }
    }
}

/// The accepted range of the limit.
pub const LIMIT_RANGE: (u64, u64) = (1, 1_000_000);
/// The accepted range of the window, in µs: 1 ms to 1 day.
pub const WINDOW_RANGE: (Micros, Micros) = (MS, 24 * 60 * MINUTE);
/// The accepted range of the duration, in minutes.
pub const MINUTES_RANGE: (u64, u64) = (1, 100_000);
/// The accepted range of the run count.
pub const RUNS_RANGE: (u64, u64) = (1, 100_000);
/// The most decisions one scenario may ask for (about a minute of work on a laptop core).
pub const MAX_DECISIONS: f64 = 1e10;
/// The most memory a scenario may need, by [`Scenario::memory`]'s bound: 512 MB.
pub const MEMORY_BUDGET: u64 = 512 << 20;
pub use crate::time::MAX_TIME;

/// The chunk of arrivals handed to every limiter at a time (small enough that a chunk and the
/// auditor's scratch for it stay in a core's L1 cache).
pub const CHUNK: usize = 1024;

/// A large count as its first three significant digits, rounded down, times a power of ten
/// (`2.34 × 10^12`), or whole below a million; "over 10^19" past `u64`. Written with
/// integers: a float's exponent form costs each page module 1 KB (and `u128`'s text 0.5 KB).
fn about(v: f64) -> String {
    if v.is_nan() || v >= 1e19 {
        return "over 10^19".into();
    }
    let digits = (v.max(0.0) as u64).to_string();
    if digits.len() <= 6 {
        return digits;
    }
    format!(
        "{}.{} × 10^{}",
        &digits[..1],
        &digits[1..3],
        digits.len() - 1
    )
}

impl Scenario {
    /// The retrying client of run `run` (`None` unless the traffic retries): the fleet's
    /// first client, the whole of it when there is one.
    pub fn retry_client(&self, run: u32) -> Option<RetryClient> {
        self.client(run, 0)
    }

    /// Client `c` of run `run`'s retrying fleet: of the group it falls in, counting the
    /// spec's own group first, then its mix's.
    fn client(&self, run: u32, c: u32) -> Option<RetryClient> {
        let TrafficSpec::Retry { spike, at, .. } = self.traffic else {
            return None;
        };
        let mut first = 0;
        let group = self.traffic.client_groups().find(|g| {
            first += g.clients;
            c < first
        })?;
        let (tries, every, policy) = (group.tries, group.every, group.policy);
        let rng = |stream| Rng::for_client(self.seed, u64::from(run), stream, c);
        Some(RetryClient::new(
            self.arrivals_from(rng(Stream::Arrivals)),
            spike,
            at,
            tries,
            every,
            policy,
            rng(Stream::Jitter),
        ))
    }

    /// Every client of run `run`'s retrying fleet (`None` unless the traffic retries).
    pub fn retry_clients(&self, run: u32) -> Option<RetryClients> {
        if !self.traffic.closed_loop() {
            return None;
        }
        let clients = self.traffic.client_count() as u32;
        let all = (0..clients).filter_map(|c| self.client(run, c)).collect();
        Some(RetryClients::new(all))
    }

    /// Checks everything before any work starts: ranges, that every limiter can be built, and
    /// that the scenario is not too large.
    pub fn validate(&self) -> Result<(), Error> {
        let range = |what: &str, v: u64, (lo, hi): (u64, u64), shown: String, accepted: String| {
            if v < lo || v > hi {
                Err(Error::invalid(what, &shown, &accepted))
            } else {
                Ok(())
            }
        };
        range(
            "limit",
            self.limit,
            LIMIT_RANGE,
            self.limit.to_string(),
            "a whole number from 1 to 1000000".into(),
        )?;
        range(
            "window",
            self.window,
            WINDOW_RANGE,
            format_duration(self.window),
            "a duration from 1ms to 24h".into(),
        )?;
        range(
            "minutes",
            self.duration.div_ceil(MINUTE),
            MINUTES_RANGE,
            format_duration(self.duration),
            "from 1 to 100000 minutes".into(),
        )?;
        range(
            "runs",
            u64::from(self.runs),
            RUNS_RANGE,
            self.runs.to_string(),
            "a whole number from 1 to 100000".into(),
        )?;
        if self.limiters.is_empty() {
            return Err(Error::Missing {
                what: "a scenario".into(),
                key: "at least one limiter".into(),
                example: "--limiter sliding-log".into(),
            });
        }
        self.validate_traffic()?;
        self.validate_horizon()?;
        // A central store's answers reach the backend a round trip after the arrivals: within
        // the same 2^53 µs as every other time.
        #[cfg(feature = "fleet")]
        for fleet in self.limiters.iter().filter_map(|l| l.fleet) {
            if let Coord::Central { rtt, .. } = fleet.coord {
                if self.horizon().saturating_add(rtt) > MAX_TIME {
                    return Err(Error::invalid(
                        "coord central: rtt",
                        &format_duration(rtt),
                        "a round trip that, after the run's last arrival, ends within 285 years (2^53 − 1 µs)",
                    ));
                }
            }
        }
        for spec in &self.limiters {
            self.build_limiter(spec, 0)?;
        }
        let decisions = self.expected_decisions();
        if decisions > MAX_DECISIONS {
            return Err(Error::TooLarge {
                what: "the scenario".into(),
                detail: if self.traffic.closed_loop() {
                    format!(
                        "about {} decisions (runs × limiters × every client's tries, and a Retry-After search's trial decisions for a counter); the most is 10^10: use fewer runs, minutes, clients or tries, or a lower rate",
                        about(decisions),
                    )
                } else {
                    format!(
                        "about {} decisions (runs × limiters × arrivals); the most is 10^10: use fewer runs, minutes or a lower load",
                        about(decisions),
                    )
                },
            });
        }
        self.memory().check(1)
    }

    /// An upper bound on the memory a simulation of this scenario needs, by part; see
    /// [`Memory`]. The scenario must have passed the range checks of [`Scenario::validate`].
    pub fn memory(&self) -> Memory {
        let lanes: Vec<LaneMemory> = self
            .limiters
            .iter()
            .map(|spec| self.lane_memory(spec))
            .collect();
        // A retrying fleet's parts, for a message.
        let (mut pending, mut in_a_second, mut busiest_second) = (0u64, 0u64, 0u64);
        let traffic = match &self.traffic {
            // Grouped traffic lays each group out when it starts: the requests of a group's
            // span not yet sent, in a list or, while groups overlap, a heap that doubles
            // (24 bytes each while it grows).
            TrafficSpec::Groups { shape, .. } => 24 * self.most_in(shape.span()),
            // A retrying client's pending retries: (time, try) in a deque that doubles, and
            // the old buffer while it moves.
            // Per client: its pending retries, 32-byte tries in a deque that doubles, and the old
            // buffer while it moves; with a budget, the first tries and retries of a minute
            // (at most the first tries' bound and that many again); the client itself and its
            // queue entry. Per lane: the tries of the trailing second (at most every client's
            // pending retries and first tries at once) and the time-to-success histogram.
            // A mix: each group's clients as such, and a histogram and a trailing second's
            // deque per group and lane beside the fleet's.
            TrafficSpec::Retry { .. } => {
                let lanes = self.limiters.len().max(1) as u64;
                (pending, in_a_second, busiest_second) = (0, 0, 0);
                let mixed = self.traffic.client_groups().nth(1).is_some();
                // The fleet's, and with a mix each group's too.
                let (histograms, seconds) = if mixed {
                    (1 + self.traffic.client_groups().count() as u64, 2)
                } else {
                    (1, 1)
                };
                let bytes = lanes * histograms * HISTOGRAM_BYTES;
                for g in self.traffic.client_groups() {
                    let m = u64::from(g.clients);
                    let retries = self.pending_retries(&g);
                    let budget = if g.policy.budget.is_some() {
                        2 * 2 * 8 * self.first_tries_in(MINUTE)
                    } else {
                        0
                    };
                    let per_client = 3 * 2 * 32 * retries + budget + 256;
                    // The tries of a second: its first tries, and each pending request's
                    // retries that fit in a second at the shortest gap the policy can wait.
                    let tries = self
                        .first_tries_in(SECOND)
                        .saturating_add(retries.saturating_mul(Self::retries_in_a_second(&g)));
                    let second = 16u64.saturating_mul(m).saturating_mul(tries);
                    pending = pending.saturating_add(m.saturating_mul(per_client));
                    in_a_second = in_a_second.saturating_add(m.saturating_mul(tries));
                    busiest_second = busiest_second
                        .saturating_add(lanes.saturating_mul(seconds).saturating_mul(second));
                }
                bytes.saturating_add(pending).saturating_add(busiest_second)
            }
            _ => 0,
        }
        .saturating_add(RUN_BYTES);
        // Over a mix, the most of any group's clients.
        let retries = (self.traffic.client_groups())
            .map(|g| self.pending_retries(&g))
            .max()
            .unwrap_or(0);
        let replay = match &self.traffic {
            TrafficSpec::Replay(r) => 8 * r.times.len() as u64,
            _ => 0,
        };
        Memory {
            lanes,
            traffic,
            retries,
            clients: self.traffic.client_count(),
            pending,
            in_a_second,
            busiest_second,
            replay,
            results: RESULT_BYTES * u64::from(self.runs) * (self.limiters.len() as u64).max(1),
        }
    }

    /// What one limiter of a run keeps: its auditor's buffer (two slots per admission it
    /// keeps, plus a chunk), its own state, and a queue's departures and delay histogram.
    /// Whatever is kept per admission is bounded twice, by what a window can hold and by the
    /// run's admissions ([`Scenario::most_admissions`]): never more entries than arrivals.
    fn lane_memory(&self, spec: &LimiterSpec) -> LaneMemory {
        let k = u64::from(spec.servers);
        let rate = spec.rate.unwrap_or(Rate {
            count: self.limit,
            per: self.window,
        });
        let burst = spec.burst_or(self.limit);
        let admissions = self.most_admitted(spec);
        // The most admissions any window can hold; for the rare limiter theory gives no bound
        // for (a queue leaking more than one a µs), its burst and a window of leaking.
        // A fleet failing open admits every arrival while its store is down: no bound but
        // the window's arrivals.
        let worst = match self.worst(spec) {
            Some(w) => w,
            None if in_fleet(spec) => Micros::MAX,
            None => {
                let leaked =
                    u128::from(rate.count) * u128::from(self.window) / u128::from(rate.per);
                burst.saturating_add(2).saturating_add(leaked as u64)
            }
        };
        // The busiest window holds no more than a window's arrivals, nor what a fleet's
        // gateways each can admit of their share.
        let busiest = worst
            .min(self.most_in(self.window))
            .min(self.routed_worst(spec).unwrap_or(u64::MAX));
        let kept = busiest.max(self.limit).min(admissions);
        let audit = 16 * (kept + CHUNK as u64) + 64;
        // The auditor grows when its admissions fill two thirds of it: the old buffer, at
        // most 1.5 slots an admission, beside the new.
        let audit_moving = 12 * (kept + CHUNK as u64);
        // A sliding log's ring grows to at most L slots, doubling (the old buffer beside the
        // new while it moves); a log that records rejects logs every decision, one that does
        // not only its admissions.
        let logged = if spec.record_rejects {
            self.most_decisions()
        } else {
            admissions
        };
        // (A fleet's limiters are its own part, below.)
        let log = spec.kind == LimiterKind::SlidingLog && !in_fleet(spec);
        let own = if log {
            ring_bytes(self.limit, logged)
        } else {
            0
        } + 64 * k;
        let own_moving = if log {
            ring_moving(self.limit, logged)
        } else {
            0
        };
        // Departures still to come: at most the burst and one, 16 bytes each in a ring that
        // doubles (and the half it grew from while it moves).
        let waiting = burst.saturating_add(2).min(admissions.saturating_add(2));
        let (queue, queue_moving) = if spec.queues() {
            (32 * waiting + HISTOGRAM_BYTES, 16 * waiting)
        } else {
            (0, 0)
        };
        let fleet = self.fleet_memory(spec);
        #[cfg(feature = "fleet")]
        let lease = matches!(spec.fleet.map(|f| f.coord), Some(Coord::Lease { size, .. }) if size > self.limit);
        #[cfg(not(feature = "fleet"))]
        let lease = false;
        let largest = audit.max(own + queue).max(fleet.state).max(fleet.sync);
        #[cfg(feature = "fleet")]
        let delayed = matches!(spec.fleet.map(|f| f.coord), Some(Coord::Sync { every, delay }) if delay > every);
        #[cfg(not(feature = "fleet"))]
        let delayed = false;
        let advice = if largest == fleet.sync && delayed {
            "a shorter sync delay (sync:every=DUR,delay=DUR): snapshots wait that long"
        } else if largest == fleet.sync {
            "a shorter sync interval (sync:every=DUR): each gateway keeps its admissions since its snapshot"
        } else if largest == fleet.state {
            "fewer gateways or a smaller limit"
        } else if kept == admissions {
            "fewer minutes or a lower load (the run's own admissions are what is kept)"
        } else if lease {
            "a smaller lease size (lease:size=B)"
        } else if spec.burst_or(self.limit) > self.limit {
            "a smaller burst or limit"
        } else {
            "a smaller limit"
        };
        LaneMemory {
            kept,
            audit,
            own: own + queue + fleet.total(),
            moving: audit_moving
                .max(own_moving)
                .max(queue_moving)
                .max(fleet.moving),
            fleet,
            advice,
        }
    }

    /// More admissions than one limiter of a run will make: every arrival of the traffic
    /// (for shaped traffic, its mean and eight standard deviations; a flood's, a burst's and
    /// a replay's exactly), and for retrying clients every first try (a request is admitted
    /// once, whatever its retries).
    pub fn most_admissions(&self) -> u64 {
        self.most_in(Micros::MAX)
    }

    /// More admissions than one limiter makes in any span of `span` µs (the whole run at
    /// most): the arrivals of such a span, by the same reckoning as
    /// [`Scenario::most_admissions`]; for retrying clients the first tries of the span and of
    /// the retries' reach before it.
    pub fn most_in(&self, span: Micros) -> u64 {
        let sure = |mean: f64, variance: f64| (mean + 8.0 * variance.sqrt() + 64.0) as u64;
        let within = span.min(self.duration) as f64;
        let mean = |load: f64| self.rate_per_us(load) * within;
        match &self.traffic {
            TrafficSpec::Steady { load } => sure(mean(*load), mean(*load)),
            // Groups of a geometric size of mean m: a count's variance is its mean × (2m − 1),
            // and a span may cut into a group on each side.
            TrafficSpec::Groups { shape, load } => {
                let m = shape.mean_size();
                sure(mean(*load), mean(*load) * (2.0 * m - 1.0)).saturating_add(64 * m as u64)
            }
            // Active at `1 / busy` times the average rate, for as long as the runs' periods
            // keep it active within such a span (or, past so many periods that laying them out
            // would cost more than it saves, all the span).
            TrafficSpec::OnOff { load, busy, .. } => {
                let rate = self.rate_per_us(*load) / busy;
                match self.on_off_active(span) {
                    Some(active) => sure(rate * active, rate * active),
                    None => sure(mean(*load) / busy, mean(*load) / busy),
                }
            }
            TrafficSpec::Flood { every, .. } => {
                let all = (self.flood_length() / every).saturating_add(2);
                all.min((span.saturating_add(*every) / every).saturating_add(1))
            }
            // Its two ticks' requests, `before + after` apart.
            TrafficSpec::BoundaryBurst { before, after, .. } => {
                let [first, second] = self.ticks();
                if span > before.saturating_add(*after) {
                    first.saturating_add(second)
                } else {
                    first.max(second)
                }
            }
            TrafficSpec::Retry { .. } => self
                .traffic
                .client_groups()
                .map(|g| {
                    let reach = Self::retries_end(&g).unwrap_or(Micros::MAX);
                    let reach = if g.policy.honor { Micros::MAX } else { reach };
                    u64::from(g.clients)
                        .saturating_mul(self.first_tries_in(span.saturating_add(reach)))
                })
                .fold(0, u64::saturating_add),
            TrafficSpec::Replay(r) => r.times.len() as u64,
        }
    }

    /// The most time on/off traffic is active within any span of `span` µs (the run at most),
    /// over every run: each run's periods laid out as its arrivals draw them
    /// ([`OnOff::periods`]), the span placed to start at a period's start or end at a
    /// period's end (where the most is). `None` when the runs hold more than
    /// [`ON_OFF_PERIODS`] periods in all, expected.
    fn on_off_active(&self, span: Micros) -> Option<f64> {
        let TrafficSpec::OnOff { active, busy, .. } = self.traffic else {
            return None;
        };
        let end = self.duration as f64;
        let cycle = active as f64 / busy;
        let expected = f64::from(self.runs) * (end / cycle + 1.0);
        if expected > ON_OFF_PERIODS as f64 {
            return None;
        }
        let span = span.min(self.duration) as f64;
        let mut most: f64 = 0.0;
        let mut periods: Vec<(f64, f64)> = Vec::new();
        // Active time before each period, and in all.
        let mut before: Vec<f64> = Vec::new();
        for run in 0..self.runs {
            let mut rng = Rng::new(self.seed, u64::from(run), Stream::Arrivals);
            periods.clear();
            periods.extend(
                OnOff::periods(&mut rng, active, busy)
                    .take_while(|&(start, _)| start < end)
                    .map(|(start, stop)| (start, stop.min(end))),
            );
            before.clear();
            let mut sum = 0.0;
            for &(a, b) in &periods {
                before.push(sum);
                sum += b - a;
            }
            // Active time in [0, y).
            let upto = |y: f64| -> f64 {
                let k = periods.partition_point(|&(a, _)| a < y);
                match k {
                    0 => 0.0,
                    _ => before[k - 1] + (y.min(periods[k - 1].1) - periods[k - 1].0),
                }
            };
            for &(a, b) in &periods {
                most = most
                    .max(upto(a + span) - upto(a))
                    .max(upto(b) - upto(b - span));
            }
        }
        Some(most)
    }

    /// More than `spec` admits of on/off traffic in a run: requests come only while it is
    /// active, so no more than its worst in each active period, over the run whose periods
    /// allow the most ([`Scenario::on_off_active`]'s layout). `None` where theory gives no
    /// worst or the periods are too many to lay out.
    fn on_off_most(&self, spec: &LimiterSpec) -> Option<u64> {
        let TrafficSpec::OnOff { active, busy, .. } = self.traffic else {
            return None;
        };
        let end = self.duration as f64;
        if f64::from(self.runs) * (end * busy / active as f64 + 1.0) > ON_OFF_PERIODS as f64 {
            return None;
        }
        let whole = theory::worst_in(spec, self.limit, self.window, self.window)?;
        let most_in = |len: f64| -> Option<u64> {
            // Arrivals within `[a, b)` fall in a span of `⌈b − a⌉` µs, `(t − span, t]`.
            let span = (len.ceil() as Micros).saturating_add(1);
            let most = if span < self.window {
                theory::worst_in(spec, self.limit, self.window, span)?
            } else {
                whole.saturating_mul(span.div_ceil(self.window.max(1)))
            };
            Some(most.min(self.calendar_in(spec, self.limit, span).unwrap_or(most)))
        };
        let mut most = 0u64;
        for run in 0..self.runs {
            let mut rng = Rng::new(self.seed, u64::from(run), Stream::Arrivals);
            let mut sum = 0u64;
            for (a, b) in OnOff::periods(&mut rng, active, busy).take_while(|&(a, _)| a < end) {
                sum = sum.saturating_add(most_in(b.min(end) - a)?);
            }
            most = most.max(sum);
        }
        Some(most)
    }

    /// More admissions than `spec` makes in a run: the run's admissions
    /// ([`Scenario::most_admissions`]), and no more than its worst window's in each window the
    /// run spans (with every arrival within one span, its worst in that span). A queue
    /// admits what the same bucket without one would, only later. Under `central` and
    /// `lease` every admission is one the store granted: no more than one shared limiter's.
    fn most_admitted(&self, spec: &LimiterSpec) -> u64 {
        let all = self.most_admissions();
        let mut deciding = spec.clone();
        if spec.queues() {
            deciding.mode = LeakyMode::Meter;
        }
        let most = match self.worst(&deciding) {
            Some(worst) if self.arrival_span(&deciding) < self.window => all.min(worst),
            Some(worst) => {
                let windows = self
                    .horizon()
                    .div_ceil(self.window.max(1))
                    .saturating_add(1);
                all.min(worst.saturating_mul(windows))
            }
            None => all,
        };
        let most = most
            .min(self.locked_out(spec).unwrap_or(most))
            .min(self.calendar_most(spec, self.limit).unwrap_or(most))
            .min(self.on_off_most(&deciding).unwrap_or(most));
        #[cfg(feature = "fleet")]
        if let Some(fleet) = spec.fleet {
            let granted = match fleet.coord {
                Coord::Central {
                    outage: Some(Outage { open: true, .. }),
                    ..
                } => false,
                Coord::Central { .. } | Coord::Lease { .. } => true,
                _ => false,
            };
            if granted {
                let mut one = spec.clone();
                one.fleet = None;
                let most = most.min(self.most_admitted(&one));
                return most.min(self.lease_bound(spec, &fleet, all).unwrap_or(most));
            }
            // Where each gateway decides by a limiter of its own, each admits no more than
            // its own limiter can in the run, nor than the router sends it. (A retried
            // request's tries are routed one by one: one gateway may see more than its share
            // of requests.)
            if let Some(each) = self
                .gateway_most(spec, &fleet)
                .filter(|_| !self.traffic.closed_loop())
            {
                let routed = (0..fleet.gateways as usize)
                    .map(|h| each.min(Self::routed(&fleet, h, all)))
                    .fold(0, u64::saturating_add);
                return most.min(routed);
            }
        }
        most
    }

    /// More than a lease fleet admits when a lease is at least all the store can grant at
    /// one instant, under open-loop traffic (`all` its arrivals): the first gateway to ask
    /// takes the store's whole room, and the others asking then get none, so few gateways
    /// ever hold permits, each admitting no more than the router sends it. A boundary
    /// burst's two instants give two holders. A fixed window's store gets its room back only
    /// with its next calendar window: one holder per window the arrivals touch. A
    /// sliding-window counter's also gets back, within a window, what the last window's
    /// count, weighted less and less, frees: at most that count (`L`) a window past the
    /// first the arrivals touch (before which it counted nothing). `None` otherwise.
    #[cfg(feature = "fleet")]
    fn lease_bound(&self, spec: &LimiterSpec, fleet: &FleetSpec, all: u64) -> Option<u64> {
        let Coord::Lease { size, .. } = fleet.coord else {
            return None;
        };
        if self.traffic.closed_loop() {
            return None;
        }
        let mut one = spec.clone();
        one.fleet = None;
        let room = theory::worst_in(&one, self.limit, self.window, 1)?;
        if size < room {
            return None;
        }
        let windows = self.windows_touched();
        match (&self.traffic, spec.kind) {
            (TrafficSpec::BoundaryBurst { .. }, _) => Some(self.top_routed(fleet, 2, all)),
            (_, LimiterKind::FixedWindow) => Some(self.top_routed(fleet, windows, all)),
            (_, LimiterKind::SlidingWindowCounter) => Some(
                self.top_routed(fleet, windows, all)
                    .saturating_add((windows - 1).saturating_mul(self.limit)),
            ),
            _ => None,
        }
    }

    /// How many calendar windows `[kW, (k + 1)W)` a run's arrivals can fall in.
    fn windows_touched(&self) -> u64 {
        let w = self.window.max(1);
        let (first, last) = self.arrival_bounds();
        (last / w - first / w).saturating_add(1)
    }

    /// When a run's first and last arrivals can be: a flood's and a boundary burst's
    /// instants, any other's the run's start and horizon.
    fn arrival_bounds(&self) -> (Micros, Micros) {
        match self.traffic {
            TrafficSpec::Flood { start, every, .. } => {
                let first = self.window.saturating_add(Arrivals::flood_offset(
                    start,
                    self.limit,
                    self.window,
                    every,
                ));
                (first, first.saturating_add(self.flood_length()))
            }
            TrafficSpec::BoundaryBurst { before, after, .. } => (
                self.window.saturating_sub(before),
                self.window.saturating_add(after),
            ),
            _ => (0, self.horizon()),
        }
    }

    /// More than the `k` gateways the router sends the most of `arrivals` get together.
    #[cfg(feature = "fleet")]
    fn top_routed(&self, fleet: &FleetSpec, k: u64, arrivals: u64) -> u64 {
        let mut each: Vec<u64> = (0..fleet.gateways as usize)
            .map(|h| Self::routed(fleet, h, arrivals))
            .collect();
        each.sort_unstable_by(|a, b| b.cmp(a));
        each.iter()
            .take(usize::try_from(k).unwrap_or(usize::MAX))
            .fold(0, |sum, &x| sum.saturating_add(x))
    }

    /// The most one gateway of a `local`, `split` or `sync` fleet admits in any span of
    /// `span` µs (up to the window): under `local` and `sync` its own limiter's worst (a view
    /// that also counts the others' admissions leaves it less room, never more; a skewed
    /// clock moves its windows, not their worst), under `split` a part's, a `N`-th of the
    /// split's (each part the same limiter on `L/N`, `B/N`, `r/N`; within three for a
    /// counter's rounding). `None` where the store decides.
    #[cfg(feature = "fleet")]
    fn gateway_worst(&self, spec: &LimiterSpec, fleet: &FleetSpec, span: Micros) -> Option<u64> {
        let mut one = spec.clone();
        one.fleet = None;
        match fleet.coord {
            Coord::Local | Coord::Sync { .. } => {
                theory::worst_in(&one, self.limit, self.window, span)
            }
            Coord::Split => {
                one.servers = fleet.gateways;
                let all = theory::worst_in(&one, self.limit, self.window, span)?;
                // (HAProxy's own `limit=` is each part's whole.)
                if spec.kind == LimiterKind::Haproxy && spec.limit.is_some() {
                    Some(all)
                } else {
                    Some(all.div_ceil(u64::from(fleet.gateways)).saturating_add(3))
                }
            }
            _ => None,
        }
    }

    /// More than a `local`, `split` or `sync` fleet's gateways admit together in any window
    /// under open-loop traffic (see [`Scenario::most_admitted`]): each no more than its own
    /// limiter's worst window ([`Scenario::gateway_worst`]) and what the router sends it of a
    /// window's arrivals. `None` for other fleets and single limiters.
    fn routed_worst(&self, spec: &LimiterSpec) -> Option<u64> {
        #[cfg(feature = "fleet")]
        {
            let fleet = spec.fleet?;
            if self.traffic.closed_loop() {
                return None;
            }
            let each = self.gateway_worst(spec, &fleet, self.window)?;
            let w = self.most_in(self.window);
            Some(
                (0..fleet.gateways as usize)
                    .map(|h| each.min(Self::routed(&fleet, h, w)))
                    .fold(0, u64::saturating_add),
            )
        }
        #[cfg(not(feature = "fleet"))]
        {
            let _ = spec;
            None
        }
    }

    /// The most one gateway of a `local`, `split` or `sync` fleet admits in the run, by
    /// [`Scenario::most_admitted`]'s reckoning with [`Scenario::gateway_worst`].
    #[cfg(feature = "fleet")]
    fn gateway_most(&self, spec: &LimiterSpec, fleet: &FleetSpec) -> Option<u64> {
        let span = self.arrival_span(spec);
        let whole = self.gateway_worst(spec, fleet, self.window)?;
        if span < self.window {
            let within = self.gateway_worst(spec, fleet, span)?;
            let instant = self.gateway_worst(spec, fleet, 1)?;
            Some(within.min(instant.saturating_mul(2)))
        } else {
            let windows = self
                .horizon()
                .div_ceil(self.window.max(1))
                .saturating_add(1);
            let mut one = spec.clone();
            one.fleet = None;
            // A split's part counts to its share of the limit; a skewed gateway's calendar
            // windows are its own clock's.
            let limit = match fleet.coord {
                Coord::Split => self.limit / u64::from(fleet.gateways.max(1)),
                _ => self.limit,
            };
            // (A clock ahead can see the arrivals' span over one calendar window more.)
            let most = whole.saturating_mul(windows);
            let calendar = self
                .calendar_most(&one, limit)
                .map(|c| c.saturating_add(if fleet.skew > 0 { limit } else { 0 }));
            Some(most.min(calendar.unwrap_or(most)))
        }
    }

    /// What a fixed window or a sliding-window counter of limit `limit` admits in the run:
    /// fewer than `limit` in each calendar window its count starts afresh in, and the
    /// arrivals touch no more than [`Scenario::windows_touched`] of them; HAProxy's counter
    /// as much in each of its periods ([`Scenario::calendar_in`]). `None` for other limiters
    /// and fleets.
    fn calendar_most(&self, spec: &LimiterSpec, limit: u64) -> Option<u64> {
        if in_fleet(spec) || spec.servers > 1 {
            return None;
        }
        match spec.kind {
            LimiterKind::FixedWindow | LimiterKind::SlidingWindowCounter => {
                Some(limit.saturating_mul(self.windows_touched()))
            }
            LimiterKind::Haproxy => {
                let (first, last) = self.arrival_bounds();
                self.calendar_in(spec, limit, last - first)
            }
            _ => None,
        }
    }

    /// What a limiter that counts afresh each calendar window (a fixed window, a
    /// sliding-window counter: fewer than `limit` admissions in each) or period (HAProxy's
    /// counter, whose period may run a millisecond short) admits of arrivals within `len`
    /// µs, wherever they fall: `limit` for each window or period they can touch. `None` for
    /// other limiters and fleets.
    fn calendar_in(&self, spec: &LimiterSpec, limit: u64, len: Micros) -> Option<u64> {
        if in_fleet(spec) || spec.servers > 1 {
            return None;
        }
        let (limit, shortest) = match spec.kind {
            LimiterKind::FixedWindow | LimiterKind::SlidingWindowCounter => (limit, self.window),
            LimiterKind::Haproxy => {
                let period = spec.haproxy_period(self.window).ok()?;
                (
                    spec.limit.unwrap_or(limit),
                    period.saturating_sub(MS).max(MS),
                )
            }
            _ => return None,
        };
        Some(limit.saturating_mul((len / shortest.max(1)).saturating_add(2)))
    }

    /// What a limiter that counts its rejects admits of a steady load that never lets its
    /// count fall below its limit: the first `L` requests, then nothing (the retry storm's
    /// lockout). A sliding log counts every request of the trailing window, a sliding-window
    /// counter and HAProxy's those of the last period weighted and the current one's, which
    /// together are no fewer than a period's Poisson count less 16 standard deviations (8 for
    /// each part) and 64; HAProxy's millisecond weights may take 2 ms of a period off that.
    /// `None` unless that floor clears the limit.
    fn locked_out(&self, spec: &LimiterSpec) -> Option<u64> {
        let TrafficSpec::Steady { load } = self.traffic else {
            return None;
        };
        if !spec.record_rejects || in_fleet(spec) || spec.servers > 1 {
            return None;
        }
        let (limit, period) = match spec.kind {
            LimiterKind::SlidingLog | LimiterKind::SlidingWindowCounter => {
                (self.limit, self.window)
            }
            LimiterKind::Haproxy => (
                spec.limit.unwrap_or(self.limit),
                spec.haproxy_period(self.window).ok()?,
            ),
            _ => return None,
        };
        let mean = self.rate_per_us(load) * period as f64;
        let shave = 1.0 - 2_000.0 / period.max(1) as f64;
        let floor = (mean - 16.0 * mean.sqrt() - 64.0) * shave;
        (floor >= limit as f64 + 3.0).then_some(limit)
    }

    /// A boundary burst's requests at its two ticks (the limit each unless given).
    fn ticks(&self) -> [u64; 2] {
        match self.traffic {
            TrafficSpec::BoundaryBurst { first, second, .. } => {
                [first.unwrap_or(self.limit), second.unwrap_or(self.limit)]
            }
            _ => [0, 0],
        }
    }

    /// A span shorter than the window that holds every arrival `spec` decides on, or the
    /// window: a boundary burst's two instants are `before + after` apart, and a limiter
    /// that decides when a request arrives admits within that span (one that queues lets
    /// requests leave later).
    fn arrival_span(&self, spec: &LimiterSpec) -> Micros {
        match self.traffic {
            TrafficSpec::BoundaryBurst { before, after, .. } if !spec.queues() => before
                .saturating_add(after)
                .saturating_add(1)
                .min(self.window),
            _ => self.window,
        }
    }

    /// The most `spec` admits in any window of this run, where theory knows it
    /// ([`theory::worst_in`] the span that holds every arrival it decides on).
    /// Arrivals at two instants also meet it at most twice what it admits in one instant.
    /// A limiter that counts by calendar window (a fixed window, a sliding-window counter
    /// with nothing before) admits of two instants in one such window what it admits at one.
    fn worst(&self, spec: &LimiterSpec) -> Option<u64> {
        let span = self.arrival_span(spec);
        let worst = theory::worst_in(spec, self.limit, self.window, span)?;
        if span < self.window {
            let instant = theory::worst_in(spec, self.limit, self.window, 1)?;
            let times = if self.ticks_in_one_calendar_window(spec) {
                1
            } else {
                2
            };
            let worst = worst.min(instant.saturating_mul(times));
            let worst = worst.min(self.synced_between_ticks(spec).unwrap_or(worst));
            Some(worst.min(self.synced_unseen(spec).unwrap_or(worst)))
        } else {
            Some(worst.min(self.synced_unseen(spec).unwrap_or(worst)))
        }
    }

    /// A `sync` fleet (clocks agreeing) admits in a window no more than one limiter would
    /// with every admission seen, and what the others admitted since a gateway's last
    /// snapshot, taken within `Δ + δ` ([`theory::fleet_worst`]'s reasoning): no more than
    /// the arrivals of such a span.
    fn synced_unseen(&self, spec: &LimiterSpec) -> Option<u64> {
        #[cfg(feature = "fleet")]
        {
            let fleet = spec.fleet?;
            let Coord::Sync { every, delay } = fleet.coord else {
                return None;
            };
            if fleet.skew > 0 {
                return None;
            }
            let mut one = spec.clone();
            one.fleet = None;
            let single = self.worst(&one)?;
            let stale = every.saturating_add(delay).saturating_add(1);
            Some(single.saturating_add(self.most_in(stale)))
        }
        #[cfg(not(feature = "fleet"))]
        {
            let _ = spec;
            None
        }
    }

    /// A `sync` fleet (clocks agreeing) facing a boundary burst whose first tick a snapshot
    /// takes and delivers before the second: at the second tick every gateway's view is the
    /// whole history, so each admits no more than one limiter would after the first tick's
    /// admissions, `A₁`. One limiter admits `m = min(c₁, F)` of the first tick
    /// ([`theory::first_instant`]), and the fleet at least that (each fresh gateway admits
    /// its share up to `F`); after `m` one limiter has at most its two-instant worst less `m`
    /// left, and more history leaves no more room. So the two ticks pass at most
    /// `A₁ + min(c₂, N · (worst − m))`, `A₁` no more than the first tick and the fleet's
    /// worst at one instant.
    fn synced_between_ticks(&self, spec: &LimiterSpec) -> Option<u64> {
        #[cfg(feature = "fleet")]
        {
            let TrafficSpec::BoundaryBurst { before, after, .. } = self.traffic else {
                return None;
            };
            let fleet = spec.fleet?;
            let Coord::Sync { every, delay } = fleet.coord else {
                return None;
            };
            if fleet.skew > 0 || spec.queues() {
                return None;
            }
            let first = self.window.checked_sub(before)?;
            let second = self.window.checked_add(after)?;
            // The first snapshot after the first tick, and when it reaches the gateways.
            let taken = (first / every.max(1)).checked_add(1)?.checked_mul(every)?;
            if taken.checked_add(delay)? > second {
                return None;
            }
            let mut one = spec.clone();
            one.fleet = None;
            let [c1, c2] = self.ticks();
            let m = c1.min(theory::first_instant(&one, self.limit)?);
            let single = self.worst(&one)?;
            let at_once = theory::worst_in(spec, self.limit, self.window, 1)?;
            let n = u64::from(fleet.gateways);
            let later = c2.min(n.saturating_mul(single.saturating_sub(m)));
            Some(c1.min(at_once).saturating_add(later))
        }
        #[cfg(not(feature = "fleet"))]
        {
            let _ = spec;
            None
        }
    }

    /// Whether a boundary burst's two ticks reach a fixed window or a sliding-window counter
    /// in one calendar window `[kW, (k + 1)W)` of the clock it decides by: the backend's,
    /// or under `central` the store's, half a round trip later. (A skewed fleet's gateways
    /// each decide by a clock of their own: never taken as one.)
    fn ticks_in_one_calendar_window(&self, spec: &LimiterSpec) -> bool {
        let TrafficSpec::BoundaryBurst { before, after, .. } = self.traffic else {
            return false;
        };
        if !matches!(
            spec.kind,
            LimiterKind::FixedWindow | LimiterKind::SlidingWindowCounter
        ) || spec.queues()
        {
            return false;
        }
        #[cfg(feature = "fleet")]
        let shift = match spec.fleet {
            Some(fleet) if fleet.skew > 0 => return false,
            Some(FleetSpec {
                coord: Coord::Central { rtt, .. },
                ..
            }) => rtt / 2,
            _ => 0,
        };
        #[cfg(not(feature = "fleet"))]
        let shift: Micros = 0;
        let w = self.window.max(1);
        let first = self.window.saturating_sub(before).saturating_add(shift);
        let second = self.window.saturating_add(after).saturating_add(shift);
        first / w == second / w
    }

    /// More decisions than one limiter of a run will make: [`Scenario::most_admissions`]'s
    /// arrivals, and each retrying request's every try.
    pub fn most_decisions(&self) -> u64 {
        match &self.traffic {
            TrafficSpec::Retry { .. } => self
                .traffic
                .client_groups()
                .map(|g| {
                    (u64::from(g.clients) * u64::from(g.tries))
                        .saturating_mul(self.first_tries_in(self.duration))
                })
                .fold(0, u64::saturating_add),
            _ => self.most_admissions(),
        }
    }

    /// What a fleet keeps beside its fleet-wide auditor, by part (see [`FleetMemory`]): each
    /// part bounded by what the fleet's windows can hold and by the run's admissions (every
    /// admission is one gateway's), so that a fleet of many gateways at a large limit facing
    /// a short run is charged for the run, not for its capacity.
    #[cfg(feature = "fleet")]
    fn fleet_memory(&self, spec: &LimiterSpec) -> FleetMemory {
        let Some(fleet) = spec.fleet else {
            return FleetMemory::default();
        };
        let mut one = spec.clone();
        one.fleet = None;
        let n = u64::from(fleet.gateways);
        let a = self.most_admitted(spec);
        let log = spec.kind == LimiterKind::SlidingLog;
        // Each gateway's limit: a split's is its share.
        let limit = match fleet.coord {
            Coord::Split => self.limit.div_ceil(n),
            _ => self.limit,
        };
        // A sliding log's ring: 12 bytes a slot it fills (see `lane_memory`), the gateways'
        // together filled by at most every admission; the shared limiter and the store's
        // each one ring of the whole limit.
        // `count` rings of `each` slots: together no more slots than twice the admissions
        // (and eight each), no more than `each` apiece; one of them moving at a time.
        let rings = |count: u64, each: u64| {
            if log {
                8 * a
                    .saturating_mul(2)
                    .max(8 * count)
                    .min(count.saturating_mul(each.max(8)))
            } else {
                0
            }
        };
        let log_moving = |each: u64| if log { ring_moving(each, a) } else { 0 };
        // One gateway's busiest window: its limiter's worst, and no more than a window's
        // arrivals.
        // (A lease carries up to `B − 1` permits into a window; failing open, every arrival.)
        let single = match fleet.coord {
            Coord::Central {
                outage: Some(Outage { open: true, .. }),
                ..
            } => Micros::MAX,
            Coord::Lease { size, .. } => self
                .worst(&one)
                .unwrap_or(self.limit)
                .saturating_add(size - 1),
            _ => self.worst(&one).unwrap_or(self.limit),
        }
        .min(self.most_in(self.window));
        // Each gateway's busiest-window ring: at most twice its busiest, 16 bytes an
        // admission, at least 8 slots; and, while one of them moves, the half it grew from.
        // Together the gateways' busiest windows hold no more than what reaches each in a
        // window: round-robin deals any run of arrivals out evenly (a window's to each, and
        // one), a random or skewed route its share and eight standard deviations of a binomial
        // count, whose sum over the gateways is at most `8·√(N·w)` (Cauchy–Schwarz).
        let w = self.most_in(self.window);
        let routed = match fleet.route {
            Route::RoundRobin => w.saturating_add(n),
            _ => w
                .saturating_add((8.0 * ((n as f64) * (w as f64)).sqrt()) as u64)
                .saturating_add(64 * n),
        };
        let each = self.routed_worst(spec).unwrap_or(u64::MAX);
        let busiest_all = n.saturating_mul(single).min(routed).min(each).min(a);
        let busiest = 16 * busiest_all + n * (16 * 8 + 64);
        let mut moving = (8 * single.min(busiest_all)).max(log_moving(self.limit));
        // The shared limiter, and the store's under `central` and `lease`: a lease takes up
        // to its size of permits a request, each one the store's admission, so the store's
        // log fills with the limit however few requests come.
        let store = match fleet.coord {
            Coord::Central { .. } => rings(1, self.limit),
            Coord::Lease { size, .. } if log => {
                let permits = self.limit.min(self.most_decisions().saturating_mul(size));
                moving = moving.max(ring_moving(self.limit, permits));
                ring_bytes(self.limit, permits)
            }
            _ => 0,
        };
        // The gateways' own limiters decide only under `local` and `split`: a counted `sync`
        // view holds none, and under `central` and `lease` the store decides.
        let gateways = match fleet.coord {
            Coord::Local | Coord::Split => rings(n, limit),
            _ => 0,
        };
        let state = gateways + rings(1, self.limit) + store + n * 256 + 512;
        let mut sync = 0;
        if let Coord::Sync { every, delay } = fleet.coord {
            // Snapshots on their way: one per sync instant within a delay, and at most one
            // a decision; each a limiter's copy (never a log's: logs are counted) in a deque
            // that doubles.
            let snapshots = (delay / every.max(1) + 2)
                .min(self.horizon() / every.max(1) + 2)
                .min(self.most_decisions().saturating_add(2));
            // Each gateway's admissions since its snapshot (at most what one gateway can
            // admit in `every + delay`, by [`theory::fleet_worst`]'s reasoning), and for
            // sliding logs every admission in the window (with the clocks skewed, each
            // gateway's stamps over a window and the skew; counters' over two windows):
            // 8 bytes each in deques that double (16 an entry, and the half one grew from while
            // it moves), and every admission of the run at the most.
            let stale = single.saturating_mul(every.saturating_add(delay).div_ceil(self.window));
            let own = theory::sync_unseen(&one, self.limit, self.window, every, delay)
                .map_or(stale, |u| u.min(stale));
            let windows = 1
                + fleet.skew.div_ceil(self.window.max(1))
                + u64::from(spec.kind == LimiterKind::SlidingWindowCounter);
            // The clocks differ only with a skew and more than one gateway (the first reads
            // the backend's clock, the others spread up to the skew ahead).
            let skewed = fleet.skew > 0 && n > 1;
            let stamps = log
                || (matches!(
                    spec.kind,
                    LimiterKind::FixedWindow | LimiterKind::SlidingWindowCounter
                ) && skewed);
            // Every admission is one gateway's: all of theirs together are no more than the
            // run's admissions in the span.
            let (recent, largest) = if skewed && stamps {
                // (A counter's are let go two windows on, a window's and a log's one.)
                let keep = match spec.kind {
                    LimiterKind::SlidingWindowCounter => self.window.saturating_mul(2),
                    _ => self.window,
                };
                self.skewed_stamps(&fleet, single, keep, a)
            } else if stamps {
                let span = self.window.saturating_mul(windows);
                let all = n
                    .saturating_mul(single)
                    .saturating_mul(windows)
                    .min(self.most_in(span))
                    .min(a);
                (all, all)
            } else {
                (0, 0)
            };
            // Skewed views count their stamps alone, keeping nothing since the snapshot.
            let own = if skewed && stamps {
                0
            } else {
                n.saturating_mul(own)
                    .min(self.most_in(every.saturating_add(delay)))
                    .min(a)
            };
            moving = moving.max(8 * own.max(largest));
            sync = snapshots.saturating_mul(3 * 64 + 160) + 16 * (own + recent) + n * 64;
        }
        FleetMemory {
            gateways: n,
            state: state + busiest,
            sync,
            moving,
        }
    }

    /// A skewed `sync` fleet's stamps, all of its gateways' and the most of any one: gateway
    /// `h`, `o_h` ahead, keeps each stamp for `o_h` and `keep` past its admission (until no
    /// clock can count it again), so its deque holds its admissions of that span: at most
    /// its limiter's worst window in each window of it, and its share of the span's
    /// arrivals ([`Scenario::routed`]); all of them together, no more than the run's `a`.
    #[cfg(feature = "fleet")]
    fn skewed_stamps(&self, fleet: &FleetSpec, single: u64, keep: Micros, a: u64) -> (u64, u64) {
        let (mut all, mut largest) = (0u64, 0u64);
        for (h, o) in fleet.offsets().into_iter().enumerate() {
            let span = keep.saturating_add(o);
            let windows = span.div_ceil(self.window.max(1));
            let held =
                single
                    .saturating_mul(windows)
                    .min(Self::routed(fleet, h, self.most_in(span)));
            all = all.saturating_add(held);
            largest = largest.max(held);
        }
        (all.min(a), largest.min(a))
    }

    /// More of `arrivals` than the router sends gateway `h`: round-robin deals them out
    /// evenly (a share and one), a random or skewed route its share and eight standard
    /// deviations of a binomial count.
    #[cfg(feature = "fleet")]
    fn routed(fleet: &FleetSpec, h: usize, arrivals: u64) -> u64 {
        let n = u64::from(fleet.gateways.max(1));
        let share = match fleet.route {
            Route::RoundRobin => return arrivals.div_ceil(n).saturating_add(1),
            Route::Random => 1.0 / n as f64,
            Route::Skewed { .. } if n == 1 => 1.0,
            Route::Skewed { hot } if h == 0 => f64::from(hot) / 1e6,
            Route::Skewed { hot } => (1.0 - f64::from(hot) / 1e6) / (n - 1) as f64,
        };
        let mean = share * arrivals as f64;
        ((mean + 8.0 * mean.sqrt() + 64.0) as u64).min(arrivals)
    }

    /// Without fleets (the page's modules build the core without them), nothing.
    #[cfg(not(feature = "fleet"))]
    fn fleet_memory(&self, _: &LimiterSpec) -> FleetMemory {
        FleetMemory::default()
    }

    /// More first tries than one retrying client will send in any span of `span` µs: its
    /// spike and a Poisson count's mean plus eight standard deviations.
    fn first_tries_in(&self, span: Micros) -> u64 {
        let TrafficSpec::Retry { rate, spike, .. } = &self.traffic else {
            return 0;
        };
        let mean = rate.count as f64 * span.min(self.duration) as f64 / rate.per as f64;
        spike.saturating_add((mean + 8.0 * mean.sqrt() + 16.0) as u64)
    }

    /// The most retries a retrying client can have pending at once: each pending retry is a
    /// different request whose first try came at most `(tries − 1)` longest gaps before, so
    /// at most the first tries of that span (the whole run for a client that honours
    /// `Retry-After`).
    fn pending_retries(&self, group: &ClientGroup) -> u64 {
        let ClientGroup {
            tries,
            every,
            policy,
            ..
        } = group;
        if *tries <= 1 {
            return 0;
        }
        // The longest gap: `every`, the cap, or for a client honouring `Retry-After` any (the
        // span is then the whole run, past which no first try comes).
        let gap = match policy.backoff {
            _ if policy.honor => Micros::MAX,
            Backoff::Fixed => *every,
            Backoff::Exponential { cap, .. } => cap,
        };
        self.first_tries_in(u64::from(tries - 1).saturating_mul(gap))
    }

    fn validate_traffic(&self) -> Result<(), Error> {
        match &self.traffic {
            TrafficSpec::Flood { start, every, .. } => {
                if let FloodStart::Offset(s) = start {
                    if *s >= self.window {
                        return Err(Error::invalid(
                            "flood: start",
                            &format_duration(*s),
                            &format!(
                                "an offset into the window below {}, or worst",
                                format_duration(self.window)
                            ),
                        ));
                    }
                }
                if *every >= self.window {
                    return Err(Error::invalid(
                        "flood: every",
                        &format_duration(*every),
                        &format!(
                            "a gap shorter than the window ({})",
                            format_duration(self.window)
                        ),
                    ));
                }
            }
            TrafficSpec::BoundaryBurst { before, after, .. }
                if *before > self.window || *after >= self.window =>
            {
                return Err(Error::invalid(
                    "boundary-burst: before/after",
                    &format!("{}/{}", format_duration(*before), format_duration(*after)),
                    &format!(
                        "offsets within one window ({}) of the boundary",
                        format_duration(self.window)
                    ),
                ));
            }
            TrafficSpec::Retry { at, .. } if *at >= self.duration => {
                return Err(Error::invalid(
                    "retry: at",
                    &format_duration(*at),
                    &format!(
                        "a time before the end of the run ({}) for the spike, like at={} (when at= is not given it is 5min)",
                        format_duration(self.duration),
                        format_duration(self.duration / 2)
                    ),
                ));
            }
            TrafficSpec::Replay(r) => {
                if r.times.is_empty() {
                    return Err(Error::invalid(
                        "replay: file",
                        &r.file,
                        "a file with at least one timestamp",
                    ));
                }
                if r.times.len() > MAX_REPLAY {
                    return Err(Error::TooLarge {
                        what: "the replay".into(),
                        detail: format!(
                            "{} timestamps; the most is {MAX_REPLAY} (8 bytes each, 16 while read, within 512 MB)",
                            r.times.len()
                        ),
                    });
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// The average arrival rate of shaped traffic, per µs.
    fn rate_per_us(&self, load: f64) -> f64 {
        load * self.limit as f64 / self.window as f64
    }

    /// An upper estimate of the decisions the whole scenario makes (every run, every
    /// limiter), the number the decision cap is checked against.
    pub fn expected_decisions(&self) -> f64 {
        let mut per_arrival = 1.0;
        if self.traffic.closed_loop() {
            // Every try rejected, at worst; a client honouring `Retry-After` asks after each
            // rejection, which the counters answer by search (up to 2 × 53 trial decisions).
            // Over a mix, the groups' tries weighted by their clients.
            let searched = self.limiters.iter().any(|l| {
                matches!(
                    l.kind,
                    LimiterKind::SlidingWindowCounter | LimiterKind::Haproxy
                )
            });
            let all = self.traffic.client_count() as f64;
            per_arrival = (self.traffic.client_groups())
                .map(|g| {
                    let searches = if g.policy.honor && searched {
                        107.0
                    } else {
                        1.0
                    };
                    f64::from(g.tries) * searches * f64::from(g.clients) / all
                })
                .sum();
        }
        self.expected_arrivals() * f64::from(self.runs) * self.limiters.len() as f64 * per_arrival
    }

    /// How many arrivals (first tries, every client's) one run has, on average.
    pub fn expected_arrivals(&self) -> f64 {
        match &self.traffic {
            TrafficSpec::Steady { load }
            | TrafficSpec::Groups { load, .. }
            | TrafficSpec::OnOff { load, .. } => self.rate_per_us(*load) * self.duration as f64,
            TrafficSpec::Flood { every, .. } => (self.flood_length() / every) as f64,
            TrafficSpec::BoundaryBurst { .. } => {
                let [first, second] = self.ticks();
                first as f64 + second as f64
            }
            TrafficSpec::Retry { rate, spike, .. } => {
                (rate.count as f64 * self.duration as f64 / rate.per as f64 + *spike as f64)
                    * self.traffic.client_count() as f64
            }
            TrafficSpec::Replay(r) => r.times.len() as f64,
        }
    }

    fn flood_length(&self) -> Micros {
        match self.traffic {
            TrafficSpec::Flood { length, .. } => length.unwrap_or(3 * self.window),
            _ => 0,
        }
    }

    /// The latest time any arrival of a run can have. For a scenario that
    /// [`Scenario::validate`] accepted, this is at most [`MAX_TIME`]; for any other it is
    /// `Micros::MAX` where the sum would overflow.
    pub fn horizon(&self) -> Micros {
        self.checked_horizon().unwrap_or(Micros::MAX)
    }

    /// [`Scenario::horizon`], or `None` where computing it overflows 64 bits.
    pub fn checked_horizon(&self) -> Option<Micros> {
        match &self.traffic {
            TrafficSpec::Flood { .. } => {
                self.window.checked_mul(2)?.checked_add(self.flood_length())
            }
            TrafficSpec::BoundaryBurst { after, .. } => {
                self.window.checked_add(*after)?.checked_add(1)
            }
            TrafficSpec::Replay(r) => {
                let first = r.times.first().copied().unwrap_or(0);
                let last = r.times.last().copied().unwrap_or(0);
                last.checked_sub(first - first % self.window)?
                    .checked_add(1)
            }
            // (A retry honouring `Retry-After` past 2^53 µs is not made: the client gives up.)
            // Over a mix, the latest group's.
            TrafficSpec::Retry { .. } => {
                let mut latest = self.duration;
                for g in self.traffic.client_groups() {
                    latest = latest.max(Self::retries_end(&g)?.checked_add(self.duration)?);
                }
                Some(latest)
            }
            _ => Some(self.duration),
        }
    }

    /// The most retries one request of `group` makes in any second: as many as its shortest
    /// possible gap fits (a jitter that can wait nothing, or a `Retry-After` that can come a
    /// µs later, fits all of them), and never more than its retries.
    fn retries_in_a_second(group: &ClientGroup) -> u64 {
        let retries = u64::from(group.tries.saturating_sub(1));
        let gap = match group.policy.backoff {
            Backoff::Fixed => group.every,
            Backoff::Exponential { base, .. } => base,
        };
        let shortest = match group.policy.jitter {
            _ if group.policy.honor => 0,
            Jitter::None | Jitter::Decorrelated => gap,
            Jitter::Equal => gap / 2,
            Jitter::Full => 0,
        };
        match shortest {
            0 => retries,
            d => retries.min(SECOND / d + 1),
        }
    }

    /// How long after its first try a request of `group` can have its last retry, when the
    /// policy times them (`None` where that overflows 64 bits).
    fn retries_end(group: &ClientGroup) -> Option<Micros> {
        u64::from(group.tries.saturating_sub(1)).checked_mul(match group.policy.backoff {
            Backoff::Fixed => group.every,
            Backoff::Exponential { cap, .. } => cap,
        })
    }

    /// Refuses a scenario whose times would reach past [`MAX_TIME`]: a flood's end, a retry's
    /// last try, a replay's span. Checked before anything runs, so no time is ever computed
    /// with wrapped arithmetic.
    fn validate_horizon(&self) -> Result<(), Error> {
        match self.checked_horizon() {
            Some(h) if h <= MAX_TIME => Ok(()),
            _ => {
                let (what, shown, accepted) = match &self.traffic {
                    TrafficSpec::Flood { length, .. } => (
                        "flood: for",
                        length.map_or_else(String::new, format_duration),
                        "a flood that ends within 285 years (2^53 µs)",
                    ),
                    TrafficSpec::Retry { .. } => {
                        // The first group whose retries reach past it.
                        let mut groups = self.traffic.client_groups();
                        let first = self.traffic.client_groups().next();
                        let Some(g) = groups
                            .find(|g| {
                                Self::retries_end(g)
                                    .and_then(|e| e.checked_add(self.duration))
                                    .is_none_or(|h| h > MAX_TIME)
                            })
                            .or(first)
                        else {
                            return Err(Error::invalid(
                                "traffic",
                                self.traffic.name(),
                                "traffic whose times span at most 285 years (2^53 µs)",
                            ));
                        };
                        let (tries, every) = (g.tries, g.every);
                        match g.policy.backoff {
                            Backoff::Fixed => (
                                "retry: tries × every",
                                format!("{tries} × {}", format_duration(every)),
                                "retries that end within 285 years (2^53 µs) of the start",
                            ),
                            Backoff::Exponential { cap, .. } => (
                                "retry: tries × cap",
                                format!("{tries} × {}", format_duration(cap)),
                                "retries that end within 285 years (2^53 µs) of the start",
                            ),
                        }
                    }
                    _ => (
                        "traffic",
                        self.traffic.name().to_owned(),
                        "traffic whose times span at most 285 years (2^53 µs)",
                    ),
                };
                Err(Error::invalid(what, &shown, accepted))
            }
        }
    }

    /// The arrival stream of run `run` (open-loop traffic; a retrying client's first tries).
    pub fn arrivals(&self, run: u32) -> Arrivals {
        self.arrivals_from(Rng::new(self.seed, u64::from(run), Stream::Arrivals))
    }

    /// The arrival stream drawn from `rng`.
    fn arrivals_from(&self, rng: Rng) -> Arrivals {
        match &self.traffic {
            TrafficSpec::Steady { load } => {
                Arrivals::Poisson(Poisson::new(rng, self.rate_per_us(*load), 0, self.duration))
            }
            TrafficSpec::Groups { shape, load } => Arrivals::Groups(Groups::new(
                rng,
                *shape,
                self.rate_per_us(*load),
                self.duration,
            )),
            TrafficSpec::OnOff { load, active, busy } => Arrivals::OnOff(OnOff::new(
                rng,
                self.rate_per_us(*load),
                self.duration,
                *active,
                *busy,
            )),
            TrafficSpec::Flood { start, every, .. } => {
                let first =
                    self.window + Arrivals::flood_offset(*start, self.limit, self.window, *every);
                Arrivals::grid(first, *every, first + self.flood_length())
            }
            TrafficSpec::BoundaryBurst { before, after, .. } => Arrivals::Bursts {
                at: [self.window - before, self.window + after],
                counts: self.ticks(),
                sent: 0,
            },
            TrafficSpec::Retry { rate, .. } => Arrivals::Poisson(Poisson::new(
                rng,
                rate.count as f64 / rate.per as f64,
                0,
                self.duration,
            )),
            TrafficSpec::Replay(r) => Arrivals::replay(r.times.clone(), self.window),
        }
    }

    /// Builds the limiter `spec` describes, for run `run`, checking it against the scenario.
    pub fn build_limiter(&self, spec: &LimiterSpec, run: u32) -> Result<Limiter, Error> {
        #[cfg(feature = "fleet")]
        if let Some(fleet) = &spec.fleet {
            return self.build_fleet(spec, fleet, run);
        }
        let mut parts = self.build_parts(spec)?;
        if parts.len() == 1 {
            return Ok(parts.remove(0));
        }
        Ok(Limiter::Split(Split::new(
            parts,
            Rng::new(self.seed, u64::from(run), Stream::Routing),
        )))
    }

    /// A fleet of gateways enforcing `spec` (see [`Fleet`]).
    #[cfg(feature = "fleet")]
    fn build_fleet(
        &self,
        spec: &LimiterSpec,
        fleet: &FleetSpec,
        run: u32,
    ) -> Result<Limiter, Error> {
        let name = spec.kind.name();
        let refuse = |why: &str| {
            Err(Error::invalid(
                &format!("{name} with --gateways"),
                &spec.text,
                why,
            ))
        };
        if spec.servers > 1 {
            return refuse("servers=1 (a fleet splits the limit itself: --coord split)");
        }
        if spec.record_rejects {
            return refuse("record-rejects=false (a fleet shares its admissions only)");
        }
        if fleet.skew > 0
            && matches!(fleet.coord, Coord::Sync { .. })
            && !matches!(
                spec.kind,
                LimiterKind::SlidingLog
                    | LimiterKind::FixedWindow
                    | LimiterKind::SlidingWindowCounter
            )
        {
            return refuse("a sliding log, a fixed window or a sliding-window counter for --coord sync with a skew (each admission is a stamp the gateways count by their own clocks; a snapshot of any other limiter holds no stamps to count)");
        }
        if spec.queues() {
            return refuse("a limiter that answers at once (a meter, or nginx with nodelay)");
        }
        let mut one = spec.clone();
        one.fleet = None;
        if one.kind == LimiterKind::TokenBucket {
            // The same decisions; GCRA keeps the debt that others' admissions run up.
            one.kind = LimiterKind::Gcra;
        }
        let shared = self.build_parts(&one)?.remove(0);
        let n = fleet.gateways as usize;
        let gateways = if fleet.coord == Coord::Split {
            let k = u64::from(fleet.gateways);
            let burst = one.burst_or(self.limit);
            if self.limit % k != 0 || burst % k != 0 {
                return Err(Error::invalid(
                    "--gateways with --coord split",
                    &k.to_string(),
                    &match one.burst {
                        Some(_) => format!(
                            "a number of gateways that divides the limit {} and the burst {burst} (each gateway gets 1/N of both)",
                            self.limit
                        ),
                        None => format!(
                            "a number of gateways that divides the limit {} (each gateway gets L/N)",
                            self.limit
                        ),
                    },
                ));
            }
            one.servers = fleet.gateways;
            self.build_parts(&one)?
        } else {
            vec![shared.clone(); n]
        };
        Ok(Limiter::Fleet(Box::new(
            Fleet::new(
                gateways,
                shared,
                fleet.coord,
                fleet.route,
                Rng::new(self.seed, u64::from(run), Stream::Routing),
                self.window,
            )
            .with_skew(fleet.offsets()),
        )))
    }

    /// The limiters of `spec`: one, or one per server of a split limit (each with `1/K` of
    /// the limit, the burst and the rate).
    fn build_parts(&self, spec: &LimiterSpec) -> Result<Vec<Limiter>, Error> {
        let k = u64::from(spec.servers);
        let name = spec.kind.name();
        if self.limit % k != 0 {
            return Err(Error::invalid(
                &format!("{name}: servers"),
                &k.to_string(),
                &format!(
                    "a number of servers that divides the limit {} (each server gets L/K)",
                    self.limit
                ),
            ));
        }
        let rate = match spec.kind {
            LimiterKind::Nginx => spec.nginx_rate(self.limit, self.window)?,
            _ => spec.rate.unwrap_or(Rate {
                count: self.limit,
                per: self.window,
            }),
        };
        let burst = spec.burst_or(self.limit);
        let period = match spec.kind {
            LimiterKind::Haproxy => spec.haproxy_period(self.window)?,
            _ => self.window,
        };
        if burst % k != 0 {
            return Err(Error::invalid(
                &format!("{name}: burst"),
                &burst.to_string(),
                &format!("a burst that {k} servers can share evenly (a multiple of {k})"),
            ));
        }
        if spec.kind.has_bucket() {
            // Buckets keep time scaled by the rate's count; keep that within 64 bits.
            let capacity = (burst + 1).checked_mul(rate.per);
            // A gateway whose clock is ahead (`skew`) reads up to that much past the run (the
            // scenario's largest: a fleet's parts are built without their fleet).
            #[cfg(feature = "fleet")]
            let ahead = self
                .limiters
                .iter()
                .filter_map(|l| l.fleet.map(|f| f.skew))
                .max()
                .unwrap_or(0);
            #[cfg(not(feature = "fleet"))]
            let ahead = 0;
            let scaled_time = self
                .horizon()
                .saturating_add(ahead)
                .checked_mul(rate.count)
                .zip(capacity)
                .and_then(|(a, b)| a.checked_add(b));
            if scaled_time.is_none() || rate.per.checked_mul(k).is_none() {
                return Err(Error::invalid(
                    &format!("{name}: rate"),
                    &format!("{}/{}", rate.count, format_duration(rate.per)),
                    "a rate whose count times the run length (in µs) stays below 1.8e19",
                ));
            }
        }
        let one = |limit: u64, burst: u64, rate: Rate| -> Limiter {
            match spec.kind {
                LimiterKind::FixedWindow => {
                    Limiter::FixedWindow(FixedWindow::new(limit, self.window, spec.record_rejects))
                }
                LimiterKind::SlidingLog => {
                    Limiter::SlidingLog(SlidingLog::new(limit, self.window, spec.record_rejects))
                }
                LimiterKind::SlidingWindowCounter => Limiter::SlidingWindowCounter(
                    SlidingWindowCounter::new(limit, self.window, spec.record_rejects),
                ),
                LimiterKind::TokenBucket => Limiter::TokenBucket(TokenBucket::new(burst, rate)),
                LimiterKind::Gcra => Limiter::Gcra(Gcra::new(burst, rate)),
                LimiterKind::LeakyBucket => {
                    Limiter::LeakyBucket(LeakyBucket::new(burst, rate, spec.mode))
                }
                LimiterKind::Nginx => Limiter::Nginx(Nginx::new(
                    rate,
                    burst,
                    (spec.mode == LeakyMode::Queue).then_some(spec.delay),
                )),
                LimiterKind::Haproxy => Limiter::Haproxy(Haproxy::new(
                    spec.limit.unwrap_or(limit),
                    period,
                    spec.record_rejects,
                )),
            }
        };
        if k == 1 {
            return Ok(vec![one(self.limit, burst, rate)]);
        }
        let per_server = Rate {
            count: rate.count,
            per: rate.per * k,
        };
        Ok((0..k)
            .map(|_| one(self.limit / k, burst / k, per_server))
            .collect())
    }
}

/// The bytes one run's results take until the report is made ([`RunStats`] in a list).
const RESULT_BYTES: u64 = 128;
/// The most a delay histogram takes (every bucket, in a list that doubles).
const HISTOGRAM_BYTES: u64 = 2 * 58 * 1024;
/// The process itself: code, stacks, buffers, the report.
const BASE_BYTES: u64 = 8 << 20;

/// The most on/off periods the memory estimate lays out for a scenario's runs (a few ms);
/// past that it takes the traffic as active all the time.
pub const ON_OFF_PERIODS: u64 = 200_000;

/// What every run holds whatever its traffic: the chunk of arrivals it decides at a time
/// (8 bytes each) and its small parts (stats, the limiter's box): 11 KB measured for a run
/// of one limiter, its auditor's first 2 KB included.
const RUN_BYTES: u64 = 8 * CHUNK as u64 + 2048;

/// An upper bound on what a simulation keeps, from [`Scenario::memory`]. Nothing in it grows
/// with the arrivals of a window or the requests of a run: per limiter, what its worst window
/// can admit; per run, a retrying client's pending retries or a boundary burst's times; for
/// the whole scenario, replayed times (shared by every run) and a few numbers per run and
/// limiter for the report.
#[derive(Debug, Clone, PartialEq)]
pub struct Memory {
    /// Each limiter of a run.
    pub lanes: Vec<LaneMemory>,
    /// A run's traffic: the chunk of arrivals it decides at a time, a group's laid-out
    /// requests, retrying clients' pending retries and tries.
    pub traffic: u64,
    /// How many retries a retrying client may have pending at once.
    pub retries: u64,
    /// How many retrying clients a run has (every group's).
    pub clients: u64,
    /// The bytes of every client's pending retries.
    pub pending: u64,
    /// The most tries in any second, every client's.
    pub in_a_second: u64,
    /// The bytes of the tries of the trailing second each lane keeps for its peak.
    pub busiest_second: u64,
    /// Replayed times, shared by every run.
    pub replay: u64,
    /// The per-run results kept for the report.
    pub results: u64,
}

/// What one limiter of a run keeps, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaneMemory {
    /// The admissions its auditor keeps: `max(L, its worst window)`, and no more than the
    /// run's admissions.
    pub kept: u64,
    /// Its auditor: 16 bytes per admission kept (8 each, in a buffer up to twice that), a chunk.
    pub audit: u64,
    /// The limiter's own state (a sliding log's times; a queue's departures and delays; a
    /// fleet's parts, `fleet`, included).
    pub own: u64,
    /// A fleet's part of `own` (all 0 for a single limiter).
    pub fleet: FleetMemory,
    /// The most any one of its buffers holds beside itself while it grows (the old buffer
    /// while it moves into the new): counted once a run, as only one grows at a time.
    pub moving: u64,
    /// What to change to need less, for a message: the part that takes the most.
    pub advice: &'static str,
}

/// What a fleet of gateways keeps beside its fleet-wide auditor, by the part a user would
/// change to shrink it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FleetMemory {
    /// How many gateways.
    pub gateways: u64,
    /// Every gateway's limiter and busiest-window ring, the shared limiter and the store's.
    pub state: u64,
    /// `sync`: the snapshots on their way and each gateway's admissions since its snapshot.
    pub sync: u64,
    /// The most any one of its buffers holds beside itself while it grows (the half it grew
    /// from): counted once a run, as only one grows at a time.
    pub moving: u64,
}

impl FleetMemory {
    /// All of it.
    pub fn total(&self) -> u64 {
        self.state.saturating_add(self.sync)
    }
}

impl Memory {
    /// What one run keeps: its limiters (one of their buffers possibly growing, the old
    /// beside the new) and its traffic.
    pub fn per_run(&self) -> u64 {
        let lanes: u64 = self.lanes.iter().map(|l| l.audit + l.own).sum();
        lanes + self.growing() + self.traffic
    }

    /// The most a run holds beside its buffers while one of them grows.
    pub fn growing(&self) -> u64 {
        self.lanes.iter().map(|l| l.moving).max().unwrap_or(0)
    }

    /// The whole simulation with `concurrent` runs at once.
    pub fn total(&self, concurrent: u64) -> u64 {
        BASE_BYTES + self.replay + self.results + concurrent * self.per_run()
    }

    /// How many runs can be simulated at once within [`MEMORY_BUDGET`] (0 if not even one).
    pub fn concurrent_runs(&self) -> u64 {
        let fixed = BASE_BYTES + self.replay + self.results;
        MEMORY_BUDGET.saturating_sub(fixed) / self.per_run().max(1)
    }

    /// Refuses a simulation of `concurrent` runs at once that would need more than
    /// [`MEMORY_BUDGET`], in one line saying what takes the memory and what would fit.
    pub fn check(&self, concurrent: u64) -> Result<(), Error> {
        let total = self.total(concurrent);
        if total <= MEMORY_BUDGET {
            return Ok(());
        }
        let budget = format_bytes(MEMORY_BUDGET);
        let lanes: u64 = self.lanes.iter().map(|l| l.audit + l.own).sum();
        let parts = [
            (self.results, 0),
            (self.traffic, 1),
            (lanes * concurrent, 2),
        ];
        let (_, largest) = parts.iter().copied().max().unwrap_or((0, 2));
        let detail = match largest {
            0 => format!(
                "about {} (the report keeps {RESULT_BYTES} bytes per run and limiter, {} × {}); the most is {budget}: use fewer runs",
                format_bytes(total),
                self.results / RESULT_BYTES / (self.lanes.len() as u64).max(1),
                self.lanes.len()
            ),
            1 if self.retries > 0 => format!(
                "about {}: {} for the retrying clients ({} in pending retries: {} up to {} at up to 192 bytes; {} in the tries of the busiest second, up to {} at 16 bytes; the rest their histograms and the run's buffers), {} for the limiters' state, {} for the process; the most is {budget}: use fewer clients, a smaller spike, fewer tries or a longer gap between them",
                format_bytes(total),
                format_bytes(self.traffic * concurrent),
                format_bytes(self.pending * concurrent),
                if self.clients == 1 { "one client,".to_owned() } else { format!("{} clients, each", self.clients) },
                self.retries,
                format_bytes(self.busiest_second * concurrent),
                self.in_a_second,
                format_bytes((lanes + self.growing()) * concurrent),
                format_bytes(BASE_BYTES + self.replay + self.results),
            ),
            1 => format!(
                "about {}: {} for the traffic (the requests of a group's span, at 24 bytes), {} for the limiters' state, {} for the process; the most is {budget}: use a smaller limit or a lower load",
                format_bytes(total),
                format_bytes(self.traffic * concurrent),
                format_bytes((lanes + self.growing()) * concurrent),
                format_bytes(BASE_BYTES + self.replay + self.results),
            ),
            _ => {
                let n = self.lanes.len() as u64;
                // The lane that takes the most, and the part of it a user would change.
                let Some(big) = self.lanes.iter().max_by_key(|l| l.audit + l.own) else {
                    return Err(Error::TooLarge {
                        what: "the scenario".into(),
                        detail: format!("about {}; the most is {budget}", format_bytes(total)),
                    });
                };
                let limiters = if n == 1 {
                    "one limiter".to_owned()
                } else {
                    format!("{n} limiters")
                };
                let fleet = &big.fleet;
                let mut parts = format!(
                    "{} in its auditor, up to {} admissions at 16 bytes; {} of its own state",
                    format_bytes(big.audit),
                    big.kept,
                    format_bytes(big.own - fleet.total())
                );
                if fleet.gateways > 0 {
                    parts.push_str(&format!(
                        "; {} across its {} gateways' limiters and windows; {} in sync snapshots and views",
                        format_bytes(fleet.state),
                        fleet.gateways,
                        format_bytes(fleet.sync)
                    ));
                }
                let each = if n == 1 {
                    String::new()
                } else {
                    format!(", the largest of them {}", format_bytes(big.audit + big.own))
                };
                // How many lanes of the largest's size fit beside everything else.
                let lanes_now = lanes * concurrent;
                let room = MEMORY_BUDGET.saturating_sub(total - lanes_now)
                    / (big.audit + big.own).max(1)
                    / concurrent.max(1);
                let fewer = if n > 1 && room > 0 && room < n {
                    format!("at most {room} such limiters, or ")
                } else {
                    String::new()
                };
                // The rest of the total, so that the parts add up to it.
                let growing = self.growing() * concurrent;
                let mut rest = format!(
                    "{} while a buffer grows, {} for the process",
                    format_bytes(growing),
                    format_bytes(BASE_BYTES)
                );
                for (bytes, what) in [
                    (self.traffic * concurrent, "the traffic"),
                    (self.replay, "replayed times"),
                    (self.results, "the report"),
                ] {
                    if bytes > 0 {
                        rest.push_str(&format!(", {} for {what}", format_bytes(bytes)));
                    }
                }
                format!(
                    "about {}: {} for {limiters}{each} ({parts}), {rest}; the most is {budget}: use {fewer}{}",
                    format_bytes(total),
                    format_bytes(lanes_now),
                    big.advice
                )
            }
        };
        Err(Error::TooLarge {
            what: "the scenario".into(),
            detail,
        })
    }
}

/// Whether `spec` is enforced by a fleet of gateways (never without the `fleet` feature).
fn in_fleet(spec: &LimiterSpec) -> bool {
    #[cfg(feature = "fleet")]
    {
        spec.fleet.is_some()
    }
    #[cfg(not(feature = "fleet"))]
    {
        let _ = spec;
        false
    }
}

/// A sliding log's ring of `limit` slots holding `entries`: it doubles from 8 slots up to
/// `limit`, so it holds at most two slots an entry, and never more than `limit`.
fn ring_bytes(limit: u64, entries: u64) -> u64 {
    8 * entries.saturating_mul(2).max(8).min(limit)
}

/// What the same ring holds beside itself while it grows: the old buffer, full, of at most
/// `entries` and `limit` slots.
fn ring_moving(limit: u64, entries: u64) -> u64 {
    8 * entries.min(limit)
}

/// Bytes for people: `3.1 GB`, `512 MB`, `40 KB` (powers of 1024).
pub fn format_bytes(bytes: u64) -> String {
    let units = ["bytes", "KB", "MB", "GB", "TB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < units.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} bytes")
    } else if value < 10.0 && value.fract() != 0.0 {
        format!("{} {}", fixed(value, 1), units[unit])
    } else {
        format!("{} {}", fixed(value, 0), units[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_count_is_its_leading_digits_and_a_power_of_ten() {
        assert_eq!(about(999_999.0), "999999");
        assert_eq!(about(1e10), "1.00 × 10^10");
        assert_eq!(about(23_456_789_012.0), "2.34 × 10^10");
        assert_eq!(about(2f64.powi(60)), "1.15 × 10^18");
        assert_eq!(about(1e19), "over 10^19");
        assert_eq!(about(f64::INFINITY), "over 10^19");
        assert_eq!(about(f64::NAN), "over 10^19");
    }

    fn scenario() -> Scenario {
        Scenario {
            limiters: vec![LimiterSpec::parse("sliding-log").expect("a limiter")],
            ..Scenario::default()
        }
    }

    fn message(s: &Scenario) -> String {
        s.validate().expect_err("invalid").to_string()
    }

    #[test]
    fn a_valid_scenario_passes_and_each_bad_range_is_named_with_what_is_accepted() {
        assert_eq!(scenario().validate(), Ok(()));
        let limit = message(&Scenario {
            limit: 0,
            ..scenario()
        });
        assert!(limit.contains("limit"), "{limit}");
        assert!(
            limit.contains("a whole number from 1 to 1000000"),
            "{limit}"
        );
        let window = message(&Scenario {
            window: 2 * 24 * 60 * MINUTE,
            ..scenario()
        });
        assert!(window.contains("window"), "{window}");
        assert!(window.contains("a duration from 1ms to 24h"), "{window}");
        let runs = message(&Scenario {
            runs: 0,
            ..scenario()
        });
        assert!(runs.contains("runs"), "{runs}");
        assert!(runs.contains("a whole number from 1 to 100000"), "{runs}");
        let minutes = message(&Scenario {
            duration: 100_001 * MINUTE,
            ..scenario()
        });
        assert!(minutes.contains("from 1 to 100000 minutes"), "{minutes}");
    }

    #[test]
    fn a_scenario_without_limiters_asks_for_one() {
        let none = message(&Scenario::default());
        assert!(none.contains("at least one limiter"), "{none}");
        assert!(none.contains("--limiter sliding-log"), "{none}");
    }

    #[test]
    fn a_boundary_burst_sends_its_ticks_requests() {
        // The essay's rejected row: 60 before the boundary, 120 after, at L = 60.
        let s = Scenario {
            traffic: TrafficSpec::parse("boundary-burst:first=60,second=120").expect("valid"),
            limit: 60,
            ..Scenario::default()
        };
        let times: Vec<Micros> = s.arrivals(0).collect();
        assert_eq!(times.len(), 180);
        assert!(times[..60].iter().all(|&t| t == s.window - 500_000));
        assert!(times[60..].iter().all(|&t| t == s.window + 500_000));
        let plain = Scenario {
            traffic: TrafficSpec::parse("boundary-burst").expect("valid"),
            limit: 7,
            ..Scenario::default()
        };
        assert_eq!(plain.arrivals(0).count(), 14, "the limit at each tick");
    }

    #[test]
    fn only_retrying_traffic_has_a_retry_client() {
        assert!(scenario().retry_client(0).is_none());
        let retry = Scenario {
            traffic: TrafficSpec::parse("retry").expect("retry traffic"),
            ..scenario()
        };
        let mut client = retry.retry_client(0).expect("a client");
        let tr = client.next().expect("a first try");
        let (t, attempt) = (tr.at, tr.attempt);
        assert_eq!(attempt, 1);
        assert_eq!(Some(t), retry.arrivals(0).next().min(Some(t)));
    }
}
