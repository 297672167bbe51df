//! A figure's controls, typed: which limiter, which traffic, which attack, which form of the
//! leaky bucket, and nginx's `limit_req` in nginx's own units ([`NginxConf`]). The page sends them as a plain object whose names (`"token-bucket"`,
//! `"boundary-burst"`) are these enums' serde names, so a name the page does not know is
//! refused where it enters, and nothing downstream compares strings.

pub use crate::library::is_library;
use ratelab::limiter::LeakyMode;
use ratelab::sim::Scenario;
use ratelab::spec::{LimiterKind, LimiterSpec, Replay, TrafficSpec};
use ratelab::time::{format_duration, Micros, MINUTE, SECOND};
pub use ratelab::traffic::Jitter;
use ratelab::Error;
use serde::{Deserialize, Serialize};

mod nginx;
pub use nginx::{nginx_fields, NginxConf, RateUnit};

/// Serde for a [`Named`] field: its name as a string, read back through [`Named::from_name`].
/// Leaner in wasm than serde's derived enum code (the page's first load is 2 KB smaller), and
/// the message for an unknown name lists the names accepted.
pub mod named {
    use super::Named;
    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes the name.
    pub fn serialize<T: Named, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(v.name())
    }

    /// Reads a name.
    pub fn deserialize<'de, T: Named, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
        let name = String::deserialize(d)?;
        T::from_name(&name).ok_or_else(|| {
            D::Error::custom(format!(
                "unknown name '{name}': accepted are {}",
                T::names()
            ))
        })
    }
}

/// The enums the page offers by name: each lists its values in the page's order and knows
/// each one's name, from which the link codec and the page's menus are made.
pub trait Named: Copy + PartialEq + 'static {
    /// Every value, in the page's order.
    const ALL: &'static [Self];
    /// The name in links, menus and specs.
    fn name(self) -> &'static str;
    /// The value with this name.
    fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|v| v.name() == name)
    }
    /// Every name, comma-separated, for messages.
    fn names() -> String {
        Self::ALL
            .iter()
            .map(|v| v.name())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// One of an enum's names, or the sentence naming `what` was given and what is offered (the
/// form's menus offer only those).
pub(crate) fn by_name<T: Named>(text: &str, what: &str) -> Result<T, String> {
    T::from_name(text).ok_or_else(|| {
        format!(
            "{what} '{}' is not one ratelab offers: choose one of {}",
            ratelab::text::shown(text, ratelab::text::SHOWN),
            T::names()
        )
    })
}

/// The limiters the lab offers, in its menu's order: the essays' six, nginx as configured
/// (in nginx's units), then the six libraries, each with its own settings as the command
/// line writes them ([`Controls::library`]). HAProxy is not offered. The libraries'
/// arithmetic is in the tools module, which the page loads when one is chosen: the main and
/// on-demand modules know their names, not their code ([`is_library`]).
pub const OFFERED: [LimiterKind; 13] = [
    LimiterKind::FixedWindow,
    LimiterKind::SlidingLog,
    LimiterKind::SlidingWindowCounter,
    LimiterKind::TokenBucket,
    LimiterKind::Gcra,
    LimiterKind::LeakyBucket,
    LimiterKind::Nginx,
    LimiterKind::ExpressRateLimit,
    LimiterKind::RateLimiterFlexible,
    LimiterKind::GoRate,
    LimiterKind::RedisCell,
    LimiterKind::Vsthrottle,
    LimiterKind::Limits,
];

impl Named for LimiterKind {
    const ALL: &'static [Self] = &OFFERED;
    fn name(self) -> &'static str {
        LimiterKind::name(self)
    }
}

impl Named for LeakyMode {
    const ALL: &'static [Self] = &[LeakyMode::Meter, LeakyMode::Queue];
    fn name(self) -> &'static str {
        match self {
            LeakyMode::Meter => "meter",
            LeakyMode::Queue => "queue",
        }
    }
}

/// The traffic a figure runs when no attack is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Traffic {
    /// Poisson arrivals.
    Steady,
    /// Groups of about 5.
    SmallBursts,
    /// Groups of about 20, like a page's assets.
    PageLoads,
    /// Groups of about 50.
    BigBursts,
    /// Busy and idle spells.
    OnOff,
    /// The reader's own file (never in a link: it stays in their browser).
    File,
}

impl Traffic {
    /// The generated shapes, the ones a link or the honest-client section may name.
    pub const SHAPES: &'static [Traffic] = &[
        Traffic::Steady,
        Traffic::SmallBursts,
        Traffic::PageLoads,
        Traffic::BigBursts,
        Traffic::OnOff,
    ];
}

