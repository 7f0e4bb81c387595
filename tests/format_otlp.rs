#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed expectation should panic
//! OTLP JSON / JSON Lines import: graph shape, inferred data flow, failure cases, errors.
//! The bodies are in `cases/otlp.rs`, shared with the browser run (`format_browser.rs`).

#[path = "common/formats.rs"]
mod formats;

include!("cases/otlp.rs");
