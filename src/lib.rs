//! memtrace: why did an LLM memory system answer wrongly?
//!
//! The pipeline, one module a stage:
//! - [`format`] reads trace files (smartcomment / MemTraceBench JSON) into
//! - [`model`], the bipartite execution graph: variable versions, operations, edges, failure cases;
//! - [`attribution`] finds the earliest decisive faulty operation of each failure;
//! - [`algo`], queries over it: topological order, slices, lifelines, search, start points, renders;
//! - [`layout`] places it as a timeline with lifelines (memory-unit versions on one lane);
//! - [`provider`] talks to LLMs (sans-IO; the transport is the caller's).
//!
//! The core is pure: no file system, network, clock or threads. It runs the same natively, in
//! the browser (wasm32) and in tests; I/O lives in the CLI, web and wasm crates.

pub mod algo;
pub mod attribution;
pub mod error;
pub mod format;
pub mod layout;
pub mod model;
pub mod optimize;
pub mod provider;
pub mod report;
pub mod session;
pub mod story;
pub mod text;
pub mod util;

pub use error::Error;
pub use format::{load, Format, FormatError, LoadOptions, Loaded};
pub use model::{Summary, Trace};

/// Reads a trace (format detected) and returns its summary.
///
/// # Errors
/// The reader's error, located and actionable.
pub fn summarize(bytes: &[u8]) -> Result<Summary, Error> {
    let loaded = load(bytes, LoadOptions::default())?;
    Ok(loaded.trace.summary(loaded.format.as_str()))
}
