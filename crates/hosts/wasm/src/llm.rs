//! The LLM methods from JavaScript: `attributeWith` (any method, the core's bounded batch runner,
//! `fetch` through `memtrace-fetch`, cancellable by an `AbortSignal`) and `counterfactual`.

use std::rc::Rc;

use memtrace::provider::{CancelToken, HttpLlm};
use memtrace::session::{self, attribute_cases, Job, Plan, VerdictRow};
use memtrace_fetch::{FetchTransport, TimerSleep};
use memtrace_memsys::counterfactual::check_with;
use serde::Deserialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::future_to_promise;
use web_sys::AbortSignal;

use crate::error::{JsResult, MemtraceError};
use crate::trace::{Inner, Trace};
use crate::types::{method_options, options, to_js};

/// Where the LLM is: `{kind, baseUrl, model, apiKey, timeoutMs}`.
#[derive(tsify_next::Tsify, Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct ProviderOptions {
    /// `openai` (any OpenAI-compatible server) or `anthropic`.
    pub kind: Option<String>,
    /// Up to the version path, e.g. `https://api.openai.com/v1`; the kind's public URL if left out.
    pub base_url: Option<String>,
    pub model: String,
    pub api_key: Option<String>,
    /// Per attempt (default 60 000).
    pub timeout_ms: Option<u64>,
}

/// `attributeWith` options, less `signal` and `onProgress` (read apart: they are not data).
#[derive(tsify_next::Tsify, Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct AttributeWithOptions {
    /// `infoflow`, `graphtrace`, `obstrace`, `all-at-once`, `step-by-step`, `binary-search`.
    pub method: Option<String>,
    pub provider: Option<ProviderOptions>,
    /// Cases in flight at once (default 1).
    pub concurrency: Option<usize>,
    /// Aborting it cancels the run (read apart from the data).
    #[tsify(optional, type = "AbortSignal")]
    pub signal: Option<()>,
    /// Called after each case (read apart from the data).
    #[tsify(optional, type = "(progress: Progress) => void")]
    pub on_progress: Option<()>,
}

/// `counterfactual` options, less `signal`.
#[derive(tsify_next::Tsify, Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct CounterfactualOptions {
    pub provider: Option<ProviderOptions>,
    /// Aborting it cancels the check (read apart from the data).
    #[tsify(optional, type = "AbortSignal")]
    pub signal: Option<()>,
}

/// The verdict to check: a case and the op it blames (an `Attribution` has both).
#[derive(tsify_next::Tsify, Debug, Clone, Deserialize)]
pub struct VerdictRef {
    pub case_id: String,
    pub op_id: String,
}

/// Progress of an `attributeWith` run, after each case: its verdict row.
#[derive(tsify_next::Tsify, Debug, Clone, serde::Serialize)]
pub struct Progress {
    pub done: usize,
    pub total: usize,
    pub row: VerdictRow,
}

type Llm = HttpLlm<FetchTransport, TimerSleep>;

/// Splits the options object: its data, its `signal` and its `onProgress` callback.
pub(crate) fn split(
    opts: &JsValue,
) -> JsResult<(JsValue, Option<AbortSignal>, Option<js_sys::Function>)> {
    if opts.is_undefined() || opts.is_null() {
        return Ok((JsValue::UNDEFINED, None, None));
    }
    let copy = js_sys::Object::assign(&js_sys::Object::new(), opts.unchecked_ref());
    let take = |key: &str| -> JsValue {
        let k = JsValue::from_str(key);
        let v = js_sys::Reflect::get(&copy, &k).unwrap_or(JsValue::UNDEFINED);
        let _ = js_sys::Reflect::delete_property(&copy, &k);
        v
    };
    let signal = take("signal");
    let progress = take("onProgress");
    let signal = match signal {
        s if s.is_undefined() || s.is_null() => None,
        s => Some(
            s.dyn_into::<AbortSignal>()
                .map_err(|_| MemtraceError::argument("options.signal must be an AbortSignal"))?,
        ),
    };
    let progress = match progress {
        p if p.is_undefined() || p.is_null() => None,
        p => Some(
            p.dyn_into::<js_sys::Function>()
                .map_err(|_| MemtraceError::argument("options.onProgress must be a function"))?,
        ),
    };
    Ok((copy.into(), signal, progress))
}

