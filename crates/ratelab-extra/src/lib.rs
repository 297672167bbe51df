//! The page's on-demand module: what the page's own thread and its import worker need beyond
//! the main figure. It holds the study's results as workers return them (tables, plots, the
//! reproduction report), the essay's section figures, SVG and CSV export, and the import of a
//! reader's traffic file. The page loads it when a section first scrolls into view or when the
//! reader runs the study or chooses a file. The study's jobs themselves run in the separate,
//! lean `ratelab-study` module, which is what keeps them fast.

use plotters::prelude::*;
use plotters_canvas::CanvasBackend as Canvas;
use ratelab::import::{Field, Filter, Format, ImportOptions, Imported, Importer};
use ratelab::study::{self, Job, JobResult, StudyConfig};
use ratelab_charts::{self as charts, Plot, Series, Theme};
use ratelab_page::page::{self, Controls, SectionData};
use wasm_bindgen::prelude::*;

fn js_error(e: impl std::fmt::Display) -> JsValue {
    JsValue::from_str(&e.to_string())
}

/// The whole study of the essay, as its jobs' results come back from the workers (each of
/// which runs a `ratelab-study` `Study` of the same size and seed).
#[wasm_bindgen]
#[derive(Debug)]
pub struct StudyResults {
    config: StudyConfig,
    jobs: Vec<Job>,
    results: Vec<Option<JobResult>>,
    /// The tables and plots of the results so far, assembled once per new result (the page
    /// asks for them several times per redraw).
    assembled: std::cell::RefCell<Option<std::rc::Rc<study::StudyReport>>>,
}

#[wasm_bindgen]
impl StudyResults {
    /// The study at `runs` runs of `minutes` minutes, seeded with `seed`; with `honest_only`,
    /// just the honest-client table's jobs (as `ratelab study --only honest`).
    #[wasm_bindgen(constructor)]
    pub fn new(
        runs: u32,
        minutes: u32,
        seed: u32,
        honest_only: bool,
    ) -> Result<StudyResults, JsValue> {
        let config = StudyConfig {
            runs,
            minutes: u64::from(minutes),
            seed: u64::from(seed),
        };
        let mut jobs = study::plan(config).map_err(js_error)?;
        if honest_only {
            study::keep_honest(&mut jobs);
        }
        let results = vec![None; jobs.len()];
        Ok(StudyResults {
            config,
            jobs,
            results,
            assembled: std::cell::RefCell::new(None),
        })
    }

    /// How many jobs the study has.
    pub fn jobs(&self) -> u32 {
        self.jobs.len() as u32
    }

    /// How many results have been added.
    pub fn done(&self) -> u32 {
        self.results.iter().filter(|r| r.is_some()).count() as u32
    }

    /// Adds the result of job `index` that a worker returned.
    #[wasm_bindgen(js_name = addResult)]
    pub fn add_result(&mut self, index: u32, result: JsValue) -> Result<(), JsValue> {
        let result: JobResult = serde_wasm_bindgen::from_value(result).map_err(js_error)?;
        let slot = self
            .results
            .get_mut(index as usize)
            .ok_or_else(|| js_error(format!("no job {index}")))?;
        *slot = Some(result);
        self.assembled.replace(None);
        Ok(())
    }

    /// The tables so far (cells whose jobs are still running are left out, and so are tables
    /// with no rows yet).
    pub fn tables(&self) -> Result<JsValue, JsValue> {
        let report = self.report();
        let tables: Vec<&study::Table> = report
            .tables
            .iter()
            .filter(|t| !t.rows.is_empty())
            .collect();
        serde_wasm_bindgen::to_value(&tables).map_err(js_error)
    }

    /// The ids and titles of the plots, in order: `[[id, title], ...]`.
    pub fn plots(&self) -> Result<JsValue, JsValue> {
        let report = self.report();
        // A plot with no points yet (or none in this study, as with the honest table alone)
        // is left out.
        let ids: Vec<(String, String)> = report
            .plots
            .iter()
            .filter(|p| p.lines.iter().any(|(_, points)| !points.is_empty()))
            .map(|p| (p.id.clone(), p.title.clone()))
            .collect();
        serde_wasm_bindgen::to_value(&ids).map_err(js_error)
    }

