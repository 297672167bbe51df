//! The on-demand module in a real browser: every section figure computes, as the section
//! worker does, and draws. `cargo test -p ratelab-extra --target wasm32-unknown-unknown --test browser`.
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
    for name in ["ceiling", "swc-offsets", "honest", "lockout", "split"] {
        let data = ratelab_extra::section_data_js(name, js_sys::Object::new().into())
            .unwrap_or_else(|e| panic!("{name}: {e:?}"));
        let plot = js_sys::Reflect::get(&data, &"plot".into()).expect("a chart");
        ratelab_extra::draw_plot("section", plot, true).unwrap_or_else(|e| panic!("{name}: {e:?}"));
    }
    ratelab_extra::section_data_js("boundary-table", js_sys::Object::new().into())
        .expect("a table");
}

#[wasm_bindgen_test]
fn an_unknown_section_is_named() {
    let err =
        ratelab_extra::section_data_js("nope", js_sys::Object::new().into()).expect_err("unknown");
    assert!(err.as_string().unwrap_or_default().contains("nope"));
}
