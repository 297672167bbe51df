//! The page's handle into Rust. JavaScript keeps one [`Lab`] per figure; it sends controls as
//! a plain object (through serde-wasm-bindgen), gets read-outs back the same way, asks the
//! lab to draw on canvases by id, and reads bulk series as typed arrays. What the page shows
//! is decided in `ratelab-page` (plain Rust, tested natively) and in the core.

mod handle;
pub use handle::*;
