//! The tools module in a real browser: a study job's result (from the worker module) is taken
//! back. `cargo test -p ratelab-tools --target wasm32-unknown-unknown --test browser`.
#![cfg(target_arch = "wasm32")]

use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
fn a_study_job_runs_and_its_result_is_taken_back() {
    let worker = ratelab_study::Study::new(2, 5, 1, true).expect("a study");
    let mut results = ratelab_tools::StudyResults::new(2, 5, 1, true).expect("results");
    assert_eq!(worker.jobs(), results.jobs());
    assert_eq!(worker.jobs(), 20);
    let result = worker.run_job(0).expect("job 0");
    results.add_result(0, result).expect("added");
    assert_eq!(results.done(), 1);
    assert!(results
        .add_result(99, js_sys::Object::new().into())
        .is_err());
}

#[wasm_bindgen_test]
fn the_gateways_figure_is_computed_here_and_a_bad_setting_named() {
    let f = ratelab_tools::gateways_figure(4, 1_000, 1).expect("computed");
    let table = js_sys::Reflect::get(&f, &"table".into()).expect("a table");
    // The header and three coordinations.
    assert_eq!(js_sys::Array::from(&table).length(), 4);
    for part in ["timeline", "sweep"] {
        let plot = js_sys::Reflect::get(&f, &part.into()).expect("a chart");
        let numbers = js_sys::Reflect::get(&plot, &"numbers".into()).expect("its numbers");
        assert!(js_sys::Float64Array::from(numbers).length() > 10, "{part}");
    }
    let e = ratelab_tools::gateways_figure(17, 1_000, 1).expect_err("too many");
    assert!(e.as_string().expect("a message").contains("1 to 16"));
}