    /// Draws the plot `id` from the results so far on the canvas `canvas_id`.
    #[wasm_bindgen(js_name = drawPlot)]
    pub fn draw_plot(&self, id: &str, canvas_id: &str, dark: bool) -> Result<(), JsValue> {
        self.plot(id)?
            .draw(&canvas(canvas_id)?.into_drawing_area(), theme(dark))
            .map_err(js_error)
    }

    /// The plot `id` as `{svg, csv}` (see [`export_plot`]).
    #[wasm_bindgen(js_name = exportPlot)]
    pub fn export_plot(
        &self,
        id: &str,
        width: u32,
        height: u32,
        dark: bool,
    ) -> Result<JsValue, JsValue> {
        exported(&self.plot(id)?, width, height, dark)
    }

    /// The table `id` as CSV.
    #[wasm_bindgen(js_name = tableCsv)]
    pub fn table_csv(&self, id: &str) -> Result<String, JsValue> {
        Ok(self.table(id)?.csv())
    }

    /// The table `id` as Markdown.
    #[wasm_bindgen(js_name = tableMarkdown)]
    pub fn table_markdown(&self, id: &str) -> Result<String, JsValue> {
        Ok(self.table(id)?.markdown())
    }

    /// REPRODUCTION.md for the results so far.
    pub fn reproduction(&self) -> String {
        self.report().reproduction()
    }
}

impl StudyResults {
    /// The report of the results so far, assembled at most once per new result.
    fn report(&self) -> std::rc::Rc<study::StudyReport> {
        self.assembled
            .borrow_mut()
            .get_or_insert_with(|| {
                std::rc::Rc::new(study::assemble(self.config, &self.jobs, &self.results))
            })
            .clone()
    }

    fn plot(&self, id: &str) -> Result<Plot, JsValue> {
        let report = self.report();
        let plot = report
            .plots
            .iter()
            .find(|p| p.id == id)
            .ok_or_else(|| js_error(format!("no plot '{id}'")))?;
        Ok(Plot::shares(
            &plot.title,
            &plot.x_label,
            &plot.y_label,
            &plot.lines,
        ))
    }

    fn table(&self, id: &str) -> Result<study::Table, JsValue> {
        self.report()
            .tables
            .iter()
            .find(|t| t.id == id)
            .cloned()
            .ok_or_else(|| js_error(format!("no table '{id}'")))
    }
}

// The essay's section figures: computed and drawn here, so the page's first load carries only
// the main figure. The page loads this module when a section first scrolls into view.

fn theme(dark: bool) -> Theme {
    if dark {
        Theme::DARK
    } else {
        Theme::LIGHT
    }
}

fn canvas(id: &str) -> Result<Canvas, JsValue> {
    Canvas::new(id).ok_or_else(|| js_error(format!("no canvas with id '{id}'")))
}

/// Computes a section's figure, draws it on `canvas_id` (unless empty) and returns its data
/// (with any table). `name` is one of `ceiling`, `swc-offsets`, `honest`, `lockout`, `split`,
/// `boundary-table`.
#[wasm_bindgen]
pub fn section(
    name: &str,
    params: JsValue,
    canvas_id: &str,
    dark: bool,
) -> Result<JsValue, JsValue> {
    let p: SectionParams = serde_wasm_bindgen::from_value(params).map_err(js_error)?;
    let data = section_data(name, &p)?;
    if !canvas_id.is_empty() {
        section_plot(name, &data, &p)
            .draw(&canvas(canvas_id)?.into_drawing_area(), theme(dark))
            .map_err(js_error)?;
    }
    serde_wasm_bindgen::to_value(&data).map_err(js_error)
}

