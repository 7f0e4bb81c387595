//! The memtrace page: drop trace files, see which questions failed, walk the execution graph.
//!
//! Pure parts, tested natively: [`state`] (the one reducer), [`failures`] (list filter/sort),
//! [`viewport`] (zoom, pan, fit, culling grid), [`bundle`] (project export/import), [`report`]
//! (counts per error type and op), [`roles`] (op roles with the user's overrides, info-flow recomputed), [`causes`] ("find all
//! causes": the decisive-set searches and their replays as listed). The Yew components and browser services are wasm32-only.

pub mod bundle;
pub mod causes;
pub mod failures;
pub mod graph_model;
pub mod llm_run;
pub mod optimize;
pub mod raster;
pub mod state;
pub mod timing;
pub mod viewport;

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
pub const DEMO_TRACE: &[u8] = include_bytes!("../../../www/demo.json");
/// The name the demo shows under.
pub const DEMO_NAME: &str = "demo: household robot (simulated LLM)";
