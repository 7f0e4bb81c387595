//! The JavaScript API of memtrace: a thin facade over the core, JSON-shaped values in and out.
//!
//! ```js
//! import init, { summarize } from "./pkg/memtrace_wasm.js";
//! await init();
//! const summary = summarize(new Uint8Array(await file.arrayBuffer()));
//! ```

use wasm_bindgen::prelude::*;

/// Reads a trace (format detected from content) and returns its summary:
/// `{format, graph_id, sessions, operations, variables, edges, failures, annotations, annotations_by_type}`.
///
/// # Errors
/// Throws an `Error` whose message says what is wrong, where, and what to do.
#[wasm_bindgen]
pub fn summarize(bytes: &[u8]) -> Result<JsValue, JsError> {
    let summary = memtrace::summarize(bytes).map_err(|e| JsError::new(&e.to_string()))?;
    serde_wasm_bindgen::to_value(&summary).map_err(|e| JsError::new(&e.to_string()))
}

/// The version of memtrace this module was built from.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_owned()
}