/// Computes a section's data only (with any table), for the section worker: the page's
/// thread then draws it with [`draw_section`], which is cheap.
#[wasm_bindgen(js_name = sectionData)]
pub fn section_data_js(name: &str, params: JsValue) -> Result<JsValue, JsValue> {
    let p: SectionParams = serde_wasm_bindgen::from_value(params).map_err(js_error)?;
    serde_wasm_bindgen::to_value(&section_data(name, &p)?).map_err(js_error)
}

/// Draws a section's figure from data [`section_data_js`] computed, on `canvas_id`.
#[wasm_bindgen(js_name = drawSection)]
pub fn draw_section(
    name: &str,
    data: JsValue,
    params: JsValue,
    canvas_id: &str,
    dark: bool,
) -> Result<(), JsValue> {
    let p: SectionParams = serde_wasm_bindgen::from_value(params).map_err(js_error)?;
    let data: SectionData = serde_wasm_bindgen::from_value(data).map_err(js_error)?;
    section_plot(name, &data, &p)
        .draw(&canvas(canvas_id)?.into_drawing_area(), theme(dark))
        .map_err(js_error)
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

/// A section's chart, from its data.
fn section_plot(name: &str, data: &SectionData, p: &SectionParams) -> Plot {
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
        return Plot::Bars {
            title: format!(
                "Share of an honest {} client served at {:.0}% of the limit",
                p.traffic,
                100.0 * p.load
            ),
            bars,
            max: 100.0,
            unit: "%".into(),
        };
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
    Plot::Xy {
        title: title.into(),
        x_label: x_label.into(),
        y_label: y_label.into(),
        series,
        references: data.references.clone(),
        y_range: None,
        x_range: None,
    }
}

fn section_data(name: &str, p: &SectionParams) -> Result<SectionData, JsValue> {
    match name {
        "ceiling" => page::bucket_ceiling(p.limit, p.capacity),
        "swc-offsets" => page::swc_offsets(p.limit),
        "honest" => page::honest_client(&p.traffic, p.load, p.seed),
        "lockout" => page::lockout(p.limit, p.seed),
        "split" => page::split(p.seed),
        "boundary-table" => page::boundary_table(p.limit),
        other => return Err(js_error(format!("unknown section '{other}'"))),
    }
    .map_err(js_error)
}

/// The plots of a view, computed afresh from its parameters (every run is deterministic, so
/// they are the ones on the page): `main` and `compare` take the main figure's controls,
/// `section:NAME` a section's parameters.
fn view_plots(view: &str, params: JsValue) -> Result<Vec<Plot>, JsValue> {
    if let Some(name) = view.strip_prefix("section:") {
        let p: SectionParams = serde_wasm_bindgen::from_value(params).map_err(js_error)?;
        return Ok(vec![section_plot(name, &section_data(name, &p)?, &p)]);
    }
    let mut controls: Controls = serde_wasm_bindgen::from_value(params).map_err(js_error)?;
    controls.replay = REPLAY.with(|r| r.borrow().clone());
    match view {
        "main" => {
            let (readout, trace) = page::run(&controls).map_err(js_error)?;
            Ok(page::main_plots(&controls, &readout, &trace).into())
        }
        "compare" => Ok(page::compare(&controls)
            .map_err(js_error)?
            .into_iter()
            .map(|(_, plot)| plot)
            .collect()),
        other => Err(js_error(format!(
            "unknown view '{other}': expected main, compare or section:NAME"
        ))),
    }
}

/// Plot `index` of a view as `{svg, csv}`: an SVG document of `width` × `height` drawn by the
/// plotters SVG backend from the same chart code as the canvas, and the data behind it.
#[wasm_bindgen(js_name = exportPlot)]
pub fn export_plot(
    view: &str,
    params: JsValue,
    index: u32,
    width: u32,
    height: u32,
    dark: bool,
) -> Result<JsValue, JsValue> {
    let plots = view_plots(view, params)?;
    let plot = plots
        .get(index as usize)
        .ok_or_else(|| js_error(format!("view '{view}' has no plot {index}")))?;
    exported(plot, width, height, dark)
}

fn exported(plot: &Plot, width: u32, height: u32, dark: bool) -> Result<JsValue, JsValue> {
    if !(100..=4000).contains(&width) || !(100..=4000).contains(&height) {
        return Err(js_error(format!(
            "an export of {width} × {height} px: each side must be from 100 to 4000 px"
        )));
    }
    let out = Exported {
        svg: plot.svg(width, height, theme(dark)).map_err(js_error)?,
        csv: plot.csv(),
    };
    serde_wasm_bindgen::to_value(&out).map_err(js_error)
}

#[derive(serde::Serialize)]
struct Exported {
    svg: String,
    csv: String,
}

// Bring your own traffic: the importer runs in a worker; the page's thread keeps the times for
// the lab's exports.

/// A traffic file being read, slice by slice, in a worker.
#[wasm_bindgen]
#[derive(Debug)]
pub struct Import {
    importer: Option<Importer>,
    imported: Option<Imported>,
}

/// What the page shows of an import (the times are fetched separately, as a typed array).
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct ImportSummary<'a> {
    format: &'static str,
    format_label: &'static str,
    lines: u64,
    blank: u64,
    filtered_out: u64,
    malformed: u64,
    first_malformed: &'a [ratelab::import::BadLine],
    reordered: bool,
    count: u64,
    first_us: f64,
    last_us: f64,
    span_text: String,
}

