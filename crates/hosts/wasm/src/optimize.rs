//! Prompt optimization from JavaScript: `optimizeStep(traces, verdicts, {provider})` runs one
//! step of the core's optimizer (feedback, aggregation, update) over attributed traces, its LLM
//! called with `fetch`; `exportPrompts(kind)` writes the resulting prompt versions.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use memtrace::attribution::Attribution;
use memtrace::optimize::export::{self, ExportFormat};
use memtrace::optimize::gather::{versions, Gathered, NotOptimizable};
use memtrace::optimize::targets::default_selection;
use memtrace::optimize::PromptVersion;
use memtrace::optimize::{step, History, OptimizeConfig, OptimizeError, StepOutcome};
use memtrace::provider::PriceTable;
use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::future_to_promise;

use crate::error::{JsResult, MemtraceError};
use crate::llm::{cancel_token, cancelled, provider, split, ProviderOptions};
use crate::trace::{Inner, Trace};
use crate::types::{options, to_js};

/// `optimizeStep` options, less `signal` and `onProgress` (read apart: they are not data).
#[derive(tsify_next::Tsify, Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct OptimizeStepOptions {
    /// The optimizer's LLM (required).
    pub provider: Option<ProviderOptions>,
    /// Variable categories whose unproduced variables are targets (default `["prompt"]`).
    pub categories: Option<Vec<String>>,
    /// Full names to optimize whatever their category.
    pub names: Vec<String>,
    /// Full names never to rewrite (default: the reference system's judge prompt).
    pub exclude: Option<Vec<String>>,
    /// Seeds the shuffle of feedbacks before aggregation (default 0).
    pub seed: Option<u64>,
    /// Feedbacks folded per aggregation call (default 4).
    pub batch_size: Option<usize>,
    /// Feedback requests in flight at once (default 4).
    pub concurrency: Option<usize>,
    /// Aborting it cancels the step (read apart from the data).
    #[tsify(optional, type = "AbortSignal")]
    pub signal: Option<()>,
    /// Called as each reply is read (read apart from the data).
    #[tsify(optional, type = "(progress: OptimizeProgress) => void")]
    pub on_progress: Option<()>,
}

/// What `optimizeStep` resolves to.
#[derive(tsify_next::Tsify, Debug, Clone, Serialize)]
pub struct OptimizeResult {
    /// Feedbacks, aggregated feedback per target, edits (with rejected attempts) and calls.
    pub step: StepOutcome,
    /// Version 1 of every target as it was, version 2 of each edited one: what
    /// `exportPrompts` writes.
    pub versions: Vec<PromptVersion>,
    /// Verdicts whose op reads no target (e.g. a lexical retrieval).
    pub not_optimizable: Vec<NotOptimizable>,
    /// Failures mapped onto targets (one per target and case).
    pub failures: usize,
    /// The step's cost by the built-in price table (`null`: no price for the model).
    pub cost_usd: Option<f64>,
}

/// One exported file: its path relative to an output folder, and its text.
#[derive(tsify_next::Tsify, Debug, Clone, Serialize)]
pub struct PromptFile {
    pub path: String,
    pub text: String,
}

thread_local! {
    /// Handles lent by `Trace.__lend` while `optimizeStep` reads its array.
    static LENT: RefCell<Vec<Rc<Inner>>> = RefCell::default();
    /// The versions of the latest successful `optimizeStep`, for `exportPrompts`.
    static LAST: RefCell<Option<Vec<PromptVersion>>> = RefCell::default();
}

#[wasm_bindgen]
impl Trace {
    /// Internal: hands this trace to `optimizeStep`, which reads handles from an array (where
    /// wasm-bindgen can only take them, not borrow them).
    #[wasm_bindgen(js_name = __lend, skip_typescript)]
    pub fn lend(&self) {
        LENT.with(|l| l.borrow_mut().push(Rc::clone(&self.inner)));
    }
}

