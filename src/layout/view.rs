//! Which part of the graph to show: a set of variables and operations, by default the backward
//! slice of a failed question's prediction, grown by hand one hop at a time.
//!
//! `backward_reach` differs from `algo::backward_slice` on purpose: it needs no `GraphIndex`
//! (the page builds views before any index) and follows every producer of a version, so a
//! version re-emitted by a retrieval shows both the op that defined it and the one that re-emitted it.

use std::collections::VecDeque;

pub use crate::model::NodeRef;
use crate::model::{FailureCase, OpIx, Trace, VarIx};

/// A subset of a trace's nodes, as two bit vectors (O(1) tests, O(n) memory).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NodeSet {
    vars: Vec<bool>,
    ops: Vec<bool>,
    len: usize,
}

impl NodeSet {
    /// The empty set over `trace`.
    pub fn empty(trace: &Trace) -> NodeSet {
        NodeSet {
            vars: vec![false; trace.vars.len()],
            ops: vec![false; trace.ops.len()],
            len: 0,
        }
    }

    /// Every node of `trace`.
    pub fn all(trace: &Trace) -> NodeSet {
        NodeSet {
            vars: vec![true; trace.vars.len()],
            ops: vec![true; trace.ops.len()],
            len: trace.vars.len() + trace.ops.len(),
        }
    }

    /// Adds `n`; returns true when it was not there yet (out-of-range nodes are ignored).
    pub fn insert(&mut self, n: NodeRef) -> bool {
        let slot = match n {
            NodeRef::Var(v) => self.vars.get_mut(v.get()),
            NodeRef::Op(o) => self.ops.get_mut(o.get()),
        };
        match slot {
            Some(s) if !*s => {
                *s = true;
                self.len += 1;
                true
            }
            _ => false,
        }
    }

    pub fn contains(&self, n: NodeRef) -> bool {
        match n {
            NodeRef::Var(v) => self.vars.get(v.get()).copied().unwrap_or(false),
            NodeRef::Op(o) => self.ops.get(o.get()).copied().unwrap_or(false),
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The variables in the set, ascending.
    pub fn vars(&self) -> impl Iterator<Item = VarIx> + '_ {
        self.vars
            .iter()
            .enumerate()
            .filter(|(_, &b)| b)
            .map(|(i, _)| VarIx(i as u32))
    }

    /// The operations in the set, ascending.
    pub fn ops(&self) -> impl Iterator<Item = OpIx> + '_ {
        self.ops
            .iter()
            .enumerate()
            .filter(|(_, &b)| b)
            .map(|(i, _)| OpIx(i as u32))
    }
}

/// Every node from which information flows into `roots` (the roots included): variables →
/// the ops that produced them → those ops' inputs, and so on.
///
/// # Complexity
/// O(V + E) over the reached part.
pub fn backward_reach(trace: &Trace, roots: &[VarIx]) -> NodeSet {
    let mut set = NodeSet::empty(trace);
    let mut queue: VecDeque<VarIx> = VecDeque::new();
    for &r in roots {
        if set.insert(NodeRef::Var(r)) {
            queue.push_back(r);
        }
    }
    while let Some(v) = queue.pop_front() {
        let Some(producers) = trace.flow.producers.get(v.get()) else {
            continue;
        };
        for &op in producers {
            if !set.insert(NodeRef::Op(op)) {
                continue;
            }
            for &input in &trace.flow.op_inputs[op.get()] {
                if set.insert(NodeRef::Var(input)) {
                    queue.push_back(input);
                }
            }
            // Intermediates of the op belong to it even when they do not reach the root.
            for &mid in &trace.flow.op_intermediates[op.get()] {
                set.insert(NodeRef::Var(mid));
            }
        }
    }
    set
}

/// Every node that `start` feeds (forward closure), `start` included.
///
/// # Complexity
/// O(V + E) over the reached part.
pub fn forward_reach(trace: &Trace, start: &[NodeRef]) -> NodeSet {
    let mut set = NodeSet::empty(trace);
    let mut queue: VecDeque<NodeRef> = start.iter().copied().collect();
    for &n in start {
        set.insert(n);
    }
    while let Some(n) = queue.pop_front() {
        let next: Vec<NodeRef> = match n {
            NodeRef::Var(v) => trace
                .flow
                .consumers
                .get(v.get())
                .map(|c| c.iter().map(|&o| NodeRef::Op(o)).collect())
                .unwrap_or_default(),
            NodeRef::Op(o) if o.get() < trace.ops.len() => {
                trace.flow.op_produced(o).map(NodeRef::Var).collect()
            }
            NodeRef::Op(_) => Vec::new(),
        };
        for m in next {
            if set.insert(m) {
                queue.push_back(m);
            }
        }
    }
    set
}

