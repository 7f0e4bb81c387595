//! Reachability over the graph index: the walk behind slices, ancestors and descendants.

use super::{neighbours, GraphIndex, NodeRef};

impl GraphIndex {
    /// Positions reachable from `seeds` (seeds included), in topological order.
    ///
    /// A variable's defining producer is the op that wrote it first (see
    /// [`super::defining_producers`]); other producers *re-emit* the existing version (a
    /// retrieval links the query to the units it found; two answers with the same text share
    /// one content-hash node).
    ///
    /// Backward, a variable leads to its defining producer only; an op that re-emits a reached
    /// variable joins afterwards when all its inputs are reached (the retrieval of the same
    /// question does, another question's retrieval does not), and every reached op brings its
    /// intermediates (its outputs were computed through them). Forward, a variable reached
    /// through a re-emitting op is included but not followed (its value did not change).
    ///
    /// Small slices are walked depth-first from the seeds. Once a walk has reached more than
    /// 1/32 of the graph it restarts as one sweep over the positions (downwards for a backward
    /// slice, upwards for a forward one): since positions are topological, every node is final
    /// when the sweep meets it, and the sweep reads memory sequentially.
    ///
    /// # Complexity
    /// O(V' + E' + V' log V') for V' nodes and E' edges reached when V' ≤ V/32, else O(V + E);
    /// O(V) memory for the states.
    pub(crate) fn reach(&self, seeds: &[NodeRef], dir: Direction) -> Vec<u32> {
        self.reach_with_budget(seeds, dir, (self.node_count() / 32).max(1024))
    }

    /// [`GraphIndex::reach`], switching to the sweep after `budget` reached nodes.
    pub(super) fn reach_with_budget(
        &self,
        seeds: &[NodeRef],
        dir: Direction,
        budget: usize,
    ) -> Vec<u32> {
        let n = self.node_count();
        let seeds: Vec<u32> = seeds
            .iter()
            .map(|&s| self.node(s))
            .filter(|&s| (s as usize) < n)
            .collect();
        let mut w = Walk::new(n, true);
        let mut pending: Vec<u32> = Vec::new();
        for &s in &seeds {
            w.visit(s, true);
        }
        let mut sweep = false;
        while let Some(x) = w.stack.pop() {
            if w.reached.len() > budget {
                sweep = true;
                break;
            }
            self.expand(x, dir, &mut w, &mut pending);
        }
        if sweep {
            w = Walk::new(n, false);
            pending.clear();
            for &s in &seeds {
                w.visit(s, true);
            }
            let follow = |x: u32, w: &mut Walk, pending: &mut Vec<u32>| {
                if w.state[x as usize] == 2 {
                    self.expand(x, dir, w, pending);
                }
            };
            match dir {
                Direction::Backward => {
                    let top = seeds.iter().copied().max().unwrap_or(0);
                    for x in (0..=top).rev() {
                        follow(x, &mut w, &mut pending);
                    }
                }
                Direction::Forward => {
                    let low = seeds.iter().copied().min().unwrap_or(0);
                    for x in low..n as u32 {
                        follow(x, &mut w, &mut pending);
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
            w.reached.sort_unstable();
            w.reached
        } else {
            (0..n as u32).filter(|&x| w.state[x as usize] > 0).collect()
        }
    }

    /// Follows the edges of `x` one step in direction `dir` (see [`GraphIndex::reach`]).
    fn expand(&self, x: u32, dir: Direction, w: &mut Walk, pending: &mut Vec<u32>) {
        match (dir, self.is_var(x)) {
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
                let defined_by = self.defined_by.get(x as usize).copied();
                let writer = defined_by
                    .filter(|d| producers.contains(d))
                    .or_else(|| producers.first().copied());
                for &p in producers {
                    if Some(p) == writer {
                        w.visit(p, true);
                    } else {
                        pending.push(p);
                    }
                }
            }
            (Direction::Forward, true) => {
                for &o in neighbours(&self.successors, x) {
                    w.visit(o, true);
                }
            }
            (Direction::Forward, false) => {
                if (x as usize) < self.successors.node_count() {
                    let targets = self.successors.neighbors_slice(x);
                    for (&v, &defines) in targets.iter().zip(self.successors.edges_slice(x)) {
                        w.visit(v, defines);
                    }
                }
            }
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

/// The state of one reachability walk: 0 = not reached, 1 = reached, 2 = reached and to be
/// followed (pushed on the stack in a depth-first walk; met later by a sweep).
struct Walk {
    state: Vec<u8>,
    reached: Vec<u32>,
    stack: Vec<u32>,
    use_stack: bool,
}

impl Walk {
    fn new(n: usize, use_stack: bool) -> Walk {
        Walk {
            state: vec![0; n],
            reached: Vec::new(),
            stack: Vec::new(),
            use_stack,
        }
    }

    fn visit(&mut self, x: u32, follow: bool) {
        let s = &mut self.state[x as usize];
        if *s == 0 {
            self.reached.push(x);
            *s = 1;
        }
        if follow && *s == 1 {
            *s = 2;
            if self.use_stack {
                self.stack.push(x);
            }
        }
    }
}
