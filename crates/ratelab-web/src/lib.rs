//! The page's handle into Rust. JavaScript keeps one [`Lab`] per figure; it sends controls as
//! a plain object (through serde-wasm-bindgen), gets read-outs back the same way, asks the
//! lab to draw on canvases by id, and reads bulk series as typed arrays. Everything else
//! lives in [`page`] (plain Rust, tested natively) and in the core.

pub mod page;

use page::{Controls, SectionData};
use plotters::prelude::*;
use plotters_canvas::CanvasBackend;
use ratelab::sim::Trace;
use ratelab_charts::{self as charts, Series, Theme, XyChart};
use wasm_bindgen::prelude::*;

/// The most points a plotted series keeps; plotters-canvas costs about 100 ns a point.
const MAX_POINTS: usize = 3_000;

/// One figure's state: its controls, its last run and that run's decisions.
#[wasm_bindgen]
#[derive(Debug, Default)]
pub struct Lab {
    controls: Controls,
    readout: Option<page::Readout>,
    trace: Trace,
    compared: Vec<(page::CompareRow, Trace)>,
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

fn canvas(id: &str) -> Result<CanvasBackend, JsValue> {
    CanvasBackend::new(id).ok_or_else(|| js_error(format!("no canvas with id '{id}'")))
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
        let controls: Controls = serde_wasm_bindgen::from_value(controls).map_err(js_error)?;
        let (readout, trace) = page::run(&controls).map_err(js_error)?;
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
        let theme = theme(dark);
        let horizon = (readout.horizon_s * 1e6) as u64;
        let window_us = self.controls.window_s * 1_000_000;
        let bins = (horizon / (window_us / 12).max(1)).clamp(12, 240) as usize;
        let binned = charts::bin_decisions(&self.trace.times, &self.trace.admitted, horizon, bins);
        charts::arrivals_chart(&canvas(arrivals)?.into_drawing_area(), &binned, theme)
            .map_err(js_error)?;
        let (admitted_s, _) = page::window_series(&self.trace);
        let (xs, ys) = charts::window_steps(&admitted_s, self.controls.window_s as f64);
        let (xs, ys) = charts::decimate_max(&xs, &ys, MAX_POINTS);
        charts::window_chart(
            &canvas(window)?.into_drawing_area(),
            &xs,
            &ys,
            readout.limit as f64,
            readout.bound.map(|b| b as f64),
            readout.horizon_s,
            theme,
        )
        .map_err(js_error)?;
        let (sx, sy) = page::share_series(&self.trace);
        let (sx, sy) = charts::decimate_max(&sx, &sy, MAX_POINTS);
        let series = [Series {
            name: "admitted so far, % of offered".into(),
            points: sx.into_iter().zip(sy).collect(),
            color: charts::BLUE,
            markers: false,
        }];
        let spec = XyChart {
            title: "Admitted share so far",
            x_label: "time (s)",
            y_label: "%",
            series: &series,
            references: &[],
            y_range: Some((0.0, 105.0)),
            x_range: Some((0.0, readout.horizon_s)),
        };
        charts::xy_chart(&canvas(share)?.into_drawing_area(), &spec, theme).map_err(js_error)
    }

    /// Runs every algorithm on the same arrivals as `controls`; returns the table rows.
    pub fn compare(&mut self, controls: JsValue) -> Result<JsValue, JsValue> {
        let controls: Controls = serde_wasm_bindgen::from_value(controls).map_err(js_error)?;
        self.compared = page::compare(&controls).map_err(js_error)?;
        self.controls = controls;
        let rows: Vec<&page::CompareRow> = self.compared.iter().map(|(r, _)| r).collect();
        serde_wasm_bindgen::to_value(&rows).map_err(js_error)
    }

