//! Layout of the bipartite execution graph as a timeline with **lifelines**.
//!
//! - x is time: operations take one column each in a topological order that follows
//!   `(created_at, op_id)` (Kahn's algorithm with a priority queue), so edges always point right
//!   and the picture reads left → right as the run went. A produced variable sits one column
//!   right of its producer; a source variable one column left of its first reader; a variable
//!   with neither (in the shown subset) at its place in time.
//! - y is lanes. Every variable identity with more than one version shown (a memory unit that
//!   was updated) gets one lane for all its versions, in a band on top: an update or deletion is
//!   a second dot on the same line. Lifelines that do not overlap in time share a lane
//!   (interval packing). Everything else stacks per column below that band.
//!
//! Why not a Sugiyama layering (`rust-sugiyama`): its crossing minimisation is super-linear and
//! has no notion of lanes; this layout is O(n log n) and keeps versions on one line.

mod view;

pub use view::{
    backward_reach, expand, failure_view, forward_reach, information_path, NodeRef, NodeSet,
};

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};

use crate::model::{OpIx, Trace, VarIx};

/// What the x axis means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum XAxis {
    /// Longest-path rank: an op one column after the latest op it depends on; independent ops
    /// share a column, stacked by time. Compact; reads as the pipeline's stages.
    #[default]
    Rank,
    /// One column per op in time order: the run as it happened. Wide.
    Time,
}

/// Spacing of the drawing, in world units (pixels at zoom 1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LayoutOptions {
    pub x_axis: XAxis,
    /// Horizontal distance between columns.
    pub column_gap: f32,
    /// Vertical distance between lanes.
    pub lane_gap: f32,
}

impl Default for LayoutOptions {
    fn default() -> Self {
        LayoutOptions {
            x_axis: XAxis::Rank,
            column_gap: 130.0,
            lane_gap: 36.0,
        }
    }
}

/// One placed node.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LaidNode {
    pub node: NodeRef,
    pub column: u32,
    pub lane: u32,
    pub x: f32,
    pub y: f32,
}

/// The versions of one identity on one lane.
#[derive(Debug, Clone, PartialEq)]
pub struct Lifeline {
    /// The identity (`full_name`).
    pub name: String,
    pub lane: u32,
    /// Indices into [`Layout::nodes`], ascending version.
    pub nodes: Vec<u32>,
}

/// A drawn edge between two placed nodes (indices into [`Layout::nodes`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaidEdge {
    pub from: u32,
    pub to: u32,
}

/// The placed subset: nodes, edges, lifelines and the drawing's size.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Layout {
    pub nodes: Vec<LaidNode>,
    pub edges: Vec<LaidEdge>,
    pub lifelines: Vec<Lifeline>,
    /// Lanes `0..lifeline_lanes` hold lifelines; the rest hold single nodes.
    pub lifeline_lanes: u32,
    pub columns: u32,
    pub lanes: u32,
    pub width: f32,
    pub height: f32,
    slot: HashMap<NodeRef, u32>,
}

impl Layout {
    /// Each lifeline's first and last placed version (the line drawn between them).
    pub fn lifeline_ends(&self) -> impl Iterator<Item = (&LaidNode, &LaidNode)> + '_ {
        self.lifelines.iter().filter_map(|line| {
            let end = |i: Option<&u32>| i.and_then(|&i| self.nodes.get(i as usize));
            Some((end(line.nodes.first())?, end(line.nodes.last())?))
        })
    }

    /// Where `node` was placed, if it is in the layout.
    pub fn index_of(&self, node: NodeRef) -> Option<u32> {
        self.slot.get(&node).copied()
    }

    /// The placed node `node`, if it is in the layout.
    pub fn get(&self, node: NodeRef) -> Option<&LaidNode> {
        self.index_of(node).and_then(|i| self.nodes.get(i as usize))
    }
}

