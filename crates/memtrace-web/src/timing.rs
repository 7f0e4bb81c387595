//! Puts the stages of loading a file on the browser's performance timeline, as
//! `performance.measure` entries named `memtrace:STAGE` (read by `tests/e2e/bench.js`). Off the
//! browser (native tests) a stage records nothing.

/// A stage under way: measured from [`stage`] until dropped.
#[must_use = "the stage is measured until this is dropped"]
pub struct Stage {
    #[cfg(target_arch = "wasm32")]
    name: &'static str,
}

/// Starts measuring the stage `name`.
pub fn stage(name: &'static str) -> Stage {
    #[cfg(target_arch = "wasm32")]
    {
        if let Some(p) = performance() {
            let _ = p.mark(&format!("memtrace:{name}:start"));
        }
        Stage { name }
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        let _ = name;
        Stage {}
    }
}

#[cfg(target_arch = "wasm32")]
fn performance() -> Option<web_sys::Performance> {
    web_sys::window().and_then(|w| w.performance())
}

#[cfg(target_arch = "wasm32")]
impl Drop for Stage {
    fn drop(&mut self) {
        if let Some(p) = performance() {
            let start = format!("memtrace:{}:start", self.name);
            let _ = p.measure_with_start_mark(&format!("memtrace:{}", self.name), &start);
            p.clear_marks_with_mark_name(&start);
        }
    }
}
