//! Building a scenario's limiters from their specs: each limiter's parameters checked against
//! the scenario (its limit, window and run length) and the limiter made, a fleet or a split
//! limit of several.

use super::Scenario;
use crate::error::Error;
#[cfg(feature = "libraries")]
use crate::limiter::{AnchoredWindow, GoRate, Limits, RedisCell, Vsthrottle};
#[cfg(feature = "fleet")]
use crate::limiter::{Coord, Fleet};
use crate::limiter::{
    FixedWindow, Gcra, Haproxy, LeakyBucket, LeakyMode, Limiter, Nginx, Rate, SlidingLog,
    SlidingWindowCounter, Split, TokenBucket,
};
use crate::rng::{Rng, Stream};
#[cfg(feature = "fleet")]
use crate::spec::FleetSpec;
use crate::spec::{LimiterKind, LimiterSpec};
use crate::time::{format_duration, MS};

impl Scenario {
    /// Builds the limiter `spec` describes, for run `run`, checking it against the scenario.
    pub fn build_limiter(&self, spec: &LimiterSpec, run: u32) -> Result<Limiter, Error> {
        #[cfg(not(feature = "libraries"))]
        if LimiterKind::LIBRARIES.contains(&spec.kind) {
            return Err(Error::invalid(
                "limiter",
                &spec.text,
                "a limiter this build has (the libraries' limiters are the core's libraries feature, which the CLI has)",
            ));
        }
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
        if spec.block.is_some() {
            return refuse(
                "no block (a rejection sets the block, and a fleet shares its admissions only)",
            );
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
            LimiterKind::ExpressRateLimit | LimiterKind::RateLimiterFlexible => {
                let period = spec.period.unwrap_or(self.window);
                if period % MS != 0 {
                    return Err(Error::Missing {
                        what: format!("limiter {name}"),
                        key: "its own window in whole milliseconds (the window is not: the library's clock counts milliseconds)".into(),
                        example: format!("{name}:{}", if spec.kind == LimiterKind::ExpressRateLimit { "limit=100,window-ms=60000" } else { "points=100,duration=60" }),
                    });
                }
                period
            }
            _ => self.window,
        };
        #[cfg(feature = "libraries")]
        if spec.kind == LimiterKind::RedisCell {
            let (_, count, period) = crate::theory::redis_cell_keys(spec, self.limit, self.window);
            if u128::from(period) * 1000 < u128::from(count) {
                return Err(Error::invalid(
                    &format!("{name}: count"),
                    &count.to_string(),
                    &format!("at most {} for a period of {period} s: an emission interval under a millisecond lets Redis's key expiry, in whole milliseconds, undo the limit", period * 1000),
                ));
            }
        }
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
                #[cfg(feature = "libraries")]
                LimiterKind::ExpressRateLimit | LimiterKind::RateLimiterFlexible => {
                    Limiter::Anchored(
                        AnchoredWindow::new(spec.limit.unwrap_or(limit), period)
                            .with_block(spec.block.unwrap_or(0)),
                    )
                }
                #[cfg(feature = "libraries")]
                LimiterKind::GoRate => Limiter::GoRate(GoRate::from_rate(rate, burst)),
                #[cfg(feature = "libraries")]
                LimiterKind::Vsthrottle => Limiter::Vsthrottle(
                    Vsthrottle::new(
                        spec.limit.unwrap_or(limit),
                        spec.period.unwrap_or(self.window),
                    )
                    .with_block(spec.block.unwrap_or(0)),
                ),
                #[cfg(feature = "libraries")]
                LimiterKind::RedisCell => {
                    let (b, n, p) = crate::theory::redis_cell_keys(spec, limit, self.window);
                    Limiter::RedisCell(
                        RedisCell::new(b, n, p).with_quantity(spec.quantity.unwrap_or(1)),
                    )
                }
                #[cfg(feature = "libraries")]
                LimiterKind::Limits => Limiter::Limits(Limits::new(
                    spec.limit.unwrap_or(limit),
                    spec.period.unwrap_or(self.window),
                    spec.strategy
                        .unwrap_or(crate::spec::LimitsStrategy::FixedWindow),
                )),
                #[cfg(not(feature = "libraries"))]
                LimiterKind::ExpressRateLimit
                | LimiterKind::RateLimiterFlexible
                | LimiterKind::GoRate
                | LimiterKind::RedisCell
                | LimiterKind::Vsthrottle
                | LimiterKind::Limits => unreachable!("refused before the limiters are built"),
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
