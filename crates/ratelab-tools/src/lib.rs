//! The page's tools module: what the page and its import worker need only when the reader
//! acts. It holds the study's results as workers return them (tables, plots, the reproduction
//! report), SVG and CSV export (the plotters SVG backend), the import of a reader's traffic
//! file, probe reports read and compared with a model (`ProbeView`), and the lab's nginx
//! extras: the sentences and nginx.conf lines beside a run of nginx, and nginx.conf lines
//! pasted into its fields. The page imports it (an ES module) when the reader
//! runs the study, saves a plot, chooses a file, asks for another model, or chooses nginx or
//! a library in the lab (which then runs the library here: the lab and its mechanism view
//! are compiled into this module too); the import worker imports it too. What a reader who only scrolls needs is
//! in `ratelab-extra`, and the study's jobs run in the lean `ratelab-study` module.

use plotters::coord::Shift;
use plotters::prelude::*;
use ratelab::import::{Imported, Importer};
use ratelab::study::{self, Job, JobResult, StudyConfig};
use ratelab_charts::canvas::Canvas;
use ratelab_charts::{Draw, Plot, Theme};
use ratelab_page::controls::Controls;
use ratelab_page::export::{self, View};
use ratelab_page::fit_view;
use ratelab_page::import_view::{self, ImportSummary};
use ratelab_page::page;
use ratelab_page::probe_view::{self, ProbeSummary};
use ratelab_page::sections::{Dials, SectionParams};
use serde::Serialize;
use wasm_bindgen::prelude::*;

