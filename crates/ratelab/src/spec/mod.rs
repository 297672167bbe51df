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

mod retry;

pub use retry::{group_keys, policy_keys, MAX_CLIENTS, MAX_GROUPS};

use crate::error::Error;
use crate::import::{Field, Filter, Format, FIELD_NAMES, FORMAT_NAMES};
use crate::limiter::{LeakyMode, Rate};
use crate::time::{format_duration, parse_duration, Micros, MS, SECOND};
use crate::traffic::{ClientGroup, FloodStart, RetryPolicy, Shape};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

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
        }
    }

    /// The kind with this spec name.
    pub fn from_name(name: &str) -> Result<Self, Error> {
        let every = || Self::ALL.into_iter().chain(Self::REAL);
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
        !Self::REAL.contains(&self)
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

fn limiter_keys(kind: LimiterKind) -> String {
    match kind {
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

/// Where replayed timestamps come from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Replay {
    /// The file they were read from, for the report (the core reads no files).
    pub file: String,
    /// Absolute times in µs, sorted. Empty until the caller has read the file.
    pub times: Arc<[Micros]>,
    /// How the file's lines are read (`format=`), for [`crate::import`].
    #[serde(default)]
    pub format: Format,
    /// Which access-log lines are kept (`client=` or `field=`); `None` keeps all.
    #[serde(default)]
    pub filter: Option<Filter>,
}

/// Traffic as the user described it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "name", rename_all = "kebab-case")]
pub enum TrafficSpec {
    /// Independent arrivals (Poisson) at `load · L / W`.
    Steady {
        /// Average load as a share of the limit.
        load: f64,
    },
    /// Groups of requests (Poisson group starts, geometric sizes, uniform within the span).
    Groups {
        /// Which group shape.
        shape: Shape,
        /// Average load as a share of the limit.
        load: f64,
    },
    /// Heavy-tailed active periods (Pareto, α = 1.5), busy a share of the time, Poisson at
    /// the average rate over that share while active.
    OnOff {
        /// Average load as a share of the limit.
        load: f64,
        /// The mean active period (30 s unless given).
        active: Micros,
        /// The share of time active (0.2 unless given): the rate while active is the
        /// average's `1 / busy` times.
        busy: f64,
    },
    /// Quiet for one window, then one request per `every` for `length`.
    Flood {
        /// Where in the window the flood starts.
        start: FloodStart,
        /// The gap between requests.
        every: Micros,
        /// How long it lasts; `None` means three windows.
        length: Option<Micros>,
    },
    /// The two-tick attack: `L` requests `before` the end of a window and `L` `after` it.
    BoundaryBurst {
        /// How long before the boundary the first tick comes.
        before: Micros,
        /// How long after the boundary the second tick comes.
        after: Micros,
        /// Requests at the first tick (`None`: the limit).
        first: Option<u64>,
        /// Requests at the second tick (`None`: the limit).
        second: Option<u64>,
    },
    /// A steady client with a one-off spike whose rejected requests retry.
    Retry {
        /// The steady client's rate.
        rate: Rate,
        /// The spike's size.
        spike: u64,
        /// When the spike comes.
        at: Micros,
        /// Tries per request in all, the first one included.
        tries: u32,
        /// The gap between tries (`policy=fixed`).
        every: Micros,
        /// How it backs off, jitters, budgets and honours `Retry-After`.
        #[serde(default, skip_serializing_if = "RetryPolicy::is_classic")]
        #[cfg_attr(not(feature = "clients"), serde(skip))]
        policy: RetryPolicy,
        /// How many such clients share the key, each with its own seed (`clients=M`).
        #[serde(default = "one", skip_serializing_if = "is_one")]
        #[cfg_attr(not(feature = "clients"), serde(skip))]
        clients: u32,
        /// Further groups of clients on the same key, each with its own tries and policy
        /// (`+clients=M,...` after the spec): a mix. Empty for a fleet of one policy.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        #[cfg_attr(not(feature = "mix"), serde(skip))]
        mix: Vec<ClientGroup>,
    },
    /// A recorded list of timestamps.
    Replay(Replay),
}

/// Serde's default client count.
#[cfg_attr(not(feature = "clients"), allow(dead_code))]
fn one() -> u32 {
    1
}

/// Whether a client count is serde's default.
#[allow(clippy::trivially_copy_pass_by_ref)]
#[cfg_attr(not(feature = "clients"), allow(dead_code))]
fn is_one(n: &u32) -> bool {
    *n == 1
}

const TRAFFIC_NAMES: &str =
    "steady, small-bursts, page-loads, big-bursts, on-off, flood, boundary-burst, retry, replay";

/// The largest accepted burst.
pub const MAX_BURST: u64 = 10_000_000;
/// The largest accepted server count.
pub const MAX_SERVERS: u64 = 1_000;
/// The largest accepted load, as a share of the limit.
pub const MAX_LOAD: f64 = 100.0;
/// The most tries a retrying request may have.
pub const MAX_TRIES: u64 = 1_000;
/// The largest rate count `N` in `rate=N/DUR`.
pub const MAX_RATE_COUNT: u64 = 1_000_000;

impl TrafficSpec {
    /// Parses `name[:key=value,...]`.
    pub fn parse(text: &str) -> Result<Self, Error> {
        // A mix of retrying clients: the spec, then `+clients=M,...` groups.
        // (Only after `retry:`: a replayed file's name may hold a `+`.)
        #[cfg(feature = "mix")]
        if let Some(("retry", rest)) = text.trim().split_once(':') {
            if let Some((head, groups)) = rest.split_once('+') {
                let mut spec = TrafficSpec::parse(&format!("retry:{head}"))?;
                if let TrafficSpec::Retry { clients, mix, .. } = &mut spec {
                    retry::parse_mix(*clients, mix, groups.split('+'))?;
                }
                return Ok(spec);
            }
        }
        let (name, pairs) = split_spec(text)?;
        let mut get = Keys::new(name, pairs);
        let spec = match name {
            "steady" => TrafficSpec::Steady { load: get.load()? },
            "small-bursts" | "page-loads" | "big-bursts" => TrafficSpec::Groups {
                shape: match name {
                    "small-bursts" => Shape::SmallBursts,
                    "page-loads" => Shape::PageLoads,
                    _ => Shape::BigBursts,
                },
                load: get.load()?,
            },
            "on-off" => TrafficSpec::OnOff {
                load: get.load()?,
                active: get.duration_min("active", ON_ACTIVE, MS)?,
                busy: match get.take("busy") {
                    None => ON_BUSY,
                    Some(v) => parse_share("on-off: busy", v)?,
                },
            },
            "flood" => TrafficSpec::Flood {
                start: match get.take("start") {
                    None | Some("worst") => FloodStart::Worst,
                    Some(v) => {
                        FloodStart::Offset(parse_duration("flood: start", v).map_err(|_| {
                            Error::invalid("flood: start", v, "a duration (e.g. 30s) or worst")
                        })?)
                    }
                },
                every: get.duration_min("every", 1_000, 1)?,
                length: get
                    .take("for")
                    .map(|v| parse_positive_duration("flood: for", v))
                    .transpose()?,
            },
            "boundary-burst" => TrafficSpec::BoundaryBurst {
                before: get.duration_min("before", 500_000, 1)?,
                after: get.duration_min("after", 500_000, 0)?,
                first: get.count("first", 0, MAX_TICK)?,
                second: get.count("second", 0, MAX_TICK)?,
            },
            "retry" => retry::parse_retry(&mut get)?,
            "replay" => TrafficSpec::Replay(parse_replay(&mut get)?),
            _ => return Err(Error::unknown("traffic", name, TRAFFIC_NAMES)),
        };
        get.finish(&spec)?;
        Ok(spec)
    }

    /// The keys this traffic accepts, for messages.
    fn keys(&self) -> &'static str {
        match self {
            TrafficSpec::Steady { .. } | TrafficSpec::Groups { .. } => "load=X",
            TrafficSpec::OnOff { .. } => "load=X, active=DUR, busy=SHARE",
            TrafficSpec::Flood { .. } => "start=DUR|worst, every=DUR, for=DUR",
            TrafficSpec::BoundaryBurst { .. } => "before=DUR, after=DUR, first=N, second=N",
            TrafficSpec::Retry { .. } => retry::RETRY_KEYS,
            TrafficSpec::Replay(_) => {
                "file=PATH, format=auto|seconds|ms|iso|access-log, client=IP, field=NAME:VALUE"
            }
        }
    }

    /// The spec name.
    pub fn name(&self) -> &'static str {
        match self {
            TrafficSpec::Steady { .. } => "steady",
            TrafficSpec::Groups {
                shape: Shape::SmallBursts,
                ..
            } => "small-bursts",
            TrafficSpec::Groups {
                shape: Shape::PageLoads,
                ..
            } => "page-loads",
            TrafficSpec::Groups {
                shape: Shape::BigBursts,
                ..
            } => "big-bursts",
            TrafficSpec::OnOff { .. } => "on-off",
            TrafficSpec::Flood { .. } => "flood",
            TrafficSpec::BoundaryBurst { .. } => "boundary-burst",
            TrafficSpec::Retry { .. } => "retry",
            TrafficSpec::Replay(_) => "replay",
        }
    }

    /// Whether the client reacts to decisions (so each limiter sees its own retries).
    pub fn closed_loop(&self) -> bool {
        matches!(self, TrafficSpec::Retry { .. })
    }

    /// A retrying fleet's groups: the spec's own, then its mix's (none for other traffic).
    #[cfg(feature = "mix")]
    pub fn client_groups(&self) -> impl Iterator<Item = ClientGroup> + '_ {
        let mix = match self {
            TrafficSpec::Retry { mix, .. } => mix.as_slice(),
            _ => &[],
        };
        self.own_group().into_iter().chain(mix.iter().copied())
    }

    /// A retrying fleet's groups: without the core's `mix` feature no spec has a mix, so its
    /// own group alone.
    #[cfg(not(feature = "mix"))]
    pub fn client_groups(&self) -> impl Iterator<Item = ClientGroup> + '_ {
        self.own_group().into_iter()
    }

    /// A retrying spec's own group of clients, before any mix.
    fn own_group(&self) -> Option<ClientGroup> {
        match self {
            TrafficSpec::Retry {
                tries,
                every,
                policy,
                clients,
                ..
            } => Some(ClientGroup {
                clients: *clients,
                tries: *tries,
                every: *every,
                policy: *policy,
            }),
            _ => None,
        }
    }

    /// How many clients a retrying fleet has in all, every group's (0 for other traffic).
    pub fn client_count(&self) -> u64 {
        self.client_groups().map(|g| u64::from(g.clients)).sum()
    }
}

