//! The JavaScript module of memtrace: a thin facade over the core. Load a trace once into a
//! [`Trace`] handle and ask it questions; errors are thrown as `MemtraceError` objects.
//!
//! ```js
//! import init, { Trace } from "memtrace-wasm";
//! await init();
//! const trace = Trace.load(new Uint8Array(await file.arrayBuffer()));
//! for (const row of trace.attribute()) console.log(row.case_id, row.error_type ?? row.error);
//! trace.free();
//! ```

mod error;
#[cfg(target_arch = "wasm32")]
mod llm;
#[cfg(target_arch = "wasm32")]
mod load;
#[cfg(target_arch = "wasm32")]
mod optimize;
mod trace;
mod types;

use wasm_bindgen::prelude::*;

pub use error::MemtraceError;
#[cfg(target_arch = "wasm32")]
pub use optimize::{export_prompts, optimize_step};
pub use trace::Trace;

/// Reads a trace (format detected from content) and returns its summary.
///
/// # Errors
/// Throws a `MemtraceError` saying what is wrong, where, and what to do.
#[wasm_bindgen(unchecked_return_type = "Summary")]
pub fn summarize(bytes: &[u8]) -> Result<JsValue, JsValue> {
    let options = memtrace::session::ReadOptions::default();
    let h = memtrace::session::Handle::read("trace.json", bytes, &options, false)
        .map_err(MemtraceError::from)?;
    types::to_js(&h.trace().summary(h.format.as_str()))
}

/// The version of memtrace this module was built from.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_owned()
}
