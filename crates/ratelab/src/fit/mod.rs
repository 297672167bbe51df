//! `ratelab fit`: which limiter, with which settings, decides an access log's requests as the
//! server did.
//!
//! Every limiter ratelab models is tried on a grid of windows, periods and rates, its limit or
//! burst searched. The search uses what the log says: replayed with the log's own decisions
//! forced in (an admission recorded, a rejection left as the limiter leaves it), a limiter
//! decides each request from the same history whatever its limit, and a larger limit or burst
//! only ever admits more. So an admission the model refuses rules out that limit and every
//! smaller one, a rejection it admits that limit and every larger one: two binary searches
//! give the limits that decide every request as the log does. Those found on the first
//! requests are checked on the whole log; the fits are then run on their own, as a server
//! would, and ranked by the share of requests they decide as the log says.

mod grid;
mod log;
mod notes;

use grid::{grid, Point};
pub use log::{read_log, KeyBy, Log, LogOptions, Request, MOST_LINES};

use crate::limiter::{Decide, Limiter, Shared};
use crate::sim::Scenario;
use crate::spec::LimiterSpec;
use crate::theory;
use crate::time::{format_duration, Micros, MINUTE, MS, SECOND};
use serde::Serialize;
use std::borrow::Cow;

/// A request the fit decides otherwise than the log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Wrong {
    /// Its line in the log.
    pub line: u32,
    /// When, µs since the epoch (as placed within its second, for a log to the second).
    pub at_us: Micros,
    /// Whether the log says it was admitted.
    pub log_admitted: bool,
}

/// One limiter and its settings, and how well it explains the log.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fit {
    /// The limiter, as `ratelab simulate --limiter` takes it (with `--limit` and `--window`).
    pub limiter: String,
    /// The limit `L` to simulate it with.
    pub limit: u64,
    /// The window `W` to simulate it with, µs.
    pub window_us: Micros,
    /// The share of requests it decides as the log says, 0 to 1.
    pub agreement: f64,
    /// Requests it decides otherwise.
    pub wrong_count: u64,
    /// The first few of them.
    pub wrong: Vec<Wrong>,
    /// Which setting was searched (`limit`, `burst`) and the range of it that fits as well.
    pub searched: &'static str,
    /// The lowest and highest value of it that decide the log as this fit does (equal when
    /// only one does; the highest is `None` when any larger value does too).
    pub range: (u64, Option<u64>),
    /// What it promises: the most it admits in any window of `W`, over any arrivals.
    pub promise: String,
    /// Other limiters that decide every request of the log the same way as this one.
    pub same_as: Vec<String>,
    /// Replayed with the log's own decisions, the requests it decides otherwise at their
    /// logged time, and of them those it decides as the log says a time step of the log
    /// earlier or later: disagreements the log's clock can make (a server's decision and its
    /// log line read clocks that can differ by that step).
    pub replayed_otherwise: u64,
    /// See [`Fit::replayed_otherwise`].
    pub within_a_step: u64,
    /// For nginx without `nodelay` (which logs an admitted request when it is served): the
    /// admitted requests logged one interval after the admitted one before, taken as served
    /// late and put back where they could have arrived. 0 for every other limiter.
    pub served_late: u64,
}

/// What [`fit`] finds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FitReport {
    /// Requests read.
    pub requests: u64,
    /// Of them rejected.
    pub rejected: u64,
    /// Clients (one limiter each), or 1 with `--key all`.
    pub keys: u64,
    /// The log's time step, µs.
    pub resolution_us: Micros,
    /// The format read.
    pub format: &'static str,
    /// The best fits, best first.
    pub fits: Vec<Fit>,
    /// Whether the log tells the fits apart, in words.
    pub verdict: String,
    /// For a log to the second: whether the best fits stay fits however each second's
    /// requests are placed within it.
    pub order: Option<String>,
}