#[wasm_bindgen]
impl Import {
    /// An importer reading `format` (`auto`, `seconds`, `ms`, `iso`, `access-log`), keeping
    /// only the access-log lines whose `field` is exactly `value` (no filter if `field` is
    /// empty).
    #[wasm_bindgen(constructor)]
    pub fn new(format: &str, field: &str, value: &str) -> Result<Import, JsValue> {
        let format = Format::from_name(format).map_err(js_error)?;
        let filter = if field.is_empty() {
            None
        } else {
            if value.is_empty() {
                return Err(js_error(format!(
                    "the filter on '{field}' has no value: enter the exact value to keep, or choose (all lines)"
                )));
            }
            Some(Filter {
                field: Field::from_name(field).map_err(js_error)?,
                value: value.to_owned(),
            })
        };
        Ok(Import {
            importer: Some(Importer::new(ImportOptions { format, filter })),
            imported: None,
        })
    }

    /// Reads the next slice of the file.
    pub fn feed(&mut self, bytes: &[u8]) -> Result<(), JsValue> {
        self.importer
            .as_mut()
            .ok_or_else(|| js_error("the import is finished"))?
            .feed(bytes)
            .map_err(js_error)
    }

    /// Lines read so far.
    pub fn lines(&self) -> f64 {
        self.importer.as_ref().map_or(0.0, |i| i.lines() as f64)
    }

    /// Ends the file; returns the summary the page shows.
    pub fn finish(&mut self) -> Result<JsValue, JsValue> {
        let importer = self
            .importer
            .take()
            .ok_or_else(|| js_error("the import is finished"))?;
        let imported = importer.finish().map_err(js_error)?;
        let first = imported.times.first().copied().unwrap_or(0);
        let last = imported.times.last().copied().unwrap_or(0);
        let summary = ImportSummary {
            format: imported.format.name(),
            format_label: match imported.format {
                Format::Seconds => "epoch seconds",
                Format::Millis => "epoch milliseconds",
                Format::Iso8601 => "ISO 8601 times",
                Format::AccessLog => "an access log",
                Format::Auto => "detected times",
            },
            lines: imported.lines,
            blank: imported.blank,
            filtered_out: imported.filtered_out,
            malformed: imported.malformed,
            first_malformed: &imported.first_malformed,
            reordered: imported.reordered,
            count: imported.times.len() as u64,
            first_us: first as f64,
            last_us: last as f64,
            span_text: ratelab::time::format_duration(last - first),
        };
        let out = serde_wasm_bindgen::to_value(&summary).map_err(js_error)?;
        self.imported = Some(imported);
        Ok(out)
    }

