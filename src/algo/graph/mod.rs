//! The graph index: the bipartite DAG (variable → op → variable) as petgraph CSR adjacency
//! structures (successors, predecessors, op → intermediates) plus a topological order.
//!
//! Nodes are numbered by their position in the topological order, so a walk over a slice
//! touches memory roughly in time order (neighbours in the data flow are neighbours in memory),
//! and ordering a result is sorting integers. [`GraphIndex::node`] and [`GraphIndex::node_ref`]
//! convert between [`NodeRef`]s and these numbers.

use petgraph::csr::Csr;
use serde::{Deserialize, Serialize};

mod build;
mod reach;
#[cfg(test)]
mod tests;

use super::AlgoError;
pub use crate::model::NodeRef;
use crate::model::{OpIx, Trace, VarIx};
pub use build::GraphIndexBuild;
pub(crate) use reach::Direction;

/// Adjacency in compressed sparse row form: neighbours of a node are one contiguous slice.
pub type Adjacency = Csr<(), (), petgraph::Directed, u32>;

/// Successor adjacency; an edge's weight is `true` when it carries a new value: every
/// variable → op edge, and op → variable edges from the variable's defining producer (false
/// when the op only re-emits an existing version; see [`defining_producers`]).
pub type FlowAdjacency = Csr<(), bool, petgraph::Directed, u32>;

/// The index over a trace's bipartite graph, built once per trace.
#[derive(Debug, Clone)]
pub struct GraphIndex {
    var_count: usize,
    op_count: usize,
    /// Position → successor positions.
    successors: FlowAdjacency,
    /// Position → predecessor positions.
    predecessors: Adjacency,
    /// Variable position → position of its defining producer (`u32::MAX` for an op or an
    /// unproduced variable); see [`defining_producers`].
    defined_by: Vec<u32>,
    /// Op position → positions of its intermediate variables (produced and read inside the op).
    intermediates: Adjacency,
    /// Position → raw node number (variable `i` is `i`, op `o` is `var_count + o`).
    raw: Vec<u32>,
    /// Raw node number → position.
    pos: Vec<u32>,
}

/// The variables an operation touches, by role.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpSubgraph {
    pub op: OpIx,
    /// Read by the op, produced elsewhere (in-degree 0 inside its subgraph).
    pub inputs: Vec<VarIx>,
    /// Produced by the op and read again inside it.
    pub intermediates: Vec<VarIx>,
    /// Produced by the op and not read inside it.
    pub outputs: Vec<VarIx>,
}

/// Returns the subgraph of `op`: its inputs, intermediates and outputs, in edge order.
///
/// # Errors
/// [`AlgoError::Stale`] when the trace's index does not cover `op`.
///
/// # Complexity
/// O(size of the op's subgraph).
pub fn op_subgraph(trace: &Trace, op: OpIx) -> Result<OpSubgraph, AlgoError> {
    let [inputs, intermediates, outputs] = op_var_lists(trace, op)?;
    Ok(OpSubgraph {
        op,
        inputs: inputs.to_vec(),
        intermediates: intermediates.to_vec(),
        outputs: outputs.to_vec(),
    })
}

/// The input, intermediate and output variables of `op`, borrowed from the flow index.
///
/// # Errors
/// [`AlgoError::Stale`] when the trace's index does not cover `op`.
pub(crate) fn op_var_lists(trace: &Trace, op: OpIx) -> Result<[&[VarIx]; 3], AlgoError> {
    let f = &trace.flow;
    let i = op.get();
    let (Some(inputs), Some(intermediates), Some(outputs)) = (
        f.op_inputs.get(i),
        f.op_intermediates.get(i),
        f.op_outputs.get(i),
    ) else {
        return Err(AlgoError::Stale {
            what: format!("operation index {i} is not in the flow index"),
        });
    };
    Ok([inputs, intermediates, outputs])
}

