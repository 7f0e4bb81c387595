//! The frontier of graphtrace: variable nodes waiting to be explored, earliest-created first,
//! capped, with the op that discovered each, plus finished nodes and the history of moves.

use std::fmt::Write as _;

use crate::attribution::agent::fence;

use crate::model::{Trace, VarIx};

/// Queued nodes at most.
pub const FRONTIER_CAP: usize = 16;

/// One queued node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Queued {
    pub var: VarIx,
    /// The op whose exploration added it (`None` for seeds).
    pub discovered_by: Option<String>,
}

/// The frontier, the finished nodes and the move history.
#[derive(Debug, Clone, Default)]
pub struct Frontier {
    queue: Vec<Queued>,
    /// (node id, outcome).
    pub finished: Vec<(String, String)>,
    /// One line per move.
    pub history: Vec<String>,
    pub initialized: bool,
}

impl Frontier {
    /// The queued nodes, earliest first.
    pub fn queue(&self) -> &[Queued] {
        &self.queue
    }

    /// The earliest queued node.
    pub fn earliest(&self) -> Option<&Queued> {
        self.queue.first()
    }

    /// Adds `var`; returns why not when it is already queued or finished, or the cap is reached.
    ///
    /// # Errors
    /// A message for the model.
    ///
    /// # Complexity
    /// O(cap) per call.
    pub fn add(&mut self, t: &Trace, var: VarIx, by: Option<String>) -> Result<(), String> {
        let id = &t.var(var).full_node_id;
        if self.queue.iter().any(|q| q.var == var) {
            return Err(format!("{id} is already in the frontier"));
        }
        if self.finished.iter().any(|(f, _)| f == id) {
            return Err(format!("{id} is already finished"));
        }
        if self.queue.len() >= FRONTIER_CAP {
            return Err(format!(
                "the frontier is full ({FRONTIER_CAP} nodes): delete or finish nodes before adding {id}"
            ));
        }
        let key = |v: VarIx| (t.var(v).created_at.clone(), t.var(v).full_node_id.clone());
        let pos = self.queue.partition_point(|q| key(q.var) <= key(var));
        self.queue.insert(
            pos,
            Queued {
                var,
                discovered_by: by,
            },
        );
        Ok(())
    }

    /// Removes `var` from the queue; false when it was not queued.
    pub fn remove(&mut self, var: VarIx) -> bool {
        let before = self.queue.len();
        self.queue.retain(|q| q.var != var);
        before != self.queue.len()
    }

    /// Finishes `var` with `outcome` (removing it from the queue).
    pub fn finish(&mut self, t: &Trace, var: VarIx, outcome: &str) {
        self.remove(var);
        self.finished
            .push((t.var(var).full_node_id.clone(), outcome.to_owned()));
    }

    /// The state shown to the model before each step, with the allowed moves.
    pub fn status(&self, t: &Trace) -> String {
        let mut nodes = String::new();
        for (i, q) in self.queue.iter().enumerate() {
            let r = t.var(q.var);
            let _ = writeln!(
                nodes,
                "{}{} ({}, {}){}",
                if i == 0 { "next → " } else { "" },
                r.full_node_id,
                r.category,
                r.created_at,
                q.discovered_by
                    .as_ref()
                    .map(|o| format!(" from {o}"))
                    .unwrap_or_default()
            );
        }
        let mut s = format!("[frontier: {} of {FRONTIER_CAP} queued", self.queue.len());
        if !nodes.is_empty() {
            s.push('\n');
            s.push_str(&fence(nodes.trim_end()));
        }
        let _ = write!(s, "\nfinished: {}", self.finished.len());
        let moves = if !self.initialized {
            "initialize"
        } else if self.queue.is_empty() {
            "edit_frontier (add), view_value, view_history, finish_exploration"
        } else {
            "explore_frontier, view_value, edit_frontier, finish_node, view_history, finish_exploration"
        };
        let _ = write!(s, "\nallowed moves: {moves}]");
        s
    }
}
