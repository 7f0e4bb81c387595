//! The Who&When baselines over the flat log: all-at-once (the whole log in one call),
//! step-by-step (walk the ops in time order, stop at the first judged faulty) and binary search
//! (halve the log, ask which half holds the error). Replies are JSON; a malformed reply is
//! answered with what was wrong and asked again (twice at most).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::agent::{
    attribution_of, fence, json_in_text, validate_verdict, AgentRun, Proposal, DATA_CLOSE,
};
use super::obstrace::FlatLog;
use super::prompts::{baseline_system, case_task, roles_note};
use super::roles::{RoleConfig, Roles};
use super::transcript::{ids_in, Step, MAX_NODES};
use super::{Attribution, AttributionError};
use crate::model::{ErrorType, FailureCase, Trace};
use crate::provider::{ChatMessage, ChatRequest, ChatRole, Llm};

/// Which baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Baseline {
    AllAtOnce,
    StepByStep,
    BinarySearch,
}

impl Baseline {
    /// The method name used in results and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Baseline::AllAtOnce => "all-at-once",
            Baseline::StepByStep => "step-by-step",
            Baseline::BinarySearch => "binary-search",
        }
    }

    /// The baseline named `s`, if any.
    pub fn parse(s: &str) -> Option<Baseline> {
        [
            Baseline::AllAtOnce,
            Baseline::StepByStep,
            Baseline::BinarySearch,
        ]
        .into_iter()
        .find(|b| b.as_str() == s)
    }
}

/// Re-asks after a malformed reply.
const RE_ASKS: usize = 2;

/// One baseline run over a failed case: the model, the trace, its flat log, the case's task
/// and its id.
struct Asker<'a, L> {
    llm: &'a L,
    trace: &'a Trace,
    log: &'a FlatLog,
    task: &'a str,
    case_id: &'a str,
}

impl<L: Llm> Asker<'_, L> {
    /// Sends `user` and parses the JSON reply with `parse`, re-asking with the parse error.
    async fn ask_json<T>(
        &self,
        user: String,
        purpose: &str,
        run: &mut AgentRun,
        parse: impl Fn(&Value) -> Result<T, String>,
    ) -> Result<T, AttributionError> {
        let (llm, trace, case_id) = (self.llm, self.trace, self.case_id);
        let fail = |reason: String| AttributionError::Unresolvable {
            case_id: case_id.to_owned(),
            reason,
        };
        // What a step looked at: for the step-wise baselines, the block shown (after the task's
        // fence); all-at-once shows the whole log, so only its reply counts.
        let asked = match purpose {
            "all-at-once" => String::new(),
            _ => user
                .split_once(DATA_CLOSE)
                .map_or("", |(_, rest)| rest)
                .to_owned(),
        };
        let mut req = ChatRequest {
            messages: vec![
                ChatMessage::text(ChatRole::System, baseline_system()),
                ChatMessage::text(ChatRole::User, user),
            ],
            temperature: Some(0.0),
            purpose: purpose.to_owned(),
            ..ChatRequest::default()
        };
        let mut last = String::new();
        for _ in 0..=RE_ASKS {
            let reply = llm
                .chat(&req)
                .await
                .map_err(AttributionError::provider(case_id, purpose))?;
            run.calls += 1;
            run.usage += reply.usage;
            run.usage_estimated |= reply.usage_estimated;
            let parsed = json_in_text(&reply.content)
                .ok_or_else(|| {
                    "error: the reply holds no JSON object; answer with one JSON object".to_owned()
                })
                .and_then(|v| parse(&v));
            let note = parsed.as_ref().err().map_or("accepted", String::as_str);
            // The ids the question showed count as looked at: the asked block, then the reply.
            let mut step = Step::new(trace, run.calls, purpose, &reply.content, note);
            for id in ids_in(trace, &asked) {
                if !step.nodes.contains(&id) && step.nodes.len() < MAX_NODES {
                    step.nodes.push(id);
                }
            }
            run.transcript.push(step);
            match parsed {
                Ok(t) => return Ok(t),
                Err(e) => {
                    run.rejected_calls += 1;
                    last.clone_from(&e);
                    req.messages
                        .push(ChatMessage::text(ChatRole::Assistant, reply.content));
                    req.messages.push(ChatMessage::text(ChatRole::User, e));
                }
            }
        }
        Err(fail(format!(
            "{purpose}: no valid reply after {RE_ASKS} re-asks: {last}"
        )))
    }
}

fn parse_type(v: &Value) -> Result<ErrorType, String> {
    let label = v.get("error_type").and_then(Value::as_str).unwrap_or("");
    label
        .parse::<ErrorType>()
        .ok()
        .filter(|t| t.is_memory_error())
        .ok_or_else(|| {
            format!("error: error_type {label:?} is not one of the five memory error types")
        })
}

/// Runs `baseline` on one failed case.
///
/// # Errors
/// [`AttributionError::Unresolvable`] on a provider error, replies that stay malformed, or
/// (step-by-step) when no op was judged faulty.
pub async fn attribute_baseline<L: Llm>(
    baseline: Baseline,
    llm: &L,
    trace: &Trace,
    case: &FailureCase,
) -> Result<(Attribution, AgentRun), AttributionError> {
    let roles = Roles::infer(trace, &RoleConfig::default());
    attribute_baseline_with(baseline, llm, trace, &roles, case).await
}

