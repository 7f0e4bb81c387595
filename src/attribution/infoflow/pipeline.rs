//! The question's own pipeline, read from structure: where in a multi-stage retrieval the
//! information was dropped, which draft of the answer lost it, and when the judge, not the
//! answer, was wrong.

use std::collections::BTreeSet;

use super::graph::upstream_of;
use super::{Finding, Stage};
use crate::attribution::roles::{OpRole, Roles};
use crate::attribution::text::{tokens, Key};
use crate::model::{FailureCase, OpIx, Trace, VarIx};
use crate::text::lexicon::is_negation;

/// The judge erred: the prediction states the whole gold answer (every content word, no changed
/// date, number, name or negation) yet the case failed. The op that read the prediction and
/// judged it is blamed.
pub(super) fn judge_erred(
    t: &Trace,
    roles: &Roles,
    stage: &Stage,
    case: &FailureCase,
) -> Option<Finding> {
    let key = Key::new(&case.golden_answers, &case.query, &[]);
    if key.gold.is_empty() || key.gold_carry(&case.prediction) < 1.0 {
        return None;
    }
    // A prediction that adds a "not" the gold lacks says the opposite (all words: `terms` drops
    // negations as stopwords).
    let said: BTreeSet<String> = tokens(&case.prediction).collect();
    let gold_words: Vec<String> = case.golden_answers.iter().flat_map(|g| tokens(g)).collect();
    let negated = said
        .iter()
        .any(|w| is_negation(w) && !gold_words.iter().any(|g| g == w));
    if negated {
        return None;
    }
    let prediction = case.prediction_id.as_deref().and_then(|p| t.var_by_id(p))?;
    let named = case.judge_op.as_deref().and_then(|j| t.op_by_id(j));
    let judge = named.or_else(|| {
        t.flow.consumers[prediction.get()]
            .iter()
            .copied()
            .filter(|&o| o != stage.answer_op && roles.role(o) == OpRole::Judge)
            .min_by(|a, b| t.op(*a).created_at.cmp(&t.op(*b).created_at).then(a.cmp(b)))
    })?;
    Some(Finding {
        op: judge,
        role: OpRole::Judge,
        path: vec![prediction],
        reason: format!(
            "The prediction {:?} states the gold answer {:?}, yet {} judged it wrong.",
            case.prediction,
            case.golden_answers.join(" / "),
            t.op(judge).op_name
        ),
        confidence: 0.8,
        repeated: false,
    })
}

/// Where retrieval dropped `held` (a memory version that held the information at question
/// time): following it through the question's pipeline, the first stage that read a version
/// holding it and handed on nothing that does (the first-stage search, or a reranker or filter
/// after it). When no stage read it, the first stage that read memory of its kind: the search
/// that should have returned it. `None` when no stage read memory.
pub(super) fn retrieval_loss(
    t: &Trace,
    stage: &Stage,
    held: VarIx,
    carries: &dyn Fn(VarIx) -> bool,
) -> Option<OpIx> {
    let earliest =
        |a: &OpIx, b: &OpIx| t.op(*a).created_at.cmp(&t.op(*b).created_at).then(a.cmp(b));
    let kind = &t.var(held).category;
    let searched = || {
        stage
            .pipeline
            .iter()
            .copied()
            .filter(|&o| o != stage.answer_op)
            .filter(|&o| {
                t.flow.op_inputs[o.get()]
                    .iter()
                    .any(|&v| v != stage.query && &t.var(v).category == kind)
            })
            .min_by(earliest)
    };
    let read = t.flow.consumers[held.get()]
        .iter()
        .any(|o| *o != stage.answer_op && stage.pipeline.contains(o));
    if !read {
        return searched();
    }
    let mut frontier = vec![held];
    for _ in 0..8 {
        let mut next = Vec::new();
        let mut readers: Vec<OpIx> = frontier
            .iter()
            .flat_map(|&v| t.flow.consumers[v.get()].iter().copied())
            .filter(|&o| o != stage.answer_op && stage.pipeline.contains(&o))
            .collect();
        readers.sort_by(earliest);
        readers.dedup();
        for o in readers {
            let kept: Vec<VarIx> = t.flow.op_produced(o).filter(|&w| carries(w)).collect();
            if kept.is_empty() {
                return Some(o);
            }
            next.extend(kept);
        }
        if next.is_empty() {
            return None;
        }
        frontier = next;
    }
    None
}

/// A draft of the answer that already lost what the context held: an input of the answer op
/// written by another response op of the question's pipeline (a first answer a reflection step
/// revised) that read the context `held` too and holds less of the key than the context.
pub(super) fn lossy_draft(
    t: &Trace,
    roles: &Roles,
    stage: &Stage,
    key: &Key,
    held: VarIx,
    bar: f64,
) -> Option<OpIx> {
    t.flow.op_inputs[stage.answer_op.get()]
        .iter()
        .flat_map(|&d| t.flow.producers[d.get()].iter().map(move |&p| (p, d)))
        // A draft for this question (an earlier question's answer quoted in the prompt is none).
        .filter(|&(p, _)| p != stage.answer_op && stage.pipeline.contains(&p))
        .filter(|&(p, _)| roles.role(p) == OpRole::Response)
        .filter(|&(p, _)| t.flow.op_inputs[p.get()].contains(&held))
        .filter(|&(_, d)| key.carry_var(t.var(d)) < bar)
        .map(|(p, _)| p)
        .min_by(|a, b| t.op(*a).created_at.cmp(&t.op(*b).created_at).then(a.cmp(b)))
}

/// The kinds (categories) of the messages memory was built from, when no evidence is named:
/// of the variables no op wrote, those read on the way to memory (upstream of the ops that
/// wrote the memory kinds), not the question's own kind. Without memory (long context): the
/// unproduced inputs of the answer op's ancestors.
pub(super) fn message_kinds(t: &Trace, stage: &Stage) -> BTreeSet<String> {
    let writers: BTreeSet<OpIx> = (0..t.vars.len() as u32)
        .map(VarIx)
        .filter(|&v| v != stage.query && stage.memory_kinds.contains(&t.var(v).category))
        .flat_map(|v| t.flow.producers[v.get()].iter().copied())
        .filter(|o| !stage.pipeline.contains(o))
        .collect();
    let tops: Vec<OpIx> = if writers.is_empty() {
        vec![stage.answer_op]
    } else {
        writers.into_iter().collect()
    };
    let query_kind = &t.var(stage.query).category;
    // One walk upstream from all of them.
    let (vars, _) = upstream_of(t, tops);
    vars.into_iter()
        .filter(|&v| t.flow.producers[v.get()].is_empty())
        .filter(|&v| v != stage.query && &t.var(v).category != query_kind)
        .map(|v| t.var(v).category.clone())
        .collect()
}
