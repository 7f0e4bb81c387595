//! The core's [`Transport`] and [`Sleep`] over JavaScript: requests go through the global
//! `fetch` (so the same code runs in a page, a worker and Node ≥ 20), with a per-request timeout
//! (`AbortSignal.timeout`), optional cancellation (an `AbortSignal` the caller owns) and no
//! redirects (`redirect: "error"`, so a credential header never follows one). Used by the page
//! (`memtrace-web`) and the JavaScript module (`memtrace-wasm`). wasm32 only; empty elsewhere.

#[cfg(target_arch = "wasm32")]
mod fetch;

#[cfg(target_arch = "wasm32")]
pub use fetch::{FetchTransport, TimerSleep};
