#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed expectation should panic
//! The smartcomment loading tests again, in headless Chromium.

use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

#[macro_use]
mod common {
    include!("common/smartcomment_cases.rs");
}

smartcomment_cases!(wasm_bindgen_test);