/// The nodes shown for a failed question: the backward slice of its prediction (or of its query
/// when the prediction is unknown), plus its evidence messages and, when a verdict names an op,
/// that op with its inputs and outputs (so an extraction that never reached the answer shows).
pub fn failure_view(trace: &Trace, case: &FailureCase, verdict_op: Option<&str>) -> NodeSet {
    let root = case
        .prediction_id
        .as_deref()
        .and_then(|p| trace.var_by_id(p))
        .or_else(|| trace.var_by_id(&case.query_id));
    let mut set = backward_reach(trace, &root.into_iter().collect::<Vec<_>>());
    for e in &case.evidence_ids {
        if let Some(v) = trace.var_by_id(e) {
            set.insert(NodeRef::Var(v));
        }
    }
    if let Some(op) = verdict_op.and_then(|id| trace.op_by_id(id)) {
        expand(trace, &mut set, NodeRef::Op(op));
    }
    set
}

/// Grows `set` by one hop around `node`: an op brings its inputs and outputs, a variable the ops
/// that produce or read it. Returns how many nodes were added.
pub fn expand(trace: &Trace, set: &mut NodeSet, node: NodeRef) -> usize {
    let mut added = usize::from(set.insert(node));
    match node {
        NodeRef::Op(o) if o.get() < trace.ops.len() => {
            for (v, _) in trace.flow.op_vars(o) {
                added += usize::from(set.insert(NodeRef::Var(v)));
            }
        }
        NodeRef::Var(v) if v.get() < trace.vars.len() => {
            let f = &trace.flow;
            for &o in f.producers[v.get()].iter().chain(&f.consumers[v.get()]) {
                added += usize::from(set.insert(NodeRef::Op(o)));
            }
        }
        _ => {}
    }
    added
}

/// The information path of a verdict inside `view`: the nodes that lie downstream of the
/// verdict op or of the evidence and upstream of the prediction, plus those sources themselves.
///
/// # Complexity
/// O(V + E).
pub fn information_path(
    trace: &Trace,
    view: &NodeSet,
    case: &FailureCase,
    verdict_op: Option<&str>,
) -> NodeSet {
    let mut sources: Vec<NodeRef> = case
        .evidence_ids
        .iter()
        .filter_map(|e| trace.var_by_id(e))
        .map(NodeRef::Var)
        .collect();
    if let Some(op) = verdict_op.and_then(|id| trace.op_by_id(id)) {
        sources.push(NodeRef::Op(op));
    }
    let down = forward_reach(trace, &sources);
    let root = case
        .prediction_id
        .as_deref()
        .and_then(|p| trace.var_by_id(p));
    let up = backward_reach(trace, &root.into_iter().collect::<Vec<_>>());
    let mut path = NodeSet::empty(trace);
    for n in view
        .vars()
        .map(NodeRef::Var)
        .chain(view.ops().map(NodeRef::Op))
    {
        if (down.contains(n) && up.contains(n)) || sources.contains(&n) {
            path.insert(n);
        }
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::testing::chain_trace;

    #[test]
    fn backward_reach_follows_producers_and_inputs() {
        // m -> extract -> fact -> answer -> pred ; unrelated: u -> other -> w
        let t = chain_trace();
        let pred = t.var_by_id("pred@1").unwrap();
        let set = backward_reach(&t, &[pred]);
        for id in ["m@1", "fact@1", "pred@1"] {
            assert!(set.contains(NodeRef::Var(t.var_by_id(id).unwrap())), "{id}");
        }
        assert!(!set.contains(NodeRef::Var(t.var_by_id("w@1").unwrap())));
        assert!(set.contains(NodeRef::Op(t.op_by_id("op-answer").unwrap())));
        assert!(!set.contains(NodeRef::Op(t.op_by_id("op-other").unwrap())));
        assert_eq!(set.len(), set.vars().count() + set.ops().count());
    }

    #[test]
    fn expand_adds_one_hop_and_counts() {
        let t = chain_trace();
        let mut set = NodeSet::empty(&t);
        let other = NodeRef::Op(t.op_by_id("op-other").unwrap());
        assert_eq!(expand(&t, &mut set, other), 3); // op + u + w
        assert_eq!(expand(&t, &mut set, other), 0);
    }

    #[test]
    fn information_path_runs_from_evidence_to_prediction() {
        let t = chain_trace();
        let case = FailureCase {
            query_id: "pred@1".into(),
            query: String::new(),
            golden_answers: vec![],
            prediction: String::new(),
            prediction_id: Some("pred@1".into()),
            evidence_ids: vec!["m@1".into()],
            judge_score: Some(0.0),
            annotation: None,
            answer_op: None,
            judge_op: None,
        };
        let view = failure_view(&t, &case, None);
        let path = information_path(&t, &view, &case, None);
        assert!(path.contains(NodeRef::Var(t.var_by_id("fact@1").unwrap())));
        // The prompt feeds the answer but is not downstream of the evidence.
        assert!(view.contains(NodeRef::Var(t.var_by_id("prompt@1").unwrap())));
        assert!(!path.contains(NodeRef::Var(t.var_by_id("prompt@1").unwrap())));
    }
}
