//! The scenario language: `name[:key=value,...]` specs for limiters and traffic, as the CLI,
//! the page's URL and the tests write them, parsed into one typed model.
//!
//! Parsing checks everything it can without knowing the limit and window; [`crate::sim`]
//! checks the rest when it builds a scenario. Every error names the bad part and what is
//! accepted.

#[cfg(feature = "fleet")]
mod fleet;

#[cfg(feature = "fleet")]
pub use fleet::{FleetSpec, MAX_GATEWAYS};

mod limits;
mod parse;
mod retry;
mod traffic;

pub use crate::limiter::LimitsStrategy;
pub use limits::{limits_rate_text, parse_limits_rate};
pub use parse::{
    parse_count, parse_load, parse_nginx_rate, parse_rate, parse_share, MAX_BURST,
    MAX_HAPROXY_PERIOD, MAX_LOAD, MAX_RATE_COUNT, MAX_SERVERS, MAX_TICK, MAX_TRIES,
};
pub use retry::{group_keys, policy_keys, MAX_CLIENTS, MAX_GROUPS};
pub use traffic::{Replay, TrafficSpec, ON_ACTIVE, ON_BUSY};

use crate::error::Error;
use crate::limiter::{LeakyMode, Rate};
#[cfg(feature = "libraries")]
use crate::time::MS;
use crate::time::{format_duration, Micros, SECOND};
use parse::{names, parse_bool, parse_haproxy_period, split_spec};
use serde::{Deserialize, Serialize};

/// The limiter algorithms, by their spec names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LimiterKind {
    /// `fixed-window`
    FixedWindow,
    /// `sliding-log`
    SlidingLog,
    /// `sliding-window-counter`
    SlidingWindowCounter,
    /// `token-bucket`
    TokenBucket,
    /// `gcra`
    Gcra,
    /// `leaky-bucket`
    LeakyBucket,
    /// `nginx`: nginx's `limit_req` as configured, in nginx's arithmetic.
    Nginx,
    /// `haproxy`: HAProxy's stick-table request rate, in HAProxy's arithmetic.
    Haproxy,
    /// `express-rate-limit`: express-rate-limit's memory store, `limit` per `windowMs`.
    ExpressRateLimit,
    /// `rate-limiter-flexible`: rate-limiter-flexible's `RateLimiterMemory`, `points` per
    /// `duration`.
    RateLimiterFlexible,
    /// `go-rate`: Go's `golang.org/x/time/rate` Limiter, `rate.NewLimiter(r, b)`.
    GoRate,
    /// `redis-cell`: redis-cell's `CL.THROTTLE key max_burst count period`.
    RedisCell,
    /// `vsthrottle`: Varnish's `vsthrottle.is_denied(key, limit, period)`.
    Vsthrottle,
    /// `limits`: Python's `limits` (Flask-Limiter, SlowAPI), a rate string and a strategy.
    Limits,
}

impl LimiterKind {
    /// The essays' six algorithms, in the order the page lists them: what the study, the
    /// lab's compare view and `ratelab simulate` without `--limiter` run.
    pub const ALL: [LimiterKind; 6] = [
        LimiterKind::FixedWindow,
        LimiterKind::SlidingLog,
        LimiterKind::SlidingWindowCounter,
        LimiterKind::TokenBucket,
        LimiterKind::Gcra,
        LimiterKind::LeakyBucket,
    ];

    /// Real servers' limiters, each in its server's own units and arithmetic.
    pub const REAL: [LimiterKind; 2] = [LimiterKind::Nginx, LimiterKind::Haproxy];

    /// Libraries' limiters, each in its library's own units and arithmetic, named as their
    /// users configure them.
    pub const LIBRARIES: [LimiterKind; 6] = [
        LimiterKind::ExpressRateLimit,
        LimiterKind::RateLimiterFlexible,
        LimiterKind::GoRate,
        LimiterKind::RedisCell,
        LimiterKind::Vsthrottle,
        LimiterKind::Limits,
    ];

