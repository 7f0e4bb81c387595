//! The flat log (the obstrace view): operations sorted by (`created_at`, `op_id`), each a text
//! block with its name, category, time, comment, metadata and its input, intermediate and output
//! values, with no node ids and no edges.

use std::fmt::Write as _;

use super::{paginate, Page};
use crate::algo::filter::{filter_ops, Filter};
use crate::algo::graph::op_var_lists;
use crate::algo::search::{compile, snippet, RegexOptions};
use crate::algo::text::{char_window, var_text};
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
    let [ins, mids, outs] = op_var_lists(trace, op)?;
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

/// The whole flat log as one text, for grep and windows (the obstrace tools).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlatLog {
    pub text: String,
    /// The ops, in log order.
    pub ops: Vec<OpIx>,
    /// Byte offset in `text` where each op's block starts.
    starts: Vec<usize>,
    chars: usize,
}

/// One grep match in the flat log.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LogHit {
    /// Position of the op's block in the log (0 = first op).
    pub block: usize,
    /// Char offsets of the match in the whole log.
    pub start: usize,
    pub end: usize,
    /// The match with `context_chars` either side, on one line.
    pub snippet: String,
}

impl FlatLog {
    /// Joins the blocks of [`flat_log_blocks`].
    ///
    /// # Errors
    /// As [`flat_log_blocks`].
    ///
    /// # Complexity
    /// As [`flat_log_blocks`].
    pub fn build(trace: &Trace) -> Result<FlatLog, AlgoError> {
        let ops = filter_ops(trace, &Filter::default());
        let mut text = String::new();
        let mut starts = Vec::with_capacity(ops.len());
        for &o in &ops {
            starts.push(text.len());
            text.push_str(&op_block(trace, o)?);
        }
        let chars = text.chars().count();
        Ok(FlatLog {
            text,
            ops,
            starts,
            chars,
        })
    }

    /// Length of the log in chars.
    pub fn char_len(&self) -> usize {
        self.chars
    }

    /// Up to `max_chars` chars of the log from char `start`.
    pub fn window(&self, start: usize, max_chars: usize) -> &str {
        char_window(&self.text, start, max_chars)
    }

    /// Regex (or, with `opts.literal`, plain) matches in log order, at most `opts.max_hits`.
    ///
    /// # Errors
    /// [`AlgoError::Regex`] for a bad pattern.
    ///
    /// # Complexity
    /// O(log length).
    pub fn grep(&self, pattern: &str, opts: &RegexOptions) -> Result<Vec<LogHit>, AlgoError> {
        let re = compile(pattern, opts)?;
        let (mut byte, mut chars) = (0usize, 0usize);
        let mut hits = Vec::new();
        for m in re.find_iter(&self.text).take(opts.max_hits) {
            chars += self.text[byte..m.start()].chars().count();
            let start = chars;
            let end = start + m.as_str().chars().count();
            (byte, chars) = (m.end(), end);
            let block = self
                .starts
                .partition_point(|&s| s <= m.start())
                .saturating_sub(1);
            hits.push(LogHit {
                block,
                start,
                end,
                snippet: snippet(&self.text, start, end, opts.context_chars),
            });
        }
        Ok(hits)
    }
}
