//! `Trace.attribute`: the keywords become the session's method and provider options (what
//! `memtrace attribute` builds from its flags), the provider is the CLI's (its native HTTP
//! transport, `memtrace_native::llm`), and the cases run through `session::attribute_cases`
//! (bounded, with the one retry policy per case), each given as a `session::VerdictRow`.

use memtrace::session::{
    attribute_cases, Handle, Job, MethodOptions, Plan, ProviderOptions, SessionError, VerdictRow,
};
use memtrace_native::llm::CliLlm;
use pyo3::FromPyObject;

use crate::error::Error;

/// The keyword arguments of `Trace.attribute`, as the Python wrapper passes them (a dict).
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
pub struct Options {
    method: String,
    hint_infoflow: bool,
    prior: Option<String>,
    max_iterations: usize,
    history_budget_tokens: usize,
    roles: Vec<String>,
    /// `openai` or `anthropic`; `None`: no LLM (info-flow only).
    provider: Option<String>,
    base_url: Option<String>,
    model: Option<String>,
    api_key: Option<String>,
    concurrency: usize,
    timeout_ms: u64,
    max_retries: u32,
    max_tokens: Option<u32>,
    verify: bool,
}

/// A method ready to run, with its provider settings.
pub struct Runner {
    plan: Plan,
    provider: Option<ProviderOptions>,
    api_key: Option<String>,
    concurrency: usize,
    verify: bool,
}

impl Runner {
    /// The method planned by the session over the trace's loaded role overrides, the provider
    /// checked up front (with the GIL held, so a bad URL or model is a clear error at once).
    ///
    /// # Errors
    /// An unknown method or role, an LLM method without a provider, bad provider settings.
    pub fn new(o: &Options, handle: &Handle) -> Result<Self, Error> {
        let method = MethodOptions {
            method: o.method.clone(),
            hint_infoflow: o.hint_infoflow,
            prior: o.prior.clone(),
            max_iterations: o.max_iterations,
            history_budget_tokens: o.history_budget_tokens,
            roles: o.roles.clone(),
        };
        let provider = o.provider.as_ref().map(|kind| ProviderOptions {
            kind: kind.clone(),
            base_url: o.base_url.clone(),
            model: o.model.clone(),
            timeout_ms: o.timeout_ms,
            max_retries: o.max_retries,
            max_tokens: o.max_tokens,
            ..ProviderOptions::default()
        });
        let plan = handle
            .plan(&method)
            .and_then(|p| p.needing(provider.is_some()))
            .map_err(Error::session)?;
        if let Some(p) = &provider {
            p.config(None).map_err(Error::session)?;
        }
        Ok(Runner {
            plan,
            provider,
            api_key: o.api_key.clone(),
            concurrency: o.concurrency,
            verify: o.verify,
        })
    }

    /// Attributes the case `case` names (all when `None`) in order, calling
    /// `tick(done, total)` after each; a case that gets no verdict says why in its row. Wall
    /// time per case is measured as the CLI does; with `verify`, each verdict is checked by
    /// counterfactual replay as `attribute --verify` does.
    ///
    /// # Errors
    /// [`SessionError::NoCase`] for a case the trace lacks.
    pub fn run(
        &self,
        handle: &Handle,
        case: Option<&str>,
        tick: impl Fn(usize, usize),
    ) -> Result<Vec<VerdictRow>, SessionError> {
        let (trace, cases) = (handle.trace(), handle.cases(case)?);
        let llm = match CliLlm::of(self.provider.as_ref(), self.api_key.as_deref()) {
            Ok(l) => l,
            Err(e) => {
                return Ok(cases
                    .iter()
                    .map(|c| VerdictRow::new(trace, c, Err(e.clone()), None))
                    .collect())
            }
        };
        let roles = self.plan.roles(trace);
        let started = std::time::Instant::now();
        let clock = || u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let job = Job {
            plan: &self.plan,
            llm: &llm,
            trace,
            roles: &roles,
            concurrency: self.concurrency,
            clock_ms: Some(&clock),
        };
        let done = std::cell::Cell::new(0);
        let (llm, roles, tick, done, total) = (&llm, &roles, &tick, &done, cases.len());
        let work = attribute_cases(&job, &cases, |case, result| async move {
            let checked = match (&result, self.verify) {
                (Ok(a), true) => Some(llm.verify(trace, roles, case, &a.op_id).await),
                _ => None,
            };
            done.set(done.get() + 1);
            tick(done.get(), total);
            VerdictRow::new(trace, case, result, checked)
        });
        Ok(futures_executor::block_on(work))
    }
}
