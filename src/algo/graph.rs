//! The graph index: the bipartite DAG (variable → op → variable) as two petgraph CSR adjacency
//! structures (successors and predecessors) plus a topological order.
//!
//! Node numbering: variable `VarIx(i)` is node `i`, operation `OpIx(o)` is node `var_count + o`.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use petgraph::csr::Csr;
use serde::{Deserialize, Serialize};

use super::AlgoError;
use crate::model::{OpIx, Trace, VarIx};

/// Adjacency in compressed sparse row form: neighbours of a node are one contiguous slice.
pub type Adjacency = Csr<(), (), petgraph::Directed, u32>;

/// A node of the bipartite graph: a variable version or an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", content = "ix", rename_all = "lowercase")]
pub enum NodeRef {
    Var(VarIx),
    Op(OpIx),
}

/// The index over a trace's bipartite graph, built once per trace.
#[derive(Debug, Clone)]
pub struct GraphIndex {
    var_count: usize,
    op_count: usize,
    successors: Adjacency,
    predecessors: Adjacency,
    /// Op node → its intermediate variables (produced and consumed inside the op).
    intermediates: Adjacency,
    /// Node numbers in topological order.
    topo: Vec<u32>,
    /// Node number → position in `topo`.
    rank: Vec<u32>,
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
    Ok(OpSubgraph {
        op,
        inputs: inputs.clone(),
        intermediates: intermediates.clone(),
        outputs: outputs.clone(),
    })
}

impl GraphIndex {
    /// Builds the index from the trace's flow (inputs → op → produced variables).
    ///
    /// The topological order puts a node after everything it depends on and, among the nodes
    /// that are ready, takes the smallest (`created_at`, id) first (Kahn's algorithm with a heap),
    /// so it is unique and matches wall-clock order whenever the clock agrees with the data flow.
    ///
    /// # Errors
    /// [`AlgoError::Stale`] if `trace.flow` was not built for these records,
    /// [`AlgoError::Cycle`] if the graph is not a DAG.
    ///
    /// # Complexity
    /// O((V + E) log V) time, O(V + E) memory.
    pub fn build(trace: &Trace) -> Result<GraphIndex, AlgoError> {
        let (nv, no) = (trace.vars.len(), trace.ops.len());
        let f = &trace.flow;
        if f.op_inputs.len() != no || f.producers.len() != nv || f.op_outputs.len() != no {
            return Err(AlgoError::Stale {
                what: format!(
                    "{nv} variables and {no} operations, but the flow index has {} and {}",
                    f.producers.len(),
                    f.op_inputs.len()
                ),
            });
        }
        let mut forward: Vec<(u32, u32)> = Vec::with_capacity(trace.edges.len() + no);
        let mut mids: Vec<(u32, u32)> = Vec::new();
        for o in 0..no {
            let on = (nv + o) as u32;
            forward.extend(f.op_inputs[o].iter().map(|v| (v.0, on)));
            mids.extend(f.op_intermediates[o].iter().map(|v| (on, v.0)));
            forward.extend(
                f.op_intermediates[o]
                    .iter()
                    .chain(&f.op_outputs[o])
                    .map(|v| (on, v.0)),
            );
        }
        let mut backward: Vec<(u32, u32)> = forward.iter().map(|&(a, b)| (b, a)).collect();
        let n = nv + no;
        let successors = csr(&mut forward, n);
        let predecessors = csr(&mut backward, n);
        let intermediates = csr(&mut mids, n);
        let topo = topo_order(trace, &successors, &predecessors)?;
        let mut rank = vec![0u32; n];
        for (pos, &node) in topo.iter().enumerate() {
            rank[node as usize] = pos as u32;
        }
        Ok(GraphIndex {
            var_count: nv,
            op_count: no,
            successors,
            predecessors,
            intermediates,
            topo,
            rank,
        })
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

    /// The node number of `r` in the adjacency structures.
    pub fn node(&self, r: NodeRef) -> u32 {
        match r {
            NodeRef::Var(v) => v.0,
            NodeRef::Op(o) => (self.var_count as u32) + o.0,
        }
    }

    /// The node with number `n`.
    pub fn node_ref(&self, n: u32) -> NodeRef {
        if (n as usize) < self.var_count {
            NodeRef::Var(VarIx(n))
        } else {
            NodeRef::Op(OpIx(n - self.var_count as u32))
        }
    }

    /// Successor adjacency (variable → its readers, op → what it produced).
    pub fn successor_graph(&self) -> &Adjacency {
        &self.successors
    }

    /// Predecessor adjacency (the reverse graph).
    pub fn predecessor_graph(&self) -> &Adjacency {
        &self.predecessors
    }

    /// Direct successors of `r`.
    ///
    /// # Complexity
    /// O(out-degree).
    pub fn successors(&self, r: NodeRef) -> impl Iterator<Item = NodeRef> + '_ {
        self.neighbours(&self.successors, r)
    }