    /// The times read, in µs since the epoch (exact: every time up to the year 9999 is below
    /// 2^53).
    pub fn times(&self) -> js_sys::Float64Array {
        let times: Vec<f64> = self
            .imported
            .as_ref()
            .map_or_else(Vec::new, |i| i.times.iter().map(|&t| t as f64).collect());
        js_sys::Float64Array::from(times.as_slice())
    }
}

/// The [`page::ReplayReport`] of `times` (from [`Import::times`]) at the controls' limit,
/// window and capacity, sizing a token bucket to serve `share`.
#[wasm_bindgen(js_name = replayReport)]
pub fn replay_report(times: &[f64], controls: JsValue, share: f64) -> Result<JsValue, JsValue> {
    let mut controls: Controls = serde_wasm_bindgen::from_value(controls).map_err(js_error)?;
    controls.replay = Some(page::replay_of(times, "your file", "auto", "", "").map_err(js_error)?);
    let report = page::replay_report(&controls, share).map_err(js_error)?;
    serde_wasm_bindgen::to_value(&report).map_err(js_error)
}

thread_local! {
    /// The reader's traffic, on the page's thread, for exporting the lab's plots of it.
    static REPLAY: std::cell::RefCell<Option<ratelab::spec::Replay>> = const { std::cell::RefCell::new(None) };
}

/// Keeps the reader's traffic (as the lab shows it) for [`export_plot`]; the arguments are
/// those of the lab's `setReplay`.
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
    /// import worker (each defines `ratelabPanicked`).
    #[wasm_bindgen(js_namespace = self, js_name = ratelabPanicked)]
    fn ratelab_panicked(message: &str);
}

/// Installs the panic hook of this module (called once after loading): a panic reaches the
/// page's error banner with its message instead of a bare trap.
#[wasm_bindgen(js_name = extraPanicHook)]
pub fn extra_panic_hook() {
    std::panic::set_hook(Box::new(|info| ratelab_panicked(&info.to_string())));
}

// Real limiters: reports that `ratelab probe` recorded, shipped with the page or loaded by
// the reader, shown beside a model's decisions on the same send times.

/// The largest probe report the page reads (a report of the most requests a probe sends is
/// about 20 MB).
pub const MAX_PROBE_REPORT_BYTES: usize = 64 << 20;

/// A probe report, checked, and compared with a model.
#[wasm_bindgen]
#[derive(Debug)]
pub struct ProbeView {
    report: ratelab::probe::ProbeReport,
}

/// What the page shows of a probe report.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct ProbeSummary<'a> {
    target: &'a str,
    traffic: &'a str,
    limit: u64,
    window_text: String,
    command: Option<&'a str>,
    sent: u64,
    offered: u64,
    admitted: u64,
    rejected: u64,
    other: u64,
    errors: u64,
    timeouts: u64,
    served: Option<f64>,
    busiest: u64,
    wrong_admits: u64,
    wrong_rejects: u64,
    lateness_p99_ms: f64,
    model: Option<&'a str>,
    model_admitted: Option<u64>,
    model_served: Option<f64>,
    model_busiest: Option<u64>,
    model_wrong_admits: Option<u64>,
    model_wrong_rejects: Option<u64>,
    agreement: Option<f64>,
    agree: Option<u64>,
    compared: Option<u64>,
    real_only: Option<u64>,
    model_only: Option<u64>,
}

#[wasm_bindgen]
impl ProbeView {
    /// Reads the JSON of `ratelab probe --format json`; `name` names the file in messages.
    #[wasm_bindgen(constructor)]
    pub fn new(json: &str, name: &str) -> Result<ProbeView, JsValue> {
        probe_view(json, name).map_err(js_error)
    }