/// The keys of `replay`: `file=PATH` (required), `format=`, and `client=IP` or
/// `field=NAME:VALUE`.
fn parse_replay(get: &mut Keys<'_>) -> Result<Replay, Error> {
    let file = match get.take("file") {
        Some(file) if !file.is_empty() => file.to_owned(),
        _ => {
            return Err(Error::Missing {
                what: "traffic replay".into(),
                key: "file=PATH".into(),
                example: "replay:file=arrivals.txt".into(),
            })
        }
    };
    let format = match get.take("format") {
        None => Format::Auto,
        Some(v) => {
            Format::from_name(v).map_err(|_| Error::unknown("replay: format", v, FORMAT_NAMES))?
        }
    };
    let client = get.take("client");
    let field = get.take("field");
    let filter = match (client, field) {
        (None, None) => None,
        (Some(_), Some(_)) => {
            return Err(Error::invalid(
                "replay: filter",
                "client=..., field=...",
                "client=IP or field=NAME:VALUE, not both",
            ))
        }
        (Some(ip), None) => {
            if ip.is_empty() {
                return Err(Error::invalid(
                    "replay: client",
                    ip,
                    "the client's address as the log writes it, e.g. client=203.0.113.7",
                ));
            }
            Some(Filter {
                field: Field::Host,
                value: ip.to_owned(),
            })
        }
        (None, Some(pair)) => {
            let accepted = format!(
                "NAME:VALUE with NAME one of {FIELD_NAMES} and a value to match exactly, e.g. field=status:429"
            );
            let (name, value) = pair
                .split_once(':')
                .filter(|(_, v)| !v.is_empty())
                .ok_or_else(|| Error::invalid("replay: field", pair, &accepted))?;
            let field = Field::from_name(name)
                .map_err(|_| Error::invalid("replay: field", pair, &accepted))?;
            Some(Filter {
                field,
                value: value.to_owned(),
            })
        }
    };
    if filter.is_some() && !matches!(format, Format::Auto | Format::AccessLog) {
        return Err(Error::invalid(
            "replay: format",
            format.name(),
            "access-log or auto with client= or field= (they filter access-log fields)",
        ));
    }
    Ok(Replay {
        file,
        times: Arc::from(Vec::new()),
        format,
        filter,
    })
}

