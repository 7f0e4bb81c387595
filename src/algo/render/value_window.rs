//! One variable's value: a paginated window, or its regex hits with surrounding chars.

use super::{paginate, Page};
use crate::algo::search::{compile, RegexOptions};
use crate::algo::text::{byte_at_char, char_at_byte, var_text};
use crate::algo::AlgoError;
use crate::model::{NodeRecord, Trace, VarIx};
use crate::text::xml_escape;

/// Renders the value of `var` from char `start`, page `page` under `budget_chars`. The head line
/// gives the id, the total length and the char range shown; the text itself is raw (offsets
/// match [`crate::algo::search::Hit`] offsets).
///
/// # Errors
/// [`AlgoError::Stale`] for a variable the trace does not have, [`AlgoError::PageOutOfRange`].
///
/// # Complexity
/// O(value length).
pub fn render_value(
    trace: &Trace,
    var: VarIx,
    start: usize,
    budget_chars: usize,
    page: usize,
) -> Result<Page, AlgoError> {
    let rec = var_record(trace, var)?;
    let text = var_text(rec);
    let total = text.chars().count();
    let body = &text[byte_at_char(&text, start)..];
    let head = format!(
        "<value id=\"{}\" chars=\"{total}\" from=\"{}\">\n",
        xml_escape(&rec.full_node_id),
        start.min(total)
    );
    paginate(&head, &[body.to_owned()], "\n</value>", budget_chars, page)
}

/// Renders the regex hits of `pattern` in the value of `var`, each with `opts.context_chars`
/// chars either side and the match in `[[…]]`, at most `opts.max_hits`.
///
/// # Errors
/// [`AlgoError::Regex`] for a bad pattern, [`AlgoError::Stale`], [`AlgoError::PageOutOfRange`].
///
/// # Complexity
/// O(value length).
pub fn render_value_hits(
    trace: &Trace,
    var: VarIx,
    pattern: &str,
    opts: &RegexOptions,
    budget_chars: usize,
    page: usize,
) -> Result<Page, AlgoError> {
    let rec = var_record(trace, var)?;
    let re = compile(pattern, opts)?;
    let text = var_text(rec);
    let all: Vec<regex::Match<'_>> = re.find_iter(&text).collect();
    let blocks: Vec<String> = all
        .iter()
        .take(opts.max_hits)
        .map(|m| {
            let (s, e) = (char_at_byte(&text, m.start()), char_at_byte(&text, m.end()));
            let before =
                &text[byte_at_char(&text, s.saturating_sub(opts.context_chars))..m.start()];
            let after_end = m.end() + byte_at_char(&text[m.end()..], opts.context_chars);
            let after = &text[m.end()..after_end];
            format!(
                "<hit start=\"{s}\" end=\"{e}\">{before}[[{}]]{after}</hit>\n",
                m.as_str()
            )
        })
        .collect();
    let head = format!(
        "<hits id=\"{}\" pattern=\"{}\" chars=\"{}\" count=\"{}\" shown=\"{}\">\n",
        xml_escape(&rec.full_node_id),
        xml_escape(pattern),
        text.chars().count(),
        all.len(),
        blocks.len()
    );
    paginate(&head, &blocks, "</hits>", budget_chars, page)
}

/// The record of `var`, or [`AlgoError::Stale`] when the trace does not have it.
fn var_record(trace: &Trace, var: VarIx) -> Result<&NodeRecord, AlgoError> {
    trace.vars.get(var.get()).ok_or_else(|| AlgoError::Stale {
        what: format!("variable index {} is not in the trace", var.0),
    })
}
