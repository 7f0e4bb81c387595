//! The counterfactual check of a verdict: correct the blamed op's output, replay what lies
//! downstream of it up to the answer, and see whether the answer is rescued. Shown beside the
//! verdict as "verified / refuted / not replayable".
//!
//! Generic replay (any trace whose answer op's inputs are recorded):
//! - verdict on the **answer op**: the op is the decisive fault iff its recorded inputs already
//!   held the evidence (then correcting it alone rescues the answer);
//! - verdict on an op whose outputs feed the answer op (retrieval): its output is corrected by
//!   adding the memory versions alive at question time that carry the evidence, and the answer
//!   call is replayed through an [`Llm`] with the recorded prompt and question;
//! - ops further upstream (extraction, update, deletion) need the memory system's own replay.
//!   TODO(memsys): replay through `src/memsys` once the reference memory system lands.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::text::{content_tokens, var_text, Key};
use crate::algo::answer_op;
use crate::model::{FailureCase, OpIx, Trace, VarIx};
use crate::provider::{ChatMessage, ChatRequest, ChatRole, Llm, ProviderError, Usage};

/// Share of the evidence key a text must hold to count as carrying it.
const CARRY: f64 = 0.6;

/// The result of a counterfactual check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Correcting the op rescues the answer.
    Verified,
    /// Correcting the op does not rescue the answer.
    Refuted,
    /// The downstream of the op cannot be replayed from what the trace recorded.
    NotReplayable,
}

impl Outcome {
    /// `verified`, `refuted` or `not replayable`.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Verified => "verified",
            Outcome::Refuted => "refuted",
            Outcome::NotReplayable => "not replayable",
        }
    }
}

/// What the check found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    pub outcome: Outcome,
    /// Why, in one sentence.
    pub detail: String,
    /// The replayed answer, when a replay ran.
    pub replayed_answer: Option<String>,
    pub usage: Usage,
}

impl Check {
    fn new(outcome: Outcome, detail: impl Into<String>) -> Check {
        Check {
            outcome,
            detail: detail.into(),
            replayed_answer: None,
            usage: Usage::default(),
        }
    }
}

