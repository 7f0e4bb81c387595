//! The bipartite index over a trace's records (formats.md §1): for each operation, its
//! subgraph is its edges plus their endpoints; endpoints with in-degree 0 inside it are its
//! inputs, the rest are produced by it (out-degree 0 = outputs, else intermediates).

use crate::util::hash::{IdIndex, IdMap};

use super::GraphError;
use super::{OpIx, Trace, VarIx};

/// What a variable is to one operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Input,
    Intermediate,
    Output,
}

/// The bipartite graph as adjacency lists, indexed by [`VarIx`] / [`OpIx`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Flow {
    /// Variables' `full_node_id`s, numbered by [`VarIx`].
    var_ix: IdIndex,
    /// Operations' `op_id`s, numbered by [`OpIx`].
    op_ix: IdIndex,
    /// Per op: its inputs (in-degree 0 inside its subgraph), in edge order.
    pub op_inputs: Vec<Vec<VarIx>>,
    /// Per op: produced variables with out-degree 0 inside its subgraph.
    pub op_outputs: Vec<Vec<VarIx>>,
    /// Per op: produced variables that also feed another edge of the same op.
    pub op_intermediates: Vec<Vec<VarIx>>,
    /// Per variable: ops that produced it (usually one).
    pub producers: Vec<Vec<OpIx>>,
    /// Per variable: ops that read it as an input.
    pub consumers: Vec<Vec<OpIx>>,
    /// Per edge: (source, target, op).
    pub edge_ends: Vec<(VarIx, VarIx, OpIx)>,
    /// Variable versions grouped by identity (`full_name`), ascending version.
    pub versions: Versions,
}

/// Variable versions grouped by identity (`full_name`), identities in file order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Versions {
    names: IdIndex,
    lists: Vec<Vec<VarIx>>,
}

impl Versions {
    /// The versions of the identity `full_name`, ascending.
    pub fn get(&self, full_name: &str) -> Option<&Vec<VarIx>> {
        self.lists.get(self.names.get(full_name)? as usize)
    }

    /// Each identity with its versions.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Vec<VarIx>)> + '_ {
        self.names.iter().map(|(_, name)| name).zip(&self.lists)
    }

    /// Each identity's versions.
    pub fn values(&self) -> impl Iterator<Item = &Vec<VarIx>> + '_ {
        self.lists.iter()
    }

    fn push(&mut self, full_name: &str, v: VarIx) {
        match self.names.insert(full_name) {
            (n, false) => {
                if let Some(list) = self.lists.get_mut(n as usize) {
                    list.push(v);
                }
            }
            (_, true) => self.lists.push(vec![v]),
        }
    }
}

impl Flow {
    /// The variable with this `full_node_id`.
    pub fn var_ix(&self, id: &str) -> Option<VarIx> {
        self.var_ix.get(id).map(VarIx)
    }

    /// The operation with this `op_id`.
    pub fn op_ix(&self, id: &str) -> Option<OpIx> {
        self.op_ix.get(id).map(OpIx)
    }

    /// Every variable that `op` touches, with its role, inputs first.
    pub fn op_vars(&self, op: OpIx) -> impl Iterator<Item = (VarIx, Role)> + '_ {
        let i = op.get();
        let ins = self.op_inputs[i].iter().map(|&v| (v, Role::Input));
        let mids = self.op_intermediates[i]
            .iter()
            .map(|&v| (v, Role::Intermediate));
        let outs = self.op_outputs[i].iter().map(|&v| (v, Role::Output));
        ins.chain(mids).chain(outs)
    }

    /// Variables produced by `op` (intermediates and outputs).
    pub fn op_produced(&self, op: OpIx) -> impl Iterator<Item = VarIx> + '_ {
        let i = op.get();
        self.op_intermediates[i]
            .iter()
            .chain(&self.op_outputs[i])
            .copied()
    }

    /// Builds the index and checks ids, references and acyclicity.
    ///
    /// # Errors
    /// [`GraphError::DuplicateId`], [`GraphError::Dangling`] or [`GraphError::Cycle`].
    pub fn build(t: &Trace) -> Result<Flow, GraphError> {
        let mut s = FlowSteps::default();
        while !s.step(t, usize::MAX)? {}
        s.finish(t)
    }
}