impl Named for Traffic {
    const ALL: &'static [Self] = &[
        Traffic::Steady,
        Traffic::SmallBursts,
        Traffic::PageLoads,
        Traffic::BigBursts,
        Traffic::OnOff,
        Traffic::File,
    ];
    fn name(self) -> &'static str {
        match self {
            Traffic::Steady => "steady",
            Traffic::SmallBursts => "small-bursts",
            Traffic::PageLoads => "page-loads",
            Traffic::BigBursts => "big-bursts",
            Traffic::OnOff => "on-off",
            Traffic::File => "file",
        }
    }
}

/// The attack a figure runs instead of its honest traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attack {
    /// No attack: the honest traffic.
    None,
    /// Two ticks of `L` either side of the limiter's weak moment.
    BoundaryBurst,
    /// One request every millisecond from the worst moment on.
    Flood,
    /// A spike of `2L`, every rejected request retried each second.
    RetryStorm,
}

impl Named for Attack {
    const ALL: &'static [Self] = &[
        Attack::None,
        Attack::BoundaryBurst,
        Attack::Flood,
        Attack::RetryStorm,
    ];
    fn name(self) -> &'static str {
        match self {
            Attack::None => "none",
            Attack::BoundaryBurst => "boundary-burst",
            Attack::Flood => "flood",
            Attack::RetryStorm => "retry-storm",
        }
    }
}

/// How the retry storm's client backs off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backoff {
    /// Every second, the essays' client.
    Fixed,
    /// From 1 s, doubling, at most a minute.
    Exponential,
}

impl Named for Backoff {
    const ALL: &'static [Self] = &[Backoff::Fixed, Backoff::Exponential];
    fn name(self) -> &'static str {
        match self {
            Backoff::Fixed => "fixed",
            Backoff::Exponential => "exponential",
        }
    }
}

impl Named for Jitter {
    const ALL: &'static [Self] = &[
        Jitter::None,
        Jitter::Full,
        Jitter::Equal,
        Jitter::Decorrelated,
    ];
    fn name(self) -> &'static str {
        match self {
            Jitter::None => "none",
            Jitter::Full => "full",
            Jitter::Equal => "equal",
            Jitter::Decorrelated => "decorrelated",
        }
    }
}

/// The retry storm's client: how it backs off, its jitter, and whether it honours the
/// limiter's `Retry-After`. The default is the essays' client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Client {
    /// The gaps.
    pub backoff: Backoff,
    /// Their randomness.
    pub jitter: Jitter,
    /// Whether it waits for the limiter's `Retry-After`.
    pub honor: bool,
}

impl Default for Client {
    fn default() -> Self {
        Client {
            backoff: Backoff::Fixed,
            jitter: Jitter::None,
            honor: false,
        }
    }
}

impl Client {
    /// Its fields' text, space-separated: `exponential full honor` (`ignore` when it does not
    /// honour `Retry-After`). How the form and the wasm pass it both ways: one string rather
    /// than three fields (each field costs the main module serde code).
    pub fn fields(&self) -> String {
        format!(
            "{} {} {}",
            self.backoff.name(),
            self.jitter.name(),
            if self.honor { "honor" } else { "ignore" }
        )
    }

    /// The client of [`Client::fields`]' text, or which part is wrong and what it accepts.
    pub fn from_fields(text: &str) -> Result<Client, String> {
        let mut parts = text.split(' ');
        let mut next = || parts.next().unwrap_or_default();
        let (backoff, jitter, honor) = (next(), next(), next());
        Ok(Client {
            backoff: by_name(backoff, "Backoff")?,
            jitter: by_name(jitter, "Jitter")?,
            honor: match honor {
                "honor" => true,
                "ignore" => false,
                _ => {
                    return Err(format!(
                        "Retry-After '{}' is not one ratelab offers: choose one of honor, ignore",
                        ratelab::text::shown(honor, ratelab::text::SHOWN)
                    ))
                }
            },
        })
    }

    /// Its keys in a retry spec, after the essays' fixed gap (`every=1s`) or in its place:
    /// empty for the essays' client.
    pub fn spec_keys(&self) -> String {
        let mut keys = match self.backoff {
            Backoff::Fixed => ",every=1s".to_owned(),
            Backoff::Exponential => ",policy=exponential,base=1s,factor=2,cap=1min".to_owned(),
        };
        if self.jitter != Jitter::None {
            keys.push_str(&format!(",jitter={}", self.jitter.name()));
        }
        if self.honor {
            keys.push_str(",retry-after=honor");
        }
        keys
    }
}

