//! The scenario: everything that determines a simulation, the ranges it is checked against,
//! its validation, its arrivals and limiters, and the bound on the memory it needs.

use crate::error::Error;
use crate::import::MAX_REPLAY;
#[cfg(feature = "fleet")]
use crate::limiter::Coord;
use crate::rng::{Rng, Stream};
use crate::spec::{LimiterKind, LimiterSpec, TrafficSpec};
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

    /// A boundary burst's requests at its two ticks (the limit each unless given).
    pub(super) fn ticks(&self) -> [u64; 2] {
        match self.traffic {
            TrafficSpec::BoundaryBurst { first, second, .. } => {
                [first.unwrap_or(self.limit), second.unwrap_or(self.limit)]
            }
            _ => [0, 0],
        }
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

    /// More first tries than one retrying client will send in any span of `span` µs: its
    /// spike and a Poisson count's mean plus eight standard deviations.
    pub(super) fn first_tries_in(&self, span: Micros) -> u64 {
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
    pub(super) fn pending_retries(&self, group: &ClientGroup) -> u64 {
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
    pub(super) fn rate_per_us(&self, load: f64) -> f64 {
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

    pub(super) fn flood_length(&self) -> Micros {
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
    pub(super) fn retries_in_a_second(group: &ClientGroup) -> u64 {
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
    pub(super) fn retries_end(group: &ClientGroup) -> Option<Micros> {
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
