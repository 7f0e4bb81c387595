//! `Trace.loadAsync`: the load of `Trace.load` in slices of main-thread time, yielding to the
//! event loop between them (a page stays responsive on a 100 MB trace), with progress and an
//! `AbortSignal`. The core's stepwise loader does the work; the result is the one `load` gives.

use memtrace::format::stepwise::StepLoad;
use memtrace::provider::Sleep;
use memtrace::session::Handle;
use memtrace_fetch::TimerSleep;
use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::future_to_promise;

use crate::error::{JsResult, MemtraceError};
use crate::llm::split;
use crate::trace::{name, read_options, Trace};
use crate::types::{options, to_js, LoadOptions};

/// `Trace.loadAsync` options: those of `Trace.load`, and the slice length, progress and cancel.
#[derive(tsify_next::Tsify, Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LoadAsyncOptions {
    #[serde(flatten)]
    pub load: LoadOptions,
    /// Main-thread time one slice of the load may take before it yields (default 16 ms).
    pub slice_ms: Option<f64>,
    /// Aborting it stops the load (read apart from the data).
    #[tsify(optional, type = "AbortSignal")]
    pub signal: Option<()>,
    /// Called after each slice (read apart from the data).
    #[tsify(optional, type = "(progress: LoadProgress) => void")]
    pub on_progress: Option<()>,
}

/// How far a `loadAsync` is, after each slice.
#[derive(tsify_next::Tsify, Debug, Clone, Serialize)]
pub struct LoadProgress {
    /// `limits`, `parse`, `validate`, `index`, `failures` or `done`.
    pub stage: String,
    /// From 0 to 1.
    pub fraction: f64,
}

/// Bytes of the file a step works through before the clock is read again.
const STEP_BYTES: usize = 256 * 1024;

fn aborted() -> MemtraceError {
    MemtraceError::new(
        "cancelled",
        "the load was cancelled through its AbortSignal",
        "call Trace.loadAsync again to load the file",
    )
}

#[allow(clippy::needless_pass_by_value)] // wasm-bindgen passes owned values
#[wasm_bindgen]
impl Trace {
    /// Reads a trace like `Trace.load`, a slice of main-thread time at a time (`sliceMs`,
    /// default 16), calling `onProgress` after each slice; resolves to the `Trace`.
    ///
    /// # Errors
    /// Rejects with `Trace.load`'s `MemtraceError`, or kind `cancelled` when `options.signal`
    /// aborts.
    #[wasm_bindgen(js_name = loadAsync, unchecked_return_type = "Promise<Trace>")]
    pub fn load_async(
        bytes: Vec<u8>,
        #[wasm_bindgen(unchecked_param_type = "LoadAsyncOptions | undefined")] options_: JsValue,
    ) -> JsResult<js_sys::Promise> {
        let (data, signal, progress) = split(&options_)?;
        let opts: LoadAsyncOptions = options(data.clone(), "Trace.loadAsync options")?;
        // A flattened struct lets unknown keys through: `Trace.load`'s options alone refuse them.
        if data.is_object() {
            let _ = js_sys::Reflect::delete_property(
                data.unchecked_ref::<js_sys::Object>(),
                &"sliceMs".into(),
            );
            let _: LoadOptions = options(data, "Trace.loadAsync options")?;
        }
        let slice_ms = opts
            .slice_ms
            .filter(|m| m.is_finite() && *m > 0.0)
            .unwrap_or(16.0);
        let read = read_options(&opts.load)?;
        let mut steps = StepLoad::new(bytes, read.load_options().map_err(MemtraceError::from)?);
        let name = name(&opts.load);
        Ok(future_to_promise(async move {
            loop {
                if signal.as_ref().is_some_and(web_sys::AbortSignal::aborted) {
                    return Err(aborted().into());
                }
                let (start, mut last) = (js_sys::Date::now(), 0.0);
                // The next step is taken to last as long as the one before.
                while js_sys::Date::now() - start + last < slice_ms {
                    let at = js_sys::Date::now();
                    if let Some(result) = steps.step(STEP_BYTES) {
                        let loaded = result.map_err(MemtraceError::from)?;
                        let handle =
                            Handle::loaded(&name, loaded, &read).map_err(MemtraceError::from)?;
                        return Ok(Trace::of(handle).into());
                    }
                    last = js_sys::Date::now() - at;
                }
                if let Some(f) = &progress {
                    let p = LoadProgress {
                        stage: steps.stage().to_owned(),
                        fraction: steps.progress(),
                    };
                    f.call1(&JsValue::NULL, &to_js(&p)?)?;
                }
                // A timeout, not `scheduler.yield()`: the host page's own timers get their turn.
                TimerSleep.sleep(0).await;
            }
        }))
    }
}
