//! The flat log (the obstrace view): operations sorted by (`created_at`, `op_id`), each a text
//! block with its name, category, time, comment, metadata and its input, intermediate and output
//! values, with no node ids and no edges.

use std::fmt::Write as _;

use super::{paginate, Page};
use crate::algo::filter::{filter_ops, Filter};
use crate::algo::text::var_text;
use crate::algo::AlgoError;
use crate::model::{OpIx, Trace};

/// One text block per operation, in (`created_at`, `op_id`) order.
///
/// # Errors
/// [`AlgoError::Stale`] when the trace's index does not cover its ops.
///
/// # Complexity
/// O(n log n + total value length) for n ops.
pub fn flat_log_blocks(trace: &Trace) -> Result<Vec<String>, AlgoError> {
    filter_ops(trace, &Filter::default())
        .into_iter()
        .map(|o| op_block(trace, o))
        .collect()
}

/// Renders page `page` of the flat log under `budget_chars`.
///
/// # Errors
/// As [`flat_log_blocks`], and [`AlgoError::PageOutOfRange`].
///
/// # Complexity
/// As [`flat_log_blocks`].
pub fn render_flat_log(trace: &Trace, budget_chars: usize, page: usize) -> Result<Page, AlgoError> {
    let blocks = flat_log_blocks(trace)?;
    let head = format!("# Execution log: {} operations\n\n", blocks.len());
    paginate(&head, &blocks, "", budget_chars, page)
}

/// The block of one operation.
///
/// # Errors
/// [`AlgoError::Stale`] when the trace's index does not cover `op`.
pub fn op_block(trace: &Trace, op: OpIx) -> Result<String, AlgoError> {
    let f = &trace.flow;
    let i = op.get();
    let (Some(ins), Some(mids), Some(outs)) = (
        f.op_inputs.get(i),
        f.op_intermediates.get(i),
        f.op_outputs.get(i),
    ) else {
        return Err(AlgoError::Stale {
            what: format!("operation index {i} is not in the flow index"),
        });
    };
    let r = trace.op(op);
    let mut s = format!("## {} [{}] at {}\n", r.op_name, r.category, r.created_at);
    if !r.comment.is_empty() {
        let _ = writeln!(s, "comment: {}", r.comment);
    }
    if r.metadata.as_object().is_some_and(|m| !m.is_empty()) {
        let _ = writeln!(s, "metadata: {}", r.metadata);
    }
    for (label, list) in [("input", ins), ("intermediate", mids), ("output", outs)] {
        for &v in list {
            let rec = trace.var(v);
            let what = rec.class_name.as_deref().unwrap_or(&rec.category);
            let _ = writeln!(s, "### {label} ({what}):\n{}", var_text(rec));
        }
    }
    s.push('\n');
    Ok(s)
}
