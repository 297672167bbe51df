//! ratelab's core: rate limiters, the traffic they face, a simulator that feeds every limiter
//! the same arrivals, an auditor that checks each against the literal rule "at most L in any
//! window W", and the theory the results must agree with.
//!
//! The core knows nothing of browsers, terminals or files. Time is an integer number of
//! microseconds passed in, never read from a clock; every random choice comes from one named,
//! seeded PCG32 stream. The same [`Scenario`] therefore gives a bit-identical [`Report`]
//! natively and in WebAssembly.
//!
//! One limiter against traffic, and what the audit found:
//!
//! ```
//! use ratelab::{simulate, LimiterSpec, Scenario, TrafficSpec};
//!
//! // A fixed window of 100 a minute (the default L and W) facing the boundary burst: 100
//! // requests half a second before a window boundary and 100 half a second after.
//! let scenario = Scenario {
//!     limiters: vec![LimiterSpec::parse("fixed-window")?],
//!     traffic: TrafficSpec::parse("boundary-burst")?,
//!     ..Scenario::default()
//! };
//! let report = simulate(&scenario)?;
//! let fixed = &report.results[0];
//! // It admitted all 200, so one trailing minute held twice the limit: the literal rule
//! // would have refused half of what it admitted.
//! assert_eq!((fixed.admitted, fixed.busiest_window_max), (200, 200));
//! assert_eq!(fixed.wrong_admits, 0.5);
//! # Ok::<(), ratelab::Error>(())
//! ```
//!
//! The same scenario as a command: `ratelab simulate --limiter fixed-window --traffic
//! boundary-burst`. [`Scenario::memory`] says what a scenario will hold before it runs, and
//! [`Scenario::validate`] refuses what will not fit, naming the part to change.

pub mod analysis;
pub mod audit;
pub mod check;
pub mod decimal;
pub mod error;
#[cfg(feature = "fit")]
pub mod fit;
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
