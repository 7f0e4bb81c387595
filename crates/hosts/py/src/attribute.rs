//! `Trace.attribute`: a method and its settings as `memtrace attribute` builds them from its
//! flags, the provider the CLI uses (its native HTTP transport, from `memtrace_native::llm`), and
//! the cases run `concurrency` at a time through the core's `run_bounded`.

use std::time::Instant;

use memtrace::attribution::counterfactual::{Check, Outcome as CheckOutcome};
use memtrace::attribution::prompts::DEFAULT_PRIOR;
use memtrace::attribution::{
    attribute_case_with, Attribution, Method, MethodSettings, RoleConfig, Roles,
};
use memtrace::model::FailureCase;
use memtrace::provider::{run_bounded, ApiKey, HttpLlm, Script, ScriptedLlm, Usage};
use memtrace::Trace;
use memtrace_memsys::counterfactual::check_with;
use memtrace_memsys::simulated::SimulatedLlm;
use memtrace_native::http::{NativeTransport, ThreadSleep};
use memtrace_native::llm::{CliLlm, ProviderArgs, ProviderChoice, KEY_ENV};
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

/// One case's outcome: the verdict or why not, and the counterfactual check when asked.
pub type Outcome = (FailureCase, Result<Attribution, String>, Option<Check>);

/// The counterfactual check of a verdict, as the CLI runs it: the simulated memory-system model
/// replays when no LLM is configured (the echo stand-in cannot answer), else the LLM.
async fn verify(
    llm: &CliLlm,
    trace: &Trace,
    roles: &Roles,
    case: &FailureCase,
    op_id: &str,
) -> Check {
    match llm {
        CliLlm::Simulated(_) => check_with(&SimulatedLlm, trace, roles, case, op_id).await,
        llm @ CliLlm::Http(..) => check_with(llm, trace, roles, case, op_id).await,
    }
    .unwrap_or_else(|e| Check {
        outcome: CheckOutcome::NotReplayable,
        detail: format!("the replay failed: {e}"),
        replayed_answer: None,
        usage: Usage::default(),
    })
}

/// A method ready to run, with its provider settings.
pub struct Runner {
    method: Method,
    settings: MethodSettings,
    provider: ProviderArgs,
    api_key: Option<String>,
    verify: bool,
}

impl Runner {
    /// The method parsed and configured as the CLI's `MethodArgs::runner` does.
    ///
    /// # Errors
    /// An unknown method or role, an LLM method without a provider, bad provider settings.
    pub fn new(o: &Options, loaded_roles: &RoleConfig) -> Result<Self, Error> {
        let method: Method = o.method.parse().map_err(Error::argument)?;
        let provider = match o.provider.as_deref() {
            None => ProviderChoice::Simulated,
            Some("openai") => ProviderChoice::Openai,
            Some("anthropic") => ProviderChoice::Anthropic,
            Some(other) => {
                return Err(Error::argument(format!(
                    "unknown provider kind {other:?}; use \"openai\" (any OpenAI-compatible server) or \"anthropic\""
                )))
            }
        };
        if method.uses_llm() && provider == ProviderChoice::Simulated {
            return Err(Error::new(
                "argument",
                format!("{} needs an LLM", method.as_str()),
                "pass provider=memtrace.Provider(base_url=..., model=..., api_key=...) (any \
                 OpenAI-compatible server), or use method=\"infoflow\" (no LLM)",
            ));
        }
        let mut settings = MethodSettings {
            roles: loaded_roles.clone(),
            ..MethodSettings::default()
        };
        for spec in &o.roles {
            settings.roles.add_override(spec).map_err(Error::argument)?;
        }
        for limits in [
            &mut settings.graphtrace.limits,
            &mut settings.obstrace.limits,
        ] {
            limits.max_iterations = o.max_iterations;
            limits.history_budget_tokens = o.history_budget_tokens;
        }
        let prior = o.prior.clone().unwrap_or_else(|| DEFAULT_PRIOR.to_owned());
        settings.graphtrace.prior.clone_from(&prior);
        settings.obstrace.prior = prior;
        settings.graphtrace.hint_infoflow = o.hint_infoflow;
        let provider = ProviderArgs {
            provider,
            base_url: o.base_url.clone(),
            model: o.model.clone(),
            concurrency: o.concurrency.max(1),
            timeout_ms: o.timeout_ms,
            max_retries: o.max_retries,
            retry_base_ms: 500,
            prices: None,
            max_tokens: o.max_tokens,
            replies_out: None,
        };
        // Checked here, with the GIL held, so a bad URL or model is a clear error up front.
        provider
            .config(None)
            .map_err(|e| Error::new("provider", e.to_string(), "check base_url and model"))?;
        let api_key = o
            .api_key
            .clone()
            .or_else(|| std::env::var(KEY_ENV).ok())
            .filter(|k| !k.trim().is_empty());
        Ok(Runner {
            method,
            settings,
            provider,
            api_key,
            verify: o.verify,
        })
    }

    fn llm(&self) -> Result<CliLlm, String> {
        let key = self.api_key.clone().map(ApiKey::new);
        match self.provider.config(key).map_err(|e| e.to_string())? {
            None => Ok(CliLlm::Simulated(ScriptedLlm::new(Script::default()))),
            Some(cfg) => Ok(CliLlm::Http(
                Box::new(
                    HttpLlm::new(cfg, NativeTransport::default(), ThreadSleep)
                        .map_err(|e| e.to_string())?,
                ),
                None,
            )),
        }
    }

    /// Attributes `cases` of `trace` in order, calling `tick(done, total)` after each; a case
    /// that gets no verdict carries why. Wall time per case is measured as the CLI does; with
    /// `verify`, each verdict is checked by counterfactual replay as `attribute --verify` does.
    pub fn run(
        &self,
        trace: &Trace,
        cases: &[FailureCase],
        tick: impl Fn(usize, usize),
    ) -> Vec<Outcome> {
        let llm = match self.llm() {
            Ok(l) => l,
            Err(e) => {
                return cases
                    .iter()
                    .map(|c| (c.clone(), Err(e.clone()), None))
                    .collect()
            }
        };
        let roles = &Roles::infer(trace, &self.settings.roles);
        let done = std::cell::Cell::new(0);
        let (llm, tick, done) = (&llm, &tick, &done);
        let work = run_bounded(cases, self.provider.concurrency, |case| async move {
            let started = Instant::now();
            let result = attribute_case_with(self.method, &self.settings, roles, llm, trace, case)
                .await
                .map(|(mut a, _)| {
                    a.cost.wall_ms =
                        u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
                    a
                })
                .map_err(|e| e.to_string());
            let checked = match (&result, self.verify) {
                (Ok(a), true) => Some(verify(llm, trace, roles, case, &a.op_id).await),
                _ => None,
            };
            done.set(done.get() + 1);
            tick(done.get(), cases.len());
            (case.clone(), result, checked)
        });
        futures_executor::block_on(work)
    }
}