    /// The spec name.
    pub fn name(self) -> &'static str {
        match self {
            LimiterKind::FixedWindow => "fixed-window",
            LimiterKind::SlidingLog => "sliding-log",
            LimiterKind::SlidingWindowCounter => "sliding-window-counter",
            LimiterKind::TokenBucket => "token-bucket",
            LimiterKind::Gcra => "gcra",
            LimiterKind::LeakyBucket => "leaky-bucket",
            LimiterKind::Nginx => "nginx",
            LimiterKind::Haproxy => "haproxy",
            LimiterKind::ExpressRateLimit => "express-rate-limit",
            LimiterKind::RateLimiterFlexible => "rate-limiter-flexible",
            LimiterKind::GoRate => "go-rate",
            LimiterKind::RedisCell => "redis-cell",
            LimiterKind::Vsthrottle => "vsthrottle",
            LimiterKind::Limits => "limits",
        }
    }

    /// The kind with this spec name.
    pub fn from_name(name: &str) -> Result<Self, Error> {
        let every = || {
            Self::ALL.into_iter().chain(Self::REAL).chain(
                Self::LIBRARIES
                    .into_iter()
                    .filter(|_| cfg!(feature = "libraries")),
            )
        };
        every()
            .find(|k| k.name() == name)
            .ok_or_else(|| Error::unknown("limiter", name, &names(every().map(|k| k.name()))))
    }

    /// Whether the kind has a bucket (`burst` and `rate` apply).
    pub fn has_bucket(self) -> bool {
        matches!(
            self,
            LimiterKind::TokenBucket | LimiterKind::Gcra | LimiterKind::LeakyBucket
        )
    }

    /// Whether the kind keeps a count or log that rejected requests could be recorded in.
    pub fn can_record_rejects(self) -> bool {
        matches!(
            self,
            LimiterKind::FixedWindow
                | LimiterKind::SlidingLog
                | LimiterKind::SlidingWindowCounter
                | LimiterKind::Haproxy
        )
    }

    /// Whether the limit can be split across servers (`servers=K`): not for a real server's
    /// limiter, which is configured per server.
    pub fn can_split(self) -> bool {
        !Self::REAL.contains(&self) && !Self::LIBRARIES.contains(&self)
    }
}

/// A limiter as the user described it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LimiterSpec {
    /// The spec as written, reported back unchanged.
    pub text: String,
    /// The algorithm.
    pub kind: LimiterKind,
    /// Bucket capacity `B` (token bucket, GCRA) or nginx's `burst` (leaky bucket). `None`
    /// means the default: one window's worth, `L`, for buckets, and 0 for the leaky bucket.
    pub burst: Option<u64>,
    /// Refill or leak rate. `None` means `L` per `W`.
    pub rate: Option<Rate>,
    /// Whether rejected requests are recorded (sliding log, counters).
    pub record_rejects: bool,
    /// How many servers the limit is split across (1: not split).
    pub servers: u32,
    /// Meter or queue, for the leaky bucket; for nginx, `Meter` is `nodelay`.
    pub mode: LeakyMode,
    /// nginx's `delay=`: how many excess requests pass at once when not `nodelay` (0, nginx's
    /// default, delays every one).
    #[serde(default)]
    pub delay: u64,
    /// HAProxy's period (`http_req_rate(period)`), µs, a whole number of ms. `None`: `W`.
    #[serde(default)]
    pub period: Option<Micros>,
    /// HAProxy's limit `N`. `None`: `L`.
    #[serde(default)]
    pub limit: Option<u64>,
    /// `limits`' strategy (`None` for every other kind).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<LimitsStrategy>,
    /// vsthrottle's `block` or rate-limiter-flexible's `blockDuration`, µs: how long a key is
    /// denied everything after a denial (`None`: no block; every other kind).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block: Option<Micros>,
    /// redis-cell's `quantity`: the cells each request takes (`None`: 1; every other kind).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantity: Option<u64>,
    /// Gateways enforcing it together (`--gateways`), if more than the one limiter.
    #[cfg(feature = "fleet")]
    #[serde(default)]
    pub fleet: Option<FleetSpec>,
}