/// [`Client`] through serde as its fields' text ([`Client::fields`]).
pub mod client_fields {
    use super::Client;
    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes the fields' text.
    pub fn serialize<S: Serializer>(v: &Client, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&v.fields())
    }

    /// Reads the fields' text.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Client, D::Error> {
        let text = String::deserialize(d)?;
        Client::from_fields(&text).map_err(D::Error::custom)
    }
}

/// The controls of a figure, as the page sends them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Controls {
    /// The limiter.
    #[serde(with = "named")]
    pub algorithm: LimiterKind,
    /// The capacity (burst) dial: `B` for buckets, nginx's `burst` for the leaky bucket.
    pub capacity: u64,
    /// `L`.
    pub limit: u64,
    /// `W` in seconds.
    pub window_s: u64,
    /// The honest traffic.
    #[serde(with = "named")]
    pub traffic: Traffic,
    /// Its load, as a share of the limit.
    pub load: f64,
    /// The seed.
    pub seed: u64,
    /// How long honest traffic runs.
    pub minutes: u64,
    /// The attack, if any.
    #[serde(with = "named")]
    pub attack: Attack,
    /// Whether the counters and logs record rejected requests.
    pub record_rejects: bool,
    /// The leaky bucket's form.
    #[serde(with = "named")]
    pub leaky_mode: LeakyMode,
    /// nginx's `limit_req`, for [`LimiterKind::Nginx`].
    #[serde(with = "nginx_fields")]
    pub nginx: NginxConf,
    /// The retry storm's client.
    #[serde(with = "client_fields")]
    pub client: Client,
    /// A library's own settings, as the command line writes them after its name
    /// (`r=10,b=5` for `go-rate`), for the libraries ([`is_library`]); empty: the library at
    /// the lab's limit and window.
    pub library: String,
    /// The reader's own traffic, when `traffic` is [`Traffic::File`]. Never read from the page's object:
    /// the handle that holds the file's times puts it here.
    #[serde(skip)]
    pub replay: Option<Replay>,
}

impl Default for Controls {
    fn default() -> Self {
        Controls {
            algorithm: LimiterKind::TokenBucket,
            capacity: 60,
            limit: 60,
            window_s: 60,
            traffic: Traffic::Steady,
            load: 0.8,
            seed: 1,
            minutes: 10,
            attack: Attack::None,
            record_rejects: false,
            leaky_mode: LeakyMode::Meter,
            nginx: NginxConf::default(),
            client: Client::default(),
            library: String::new(),
            replay: None,
        }
    }
}

/// The largest capacity the dial offers, as a multiple of the limit.
pub const CAPACITY_FACTOR: u64 = 2;

impl Controls {
    /// The figure the page opens on, as the essay opens: a fixed window under steady traffic,
    /// which serves every request (the metric people graph) while its busiest window is
    /// what the boundary burst then doubles.
    pub fn opening() -> Controls {
        Controls {
            algorithm: LimiterKind::FixedWindow,
            ..Controls::default()
        }
    }

    /// These controls with nginx's settings `n`.
    pub fn with_nginx(self, nginx: NginxConf) -> Controls {
        Controls { nginx, ..self }
    }

