//! Questions and judges found from the graph's shape, whatever the ops and variables are called.
//!
//! - A **search op** is one whose kind says it searches a store (category `retrieval`, `search`
//!   or `reranking`: OpenInference `RETRIEVER` / `RERANKER`, GenAI `search_memory`). Embedding
//!   calls are not: a store embeds every fact it writes.
//! - A value **was answered** when an op other than a search or embedding op reads it together
//!   with a value another op wrote (the retrieved memories, the context it answers from).
//! - A **question** is a value no op wrote that a search op searched with and an op answered;
//!   or, with no search op traced (a store whose search is not instrumented), a value no op
//!   wrote that a judge judged (below).
//! - A **judge** is an op that reads a question and the answer another reader of that question
//!   wrote (or reports that answer in its own output) and writes a verdict (a label or score).

use aho_corasick::AhoCorasick;
use serde_json::Value;

use super::judgement::{self, Judgement};
use super::{pyrepr, OpIx, Trace, VarIx};
use crate::util::strings::contains_ignore_ascii_case;

/// True when the op's category says it searches a store.
pub(super) fn is_search(t: &Trace, o: OpIx) -> bool {
    let c = &t.op(o).category;
    contains_ignore_ascii_case(c, "retriev")
        || contains_ignore_ascii_case(c, "search")
        || contains_ignore_ascii_case(c, "rerank")
}

/// True when the op's category says it embeds text.
pub(super) fn is_embedding(t: &Trace, o: OpIx) -> bool {
    contains_ignore_ascii_case(&t.op(o).category, "embedding")
}

/// True when every reader of `v` is an embedding op (and it has one).
pub(super) fn only_embedded(t: &Trace, v: VarIx) -> bool {
    let readers = &t.flow.consumers[v.get()];
    !readers.is_empty() && readers.iter().all(|&o| is_embedding(t, o))
}

/// True when `op` reads `v` together with a value another op wrote.
fn answers(t: &Trace, op: OpIx, v: VarIx) -> bool {
    !is_search(t, op)
        && !is_embedding(t, op)
        && t.flow.op_inputs[op.get()]
            .iter()
            .any(|&w| w != v && t.flow.producers[w.get()].iter().any(|&p| p != op))
}

/// True when no op wrote `v`, a search op read it, and another op answered it.
pub(super) fn searched_and_answered(t: &Trace, v: VarIx) -> bool {
    let readers = &t.flow.consumers[v.get()];
    t.flow.producers[v.get()].is_empty()
        && readers.iter().any(|&o| is_search(t, o))
        && readers.iter().any(|&o| answers(t, o, v))
}

/// True when `judge` reads `v` and either reads a value another reader of `v` wrote, or its
/// output holds such a value (a question scope reporting `{"answer": …, "label": …}`).
fn judges_answer_to(t: &Trace, judge: OpIx, v: VarIx) -> bool {
    let inputs = &t.flow.op_inputs[judge.get()];
    let outputs = &t.flow.op_outputs[judge.get()];
    // From the judge's inputs first: a value read by every call (a prompt) has many readers.
    let reads_answer = inputs.iter().any(|a| {
        t.flow.producers[a.get()].iter().any(|&p| {
            p != judge
                && t.flow.op_outputs[p.get()].contains(a)
                && t.flow.op_inputs[p.get()].contains(&v)
        })
    });
    if reads_answer {
        return true;
    }
    let longest = outputs
        .iter()
        .map(|&o| t.var(o).value.len())
        .max()
        .unwrap_or(0);
    longest >= 8
        && t.flow.consumers[v.get()]
            .iter()
            .filter(|&&a| a != judge)
            .flat_map(|&a| t.flow.op_outputs[a.get()].iter().copied())
            .any(|answer| {
                let text = t.var(answer).value.as_str();
                (8..=longest).contains(&text.len())
                    && outputs
                        .iter()
                        .any(|&o| o != answer && t.var(o).value.contains(text))
            })
}

/// Values no op wrote that an op reading them judged another op's answer to: found from the
/// judges' side (few ops write a verdict), so a prompt read by every call costs nothing.
pub(super) fn judged_questions(t: &Trace, verdict_ops: &[bool]) -> Vec<bool> {
    let mut out = vec![false; t.vars.len()];
    for (j, _) in verdict_ops.iter().enumerate().filter(|(_, &is)| is) {
        let judge = OpIx(j as u32);
        for &v in &t.flow.op_inputs[j] {
            if t.flow.producers[v.get()].is_empty() && judges_answer_to(t, judge, v) {
                out[v.get()] = true;
            }
        }
    }
    out
}

/// Ops with an output carrying a verdict, checked only for ops that read an unwritten value
/// and have an output that may hold one (a number, or a verdict word or key).
pub(super) fn verdict_ops(t: &Trace) -> Vec<bool> {
    (0..t.ops.len())
        .map(|o| {
            t.flow.op_inputs[o]
                .iter()
                .any(|v| t.flow.producers[v.get()].is_empty())
                && t.flow.op_outputs[o]
                    .iter()
                    .any(|&v| may_hold_verdict(&t.var(v).value))
                && output_verdict(t, OpIx(o as u32)).is_some()
        })
        .collect()
}

/// A quick test before parsing: a short text, or one naming a verdict word or key.
fn may_hold_verdict(text: &str) -> bool {
    static WORDS: std::sync::OnceLock<Option<AhoCorasick>> = std::sync::OnceLock::new();
    let words = WORDS.get_or_init(|| {
        AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(VERDICT_WORDS)
            .ok()
    });
    text.len() <= 32 || words.as_ref().is_none_or(|w| w.is_match(text))
}

/// Every verdict key and plain-text label holds one of these (`judgement.rs`).
const VERDICT_WORDS: [&str; 9] = [
    "label", "verdict", "judg", "grade", "result", "correct", "passed", "score", "wrong",
];

/// Why `op` is a judge by its shape: it reads a question and another op's answer to it and
/// writes a verdict; `None` when it is not.
pub(super) fn structural_judge(
    t: &Trace,
    op: OpIx,
    questions: &[bool],
    verdict_ops: &[bool],
) -> Option<String> {
    if !verdict_ops[op.get()] || is_search(t, op) {
        return None;
    }
    let reads_answer = t.flow.op_inputs[op.get()].iter().any(|&q| {
        questions[q.get()]
            && t.flow.consumers[q.get()].iter().any(|&a| {
                a != op
                    && t.flow.op_outputs[a.get()]
                        .iter()
                        .any(|o| t.flow.op_inputs[op.get()].contains(o))
            })
    });
    reads_answer.then(|| "its shape (it reads a question and another op's answer to it)".into())
}

/// The verdict in any output of an op, with the output's JSON when it is one.
pub(super) fn output_verdict(t: &Trace, op: OpIx) -> Option<(Judgement, Option<Value>)> {
    t.flow.op_outputs[op.get()].iter().find_map(|&v| {
        let text = pyrepr::shown(&t.var(v).value);
        judgement::verdict_in(&text).map(|vd| (vd, judgement::json_object_in(&text)))
    })
}
