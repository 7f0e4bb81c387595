//! Runs an LLM attribution method over cases in the browser: one case after another through
//! [`attribute_case_run`] with an [`HttpLlm`] over `fetch`, reporting each answered call (for
//! the live meter and transcript) and each finished or failed case as a [`RunEvent`]. Cancel
//! aborts the fetch in flight and any backoff wait.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;

use memtrace::attribution::counterfactual::Check;
use memtrace::attribution::transcript::{reply_steps, Step};
use memtrace::attribution::RoleConfig;
use memtrace::provider::{
    ApiKey, CancelToken, ChatMessage, ChatRequest, ChatResponse, ChatRole, HttpLlm, Llm,
    ProviderError, RetryPolicy, ToolCall, Usage,
};
use memtrace::session::MethodOptions;
use memtrace::Trace;
use memtrace_memsys::counterfactual;
use web_sys::AbortController;

use super::http::{FetchTransport, TimerSleep};
use crate::runs::llm_run::ProviderSettings;
use crate::state::Verdict;

/// What a running batch reports.
#[derive(Debug, Clone, PartialEq)]
pub enum RunEvent {
    /// Work on a case begins.
    Started {
        query_id: String,
    },
    /// A call was answered: its usage, and the steps it asks for.
    Reply {
        usage: Usage,
        steps: Vec<Step>,
    },
    /// The steps of turn `turn` again, now with their results (seen in the next request).
    Resolved {
        turn: u32,
        steps: Vec<Step>,
    },
    Finished {
        query_id: String,
        verdict: Verdict,
    },
    Failed {
        query_id: String,
        error: String,
    },
    /// The batch ended (all done, or cancelled).
    Ended {
        cancelled: bool,
    },
}

/// Stops a run: aborts fetches in flight and wakes any backoff wait.
#[derive(Clone)]
pub struct Stopper {
    controller: AbortController,
    token: CancelToken,
}

impl Stopper {
    /// A fresh stopper, or `None` when the browser has no `AbortController`.
    pub fn new() -> Option<Self> {
        Some(Self {
            controller: AbortController::new().ok()?,
            token: CancelToken::new(),
        })
    }

    pub fn stop(&self) {
        self.token.cancel();
        self.controller.abort();
    }

    pub fn stopped(&self) -> bool {
        self.token.is_cancelled()
    }
}

/// An [`Llm`] that reports each answered call, and the results of its tool calls once the
/// next request carries them.
struct Reporting<'a, L> {
    inner: &'a L,
    trace: &'a Trace,
    turn: Cell<u32>,
    /// The tool calls of the last reply, waiting for their results.
    asked: RefCell<Vec<ToolCall>>,
    report: &'a dyn Fn(RunEvent),
}

impl<'a, L> Reporting<'a, L> {
    fn new(inner: &'a L, trace: &'a Trace, report: &'a dyn Fn(RunEvent)) -> Self {
        Self {
            inner,
            trace,
            turn: Cell::new(0),
            asked: RefCell::default(),
            report,
        }
    }

    /// Reports the last turn's steps with the results `req` sends back, if it sends them.
    fn resolve(&self, req: &ChatRequest) {
        let asked = std::mem::take(&mut *self.asked.borrow_mut());
        let turn = self.turn.get();
        let steps: Vec<Step> = asked
            .iter()
            .filter_map(|c| {
                let result = req
                    .messages
                    .iter()
                    .rev()
                    .find(|m| m.tool_call_id.as_deref() == Some(c.id.as_str()))?;
                Some(Step::new(
                    self.trace,
                    turn,
                    &c.name,
                    &c.arguments,
                    &result.content,
                ))
            })
            .collect();
        if !steps.is_empty() {
            (self.report)(RunEvent::Resolved { turn, steps });
        }
    }
}

impl<L: Llm> Llm for Reporting<'_, L> {
    async fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, ProviderError> {
        self.resolve(req);
        let reply = self.inner.chat(req).await?;
        let turn = self.turn.get() + 1;
        self.turn.set(turn);
        self.asked.borrow_mut().clone_from(&reply.tool_calls);
        (self.report)(RunEvent::Reply {
            usage: reply.usage,
            steps: reply_steps(self.trace, turn, &reply),
        });
        Ok(reply)
    }
}

/// The configured provider over `fetch`, stopped by `stopper`.
///
/// # Errors
/// What is wrong with the settings, as a sentence.
pub fn provider(
    settings: &ProviderSettings,
    key: Option<&ApiKey>,
    stopper: &Stopper,
) -> Result<HttpLlm<FetchTransport, TimerSleep>, String> {
    let cfg = settings.config(key)?;
    HttpLlm::new(
        cfg,
        FetchTransport::with_cancel(&stopper.controller),
        TimerSleep,
    )
    .map(|l| l.with_cancel(stopper.token.clone()))
    .map_err(|e| e.to_string())
}

