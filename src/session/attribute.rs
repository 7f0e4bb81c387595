//! Attributing failed cases, for every host: the method and its settings from the caller's
//! options ([`MethodOptions::plan`], the one builder: the CLI's flags, Python's keywords, the
//! module's options and the page's run panel all become a [`MethodOptions`]), and the runs
//! ([`attribute_cases`]: concurrency bounded, the one retry policy per case, the wall time).

use serde::Deserialize;

use super::retry::with_retries_async;
use super::SessionError;
use crate::attribution::agent::{AgentLimits, AgentRun};
use crate::attribution::{
    attribute_case_with, Attribution, AttributionError, Method, MethodSettings, RoleConfig, Roles,
};
use crate::model::{FailureCase, Trace};
use crate::provider::{run_bounded, ChatRequest, ChatResponse, Llm, ProviderError};

/// How to attribute, as a host's caller says it. The defaults are every host's: info-flow, the
/// Mem0-style prior, 40 LLM calls per case, history summarized past 60 000 tokens.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MethodOptions {
    /// `infoflow` (no LLM), `graphtrace`, `obstrace`, `all-at-once`, `step-by-step`,
    /// `binary-search`.
    pub method: String,
    /// graphtrace: offer the info-flow verdict and failure slice as a hint.
    pub hint_infoflow: bool,
    /// graphtrace / obstrace: the pipeline described, and which stages to check first
    /// (`None`: the Mem0-style prior).
    pub prior: Option<String>,
    /// Agents: LLM calls per case at most.
    pub max_iterations: usize,
    /// Agents: older turns are summarized past this many (estimated) tokens.
    pub history_budget_tokens: usize,
    /// `NAME=ROLE` op-role overrides, over the trace's own.
    pub roles: Vec<String>,
}

impl Default for MethodOptions {
    fn default() -> Self {
        let limits = AgentLimits::default();
        MethodOptions {
            method: super::INFOFLOW.to_owned(),
            hint_infoflow: false,
            prior: None,
            max_iterations: limits.max_iterations,
            history_budget_tokens: limits.history_budget_tokens,
            roles: Vec::new(),
        }
    }
}

/// A method ready to run: parsed, with its settings.
#[derive(Debug, Clone)]
pub struct Plan {
    pub method: Method,
    pub settings: MethodSettings,
}

impl MethodOptions {
    /// The method and its settings, the role overrides over `base` (a trace's saved or loaded
    /// ones).
    ///
    /// # Errors
    /// [`SessionError::Argument`] for an unknown method or a role override that does not read.
    pub fn plan(&self, base: &RoleConfig) -> Result<Plan, SessionError> {
        let method: Method = self.method.trim().parse().map_err(SessionError::Argument)?;
        let mut settings = MethodSettings {
            roles: base.clone(),
            ..MethodSettings::default()
        };
        for spec in &self.roles {
            settings
                .roles
                .add_override(spec)
                .map_err(SessionError::Argument)?;
        }
        for limits in [
            &mut settings.graphtrace.limits,
            &mut settings.obstrace.limits,
        ] {
            limits.max_iterations = self.max_iterations.max(1);
            limits.history_budget_tokens = self.history_budget_tokens;
        }
        if let Some(prior) = &self.prior {
            settings.graphtrace.prior.clone_from(prior);
            settings.obstrace.prior.clone_from(prior);
        }
        settings.graphtrace.hint_infoflow = self.hint_infoflow;
        Ok(Plan { method, settings })
    }
}

impl Plan {
    /// The method's name (`infoflow`, `graphtrace`, …).
    pub fn name(&self) -> &'static str {
        self.method.as_str()
    }

    /// Whether the method calls an LLM.
    pub fn uses_llm(&self) -> bool {
        self.method.uses_llm()
    }

    /// The plan, checked against whether the host has an LLM to give it.
    ///
    /// # Errors
    /// [`SessionError::NeedsLlm`] for an LLM method without one.
    pub fn needing(self, has_llm: bool) -> Result<Self, SessionError> {
        if self.uses_llm() && !has_llm {
            return Err(SessionError::NeedsLlm(self.name().to_owned()));
        }
        Ok(self)
    }

    /// The op roles of `trace` under the plan's role settings.
    pub fn roles(&self, trace: &Trace) -> Roles {
        Roles::infer(trace, &self.settings.roles)
    }

    /// One case attributed: the method run again while [`super::retry_case`] says so. The
    /// record of the run that answered comes with the verdict.
    ///
    /// # Errors
    /// The last attempt's error.
    pub async fn attribute<L: Llm>(
        &self,
        case: &FailureCase,
        (trace, roles): (&Trace, &Roles),
        llm: &L,
    ) -> Result<(Attribution, AgentRun), AttributionError> {
        self.attribute_fresh(|_| llm, trace, roles, case).await
    }

    /// As [`Plan::attribute`], with the LLM of each attempt made by `fresh` (given the 1-based
    /// attempt): a host that reports each call sees every attempt from its first turn.
    ///
    /// # Errors
    /// The last attempt's error.
    pub async fn attribute_fresh<L: Llm>(
        &self,
        fresh: impl Fn(u32) -> L,
        trace: &Trace,
        roles: &Roles,
        case: &FailureCase,
    ) -> Result<(Attribution, AgentRun), AttributionError> {
        with_retries_async(|attempt| {
            let llm = fresh(attempt);
            async move {
                attribute_case_with(self.method, &self.settings, roles, &llm, trace, case).await
            }
        })
        .await
    }
}