impl LimiterSpec {
    /// Parses `name[:key=value,...]`; a wrong one says what was wrong and what is accepted.
    ///
    /// ```
    /// use ratelab::LimiterSpec;
    ///
    /// let bucket = LimiterSpec::parse("token-bucket:burst=10").expect("valid");
    /// assert_eq!(bucket.burst, Some(10));
    /// let typo = LimiterSpec::parse("token-bukcet").unwrap_err().to_string();
    /// assert!(typo.contains("accepted are fixed-window, sliding-log"), "{typo}");
    /// ```
    pub fn parse(text: &str) -> Result<Self, Error> {
        let (name, pairs) = split_spec(text)?;
        let kind = LimiterKind::from_name(name)?;
        let mut spec = LimiterSpec {
            text: text.to_owned(),
            kind,
            burst: None,
            rate: None,
            // HAProxy's common recipe counts what it denies.
            record_rejects: kind == LimiterKind::Haproxy,
            servers: 1,
            // nginx without `nodelay` delays.
            mode: if kind == LimiterKind::Nginx {
                LeakyMode::Queue
            } else {
                LeakyMode::Meter
            },
            delay: 0,
            period: None,
            limit: None,
            strategy: (kind == LimiterKind::Limits).then_some(LimitsStrategy::FixedWindow),
            block: None,
            quantity: None,
            #[cfg(feature = "fleet")]
            fleet: None,
        };
        let mut mode_given = false;
        let (mut delay_given, mut nodelay) = (false, false);
        for (key, value) in pairs {
            let what = format!("{name}: {key}");
            match key {
                "rate" if kind == LimiterKind::Nginx => {
                    spec.rate = Some(parse_nginx_rate(&what, value)?)
                }
                "burst" if kind == LimiterKind::Nginx => {
                    spec.burst = Some(parse_count(&what, value, 0, MAX_BURST)?)
                }
                "delay" if kind == LimiterKind::Nginx => {
                    delay_given = true;
                    spec.delay = parse_count(&what, value, 0, MAX_BURST)?;
                }
                "nodelay" if kind == LimiterKind::Nginx => nodelay = parse_bool(&what, value)?,
                "period" if kind == LimiterKind::Haproxy => {
                    spec.period = Some(parse_haproxy_period(&what, value)?)
                }
                "limit" if kind == LimiterKind::Haproxy => {
                    spec.limit = Some(parse_count(&what, value, 1, MAX_BURST)?)
                }
                #[cfg(feature = "libraries")]
                "limit" | "max" if kind == LimiterKind::ExpressRateLimit => {
                    spec.limit = Some(parse_count(&what, value, 1, MAX_BURST)?)
                }
                #[cfg(feature = "libraries")]
                "window-ms" if kind == LimiterKind::ExpressRateLimit => {
                    // Above 2^31 − 1 ms Node shortens the store's timer to 1 ms and the limit
                    // stops working (the library only logs it).
                    let ms = parse_count(&what, value, 1, i32::MAX as u64)?;
                    spec.period = Some(ms * MS);
                }
                #[cfg(feature = "libraries")]
                "points" if kind == LimiterKind::RateLimiterFlexible => {
                    spec.limit = Some(parse_count(&what, value, 1, MAX_BURST)?)
                }
                #[cfg(feature = "libraries")]
                "duration" if kind == LimiterKind::RateLimiterFlexible => {
                    spec.period = Some(parse_flexible_seconds(&what, value)?)
                }
                #[cfg(feature = "libraries")]
                "block-duration" if kind == LimiterKind::RateLimiterFlexible => {
                    // 0 is the library's default: no block.
                    spec.block = if value == "0" {
                        None
                    } else {
                        Some(parse_flexible_seconds(&what, value)?)
                    };
                }
                #[cfg(feature = "libraries")]
                "r" if kind == LimiterKind::GoRate => {
                    spec.rate = Some(parse_go_rate(&what, value)?)
                }
                #[cfg(feature = "libraries")]
                "every" if kind == LimiterKind::GoRate => {
                    let per = crate::time::parse_duration(&what, value)?;
                    if per == 0 {
                        return Err(Error::invalid(
                            &what,
                            value,
                            "a duration above 0, like 100ms (rate.Every of 0 is no limit at all)",
                        ));
                    }
                    spec.rate = Some(Rate { count: 1, per });
                }
                #[cfg(feature = "libraries")]
                "b" if kind == LimiterKind::GoRate => {
                    spec.burst = Some(parse_count(&what, value, 0, MAX_BURST)?)
                }
                #[cfg(feature = "libraries")]
                "max-burst" if kind == LimiterKind::RedisCell => {
                    spec.burst = Some(parse_count(&what, value, 0, MAX_BURST)?)
                }
                #[cfg(feature = "libraries")]
                "count" if kind == LimiterKind::RedisCell => {
                    spec.limit = Some(parse_count(&what, value, 1, MAX_BURST)?)
                }
                #[cfg(feature = "libraries")]
                "limit" if kind == LimiterKind::Vsthrottle => {
                    spec.limit = Some(parse_count(&what, value, 1, MAX_BURST)?)
                }
                #[cfg(feature = "libraries")]
                "period" if kind == LimiterKind::Vsthrottle => {
                    let p = crate::time::parse_duration(&what, value)?;
                    if p < MS {
                        return Err(Error::invalid(&what, value, "a duration of at least 1ms (a period of 0 makes vsthrottle's arithmetic wrap)"));
                    }
                    spec.period = Some(p);
                }
                #[cfg(feature = "libraries")]
                "block" if kind == LimiterKind::Vsthrottle => {
                    let b = crate::time::parse_duration(&what, value)?;
                    spec.block = (b > 0).then_some(b);
                }
                #[cfg(feature = "libraries")]
                "rate" if kind == LimiterKind::Limits => {
                    let (amount, window) = parse_limits_rate(&what, value)?;
                    spec.limit = Some(amount);
                    spec.period = Some(window);
                }
                #[cfg(feature = "libraries")]
                "strategy" if kind == LimiterKind::Limits => {
                    spec.strategy = Some(LimitsStrategy::parse(&what, value)?)
                }
                #[cfg(feature = "libraries")]
                "quantity" if kind == LimiterKind::RedisCell => {
                    let q = parse_count(&what, value, 1, MAX_BURST)?;
                    spec.quantity = (q > 1).then_some(q);
                }
                #[cfg(feature = "libraries")]
                "period" if kind == LimiterKind::RedisCell => {
                    spec.period = Some(parse_count(&what, value, 1, 86_400 * 366)? * SECOND)
                }
                "burst" if kind.has_bucket() => {
                    let min = if kind == LimiterKind::LeakyBucket {
                        0
                    } else {
                        1
                    };
                    spec.burst = Some(parse_count(&what, value, min, MAX_BURST)?);
                }
                "rate" if kind.has_bucket() => spec.rate = Some(parse_rate(&what, value)?),
                "record-rejects" if kind.can_record_rejects() => {
                    spec.record_rejects = parse_bool(&what, value)?
                }
                "servers" if kind.can_split() => {
                    spec.servers = parse_count(&what, value, 1, MAX_SERVERS)? as u32
                }
                "mode" if kind == LimiterKind::LeakyBucket => {
                    mode_given = true;
                    spec.mode = match value {
                        "meter" => LeakyMode::Meter,
                        "queue" => LeakyMode::Queue,
                        _ => return Err(Error::invalid(&what, value, "meter or queue")),
                    }
                }
                _ => {
                    return Err(Error::unknown(
                        &format!("key for {name}"),
                        key,
                        &limiter_keys(kind),
                    ))
                }
            }
        }
        if nodelay && delay_given {
            return Err(Error::invalid(
                &format!("{name}: delay"),
                &format!("delay={},nodelay", spec.delay),
                "delay=N or nodelay, not both (nodelay lets every excess request through at once)",
            ));
        }
        if nodelay {
            spec.mode = LeakyMode::Meter;
        }
        if mode_given && spec.mode == LeakyMode::Queue && spec.servers > 1 {
            return Err(Error::invalid(
                &format!("{name}: servers"),
                &spec.servers.to_string(),
                "servers=1 with mode=queue (a split limit is modelled for rejecting limiters only)",
            ));
        }
        Ok(spec)
    }

