//! The question's answer step re-run: on the answer op's recorded inputs, or on given memory
//! units or a given context, answered and judged through an [`Llm`]. What the counterfactual
//! check ([`crate::counterfactual`]) and the memory pipeline's replay ([`crate::replay`]) both
//! end with.

use memtrace::algo::answer_op;
use memtrace::attribution::text::var_text;
use memtrace::model::{FailureCase, OpIx, Trace, VarIx};
use memtrace::provider::{Llm, ProviderError, Usage};

use crate::label_is_correct;
use crate::prompts::{answer_request, build_context, judge_request, Prompts};

/// The answer op's recorded prompts and context units (its inputs but the question).
pub(crate) fn answer_inputs(
    trace: &Trace,
    case: &FailureCase,
    answer: OpIx,
) -> (Prompts, Vec<VarIx>) {
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
    let mut prompts_used = Prompts::default();
    if let Some(&p) = prompts.first() {
        prompts_used.question_answering = var_text(trace.var(p));
    }
    (prompts_used, context)
}

/// Re-runs the answer step correctly on its recorded inputs: (judged correct, the answer,
/// usage); `None` when the case has no answer op.
///
/// # Errors
/// The provider's error.
pub(crate) async fn rerun_answer<L: Llm>(
    llm: &L,
    trace: &Trace,
    case: &FailureCase,
) -> Result<Option<(bool, String, Usage)>, ProviderError> {
    let Some(answer) = answer_op(trace, case) else {
        return Ok(None);
    };
    let (prompts, context) = answer_inputs(trace, case, answer);
    let replay = Replay {
        llm,
        trace,
        case,
        prompts: &prompts,
    };
    replay.run(&context).await.map(Some)
}

/// Replays the answer step (and its judge) with given memory units.
pub(crate) struct Replay<'a, L> {
    pub(crate) llm: &'a L,
    pub(crate) trace: &'a Trace,
    pub(crate) case: &'a FailureCase,
    pub(crate) prompts: &'a Prompts,
}

impl<L: Llm> Replay<'_, L> {
    /// (judged correct, the answer, usage).
    pub(crate) async fn run(
        &self,
        units: &[VarIx],
    ) -> Result<(bool, String, Usage), ProviderError> {
        let t = self.trace;
        let memories: Vec<(String, String)> = units
            .iter()
            .map(|&v| (var_text(t.var(v)), unit_time(t, v)))
            .filter(|(text, _)| !text.is_empty())
            .collect();
        answer_and_judge(self.llm, self.prompts, self.case, &build_context(&memories)).await
    }
}

/// Answers `case`'s question from a formatted `context` and judges the answer, both through
/// `llm`: (judged correct, the answer, usage).
pub(crate) async fn answer_and_judge<L: Llm>(
    llm: &L,
    prompts: &Prompts,
    case: &FailureCase,
    context: &str,
) -> Result<(bool, String, Usage), ProviderError> {
    let q = &case.query;
    let reply = llm.chat(&answer_request(prompts, q, context)).await?;
    let gold = case.golden_answers.join(" / ");
    let judged = llm
        .chat(&judge_request(prompts, q, &gold, &reply.content))
        .await?;
    let mut usage = reply.usage;
    usage += judged.usage;
    Ok((label_is_correct(&judged.content), reply.content, usage))
}

/// The time of a memory unit: its recorded `timestamp`, else the version's creation time.
fn unit_time(trace: &Trace, v: VarIx) -> String {
    let r = trace.var(v);
    serde_json::from_str::<serde_json::Value>(&r.value)
        .ok()
        .and_then(|j| {
            j.get("timestamp")
                .and_then(|t| t.as_str())
                .map(str::to_owned)
        })
        .unwrap_or_else(|| r.created_at.clone())
}