    /// The lab's controls for the limiter `spec` (as the command line writes it) at limit
    /// `limit` per window `window_us`, or why the lab cannot run it: the lab has the fixed
    /// window, the sliding log (recording rejects or not), the sliding-window counter, the
    /// token bucket, GCRA, the leaky bucket as a meter, nginx and the libraries, with windows
    /// of whole seconds up to an hour (a library's period need not be: it stays in its
    /// settings, and the lab's rule is the limit over whole seconds); not HAProxy.
    pub fn for_spec(spec: &str, limit: u64, window_us: Micros) -> Result<Controls, String> {
        let parsed = LimiterSpec::parse(spec).map_err(|e| e.to_string())?;
        let cannot = |why: &str| Err(format!("The lab does not run {spec}: {why}."));
        // A library keeps its own period in its settings; the lab's window, the rule it is
        // audited against, is whole seconds: `k` periods at `k` times the limit (1 per 100ms
        // is audited as 10 per 1s).
        let (limit, window_us) = if is_library(parsed.kind) && window_us % SECOND != 0 {
            let gcd = |mut a: Micros, mut b: Micros| {
                while b != 0 {
                    (a, b) = (b, a % b);
                }
                a
            };
            let k = SECOND / gcd(window_us, SECOND).max(1);
            (limit.saturating_mul(k), window_us.saturating_mul(k))
        } else {
            (limit, window_us)
        };
        let window_s = window_us / SECOND;
        if window_us % SECOND != 0 || !(1..=3_600).contains(&window_s) {
            return cannot(&format!(
                "its window of {} is not a whole number of seconds from 1 to 3600, which the lab's are",
                format_duration(window_us)
            ));
        }
        if !(1..=100_000).contains(&limit) {
            return cannot(&format!(
                "its limit of {limit} is not from 1 to 100000, which the lab's is"
            ));
        }
        let mut c = Controls {
            algorithm: parsed.kind,
            limit,
            window_s,
            ..Controls::default()
        };
        match parsed.kind {
            LimiterKind::FixedWindow | LimiterKind::SlidingWindowCounter => {}
            LimiterKind::SlidingLog => c.record_rejects = parsed.record_rejects,
            LimiterKind::TokenBucket | LimiterKind::Gcra => {
                c.capacity = parsed.burst.unwrap_or(limit);
            }
            LimiterKind::LeakyBucket => {
                if parsed.mode != LeakyMode::Meter {
                    return cannot("the lab's leaky bucket from here is a meter");
                }
                c.leaky_mode = LeakyMode::Meter;
                c.capacity = parsed.burst.unwrap_or(0);
            }
            LimiterKind::Nginx => {
                let rate = parsed.rate.ok_or("nginx's spec has a rate")?;
                let unit = match rate.per {
                    SECOND => RateUnit::PerSecond,
                    MINUTE => RateUnit::PerMinute,
                    _ => return cannot("its rate is not per second or per minute"),
                };
                c.nginx = NginxConf {
                    rate: rate.count,
                    unit,
                    burst: parsed.burst.unwrap_or(0),
                    delay: parsed.delay,
                    nodelay: parsed.mode == LeakyMode::Meter,
                };
            }
            kind if is_library(kind) => {
                // Its own settings, exactly as the spec has them.
                c.library = spec
                    .split_once(':')
                    .map_or("", |(_, keys)| keys)
                    .to_owned();
            }
            other => {
                return cannot(&format!(
                    "the lab's menu has the algorithms, nginx and the libraries, not {}; `ratelab simulate --limiter {spec}` runs it",
                    other.name()
                ))
            }
        }
        Ok(c)
    }

    /// The limiter spec these controls describe, as the CLI would write it.
    pub fn limiter_spec(&self) -> Result<LimiterSpec, Error> {
        let kind = self.algorithm;
        if kind == LimiterKind::Nginx {
            return LimiterSpec::parse(&format!("nginx:{}", self.nginx.spec_keys()));
        }
        let mut text = kind.name().to_owned();
        let mut keys = Vec::new();
        if kind.has_bucket() {
            keys.push(format!("burst={}", self.capacity));
        }
        if kind.can_record_rejects() && self.record_rejects {
            keys.push("record-rejects=true".into());
        }
        if kind == LimiterKind::LeakyBucket && self.leaky_mode == LeakyMode::Queue {
            keys.push("mode=queue".into());
        }
        // A library's own settings, as typed (trimmed by the form and the link).
        if is_library(kind) && !self.library.is_empty() {
            keys.push(self.library.clone());
        }
        if !keys.is_empty() {
            text = format!("{text}:{}", keys.join(","));
        }
        LimiterSpec::parse(&text)
    }

