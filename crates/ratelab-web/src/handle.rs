//! The page's main-module handle: the main figure's [`Lab`] and the link state. Compare
//! mode, an action, is in the tools module (`ratelab-tools`).

use plotters::coord::Shift;
use plotters::prelude::*;
use ratelab::sim::Trace;
use ratelab_charts::canvas::Canvas;
use ratelab_charts::{draw_xy, Theme};
use ratelab_page::form::Form;
use ratelab_page::link as state;
use ratelab_page::page::{self, Controls};
use wasm_bindgen::prelude::*;

/// One figure's state: its controls, its last run and that run's decisions.
#[wasm_bindgen]
#[derive(Debug, Default)]
pub struct Lab {
    controls: Controls,
    readout: Option<page::Readout>,
    trace: Trace,
    replay: Option<ratelab::spec::Replay>,
}

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

#[wasm_bindgen]
impl Lab {
    /// A figure with the default controls and no run yet.
    #[wasm_bindgen(constructor)]
    pub fn new() -> Lab {
        Lab::default()
    }

    /// Runs the figure with `controls`; returns its read-outs, or a message naming the bad
    /// control and what it accepts.
    pub fn run(&mut self, controls: JsValue) -> Result<JsValue, JsValue> {
        let mut controls: Controls = ratelab_js::from_value(controls).map_err(js_error)?;
        controls.replay = self.replay.clone();
        // The last run's lists are reused: the page re-runs at every move of a dial.
        let (readout, trace) =
            page::run_into(&controls, std::mem::take(&mut self.trace)).map_err(js_error)?;
        let out = serde_wasm_bindgen::to_value(&readout).map_err(js_error)?;
        self.controls = controls;
        self.readout = Some(readout);
        self.trace = trace;
        Ok(out)
    }

    /// Draws the last run: requests per bin, the trailing-window count, the admitted share.
    pub fn draw(
        &self,
        arrivals: &str,
        window: &str,
        share: &str,
        dark: bool,
    ) -> Result<(), JsValue> {
        let Some(readout) = &self.readout else {
            return Err(js_error("nothing has run yet"));
        };
        let plots = page::main_plots(&self.controls, readout, &self.trace);
        for (plot, id) in plots.iter().zip([window, arrivals, share]) {
            draw_xy(plot, &canvas(id)?, theme(dark)).map_err(js_error)?;
        }
        Ok(())
    }

    /// Gives the figure the reader's traffic (µs since the epoch, sorted), read from `file`
    /// as `format`, filtered on `field` = `value` (no filter if `field` is empty); controls
    /// with `traffic: "file"` replay it.
    #[wasm_bindgen(js_name = setReplay)]
    pub fn set_replay(
        &mut self,
        times: &[f64],
        file: &str,
        format: &str,
        field: &str,
        value: &str,
    ) -> Result<(), JsValue> {
        self.replay = Some(page::replay_of(times, file, format, field, value).map_err(js_error)?);
        Ok(())
    }

    /// Times of the trailing-window series (seconds), for embedders and tests.
    #[wasm_bindgen(js_name = windowTimes)]
    pub fn window_times(&self) -> js_sys::Float64Array {
        let (xs, _) = page::window_series(&self.trace);
        js_sys::Float64Array::from(xs.as_slice())
    }

    /// Counts of the trailing-window series.
    #[wasm_bindgen(js_name = windowCounts)]
    pub fn window_counts(&self) -> js_sys::Float64Array {
        let (_, ys) = page::window_series(&self.trace);
        js_sys::Float64Array::from(ys.as_slice())
    }
}

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
