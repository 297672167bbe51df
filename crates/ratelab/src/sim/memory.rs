//! What a simulation keeps, bounded before it runs: [`Scenario::memory`] and the parts it
//! adds up (each limiter's auditor and state, a fleet's gateways and sync views, the traffic,
//! the report), each bounded twice, by what its windows can hold and by the run's own
//! admissions, and checked against [`MEMORY_BUDGET`] before anything is allocated. The
//! book's memory chapter (`docs/src/memory.md`) says what each part grows with;
//! `tests/memory_peak.rs` holds the estimate to the allocator's count.

use super::bounds::in_fleet;
use super::scenario::{Scenario, CHUNK, MEMORY_BUDGET};
use crate::decimal::fixed;
use crate::error::Error;
use crate::limiter::Rate;
#[cfg(feature = "fleet")]
use crate::limiter::{Coord, Outage, Route};
#[cfg(feature = "fleet")]
use crate::spec::FleetSpec;
use crate::spec::{LimiterKind, LimiterSpec, TrafficSpec};
#[cfg(feature = "fleet")]
use crate::theory;
use crate::time::{Micros, MINUTE, SECOND};

impl Scenario {
    /// An upper bound on the memory a simulation of this scenario needs, by part; see
    /// [`Memory`]. The scenario must have passed the range checks of [`Scenario::validate`].
    pub fn memory(&self) -> Memory {
        let taken = self.memory_as_laid_out(false);
        // On/off traffic's periods are laid out only where the estimate as if always active
        // is worth refining (see `Scenario::on_off_laid_out`).
        if matches!(self.traffic, TrafficSpec::OnOff { .. }) && taken.per_run() > LAY_OUT_PAST {
            return self.memory_as_laid_out(true);
        }
        taken
    }

    /// [`Scenario::memory`], with on/off periods laid out or not.
    fn memory_as_laid_out(&self, laid_out: bool) -> Memory {
        let _layout = super::bounds::LayOut::set(laid_out);
        let lanes: Vec<LaneMemory> = self
            .limiters
            .iter()
            .map(|spec| self.lane_memory(spec))
            .collect();
        // A retrying fleet's parts, for a message.
        let (mut pending, mut in_a_second, mut busiest_second) = (0u64, 0u64, 0u64);
        let traffic = match &self.traffic {
            // Grouped traffic lays each group out when it starts: the requests of a group's
            // span not yet sent, in a list (beside a merge's scratch list of as many, while a
            // group overlaps a few) or, while groups overlap deeply, a heap that doubles (32
            // bytes each while it grows).
            TrafficSpec::Groups { shape, .. } => 32 * self.most_in(shape.span()),
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

    /// The most the sliding logs of a limiter like `spec` hold together, if it keeps them:
    /// the scenario's limit for `sliding-log` (split, each server logs its share), limits'
    /// own for its moving window (split, each server keeps its own whole).
    fn log_limit(&self, spec: &LimiterSpec) -> Option<u64> {
        match spec.kind {
            LimiterKind::SlidingLog => Some(self.limit),
            LimiterKind::Limits
                if spec.strategy == Some(crate::limiter::LimitsStrategy::MovingWindow) =>
            {
                Some(
                    spec.limit
                        .map_or(self.limit, |l| l.saturating_mul(u64::from(spec.servers))),
                )
            }
            _ => None,
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
        let log = self.log_limit(spec).filter(|_| !in_fleet(spec));
        let own = log.map_or(0, |l| ring_bytes(l, logged)) + 64 * k;
        let own_moving = log.map_or(0, |l| ring_moving(l, logged));
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
        let log_limit = self.log_limit(spec);
        let log = log_limit.is_some();
        // The log's limit: the scenario's, or a library's own (limits' moving window).
        let whole = log_limit.unwrap_or(self.limit);
        // Each gateway's limit: a split's is its share (a library's own limit stays whole).
        let limit = match fleet.coord {
            Coord::Split if spec.limit.is_none() => whole.div_ceil(n),
            _ => whole,
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
        let mut moving = (8 * single.min(busiest_all)).max(log_moving(whole));
        // The shared limiter, and the store's under `central` and `lease`: a lease takes up
        // to its size of permits a request, each one the store's admission, so the store's
        // log fills with the limit however few requests come.
        let store = match fleet.coord {
            Coord::Central { .. } => rings(1, whole),
            Coord::Lease { size, .. } if log => {
                let permits = whole.min(self.most_decisions().saturating_mul(size));
                moving = moving.max(ring_moving(whole, permits));
                ring_bytes(whole, permits)
            }
            _ => 0,
        };
        // The gateways' own limiters decide only under `local` and `split`: a counted `sync`
        // view holds none, and under `central` and `lease` the store decides.
        let gateways = match fleet.coord {
            Coord::Local | Coord::Split => rings(n, limit),
            _ => 0,
        };
        let state = gateways + rings(1, whole) + store + n * 256 + 512;
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
            // Skewed views: where each gateway's count last found its three edges in each
            // gateway's stamps (24 bytes a pair), and each gateway's count of stamps let go.
            let hints = if skewed && stamps {
                24 * n * n + 8 * n
            } else {
                0
            };
            sync = snapshots.saturating_mul(3 * 64 + 160) + 16 * (own + recent) + n * 64 + hints;
            // limits' moving window is a log no view counts: each snapshot on its way and the
            // spare one are copies of the shared limiter, its ring with it (8 bytes an entry,
            // every admission up to its limit), and each gateway's view is copied over from
            // one, then grows by its own admissions (a ring that doubles, up to its limit).
            if log && spec.kind == LimiterKind::Limits {
                let entries = whole.min(a).max(8);
                let view = whole.max(8).min(entries.saturating_mul(2));
                sync = sync
                    .saturating_add(8 * entries.saturating_mul(snapshots.saturating_add(1)))
                    .saturating_add(8 * view.saturating_mul(n));
            }
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

    /// Without fleets (the page's modules build the core without them), nothing.
    #[cfg(not(feature = "fleet"))]
    fn fleet_memory(&self, _: &LimiterSpec) -> FleetMemory {
        FleetMemory::default()
    }
}

/// The bytes one run's results take until the report is made ([`super::RunStats`] in a list).
const RESULT_BYTES: u64 = 128;
/// The most a delay histogram takes (every bucket, in a list that doubles).
const HISTOGRAM_BYTES: u64 = 2 * 58 * 1024;
/// The process itself: code, stacks, buffers, the report.
const BASE_BYTES: u64 = 8 << 20;

/// What every run holds whatever its traffic: the chunk of arrivals it decides at a time
/// (8 bytes each) and its small parts (stats, the limiter's box): 11 KB measured for a run
/// of one limiter, its auditor's first 2 KB included.
const RUN_BYTES: u64 = 8 * CHUNK as u64 + 2048;

/// A run's estimate past which on/off traffic's periods are laid out to refine it (where the
/// test holds the estimate within 4× of the peak).
const LAY_OUT_PAST: u64 = 4 << 20;

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