/// [`Flow::build`] in bounded steps, for a caller that must stay responsive: about `budget`
/// records a step (variables, operations, edges, operations again, variables again), then the
/// acyclicity check in one go ([`FlowSteps::finish`]).
#[derive(Default)]
pub struct FlowSteps {
    f: Flow,
    /// 0 variables' ids, 1 operations' ids, 2 edges, 3 operations' subgraphs, 4 versions, 5 done.
    pass: usize,
    /// The next record of the pass.
    at: usize,
    /// Per op: its edges, in record order (pass 3).
    op_edges: Vec<Vec<u32>>,
    /// Scratch: an op's variables' (in, out) degree inside its subgraph (pass 3).
    degree: IdMap<VarIx, (u32, u32)>,
}

impl FlowSteps {
    /// Indexes up to `budget` records (at least one); true when every pass is done.
    ///
    /// # Errors
    /// As [`Flow::build`], except for cycles ([`FlowSteps::finish`]).
    pub fn step(&mut self, t: &Trace, budget: usize) -> Result<bool, GraphError> {
        let (nv, no, ne) = (t.vars.len(), t.ops.len(), t.edges.len());
        let len = [nv, no, ne, no, nv].get(self.pass).copied();
        let Some(len) = len else { return Ok(true) };
        if self.at == 0 {
            self.start_pass(t);
        }
        let end = len.min(self.at.saturating_add(budget.max(1)));
        let f = &mut self.f;
        for i in self.at..end {
            match self.pass {
                0 => {
                    let v = &t.vars[i];
                    if let (prev, false) = f.var_ix.insert(&v.full_node_id) {
                        return Err(GraphError::DuplicateId {
                            path: format!("data.nodes[{i}].full_node_id"),
                            id: v.full_node_id.clone(),
                            first: format!("data.nodes[{prev}]"),
                        });
                    }
                }
                1 => {
                    let o = &t.ops[i];
                    if let (prev, false) = f.op_ix.insert(&o.op_id) {
                        return Err(GraphError::DuplicateId {
                            path: format!("data.operations[{i}].op_id"),
                            id: o.op_id.clone(),
                            first: format!("data.operations[{prev}]"),
                        });
                    }
                }
                2 => {
                    let prev = i.checked_sub(1).and_then(|p| {
                        let ends = f.edge_ends.get(p)?;
                        Some((t.edges.get(p)?, *ends))
                    });
                    let end = edge_ends(f, i, &t.edges[i], prev)?;
                    f.edge_ends.push(end);
                }
                3 => op_subgraph(f, &self.op_edges[i], OpIx(i as u32), &mut self.degree),
                _ => {
                    f.versions.push(&t.vars[i].full_name, VarIx(i as u32));
                }
            }
        }
        self.at = end;
        if self.at >= len {
            self.pass += 1;
            self.at = 0;
        }
        Ok(self.pass > 4)
    }

    /// What a pass needs before its first record.
    fn start_pass(&mut self, t: &Trace) {
        let (nv, no) = (t.vars.len(), t.ops.len());
        let f = &mut self.f;
        match self.pass {
            0 => {
                f.var_ix = IdIndex::with_capacity(nv);
                f.versions = Versions {
                    names: IdIndex::with_capacity(nv),
                    lists: Vec::with_capacity(nv),
                };
            }
            1 => f.op_ix = IdIndex::with_capacity(no),
            2 => {
                f.op_inputs = vec![Vec::new(); no];
                f.op_outputs = vec![Vec::new(); no];
                f.op_intermediates = vec![Vec::new(); no];
                f.producers = vec![Vec::new(); nv];
                f.consumers = vec![Vec::new(); nv];
                f.edge_ends.reserve(t.edges.len());
            }
            3 => {
                self.op_edges = vec![Vec::new(); no];
                for (i, &(_, _, o)) in f.edge_ends.iter().enumerate() {
                    self.op_edges[o.get()].push(i as u32);
                }
            }
            _ => {}
        }
    }

    /// The index, once every pass is done (runs what is left), after the acyclicity check.
    ///
    /// # Errors
    /// As [`Flow::build`].
    pub fn finish(mut self, t: &Trace) -> Result<Flow, GraphError> {
        while !self.step(t, usize::MAX)? {}
        let mut f = self.f;
        for list in &mut f.versions.lists {
            list.sort_by_key(|&ix| t.vars[ix.get()].version);
        }
        check_acyclic(t, &f)?;
        Ok(f)
    }
}

