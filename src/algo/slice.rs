//! Dynamic slices: what could have influenced a node (backward) and what a node could have
//! influenced (forward). In a recorded execution every edge is a real information flow, so the
//! slice is plain reachability.

use serde::{Deserialize, Serialize};

use super::graph::{Direction, GraphIndex, NodeRef};
use super::AlgoError;
use crate::model::{FailureCase, OpIx, Trace, VarIx};

/// The variables and operations of a slice, each list in topological order.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Slice {
    pub vars: Vec<VarIx>,
    pub ops: Vec<OpIx>,
}

impl Slice {
    fn from_nodes(g: &GraphIndex, nodes: Vec<u32>) -> Slice {
        let mut s = Slice::default();
        for n in nodes {
            match g.node_ref(n) {
                NodeRef::Var(v) => s.vars.push(v),
                NodeRef::Op(o) => s.ops.push(o),
            }
        }
        s
    }

    /// True when the slice holds the variable (a linear scan: O(V')).
    pub fn contains_var(&self, v: VarIx) -> bool {
        self.vars.contains(&v)
    }

    /// Number of nodes in the slice.
    pub fn len(&self) -> usize {
        self.vars.len() + self.ops.len()
    }

    /// True when the slice holds no node.
    pub fn is_empty(&self) -> bool {
        self.vars.is_empty() && self.ops.is_empty()
    }
}

/// Returns the backward slice of `seeds`: every node that any seed depends on, seeds included,
/// with the intermediates of every op in it (the op computed its outputs through them). A
/// version re-emitted by a later op (a retrieval linking a query to an existing unit) leads back
/// to the op that defined it; the re-emitting op joins only when all its inputs are in the slice
/// (the producer of its earliest edge *defines* a version, see
/// [`defining_producers`](super::defining_producers); later ones re-emit it).
///
/// Small slices are walked depth-first; a walk that reaches more than 1/32 of the graph
/// restarts as one sequential sweep over the topological order.
///
/// # Complexity
/// O(V' + E' + V' log V') for the V' nodes and E' edges of the slice when V' ≤ V/32,
/// else O(V + E).
///
/// # Example
/// ```
/// use memtrace::algo::{backward_slice, GraphIndex, NodeRef};
/// # let trace = memtrace::Trace::default();
/// let g = GraphIndex::build(&trace)?;
/// assert!(backward_slice(&g, &[]).is_empty());
/// # Ok::<(), memtrace::algo::AlgoError>(())
/// ```
pub fn backward_slice(g: &GraphIndex, seeds: &[NodeRef]) -> Slice {
    Slice::from_nodes(g, g.reach(seeds, Direction::Backward))
}

/// Returns the forward impact set of `seeds`: every node that depends on a seed, seeds included.
/// A version re-emitted by a reached op is included but not followed: its value did not change.
///
/// # Complexity
/// As [`backward_slice`].
pub fn forward_impact(g: &GraphIndex, seeds: &[NodeRef]) -> Slice {
    Slice::from_nodes(g, g.reach(seeds, Direction::Forward))
}

/// Returns the backward slice of a failed answer: the answer op ([`answer_op`]), everything it
/// depends on, and the prediction variable.
///
/// Seeding by the op rather than by the prediction variable matters: with content-hash
/// identities two questions answered with the same text share one prediction node, whose
/// ancestors would mix both questions.
///
/// # Errors
/// [`AlgoError::NoAnswer`] when the case names neither a prediction nor an answer op in the trace.
///
/// # Complexity
/// As [`backward_slice`].
pub fn failure_slice(
    trace: &Trace,
    g: &GraphIndex,
    case: &FailureCase,
) -> Result<Slice, AlgoError> {
    let prediction = case
        .prediction_id
        .as_deref()
        .and_then(|p| trace.var_by_id(p));
    let Some(op) = answer_op(trace, case) else {
        return match prediction {
            Some(p) => Ok(backward_slice(g, &[NodeRef::Var(p)])),
            None => Err(AlgoError::NoAnswer {
                query_id: case.query_id.clone(),
            }),
        };
    };
    let mut s = backward_slice(g, &[NodeRef::Op(op)]);
    // The prediction comes after its producer, so pushing it keeps the topological order.
    if let Some(p) = prediction.filter(|&p| trace.flow.op_produced(op).any(|x| x == p)) {
        s.vars.push(p);
    }
    Ok(s)
}

/// The op that answered `case`: among the producers of its prediction, the one that reads its
/// question; else the case's `answer_op`; else the prediction's first producer.
///
/// # Complexity
/// O(Σ inputs of the prediction's producers).
pub fn answer_op(trace: &Trace, case: &FailureCase) -> Option<OpIx> {
    let query = trace.var_by_id(&case.query_id);
    let prediction = case
        .prediction_id
        .as_deref()
        .and_then(|p| trace.var_by_id(p));
    let producers = prediction
        .and_then(|p| trace.flow.producers.get(p.get()))
        .map_or(&[][..], Vec::as_slice);
    let reads_query = |o: &OpIx| {
        query.is_some_and(|q| {
            trace
                .flow
                .op_inputs
                .get(o.get())
                .is_some_and(|i| i.contains(&q))
        })
    };
    producers
        .iter()
        .copied()
        .find(reads_query)
        .or_else(|| case.answer_op.as_deref().and_then(|o| trace.op_by_id(o)))
        .or_else(|| producers.first().copied())
}

/// The earliest op that produced `v`.
pub(crate) fn first_producer(t: &Trace, v: VarIx) -> Option<OpIx> {
    t.flow.producers[v.get()]
        .iter()
        .copied()
        .min_by(|a, b| t.op(*a).created_at.cmp(&t.op(*b).created_at).then(a.cmp(b)))
}