#[derive(Clone)]
/// The requests grouped by key, each group in time order, times from a base that keeps
/// calendar windows where the epoch has them (a whole day before the first request).
struct Prepared {
    /// (time from base, admitted, index in the log) by key, then time.
    order: Vec<(Micros, bool, u32)>,
    /// Where each key's run of `order` ends.
    ends: Vec<usize>,
    base: Micros,
    horizon: Micros,
    most_in_a_key: u64,
    /// The log's time step.
    resolution: Micros,
    /// Admitted requests [`Prepared::queued`] took as served late and moved.
    moved: u64,
}

impl Prepared {
    fn new(log: &Log, requests: &[Request]) -> Prepared {
        let first = requests.iter().map(|r| r.at).min().unwrap_or(0);
        let base = first - first % (1440 * MINUTE);
        // A log to the second: each second's requests spread evenly over it, in log order.
        let times = place(requests, log.resolution, Placement::Spread);
        let mut order: Vec<(u32, Micros, bool, u32)> = requests
            .iter()
            .zip(&times)
            .enumerate()
            .map(|(i, (r, &t))| (r.key, t - base, r.admitted, i as u32))
            .collect();
        order.sort_by_key(|&(k, t, _, i)| (k, t, i));
        let mut ends = Vec::new();
        for i in 1..=order.len() {
            if i == order.len() || order[i].0 != order[i - 1].0 {
                ends.push(i);
            }
        }
        let mut most = 0;
        let mut start = 0;
        for &e in &ends {
            most = most.max((e - start) as u64);
            start = e;
        }
        let horizon = order.iter().map(|o| o.1).max().unwrap_or(0) + 1;
        Prepared {
            order: order.into_iter().map(|(_, t, a, i)| (t, a, i)).collect(),
            ends,
            base,
            horizon,
            most_in_a_key: most,
            resolution: log.resolution,
            moved: 0,
        }
    }

    /// The log as a queueing limiter saw it: nginx without `nodelay` (every excess request
    /// waits) logs an admitted request when it is served, `interval` after the one before it,
    /// not when it arrived. Each admitted request logged one `interval` (within `tolerance`)
    /// after the admitted one before it is taken to have waited, and is put back where it
    /// could have arrived: no earlier than the moment its queue had room for it (its time less
    /// `burst` intervals, and after the one before it), and before the first rejection after
    /// that moment, since a request arriving while there was room would have been admitted.
    /// Rejections are logged when they arrive and stay where they are.
    fn queued(&self, interval: Micros, burst: u64, tolerance: Micros) -> Prepared {
        debug_assert!(interval > 0);
        let mut order = self.order.clone();
        let mut moved = 0;
        let mut start = 0;
        for &end in &self.ends {
            let run = &mut order[start..end];
            let rejections: Vec<Micros> = run.iter().filter(|o| !o.1).map(|o| o.0).collect();
            let (mut served, mut arrived): (Option<Micros>, Micros) = (None, 0);
            for o in run.iter_mut().filter(|o| o.1) {
                let d = o.0;
                let waited = served.is_some_and(|s| d.abs_diff(s + interval) <= tolerance);
                moved += u64::from(waited);
                let at = if waited {
                    let room = d
                        .saturating_sub(burst.saturating_mul(interval))
                        .max(arrived);
                    let next = rejections.partition_point(|&r| r <= room);
                    let before = rejections.get(next).map_or(d, |&r| r.saturating_sub(1));
                    before.min(d).max(room)
                } else {
                    d
                };
                served = Some(d);
                arrived = at;
                o.0 = at;
            }
            run.sort_by_key(|&(t, _, i)| (t, i));
            start = end;
        }
        Prepared {
            order,
            ends: self.ends.clone(),
            base: self.base,
            horizon: self.horizon,
            most_in_a_key: self.most_in_a_key,
            resolution: self.resolution,
            moved,
        }
    }

    /// How far a served request's logged time may be from one interval after the one before
    /// it for it to count as having waited: nginx's timers and its log's clock are to the
    /// millisecond, so two of them, or the log's own step if coarser.
    fn tolerance(&self) -> Micros {
        (2 * MS).max(self.resolution)
    }

