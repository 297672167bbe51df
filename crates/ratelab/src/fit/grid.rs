//! The grid `fit` searches: every limiter ratelab models, each with everything but its
//! limit or burst, over windows and rates people configure.

use crate::time::{format_duration, Micros, MINUTE, MS, SECOND};

/// The windows and periods tried: a tenth to half a second, every whole second to a minute,
/// every whole minute to an hour, and hours that divide a day.
fn windows() -> Vec<Micros> {
    let mut w = vec![100 * MS, 200 * MS, 250 * MS, 500 * MS];
    w.extend((1..=60).map(|s| s * SECOND));
    w.extend((2..=60).map(|m| m * MINUTE));
    w.extend([2, 3, 4, 6, 8, 12, 24].map(|h| h * 60 * MINUTE));
    w
}

/// The counts tried for a bucket's rate, per second, minute and hour: every whole number to
/// 100, and round ones beyond.
fn counts() -> Vec<u64> {
    let mut c: Vec<u64> = (1..=100).collect();
    c.extend([
        120, 150, 200, 250, 300, 400, 500, 600, 750, 1000, 1200, 1500, 2000, 2500, 3000, 5000,
        10_000,
    ]);
    c
}

/// A point of the grid: a limiter with everything but its searched setting.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Point {
    /// `kind` with `L` searched over a window (limits: a strategy too).
    Window(Family, Micros),
    /// `kind` with a burst searched at a rate of `count` per `per`.
    Rate(Family, u64, Micros),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Family {
    FixedWindow,
    SlidingLog,
    SlidingLogRejects,
    Counter,
    Haproxy,
    Express,
    Vsthrottle,
    LimitsFixed,
    LimitsMoving,
    TokenBucket,
    Gcra,
    LeakyMeter,
    Nginx,
    /// nginx without `nodelay`: its log has admitted requests when served.
    NginxQueue,
    GoRate,
    RedisCell,
}

impl Point {
    /// The spec, `L` and `W` at `scale` of the searched setting, if valid.
    pub(super) fn spec(self, scale: u64) -> Option<(String, u64, Micros)> {
        let d = format_duration;
        Some(match self {
            Point::Window(f, w) => {
                let l = scale.max(1);
                let text = match f {
                    Family::FixedWindow => "fixed-window".to_owned(),
                    Family::SlidingLog => "sliding-log".to_owned(),
                    Family::SlidingLogRejects => "sliding-log:record-rejects=true".to_owned(),
                    Family::Counter => "sliding-window-counter".to_owned(),
                    Family::Haproxy => format!("haproxy:period={},limit={l}", d(w)),
                    Family::Express => {
                        format!("express-rate-limit:limit={l},window-ms={}", w / MS)
                    }
                    Family::Vsthrottle => format!("vsthrottle:limit={l},period={}", d(w)),
                    Family::LimitsFixed | Family::LimitsMoving => {
                        if w % SECOND != 0 {
                            return None;
                        }
                        format!(
                            "limits:rate={},strategy={}",
                            crate::spec::limits_rate_text(l, w),
                            if f == Family::LimitsFixed {
                                "fixed-window"
                            } else {
                                "moving-window"
                            }
                        )
                    }
                    _ => return None,
                };
                (text, l, w)
            }
            Point::Rate(f, count, per) => {
                let b = scale;
                let text = match f {
                    Family::TokenBucket => {
                        format!("token-bucket:burst={},rate={count}/{}", b.max(1), d(per))
                    }
                    Family::Gcra => format!("gcra:burst={},rate={count}/{}", b.max(1), d(per)),
                    Family::LeakyMeter => format!("leaky-bucket:burst={b},rate={count}/{}", d(per)),
                    Family::Nginx => {
                        let unit = match per {
                            SECOND => "s",
                            MINUTE => "m",
                            _ => return None,
                        };
                        format!("nginx:rate={count}r/{unit},burst={b},nodelay")
                    }
                    Family::NginxQueue => {
                        let unit = match per {
                            SECOND => "s",
                            MINUTE => "m",
                            _ => return None,
                        };
                        format!("nginx:rate={count}r/{unit},burst={}", b.max(1))
                    }
                    Family::GoRate => {
                        if per % count != 0 {
                            return None;
                        }
                        format!("go-rate:every={},b={b}", d(per / count))
                    }
                    Family::RedisCell => {
                        if per % SECOND != 0 || per / SECOND * 1000 < count {
                            return None;
                        }
                        format!(
                            "redis-cell:max-burst={b},count={count},period={}",
                            per / SECOND
                        )
                    }
                    _ => return None,
                };
                (text, count, per)
            }
        })
    }