    /// Direct predecessors of `r`.
    ///
    /// # Complexity
    /// O(in-degree).
    pub fn predecessors(&self, r: NodeRef) -> impl Iterator<Item = NodeRef> + '_ {
        self.neighbours(&self.predecessors, r)
    }

    fn neighbours<'a>(
        &'a self,
        adj: &'a Adjacency,
        r: NodeRef,
    ) -> impl Iterator<Item = NodeRef> + 'a {
        let n = self.node(r);
        let slice: &[u32] = if (n as usize) < adj.node_count() {
            adj.neighbors_slice(n)
        } else {
            &[]
        };
        slice.iter().map(|&m| self.node_ref(m))
    }

    /// All nodes in topological order.
    ///
    /// # Complexity
    /// O(V) to walk.
    pub fn topo_order(&self) -> impl Iterator<Item = NodeRef> + '_ {
        self.topo.iter().map(|&n| self.node_ref(n))
    }

    /// Node numbers in topological order.
    pub fn topo_nodes(&self) -> &[u32] {
        &self.topo
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
        self.rank.get(self.node(r) as usize).map(|&x| x as usize)
    }

    /// Every node `from` depends on, without `from` itself, in topological order (the backward
    /// slice of `from`; see [`GraphIndex::reach`] for re-emitted versions and intermediates).
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

    /// The op that defined variable node `v`: its first producer in topological order. Other
    /// producers *re-emit* an existing version (a retrieval links the query to the units it
    /// found; two answers with the same text share one content-hash node).
    fn defining_producer(&self, v: u32) -> Option<u32> {
        neighbours(&self.predecessors, v)
            .iter()
            .copied()
            .min_by_key(|&o| self.rank[o as usize])
    }

    /// Node numbers reachable from `seeds` (seeds included), in topological order.
    ///
    /// Backward, a variable leads to its defining producer only; an op that re-emits a reached
    /// variable joins afterwards when all its inputs are reached (the retrieval of the same
    /// question does, another question's retrieval does not), and every reached op brings its
    /// intermediates (its outputs were computed through them). Forward, a variable reached
    /// through a re-emitting op is included but not followed (its value did not change).
    ///
    /// Depth-first with an explicit stack and a state byte per node. The result is ordered by
    /// sorting the reached ranks when few nodes are reached, or by one scan of the topological
    /// order when many are, whichever is cheaper.
    ///
    /// # Complexity
    /// O(V' + E' + min(V' log V', V)) time, O(V) memory for the states.
    pub(crate) fn reach(&self, seeds: &[NodeRef], dir: Direction) -> Vec<u32> {
        let n = self.node_count();
        let mut w = Walk {
            state: vec![0; n],
            reached: Vec::new(),
            stack: Vec::new(),
        };
        for &s in seeds {
            let s = self.node(s);
            if (s as usize) < n {
                w.visit(s, true);
            }
        }
        let nv = self.var_count as u32;
        let mut pending: Vec<u32> = Vec::new();
        while let Some(x) = w.stack.pop() {
            match (dir, x < nv) {
                (Direction::Backward, false) => {
                    for &m in neighbours(&self.intermediates, x) {
                        w.visit(m, false);
                    }
                    for &p in neighbours(&self.predecessors, x) {
                        w.visit(p, true);
                    }
                }
                (Direction::Backward, true) => {
                    let producers = neighbours(&self.predecessors, x);
                    if let [only] = producers {
                        w.visit(*only, true);
                    } else if let Some(d) = self.defining_producer(x) {
                        w.visit(d, true);
                        pending.extend(producers.iter().filter(|&&p| p != d));
                    }
                }
                (Direction::Forward, true) => {
                    for &o in neighbours(&self.successors, x) {
                        w.visit(o, true);
                    }
                }
                (Direction::Forward, false) => {
                    for &v in neighbours(&self.successors, x) {
                        w.visit(v, self.defining_producer(v) == Some(x));
                    }
                }
            }
        }
        for p in pending {
            let inputs = neighbours(&self.predecessors, p);
            if w.state[p as usize] == 0
                && !inputs.is_empty()
                && inputs.iter().all(|&i| w.state[i as usize] > 0)
            {
                w.visit(p, false);
                for &m in neighbours(&self.intermediates, p) {
                    w.visit(m, false);
                }
            }
        }
        let k = w.reached.len();
        let log_k = (usize::BITS - k.leading_zeros()) as usize;
        if k.saturating_mul(log_k) < n {
            let mut ranked: Vec<u32> = w.reached.iter().map(|&x| self.rank[x as usize]).collect();
            ranked.sort_unstable();
            ranked.into_iter().map(|r| self.topo[r as usize]).collect()
        } else {
            self.topo
                .iter()
                .copied()
                .filter(|&x| w.state[x as usize] > 0)
                .collect()
        }
    }
}