/// Lays out the nodes of `trace` that are in `subset`.
///
/// # Complexity
/// O(n log n + e) for n shown nodes and e shown edges.
///
/// # Example
/// ```
/// use memtrace::layout::{layout, LayoutOptions, NodeSet};
/// let trace = memtrace::Trace::default();
/// let l = layout(&trace, &NodeSet::all(&trace), LayoutOptions::default());
/// assert!(l.nodes.is_empty());
/// ```
pub fn layout(trace: &Trace, subset: &NodeSet, opts: LayoutOptions) -> Layout {
    let f = &trace.flow;
    let shown_ops: Vec<OpIx> = subset.ops().filter(|o| o.get() < trace.ops.len()).collect();
    let vars: Vec<VarIx> = subset
        .vars()
        .filter(|v| v.get() < trace.vars.len())
        .collect();

    // 1. Op columns: topological order over op → var → op, ties by (created_at, op_id).
    let order = op_order(trace, subset, &shown_ops);
    let mut op_col: HashMap<OpIx, u32> = HashMap::with_capacity(order.len());
    for (i, &o) in order.iter().enumerate() {
        let position = match opts.x_axis {
            XAxis::Time => i as u32,
            XAxis::Rank => f.op_inputs[o.get()]
                .iter()
                .flat_map(|v| &f.producers[v.get()])
                .filter_map(|u| op_col.get(u))
                .map(|&c| c.div_ceil(2))
                .max()
                .unwrap_or(0),
        };
        op_col.insert(o, 2 * position + 1);
    }
    // Ops by time, to place variables that touch no shown op.
    let mut by_time: Vec<(&str, u32)> = order
        .iter()
        .map(|&o| (trace.op(o).created_at.as_str(), op_col[&o]))
        .collect();
    by_time.sort_unstable();

    // 2. Variable columns.
    let mut var_col: HashMap<VarIx, u32> = HashMap::with_capacity(vars.len());
    for &v in &vars {
        let produced = f.producers[v.get()]
            .iter()
            .filter_map(|o| op_col.get(o))
            .max()
            .map(|c| c + 1);
        let read = || {
            f.consumers[v.get()]
                .iter()
                .filter_map(|o| op_col.get(o))
                .min()
                .map(|c| c - 1)
        };
        let at_time = || {
            let t = trace.var(v).created_at.as_str();
            let i = by_time.partition_point(|&(ot, _)| ot <= t);
            by_time
                .get(i)
                .map_or(2 * order.len() as u32, |&(_, c)| c - 1)
        };
        var_col.insert(v, produced.or_else(read).unwrap_or_else(at_time));
    }
    // Versions of one identity must read left → right even without mutation edges.
    let mut identities: BTreeMap<&str, Vec<VarIx>> = BTreeMap::new();
    for &v in &vars {
        identities
            .entry(trace.var(v).full_name.as_str())
            .or_default()
            .push(v);
    }
    for list in identities.values_mut() {
        list.sort_by_key(|&v| trace.var(v).version);
        let mut last = 0u32;
        for (k, &v) in list.iter().enumerate() {
            let c = var_col.entry(v).or_insert(0);
            if k > 0 && *c <= last {
                *c = last + 1;
            }
            last = *c;
        }
    }

    // 3. Lifeline lanes: interval packing, earliest start first, reusing the lane that freed first.
    let mut lines: Vec<(u32, u32, &str, &Vec<VarIx>)> = identities
        .iter()
        .filter(|(_, l)| l.len() > 1)
        .map(|(name, l)| {
            let cols = l.iter().map(|v| var_col[v]);
            let start = cols.clone().min().unwrap_or(0);
            (start, cols.max().unwrap_or(0), *name, l)
        })
        .collect();
    lines.sort_unstable_by(|a, b| (a.0, a.1, a.2).cmp(&(b.0, b.1, b.2)));
    let mut free: BinaryHeap<Reverse<(u32, u32)>> = BinaryHeap::new(); // (end column, lane)
    let mut lane_count = 0u32;
    let mut var_lane: HashMap<VarIx, u32> = HashMap::new();
    let mut lifelines = Vec::with_capacity(lines.len());
    for (start, end, name, list) in lines {
        let lane = match free.peek() {
            Some(&Reverse((e, lane))) if e + 1 < start => {
                free.pop();
                lane
            }
            _ => {
                lane_count += 1;
                lane_count - 1
            }
        };
        free.push(Reverse((end, lane)));
        for &v in list {
            var_lane.insert(v, lane);
        }
        lifelines.push((name.to_owned(), lane, list.clone()));
    }
    let lifeline_lanes = lane_count;
    let band = if lifeline_lanes > 0 {
        lifeline_lanes + 1
    } else {
        0
    };

    // 4. Everything else stacks per column, columns left to right. Within a column, nodes
    //    follow the mean lane of their already placed inputs (barycenter: fewer crossings),
    //    then time; at equal times ops, then produced variables, then sources.
    let mut column_items: BTreeMap<u32, Vec<(&str, u8, &str, NodeRef)>> = BTreeMap::new();
    for &o in &order {
        let r = trace.op(o);
        column_items.entry(op_col[&o]).or_default().push((
            r.created_at.as_str(),
            0,
            r.op_id.as_str(),
            NodeRef::Op(o),
        ));
    }
    for &v in &vars {
        if var_lane.contains_key(&v) {
            continue;
        }
        let kind = if f.producers[v.get()].iter().any(|o| op_col.contains_key(o)) {
            1
        } else {
            2
        };
        let r = trace.var(v);
        column_items.entry(var_col[&v]).or_default().push((
            r.created_at.as_str(),
            kind,
            r.full_node_id.as_str(),
            NodeRef::Var(v),
        ));
    }
    let mut nodes = Vec::with_capacity(shown_ops.len() + vars.len());
    let mut slot = HashMap::with_capacity(shown_ops.len() + vars.len());
    let mut max_lane = lifeline_lanes.saturating_sub(1);
    let mut max_col = 0u32;
    let mut place = |node: NodeRef, column: u32, lane: u32, nodes: &mut Vec<LaidNode>| {
        slot.insert(node, nodes.len() as u32);
        max_lane = max_lane.max(lane);
        max_col = max_col.max(column);
        nodes.push(LaidNode {
            node,
            column,
            lane,
            x: column as f32 * opts.column_gap,
            y: lane as f32 * opts.lane_gap,
        });
    };
    let mut lane_of: HashMap<NodeRef, u32> = var_lane
        .iter()
        .map(|(&v, &lane)| (NodeRef::Var(v), lane))
        .collect();
    for (column, items) in column_items {
        let mut keyed: Vec<_> = items
            .into_iter()
            .map(|item| (barycenter(f, &lane_of, item.3), item))
            .collect();
        keyed.sort_unstable();
        for (k, (_, (_, _, _, node))) in keyed.into_iter().enumerate() {
            let lane = band + k as u32;
            lane_of.insert(node, lane);
            place(node, column, lane, &mut nodes);
        }
    }
    let mut laid_lines = Vec::with_capacity(lifelines.len());
    for (name, lane, list) in lifelines {
        let mut idx = Vec::with_capacity(list.len());
        for v in list {
            idx.push(nodes.len() as u32);
            place(NodeRef::Var(v), var_col[&v], lane, &mut nodes);
        }
        laid_lines.push(Lifeline {
            name,
            lane,
            nodes: idx,
        });
    }

    // 5. Edges: input → op → produced, both ends shown.
    let mut edges = Vec::new();
    for &o in &order {
        let Some(&oi) = slot.get(&NodeRef::Op(o)) else {
            continue;
        };
        for &v in &f.op_inputs[o.get()] {
            if let Some(&vi) = slot.get(&NodeRef::Var(v)) {
                edges.push(LaidEdge { from: vi, to: oi });
            }
        }
        for v in f.op_produced(o) {
            if let Some(&vi) = slot.get(&NodeRef::Var(v)) {
                edges.push(LaidEdge { from: oi, to: vi });
            }
        }
    }
    let (columns, lane_total) = if nodes.is_empty() {
        (0, 0)
    } else {
        (max_col + 1, max_lane + 1)
    };
    Layout {
        nodes,
        edges,
        lifelines: laid_lines,
        lifeline_lanes,
        columns,
        lanes: lane_total,
        width: columns.saturating_sub(1) as f32 * opts.column_gap,
        height: lane_total.saturating_sub(1) as f32 * opts.lane_gap,
        slot,
    }
}

