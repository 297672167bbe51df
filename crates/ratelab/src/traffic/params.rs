//! The traffic parameters that specs name: the shapes of grouped traffic and where a flood
//! starts.

use crate::time::{Micros, SECOND};
use serde::{Deserialize, Serialize};

/// The traffic shapes made of groups of requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Shape {
    /// Groups of about 5 within 1 s.
    SmallBursts,
    /// Groups of about 20 within 1 s.
    PageLoads,
    /// Groups of about 50 within 2 s.
    BigBursts,
}

impl Shape {
    /// The mean group size.
    pub fn mean_size(self) -> f64 {
        match self {
            Shape::SmallBursts => 5.0,
            Shape::PageLoads => 20.0,
            Shape::BigBursts => 50.0,
        }
    }

    /// How long a group takes to arrive.
    pub fn span(self) -> Micros {
        match self {
            Shape::SmallBursts | Shape::PageLoads => SECOND,
            Shape::BigBursts => 2 * SECOND,
        }
    }
}

/// Where a flood starts within its window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FloodStart {
    /// This far into the window.
    Offset(Micros),
    /// `L · every` before the window's end: the worst moment for every limiter here.
    Worst,
}