/// Attributes `cases` (indexes into `trace.cases`) with the method of `method` (planned by the
/// session, its agents capped at the settings' calls per case) and the op roles of `roles`
/// (the user's overrides), one after another with the session's retry policy, reporting
/// through `report`. Ends early when `stopper` stops.
#[allow(clippy::too_many_arguments)] // one batch's inputs, passed once from the run panel
pub async fn run_cases(
    trace: Arc<Trace>,
    method: MethodOptions,
    cases: Vec<usize>,
    settings: ProviderSettings,
    roles: RoleConfig,
    key: Option<ApiKey>,
    stopper: Stopper,
    report: Rc<dyn Fn(RunEvent)>,
) {
    let method = MethodOptions {
        max_iterations: settings.max_calls.max(1),
        ..method
    };
    let ready = method
        .plan(&roles)
        .map_err(|e| e.to_string())
        .and_then(|plan| Ok((plan, provider(&settings, key.as_ref(), &stopper)?)));
    let (plan, llm) = match ready {
        Ok(r) => r,
        Err(error) => {
            for &i in &cases {
                if let Some(c) = trace.cases.get(i) {
                    report(RunEvent::Failed {
                        query_id: c.query_id.clone(),
                        error: error.clone(),
                    });
                }
            }
            report(RunEvent::Ended { cancelled: false });
            return;
        }
    };
    let inferred = plan.roles(&trace);
    for i in cases {
        let Some(case) = trace.cases.get(i) else {
            continue;
        };
        if stopper.stopped() {
            break;
        }
        let query_id = case.query_id.clone();
        report(RunEvent::Started {
            query_id: query_id.clone(),
        });
        // Each attempt reports its calls from turn 1.
        let fresh = |_| Reporting::new(&llm, &trace, &*report);
        let result = plan.attribute_fresh(fresh, &trace, &inferred, case).await;
        if stopper.stopped() {
            break;
        }
        report(match result {
            Ok((a, run)) => RunEvent::Finished {
                query_id,
                verdict: Verdict::of_run(&a, &run, settings.price()),
            },
            Err(e) => RunEvent::Failed {
                query_id,
                error: e.to_string(),
            },
        });
    }
    report(RunEvent::Ended {
        cancelled: stopper.stopped(),
    });
}

/// Sends one tiny request: ok with what answered, or the error (what, where, what to do).
///
/// # Errors
/// The provider's error as a sentence naming the base URL.
pub async fn test_connection(
    settings: &ProviderSettings,
    key: Option<ApiKey>,
) -> Result<String, String> {
    let stopper = Stopper::new().ok_or("this browser cannot make cancellable requests")?;
    let mut cfg = settings.config(key.as_ref())?;
    cfg.retry = RetryPolicy {
        max_retries: 1,
        base_delay_ms: 200,
        ..RetryPolicy::default()
    };
    cfg.timeout_ms = cfg.timeout_ms.min(20_000);
    let llm = HttpLlm::new(
        cfg,
        FetchTransport::with_cancel(&stopper.controller),
        TimerSleep,
    )
    .map_err(|e| e.to_string())?;
    let req = ChatRequest {
        messages: vec![ChatMessage::text(ChatRole::User, "Reply with the word ok.")],
        max_tokens: Some(5),
        purpose: "test-connection".into(),
        ..ChatRequest::default()
    };
    match llm.chat(&req).await {
        Ok(r) => Ok(format!(
            "connected: {} answered ({} input, {} output tokens)",
            if r.model.is_empty() {
                settings.model.as_str()
            } else {
                r.model.as_str()
            },
            r.usage.input_tokens,
            r.usage.output_tokens
        )),
        Err(e) => Err(format!(
            "test request to {} failed: {e}",
            settings.base_url.trim()
        )),
    }
}

/// The counterfactual check of the verdict on `case_ix` naming `op_id`, with the provider
/// standing in for the memory system's answering model.
///
/// # Errors
/// The provider's error, as a sentence.
pub async fn counterfactual_check(
    trace: Arc<Trace>,
    case_ix: usize,
    op_id: String,
    settings: ProviderSettings,
    key: Option<ApiKey>,
) -> Result<Check, String> {
    let stopper = Stopper::new().ok_or("this browser cannot make cancellable requests")?;
    let llm = provider(&settings, key.as_ref(), &stopper)?;
    let case = trace.cases.get(case_ix).ok_or("no such case")?;
    counterfactual::check(&llm, &trace, case, &op_id)
        .await
        .map_err(|e| format!("counterfactual check: {e}"))
}
