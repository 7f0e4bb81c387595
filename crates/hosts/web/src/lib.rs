//! The memtrace page: drop trace files, see which questions failed, walk the execution graph.
//!
//! Pure parts, tested natively: [`state`] (the one reducer over the core's `session::Project`,
//! and UI state beside it: selection, panels, the project file), [`view`] (what the screens
//! compute: the failures list, the graph's model, zoom and raster), [`runs`] (the long runs'
//! state: the LLM methods' settings, the optimize loop's form, "find all causes"), [`timing`].
//! The Yew components (`components`) and browser services ([`services`]: files, storage,
//! HTTP, the LLM runner) are wasm32-only; `app` wires them.

pub mod runs;
pub mod state;
pub mod timing;
pub mod view;

#[cfg(target_arch = "wasm32")]
mod app;
#[cfg(target_arch = "wasm32")]
mod components;
#[cfg(target_arch = "wasm32")]
pub mod services;

#[cfg(target_arch = "wasm32")]
pub use app::App;

/// The demo trace shown on first visit, written by us: served next to the page as `demo.json`
/// (fetched, not part of the wasm); the tests read it here.
#[cfg(test)]
pub const DEMO_TRACE: &[u8] = include_bytes!("../../../../www/demo.json");
/// The name the demo shows under.
pub const DEMO_NAME: &str = "demo: household robot (simulated LLM)";
