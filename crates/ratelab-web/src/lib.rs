//! The page's handle into Rust. JavaScript keeps one [`Lab`] per figure; it sends controls as
//! a plain object (through serde-wasm-bindgen), gets read-outs back the same way, asks the
//! lab to draw on canvases by id, and reads bulk series as typed arrays. Everything else
//! lives in [`page`] (plain Rust, tested natively) and in the core.

pub mod page;
pub mod state;

// The wasm-bindgen handle, left out when the on-demand module uses this crate for `page`.
#[cfg(feature = "handle")]
mod handle;
#[cfg(feature = "handle")]
pub use handle::*;