/// The most requests a boundary burst's tick may hold (`first`, `second`): a hundred times
/// the largest limit.
pub const MAX_TICK: u64 = 100_000_000;

/// Key-value pairs of a traffic spec, taken one by one so that leftovers can be reported.
struct Keys<'a> {
    name: &'a str,
    pairs: Vec<(&'a str, &'a str)>,
}

impl<'a> Keys<'a> {
    fn new(name: &'a str, pairs: Vec<(&'a str, &'a str)>) -> Self {
        Keys { name, pairs }
    }

    fn take(&mut self, key: &str) -> Option<&'a str> {
        let i = self.pairs.iter().position(|(k, _)| *k == key)?;
        Some(self.pairs.remove(i).1)
    }

    fn load(&mut self) -> Result<f64, Error> {
        match self.take("load") {
            None => Ok(0.8),
            Some(v) => parse_load(&format!("{}: load", self.name), v),
        }
    }

    /// A whole number in `min..=max`, if given.
    fn count(&mut self, key: &str, min: u64, max: u64) -> Result<Option<u64>, Error> {
        let what = format!("{}: {key}", self.name);
        self.take(key)
            .map(|v| parse_count(&what, v, min, max))
            .transpose()
    }

    fn duration_min(&mut self, key: &str, default: Micros, min: Micros) -> Result<Micros, Error> {
        let what = format!("{}: {key}", self.name);
        match self.take(key) {
            None => Ok(default),
            Some(v) => {
                let d = parse_duration(&what, v)?;
                if d < min {
                    let least = format!("a duration of at least {}", format_duration(min.max(1)));
                    return Err(Error::invalid(&what, v, &least));
                }
                Ok(d)
            }
        }
    }

    fn finish(self, spec: &TrafficSpec) -> Result<(), Error> {
        match self.pairs.first() {
            None => Ok(()),
            Some((k, _)) => Err(Error::unknown(
                &format!("key for {}", self.name),
                k,
                spec.keys(),
            )),
        }
    }
}

