//! Builds a [`GraphIndex`] a stage at a time ([`GraphIndexBuild`]): a page yields between
//! stages, so no task of the build holds the main thread for long (the whole build on a 100k-node trace
//! took one 62 ms task).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::{csr, defining_producers, neighbours, Adjacency, FlowAdjacency, GraphIndex};
use crate::algo::AlgoError;
use crate::model::Trace;

/// A [`GraphIndex`] being built from a trace's flow. Each [`GraphIndexBuild::step`] does one stage (at
/// most a sort or a pass over the nodes and edges); the last returns the index.
pub struct GraphIndexBuild<'t> {
    trace: &'t Trace,
    /// The stage the next step does.
    stage: Stage,
    /// Variable → op and op → variable edges, as raw node numbers, then as positions.
    edges: Vec<(u32, u32)>,
    /// Op → intermediate variable edges.
    mids: Vec<(u32, u32)>,
    succ: Adjacency,
    indeg: Vec<u32>,
    /// Raw node numbers by (`created_at`, id), and each node's place in that order.
    by_key: Vec<u32>,
    key_rank: Vec<u32>,
    raw: Vec<u32>,
    pos: Vec<u32>,
    defined_by: Vec<u32>,
    successors: FlowAdjacency,
    predecessors: Adjacency,
}

/// The stages of a build, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// The edges, as raw node numbers.
    Edges,
    /// The successor lists and in-degrees.
    Csr,
    /// Each node's place by (`created_at`, id).
    Keys,
    /// The topological order.
    Order,
    /// The edges as positions in that order.
    Relabel,
    Successors,
    Predecessors,
    /// The index, handed over.
    Index,
    /// Built, or failed.
    Done,
}

impl Stage {
    fn next(self) -> Stage {
        match self {
            Stage::Edges => Stage::Csr,
            Stage::Csr => Stage::Keys,
            Stage::Keys => Stage::Order,
            Stage::Order => Stage::Relabel,
            Stage::Relabel => Stage::Successors,
            Stage::Successors => Stage::Predecessors,
            Stage::Predecessors => Stage::Index,
            Stage::Index | Stage::Done => Stage::Done,
        }
    }
}

