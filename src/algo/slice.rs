//! Dynamic slices: what could have influenced a node (backward) and what a node could have
//! influenced (forward). In a recorded execution every edge is a real information flow, so the
//! slice is plain reachability.

use serde::{Deserialize, Serialize};

use super::graph::{GraphIndex, NodeRef};
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

    /// True when the slice holds the variable.
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
/// with the intermediates of every op in it (the op computed its outputs through them).
///
/// # Complexity
/// O(V' + E' + min(V' log V', V)) for the V' nodes and E' edges of the slice.
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
    Slice::from_nodes(g, g.reach(g.predecessor_graph(), seeds, true))
}

/// Returns the forward impact set of `seeds`: every node that depends on a seed, seeds included.
///
/// # Complexity
/// As [`backward_slice`].
pub fn forward_impact(g: &GraphIndex, seeds: &[NodeRef]) -> Slice {
    Slice::from_nodes(g, g.reach(g.successor_graph(), seeds, false))
}

/// Returns the backward slice of a failed answer: seeded by the prediction variable, or else by
/// the answer op.
///
/// # Errors
/// [`AlgoError::NoAnswer`] when the case names neither (or names ids not in the trace).
///
/// # Complexity
/// As [`backward_slice`].
pub fn failure_slice(
    trace: &Trace,
    g: &GraphIndex,
    case: &FailureCase,
) -> Result<Slice, AlgoError> {
    let seed = case
        .prediction_id
        .as_deref()
        .and_then(|p| trace.var_by_id(p))
        .map(NodeRef::Var)
        .or_else(|| {
            case.answer_op
                .as_deref()
                .and_then(|o| trace.op_by_id(o))
                .map(NodeRef::Op)
        });
    let Some(seed) = seed else {
        return Err(AlgoError::NoAnswer {
            query_id: case.query_id.clone(),
        });
    };
    Ok(backward_slice(g, &[seed]))
}