/// The `key=value` pairs of a spec, in order.
type Pairs<'a> = Vec<(&'a str, &'a str)>;

/// Splits `name[:key=value,...]`, rejecting repeated keys and pairs without `=`.
fn split_spec(text: &str) -> Result<(&str, Pairs<'_>), Error> {
    let text = text.trim();
    let (name, rest) = match text.split_once(':') {
        Some((n, r)) => (n, Some(r)),
        None => (text, None),
    };
    if name.is_empty() {
        return Err(Error::invalid(
            "spec",
            text,
            "name[:key=value,...], e.g. token-bucket:burst=10",
        ));
    }
    match rest {
        Some(rest) => Ok((name, split_pairs(name, rest)?)),
        None => Ok((name, Vec::new())),
    }
}

/// Splits `key=value,...` of spec `name`, rejecting repeated keys and pairs without `=`.
fn split_pairs<'a>(name: &str, rest: &'a str) -> Result<Pairs<'a>, Error> {
    let mut pairs: Vec<(&str, &str)> = Vec::new();
    for part in rest.split(',') {
        // nginx's one bare word.
        let (k, v) = if part.trim() == "nodelay" {
            ("nodelay", "true")
        } else {
            part.split_once('=')
                .ok_or_else(|| Error::invalid(&format!("{name}: option"), part, "key=value"))?
        };
        let (k, v) = (k.trim(), v.trim());
        if pairs.iter().any(|(seen, _)| *seen == k) {
            return Err(Error::invalid(
                &format!("{name}: {k}"),
                part,
                "each key once",
            ));
        }
        pairs.push((k, v));
    }
    Ok(pairs)
}

fn names<'a>(it: impl Iterator<Item = &'a str>) -> String {
    it.collect::<Vec<_>>().join(", ")
}

/// Parses a whole number in `min..=max`.
pub fn parse_count(what: &str, text: &str, min: u64, max: u64) -> Result<u64, Error> {
    let accepted = || format!("a whole number from {min} to {max}");
    let n: u64 = text
        .parse()
        .map_err(|_| Error::invalid(what, text, &accepted()))?;
    if n < min || n > max {
        return Err(Error::invalid(what, text, &accepted()));
    }
    Ok(n)
}