/// Which way [`GraphIndex::reach`] walks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    /// Against the edges: what a node depends on.
    Backward,
    /// Along the edges: what depends on a node.
    Forward,
}

/// The state of one reachability walk: 0 = not reached, 1 = reached, 2 = reached and followed.
struct Walk {
    state: Vec<u8>,
    reached: Vec<u32>,
    stack: Vec<u32>,
}

impl Walk {
    fn visit(&mut self, x: u32, follow: bool) {
        let s = &mut self.state[x as usize];
        if *s == 0 {
            self.reached.push(x);
            *s = 1;
        }
        if follow && *s == 1 {
            *s = 2;
            self.stack.push(x);
        }
    }
}

/// The neighbours of node `x` in `adj` (none for a node past its rows).
fn neighbours(adj: &Adjacency, x: u32) -> &[u32] {
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

/// Kahn's algorithm; among ready nodes, the smallest (`created_at`, id) goes first.
fn topo_order(trace: &Trace, succ: &Adjacency, pred: &Adjacency) -> Result<Vec<u32>, AlgoError> {
    let nv = trace.vars.len();
    let n = succ.node_count();
    let key = |x: usize| -> (&str, &str) {
        if x < nv {
            let v = &trace.vars[x];
            (v.created_at.as_str(), v.full_node_id.as_str())
        } else {
            let o = &trace.ops[x - nv];
            (o.created_at.as_str(), o.op_id.as_str())
        }
    };
    // Rank every node by its key once, so the heap compares integers.
    let mut by_key: Vec<u32> = (0..n as u32).collect();
    by_key.sort_unstable_by(|&a, &b| key(a as usize).cmp(&key(b as usize)).then(a.cmp(&b)));
    let mut key_rank = vec![0u32; n];
    for (r, &x) in by_key.iter().enumerate() {
        key_rank[x as usize] = r as u32;
    }
    let mut indeg: Vec<u32> = (0..n as u32).map(|x| pred.out_degree(x) as u32).collect();
    let mut heap: BinaryHeap<Reverse<u32>> = (0..n)
        .filter(|&x| indeg[x] == 0)
        .map(|x| Reverse(key_rank[x]))
        .collect();
    let mut order = Vec::with_capacity(n);
    while let Some(Reverse(r)) = heap.pop() {
        let x = by_key[r as usize];
        order.push(x);
        for &y in succ.neighbors_slice(x) {
            let d = &mut indeg[y as usize];
            *d -= 1;
            if *d == 0 {
                heap.push(Reverse(key_rank[y as usize]));
            }
        }
    }
    if order.len() < n {
        let stuck = (0..n).find(|&x| indeg[x] > 0).unwrap_or(0);
        let id = key(stuck).1.to_owned();
        return Err(AlgoError::Cycle { id });
    }
    Ok(order)
}