    /// The numbers the page shows.
    pub fn summary(&self) -> Result<JsValue, JsValue> {
        let r = &self.report;
        let c = r.comparison.as_ref();
        let s = ProbeSummary {
            target: &r.target,
            traffic: &r.traffic,
            limit: r.limit,
            window_text: ratelab::time::format_duration(r.window_us),
            command: r.command.as_deref(),
            sent: r.sent,
            offered: r.offered,
            admitted: r.audit.admitted,
            rejected: r.audit.rejected,
            other: r.other,
            errors: r.errors,
            timeouts: r.timeouts,
            served: r.audit.served_share,
            busiest: r.audit.busiest,
            wrong_admits: r.audit.wrong_admits,
            wrong_rejects: r.audit.wrong_rejects,
            lateness_p99_ms: r.lateness.p99_us as f64 / 1000.0,
            model: c.map(|c| c.model.as_str()),
            model_admitted: c.map(|c| c.audit.admitted),
            model_served: c.and_then(|c| c.audit.served_share),
            model_busiest: c.map(|c| c.audit.busiest),
            model_wrong_admits: c.map(|c| c.audit.wrong_admits),
            model_wrong_rejects: c.map(|c| c.audit.wrong_rejects),
            agreement: c.and_then(|c| c.agreement),
            agree: c.map(|c| c.agree),
            compared: c.map(|c| c.compared),
            real_only: c.map(|c| c.real_only),
            model_only: c.map(|c| c.model_only),
        };
        serde_wasm_bindgen::to_value(&s).map_err(js_error)
    }

    /// The same report compared with the limiter `spec` (e.g. `leaky-bucket:burst=5`).
    #[wasm_bindgen(js_name = withModel)]
    pub fn with_model(&self, spec: &str) -> Result<ProbeView, JsValue> {
        let spec = ratelab::LimiterSpec::parse(spec.trim()).map_err(js_error)?;
        Ok(ProbeView {
            report: self.report.with_model(&spec).map_err(js_error)?,
        })
    }

    /// Draws the report's figure on the canvas `canvas_id`.
    #[wasm_bindgen(js_name = drawPlot)]
    pub fn draw_plot(&self, canvas_id: &str, dark: bool) -> Result<(), JsValue> {
        probe_plot(&self.report)
            .draw(&canvas(canvas_id)?.into_drawing_area(), theme(dark))
            .map_err(js_error)
    }

    /// The figure as `{svg, csv}`.
    #[wasm_bindgen(js_name = exportPlot)]
    pub fn export_plot(&self, width: u32, height: u32, dark: bool) -> Result<JsValue, JsValue> {
        exported(&probe_plot(&self.report), width, height, dark)
    }
}

fn probe_view(json: &str, name: &str) -> Result<ProbeView, String> {
    let what = format!("The file '{name}'");
    if json.len() > MAX_PROBE_REPORT_BYTES {
        return Err(format!(
            "{what} is {} MB: a probe report is at most {} MB",
            json.len() >> 20,
            MAX_PROBE_REPORT_BYTES >> 20
        ));
    }
    if json.trim().is_empty() {
        return Err(format!(
            "{what} is empty: expected the JSON that `ratelab probe --format json` writes"
        ));
    }
    // The browser's own JSON parser: serde_json would add about 60 KB to this module.
    let not_a_report = |e: String| {
        format!("{what} is not a probe report ({e}): expected the JSON that `ratelab probe --format json` writes")
    };
    let value = js_sys::JSON::parse(json).map_err(|e| {
        not_a_report(
            e.dyn_ref::<js_sys::Error>()
                .map_or_else(|| "not JSON".into(), |e| String::from(e.message())),
        )
    })?;
    let report: ratelab::probe::ProbeReport =
        serde_wasm_bindgen::from_value(value).map_err(|e| {
            let e = e.to_string();
            not_a_report(e.strip_prefix("Error: ").unwrap_or(&e).to_owned())
        })?;
    report.check().map_err(|e| format!("{what}: {e}"))?;
    Ok(ProbeView { report })
}