    /// 0 for a round window or rate (one people configure: 1, 2, 5, 10, 15, 30 s or min, an
    /// hour, 6, 12 or 24 h; 1 to 10, 12, 15, 20, 25, 30, 50, 60, 100 ... a unit), 1 otherwise.
    pub(super) fn roundness(self) -> u8 {
        const ROUND: [Micros; 16] = [
            100 * MS,
            250 * MS,
            500 * MS,
            SECOND,
            2 * SECOND,
            5 * SECOND,
            10 * SECOND,
            15 * SECOND,
            30 * SECOND,
            MINUTE,
            2 * MINUTE,
            5 * MINUTE,
            10 * MINUTE,
            15 * MINUTE,
            30 * MINUTE,
            60 * MINUTE,
        ];
        let round_count = |c: u64| {
            c <= 10
                || [12, 15, 20, 25, 30, 40, 50, 60, 75, 100].contains(&c)
                || (c > 100 && c % 50 == 0)
        };
        let round = match self {
            Point::Window(_, w) => ROUND.contains(&w) || w % (360 * MINUTE) == 0,
            Point::Rate(_, c, _) => round_count(c),
        };
        u8::from(!round)
    }

    /// Its family.
    pub(super) fn family(self) -> Family {
        match self {
            Point::Window(f, _) | Point::Rate(f, ..) => f,
        }
    }

    /// For a limiter that queues what it admits (nginx without `nodelay`), at burst `scale`:
    /// the interval at which it serves them.
    pub(super) fn queue(self, scale: u64) -> Option<Micros> {
        match self {
            Point::Rate(Family::NginxQueue, count, per) if scale > 0 && count > 0 => {
                Some(per / count)
            }
            _ => None,
        }
    }

    /// The least value of the searched setting.
    pub(super) fn least(self) -> u64 {
        match self {
            Point::Rate(
                Family::LeakyMeter | Family::Nginx | Family::GoRate | Family::RedisCell,
                ..,
            ) => 0,
            _ => 1,
        }
    }

    /// What is searched.
    pub(super) fn searched(self) -> &'static str {
        match self {
            Point::Window(..) => "limit",
            Point::Rate(..) => "burst",
        }
    }

    /// Whether a rejection changes the limiter's state (it counts every request).
    pub(super) fn counts_rejects(self) -> bool {
        matches!(
            self,
            Point::Window(
                Family::SlidingLogRejects | Family::Haproxy | Family::Express | Family::LimitsFixed,
                _
            )
        )
    }
}

/// Every point of the grid, for a log whose times step by `resolution`; a queueing nginx
/// only at rates whose interval is within `tolerance` of `served` (see
/// [`served_interval`](super::served_interval)).
pub(super) fn grid(resolution: Micros, served: Option<Micros>, tolerance: Micros) -> Vec<Point> {
    let mut points = Vec::new();
    for w in windows() {
        if w < 10 * resolution {
            continue;
        }
        for f in [
            Family::FixedWindow,
            Family::SlidingLog,
            Family::SlidingLogRejects,
            Family::Counter,
            Family::Haproxy,
            Family::Express,
            Family::Vsthrottle,
            Family::LimitsFixed,
            Family::LimitsMoving,
        ] {
            points.push(Point::Window(f, w));
        }
    }
    let mut rates: Vec<(u64, Micros)> = Vec::new();
    for per in [SECOND, MINUTE, 60 * MINUTE] {
        for c in counts() {
            // The same rate once (60 a minute is 1 a second), in its smallest unit.
            if !rates
                .iter()
                .any(|&(c2, p2)| u128::from(c2) * u128::from(per) == u128::from(c) * u128::from(p2))
            {
                rates.push((c, per));
            }
        }
    }
    for f in [
        Family::TokenBucket,
        Family::Gcra,
        Family::LeakyMeter,
        Family::Nginx,
        Family::NginxQueue,
        Family::GoRate,
        Family::RedisCell,
    ] {
        for &(c, per) in &rates {
            if f == Family::NginxQueue && served.is_none_or(|s| (per / c).abs_diff(s) > tolerance) {
                continue;
            }
            points.push(Point::Rate(f, c, per));
        }
    }
    points
}
