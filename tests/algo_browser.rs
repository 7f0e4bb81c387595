//! The graph-engine checks of `algo.rs`, run in headless Chromium:
//! `cargo test -p memtrace --target wasm32-unknown-unknown --test algo_browser`.
#![cfg(target_arch = "wasm32")]

mod algo_checks;
mod common;

use algo_checks as checks;
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

algo_checks!(#[wasm_bindgen_test]);