/// What [`attribute_cases`] runs on: a plan, an LLM, a trace with its roles, how many cases at
/// once, and a clock in milliseconds for each verdict's wall time (`None`: no clock, wall time
/// 0, as in a browser's module).
pub struct Job<'a, L> {
    pub plan: &'a Plan,
    pub llm: &'a L,
    pub trace: &'a Trace,
    pub roles: &'a Roles,
    pub concurrency: usize,
    pub clock_ms: Option<&'a dyn Fn() -> u64>,
}

/// Attributes `cases` of the job's trace, at most `job.concurrency` at a time, in case order:
/// each with the one retry policy, its verdict's wall time measured; `then` is given each
/// case's outcome (a verdict, or why none, as a sentence) as it finishes and returns what is
/// kept of it (a host checks the verdict by counterfactual replay there, or counts progress).
pub async fn attribute_cases<'a, L, T, F, Fut>(
    job: &Job<'a, L>,
    cases: &'a [FailureCase],
    then: F,
) -> Vec<T>
where
    L: Llm,
    F: Fn(&'a FailureCase, Result<Attribution, String>) -> Fut,
    Fut: std::future::Future<Output = T>,
{
    let then = &then;
    run_bounded(cases, job.concurrency.max(1), |case| async move {
        let started = job.clock_ms.map(|now| now());
        let result = job
            .plan
            .attribute(case, (job.trace, job.roles), job.llm)
            .await
            .map(|(mut a, _)| {
                if let (Some(now), Some(t0)) = (job.clock_ms, started) {
                    a.cost.wall_ms = now().saturating_sub(t0);
                }
                a
            })
            .map_err(|e| e.to_string());
        then(case, result).await
    })
    .await
}

/// The LLM of a host run with none configured: only info-flow runs, which calls none; any call
/// is refused with a permanent error.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoLlm;

impl Llm for NoLlm {
    async fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, ProviderError> {
        Err(ProviderError::Config(format!(
            "no LLM is configured for the {:?} step: give a provider",
            req.purpose
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_are_the_agents_own_and_options_override_them() {
        let plan = MethodOptions::default()
            .plan(&RoleConfig::default())
            .unwrap();
        assert_eq!(plan.name(), "infoflow");
        assert_eq!(
            plan.settings.graphtrace.limits.max_iterations,
            AgentLimits::default().max_iterations
        );
        let opts: MethodOptions = serde_json::from_str(
            r#"{"method": "graphtrace", "prior": "P", "max_iterations": 3, "roles": ["a=update"]}"#,
        )
        .unwrap();
        let plan = opts.plan(&RoleConfig::default()).unwrap();
        assert!(plan.uses_llm());
        assert_eq!(plan.settings.obstrace.prior, "P");
        assert_eq!(plan.settings.graphtrace.limits.max_iterations, 3);
        assert_eq!(plan.settings.roles.overrides.len(), 1);
        assert!(matches!(
            plan.clone().needing(false),
            Err(SessionError::NeedsLlm(m)) if m == "graphtrace"
        ));
        assert!(plan.needing(true).is_ok());
    }

    #[test]
    fn a_bad_method_or_role_is_an_argument_error() {
        let bad = MethodOptions {
            method: "magic".into(),
            ..MethodOptions::default()
        };
        let e = bad.plan(&RoleConfig::default()).unwrap_err();
        assert!(e.to_string().contains("unknown method"), "{e}");
        let bad = MethodOptions {
            roles: vec!["nope".into()],
            ..MethodOptions::default()
        };
        assert!(matches!(
            bad.plan(&RoleConfig::default()),
            Err(SessionError::Argument(_))
        ));
        assert!(serde_json::from_str::<MethodOptions>(r#"{"metod": "x"}"#).is_err());
    }
}