/// The traces of a JavaScript array of `Trace` handles, which stay usable.
fn lent(traces: &JsValue) -> Result<Vec<Rc<Inner>>, MemtraceError> {
    let arr = traces
        .dyn_ref::<js_sys::Array>()
        .ok_or_else(|| MemtraceError::argument("optimizeStep traces: pass an array of Trace"))?;
    LENT.with(|l| l.borrow_mut().clear());
    let each = arr.iter().enumerate().try_for_each(|(i, el)| {
        let lend = js_sys::Reflect::get(&el, &JsValue::from_str("__lend"))
            .ok()
            .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
            .ok_or_else(|| {
                MemtraceError::argument(format!("optimizeStep traces[{i}] is not a Trace"))
            })?;
        lend.call0(&el).map(drop).map_err(|_| {
            MemtraceError::argument(format!("optimizeStep traces[{i}] was freed; load it again"))
        })
    });
    let traces = LENT.with(|l| std::mem::take(&mut *l.borrow_mut()));
    each.map(|()| traces)
}

/// The verdicts of each trace: those given (each by the trace holding its case), else the ones
/// the trace keeps from `attribute` / `attributeWith`, else info-flow's.
fn verdicts_by_trace(
    traces: &[Rc<Inner>],
    given: Option<Vec<Attribution>>,
) -> Result<Vec<Vec<Attribution>>, MemtraceError> {
    let mut out: Vec<Vec<Attribution>> = vec![Vec::new(); traces.len()];
    let Some(given) = given else {
        for (t, v) in traces.iter().zip(&mut out) {
            let h = &t.handle;
            let kept: Vec<Attribution> = h.kept().into_values().filter_map(Result::ok).collect();
            *v = if kept.is_empty() {
                h.infoflow(&h.trace().cases)
                    .into_iter()
                    .filter_map(|r| r.result().ok().cloned())
                    .collect()
            } else {
                kept
            };
        }
        return Ok(out);
    };
    for a in given {
        let at = traces
            .iter()
            .position(|t| t.handle.case(&a.case_id).is_ok())
            .ok_or_else(|| {
                MemtraceError::argument(format!(
                    "optimizeStep verdict for case {:?}: none of the traces has this case",
                    a.case_id
                ))
            })?;
        if let Some(v) = out.get_mut(at) {
            v.push(a);
        }
    }
    Ok(out)
}

fn step_error(e: OptimizeError) -> MemtraceError {
    match e {
        OptimizeError::Provider(p) => MemtraceError::new(
            "provider",
            p.to_string(),
            "check the provider settings and retry",
        ),
        other => MemtraceError::new(
            "optimize",
            other.to_string(),
            "use a model that follows JSON instructions, or retry",
        ),
    }
}