/// As [`attribute_baseline`], with the ops' roles (listed in the task, shown in the log).
///
/// # Errors
/// As [`attribute_baseline`].
pub async fn attribute_baseline_with<L: Llm>(
    baseline: Baseline,
    llm: &L,
    trace: &Trace,
    roles: &Roles,
    case: &FailureCase,
) -> Result<(Attribution, AgentRun), AttributionError> {
    let log = FlatLog::build_with(trace, Some(roles));
    let task = format!("{}{}", case_task(case), roles_note(trace, roles));
    let purpose = baseline.as_str();
    let id = case.query_id.as_str();
    let asker = Asker {
        llm,
        trace,
        log: &log,
        task: &task,
        case_id: id,
    };
    let mut run = AgentRun::default();
    let verdict = match baseline {
        Baseline::AllAtOnce => {
            let user = format!(
                "{task}\n\nThe whole execution log:\n{}\n\nAnswer with {{\"error_type\", \"op_id\", \"reason\"}}: \
                 the earliest decisive faulty operation.",
                fence(&log.text)
            );
            asker
                .ask_json(user, purpose, &mut run, |v| validate_verdict(trace, v))
                .await?
        }
        Baseline::StepByStep => step_by_step(&asker, &mut run).await?,
        Baseline::BinarySearch => binary_search(&asker, &mut run).await?,
    };
    let a = attribution_of(trace, id, purpose, verdict, run.cost());
    Ok((a, run))
}

async fn step_by_step<L: Llm>(
    a: &Asker<'_, L>,
    run: &mut AgentRun,
) -> Result<Proposal, AttributionError> {
    let (trace, log, task) = (a.trace, a.log, a.task);
    for (i, &(op, _)) in log.ops.iter().enumerate() {
        let block = log.block(i).unwrap_or("");
        let user = format!(
            "{task}\n\nStep {i} of {} of the execution log:\n{}\n\nIs this step the earliest decisive \
             error? Answer {{\"faulty\": true|false, \"error_type\": \"…\" (when faulty), \"reason\": \"…\"}}.",
            log.ops.len(),
            fence(block)
        );
        let judged = a
            .ask_json(user, "step-by-step", run, |v| {
                match v.get("faulty").and_then(Value::as_bool) {
                    Some(true) => parse_type(v).map(|t| {
                        Some((
                            t,
                            v.get("reason")
                                .and_then(Value::as_str)
                                .unwrap_or("")
                                .to_owned(),
                        ))
                    }),
                    Some(false) => Ok(None),
                    None => Err("error: give \"faulty\": true or false".to_owned()),
                }
            })
            .await?;
        if let Some((error_type, reason)) = judged {
            return Ok(Proposal {
                error_type,
                op_id: trace.op(op).op_id.clone(),
                reason,
            });
        }
    }
    Err(AttributionError::Unresolvable {
        case_id: a.case_id.to_owned(),
        reason: format!(
            "step-by-step judged none of the {} steps faulty",
            log.ops.len()
        ),
    })
}

async fn binary_search<L: Llm>(
    a: &Asker<'_, L>,
    run: &mut AgentRun,
) -> Result<Proposal, AttributionError> {
    let (trace, log, task) = (a.trace, a.log, a.task);
    let (mut lo, mut hi) = (0usize, log.ops.len());
    let blocks = |a: usize, b: usize| (a..b).filter_map(|i| log.block(i)).collect::<String>();
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        let user = format!(
            "{task}\n\nSteps {lo}..{} of the execution log, in two halves.\nFirst half (steps {lo}..{}):\n{}\n\
             Second half (steps {mid}..{}):\n{}\n\nWhich half holds the earliest decisive error? \
             Answer {{\"half\": \"first\"|\"second\", \"reason\": \"…\"}}.",
            hi - 1,
            mid - 1,
            fence(&blocks(lo, mid)),
            hi - 1,
            fence(&blocks(mid, hi)),
        );
        let first = a
            .ask_json(user, "binary-search", run, |v| {
                match v.get("half").and_then(Value::as_str) {
                    Some("first") => Ok(true),
                    Some("second") => Ok(false),
                    _ => Err("error: give \"half\": \"first\" or \"second\"".to_owned()),
                }
            })
            .await?;
        if first {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    let Some(&(op, _)) = log.ops.get(lo) else {
        return Err(AttributionError::Unresolvable {
            case_id: a.case_id.to_owned(),
            reason: "the trace has no operations".into(),
        });
    };
    let user = format!(
        "{task}\n\nThe earliest decisive error is in this step:\n{}\n\nAnswer {{\"error_type\": \"…\", \"reason\": \"…\"}}.",
        fence(&blocks(lo, lo + 1))
    );
    let (error_type, reason) = a
        .ask_json(user, "binary-search", run, |v| {
            parse_type(v).map(|t| {
                (
                    t,
                    v.get("reason")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned(),
                )
            })
        })
        .await?;
    Ok(Proposal {
        error_type,
        op_id: trace.op(op).op_id.clone(),
        reason,
    })
}
