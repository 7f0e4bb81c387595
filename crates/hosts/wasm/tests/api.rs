#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed expectation should panic
//! The JS API in a real browser.

use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
fn summarize_returns_counts_for_the_demo() {
    let demo = include_bytes!("../../../../www/demo.json");
    let v = memtrace_wasm::summarize(demo).expect("demo loads");
    let s: memtrace::Summary = serde_wasm_bindgen::from_value(v).expect("a summary object");
    assert_eq!(s.format, "smartcomment");
    assert!(s.operations > 0 && s.failures > 0, "{s:?}");
}

#[wasm_bindgen_test]
fn summarize_throws_a_located_error_on_truncated_json() {
    let err = memtrace_wasm::summarize(b"{\"graph_id\": \"g\", \"data\": {\"nodes\": [").err();
    let message = err.map(|e| String::from(js_sys::Error::from(e).message()));
    let message = message.expect("truncated JSON is an error");
    assert!(message.contains("line 1, column"), "{message}");
}