/// Edge `i`'s (source, target, op), resolved by id. An id the edge before (`prev`, with its
/// ends) also names is taken from it without a lookup: an op's edges come together and chain.
fn edge_ends(
    f: &Flow,
    i: usize,
    e: &super::EdgeRecord,
    prev: Option<(&super::EdgeRecord, (VarIx, VarIx, OpIx))>,
) -> Result<(VarIx, VarIx, OpIx), GraphError> {
    let resolve_var = |field: &str, id: &str| {
        let known = prev.and_then(|(p, (ps, pd, _))| {
            if p.source_full_node_id == id {
                Some(ps)
            } else {
                (p.target_full_node_id == id).then_some(pd)
            }
        });
        known
            .or_else(|| f.var_ix(id))
            .ok_or_else(|| GraphError::Dangling {
                path: format!("data.edges[{i}].{field}"),
                id: id.to_owned(),
                kind: "node".into(),
            })
    };
    let s = resolve_var("source_full_node_id", &e.source_full_node_id)?;
    let d = resolve_var("target_full_node_id", &e.target_full_node_id)?;
    let known = prev.and_then(|(p, (_, _, po))| (p.op_id == e.op_id).then_some(po));
    let o = known
        .or_else(|| f.op_ix(&e.op_id))
        .ok_or_else(|| GraphError::Dangling {
            path: format!("data.edges[{i}].op_id"),
            id: e.op_id.clone(),
            kind: "operation".into(),
        })?;
    Ok((s, d, o))
}

/// Op `op`'s inputs, intermediates and outputs from the in/out degree of each endpoint of its
/// `edges` inside its own subgraph; each variable learns its producers and consumers. `degree`
/// is scratch space.
fn op_subgraph(f: &mut Flow, edges: &[u32], op: OpIx, degree: &mut IdMap<VarIx, (u32, u32)>) {
    degree.clear();
    let mut order: Vec<VarIx> = Vec::new();
    for &ei in edges {
        let (s, d, _) = f.edge_ends[ei as usize];
        for (v, is_target) in [(s, false), (d, true)] {
            let slot = degree.entry(v).or_insert_with(|| {
                order.push(v);
                (0, 0)
            });
            if is_target {
                slot.0 += 1;
            } else {
                slot.1 += 1;
            }
        }
    }
    let o = op.get();
    for v in order {
        let (inn, out) = degree.get(&v).copied().unwrap_or_default();
        if inn == 0 {
            f.op_inputs[o].push(v);
            f.consumers[v.get()].push(op);
        } else {
            if out == 0 {
                f.op_outputs[o].push(v);
            } else {
                f.op_intermediates[o].push(v);
            }
            f.producers[v.get()].push(op);
        }
    }
}

/// Kahn's algorithm over the bipartite graph; reports one variable on a cycle.
fn check_acyclic(t: &Trace, f: &Flow) -> Result<(), GraphError> {
    let nv = t.vars.len();
    let no = t.ops.len();
    // Nodes 0..nv are variables, nv..nv+no operations.
    let mut indeg = vec![0u32; nv + no];
    for o in 0..no {
        indeg[nv + o] = f.op_inputs[o].len() as u32;
    }
    for (v, p) in f.producers.iter().enumerate() {
        indeg[v] = p.len() as u32;
    }
    let mut stack: Vec<usize> = (0..nv + no).filter(|&n| indeg[n] == 0).collect();
    let mut seen = 0usize;
    while let Some(n) = stack.pop() {
        seen += 1;
        let succ: Vec<usize> = if n < nv {
            f.consumers[n].iter().map(|o| nv + o.get()).collect()
        } else {
            let o = OpIx((n - nv) as u32);
            f.op_produced(o).map(VarIx::get).collect()
        };
        for s in succ {
            indeg[s] -= 1;
            if indeg[s] == 0 {
                stack.push(s);
            }
        }
    }
    if seen == nv + no {
        return Ok(());
    }
    let on_cycle = (0..nv).find(|&v| indeg[v] > 0);
    let (path, id) = if let Some(v) = on_cycle {
        (format!("data.nodes[{v}]"), t.vars[v].full_node_id.clone())
    } else {
        let o = (0..no).find(|&o| indeg[nv + o] > 0).unwrap_or(0);
        let id = t.ops.get(o).map(|r| r.op_id.clone()).unwrap_or_default();
        (format!("data.operations[{o}]"), id)
    };
    Err(GraphError::Cycle { path, id })
}
