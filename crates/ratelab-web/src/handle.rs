//! The page's main-module handle: the form, the link state and the panic hook (the main
//! figure's `Lab` is in `lab.rs`). Compare
//! mode, an action, is in the tools module (`ratelab-tools`).

use crate::js_error;
use ratelab_page::form::Form;
use ratelab_page::link as state;
use ratelab_page::page::Controls;
use wasm_bindgen::prelude::*;

/// The controls of the lab's form (each field's text, one a line, in `FORM_FIELDS`' order:
/// see `Form::from_text`), or the sentence naming the first wrong field and what to enter.
#[wasm_bindgen(js_name = readForm)]
pub fn read_form(form: &str) -> Result<JsValue, JsValue> {
    let form = Form::from_text(form);
    serde_wasm_bindgen::to_value(&form.controls().map_err(js_error)?).map_err(js_error)
}

/// Which of the form's fields apply to its limiter, and the capacity dial's range.
#[wasm_bindgen(js_name = formApplies)]
pub fn form_applies(form: &str) -> Result<JsValue, JsValue> {
    serde_wasm_bindgen::to_value(&Form::from_text(form).applies()).map_err(js_error)
}

/// Reads the main figure's state from a query string: `{controls, compare, embed, problems}`.
#[wasm_bindgen(js_name = decodeState)]
pub fn decode_state(query: &str) -> Result<JsValue, JsValue> {
    serde_wasm_bindgen::to_value(&state::decode(query)).map_err(js_error)
}

/// The query string (without `?`) for `controls`, compare mode and the section figures'
/// controls, holding only what differs from the defaults.
#[wasm_bindgen(js_name = encodeState)]
pub fn encode_state(
    controls: JsValue,
    compare: bool,
    sections: JsValue,
) -> Result<String, JsValue> {
    let controls: Controls = ratelab_js::from_value(controls).map_err(js_error)?;
    let sections: state::Sections = ratelab_js::from_value(sections).map_err(js_error)?;
    Ok(state::encode(&controls, compare, &sections))
}

#[wasm_bindgen]
extern "C" {
    /// The page's banner for a failure inside the wasm (`www/app.js` defines it).
    #[wasm_bindgen(js_namespace = self, js_name = ratelabPanicked)]
    fn ratelab_panicked(message: &str);
}

/// Installs the panic hook as soon as the module is instantiated: a panic shows the page's
/// error banner with what happened (the module then stops; the banner offers a reset),
/// instead of a frozen figure and a line in the console.
#[wasm_bindgen(start)]
pub fn on_start() {
    std::panic::set_hook(Box::new(|info| {
        let message = info.to_string();
        ratelab_panicked(&message);
    }));
}

/// A deliberate panic, for the end-to-end test of the banner. It exists only in builds with
/// the `fault-hook` feature, which `cargo xtask test` makes for that test alone; the page
/// that is published has no such function.
#[cfg(feature = "fault-hook")]
#[wasm_bindgen(js_name = injectFault)]
pub fn inject_fault(what: &str) {
    panic!("deliberate fault for the test: {what}");
}

/// The main module's linear memory, in bytes: the long-session test checks it stays bounded.
#[cfg(target_arch = "wasm32")]
#[wasm_bindgen(js_name = memoryBytes)]
pub fn memory_bytes() -> f64 {
    (core::arch::wasm32::memory_size(0) * 65_536) as f64
}
