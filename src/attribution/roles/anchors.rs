//! The anchors of role inference: what the failed cases say about the pipeline — the query,
//! the op that wrote the prediction (response), the ops that read it (judge), the question's
//! retrieval ([`find_retrieval`]) and the kinds of memory units it returns
//! ([`memory_kinds_near`]) — and which other values are questions.

use std::collections::BTreeSet;

use crate::algo::answer_op;
use crate::attribution::infoflow::graph::{find_retrieval, memory_kinds_near};
use crate::model::{FailureCase, OpIx, Trace, VarIx};
use crate::text::lexicon::names_messages;

/// What the failed cases say about the pipeline.
#[derive(Default)]
pub(super) struct Anchors {
    pub(super) queries: BTreeSet<VarIx>,
    pub(super) query_kinds: BTreeSet<String>,
    pub(super) answers: BTreeSet<OpIx>,
    pub(super) judges: BTreeSet<OpIx>,
    pub(super) retrievals: BTreeSet<OpIx>,
    pub(super) memory_kinds: BTreeSet<String>,
    pub(super) message_kinds: BTreeSet<String>,
    /// The failed cases' evidence: messages whatever their kind (a prompt that quotes them).
    pub(super) evidence: BTreeSet<VarIx>,
    /// Queries of other questions: unproduced variables of a query's kind, no evidence, read by
    /// ops of every name that reads each failed case's query (a generic kind such as a span's
    /// `input` or `llm_input` alone is not enough: a prompt only the model client reads is none).
    pub(super) query_like: BTreeSet<VarIx>,
    /// Op names of the answers, and of the judges.
    pub(super) answer_names: BTreeSet<String>,
    pub(super) judge_names: BTreeSet<String>,
}

impl Anchors {
    /// What one failed case says: its query, evidence, answer op, retrieval, memory kinds
    /// and judges.
    pub(super) fn add_case(&mut self, t: &Trace, case: &FailureCase) {
        let Some(q) = t.var_by_id(&case.query_id) else {
            return;
        };
        self.queries.insert(q);
        self.query_kinds.insert(t.var(q).category.clone());
        for e in case.evidence_ids.iter().filter_map(|id| t.var_by_id(id)) {
            self.evidence.insert(e);
            self.message_kinds
                .insert(t.var(e).category.to_ascii_lowercase());
        }
        let Some(answer) = answer_op(t, case) else {
            return;
        };
        self.answers.insert(answer);
        let retrieval = find_retrieval(t, q, answer);
        self.retrievals.extend(retrieval);
        self.memory_kinds
            .extend(memory_kinds_near(t, q, answer, retrieval));
        let prediction = case.prediction_id.as_deref().and_then(|p| t.var_by_id(p));
        if let Some(p) = prediction {
            self.judges.extend(
                t.flow.consumers[p.get()]
                    .iter()
                    .copied()
                    .filter(|&o| o != answer),
            );
        }
        self.judges
            .extend(case.judge_op.as_deref().and_then(|j| t.op_by_id(j)));
    }

    /// Once every case is read: the judges kept, and the kinds found from the whole trace when
    /// the cases show none.
    pub(super) fn settle(&mut self, t: &Trace) {
        // A later answer that reads an earlier prediction (a copy of the same memories in its
        // prompt) answers another question; it does not judge this one.
        let answer_names: BTreeSet<&str> = self
            .answers
            .iter()
            .map(|&o| t.op(o).op_name.as_str())
            .collect();
        let named: BTreeSet<OpIx> = t
            .cases
            .iter()
            .filter_map(|c| c.judge_op.as_deref().and_then(|j| t.op_by_id(j)))
            .collect();
        self.judges
            .retain(|&o| named.contains(&o) || !answer_names.contains(t.op(o).op_name.as_str()));
        if self.memory_kinds.is_empty() {
            // No retrieval to learn from: memory is what has several versions.
            self.memory_kinds = t
                .flow
                .versions
                .values()
                .filter(|vs| vs.len() > 1)
                .filter_map(|vs| vs.first())
                .filter(|&&v| !t.is_prompt(v))
                .map(|&v| t.var(v).category.clone())
                .collect();
        }
        if self.message_kinds.is_empty() {
            let kinds: BTreeSet<&str> = t.vars.iter().map(|v| v.category.as_str()).collect();
            self.message_kinds = kinds
                .into_iter()
                .map(str::to_ascii_lowercase)
                .filter(|c| names_messages(c))
                .collect();
        }
        for k in self.query_kinds.iter().chain(&self.memory_kinds) {
            self.message_kinds.remove(&k.to_ascii_lowercase());
        }
        let op_names =
            |ops: &BTreeSet<OpIx>| ops.iter().map(|&o| t.op(o).op_name.clone()).collect();
        self.answer_names = op_names(&self.answers);
        self.judge_names = op_names(&self.judges);
    }
}

/// Which values of a query's kind are questions: the op names that read the failed questions.
pub(super) struct Asked {
    /// The names that read every failed question (the question's own steps: a search and the
    /// answer); a prompt of the same kind that only a model call reads is no question.
    every: BTreeSet<String>,
    readers: BTreeSet<String>,
}

fn reader_names(t: &Trace, v: VarIx) -> BTreeSet<&str> {
    t.flow.consumers[v.get()]
        .iter()
        .map(|&o| t.op(o).op_name.as_str())
        .collect()
}

impl Asked {
    pub(super) fn new(t: &Trace, a: &Anchors) -> Self {
        let per_query: Vec<BTreeSet<&str>> =
            a.queries.iter().map(|&q| reader_names(t, q)).collect();
        let readers = per_query.iter().flatten().map(|&n| n.to_owned()).collect();
        let every = per_query
            .into_iter()
            .reduce(|x, y| x.intersection(&y).copied().collect())
            .unwrap_or_default()
            .into_iter()
            .map(str::to_owned)
            .collect();
        Asked { every, readers }
    }

    /// True when `v` is a failed question's query or looks like another question's.
    pub(super) fn query_like(&self, t: &Trace, a: &Anchors, v: VarIx) -> bool {
        a.queries.contains(&v)
            || (t.flow.producers[v.get()].is_empty()
                && !a.evidence.contains(&v)
                && a.query_kinds.contains(&t.var(v).category)
                && {
                    let n = reader_names(t, v);
                    if self.every.is_empty() {
                        n.iter().any(|&x| self.readers.contains(x))
                    } else {
                        self.every.iter().all(|x| n.contains(x.as_str()))
                    }
                })
    }
}