impl GraphIndex {
    /// Builds the index from the trace's flow (inputs → op → produced variables).
    ///
    /// The topological order puts a node after everything it depends on and, among the nodes
    /// that are ready, takes the smallest (`created_at`, id) first (Kahn's algorithm with a heap),
    /// so it is unique and matches wall-clock order whenever the clock agrees with the data flow.
    /// A re-emitted version ranks after all its producers, so there the order can run against the
    /// clock (an op reading a unit waits for every later retrieval of it); which producer defined
    /// a version is therefore taken from the records ([`defining_producers`]), not from this order.
    ///
    /// # Errors
    /// [`AlgoError::Stale`] if `trace.flow` was not built for these records,
    /// [`AlgoError::Cycle`] if the graph is not a DAG.
    ///
    /// # Complexity
    /// O((V + E) log V) time, O(V + E) memory.
    pub fn build(trace: &Trace) -> Result<GraphIndex, AlgoError> {
        let mut building = GraphIndexBuild::new(trace);
        loop {
            if let Some(done) = building.step() {
                return done;
            }
        }
    }

    /// Number of variable versions.
    pub fn var_count(&self) -> usize {
        self.var_count
    }

    /// Number of operations.
    pub fn op_count(&self) -> usize {
        self.op_count
    }

    /// Number of nodes (variables + operations).
    pub fn node_count(&self) -> usize {
        self.var_count + self.op_count
    }

    /// The number of `r` in the adjacency structures: its topological position
    /// (`u32::MAX` for a node not in the trace).
    pub fn node(&self, r: NodeRef) -> u32 {
        let raw = match r {
            NodeRef::Var(v) => v.get(),
            NodeRef::Op(o) => self.var_count + o.get(),
        };
        self.pos.get(raw).copied().unwrap_or(u32::MAX)
    }

    /// The node at position `n` (an op past the end for an `n` out of range).
    pub fn node_ref(&self, n: u32) -> NodeRef {
        let raw = self.raw.get(n as usize).copied().unwrap_or(u32::MAX);
        if (raw as usize) < self.var_count {
            NodeRef::Var(VarIx(raw))
        } else {
            NodeRef::Op(OpIx(raw - self.var_count as u32))
        }
    }

    fn is_var(&self, n: u32) -> bool {
        self.raw
            .get(n as usize)
            .is_some_and(|&r| (r as usize) < self.var_count)
    }

    /// Successor adjacency over positions (variable → its readers, op → what it produced).
    pub fn successor_graph(&self) -> &FlowAdjacency {
        &self.successors
    }

    /// Predecessor adjacency over positions (the reverse graph).
    pub fn predecessor_graph(&self) -> &Adjacency {
        &self.predecessors
    }

