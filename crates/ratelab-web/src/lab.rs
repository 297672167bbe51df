//! The main figure's [`Lab`]: its controls, its last run and that run's decisions, drawn on
//! the page's canvases. The main module has it for the limiters it runs; the tools module
//! compiles this same file (`#[path]`) with the libraries' limiters, and the page runs a
//! library there (`controls::is_library`), so the main module carries none of their code.
//! Both crates have the `js_error`, `theme` and `canvas` it uses at their root.

use crate::{canvas, js_error, theme};
use ratelab::sim::Trace;
use ratelab_charts::draw_xy;
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
