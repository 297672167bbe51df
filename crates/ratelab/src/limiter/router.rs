//! A fleet's shape: how requests are spread over its gateways ([`Route`], drawn by a
//! [`Router`]), how the gateways coordinate ([`Coord`], with a central store's [`Outage`]), and
//! what the fleet tallies ([`GatewayStats`], [`FleetStats`]). Plain data and one generator:
//! the fleet that uses them is in `fleet.rs`.

use crate::rng::Rng;
use crate::time::Micros;
use serde::{Deserialize, Serialize};

/// How requests are spread over the gateways.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Route {
    /// Each gateway in turn.
    RoundRobin,
    /// One uniformly at random, per request.
    Random,
    /// Gateway 0 takes share `hot`; the rest are uniform over the others.
    Skewed {
        /// Gateway 0's share, in millionths, from 1 to 1,000,000.
        hot: u32,
    },
}

/// When the central store cannot be reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outage {
    /// From.
    pub at: Micros,
    /// For how long.
    pub length: Micros,
    /// Admit everything (fail open) rather than nothing.
    pub open: bool,
}

/// How the gateways coordinate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Coord {
    /// Each enforces the whole limit alone.
    Local,
    /// Each enforces `1/N` of it.
    Split,
    /// Each decides on the store's snapshot as of its last sync and its own admissions since.
    Sync {
        /// How often the store takes a snapshot.
        every: Micros,
        /// How long a snapshot takes to reach the gateways.
        delay: Micros,
    },
    /// One shared limiter decides.
    Central {
        /// The round trip to the store.
        rtt: Micros,
        /// When the store is unreachable.
        outage: Option<Outage>,
    },
    /// Gateways spend blocks of permits taken from a central limiter.
    Lease {
        /// Permits per lease.
        size: u64,
        /// How long unspent permits last.
        ttl: Micros,
    },
}

/// One gateway's tallies over a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GatewayStats {
    /// Requests it decided.
    pub offered: u64,
    /// Requests it admitted.
    pub admitted: u64,
    /// The most of its own admissions in any window.
    pub busiest: u64,
}

/// What a fleet measured beyond the decisions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FleetStats {
    /// Admissions the shared limiter, holding every gateway's admissions, would have refused.
    pub room_instants: u64,
    /// Each gateway's tallies.
    pub gateways: Vec<GatewayStats>,
}

/// Which gateway each request goes to: the fleet's router, and `ratelab probe`'s when it
/// sends to several real gateways, so that a probe and its model fleet (same route, same
/// seed, the `Routing` stream of run 0) send the `k`-th request to the same gateway.
#[derive(Debug, Clone)]
pub struct Router {
    route: Route,
    routing: Rng,
    turn: usize,
    gateways: usize,
    /// [`crate::rng::below_threshold`] of the draws `pick` makes.
    threshold: u32,
}

impl Router {
    /// A router over `gateways` gateways (at least one), drawing from `routing` for `random`
    /// and `skewed` routes.
    pub fn new(route: Route, gateways: usize, routing: Rng) -> Self {
        let gateways = gateways.max(1);
        let draws = match route {
            Route::Skewed { .. } => 1_000_000,
            _ => gateways as u32,
        };
        Router {
            route,
            routing,
            turn: 0,
            gateways,
            threshold: crate::rng::below_threshold(draws),
        }
    }

    /// The gateway of the next request, from 0 to `gateways − 1`.
    pub fn pick(&mut self) -> usize {
        let n = self.gateways;
        match self.route {
            Route::RoundRobin => {
                let g = self.turn;
                self.turn = if g + 1 == n { 0 } else { g + 1 };
                g
            }
            Route::Random => self.routing.below_given(n as u32, self.threshold) as usize,
            Route::Skewed { hot } => {
                if n == 1 || self.routing.below_given(1_000_000, self.threshold) < hot {
                    0
                } else {
                    1 + self.routing.below(n as u32 - 1) as usize
                }
            }
        }
    }
}
