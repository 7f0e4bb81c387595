#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed expectation should panic
//! `Trace.loadAsync` in a real browser: the trace `Trace.load` gives, slice by slice with
//! progress, and a load an `AbortSignal` stops.

mod common;

use std::cell::RefCell;
use std::rc::Rc;

use common::{json, load, opts, thrown, FIXTURE_2};
use memtrace_wasm::Trace;
use serde_json::json;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::convert::TryFromJsValue;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

fn set(o: &JsValue, key: &str, v: &JsValue) {
    js_sys::Reflect::set(o, &JsValue::from_str(key), v).unwrap();
}

#[wasm_bindgen_test]
async fn load_async_gives_what_load_gives_with_growing_progress() {
    let fractions = Rc::new(RefCell::new(Vec::new()));
    let on_progress = Closure::<dyn FnMut(JsValue)>::new({
        let fractions = fractions.clone();
        move |p: JsValue| {
            fractions
                .borrow_mut()
                .push(json(p)["fraction"].as_f64().unwrap());
        }
    });
    let o = opts(&json!({"sliceMs": 0.01}));
    set(&o, "onProgress", on_progress.as_ref());
    let v = JsFuture::from(Trace::load_async(FIXTURE_2.to_vec(), o).unwrap())
        .await
        .unwrap();
    let sliced = Trace::try_from_js_value(v).unwrap();
    let whole = load(FIXTURE_2);
    assert_eq!(
        json(sliced.summary().unwrap()),
        json(whole.summary().unwrap())
    );
    assert_eq!(json(sliced.cases().unwrap()), json(whole.cases().unwrap()));
    let f = fractions.borrow();
    assert!(f.len() >= 2, "{f:?}");
    assert!(f.windows(2).all(|w| w[0] <= w[1]), "{f:?}");
}

#[wasm_bindgen_test]
async fn an_aborted_signal_stops_the_load() {
    let controller = web_sys::AbortController::new().unwrap();
    controller.abort();
    let o = opts(&json!({}));
    set(&o, "signal", controller.signal().as_ref());
    let err = JsFuture::from(Trace::load_async(FIXTURE_2.to_vec(), o).unwrap())
        .await
        .unwrap_err();
    assert_eq!(thrown(err)["kind"], "cancelled");
}