    /// Draws each compared algorithm's trailing-window count on the canvas of the same index.
    #[wasm_bindgen(js_name = drawCompare)]
    pub fn draw_compare(&self, canvas_ids: Vec<String>, dark: bool) -> Result<(), JsValue> {
        let theme = theme(dark);
        let limit = self.controls.limit as f64;
        let x_max = self
            .compared
            .iter()
            .flat_map(|(_, t)| t.times.last())
            .max()
            .map_or(1.0, |&t| t as f64 / 1e6);
        for ((row, trace), id) in self.compared.iter().zip(&canvas_ids) {
            let (admitted_s, _) = page::window_series(trace);
            let (xs, ys) = charts::window_steps(&admitted_s, self.controls.window_s as f64);
            let (xs, ys) = charts::decimate_max(&xs, &ys, MAX_POINTS / 4);
            let area = canvas(id)?.into_drawing_area();
            charts::window_chart(
                &area,
                &xs,
                &ys,
                limit,
                row.bound.map(|b| b as f64),
                x_max,
                theme,
            )
            .map_err(js_error)?;
        }
        Ok(())
    }

    /// Computes a section's figure, draws it on `canvas_id` and returns its data (with any
    /// table). `name` is one of `ceiling`, `swc-offsets`, `honest`, `lockout`, `split`,
    /// `boundary-table`.
    pub fn section(
        &mut self,
        name: &str,
        params: JsValue,
        canvas_id: &str,
        dark: bool,
    ) -> Result<JsValue, JsValue> {
        let p: SectionParams = serde_wasm_bindgen::from_value(params).map_err(js_error)?;
        let theme = theme(dark);
        let data: SectionData = match name {
            "ceiling" => page::bucket_ceiling(p.limit, p.capacity),
            "swc-offsets" => page::swc_offsets(p.limit),
            "honest" => page::honest_client(&p.traffic, p.load, p.seed),
            "lockout" => page::lockout(p.limit, p.seed),
            "split" => page::split(p.seed),
            "boundary-table" => page::boundary_table(p.limit),
            other => return Err(js_error(format!("unknown section '{other}'"))),
        }
        .map_err(js_error)?;
        if !canvas_id.is_empty() {
            draw_section(name, &data, &p, canvas_id, theme)?;
        }
        serde_wasm_bindgen::to_value(&data).map_err(js_error)
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

/// Parameters a section figure may take.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct SectionParams {
    limit: u64,
    capacity: u64,
    traffic: String,
    load: f64,
    seed: u64,
}

impl Default for SectionParams {
    fn default() -> Self {
        SectionParams {
            limit: 100,
            capacity: 100,
            traffic: "page-loads".into(),
            load: 0.8,
            seed: 1,
        }
    }
}

fn draw_section(
    name: &str,
    data: &SectionData,
    p: &SectionParams,
    canvas_id: &str,
    theme: Theme,
) -> Result<(), JsValue> {
    let area = canvas(canvas_id)?.into_drawing_area();
    if name == "honest" {
        let bars: Vec<(String, f64, RGBColor)> = data
            .lines
            .iter()
            .enumerate()
            .map(|(i, l)| {
                (
                    l.name.clone(),
                    l.points.first().map_or(0.0, |p| p.1),
                    charts::SERIES[i % charts::SERIES.len()],
                )
            })
            .collect();
        let title = format!(
            "Share of an honest {} client served at {:.0}% of the limit",
            p.traffic,
            100.0 * p.load
        );
        return charts::bar_chart(&area, &title, &bars, 100.0, "%", theme).map_err(js_error);
    }
    let series: Vec<Series> = data
        .lines
        .iter()
        .enumerate()
        .map(|(i, l)| Series {
            name: l.name.clone(),
            points: l.points.clone(),
            color: charts::SERIES[i % charts::SERIES.len()],
            markers: true,
        })
        .collect();
    let (title, x_label, y_label) = match name {
        "ceiling" => (
            "Worst window of a token bucket against its capacity",
            "capacity B",
            "requests in the worst window",
        ),
        "swc-offsets" => (
            "Sliding-window counter: worst window against the flood's start",
            "flood starts this far into a window (s)",
            "requests in the worst window",
        ),
        "lockout" => (
            "A retrying client after one spike",
            "tries per request",
            "% of requests served",
        ),
        _ => (
            "Splitting the limit across servers",
            "servers K",
            "% of requests served",
        ),
    };
    let spec = XyChart {
        title,
        x_label,
        y_label,
        series: &series,
        references: &data.references,
        y_range: None,
        x_range: None,
    };
    charts::xy_chart(&area, &spec, theme).map_err(js_error)
}
