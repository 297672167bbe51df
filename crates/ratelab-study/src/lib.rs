//! The study's worker module: the essay's study as jobs behind a wasm-bindgen `Study`, run one
//! at a time by each Web Worker. Built for speed and kept lean: it holds nothing but the
//! simulator and the study's plan (everything else the page loads on demand is in
//! `ratelab-extra`), which keeps V8's optimised code for the hot loops as good as it gets.

use ratelab::study::{self, Job, StudyConfig};
use wasm_bindgen::prelude::*;

fn js_error(e: impl std::fmt::Display) -> JsValue {
    JsValue::from_str(&e.to_string())
}

/// The whole study of the essay, as jobs: each Web Worker keeps one and runs the jobs it is
/// given; `ratelab-extra`'s `StudyResults` of the same size collects their results.
#[wasm_bindgen]
#[derive(Debug)]
pub struct Study {
    jobs: Vec<Job>,
}

#[wasm_bindgen]
impl Study {
    /// The study at `runs` runs of `minutes` minutes, seeded with `seed`; with `honest_only`,
    /// just the honest-client table's jobs (as `ratelab study --only honest`).
    #[wasm_bindgen(constructor)]
    pub fn new(runs: u32, minutes: u32, seed: u32, honest_only: bool) -> Result<Study, JsValue> {
        let config = StudyConfig {
            runs,
            minutes: u64::from(minutes),
            seed: u64::from(seed),
        };
        let mut jobs = study::plan(config).map_err(js_error)?;
        if honest_only {
            study::keep_honest(&mut jobs);
        }
        Ok(Study { jobs })
    }

    /// How many jobs the study has.
    pub fn jobs(&self) -> u32 {
        self.jobs.len() as u32
    }

    /// The experiment job `index` belongs to, named as its table is (as `ratelab study
    /// --timings` names it): for `tests/bench-study-jobs.mjs`, which times the jobs in Node.
    pub fn experiment(&self, index: u32) -> Result<String, JsValue> {
        self.jobs
            .get(index as usize)
            .map(|job| job.kind.experiment().to_owned())
            .ok_or_else(|| js_error(format!("no job {index}")))
    }

    /// Runs job `index` (in a worker) and returns its result as a plain object.
    #[wasm_bindgen(js_name = runJob)]
    pub fn run_job(&self, index: u32) -> Result<JsValue, JsValue> {
        let job = self
            .jobs
            .get(index as usize)
            .ok_or_else(|| js_error(format!("no job {index}")))?;
        let result = study::run_job(job).map_err(js_error)?;
        serde_wasm_bindgen::to_value(&result).map_err(js_error)
    }
}

#[wasm_bindgen]
extern "C" {
    /// Reports a panic to the worker script, which passes it to the page's banner.
    #[wasm_bindgen(js_namespace = self, js_name = ratelabPanicked)]
    fn ratelab_panicked(message: &str);
}

/// Installs the panic hook of this module (the worker script calls it once after loading):
/// a panic reaches the page's error banner with its message instead of a bare trap.
#[wasm_bindgen(js_name = studyPanicHook)]
pub fn study_panic_hook() {
    std::panic::set_hook(Box::new(|info| ratelab_panicked(&info.to_string())));
}
