//! The memtrace page: drop trace files, see what is in them and why answers went wrong.
//!
//! [`state`] is the page's one reducer (pure, tested natively); the Yew components are wasm32-only.

pub mod state;

#[cfg(target_arch = "wasm32")]
mod app;
#[cfg(target_arch = "wasm32")]
mod components;
#[cfg(target_arch = "wasm32")]
pub mod services;

#[cfg(target_arch = "wasm32")]
pub use app::App;

/// The demo trace shown on first visit: written by us, embedded in the page.
pub const DEMO_TRACE: &[u8] = include_bytes!("../../../www/demo.json");
/// The name the demo shows under.
pub const DEMO_NAME: &str = "demo: household robot (simulated LLM)";
