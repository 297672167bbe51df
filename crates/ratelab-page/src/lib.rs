//! Everything that decides what the ratelab page shows, in plain Rust with no browser in
//! sight: the figure's typed controls, the link codec, the main figure, compare, replay and
//! the section figures. The wasm crates (`ratelab-web`, the page's handle, `ratelab-extra`,
//! the on-demand module, and `ratelab-tools`, the tools module) are thin bindings over it,
//! so all of it is tested natively.

#[cfg(feature = "libraries")]
pub mod check_view;
pub mod controls;
pub mod export;
#[cfg(feature = "fit")]
pub mod fit_view;
pub mod form;
#[cfg(feature = "fleet")]
pub mod gateways;
#[cfg(feature = "fleet")]
pub mod gateways_link;
pub mod import_view;
#[cfg(feature = "fleet")]
pub mod lab_gateways;
pub mod library;
pub mod link;
pub mod mechanism;
pub mod page;
pub mod probe_view;
pub mod readout;
pub mod sections;
pub mod wire;