    /// The burst, or its default: one window's worth, `limit`, for buckets, and 0 for the
    /// leaky bucket and nginx.
    pub fn burst_or(&self, limit: u64) -> u64 {
        self.burst.unwrap_or(match self.kind {
            LimiterKind::LeakyBucket | LimiterKind::Nginx => 0,
            _ => limit,
        })
    }

    /// nginx's rate: as given, or `limit` per `window` when the window is a second or a
    /// minute (nginx has no other unit).
    pub fn nginx_rate(&self, limit: u64, window: Micros) -> Result<Rate, Error> {
        match self.rate {
            Some(rate) => Ok(rate),
            None if window == SECOND || window == 60 * SECOND => Ok(Rate {
                count: limit,
                per: window,
            }),
            None => Err(Error::Missing {
                what: "limiter nginx".into(),
                key: "rate=Nr/s or rate=Nr/m (the window is neither 1s nor 1min, so nginx's rate cannot be L per W)".into(),
                example: "nginx:rate=100r/m,burst=20,nodelay".into(),
            }),
        }
    }

    /// HAProxy's period: as given, or the window, which must then be whole milliseconds.
    pub fn haproxy_period(&self, window: Micros) -> Result<Micros, Error> {
        match self.period {
            Some(p) => Ok(p),
            None => parse_haproxy_period("haproxy: period", &format_duration(window))
                .map_err(|_| Error::Missing {
                    what: "limiter haproxy".into(),
                    key: "period=DUR (the window is not a whole number of milliseconds from 2ms to 298h)".into(),
                    example: "haproxy:period=10s,limit=20".into(),
                }),
        }
    }

