//! The page's on-demand module: what a reader who scrolls through the page needs beyond the
//! main figure. It computes the essay's section figures (in `www/section-worker.js`) and draws
//! them (on the page's thread), draws the figures of the recorded probe reports from their
//! shipped views, and keeps the main figure's run with its mechanism for the playhead
//! (`MechanismView`). The page loads it when a section first comes near or the mechanism view
//! into sight. What only an action needs (the study's results, SVG and CSV export, the import
//! of a file, a probe report read and compared with a model) is in `ratelab-tools`, and the
//! study's jobs run in the lean `ratelab-study` module.

use plotters::coord::Shift;
use plotters::prelude::*;
use ratelab_charts::canvas::Canvas;
use ratelab_charts::{Draw, Plot, Theme};
use ratelab_page::controls::Named;
use ratelab_page::page;
use ratelab_page::sections::{self, Dials, Section, SectionParams};
use ratelab_page::wire;
use wasm_bindgen::prelude::*;

fn js_error(e: impl std::fmt::Display) -> JsValue {
    JsValue::from_str(&e.to_string())
}

// The essay's section figures: computed in the section worker, drawn on the page's thread,
// so the page's first load carries only the main figure.

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

/// Computes a section's [`Figure`] only, for the section worker: `{table, plot}`, its table
/// (empty for a chart alone) and its chart, if it has one, packed ([`packed`]); the page's
/// thread then draws the chart with [`draw_plot`], which is cheap. `dials` is what the reader
/// set on the section's dials ([`Dials`]).
#[wasm_bindgen(js_name = sectionData)]
pub fn section_data_js(name: &str, dials: JsValue) -> Result<JsValue, JsValue> {
    let (section, p) = section_of(name, dials)?;
    let figure = section.figure(&p).map_err(js_error)?;
    let out = js_sys::Object::new();
    js_sys::Reflect::set(&out, &"table".into(), &table_js(&figure.table))?;
    if let Some(plot) = &figure.plot {
        js_sys::Reflect::set(&out, &"plot".into(), &packed(plot))?;
    }
    Ok(out.into())
}

/// Strings as a JavaScript array of strings (built directly: no serde serializer for the
/// worker's tables and captions).
fn strings_js(strings: &[String]) -> js_sys::Array {
    strings.iter().map(|s| JsValue::from_str(s)).collect()
}

/// A table's rows as a JavaScript array of arrays of strings.
fn table_js(rows: &[Vec<String>]) -> js_sys::Array {
    rows.iter().map(|row| strings_js(row)).collect()
}

/// A chart for the trip from the section worker to the page's thread: `{numbers, text}`, a
/// `Float64Array` and a string ([`wire::pack`]).
fn packed(plot: &Plot) -> JsValue {
    let p = wire::pack(plot);
    let out = js_sys::Object::new();
    let numbers = js_sys::Float64Array::from(p.numbers.as_slice());
    // Setting a property of a new plain object cannot fail.
    let _ = js_sys::Reflect::set(&out, &"numbers".into(), &numbers);
    let _ = js_sys::Reflect::set(&out, &"text".into(), &p.text.into());
    out.into()
}

/// Draws a packed chart, given as its `numbers` and `text`, on the canvas `canvas_id`: one
/// that the section worker computed ([`section_data_js`], [`rules_data`]), or a recorded probe
/// report's (`www/probes/NAME.view.json`).
#[wasm_bindgen(js_name = drawPlot)]
pub fn draw_plot(canvas_id: &str, numbers: &[f64], text: &str, dark: bool) -> Result<(), JsValue> {
    draw(
        &wire::unpack(numbers, text).map_err(js_error)?,
        canvas_id,
        dark,
    )
}

/// The section named `name` and its settings at the reader's `dials`.
fn section_of(name: &str, dials: JsValue) -> Result<(Section, SectionParams), JsValue> {
    let section = Section::from_name(name).ok_or_else(|| {
        js_error(format!(
            "unknown section '{name}': accepted are {}",
            Section::names()
        ))
    })?;
    let dials: Dials = ratelab_js::from_value(dials).map_err(js_error)?;
    Ok((section, section.params(&dials)))
}

fn draw(plot: &Plot, canvas_id: &str, dark: bool) -> Result<(), JsValue> {
    plot.draw(&canvas(canvas_id)?, theme(dark))
        .map_err(js_error)
}

// The reader's traffic, for the mechanism view of a file shown in the lab.

thread_local! {
    /// The reader's traffic, on the page's thread, for the mechanism view of it.
    static REPLAY: std::cell::RefCell<Option<ratelab::spec::Replay>> = const { std::cell::RefCell::new(None) };
}

/// Keeps the reader's traffic (as the lab shows it) for [`MechanismView::run`]; the arguments
/// are those of the lab's `setReplay`.
#[wasm_bindgen(js_name = setReplay)]
pub fn set_replay(
    times: &[f64],
    file: &str,
    format: &str,
    field: &str,
    value: &str,
) -> Result<(), JsValue> {
    let replay = page::replay_of(times, file, format, field, value).map_err(js_error)?;
    REPLAY.with(|r| *r.borrow_mut() = Some(replay));
    Ok(())
}

#[wasm_bindgen]
extern "C" {
    /// Reports a panic: the page's banner on the page's thread, a message to the page in the
    /// section worker (each defines `ratelabPanicked`).
    #[wasm_bindgen(js_namespace = self, js_name = ratelabPanicked)]
    fn ratelab_panicked(message: &str);
}

/// Installs the panic hook as soon as the module is instantiated: a panic reaches the page's
/// error banner with its message instead of a bare trap.
#[wasm_bindgen(start)]
pub fn on_start() {
    std::panic::set_hook(Box::new(|info| ratelab_panicked(&info.to_string())));
}

// Section 1's small multiples, computed in the section worker like the other section figures.

/// Section 1: every algorithm on its own client, as [`sections::RulesFigure`]: `{captions,
/// labels, table, plots}`, each chart packed ([`packed`]) for [`draw_plot`], with its caption
/// and label, and the table.
#[wasm_bindgen(js_name = rulesData)]
pub fn rules_data() -> Result<JsValue, JsValue> {
    let rules = sections::rules().map_err(js_error)?;
    let out = js_sys::Object::new();
    js_sys::Reflect::set(&out, &"captions".into(), &strings_js(&rules.captions))?;
    js_sys::Reflect::set(&out, &"labels".into(), &strings_js(&rules.labels))?;
    js_sys::Reflect::set(&out, &"table".into(), &table_js(&rules.table))?;
    let plots: js_sys::Array = rules.plots.iter().map(packed).collect();
    js_sys::Reflect::set(&out, &"plots".into(), &plots)?;
    Ok(out.into())
}

mod mechanism_view;
pub use mechanism_view::MechanismView;