    /// This log as `point` at `scale` sees it: [`Prepared::queued`] for a queueing nginx.
    fn seen_by(&self, point: Point, scale: u64) -> Cow<'_, Prepared> {
        match point.queue(scale) {
            Some(interval) => Cow::Owned(self.queued(interval, scale, self.tolerance())),
            None => Cow::Borrowed(self),
        }
    }

    /// The limiter `point` is at `scale`, if it builds.
    fn build(&self, point: Point, scale: u64) -> Option<(Limiter, String, u64, Micros)> {
        let (text, limit, window) = point.spec(scale)?;
        let limit = limit.clamp(1, crate::sim::LIMIT_RANGE.1);
        let l = self.limiter(&text, limit, window)?;
        Some((l, text, limit, window))
    }

    /// The limiter `text` is, with `L = limit` and `W = window`, built for a run as long as
    /// the log, if it builds.
    fn limiter(&self, text: &str, limit: u64, window: Micros) -> Option<Limiter> {
        let spec = LimiterSpec::parse(text).ok()?;
        let sc = Scenario {
            limiters: vec![spec.clone()],
            limit,
            window,
            duration: self.horizon.max(window) + 1,
            ..Scenario::default()
        };
        sc.build_limiter(&spec, 0).ok()
    }

    /// Replays the log's own decisions through `l` (an admission forced in, a rejection
    /// left as the limiter leaves it): the admissions it would refuse and the rejections it
    /// would admit. `miss(limiter, t, log_admitted)` is called at each, the limiter as it
    /// stands before the request; the replay stops when it returns false.
    fn replay(
        &self,
        l: &Limiter,
        counts_rejects: bool,
        mut miss: impl FnMut(&Limiter, Micros, bool) -> bool,
    ) -> (u64, u64) {
        let (mut refused, mut admitted) = (0, 0);
        let mut start = 0;
        for &end in &self.ends {
            let mut lim = l.clone();
            for &(t, ok, _) in &self.order[start..end] {
                let would = lim.peek(t);
                if would != ok {
                    if ok {
                        refused += 1;
                    } else {
                        admitted += 1;
                    }
                    if !miss(&lim, t, ok) {
                        return (refused, admitted);
                    }
                }
                if ok || (would && counts_rejects) {
                    lim.force(t);
                } else if !would {
                    lim.admit(t);
                }
            }
            start = end;
        }
        (refused, admitted)
    }

    /// [`Prepared::replay`]'s counts; with `stop`, only until the first refused admission
    /// (`Some(true)`) or admitted rejection (`Some(false)`), which is all a search asks.
    fn violations(&self, l: &Limiter, counts_rejects: bool, stop: Option<bool>) -> (u64, u64) {
        self.replay(l, counts_rejects, |_, _, ok| stop != Some(ok))
    }

    /// The requests [`Prepared::replay`] finds decided otherwise at their time, and of them
    /// those the limiter decides as the log says `step` earlier or later.
    fn near_misses(&self, l: &Limiter, counts_rejects: bool, step: Micros) -> (u64, u64) {
        let mut near = 0;
        let (refused, admitted) = self.replay(l, counts_rejects, |lim, t, ok| {
            let earlier = t.checked_sub(step).map(|e| lim.peek(e));
            near += u64::from(earlier == Some(ok) || lim.peek(t + step) == ok);
            true
        });
        (refused + admitted, near)
    }

    /// Runs `l` on its own over every key's requests: the requests it decides otherwise.
    fn disagreements(&self, l: &Limiter) -> Vec<u32> {
        let mut wrong = Vec::new();
        let mut start = 0;
        for &end in &self.ends {
            let mut lim = l.clone();
            for &(t, ok, i) in &self.order[start..end] {
                if lim.admit(t) != ok {
                    wrong.push(i);
                }
            }
            start = end;
        }
        wrong.sort_unstable();
        wrong
    }
}

/// Where a log to the second's requests are placed within their second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Placement {
    /// Evenly over it, in log order.
    Spread,
    /// All at its start.
    Start,
    /// All at its last microsecond.
    End,
}

