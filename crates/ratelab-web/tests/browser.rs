//! The page's handle in a real browser: runs, draws on a canvas, reports bad controls.
//! `cargo test -p ratelab-web --target wasm32-unknown-unknown` (see `cargo xtask test`).
#![cfg(target_arch = "wasm32")]

use ratelab_page::controls::{Attack, Controls, Named};
use ratelab_web::Lab;
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

fn controls(algorithm: &str, attack: &str) -> wasm_bindgen::JsValue {
    let c = Controls {
        algorithm: ratelab::LimiterKind::from_name(algorithm).expect("a limiter"),
        attack: <Attack as Named>::from_name(attack).expect("an attack"),
        ..Controls::default()
    };
    serde_wasm_bindgen::to_value(&c).expect("serialises")
}

#[wasm_bindgen_test]
fn a_run_is_drawn_on_real_canvases() {
    for id in ["a", "w", "s"] {
        canvas(id);
    }
    let mut lab = Lab::new();
    let readout = lab
        .run(controls("fixed-window", "boundary-burst"))
        .expect("runs");
    let readout: ratelab_page::page::Readout =
        serde_wasm_bindgen::from_value(readout).expect("a readout");
    assert_eq!(readout.worst_window, 120);
    assert!(!readout.invariant_ok);
    lab.draw("a", "w", "s", false).expect("draws");
    // The typed-array series match the run.
    assert_eq!(lab.window_counts().length() as u64, readout.admitted);
    assert!(
        lab.draw("a", "missing", "s", true).is_err(),
        "a missing canvas is an error, not a panic"
    );
}

#[wasm_bindgen_test]
fn bad_controls_come_back_as_messages() {
    let mut lab = Lab::new();
    // The page sends names; one it does not know is refused where it enters.
    let bad = js_sys::Object::new();
    js_sys::Reflect::set(&bad, &"algorithm".into(), &"token-buckt".into()).expect("set");
    let err = lab.run(bad.into()).expect_err("unknown algorithm");
    assert!(err.as_string().unwrap_or_default().contains("token-buckt"));
    let err = lab
        .run(wasm_bindgen::JsValue::from_str("not an object"))
        .expect_err("not controls");
    assert!(err.as_string().is_some());
}
