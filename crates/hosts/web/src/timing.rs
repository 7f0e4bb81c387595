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

/// Resolves once the browser has painted what is on screen now (two animation frames, then a
/// task): work started after it does not delay it. Off the browser it resolves at once.
pub async fn after_paint() {
    next_frame().await;
    next_frame().await;
}

/// An animation frame, then a task.
#[cfg_attr(not(target_arch = "wasm32"), allow(clippy::unused_async))]
async fn next_frame() {
    #[cfg(target_arch = "wasm32")]
    {
        use wasm_bindgen::{closure::Closure, JsCast, JsValue};
        let p = js_sys::Promise::new(&mut |resolve: js_sys::Function, _| {
            let now = resolve.clone();
            let then = Closure::once_into_js(move || {
                let later =
                    web_sys::window().and_then(|w| w.set_timeout_with_callback(&resolve).ok());
                if later.is_none() {
                    let _ = resolve.call0(&JsValue::NULL);
                }
            });
            let framed = web_sys::window()
                .and_then(|w| w.request_animation_frame(then.unchecked_ref()).ok());
            if framed.is_none() {
                let _ = now.call0(&JsValue::NULL);
            }
        });
        let _ = wasm_bindgen_futures::JsFuture::from(p).await;
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
