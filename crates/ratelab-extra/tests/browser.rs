//! The on-demand module in a real browser: every section figure computes and draws, and a
//! study job's result (from the worker module) is taken back. `cargo test -p ratelab-extra --target wasm32-unknown-unknown --test browser`.
#![cfg(target_arch = "wasm32")]

use wasm_bindgen::JsCast;
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

fn canvas(id: &str) -> web_sys::HtmlCanvasElement {
    let document = web_sys::window()
        .and_then(|w| w.document())
        .expect("a document");
    let c: web_sys::HtmlCanvasElement = document
        .create_element("canvas")
        .expect("canvas")
        .dyn_into()
        .expect("a canvas");
    c.set_id(id);
    c.set_width(600);
    c.set_height(240);
    document
        .body()
        .expect("body")
        .append_child(&c)
        .expect("appended");
    c
}

#[wasm_bindgen_test]
fn every_section_computes_and_draws() {
    canvas("section");
    for name in [
        "ceiling",
        "swc-offsets",
        "honest",
        "lockout",
        "split",
        "boundary-table",
    ] {
        let params = js_sys::Object::new();
        ratelab_extra::section(name, params.into(), "section", true)
            .unwrap_or_else(|e| panic!("{name}: {e:?}"));
    }
}

#[wasm_bindgen_test]
fn an_unknown_section_is_named() {
    let err = ratelab_extra::section("nope", js_sys::Object::new().into(), "", false)
        .expect_err("unknown");
    assert!(err.as_string().unwrap_or_default().contains("nope"));
}

#[wasm_bindgen_test]
fn a_study_job_runs_and_its_result_is_taken_back() {
    let worker = ratelab_study::Study::new(2, 5, 1, true).expect("a study");
    let mut results = ratelab_extra::StudyResults::new(2, 5, 1, true).expect("results");
    assert_eq!(worker.jobs(), results.jobs());
    assert_eq!(worker.jobs(), 20);
    let result = worker.run_job(0).expect("job 0");
    results.add_result(0, result).expect("added");
    assert_eq!(results.done(), 1);
    assert!(results
        .add_result(99, js_sys::Object::new().into())
        .is_err());
}