// The lab and its mechanism view for a library's limiter, which only this module has the
// code of: the main and on-demand modules' own files, compiled here (`controls::is_library`).
#[path = "../../ratelab-web/src/lab.rs"]
mod lab;
#[path = "../../ratelab-extra/src/mechanism_view.rs"]
mod mechanism_view;
pub use lab::Lab;
pub use mechanism_view::MechanismView;

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

    /// The order to hand the jobs to the workers in: the largest first, so that the workers
    /// finish together ([`study::run_order`]).
    pub fn order(&self) -> Vec<u32> {
        study::run_order(&self.jobs)
            .into_iter()
            .map(|i| i as u32)
            .collect()
    }

    /// How many results have been added.
    pub fn done(&self) -> u32 {
        self.results.iter().filter(|r| r.is_some()).count() as u32
    }

    /// How many of the study's experiments (its tables' groups of jobs) there are.
    pub fn experiments(&self) -> u32 {
        study::experiments_done(&self.jobs, &self.results).1 as u32
    }

    /// How many of them have every job's result.
    #[wasm_bindgen(js_name = experimentsDone)]
    pub fn experiments_done(&self) -> u32 {
        study::experiments_done(&self.jobs, &self.results).0 as u32
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
            .filter(|p| !p.plot.is_empty())
            .map(|p| (p.id.clone(), p.plot.title().to_owned()))
            .collect();
        serde_wasm_bindgen::to_value(&ids).map_err(js_error)
    }

    /// The plot `id` from the results so far, packed (`{numbers, text}`, as
    /// `ratelab_page::wire` packs it): the page draws it with the extra module's `drawPlot`,
    /// whose drawing code the section figures have already run (and V8 compiled). Drawn with
    /// this module's own first, a plot took 13 to 26 ms the first time, half of it compiling.
    #[wasm_bindgen(js_name = packedPlot)]
    pub fn packed_plot(&self, id: &str) -> Result<JsValue, JsValue> {
        packed(&self.plot(id)?)
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

    /// The reproduction report's rows as tables, one per section of each essay, for the page.
    #[wasm_bindgen(js_name = claimTables)]
    pub fn claim_tables(&self) -> Result<JsValue, JsValue> {
        serde_wasm_bindgen::to_value(&self.report().claim_tables())
            .map_err(|e| js_error(e.to_string()))
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
        self.report()
            .plots
            .iter()
            .find(|p| p.id == id)
            .map(|p| p.plot.clone())
            .ok_or_else(|| js_error(format!("no plot '{id}'")))
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

// The drawing of the study's plots on the page's canvases.

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

/// Plot `index` of a view as `{svg, csv}`: an SVG document of `width` × `height` drawn by the
/// plotters SVG backend from the same chart code as the canvas, and the data behind it. `view`
/// is `main` or `compare` (with the main figure's controls as `params`), `rules` (section 1,
/// no `params`) or `section:NAME` (with the section's dials as `params`).
#[wasm_bindgen(js_name = exportPlot)]
pub fn export_plot(
    view: &str,
    params: JsValue,
    index: u32,
    width: u32,
    height: u32,
    dark: bool,
) -> Result<JsValue, JsValue> {
    let view = View::parse(view).map_err(js_error)?;
    let (controls, section) = match view {
        View::Rules => (Controls::default(), SectionParams::default()),
        View::Section(s) => {
            let dials: Dials = serde_wasm_bindgen::from_value(params).map_err(js_error)?;
            (Controls::default(), s.params(&dials))
        }
        View::Main | View::Compare => {
            let mut controls: Controls =
                serde_wasm_bindgen::from_value(params).map_err(js_error)?;
            controls.replay = REPLAY.with(|r| r.borrow().clone());
            (controls, SectionParams::default())
        }
    };
    let plots = view.plots(&controls, &section).map_err(js_error)?;
    let plot = plots
        .get(index as usize)
        .ok_or_else(|| js_error(format!("the view has no plot {index}")))?;
    exported(plot, width, height, dark)
}

/// A chart packed as `ratelab_page::wire` packs it, `{numbers, text}`, for the extra module's
/// `drawPlot`.
fn packed(plot: &Plot) -> Result<JsValue, JsValue> {
    let p = ratelab_page::wire::pack(plot);
    let out = js_sys::Object::new();
    js_sys::Reflect::set(
        &out,
        &"numbers".into(),
        &js_sys::Float64Array::from(p.numbers.as_slice()),
    )?;
    js_sys::Reflect::set(&out, &"text".into(), &p.text.into())?;
    Ok(out.into())
}

/// The gateways section's setting, checked (`ratelab_page::gateways::Setting`).
fn gateways_setting(
    gateways: u32,
    route: &str,
    coord: &str,
    sync: &str,
) -> Result<ratelab_page::gateways::Setting, JsValue> {
    let every_ms = ratelab_page::gateways::sync_ms(sync).map_err(js_error)?;
    ratelab_page::gateways::Setting::new(gateways, route, coord, every_ms).map_err(js_error)
}

/// Each gateway's view at the playhead as `{atMs, truth, believed, limit, sentence, clock,
/// full}`, the beliefs a `Uint32Array`, gateway 1 first, `clock` the instant as "m:ss" and
/// `full` whether the true count is at `L` or more.
fn views_value(v: &ratelab_page::gateways::Views) -> Result<JsValue, JsValue> {
    let out = js_sys::Object::new();
    let believed: Vec<u32> = v
        .believed
        .iter()
        .map(|&b| u32::try_from(b).unwrap_or(u32::MAX))
        .collect();
    js_sys::Reflect::set(&out, &"atMs".into(), &(v.at_ms as f64).into())?;
    js_sys::Reflect::set(&out, &"truth".into(), &(v.truth as f64).into())?;
    js_sys::Reflect::set(
        &out,
        &"believed".into(),
        &js_sys::Uint32Array::from(believed.as_slice()),
    )?;
    js_sys::Reflect::set(&out, &"limit".into(), &(v.limit as f64).into())?;
    js_sys::Reflect::set(&out, &"sentence".into(), &v.sentence.as_str().into())?;
    let clock = ratelab_page::gateways::clock(v.at_ms);
    js_sys::Reflect::set(&out, &"clock".into(), &clock.into())?;
    let full = v.truth >= ratelab_page::gateways::LIMIT;
    js_sys::Reflect::set(&out, &"full".into(), &full.into())?;
    Ok(out.into())
}

/// The gateways figure (`ratelab_page::gateways`) for `gateways` gateways routed by `route`
/// (random, round-robin or hot) and coordinated by `coord` (local, split, sync or central),
/// syncing every `sync` (the menu's text, `5s`): `{timeline, sweep, table, summary, views}`, its two charts packed
/// ([`packed`]), its table as rows of strings, header first, `summary`, what the table says of
/// the coordination chosen, and `views`, each gateway's view at the playhead
/// ([`views_value`]), at `at_ms` if given, else where the true count was highest.
#[wasm_bindgen(js_name = gatewaysFigure)]
pub fn gateways_figure(
    gateways: u32,
    route: &str,
    coord: &str,
    sync: &str,
    seed: u32,
    at_ms: Option<u32>,
) -> Result<JsValue, JsValue> {
    let setting = gateways_setting(gateways, route, coord, sync)?;
    let f = ratelab_page::gateways::figure(&setting, u64::from(seed), at_ms.map(u64::from))
        .map_err(js_error)?;
    let out = js_sys::Object::new();
    js_sys::Reflect::set(&out, &"timeline".into(), &packed(&f.timeline)?)?;
    js_sys::Reflect::set(&out, &"sweep".into(), &packed(&f.sweep)?)?;
    let table = serde_wasm_bindgen::to_value(&f.table).map_err(js_error)?;
    js_sys::Reflect::set(&out, &"table".into(), &table)?;
    js_sys::Reflect::set(&out, &"summary".into(), &f.summary.into())?;
    js_sys::Reflect::set(&out, &"views".into(), &views_value(&f.views)?)?;
    Ok(out.into())
}

/// Draws a packed chart (`numbers` and `text`, as [`packed`] gives them) on the canvas
/// `canvas_id`: the gateways section's, drawn here rather than by the extra module, whose
/// canvas sets every mark's colour anew (see `ratelab_charts`' feature `cached-fill`).
#[wasm_bindgen(js_name = drawPacked)]
pub fn draw_packed(
    canvas_id: &str,
    numbers: &[f64],
    text: &str,
    dark: bool,
) -> Result<(), JsValue> {
    ratelab_page::wire::unpack(numbers, text)
        .map_err(js_error)?
        .draw(&canvas(canvas_id)?, theme(dark))
        .map_err(js_error)
}

/// The gateways section's dials as a link sets them (`ratelab_page::gateways_link`):
/// `{dials: {gateways, route, coord, sync, atMs}, any, problems}`, `any` whether the query
/// names any of the section's keys and `problems` a sentence per bad one.
#[wasm_bindgen(js_name = gatewaysLink)]
pub fn gateways_link(query: &str) -> Result<JsValue, JsValue> {
    let linked = ratelab_page::gateways_link::decode(query);
    linked
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(js_error)
}

/// The gateways section's dials as link parameters (`gateways=8&…`, no `?`), as entered.
#[wasm_bindgen(js_name = gatewaysQuery)]
pub fn gateways_query(
    gateways: u32,
    route: &str,
    coord: &str,
    sync: &str,
    at_ms: Option<u32>,
) -> String {
    ratelab_page::gateways_link::encode(&ratelab_page::gateways_link::Dials {
        gateways,
        route: route.into(),
        coord: coord.into(),
        sync: sync.into(),
        at_ms: at_ms.map(u64::from),
    })
}

/// The lab's gateways control's dials as a link sets them (`lab-gateways…` keys), as
/// [`gateways_link`] gives the section's.
#[wasm_bindgen(js_name = labGatewaysLink)]
pub fn lab_gateways_link(query: &str) -> Result<JsValue, JsValue> {
    let linked = ratelab_page::gateways_link::decode_lab(query);
    linked
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(js_error)
}

/// The lab's gateways control's dials as link parameters (`lab-gateways=8&…`).
#[wasm_bindgen(js_name = labGatewaysQuery)]
pub fn lab_gateways_query(gateways: u32, route: &str, coord: &str, sync: &str) -> String {
    ratelab_page::gateways_link::encode_lab(&ratelab_page::gateways_link::Dials {
        gateways,
        route: route.into(),
        coord: coord.into(),
        sync: sync.into(),
        at_ms: None,
    })
}

/// The gateways timeline with its playhead at `at_ms`, packed, and each gateway's view there:
/// `{timeline, views}`.
#[wasm_bindgen(js_name = gatewaysPlayhead)]
pub fn gateways_playhead(
    gateways: u32,
    route: &str,
    coord: &str,
    sync: &str,
    seed: u32,
    at_ms: u32,
) -> Result<JsValue, JsValue> {
    let setting = gateways_setting(gateways, route, coord, sync)?;
    let (timeline, views) =
        ratelab_page::gateways::playhead(&setting, u64::from(seed), u64::from(at_ms))
            .map_err(js_error)?;
    let out = js_sys::Object::new();
    js_sys::Reflect::set(&out, &"timeline".into(), &packed(&timeline)?)?;
    js_sys::Reflect::set(&out, &"views".into(), &views_value(&views)?)?;
    Ok(out.into())
}

/// A packed chart (as [`packed`] gives it) as `{svg, csv}` at `width` × `height`: what the
/// page drew, saved.
#[wasm_bindgen(js_name = exportPacked)]
pub fn export_packed(
    numbers: &[f64],
    text: &str,
    width: u32,
    height: u32,
    dark: bool,
) -> Result<JsValue, JsValue> {
    let plot = ratelab_page::wire::unpack(numbers, text).map_err(js_error)?;
    exported(&plot, width, height, dark)
}

fn exported(plot: &Plot, width: u32, height: u32, dark: bool) -> Result<JsValue, JsValue> {
    export::check_size(width, height).map_err(js_error)?;
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

#[wasm_bindgen]
impl Import {
    /// An importer reading `format` (`auto`, `seconds`, `ms`, `iso`, `access-log`), keeping
    /// only the access-log lines whose `field` is exactly `value` (no filter if `field` is
    /// empty).
    #[wasm_bindgen(constructor)]
    pub fn new(format: &str, field: &str, value: &str) -> Result<Import, JsValue> {
        let options = import_view::options(format, field, value).map_err(js_error)?;
        Ok(Import {
            importer: Some(Importer::new(options)),
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

    /// The progress line after `bytes` of the file's `total` bytes.
    pub fn progress(&self, bytes: f64, total: f64) -> String {
        import_view::progress(self.lines(), bytes, total)
    }

    /// Ends the file `name`; returns what the panel says of it ([`import_view::SummaryText`]).
    pub fn finish(&mut self, name: &str) -> Result<JsValue, JsValue> {
        let importer = self
            .importer
            .take()
            .ok_or_else(|| js_error("the import is finished"))?;
        let imported = importer.finish().map_err(js_error)?;
        let text = ImportSummary::of(&imported).text(name);
        let out = serde_wasm_bindgen::to_value(&text).map_err(js_error)?;
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

/// What the panel shows ([`import_view::ReportText`]) of the [`page::ReplayReport`] of `times`
/// (from [`Import::times`]) at the controls' limit, window and capacity, sizing a token bucket
/// to serve `share` (from [`import_share`]).
#[wasm_bindgen(js_name = replayReport)]
pub fn replay_report(times: &[f64], controls: JsValue, share: f64) -> Result<JsValue, JsValue> {
    let mut controls: Controls = serde_wasm_bindgen::from_value(controls).map_err(js_error)?;
    controls.replay = Some(page::replay_of(times, "your file", "auto", "", "").map_err(js_error)?);
    let report = page::replay_report(&controls, share).map_err(js_error)?;
    serde_wasm_bindgen::to_value(&import_view::report_text(&report)).map_err(js_error)
}

/// The share to serve the reader typed (a percentage), as a share from 0 to 1, or the message
/// saying what is accepted.
#[wasm_bindgen(js_name = importShare)]
pub fn import_share(typed: &str) -> Result<f64, JsValue> {
    import_view::share(typed).map_err(js_error)
}

/// The message for a traffic file of `bytes` bytes too large to read, or nothing.
#[wasm_bindgen(js_name = importFileProblem)]
pub fn import_file_problem(name: &str, bytes: f64) -> Option<String> {
    import_view::check_size(name, bytes).err()
}

/// The status line when the file `name` has been read in `ms` milliseconds.
#[wasm_bindgen(js_name = importDone)]
pub fn import_done(name: &str, ms: f64) -> String {
    import_view::done(name, ms)
}

/// The message for the file `name` the importer refused (`message` says why).
#[wasm_bindgen(js_name = importFailed)]
pub fn import_failed(name: &str, message: &str) -> String {
    import_view::failed(name, message)
}

/// "Check your config": `text` (a configuration as pasted) checked as `ratelab check` does,
/// over `window` (empty: each limiter's own period) for `instances` (empty: 2), each limiter
/// it sets with the lab's link for it (`check_view`).
#[wasm_bindgen(js_name = checkConfig)]
pub fn check_config(text: &str, window: &str, instances: &str) -> Result<JsValue, JsValue> {
    let items =
        ratelab_page::check_view::check_config(text, window, instances).map_err(js_error)?;
    serde_wasm_bindgen::to_value(&items).map_err(js_error)
}

/// "Explain my 429s": the access log `text` (or JSON lines, or CSV) fitted to every limiter
/// ratelab models, the typed `statuses` meaning rejected, one limiter per client or one for
/// all: what the panel shows ([`fit_view::FitView`]), or the message saying what was wrong.
#[wasm_bindgen(js_name = explainLog)]
pub fn explain_log(text: &str, statuses: &str, per_client: bool) -> Result<JsValue, JsValue> {
    let rejected = fit_view::statuses(statuses).map_err(js_error)?;
    let view = fit_view::explain(text, rejected, per_client, &|_, _| {}).map_err(js_error)?;
    serde_wasm_bindgen::to_value(&view).map_err(js_error)
}

thread_local! {
    /// The reader's traffic, on the page's thread, for exporting the lab's plots of it.
    static REPLAY: std::cell::RefCell<Option<ratelab::spec::Replay>> = const { std::cell::RefCell::new(None) };
}

thread_local! {
    /// Compare mode's small multiples, from the last [`compare`], for [`draw_compare`].
    static COMPARED: std::cell::RefCell<Vec<Plot>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Compare mode (an action, so here and not in the main module): every algorithm on the
/// same arrivals as the lab's `controls` (the reader's traffic, from [`set_replay`], when
/// that is the lab's); returns the table's rows and keeps each one's chart for
/// [`draw_compare`].
#[wasm_bindgen]
pub fn compare(controls: JsValue) -> Result<JsValue, JsValue> {
    let mut controls: Controls = serde_wasm_bindgen::from_value(controls).map_err(js_error)?;
    controls.replay = REPLAY.with(|r| r.borrow().clone());
    let (rows, plots): (Vec<_>, Vec<_>) = page::compare(&controls)
        .map_err(js_error)?
        .into_iter()
        .unzip();
    COMPARED.with(|c| *c.borrow_mut() = plots);
    serde_wasm_bindgen::to_value(&rows).map_err(js_error)
}

/// The lab's gateways control (`ratelab_page::lab_gateways`): the lab's `controls` (the
/// reader's traffic too) run again behind `gateways` gateways routed by `route` and coordinated
/// by `coord`, syncing every `sync` (the menu's text): `{table, sentence, command, plot}`, its
/// chart packed ([`packed`], for [`draw_packed`]).
#[wasm_bindgen(js_name = labGateways)]
pub fn lab_gateways(
    controls: JsValue,
    gateways: u32,
    route: &str,
    coord: &str,
    sync: &str,
) -> Result<JsValue, JsValue> {
    let mut controls: Controls = serde_wasm_bindgen::from_value(controls).map_err(js_error)?;
    controls.replay = REPLAY.with(|r| r.borrow().clone());
    let every_ms = ratelab_page::gateways::sync_ms(sync).map_err(js_error)?;
    let setting =
        ratelab_page::gateways::Setting::lab(gateways, route, coord, every_ms).map_err(js_error)?;
    let g = ratelab_page::lab_gateways::lab(&controls, &setting).map_err(js_error)?;
    let out = serde_wasm_bindgen::to_value(&g).map_err(js_error)?;
    js_sys::Reflect::set(&out, &"plot".into(), &packed(&g.plot)?)?;
    Ok(out)
}

/// Draws each compared algorithm's trailing-window count on the canvas of the same index.
#[wasm_bindgen(js_name = drawCompare)]
pub fn draw_compare(canvas_ids: Vec<String>, dark: bool) -> Result<(), JsValue> {
    COMPARED.with(|c| {
        for (plot, id) in c.borrow().iter().zip(&canvas_ids) {
            plot.draw(&canvas(id)?, theme(dark)).map_err(js_error)?;
        }
        Ok(())
    })
}

/// Keeps the reader's traffic (as the lab shows it) for [`export_plot`] and [`compare`]; the
/// arguments are those of the lab's `setReplay`.
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

// Real limiters: a probe report read in the browser (the reader's own, or a recorded one once
// the reader compares it with another model or saves its figure; until then the page shows a
// recorded report from its shipped view).

/// A probe report, checked, and compared with a model.
#[wasm_bindgen]
#[derive(Debug)]
pub struct ProbeView {
    report: ratelab::probe::ProbeReport,
}

#[wasm_bindgen]
impl ProbeView {
    /// Reads the JSON of `ratelab probe --format json`; `name` names the file in messages.
    #[wasm_bindgen(constructor)]
    pub fn new(json: &str, name: &str) -> Result<ProbeView, JsValue> {
        probe_view::check_text(json, name).map_err(js_error)?;
        // The browser's own JSON parser: serde_json would add about 60 KB to this module.
        let value = js_sys::JSON::parse(json).map_err(|e| {
            let e = e
                .dyn_ref::<js_sys::Error>()
                .map_or_else(|| "not JSON".into(), |e| String::from(e.message()));
            js_error(probe_view::not_a_report(name, &e))
        })?;
        let report: ratelab::probe::ProbeReport = serde_wasm_bindgen::from_value(value)
            .map_err(|e| js_error(probe_view::not_a_report(name, &e.to_string())))?;
        probe_view::check_report(&report, name).map_err(js_error)?;
        Ok(ProbeView { report })
    }

    /// What the page shows for the file named `label` ([`probe_view::Shown`]: `{rows, text,
    /// command, model}`), as a recorded report's shipped view says it.
    pub fn summary(&self, label: &str) -> Result<JsValue, JsValue> {
        serde_wasm_bindgen::to_value(&ProbeSummary::of(&self.report).describe(label).shown())
            .map_err(js_error)
    }

    /// The same report compared with the limiter `spec` (e.g. `leaky-bucket:burst=5`).
    #[wasm_bindgen(js_name = withModel)]
    pub fn with_model(&self, spec: &str) -> Result<ProbeView, JsValue> {
        let bad = |e: ratelab::Error| js_error(probe_view::bad_model(spec, &e.to_string()));
        let parsed = ratelab::LimiterSpec::parse(spec.trim()).map_err(bad)?;
        Ok(ProbeView {
            report: self.report.with_model(&parsed).map_err(bad)?,
        })
    }

    /// Draws the report's figure on the canvas `canvas_id`.
    #[wasm_bindgen(js_name = drawPlot)]
    pub fn draw_plot(&self, canvas_id: &str, dark: bool) -> Result<(), JsValue> {
        probe_view::plot(&self.report)
            .draw(&canvas(canvas_id)?, theme(dark))
            .map_err(js_error)
    }

    /// The figure as `{svg, csv}`.
    #[wasm_bindgen(js_name = exportPlot)]
    pub fn export_plot(&self, width: u32, height: u32, dark: bool) -> Result<JsValue, JsValue> {
        exported(&probe_view::plot(&self.report), width, height, dark)
    }
}

/// The message for a probe report file of `bytes` bytes too large to read, or nothing.
/// nginx's fields (`{rate, unit, burst, delay, nodelay}`, as text) from pasted nginx.conf
/// lines, the fields they do not name kept from `current`; or the sentence saying what was
/// wrong with the text. Here, not in the main module: only a reader who pastes needs it.
#[wasm_bindgen(js_name = pasteNginx)]
pub fn paste_nginx(text: &str, current: JsValue) -> Result<JsValue, JsValue> {
    let current: ratelab_page::form::NginxForm =
        serde_wasm_bindgen::from_value(current).map_err(js_error)?;
    let fields = ratelab_page::form::paste_nginx(text, &current).map_err(js_error)?;
    serde_wasm_bindgen::to_value(&fields).map_err(js_error)
}

/// Beside a run of nginx (`controls`, as `Lab.run` takes them): what nginx makes of its
/// settings, in sentences, and its nginx.conf lines (`{sentences, config}`).
#[wasm_bindgen(js_name = nginxNotes)]
pub fn nginx_notes(controls: JsValue) -> Result<JsValue, JsValue> {
    let controls: Controls = serde_wasm_bindgen::from_value(controls).map_err(js_error)?;
    let notes = ratelab_page::form::nginx_notes(&controls).map_err(js_error)?;
    serde_wasm_bindgen::to_value(&notes).map_err(js_error)
}

#[wasm_bindgen(js_name = probeFileProblem)]
pub fn probe_file_problem(name: &str, bytes: f64) -> Option<String> {
    probe_view::check_size(bytes, name).err()
}

#[wasm_bindgen]
extern "C" {
    /// Reports a panic: the page's banner on the page's thread, a message to the page in the
    /// import worker (each defines `ratelabPanicked`).
    #[wasm_bindgen(js_namespace = self, js_name = ratelabPanicked)]
    fn ratelab_panicked(message: &str);
}

/// Installs the panic hook as soon as the module is instantiated: a panic reaches the page's
/// error banner with its message instead of a bare trap.
#[wasm_bindgen(start)]
pub fn on_start() {
    std::panic::set_hook(Box::new(|info| ratelab_panicked(&info.to_string())));
}
