#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed expectation should panic
//! Langfuse export import: graph shape, inferred data flow, scores as failure cases, errors.
//! The bodies are in `cases/langfuse.rs`, shared with the browser run (`format_browser.rs`).

#[path = "common/formats.rs"]
mod formats;

include!("cases/langfuse.rs");