    /// Whether its windows open at a key's request (express-rate-limit's,
    /// rate-limiter-flexible's, `limits`' fixed window) rather than on a calendar.
    pub fn opens_at_a_request(&self) -> bool {
        match self.kind {
            LimiterKind::ExpressRateLimit | LimiterKind::RateLimiterFlexible => true,
            LimiterKind::Limits => {
                self.strategy.unwrap_or(LimitsStrategy::FixedWindow) == LimitsStrategy::FixedWindow
            }
            _ => false,
        }
    }

    /// For a limiter whose windows are the wall clock's (multiples of its period since the
    /// Unix epoch: `limits`' sliding-window counter, which reads `time.time()`), that period,
    /// `W` unless the spec sets its own; `None` for every other limiter (windows from a
    /// request, from the run's time 0, or none). A probe's model decides such a limiter at
    /// the wall clock's phase ([`crate::probe::wall_clock_phase`]).
    pub fn wall_clock_period(&self, window: Micros) -> Option<Micros> {
        (self.kind == LimiterKind::Limits
            && self.strategy == Some(LimitsStrategy::SlidingWindowCounter))
        .then(|| self.period.unwrap_or(window))
    }

    /// Whether admitted requests can leave later than they arrive: the leaky bucket as a
    /// queue, and nginx without `nodelay` with a `delay` below its `burst`.
    pub fn queues(&self) -> bool {
        self.mode == LeakyMode::Queue
            && match self.kind {
                LimiterKind::LeakyBucket => true,
                LimiterKind::Nginx => self.delay < self.burst.unwrap_or(0),
                _ => false,
            }
    }

    /// A spec of this kind with every default.
    pub fn of(kind: LimiterKind) -> Self {
        Self::parse(kind.name()).unwrap_or_else(|_| unreachable!("every kind name parses"))
    }
}

#[cfg(feature = "libraries")]
/// Go's `rate.Limit` as a decimal number of events a second (`r=10`, `r=0.5`, up to six
/// decimals), kept exactly as `count` per a power of ten seconds, so that the model's
/// `float64` is the one Go parses from the same literal.
fn parse_go_rate(what: &str, text: &str) -> Result<Rate, Error> {
    let accepted =
        "events a second above 0 and at most 1000000, up to six decimals, like 10 or 0.5";
    let (whole, frac) = text.split_once('.').unwrap_or((text, ""));
    let ok = !whole.is_empty()
        && whole.bytes().all(|b| b.is_ascii_digit())
        && frac.len() <= 6
        && frac.bytes().all(|b| b.is_ascii_digit());
    let rate = ok
        .then(|| {
            let frac = frac.trim_end_matches('0');
            let count: u64 = format!("{whole}{frac}").parse().ok()?;
            let per = 10u64.pow(frac.len() as u32).checked_mul(SECOND)?;
            Some(Rate { count, per })
        })
        .flatten()
        .filter(|r| r.count > 0 && r.count as f64 / (r.per as f64 / 1e6) <= 1e6)
        .ok_or_else(|| Error::invalid(what, text, accepted))?;
    Ok(rate)
}

#[cfg(feature = "libraries")]
/// rate-limiter-flexible's `duration`: seconds, to the millisecond (the library multiplies
/// by 1,000), from 1 ms to 24 days (above about 24.8 days Node shortens its timers to 1 ms
/// and the limit stops working).
fn parse_flexible_seconds(what: &str, text: &str) -> Result<Micros, Error> {
    let accepted = "seconds from 0.001 to 2073600 (24 days), to the millisecond, like 1 or 0.5";
    let (whole, frac) = text.split_once('.').unwrap_or((text, ""));
    let ok = !whole.is_empty()
        && whole.bytes().all(|b| b.is_ascii_digit())
        && frac.len() <= 3
        && frac.bytes().all(|b| b.is_ascii_digit());
    let ms = ok
        .then(|| {
            let w: u64 = whole.parse().ok()?;
            let f: u64 = format!("{frac:0<3}").parse().ok()?;
            w.checked_mul(1000)?.checked_add(f)
        })
        .flatten()
        .filter(|&ms| (1..=24 * 86_400_000).contains(&ms))
        .ok_or_else(|| Error::invalid(what, text, accepted))?;
    Ok(ms * MS)
}