/// The provider over `fetch` (the session's configuration and defaults), stopped when
/// `signal` aborts.
pub(crate) fn provider(
    p: &ProviderOptions,
    signal: Option<&AbortSignal>,
    token: &CancelToken,
) -> Result<Llm, MemtraceError> {
    let defaults = session::ProviderOptions::default();
    let options = session::ProviderOptions {
        kind: p.kind.clone().unwrap_or_else(|| defaults.kind.clone()),
        base_url: p.base_url.clone(),
        model: Some(p.model.clone()),
        timeout_ms: p.timeout_ms.unwrap_or(defaults.timeout_ms),
        ..defaults
    };
    let cfg = options.config(p.api_key.as_deref())?;
    let transport = match signal {
        Some(s) => FetchTransport::with_signal(s.clone()),
        None => FetchTransport::default(),
    };
    HttpLlm::new(cfg, transport, TimerSleep)
        .map(|l| l.with_cancel(token.clone()))
        .map_err(|e| MemtraceError::new("provider", e.to_string(), "fix the provider settings"))
}

/// A token cancelled when `signal` aborts (kept alive by the returned closure).
pub(crate) fn cancel_token(
    signal: Option<&AbortSignal>,
) -> (CancelToken, Option<Closure<dyn FnMut()>>) {
    let token = CancelToken::new();
    let Some(signal) = signal else {
        return (token, None);
    };
    if signal.aborted() {
        token.cancel();
    }
    let t = token.clone();
    let on_abort = Closure::<dyn FnMut()>::new(move || t.cancel());
    signal.set_onabort(Some(on_abort.as_ref().unchecked_ref()));
    (token, Some(on_abort))
}

pub(crate) fn cancelled() -> MemtraceError {
    MemtraceError::new(
        "cancelled",
        "the run was cancelled through its AbortSignal",
        "the verdicts finished before the abort are kept; call attributeWith again for the rest",
    )
}

/// Runs `plan` over `cases` with `llm` through the session (bounded, the one retry policy),
/// keeping each row and reporting it to `progress` as it finishes.
async fn run(
    inner: Rc<Inner>,
    case_id: Option<String>,
    plan: Plan,
    llm: Llm,
    concurrency: usize,
    token: CancelToken,
    progress: Option<js_sys::Function>,
) -> Result<JsValue, JsValue> {
    let h = &inner.handle;
    let cases = h.cases(case_id.as_deref()).map_err(MemtraceError::from)?;
    let (total, done) = (cases.len(), std::cell::Cell::new(0usize));
    let job = Job {
        plan: &plan,
        llm: &llm,
        trace: h.trace(),
        roles: h.roles(),
        concurrency,
        clock_ms: None,
    };
    let (token, progress, done) = (&token, &progress, &done);
    let rows = attribute_cases(&job, &cases, |case, result| async move {
        let row = VerdictRow::new(h.trace(), case, result, None);
        if !token.is_cancelled() {
            h.keep(std::slice::from_ref(&row));
            done.set(done.get() + 1);
            report(progress.as_ref(), done.get(), total, &row);
        }
        row
    })
    .await;
    if token.is_cancelled() {
        return Err(cancelled().into());
    }
    to_js(&rows)
}

/// Calls `progress` with a finished case's row; a throwing callback does not stop the run.
fn report(progress: Option<&js_sys::Function>, done: usize, total: usize, row: &VerdictRow) {
    let Some(f) = progress else { return };
    let p = Progress {
        done,
        total,
        row: row.clone(),
    };
    if let Ok(v) = to_js(&p) {
        let _ = f.call1(&JsValue::NULL, &v);
    }
}

