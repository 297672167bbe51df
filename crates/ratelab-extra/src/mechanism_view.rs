//! The main figure's mechanism view, for the playhead. The on-demand module has it for the
//! limiters the main module runs; the tools module compiles this same file (`#[path]`) with
//! the libraries' limiters, for a library the lab runs there. Both crates have the
//! `js_error`, `theme`, `canvas` and `REPLAY` (the reader's traffic) it uses at their root.

use crate::{canvas, js_error, theme, REPLAY};
use ratelab_page::controls::Controls;
use ratelab_page::mechanism;
use ratelab_page::page;
use wasm_bindgen::prelude::*;

/// The main figure's mechanism view: the same run as the figure's (the same controls, and the
/// reader's file through [`set_replay`]), kept with each decision's trailing window and the
/// limiter's state, for the playhead. It lives in this on-demand module, loaded when the view
/// comes into sight, so the page's first load stays within its budget.
#[wasm_bindgen]
#[derive(Debug, Default)]
pub struct MechanismView {
    trace: ratelab::sim::Trace,
    mech: ratelab::sim::Mechanism,
    playback: mechanism::Playback,
    horizon_s: f64,
}

#[wasm_bindgen]
impl MechanismView {
    /// A view with no run yet.
    #[wasm_bindgen(constructor)]
    pub fn new() -> MechanismView {
        MechanismView::default()
    }

    /// Runs `controls` (the main figure's), keeping every decision's mechanism; the lists of
    /// the last run are reused.
    pub fn run(&mut self, controls: JsValue) -> Result<(), JsValue> {
        let mut controls: Controls = ratelab_js::from_value(controls).map_err(js_error)?;
        controls.replay = REPLAY.with(|r| r.borrow().clone());
        let (horizon_s, trace, mech) = page::run_mechanism_into(
            &controls,
            std::mem::take(&mut self.trace),
            std::mem::take(&mut self.mech),
        )
        .map_err(js_error)?;
        self.playback = mechanism::Playback::new(horizon_s, controls.window_s, &trace, &mech);
        self.horizon_s = horizon_s;
        self.trace = trace;
        self.mech = mech;
        Ok(())
    }

    /// Where the playhead starts after a run: the first decision of the busiest window.
    #[wasm_bindgen(js_name = playheadStart)]
    pub fn playhead_start(&self) -> usize {
        mechanism::start(&self.mech)
    }

    /// How many decisions the run has.
    pub fn decisions(&self) -> usize {
        self.mech.len()
    }

    /// What the playhead shows at decision `index`: `{index, decisions, timeS, band, limit,
    /// over, kind, value, text, stateText}`, or `undefined` past the run.
    pub fn frame(&self, index: usize) -> Result<JsValue, JsValue> {
        let Some(f) = self.playback.frame(&self.trace, &self.mech, index) else {
            return Ok(JsValue::UNDEFINED);
        };
        // Built directly (no serde serializer in this module): the fields of
        // `mechanism::Frame` in its order, camelCase, the counts as numbers.
        let out = js_sys::Object::new();
        let fields: [(&str, JsValue); 11] = [
            ("index", (f.index as f64).into()),
            ("decisions", (f.decisions as f64).into()),
            ("timeS", f.time_s.into()),
            ("band", (f.band as f64).into()),
            ("limit", (f.limit as f64).into()),
            ("over", f.over.into()),
            ("kind", f.kind.into()),
            ("value", f.value.into()),
            ("bandText", f.band_text.into()),
            ("text", f.text.into()),
            ("stateText", f.state_text.into()),
        ];
        for (key, value) in fields {
            js_sys::Reflect::set(&out, &key.into(), &value)?;
        }
        Ok(out.into())
    }

    /// The last decision arriving at or before `time_s` (0 if none does), for playback at an
    /// even pace in the run's own time.
    #[wasm_bindgen(js_name = indexAt)]
    pub fn index_at(&self, time_s: f64) -> usize {
        let t = (time_s * 1e6).max(0.0) as u64;
        self.trace
            .times
            .partition_point(|&x| x <= t)
            .saturating_sub(1)
    }

    /// How long the run lasts, in seconds.
    #[wasm_bindgen(js_name = horizonS)]
    pub fn horizon_s(&self) -> f64 {
        self.horizon_s
    }

    /// Draws the mechanism view at decision `index` on the canvas `canvas_id`.
    pub fn draw(&self, canvas_id: &str, index: usize, dark: bool) -> Result<(), JsValue> {
        let area = canvas(canvas_id)?;
        let chart = self.playback.chart(&self.trace, &self.mech, index);
        ratelab_charts::mechanism_chart(&area, &chart, theme(dark)).map_err(js_error)
    }
}