impl<'t> GraphIndexBuild<'t> {
    /// Starts building the index of `trace`.
    pub fn new(trace: &'t Trace) -> GraphIndexBuild<'t> {
        GraphIndexBuild {
            trace,
            stage: Stage::Edges,
            edges: Vec::new(),
            mids: Vec::new(),
            succ: Adjacency::with_nodes(0),
            indeg: Vec::new(),
            by_key: Vec::new(),
            key_rank: Vec::new(),
            raw: Vec::new(),
            pos: Vec::new(),
            defined_by: Vec::new(),
            successors: FlowAdjacency::with_nodes(0),
            predecessors: Adjacency::with_nodes(0),
        }
    }

    /// Does the next stage; `Some` with the index (or why it cannot be built) after the last,
    /// and an error on every call after that.
    ///
    /// # Errors
    /// As [`GraphIndex::build`].
    pub fn step(&mut self) -> Option<Result<GraphIndex, AlgoError>> {
        let t = self.trace;
        let (nv, no) = (t.vars.len(), t.ops.len());
        let n = nv + no;
        let stage = self.stage;
        self.stage = stage.next();
        let failed = |b: &mut Self, e: AlgoError| {
            b.stage = Stage::Done;
            Some(Err(e))
        };
        match stage {
            Stage::Edges => return self.collect_edges().err().and_then(|e| failed(self, e)),
            Stage::Csr => {
                self.succ = csr(&mut self.edges, n);
                self.indeg = vec![0u32; n];
                for &(_, b) in &self.edges {
                    self.indeg[b as usize] += 1;
                }
            }
            Stage::Keys => self.rank_keys(),
            Stage::Order => return self.order().err().and_then(|e| failed(self, e)),
            Stage::Relabel => self.relabel(),
            Stage::Successors => {
                let is_var = |p: u32| (self.raw[p as usize] as usize) < nv;
                let mut forward: Vec<(u32, u32, bool)> = (self.edges.iter())
                    .map(|&(a, b)| (a, b, is_var(a) || self.defined_by[b as usize] == a))
                    .collect();
                forward.sort_unstable_by_key(|e| (e.0, e.1));
                forward.dedup_by_key(|e| (e.0, e.1));
                self.successors = FlowAdjacency::from_sorted_edges(&forward)
                    .unwrap_or_else(|_| FlowAdjacency::with_nodes(0));
                while self.successors.node_count() < n {
                    self.successors.add_node(());
                }
            }
            Stage::Predecessors => {
                let mut backward: Vec<(u32, u32)> = std::mem::take(&mut self.edges)
                    .into_iter()
                    .map(|(a, b)| (b, a))
                    .collect();
                self.predecessors = csr(&mut backward, n);
            }
            Stage::Index => {
                return Some(Ok(GraphIndex {
                    var_count: nv,
                    op_count: no,
                    successors: std::mem::replace(
                        &mut self.successors,
                        FlowAdjacency::with_nodes(0),
                    ),
                    defined_by: std::mem::take(&mut self.defined_by),
                    predecessors: std::mem::replace(
                        &mut self.predecessors,
                        Adjacency::with_nodes(0),
                    ),
                    intermediates: csr(&mut self.mids, n),
                    raw: std::mem::take(&mut self.raw),
                    pos: std::mem::take(&mut self.pos),
                }));
            }
            Stage::Done => {
                return Some(Err(AlgoError::Stale {
                    what: "the graph index was already built".into(),
                }))
            }
        }
        None
    }

    /// Inputs → op → produced variables, as raw node numbers (variable `i` is `i`, op `o` is
    /// `var_count + o`).
    fn collect_edges(&mut self) -> Result<(), AlgoError> {
        let t = self.trace;
        let (nv, no) = (t.vars.len(), t.ops.len());
        let f = &t.flow;
        if f.op_inputs.len() != no || f.producers.len() != nv || f.op_outputs.len() != no {
            return Err(AlgoError::Stale {
                what: format!(
                    "{nv} variables and {no} operations, but the flow index has {} and {}",
                    f.producers.len(),
                    f.op_inputs.len()
                ),
            });
        }
        self.edges = Vec::with_capacity(t.edges.len() + no);
        for o in 0..no {
            let on = (nv + o) as u32;
            self.edges.extend(f.op_inputs[o].iter().map(|v| (v.0, on)));
            self.edges.extend(
                f.op_intermediates[o]
                    .iter()
                    .chain(&f.op_outputs[o])
                    .map(|v| (on, v.0)),
            );
            self.mids
                .extend(f.op_intermediates[o].iter().map(|v| (on, v.0)));
        }
        Ok(())
    }

    /// Ranks every node by its key once, so the heap compares integers. A stable sort keeps
    /// equal keys in index order, and runs in about linear time over records already in time
    /// order (a recorder appends them so).
    fn rank_keys(&mut self) {
        let t = self.trace;
        let nv = t.vars.len();
        let key = |x: usize| -> (&str, &str) {
            if x < nv {
                let v = &t.vars[x];
                (v.created_at.as_str(), v.full_node_id.as_str())
            } else {
                let o = &t.ops[x - nv];
                (o.created_at.as_str(), o.op_id.as_str())
            }
        };
        let n = self.indeg.len();
        self.by_key = (0..n as u32).collect();
        self.by_key
            .sort_by(|&a, &b| key(a as usize).cmp(&key(b as usize)));
        self.key_rank = vec![0u32; n];
        for (r, &x) in self.by_key.iter().enumerate() {
            self.key_rank[x as usize] = r as u32;
        }
    }

    /// Kahn's algorithm over raw node numbers; among ready nodes, the smallest (`created_at`,
    /// id) goes first.
    fn order(&mut self) -> Result<(), AlgoError> {
        let n = self.indeg.len();
        let indeg = &mut self.indeg;
        let mut heap: BinaryHeap<Reverse<u32>> = (0..n)
            .filter(|&x| indeg[x] == 0)
            .map(|x| Reverse(self.key_rank[x]))
            .collect();
        let mut order = Vec::with_capacity(n);
        while let Some(Reverse(r)) = heap.pop() {
            let x = self.by_key[r as usize];
            order.push(x);
            for &y in neighbours(&self.succ, x) {
                let d = &mut indeg[y as usize];
                *d -= 1;
                if *d == 0 {
                    heap.push(Reverse(self.key_rank[y as usize]));
                }
            }
        }
        if order.len() < n {
            let t = self.trace;
            let nv = t.vars.len();
            let stuck = (0..n).find(|&x| indeg[x] > 0).unwrap_or(0);
            let id = if stuck < nv {
                t.vars[stuck].full_node_id.clone()
            } else {
                t.ops[stuck - nv].op_id.clone()
            };
            return Err(AlgoError::Cycle { id });
        }
        self.succ = Adjacency::with_nodes(0);
        self.by_key = Vec::new();
        self.key_rank = Vec::new();
        self.raw = order;
        Ok(())
    }

    /// Numbers the nodes by their place in the order; which producer defined each variable.
    fn relabel(&mut self) {
        let t = self.trace;
        let nv = t.vars.len();
        let n = self.raw.len();
        self.pos = vec![0u32; n];
        for (p, &x) in self.raw.iter().enumerate() {
            self.pos[x as usize] = p as u32;
        }
        let pos = &self.pos;
        for e in self.edges.iter_mut().chain(self.mids.iter_mut()) {
            *e = (pos[e.0 as usize], pos[e.1 as usize]);
        }
        self.defined_by = vec![u32::MAX; n];
        for (v, op) in defining_producers(t).into_iter().enumerate() {
            if let Some(op) = op {
                self.defined_by[pos[v] as usize] = pos[nv + op.get()];
            }
        }
    }
}
