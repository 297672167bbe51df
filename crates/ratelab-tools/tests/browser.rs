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
    let f = ratelab_tools::gateways_figure(4, "random", "sync", "1s", 1, None).expect("computed");
    let table = js_sys::Reflect::get(&f, &"table".into()).expect("a table");
    // The header and four coordinations.
    assert_eq!(js_sys::Array::from(&table).length(), 5);
    for part in ["timeline", "sweep"] {
        let plot = js_sys::Reflect::get(&f, &part.into()).expect("a chart");
        let numbers = js_sys::Reflect::get(&plot, &"numbers".into()).expect("its numbers");
        assert!(js_sys::Float64Array::from(numbers).length() > 10, "{part}");
    }
    // Each gateway's view at the playhead, and again where the reader moves it.
    let believed = |v: &wasm_bindgen::JsValue| {
        let b = js_sys::Reflect::get(v, &"believed".into()).expect("beliefs");
        js_sys::Uint32Array::from(b).to_vec()
    };
    let views = js_sys::Reflect::get(&f, &"views".into()).expect("views");
    assert_eq!(believed(&views).len(), 4);
    let p = ratelab_tools::gateways_playhead(4, "random", "central", "1s", 1, 120_000)
        .expect("computed");
    let views = js_sys::Reflect::get(&p, &"views".into()).expect("views");
    let truth = js_sys::Reflect::get(&views, &"truth".into())
        .expect("a count")
        .as_f64()
        .expect("a number");
    assert!(believed(&views).iter().all(|&b| f64::from(b) == truth));
    for (n, coord, sync, says) in [
        (17, "sync", "1s", "1 to 16"),
        (4, "sync", "2s", "5s"),
        (8, "split", "1s", "1, 2, 4, 5, 10"),
    ] {
        let e =
            ratelab_tools::gateways_figure(n, "random", coord, sync, 1, None).expect_err("refused");
        assert!(
            e.as_string().expect("a message").contains(says),
            "{n} {coord} {sync}"
        );
    }
}

#[wasm_bindgen_test]
fn the_gateways_link_is_read_and_written_here() {
    let q = ratelab_tools::gateways_query(4, "round-robin", "local", "30s", Some(61_500));
    assert_eq!(
        q,
        "gateways=4&gateways-route=round-robin&gateways-coord=local&gateways-sync=30s&gateways-at=61500"
    );
    let l =
        ratelab_tools::gateways_link(&format!("?algorithm=gcra&{q}&gateways-x=1")).expect("read");
    let get = |v: &wasm_bindgen::JsValue, k: &str| js_sys::Reflect::get(v, &k.into()).expect(k);
    let dials = get(&l, "dials");
    assert_eq!(get(&dials, "gateways").as_f64(), Some(4.0));
    assert_eq!(get(&dials, "coord").as_string().as_deref(), Some("local"));
    assert_eq!(get(&dials, "atMs").as_f64(), Some(61_500.0));
    assert_eq!(get(&l, "any").as_bool(), Some(true));
    let problems = js_sys::Array::from(&get(&l, "problems"));
    assert_eq!(problems.length(), 1);
    assert!(problems
        .get(0)
        .as_string()
        .expect("a sentence")
        .contains("'gateways-x'"));
}
