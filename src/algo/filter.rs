//! Operations and variables by session, category and time window.

use serde::{Deserialize, Serialize};

use crate::model::{OpIx, Trace, VarIx};

/// What to keep. Empty lists and `None` bounds keep everything.
///
/// Times are compared as strings, like everywhere in smartcomment files
/// (`YYYY-MM-DD HH:MM:SS.mmm`), so a prefix such as `2023-05-08` works as a bound.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Filter {
    /// Session ids to keep.
    #[serde(default)]
    pub sessions: Vec<String>,
    /// Categories to keep (exact match).
    #[serde(default)]
    pub categories: Vec<String>,
    /// Keep records created at or after this time.
    #[serde(default)]
    pub from: Option<String>,
    /// Keep records created before this time.
    #[serde(default)]
    pub until: Option<String>,
}

impl Filter {
    fn keeps(&self, session: &str, category: &str, created_at: &str) -> bool {
        (self.sessions.is_empty() || self.sessions.iter().any(|s| s == session))
            && (self.categories.is_empty() || self.categories.iter().any(|c| c == category))
            && self.from.as_deref().is_none_or(|f| created_at >= f)
            && self.until.as_deref().is_none_or(|u| created_at < u)
    }
}

/// Returns the operations that pass `filter`, sorted by (`created_at`, `op_id`).
///
/// # Complexity
/// O(n log n) for n operations.
pub fn filter_ops(trace: &Trace, filter: &Filter) -> Vec<OpIx> {
    let mut out: Vec<OpIx> = (0..trace.ops.len() as u32)
        .map(OpIx)
        .filter(|&o| {
            let r = trace.op(o);
            filter.keeps(&r.session_id, &r.category, &r.created_at)
        })
        .collect();
    out.sort_by(|&a, &b| {
        let (x, y) = (trace.op(a), trace.op(b));
        (&x.created_at, &x.op_id).cmp(&(&y.created_at, &y.op_id))
    });
    out
}

/// Returns the variables that pass `filter`, sorted by (`created_at`, `full_node_id`).
///
/// # Complexity
/// O(n log n) for n variables.
pub fn filter_vars(trace: &Trace, filter: &Filter) -> Vec<VarIx> {
    let mut out: Vec<VarIx> = (0..trace.vars.len() as u32)
        .map(VarIx)
        .filter(|&v| {
            let r = trace.var(v);
            filter.keeps(&r.session_id, &r.category, &r.created_at)
        })
        .collect();
    out.sort_by(|&a, &b| {
        let (x, y) = (trace.var(a), trace.var(b));
        (&x.created_at, &x.full_node_id).cmp(&(&y.created_at, &y.full_node_id))
    });
    out
}