    /// Direct successors of `r`, in topological order.
    ///
    /// # Complexity
    /// O(out-degree).
    pub fn successors(&self, r: NodeRef) -> impl Iterator<Item = NodeRef> + '_ {
        neighbours(&self.successors, self.node(r))
            .iter()
            .map(|&m| self.node_ref(m))
    }

    /// Direct predecessors of `r`, in topological order.
    ///
    /// # Complexity
    /// O(in-degree).
    pub fn predecessors(&self, r: NodeRef) -> impl Iterator<Item = NodeRef> + '_ {
        neighbours(&self.predecessors, self.node(r))
            .iter()
            .map(|&m| self.node_ref(m))
    }

    /// All nodes in topological order.
    ///
    /// # Complexity
    /// O(V) to walk.
    pub fn topo_order(&self) -> impl Iterator<Item = NodeRef> + '_ {
        (0..self.raw.len() as u32).map(|p| self.node_ref(p))
    }

    /// The operations in topological order.
    ///
    /// # Complexity
    /// O(V).
    pub fn ops_in_topo_order(&self) -> Vec<OpIx> {
        self.topo_order()
            .filter_map(|r| match r {
                NodeRef::Op(o) => Some(o),
                NodeRef::Var(_) => None,
            })
            .collect()
    }

    /// Position of `r` in the topological order (0 = first), or `None` if `r` is not in the graph.
    pub fn topo_rank(&self, r: NodeRef) -> Option<usize> {
        let n = self.node(r);
        (n != u32::MAX).then_some(n as usize)
    }

    /// Every node `from` depends on, without `from` itself, in topological order (the backward
    /// slice of `from`; see [`crate::algo::backward_slice`] for re-emitted versions and
    /// intermediates).
    ///
    /// # Complexity
    /// O(V' + E' + min(V' log V', V)) for the V' nodes and E' edges reached.
    pub fn ancestors(&self, from: NodeRef) -> Vec<NodeRef> {
        let me = self.node(from);
        let reached = self.reach(&[from], Direction::Backward);
        reached
            .into_iter()
            .filter(|&n| n != me)
            .map(|n| self.node_ref(n))
            .collect()
    }

    /// Every node that depends on `from`, without `from` itself, in topological order (the
    /// forward impact of `from`).
    ///
    /// # Complexity
    /// As [`GraphIndex::ancestors`].
    pub fn descendants(&self, from: NodeRef) -> Vec<NodeRef> {
        let me = self.node(from);
        let reached = self.reach(&[from], Direction::Forward);
        reached
            .into_iter()
            .filter(|&n| n != me)
            .map(|n| self.node_ref(n))
            .collect()
    }
}

/// Per variable, the op that *defined* it (`None` when no op produced it).
///
/// A version can have several producers: the op that wrote it, and later ops that *re-emit* the
/// same version (a retrieval links its query to the units it found; two answers with the same
/// text share one content-hash node). The writer is the producer of the variable's earliest
/// incoming edge by (`created_at`, record index): smartcomment stamps and appends an edge when
/// the link is made, so this is the op that made the version first.
///
/// The first producer in topological order is not: a topological order puts a variable after
/// *all* its producers, so an op that reads an existing unit waits for every later retrieval that
/// re-emits it, and the units that op writes then rank after those retrievals too (on traces of
/// the reference memory system, most units were "defined" by a retrieval that way).
///
/// # Complexity
/// O(E) string comparisons, O(V) memory.
pub fn defining_producers(trace: &Trace) -> Vec<Option<OpIx>> {
    let time = |e: usize| trace.edges.get(e).map_or("", |r| r.created_at.as_str());
    let mut first_edge: Vec<Option<usize>> = vec![None; trace.vars.len()];
    for (e, &(_, target, _)) in trace.flow.edge_ends.iter().enumerate() {
        if let Some(slot) = first_edge.get_mut(target.get()) {
            // Edges are met in record order, so `<` keeps the earlier record on a tie.
            if slot.is_none_or(|f| time(e) < time(f)) {
                *slot = Some(e);
            }
        }
    }
    first_edge
        .into_iter()
        .map(|e| {
            e.and_then(|e| trace.flow.edge_ends.get(e))
                .map(|&(_, _, op)| op)
        })
        .collect()
}

/// The neighbours of node `x` in `adj` (none for a node past its rows).
fn neighbours<E>(adj: &Csr<(), E, petgraph::Directed, u32>, x: u32) -> &[u32] {
    if (x as usize) < adj.node_count() {
        adj.neighbors_slice(x)
    } else {
        &[]
    }
}

/// A CSR adjacency over `n` nodes from an edge list (sorted and deduplicated here).
fn csr(edges: &mut Vec<(u32, u32)>, n: usize) -> Adjacency {
    edges.sort_unstable();
    edges.dedup();
    // Sorted and unique by construction, so `from_sorted_edges` cannot fail; fall back to an
    // edgeless graph rather than panic.
    let mut g = Adjacency::from_sorted_edges(edges).unwrap_or_else(|_| Adjacency::with_nodes(0));
    while g.node_count() < n {
        g.add_node(());
    }
    g
}