/// Mean lane of the placed nodes feeding `node` (×1024, rounded), or `u64::MAX` for none, so
/// it sorts as an integer.
fn barycenter(f: &crate::model::Flow, lane_of: &HashMap<NodeRef, u32>, node: NodeRef) -> u64 {
    let preds: Vec<NodeRef> = match node {
        NodeRef::Op(o) => f.op_inputs[o.get()]
            .iter()
            .map(|&v| NodeRef::Var(v))
            .collect(),
        NodeRef::Var(v) => f.producers[v.get()]
            .iter()
            .map(|&o| NodeRef::Op(o))
            .collect(),
    };
    let lanes: Vec<u64> = preds
        .iter()
        .filter_map(|p| lane_of.get(p))
        .map(|&l| u64::from(l))
        .collect();
    if lanes.is_empty() {
        return u64::MAX;
    }
    lanes.iter().sum::<u64>() * 1024 / lanes.len() as u64
}

/// Ops in topological order (an op after every op that produced one of its inputs), ties
/// broken by `(created_at, op_id)`.
///
/// # Complexity
/// O(n log n + e).
fn op_order(trace: &Trace, subset: &NodeSet, ops: &[OpIx]) -> Vec<OpIx> {
    let f = &trace.flow;
    let shown = |o: OpIx| subset.contains(NodeRef::Op(o));
    // Distinct upstream ops of each shown op (through any variable, shown or not).
    let mut indeg: HashMap<OpIx, u32> = HashMap::with_capacity(ops.len());
    let mut downstream: HashMap<OpIx, Vec<OpIx>> = HashMap::new();
    for &o in ops {
        let mut ups: Vec<OpIx> = f.op_inputs[o.get()]
            .iter()
            .flat_map(|v| f.producers[v.get()].iter().copied())
            .filter(|&u| u != o && shown(u))
            .collect();
        ups.sort_unstable();
        ups.dedup();
        indeg.insert(o, ups.len() as u32);
        for u in ups {
            downstream.entry(u).or_default().push(o);
        }
    }
    let key = |o: OpIx| {
        let r = trace.op(o);
        Reverse((r.created_at.as_str(), r.op_id.as_str(), o))
    };
    let mut ready: BinaryHeap<_> = ops
        .iter()
        .filter(|o| indeg.get(o) == Some(&0))
        .map(|&o| key(o))
        .collect();
    let mut order = Vec::with_capacity(ops.len());
    while let Some(Reverse((_, _, o))) = ready.pop() {
        order.push(o);
        for &d in downstream.get(&o).into_iter().flatten() {
            if let Some(n) = indeg.get_mut(&d) {
                *n -= 1;
                if *n == 0 {
                    ready.push(key(d));
                }
            }
        }
    }
    if order.len() < ops.len() {
        // Unreachable for a validated trace (acyclic); keep every op anyway, by time.
        let mut rest: Vec<OpIx> = ops.iter().copied().filter(|o| !order.contains(o)).collect();
        rest.sort_by_key(|&o| key(o).0);
        order.extend(rest);
    }
    order
}

#[cfg(test)]
pub(crate) mod testing;

#[cfg(test)]
mod tests;