/// Requests sent, admitted by the real limiter and admitted by the model, counted over time.
fn probe_plot(r: &ratelab::probe::ProbeReport) -> Plot {
    let t = &r.trace;
    let n = t.sent_us.len();
    // At most about 2,000 points a line: every k-th request, and the last.
    let step = n.div_ceil(2000).max(1);
    let model: Vec<char> = t.model.as_deref().unwrap_or("").chars().collect();
    let (mut sent, mut real, mut modelled) = (Vec::new(), Vec::new(), Vec::new());
    let (mut s, mut a, mut m) = (0.0, 0.0, 0.0);
    for (i, (&us, c)) in t.sent_us.iter().zip(t.outcome.chars()).enumerate() {
        s += 1.0;
        a += f64::from(u8::from(c == 'A'));
        m += f64::from(u8::from(model.get(i) == Some(&'A')));
        if i % step == 0 || i + 1 == n {
            let x = us as f64 / 1e6;
            sent.push((x, s));
            real.push((x, a));
            modelled.push((x, m));
        }
    }
    let mut series = vec![
        Series {
            name: "sent".into(),
            points: sent,
            color: charts::SKY,
            markers: false,
        },
        Series {
            name: "admitted by the real limiter".into(),
            points: real,
            color: charts::BLUE,
            markers: false,
        },
    ];
    if let Some(c) = &r.comparison {
        series.push(Series {
            name: format!("admitted by the model, {}", c.model),
            // Marked, so that it shows where it lies on the real line.
            markers: modelled.len() <= 400,
            points: modelled,
            color: charts::PURPLE,
        });
    }
    Plot::Xy {
        title: format!("{}: requests so far", r.target),
        x_label: "seconds from the start of the probe".into(),
        y_label: "requests".into(),
        series,
        references: Vec::new(),
        y_range: None,
        x_range: None,
    }
}

// Section 1's small multiples, computed in the section worker like the other section figures.

/// A trailing-window chart as plain data, to cross from the worker to the page.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct WindowData {
    times_s: Vec<f64>,
    counts: Vec<f64>,
    limit: f64,
    bound: Option<f64>,
    x_max: f64,
}

/// Every algorithm on the arrivals of `controls`: `{rows, plots}`, the compare table's rows
/// and each one's trailing-window chart as data for [`draw_window`].
#[wasm_bindgen(js_name = compareData)]
pub fn compare_data(controls: JsValue) -> Result<JsValue, JsValue> {
    let controls: Controls = serde_wasm_bindgen::from_value(controls).map_err(js_error)?;
    let compared = page::compare(&controls).map_err(js_error)?;
    let mut rows = Vec::with_capacity(compared.len());
    let mut plots = Vec::with_capacity(compared.len());
    for (row, plot) in compared {
        let Plot::Window {
            times_s,
            counts,
            limit,
            bound,
            x_max,
        } = plot
        else {
            return Err(js_error(
                "a compare plot that is not a trailing-window chart",
            ));
        };
        rows.push(row);
        plots.push(WindowData {
            times_s,
            counts,
            limit,
            bound,
            x_max,
        });
    }
    #[derive(serde::Serialize)]
    struct Out {
        rows: Vec<page::CompareRow>,
        plots: Vec<WindowData>,
    }
    serde_wasm_bindgen::to_value(&Out { rows, plots }).map_err(js_error)
}

/// Draws one chart of [`compare_data`] on the canvas `canvas_id`.
#[wasm_bindgen(js_name = drawWindow)]
pub fn draw_window(canvas_id: &str, data: JsValue, dark: bool) -> Result<(), JsValue> {
    let d: WindowData = serde_wasm_bindgen::from_value(data).map_err(js_error)?;
    Plot::Window {
        times_s: d.times_s,
        counts: d.counts,
        limit: d.limit,
        bound: d.bound,
        x_max: d.x_max,
    }
    .draw(&canvas(canvas_id)?.into_drawing_area(), theme(dark))
    .map_err(js_error)
}
