//! The on-demand module in a real browser: every section figure computes, crosses packed as the
//! section worker sends it, and draws. `cargo test -p ratelab-extra --target wasm32-unknown-unknown --test browser`.
#![cfg(target_arch = "wasm32")]

use wasm_bindgen::{JsCast, JsValue};
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

fn get(value: &JsValue, key: &str) -> JsValue {
    js_sys::Reflect::get(value, &key.into()).expect("a property")
}

/// Draws a packed chart (`{numbers, text}`) as the page's thread does.
fn draw(plot: &JsValue) {
    let numbers = js_sys::Float64Array::from(get(plot, "numbers")).to_vec();
    let text = get(plot, "text").as_string().expect("text");
    ratelab_extra::draw_plot("section", &numbers, &text, true).expect("drawn");
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
        let data = ratelab_extra::section_data_js(name, js_sys::Object::new().into())
            .unwrap_or_else(|e| panic!("{name}: {e:?}"));
        let plot = get(&data, "plot");
        if name == "boundary-table" {
            assert!(plot.is_undefined(), "a table alone has no chart");
            assert!(js_sys::Array::from(&get(&data, "table")).length() > 1);
        } else {
            draw(&plot);
        }
    }
    let rules = ratelab_extra::rules_data().expect("section 1");
    let plots = js_sys::Array::from(&get(&rules, "plots"));
    assert_eq!(plots.length(), 6);
    for plot in plots.iter() {
        draw(&plot);
    }
}

#[wasm_bindgen_test]
fn an_unknown_section_and_a_bad_chart_are_named() {
    let err =
        ratelab_extra::section_data_js("nope", js_sys::Object::new().into()).expect_err("unknown");
    assert!(err.as_string().unwrap_or_default().contains("nope"));
    canvas("bad");
    let err = ratelab_extra::draw_plot("bad", &[2.0, 5.0], "ab", false).expect_err("refused");
    assert!(err.as_string().unwrap_or_default().contains("packed chart"));
}