/// Parses a load: a share of the limit like `0.8`, or a percentage like `80%`.
pub fn parse_load(what: &str, text: &str) -> Result<f64, Error> {
    let accepted = "a share of the limit above 0 and at most 100, like 0.8 or 80%";
    parse_fraction(what, text, MAX_LOAD, accepted)
}

/// A plain decimal or a percentage above 0 and at most `most`, else `accepted` in the message.
fn parse_fraction(what: &str, text: &str, most: f64, accepted: &str) -> Result<f64, Error> {
    let (number, scale) = match text.strip_suffix('%') {
        Some(n) => (n, 100.0),
        None => (text, 1.0),
    };
    // Only plain decimals: no `inf`, `NaN` or exponents.
    let v = crate::decimal::parse(number).ok_or_else(|| Error::invalid(what, text, accepted))?;
    let v = v / scale;
    if !(v > 0.0 && v <= most) {
        return Err(Error::invalid(what, text, accepted));
    }
    Ok(v)
}

/// The on/off client's mean active period unless given: 30 s.
pub const ON_ACTIVE: Micros = 30 * SECOND;
/// The on/off client's share of time active unless given: 20%.
pub const ON_BUSY: f64 = 0.2;

/// Parses a share of time above 0 and at most 1: `0.2` or `20%`.
pub fn parse_share(what: &str, text: &str) -> Result<f64, Error> {
    parse_fraction(
        what,
        text,
        1.0,
        "a share above 0 and at most 1, like 0.2 or 20%",
    )
}

/// Parses `N/DUR`, e.g. `100/1min` or `100/min`.
pub fn parse_rate(what: &str, text: &str) -> Result<Rate, Error> {
    let accepted = format!("N/DUR with N from 1 to {MAX_RATE_COUNT}, like 100/1min or 5/s");
    let (n, d) = text
        .split_once('/')
        .ok_or_else(|| Error::invalid(what, text, &accepted))?;
    let count = parse_count(what, n, 1, MAX_RATE_COUNT)
        .map_err(|_| Error::invalid(what, text, &accepted))?;
    let per = parse_duration(what, d).map_err(|_| Error::invalid(what, text, &accepted))?;
    if per == 0 {
        return Err(Error::invalid(what, text, &accepted));
    }
    Ok(Rate { count, per })
}

/// Parses nginx's `rate=`: `Nr/s` or `Nr/m`, kept as `N` per second or minute.
pub fn parse_nginx_rate(what: &str, text: &str) -> Result<Rate, Error> {
    let accepted =
        format!("nginx's Nr/s or Nr/m with N from 1 to {MAX_RATE_COUNT}, like 10r/s or 100r/m");
    let (n, per) = if let Some(n) = text.strip_suffix("r/s") {
        (n, SECOND)
    } else if let Some(n) = text.strip_suffix("r/m") {
        (n, 60 * SECOND)
    } else {
        return Err(Error::invalid(what, text, &accepted));
    };
    let count = parse_count(what, n, 1, MAX_RATE_COUNT)
        .map_err(|_| Error::invalid(what, text, &accepted))?;
    Ok(Rate { count, per })
}

/// The longest HAProxy period accepted: HAProxy keeps `remain` in a signed 32-bit count of ms.
pub const MAX_HAPROXY_PERIOD: Micros = (i32::MAX as u64 / 2) * 1000;

/// Parses HAProxy's period: a duration of whole milliseconds, at least 2 ms.
fn parse_haproxy_period(what: &str, text: &str) -> Result<Micros, Error> {
    let accepted =
        "a duration of whole milliseconds from 2ms to 298h, like 10s (HAProxy counts in ms)";
    let d = parse_duration(what, text).map_err(|_| Error::invalid(what, text, accepted))?;
    if d % 1000 != 0 || !(2000..=MAX_HAPROXY_PERIOD).contains(&d) {
        return Err(Error::invalid(what, text, accepted));
    }
    Ok(d)
}

fn parse_positive_duration(what: &str, text: &str) -> Result<Micros, Error> {
    match parse_duration(what, text)? {
        0 => Err(Error::invalid(what, text, "a duration above zero")),
        d => Ok(d),
    }
}

fn parse_bool(what: &str, text: &str) -> Result<bool, Error> {
    match text {
        "true" | "1" | "yes" | "on" => Ok(true),
        "false" | "0" | "no" | "off" => Ok(false),
        _ => Err(Error::invalid(what, text, "true or false")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
