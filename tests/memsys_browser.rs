#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed expectation should panic
//! The reference memory system in headless Chromium: the demo generates there byte for byte
//! as natively (the committed `www/demo.json`), so the page can run it.

use memtrace::format::{load, LoadOptions};
use memtrace_memsys::demo;
use memtrace_memsys::simulated::SimulatedLlm;
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
async fn demo_generates_in_the_browser_as_natively() {
    let bytes = demo::generate(&SimulatedLlm, 1)
        .await
        .expect("the demo generates");
    let trace = load(&bytes, LoadOptions::default()).expect("loads").trace;
    assert_eq!(trace.cases.len(), 5);
    let committed: &[u8] = include_bytes!("../www/demo.json");
    assert!(
        bytes == committed,
        "the browser build writes a different demo than the native one"
    );
}