/// The requests' times: as written, or, for a log to the second, placed within it.
fn place(requests: &[Request], resolution: Micros, how: Placement) -> Vec<Micros> {
    if resolution < SECOND {
        return requests.iter().map(|r| r.at).collect();
    }
    let mut out = vec![0; requests.len()];
    let mut i = 0;
    while i < requests.len() {
        let mut j = i;
        while j < requests.len() && requests[j].at == requests[i].at {
            j += 1;
        }
        let n = (j - i) as u64;
        for (k, o) in out[i..j].iter_mut().enumerate() {
            let k = k as u64;
            *o = requests[i].at
                + match how {
                    Placement::Spread => (2 * k + 1) * SECOND / (2 * n),
                    Placement::Start => 0,
                    Placement::End => SECOND - 1,
                };
        }
        i = j;
    }
    out
}

/// How many points of the grid the first requests leave to check on the whole log, at most.
const KEPT: usize = 48;

/// `f` of each of `items`, on the machine's cores, in order.
fn in_parallel<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 8)
        .min(items.len().max(1));
    if threads == 1 {
        return items.iter().map(&f).collect();
    }
    // Interleaved, so that each thread gets its share of every kind of point.
    let mut out: Vec<(usize, R)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|k| {
                let f = &f;
                s.spawn(move || {
                    (k..items.len())
                        .step_by(threads)
                        .map(|i| (i, f(&items[i])))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    out.sort_by_key(|(i, _)| *i);
    out.into_iter().map(|(_, r)| r).collect()
}

/// What the search found at one point: the range of its setting with the fewest violations.
#[derive(Debug, Clone, Copy)]
struct Found {
    point: Point,
    lo: u64,
    hi: Option<u64>,
    violations: u64,
}

/// The least value at or above `from` for which `ok` holds, `ok` false then true; `None` if
/// not by `to`.
fn least_where(from: u64, to: u64, ok: impl Fn(u64) -> bool) -> Option<u64> {
    if from > to || !ok(to) {
        return None;
    }
    let (mut a, mut b) = (from, to);
    while a < b {
        let m = a + (b - a) / 2;
        if ok(m) {
            b = m;
        } else {
            a = m + 1;
        }
    }
    Some(a)
}

/// Searches `point` on `p` within `[from, to]`.
fn search(p: &Prepared, point: Point, from: u64, to: u64) -> Option<Found> {
    let v = |s: u64, stop: Option<bool>| {
        let q = p.seen_by(point, s);
        q.build(point, s)
            .map(|(l, ..)| q.violations(&l, point.counts_rejects(), stop))
    };
    let from = from.max(point.least());
    p.build(point, from)?;
    // The least setting that refuses no admission, and the most that admits no rejection.
    let lo = least_where(from, to, |s| v(s, Some(true)).is_some_and(|x| x.0 == 0)).unwrap_or(to);
    // (The least that admits one, less one: none if even `from` admits one.)
    let first_admitting = if v(to, Some(false)).is_some_and(|x| x.1 == 0) {
        None
    } else {
        least_where(from, to, |s| v(s, Some(false)).is_none_or(|x| x.1 > 0))
    };
    let hi = first_admitting.map(|s| s.saturating_sub(1));
    if first_admitting.is_none_or(|s| s > from && s > lo) {
        return Some(Found {
            point,
            lo,
            hi,
            violations: 0,
        });
    }
    // None decides every request as the log does: the better of the two edges and between.
    let h = hi.unwrap_or(to).max(from);
    let candidates = [lo, h, lo.midpoint(h)];
    let (violations, best) = candidates
        .iter()
        .filter_map(|&s| v(s, None).map(|(a, b)| (a + b, s)))
        .min()?;
    Some(Found {
        point,
        lo: best,
        hi: Some(best),
        violations,
    })
}

/// Fits every limiter ratelab models to `log`; `progress(done, total)` is called as the grid
/// is searched.
pub fn fit(log: &Log, progress: &(dyn Fn(usize, usize) + Sync)) -> FitReport {
    let requests = &log.requests;
    let rejected = requests.iter().filter(|r| !r.admitted).count() as u64;
    let all = Prepared::new(log, requests);
    // The first requests (by time) narrow the search; the whole log checks what they leave.
    const FIRST: usize = 4_000;
    let mut by_time: Vec<usize> = (0..requests.len()).collect();
    by_time.sort_by_key(|&i| (requests[i].at, i));
    let first: Vec<Request> = by_time.iter().take(FIRST).map(|&i| requests[i]).collect();
    let short = Prepared::new(log, &first);
    let points = grid(log.resolution, served_interval(log), all.tolerance());
    let longer = requests.len() > FIRST;
    let top = all.most_in_a_key + 1;
    let done = std::sync::atomic::AtomicUsize::new(0);
    let stage1 = in_parallel(&points, |&point| {
        let f = search(&short, point, point.least(), short.most_in_a_key + 1);
        let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        progress(n, points.len() + usize::from(longer) * KEPT);
        f
    });
    let mut found: Vec<Found> = stage1.into_iter().flatten().collect();
    // Fewest violations first; among equals, the settings people configure (round windows and
    // rates) first.
    found.sort_by_key(|f| (f.violations, f.point.roundness()));
    if longer {
        // What the first requests leave: the points with the fewest violations there.
        let fewest = found.first().map_or(0, |f| f.violations);
        found.retain(|f| f.violations <= fewest.saturating_mul(2));
        found.truncate(KEPT);
        let kept = found.len();
        found = in_parallel(&found, |f| {
            let g = if f.violations == 0 {
                search(&all, f.point, f.lo, f.hi.unwrap_or(top).min(top))
            } else {
                search(&all, f.point, f.point.least(), top)
            };
            let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            progress(
                (n + KEPT - kept).min(points.len() + KEPT),
                points.len() + KEPT,
            );
            g
        })
        .into_iter()
        .flatten()
        .collect();
        progress(points.len() + KEPT, points.len() + KEPT);
    }
    found.sort_by_key(|f| f.violations);
    let fewest = found.first().map_or(0, |f| f.violations);
    // The fits with the fewest violations, run on their own (and a few more).
    // (24 of them, and beyond those up to 4 of every family, so that a family's best is named
    // among equals however many points of other families tie.)
    let mut picked: Vec<&Found> = Vec::new();
    for f in found
        .iter()
        .filter(|f| f.violations <= fewest.saturating_mul(2).max(fewest + 8))
    {
        let of_family = picked
            .iter()
            .filter(|g| g.point.family() == f.point.family())
            .count();
        if picked.len() < 24 || of_family < 4 {
            picked.push(f);
        }
    }
    let mut fits: Vec<Fit> = picked
        .into_iter()
        .filter_map(|f| make_fit(&all, log, f))
        .collect();
    // Among fits that decide alike, the server whose log format this is comes first (an
    // nginx-style access log: nginx; HAProxy's: haproxy).
    let hint = match log.format {
        "access-log" | "access-log+msec" => "nginx",
        "haproxy" => "haproxy",
        _ => "",
    };
    fits.sort_by(|a, b| {
        b.agreement
            .total_cmp(&a.agreement)
            .then(a.wrong_count.cmp(&b.wrong_count))
            .then((kind_of(&a.limiter) != hint).cmp(&(kind_of(&b.limiter) != hint)))
    });
    // Fits that decide every request alike are named together.
    let mut out: Vec<Fit> = Vec::new();
    for f in fits {
        if let Some(same) = out
            .iter_mut()
            .find(|o| o.wrong == f.wrong && o.wrong_count == f.wrong_count)
        {
            // The algorithms' specs take `L` and `W` from `--limit` and `--window`.
            let whole = if f.limiter.contains(':') && !f.limiter.starts_with("sliding-log") {
                f.limiter
            } else {
                format!(
                    "{} --limit {} --window {}",
                    f.limiter,
                    f.limit,
                    format_duration(f.window_us)
                )
            };
            if same.same_as.len() < 12 && !same.same_as.contains(&whole) {
                same.same_as.push(whole);
            }
            continue;
        }
        if out
            .iter()
            .any(|o| kind_of(&o.limiter) == kind_of(&f.limiter))
        {
            continue;
        }
        out.push(f);
    }
    out.truncate(10);
    let verdict = verdict(&out, requests.len() as u64, rejected);
    let order = (log.resolution >= SECOND && !out.is_empty()).then(|| order_check(log, &out));
    FitReport {
        requests: requests.len() as u64,
        rejected,
        keys: log.keys as u64,
        resolution_us: log.resolution,
        format: log.format,
        fits: out,
        verdict,
        order,
    }
}

/// The requests of `log` (their indices in `log.requests`) that `f`, one of its fits, decides
/// otherwise than the log when run on its own over every client's requests: those
/// [`Fit::wrong_count`] counts. `None` if the fit's limiter does not build.
pub fn disagreements(log: &Log, f: &Fit) -> Option<Vec<u32>> {
    let all = Prepared::new(log, &log.requests);
    let p = match queue_of(&f.limiter) {
        Some((interval, burst)) => Cow::Owned(all.queued(interval, burst, all.tolerance())),
        None => Cow::Borrowed(&all),
    };
    let l = p.limiter(&f.limiter, f.limit, f.window_us)?;
    Some(p.disagreements(&l))
}

/// The interval at which the log's admitted requests look served one after another, if they
/// do: nginx without `nodelay` serves what it queues one interval apart and logs each when
/// served, so the gaps between a client's consecutive admitted requests gather at that
/// interval (half of them within two milliseconds of their median) and almost none are
/// shorter (at most one in fifty more than two milliseconds under it). A log from any other
/// limiter has its admissions where requests arrived: gaps spread out, or bursts of short
/// ones. Only for logs to the millisecond or finer; `None` otherwise.
fn served_interval(log: &Log) -> Option<Micros> {
    const TOLERANCE: Micros = 2 * MS;
    if log.resolution > MS {
        return None;
    }
    let mut last: Vec<Option<Micros>> = vec![None; log.keys.max(1)];
    let mut gaps = Vec::new();
    for r in log.requests.iter().filter(|r| r.admitted) {
        let slot = last.get_mut(r.key as usize)?;
        if let Some(before) = slot.replace(r.at) {
            gaps.push(r.at.abs_diff(before));
        }
    }
    if gaps.len() < 20 {
        return None;
    }
    gaps.sort_unstable();
    let median = gaps[gaps.len() / 2];
    let near = gaps
        .iter()
        .filter(|&&g| g.abs_diff(median) <= TOLERANCE)
        .count();
    let short = gaps.partition_point(|&g| g + TOLERANCE < median);
    (median > 2 * TOLERANCE && 2 * near >= gaps.len() && 50 * short <= gaps.len()).then_some(median)
}

/// A queueing nginx's interval and burst, from its spec (`None` for any other limiter).
fn queue_of(text: &str) -> Option<(Micros, u64)> {
    let spec = LimiterSpec::parse(text).ok()?;
    let rate = spec.rate?;
    let queues = spec.kind == crate::spec::LimiterKind::Nginx
        && spec.mode == crate::limiter::LeakyMode::Queue
        && spec.delay == 0
        && rate.count > 0;
    queues.then(|| (rate.per / rate.count, spec.burst.unwrap_or(0)))
}

/// The limiter's kind, from its spec.
fn kind_of(spec: &str) -> &str {
    spec.split([':', ' ']).next().unwrap_or(spec)
}

fn make_fit(p: &Prepared, log: &Log, f: &Found) -> Option<Fit> {
    // A queueing nginx's log has its admitted requests when served: any burst from the
    // least that fits could have queued them (their arrivals placed later), but only the
    // most that fits keeps a queue as long as the log's rejections need, so that one is named.
    let scale = match (f.point.queue(1), f.hi) {
        (Some(_), Some(hi)) => hi,
        _ => f.lo,
    };
    let q = p.seen_by(f.point, scale);
    let p = &*q;
    let (l, text, limit, window) = p.build(f.point, scale)?;
    let wrong = p.disagreements(&l);
    let (replayed_otherwise, within_a_step) =
        p.near_misses(&l, f.point.counts_rejects(), log.resolution.min(SECOND));
    let n = log.requests.len().max(1) as u64;
    let spec = LimiterSpec::parse(&text).ok()?;
    let promise = match theory::worst_case(&spec, limit, window) {
        Some(w) => format!("at most {w} in any {}", format_duration(window)),
        None => "no bound known".into(),
    };
    Some(Fit {
        limiter: text,
        limit,
        window_us: window,
        agreement: (n - wrong.len() as u64) as f64 / n as f64,
        wrong_count: wrong.len() as u64,
        wrong: wrong
            .iter()
            .take(5)
            .map(|&i| {
                let r = log.requests[i as usize];
                Wrong {
                    line: r.line,
                    at_us: p
                        .order
                        .iter()
                        .find(|o| o.2 == i)
                        .map_or(r.at, |o| o.0 + p.base),
                    log_admitted: r.admitted,
                }
            })
            .collect(),
        searched: f.point.searched(),
        range: (f.lo, f.hi),
        promise,
        same_as: Vec::new(),
        replayed_otherwise,
        within_a_step,
        served_late: p.moved,
    })
}

/// Whether the log tells its best fits apart.
fn verdict(fits: &[Fit], requests: u64, rejected: u64) -> String {
    let Some(best) = fits.first() else {
        return "no limiter ratelab models fits this log".into();
    };
    if rejected == 0 {
        return format!(
            "no request of the {requests} was rejected: any limiter that admits the busiest stretch fits, so the log cannot tell them apart (the fits shown are the tightest)"
        );
    }
    let tied: Vec<&str> = fits
        .iter()
        .filter(|f| f.agreement == best.agreement)
        .map(|f| f.limiter.as_str())
        .collect();
    let exact = if best.agreement == 1.0 {
        "decides every request as the log says"
    } else {
        "decides the most requests as the log says"
    };
    if tied.len() + best.same_as.len() > 1 {
        let mut names: Vec<&str> = tied;
        names.extend(best.same_as.iter().map(String::as_str));
        format!(
            "{} limiters tie ({}): each {exact}, so this log ({requests} requests, {rejected} rejected) cannot tell them apart; a longer log, or one with finer times, may",
            names.len(),
            names.join(", ")
        )
    } else {
        format!(
            "{} alone {exact} ({requests} requests, {rejected} rejected)",
            best.limiter
        )
    }
}

/// For a log to the second: whether each perfect fit stays one with each second's requests
/// all at its start and all at its end, as well as spread over it.
fn order_check(log: &Log, fits: &[Fit]) -> String {
    let mut stays = Vec::new();
    let mut not = Vec::new();
    for f in fits.iter().filter(|f| f.agreement == 1.0) {
        let ok = [Placement::Start, Placement::End].iter().all(|&how| {
            let mut shifted = log.clone();
            let times = place(&log.requests, log.resolution, how);
            for (r, t) in shifted.requests.iter_mut().zip(times) {
                r.at = t;
            }
            shifted.resolution = 1;
            let p = Prepared::new(&shifted, &shifted.requests);
            let p = match queue_of(&f.limiter) {
                Some((interval, burst)) => Cow::Owned(p.queued(interval, burst, log.resolution)),
                None => Cow::Borrowed(&p),
            };
            p.limiter(&f.limiter, f.limit, f.window_us)
                .is_some_and(|l| p.disagreements(&l).is_empty())
        });
        if ok {
            stays.push(f.limiter.as_str());
        } else {
            not.push(f.limiter.as_str());
        }
    }
    if stays.is_empty() && not.is_empty() {
        return "the log's times are whole seconds; no fit decides every request as it says".into();
    }
    format!(
        "the log's times are whole seconds: each second's requests were tried spread over it, all at its start and all at its end; {}{}",
        if stays.is_empty() {
            "no fit stays exact for all three".to_owned()
        } else {
            format!("stays exact for all three: {}", stays.join(", "))
        },
        if not.is_empty() {
            format!("; turns on where in the second they fell: {}", not.join(", "))
        } else {
            String::new()
        }
    )
}