fn limiter_keys(kind: LimiterKind) -> String {
    match kind {
        #[cfg(feature = "libraries")]
        LimiterKind::ExpressRateLimit => return "limit=N (or max=N), window-ms=MS".into(),
        #[cfg(feature = "libraries")]
        LimiterKind::RateLimiterFlexible => {
            return "points=N, duration=SECONDS, block-duration=SECONDS".into()
        }
        #[cfg(feature = "libraries")]
        LimiterKind::GoRate => return "r=EVENTS_PER_SECOND or every=DUR, b=BURST".into(),
        #[cfg(feature = "libraries")]
        LimiterKind::RedisCell => {
            return "max-burst=B, count=N, period=SECONDS, quantity=Q".into()
        }
        #[cfg(feature = "libraries")]
        LimiterKind::Vsthrottle => return "limit=N, period=DUR, block=DUR".into(),
        #[cfg(feature = "libraries")]
        LimiterKind::Limits => {
            return "rate=AMOUNT/UNIT (limits' rate string, e.g. 10/minute), strategy=fixed-window|moving-window|sliding-window-counter".into()
        }
        LimiterKind::Nginx => return "rate=Nr/s|Nr/m, burst=B, delay=D, nodelay".into(),
        LimiterKind::Haproxy => {
            return "period=DUR, limit=N, record-rejects=true|false".into();
        }
        _ => {}
    }
    let mut keys = Vec::new();
    if kind.has_bucket() {
        keys.extend(["burst=B", "rate=N/DUR"]);
    }
    if kind.can_record_rejects() {
        keys.push("record-rejects=true|false");
    }
    keys.push("servers=K");
    if kind == LimiterKind::LeakyBucket {
        keys.push("mode=meter|queue");
    }
    keys.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::{Field, Filter, Format};
    use crate::time::SECOND;
    use crate::traffic::{FloodStart, RetryPolicy, Shape};

    #[test]
    fn parses_limiters() {
        let s = LimiterSpec::parse("token-bucket:burst=10,rate=100/1min").expect("valid");
        assert_eq!(s.kind, LimiterKind::TokenBucket);
        assert_eq!(s.burst, Some(10));
        assert_eq!(
            s.rate,
            Some(Rate {
                count: 100,
                per: 60 * SECOND
            })
        );
        assert_eq!(s.text, "token-bucket:burst=10,rate=100/1min");
        let s = LimiterSpec::parse("sliding-log:record-rejects=true,servers=4").expect("valid");
        assert!(s.record_rejects);
        assert_eq!(s.servers, 4);
        let s = LimiterSpec::parse("leaky-bucket:burst=0,mode=queue").expect("valid");
        assert_eq!(s.mode, LeakyMode::Queue);
        assert_eq!(s.burst, Some(0));
    }

    #[test]
    fn limiter_errors_name_the_part_and_what_is_accepted() {
        let check = |spec: &str, needles: &[&str]| {
            let msg = LimiterSpec::parse(spec).expect_err(spec).to_string();
            for n in needles {
                assert!(msg.contains(n), "{spec}: {msg} lacks {n}");
            }
        };
        check(
            "token-buckt",
            &["token-buckt", "token-bucket", "gcra", "leaky-bucket"],
        );
        check("token-bucket:burst=0", &["burst", "'0'", "from 1 to"]);
        check("token-bucket:burst=-3", &["burst", "-3"]);
        check("token-bucket:burst=abc", &["burst", "abc"]);
        check(
            "token-bucket:record-rejects=true",
            &["record-rejects", "burst=B"],
        );
        check(
            "sliding-log:burst=5",
            &["burst", "key for sliding-log", "record-rejects"],
        );
        check("fixed-window:servers=0", &["servers", "from 1"]);
        check("leaky-bucket:mode=fast", &["mode", "meter or queue"]);
        check("gcra:rate=100", &["rate", "N/DUR"]);
        check("gcra:rate=0/1min", &["rate", "N/DUR"]);
        check("gcra:rate=5/0s", &["rate"]);
        check("gcra:burst", &["burst", "key=value"]);
        check("gcra:burst=1,burst=2", &["burst", "each key once"]);
        check(
            "leaky-bucket:servers=2,mode=queue",
            &["servers", "mode=queue"],
        );
        check("", &["spec"]);
        check("nginx:rate=7r/h", &["rate", "7r/h", "Nr/s or Nr/m"]);
        check("nginx:rate=7/1min", &["rate", "Nr/s or Nr/m"]);
        check("nginx:rate=0r/s", &["rate", "from 1"]);
        check(
            "nginx:burst=5,delay=2,nodelay",
            &["delay=N or nodelay, not both"],
        );
        check("nginx:servers=2", &["servers", "key for nginx", "nodelay"]);
        check("nginx:mode=queue", &["mode", "rate=Nr/s|Nr/m"]);
        check("haproxy:period=1500us", &["period", "whole milliseconds"]);
        check("haproxy:period=1ms", &["period", "from 2ms"]);
        check("haproxy:limit=0", &["limit", "from 1"]);
        check("haproxy:burst=3", &["burst", "period=DUR, limit=N"]);
    }

    #[test]
    fn parses_real_limiters_in_their_own_units() {
        let s = LimiterSpec::parse("nginx:rate=7r/m,burst=5,delay=2").expect("valid");
        assert_eq!(s.kind, LimiterKind::Nginx);
        assert_eq!(
            s.rate,
            Some(Rate {
                count: 7,
                per: 60 * SECOND
            })
        );
        assert_eq!((s.burst, s.delay, s.mode), (Some(5), 2, LeakyMode::Queue));
        assert!(s.queues());
        // nginx's bare word, and its default: every excess request waits.
        let s = LimiterSpec::parse("nginx:rate=10r/s,burst=5,nodelay").expect("valid");
        assert_eq!((s.mode, s.queues()), (LeakyMode::Meter, false));
        let s = LimiterSpec::parse("nginx").expect("valid");
        assert_eq!((s.mode, s.burst, s.delay), (LeakyMode::Queue, None, 0));
        assert!(!s.queues(), "no burst: nothing can wait");
        assert_eq!(
            s.nginx_rate(100, 60 * SECOND),
            Ok(Rate {
                count: 100,
                per: 60 * SECOND
            })
        );
        let e = s
            .nginx_rate(100, 30 * SECOND)
            .expect_err("no nginx unit for 30 s");
        assert!(e.to_string().contains("rate=Nr/s or rate=Nr/m"), "{e}");
        let s = LimiterSpec::parse("haproxy:period=10s,limit=20").expect("valid");
        assert_eq!(
            (s.period, s.limit, s.record_rejects),
            (Some(10 * SECOND), Some(20), true)
        );
        let s = LimiterSpec::parse("haproxy:record-rejects=false").expect("valid");
        assert_eq!(s.haproxy_period(60 * SECOND), Ok(60 * SECOND));
        assert!(!s.record_rejects);
        assert!(s.haproxy_period(1_500).is_err());
        assert_eq!(LimiterKind::from_name("haproxy"), Ok(LimiterKind::Haproxy));
        assert!(
            !LimiterKind::ALL.contains(&LimiterKind::Nginx),
            "the essays' six only"
        );
    }

    #[test]
    fn parses_traffic() {
        assert_eq!(
            TrafficSpec::parse("steady:load=0.8"),
            Ok(TrafficSpec::Steady { load: 0.8 })
        );
        assert_eq!(
            TrafficSpec::parse("steady:load=80%"),
            Ok(TrafficSpec::Steady { load: 0.8 })
        );
        assert_eq!(
            TrafficSpec::parse("page-loads:load=0.3"),
            Ok(TrafficSpec::Groups {
                shape: Shape::PageLoads,
                load: 0.3
            })
        );
        assert_eq!(
            TrafficSpec::parse("flood:start=30s"),
            Ok(TrafficSpec::Flood {
                start: FloodStart::Offset(30 * SECOND),
                every: 1_000,
                length: None
            })
        );
        assert_eq!(
            TrafficSpec::parse("flood:start=worst,every=2ms,for=5min"),
            Ok(TrafficSpec::Flood {
                start: FloodStart::Worst,
                every: 2_000,
                length: Some(300 * SECOND)
            })
        );
        assert_eq!(
            TrafficSpec::parse("retry:rate=30/1min,spike=200,at=5min,tries=4,every=1s"),
            Ok(TrafficSpec::Retry {
                rate: Rate {
                    count: 30,
                    per: 60 * SECOND
                },
                spike: 200,
                at: 300 * SECOND,
                tries: 4,
                every: SECOND,
                policy: RetryPolicy::default(),
                clients: 1,
                mix: Vec::new(),
            })
        );
        assert!(
            matches!(TrafficSpec::parse("replay:file=a.txt"), Ok(TrafficSpec::Replay(r)) if r.file == "a.txt")
        );
    }

    #[test]
    fn traffic_errors_name_the_part_and_what_is_accepted() {
        let check = |spec: &str, needles: &[&str]| {
            let msg = TrafficSpec::parse(spec).expect_err(spec).to_string();
            for n in needles {
                assert!(msg.contains(n), "{spec}: {msg} lacks {n}");
            }
        };
        check("stedy", &["stedy", "steady", "page-loads", "replay"]);
        check("steady:load=NaN", &["load", "NaN", "above 0"]);
        check("steady:load=inf", &["load", "inf"]);
        check("steady:load=-1", &["load", "-1"]);
        check("steady:load=0", &["load"]);
        check("steady:load=101", &["load", "at most 100"]);
        check("steady:load=1e3", &["load"]);
        check("steady:rate=5", &["key for steady", "rate", "load=X"]);
        check("flood:start=soon", &["flood: start", "soon", "worst"]);
        check("flood:every=0ms", &["flood: every"]);
        check("flood:for=0s", &["flood: for"]);
        check("retry:tries=0", &["retry: tries", "from 1"]);
        check("retry:spike=x", &["retry: spike"]);
        check("replay", &["replay", "file=PATH"]);
        check(
            "replay:file=a,format=csv",
            &["replay: format", "csv", "seconds, ms, iso"],
        );
        check(
            "replay:file=a,field=agent:x",
            &["replay: field", "agent:x", "user-agent"],
        );
        check(
            "replay:file=a,field=status",
            &["replay: field", "NAME:VALUE"],
        );
        check(
            "replay:file=a,field=status:",
            &["replay: field", "NAME:VALUE"],
        );
        check("replay:file=a,client=", &["replay: client"]);
        check(
            "replay:file=a,client=1.2.3.4,field=status:200",
            &["not both"],
        );
        check(
            "replay:file=a,format=seconds,client=1.2.3.4",
            &["replay: format", "access-log"],
        );
        check(
            "replay:file=a,speed=2",
            &[
                "key for replay",
                "speed",
                "format=",
                "client=IP",
                "field=NAME:VALUE",
            ],
        );
        check("boundary-burst:before=0s", &["boundary-burst: before"]);
        check(
            "boundary-burst:first=100000001",
            &["boundary-burst: first", "from 0 to 100000000"],
        );
        check("boundary-burst:second=-1", &["boundary-burst: second"]);
    }

    #[test]
    fn parses_replay_formats_and_filters() {
        let replay = |spec: &str| match TrafficSpec::parse(spec) {
            Ok(TrafficSpec::Replay(r)) => r,
            other => panic!("{spec}: {other:?}"),
        };
        let r = replay("replay:file=a.txt");
        assert_eq!(
            (r.file.as_str(), r.format, &r.filter),
            ("a.txt", Format::Auto, &None)
        );
        assert!(r.times.is_empty());
        for (name, format) in [
            ("auto", Format::Auto),
            ("seconds", Format::Seconds),
            ("ms", Format::Millis),
            ("iso", Format::Iso8601),
            ("access-log", Format::AccessLog),
        ] {
            assert_eq!(
                replay(&format!("replay:file=a,format={name}")).format,
                format
            );
        }
        let r = replay("replay:file=access.log,client=203.0.113.7");
        assert_eq!(
            r.filter,
            Some(Filter {
                field: Field::Host,
                value: "203.0.113.7".into()
            })
        );
        let r = replay("replay:file=access.log,format=access-log,field=user-agent:curl/8.0");
        assert_eq!(
            r.filter,
            Some(Filter {
                field: Field::UserAgent,
                value: "curl/8.0".into()
            })
        );
        assert_eq!(r.format, Format::AccessLog);
        // The value may hold colons (IPv6, times).
        let r = replay("replay:file=a,field=host:2001:db8::1");
        assert_eq!(r.filter.map(|f| f.value), Some("2001:db8::1".to_owned()));
    }
}