/// Runs one optimization step over the verdicts of `traces`: feedback per (target, failure),
/// aggregation per target, update with the placeholder guard; the LLM is `options.provider`,
/// called with `fetch`. `verdicts` (e.g. the rows of `attributeWith` that have one) default to the
/// verdicts each trace keeps, or info-flow's. Resolves to the edits and the prompt versions;
/// rejects with kind `cancelled` when `options.signal` aborts.
///
/// # Errors
/// Throws (rejects with) a `MemtraceError`: `argument`, `provider`, `optimize` or `cancelled`.
#[allow(clippy::needless_pass_by_value)] // wasm-bindgen passes owned values
#[wasm_bindgen(js_name = optimizeStep, unchecked_return_type = "Promise<OptimizeResult>")]
pub fn optimize_step(
    #[wasm_bindgen(unchecked_param_type = "Trace[]")] traces: JsValue,
    #[wasm_bindgen(unchecked_param_type = "Attribution[] | undefined")] verdicts: JsValue,
    #[wasm_bindgen(unchecked_param_type = "OptimizeStepOptions")] options_: JsValue,
) -> JsResult<js_sys::Promise> {
    let (data, signal, progress) = split(&options_)?;
    let o: OptimizeStepOptions = options(data, "optimizeStep options")?;
    let p = o.provider.as_ref().ok_or_else(|| {
        MemtraceError::argument(
            "optimizeStep calls an LLM: pass options.provider {kind, baseUrl, model, apiKey}",
        )
    })?;
    let given: Option<Vec<Attribution>> = if verdicts.is_undefined() || verdicts.is_null() {
        None
    } else {
        Some(serde_wasm_bindgen::from_value(verdicts).map_err(|e| {
            MemtraceError::argument(format!("optimizeStep verdicts: {e} (pass Attribution[])"))
        })?)
    };
    let traces = lent(&traces)?;
    let by_trace = verdicts_by_trace(&traces, given)?;
    let mut sel = default_selection();
    if let Some(c) = o.categories {
        sel.categories = c;
    }
    if let Some(x) = o.exclude {
        sel.exclude = x;
    }
    sel.names = o.names;
    let defaults = OptimizeConfig::default();
    let cfg = OptimizeConfig {
        seed: o.seed.unwrap_or(defaults.seed),
        batch_size: o.batch_size.unwrap_or(defaults.batch_size).max(1),
        concurrency: o.concurrency.unwrap_or(defaults.concurrency).max(1),
        ..defaults
    };
    let mut gathered = Gathered::default();
    for (t, v) in traces.iter().zip(&by_trace) {
        gathered.add(t.handle.trace(), v, &sel, cfg.render_chars);
    }
    let (token, on_abort) = cancel_token(signal.as_ref());
    let llm = provider(p, signal.as_ref(), &token)?;
    let model = p.model.trim().to_owned();
    Ok(future_to_promise(async move {
        let mut history = History::new(cfg.history_len);
        let mut report = |pr: &memtrace::optimize::Progress| {
            if let (Some(f), Ok(v)) = (&progress, to_js(pr)) {
                // A throwing callback must not stop the step.
                let _ = f.call1(&JsValue::NULL, &v);
            }
        };
        let values: &BTreeMap<String, String> = &gathered.values;
        let r = step(
            &llm,
            values,
            &gathered.failures,
            &mut history,
            &cfg,
            &mut report,
        )
        .await;
        drop(on_abort);
        if token.is_cancelled() {
            return Err(cancelled().into());
        }
        let out = r.map_err(step_error)?;
        let cost_usd = PriceTable::builtin().cost_usd(&model, out.meter.usage);
        let versions = versions(values, &out, cost_usd);
        LAST.with(|l| *l.borrow_mut() = Some(versions.clone()));
        to_js(&OptimizeResult {
            step: out,
            versions,
            not_optimizable: gathered.not_optimizable,
            failures: gathered.failures.len(),
            cost_usd,
        })
    }))
}

// `versions` may be left out (wasm-bindgen writes a typed parameter as required).
#[wasm_bindgen(typescript_custom_section)]
const EXPORT_PROMPTS_LATEST: &str = r#"
/** The prompt versions of the latest `optimizeStep` as files of one export format. */
export function exportPrompts(kind: ExportFormat): PromptFile[];
"#;

/// The prompt versions as files of one export format: `update_results` (MemTrace's
/// `update_results.json`, keys `<name>@<version>`), `mem0` (`mem0_config.json`) or `text`
/// (`prompts/<name>@<version>.txt`, `.diff`, `versions.json`). `versions` default to those of
/// the latest `optimizeStep`.
///
/// # Errors
/// Throws a `MemtraceError` of kind `argument` for an unknown kind, or when there are no
/// versions yet.
#[wasm_bindgen(js_name = exportPrompts, unchecked_return_type = "PromptFile[]")]
pub fn export_prompts(
    #[wasm_bindgen(unchecked_param_type = "ExportFormat")] kind: JsValue,
    #[wasm_bindgen(unchecked_param_type = "PromptVersion[]")] versions: Option<JsValue>,
) -> JsResult<JsValue> {
    let format: ExportFormat = serde_wasm_bindgen::from_value(kind).map_err(|_| {
        MemtraceError::argument(
            "exportPrompts kind: expected \"update_results\", \"mem0\" or \"text\"",
        )
    })?;
    let versions: Vec<PromptVersion> = if let Some(v) = versions.filter(|v| !v.is_null()) {
        serde_wasm_bindgen::from_value(v).map_err(|e| {
            MemtraceError::argument(format!(
                "exportPrompts versions: {e} (pass PromptVersion[])"
            ))
        })?
    } else {
        LAST.with(|l| l.borrow().clone()).ok_or_else(|| {
            MemtraceError::argument(
                "exportPrompts: no versions yet; run optimizeStep first or pass its versions",
            )
        })?
    };
    let files: Vec<PromptFile> = export::files(&versions, format)
        .into_iter()
        .map(|(path, text)| PromptFile { path, text })
        .collect();
    to_js(&files)
}
