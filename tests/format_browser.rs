#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed expectation should panic
//! The format loading tests again, in headless Chromium: smartcomment, OTLP and Langfuse
//! (`cargo test -p memtrace --target wasm32-unknown-unknown --test format_browser`).

use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

mod smartcomment {
    use super::wasm_bindgen_test;
    include!("common/smartcomment_cases.rs");
    smartcomment_cases!(wasm_bindgen_test);
}

#[path = "common/formats.rs"]
mod formats;

mod otlp {
    include!("cases/otlp.rs");
}

mod langfuse {
    include!("cases/langfuse.rs");
}