    /// The traffic as a spec string: the honest shape, or the attack aimed at this
    /// algorithm's weak moment.
    pub fn traffic_text(&self) -> Result<String, Error> {
        let w = self.window_s;
        Ok(match self.attack {
            Attack::None if self.traffic == Traffic::File => {
                let replay = self.replay()?;
                let mut text = format!("replay:file={}", replay.file);
                if replay.format != ratelab::import::Format::Auto {
                    text.push_str(&format!(",format={}", replay.format.name()));
                }
                if let Some(f) = &replay.filter {
                    match f.field {
                        ratelab::import::Field::Host => {
                            text.push_str(&format!(",client={}", f.value))
                        }
                        field => text.push_str(&format!(",field={}:{}", field.name(), f.value)),
                    }
                }
                text
            }
            Attack::None => format!(
                "{}:load={}",
                self.traffic.name(),
                ratelab::decimal::shortest(self.load)
            ),
            // The two-tick attack, aimed at a window boundary for any W: the ticks come W/120
            // either side of it (500 ms at a minute), so they are always far closer together
            // than a window. Most limiters are weakest across a boundary; the sliding-window
            // counter is weakest when the second tick comes just before the first one leaves the
            // window, because it has faded the first tick out by then.
            Attack::BoundaryBurst => {
                let tick = (w * SECOND / 120).max(1);
                if self.algorithm == LimiterKind::SlidingWindowCounter {
                    let after = format_duration(w * SECOND - 2 * tick);
                    let tick = format_duration(tick);
                    format!("boundary-burst:before={tick},after={after}")
                } else {
                    let tick = format_duration(tick);
                    format!("boundary-burst:before={tick},after={tick}")
                }
            }
            Attack::Flood => "flood:start=worst".into(),
            Attack::RetryStorm => {
                // A client using a quarter of its quota, then a spike of twice the limit, with
                // every rejected request retried, twenty tries in all: each second, or as the
                // reader's client backs off.
                let rate = (self.limit / 4).max(1);
                format!(
                    "retry:rate={rate}/{w}s,spike={},at={w}s,tries=20{}",
                    self.limit * 2,
                    self.client.spec_keys()
                )
            }
        })
    }

    /// The reader's file, when the traffic is `file`.
    pub(crate) fn replay(&self) -> Result<&Replay, Error> {
        self.replay.as_ref().ok_or_else(|| Error::Invalid {
            what: "traffic".into(),
            got: "file".into(),
            accepted: "a traffic file chosen under \"Your own traffic\" first".into(),
        })
    }

    /// The parsed traffic and how many minutes it runs.
    pub fn traffic_spec(&self) -> Result<(TrafficSpec, u64), Error> {
        if self.traffic == Traffic::File && self.attack == Attack::None {
            // A replay lasts as long as its own times; the scenario's duration is not used (and
            // a file's span may be far longer than the minutes generated traffic may run).
            return Ok((TrafficSpec::Replay(self.replay()?.clone()), 1));
        }
        let minutes = if self.attack == Attack::RetryStorm {
            self.minutes.max(30)
        } else {
            self.minutes
        };
        Ok((TrafficSpec::parse(&self.traffic_text()?)?, minutes))
    }

    /// The scenario of one run of this figure.
    pub fn scenario(&self) -> Result<Scenario, Error> {
        if !(1..=100_000).contains(&self.limit) {
            return Err(Error::Invalid {
                what: "limit".into(),
                got: self.limit.to_string(),
                accepted: "a whole number from 1 to 100000".into(),
            });
        }
        if !(1..=3_600).contains(&self.window_s) {
            return Err(Error::Invalid {
                what: "window".into(),
                got: self.window_s.to_string(),
                accepted: "a whole number of seconds from 1 to 3600".into(),
            });
        }
        let (traffic, minutes) = self.traffic_spec()?;
        let scenario = Scenario {
            limiters: vec![self.limiter_spec()?],
            traffic,
            limit: self.limit,
            window: self.window_s * SECOND,
            duration: minutes * MINUTE,
            runs: 1,
            seed: self.seed,
        };
        scenario.validate()?;
        Ok(scenario)
    }

    /// The `ratelab simulate` arguments that reproduce this figure's run.
    pub fn cli_args(&self) -> Result<Vec<String>, Error> {
        let s = self.scenario()?;
        let (traffic, minutes) = self.traffic_spec()?;
        let mut args: Vec<String> = vec![
            "simulate".into(),
            "--limiter".into(),
            s.limiters[0].text.clone(),
            "--traffic".into(),
            self.traffic_text()?,
            "--limit".into(),
            s.limit.to_string(),
            "--window".into(),
            format!("{}s", self.window_s),
        ];
        // A replay's length is its own; generated traffic runs for `--minutes`.
        if !matches!(traffic, TrafficSpec::Replay(_)) {
            args.extend(["--minutes".into(), minutes.to_string()]);
        }
        args.extend(["--seed".into(), s.seed.to_string()]);
        Ok(args)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_menu_is_the_essays_six_then_nginx_then_the_libraries() {
        assert_eq!(OFFERED[..6], LimiterKind::ALL);
        assert_eq!(OFFERED[6..7], [LimiterKind::Nginx]);
        let mut libraries = OFFERED[7..].to_vec();
        libraries.sort_by_key(|k| k.name());
        let mut all = LimiterKind::LIBRARIES.to_vec();
        all.sort_by_key(|k| k.name());
        assert_eq!(libraries, all);
    }
}
