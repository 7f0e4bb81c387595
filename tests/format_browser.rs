#![cfg(target_arch = "wasm32")]
//! The OTLP and Langfuse loading tests, run in headless Chromium
//! (`cargo test -p memtrace --target wasm32-unknown-unknown --test format_browser`).

wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

mod common;

mod otlp {
    include!("cases/otlp.rs");
}

mod langfuse {
    include!("cases/langfuse.rs");
}
