//! The traffic part of the scenario language: every shape a client can take, as the CLI, the
//! page's URL and the tests write it, parsed into [`TrafficSpec`].

use super::parse::{parse_positive_duration, parse_share, split_spec, Keys, MAX_TICK};
use super::retry;
use crate::error::Error;
use crate::import::{Field, Filter, Format, FIELD_NAMES, FORMAT_NAMES};
use crate::limiter::Rate;
use crate::time::{parse_duration, Micros, MS, SECOND};
use crate::traffic::{ClientGroup, FloodStart, RetryPolicy, Shape};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The on/off client's mean active period unless given: 30 s.
pub const ON_ACTIVE: Micros = 30 * SECOND;
/// The on/off client's share of time active unless given: 20%.
pub const ON_BUSY: f64 = 0.2;

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

impl TrafficSpec {
    /// Parses `name[:key=value,...]`. A bad spec's error names the part and what is accepted.
    ///
    /// ```
    /// use ratelab::spec::TrafficSpec;
    ///
    /// let steady = TrafficSpec::parse("steady:load=0.8")?;
    /// assert_eq!(steady, TrafficSpec::Steady { load: 0.8 });
    /// // A retrying client keeps its keys: 25 a minute, tries a second apart, 5 in all.
    /// assert!(TrafficSpec::parse("retry:rate=25/1min,tries=5,every=1s")?.closed_loop());
    /// let bad = TrafficSpec::parse("steady:lode=0.8").unwrap_err().to_string();
    /// assert!(bad.contains("lode") && bad.contains("load=X"), "{bad}");
    /// # Ok::<(), ratelab::Error>(())
    /// ```
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
            "retry" => {
                let k = retry::parse_retry(&mut get)?;
                TrafficSpec::Retry {
                    rate: k.rate,
                    spike: k.spike,
                    at: k.at,
                    tries: k.tries,
                    every: k.every,
                    policy: k.policy,
                    clients: k.clients,
                    mix: Vec::new(),
                }
            }
            "replay" => TrafficSpec::Replay(parse_replay(&mut get)?),
            _ => return Err(Error::unknown("traffic", name, TRAFFIC_NAMES)),
        };
        get.finish(spec.keys())?;
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
