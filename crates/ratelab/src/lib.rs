//! ratelab's core: rate limiters, the traffic they face, a simulator that feeds every limiter
//! the same arrivals, an auditor that checks each against the literal rule "at most L in any
//! window W", and the theory the results must agree with.
//!
//! The core knows nothing of browsers, terminals or files. Time is an integer number of
//! microseconds passed in, never read from a clock; every random choice comes from one named,
//! seeded PCG32 stream. The same [`Scenario`] therefore gives a bit-identical [`Report`]
//! natively and in WebAssembly.

pub mod analysis;
pub mod audit;
pub mod decimal;
pub mod error;
pub mod histogram;
pub mod import;
pub mod limiter;
pub mod optimum;
pub mod plot;
pub mod probe;
pub mod ring;
pub mod rng;
pub mod sim;
pub mod spec;
pub mod study;
pub mod text;
pub mod theory;
pub mod time;
pub mod traffic;

pub use error::Error;
pub use limiter::{Decide, Decision, Limiter, Rate};
pub use sim::{simulate, LimiterReport, Report, RunStats, Scenario};
pub use spec::{LimiterKind, LimiterSpec, TrafficSpec};
pub use time::Micros;
