//! The page's handle into Rust. JavaScript keeps one [`Lab`] per figure; it sends controls as
//! a plain object (through serde-wasm-bindgen), gets read-outs back the same way, asks the
//! lab to draw on canvases by id, and reads bulk series as typed arrays. What the page shows
//! is decided in `ratelab-page` (plain Rust, tested natively) and in the core.

use plotters::coord::Shift;
use plotters::prelude::*;
use ratelab_charts::canvas::Canvas;
use ratelab_charts::Theme;
use wasm_bindgen::prelude::*;

mod handle;
mod lab;
pub use handle::*;
pub use lab::Lab;

fn js_error(e: impl std::fmt::Display) -> JsValue {
    JsValue::from_str(&e.to_string())
}

fn theme(dark: bool) -> Theme {
    if dark {
        Theme::DARK
    } else {
        Theme::LIGHT
    }
}

/// The canvas `id`'s drawing area, at its layout size and the screen's resolution.
fn canvas(id: &str) -> Result<DrawingArea<Canvas, Shift>, JsValue> {
    ratelab_charts::canvas::area(id).map_err(js_error)
}