// Every method throws (rejects with) a `MemtraceError` on failure.
#[allow(clippy::missing_errors_doc, clippy::needless_pass_by_value)] // wasm-bindgen passes owned values
#[wasm_bindgen]
impl Trace {
    /// Attributes one failed case, or all, with any method; the LLM methods call
    /// `options.provider` with `fetch`. Resolves to one outcome per case, in case order;
    /// rejects with kind `cancelled` when `options.signal` aborts (finished verdicts are kept).
    #[wasm_bindgen(js_name = attributeWith, unchecked_return_type = "Promise<VerdictRow[]>")]
    pub fn attribute_with(
        &self,
        case_id: Option<String>,
        #[wasm_bindgen(unchecked_param_type = "AttributeWithOptions")] options_: JsValue,
    ) -> JsResult<js_sys::Promise> {
        let (data, signal, progress) = split(&options_)?;
        let o: AttributeWithOptions = options(data, "attributeWith options")?;
        let h = &self.inner.handle;
        let plan = h
            .plan(&method_options(o.method.as_deref()))
            .map_err(MemtraceError::from)?;
        h.cases(case_id.as_deref()).map_err(MemtraceError::from)?;
        let (token, on_abort) = cancel_token(signal.as_ref());
        let llm = match (&o.provider, plan.uses_llm()) {
            (Some(p), true) => provider(p, signal.as_ref(), &token)?,
            (None, true) => {
                let method = plan.name();
                return Err(MemtraceError::argument(format!(
                    "{method} calls an LLM: pass options.provider {{kind, baseUrl, model, apiKey}}"
                ))
                .into());
            }
            (_, false) => {
                // Info-flow calls no LLM: its rows at once, each reported.
                let cases = h.cases(case_id.as_deref()).map_err(MemtraceError::from)?;
                let rows = h.infoflow(&cases);
                h.keep(&rows);
                for (i, row) in rows.iter().enumerate() {
                    report(progress.as_ref(), i + 1, rows.len(), row);
                }
                let rows = to_js(&rows);
                return Ok(future_to_promise(async move { rows }));
            }
        };
        let inner = Rc::clone(&self.inner);
        let concurrency = o.concurrency.unwrap_or(1).max(1);
        Ok(future_to_promise(async move {
            let out = run(inner, case_id, plan, llm, concurrency, token, progress).await;
            drop(on_abort);
            out
        }))
    }

    /// Checks a verdict by counterfactual replay: the answer step (or, for the reference memory
    /// system's traces, the pipeline after the blamed op) rerun with the provider standing in
    /// for the memory system's model. Resolves to `{outcome, detail, replayed_answer, usage}`.
    #[wasm_bindgen(unchecked_return_type = "Promise<Check>")]
    pub fn counterfactual(
        &self,
        #[wasm_bindgen(unchecked_param_type = "VerdictRef")] verdict: JsValue,
        #[wasm_bindgen(unchecked_param_type = "CounterfactualOptions")] options_: JsValue,
    ) -> JsResult<js_sys::Promise> {
        let v: VerdictRef = serde_wasm_bindgen::from_value(verdict).map_err(|e| {
            MemtraceError::argument(format!("counterfactual verdict: {e} (pass an Attribution)"))
        })?;
        let (data, signal, _) = split(&options_)?;
        let o: CounterfactualOptions = options(data, "counterfactual options")?;
        let p = o
            .provider
            .ok_or_else(|| MemtraceError::argument("counterfactual needs options.provider"))?;
        let (token, on_abort) = cancel_token(signal.as_ref());
        let llm = provider(&p, signal.as_ref(), &token)?;
        let case = self
            .inner
            .handle
            .case(&v.case_id)
            .map_err(MemtraceError::from)?
            .clone();
        let inner = Rc::clone(&self.inner);
        Ok(future_to_promise(async move {
            let h = &inner.handle;
            let r = check_with(&llm, h.trace(), h.roles(), &case, &v.op_id).await;
            drop(on_abort);
            if token.is_cancelled() {
                return Err(cancelled().into());
            }
            let check = r.map_err(|e| {
                MemtraceError::new(
                    "provider",
                    e.to_string(),
                    "check the provider settings and retry",
                )
            })?;
            to_js(&check)
        }))
    }
}
