//! The fuzz targets' checks as plain functions, one module per target of `fuzz/`.
//!
//! `fuzz/fuzz_targets/*.rs` are one-line wrappers that hand libFuzzer's input to a module's
//! `check`, and `tests/corpus.rs` replays every committed input (`fuzz/corpus/TARGET/` and
//! `fuzz/crashes-found/TARGET/`) through the same function on stable Rust, so `cargo xtask
//! test` checks every law the fuzzers check, on every input they kept. Each `check` panics on a
//! broken law and returns whether the input was long enough to be used.

pub mod import;
pub mod limiter_laws;
pub mod scenario;
pub mod spec;
pub mod url_state;

/// A target's check: panics on a broken law, returns whether the input was used.
pub type Check = fn(&[u8]) -> bool;

/// The targets, by the name of their folder under `fuzz/corpus/`, with their checks.
pub const TARGETS: [(&str, Check); 5] = [
    ("spec", spec::check),
    ("url_state", url_state::check),
    ("import", import::check),
    ("limiter_laws", limiter_laws::check),
    ("scenario", scenario::check),
];