/// Checks a verdict naming `op_id` for `case`; `llm` stands in for the memory system's
/// answering model during the replay.
///
/// # Errors
/// The provider's error during a replay.
///
/// # Complexity
/// O(V + E) plus one LLM call when a replay runs.
pub async fn check<L: Llm>(
    llm: &L,
    trace: &Trace,
    case: &FailureCase,
    op_id: &str,
) -> Result<Check, ProviderError> {
    let Some(op) = trace.op_by_id(op_id) else {
        return Ok(Check::new(
            Outcome::NotReplayable,
            format!("no operation {op_id} in the trace"),
        ));
    };
    let Some(answer) = answer_op(trace, case) else {
        return Ok(Check::new(
            Outcome::NotReplayable,
            "the case has no answer operation",
        ));
    };
    let key = evidence_key(trace, case);
    let query = trace.var_by_id(&case.query_id);
    let inputs = trace
        .flow
        .op_inputs
        .get(answer.get())
        .cloned()
        .unwrap_or_default();
    let (prompts, context): (Vec<VarIx>, Vec<VarIx>) = inputs
        .into_iter()
        .filter(|&v| Some(v) != query)
        .partition(|&v| trace.var(v).category == "prompt");
    if op == answer {
        let held = context
            .iter()
            .any(|&v| key.carry(&var_text(trace.var(v))) >= CARRY);
        return Ok(if held {
            Check::new(Outcome::Verified, "the answer op's recorded context held the evidence: a correct answer step alone rescues the answer")
        } else {
            Check::new(Outcome::Refuted, "the answer op's recorded context lacked the evidence: correcting the answer step alone cannot rescue it")
        });
    }
    let outputs: Vec<VarIx> = trace.flow.op_produced(op).collect();
    let feeds_answer = outputs.iter().any(|v| context.contains(v))
        || trace
            .flow
            .op_inputs
            .get(op.get())
            .is_some_and(|ins| ins.iter().any(|v| Some(*v) == query));
    if !feeds_answer {
        return Ok(Check::new(
            Outcome::NotReplayable,
            "the op lies upstream of retrieval; replaying it needs the memory system (TODO: src/memsys)",
        ));
    }
    let cutoff = trace.op(answer).created_at.clone();
    let corrected_extra = alive_carriers(trace, &context, &key, &cutoff);
    if corrected_extra.is_empty()
        && !context
            .iter()
            .any(|&v| key.carry(&var_text(trace.var(v))) >= CARRY)
    {
        return Ok(Check::new(
            Outcome::Refuted,
            "no memory held the evidence at question time: no output of this op could rescue the answer",
        ));
    }
    let mut units: Vec<VarIx> = context.clone();
    units.extend(corrected_extra);
    let memories: Vec<String> = units
        .iter()
        .map(|&v| var_text(trace.var(v)))
        .filter(|t| !t.is_empty())
        .map(|t| format!("- {t}"))
        .collect();
    let system = prompts.first().map_or_else(
        || "Answer the question from the memories.".to_owned(),
        |&p| var_text(trace.var(p)),
    );
    let req = ChatRequest {
        messages: vec![
            ChatMessage::text(ChatRole::System, system),
            ChatMessage::text(
                ChatRole::User,
                format!(
                    "Memories:\n{}\n\nQuestion: {}",
                    memories.join("\n"),
                    case.query
                ),
            ),
        ],
        temperature: Some(0.0),
        purpose: "answer".to_owned(),
        ..ChatRequest::default()
    };
    let reply = llm.chat(&req).await?;
    let rescued = answers_gold(&reply.content, &case.golden_answers);
    Ok(Check {
        outcome: if rescued {
            Outcome::Verified
        } else {
            Outcome::Refuted
        },
        detail: if rescued {
            "with the op's output corrected, the replayed answer matches the gold answer".into()
        } else {
            "with the op's output corrected, the replayed answer is still wrong".into()
        },
        replayed_answer: Some(reply.content),
        usage: reply.usage,
    })
}

/// The evidence key of a case: gold answers, question and the named evidence messages.
fn evidence_key(trace: &Trace, case: &FailureCase) -> Key {
    let texts: Vec<String> = case
        .evidence_ids
        .iter()
        .filter_map(|id| trace.var_by_id(id))
        .map(|v| var_text(trace.var(v)))
        .collect();
    Key::new(&case.golden_answers, &case.query, &texts)
}

/// Latest versions (as of `cutoff`) of identities in the categories of `context`, not in
/// `context`, non-empty, carrying the key.
fn alive_carriers(trace: &Trace, context: &[VarIx], key: &Key, cutoff: &str) -> Vec<VarIx> {
    let kinds: Vec<&str> = context
        .iter()
        .map(|&v| trace.var(v).category.as_str())
        .collect();
    let mut latest: BTreeMap<&str, VarIx> = BTreeMap::new();
    for (i, r) in trace.vars.iter().enumerate() {
        if !kinds.contains(&r.category.as_str()) || r.created_at.as_str() > cutoff {
            continue;
        }
        let v = VarIx(i as u32);
        let newer = latest
            .get(r.full_name.as_str())
            .is_none_or(|&old| trace.var(old).version < r.version);
        if newer {
            latest.insert(r.full_name.as_str(), v);
        }
    }
    latest
        .into_values()
        .filter(|v| !context.contains(v))
        .filter(|&v| key.carry(&var_text(trace.var(v))) >= CARRY)
        .collect()
}

/// The reply holds most content words of one gold answer.
pub fn answers_gold(reply: &str, gold: &[String]) -> bool {
    let have = content_tokens(reply);
    gold.iter().any(|g| {
        let want = content_tokens(g);
        !want.is_empty() && want.iter().filter(|w| have.contains(*w)).count() * 2 > want.len()
    })
}

/// The op the check would replay from (the answer op of the case).
pub fn replay_root(trace: &Trace, case: &FailureCase) -> Option<OpIx> {
    answer_op(trace, case)
}
