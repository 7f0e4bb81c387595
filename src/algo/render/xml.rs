//! An operation's subgraph as XML: op id, name, category, time, comment, and each variable's
//! role, id, category and (optionally) value.

use std::fmt::Write as _;

use super::{paginate, Page};
use crate::algo::graph::op_subgraph;
use crate::algo::text::var_text;
use crate::algo::AlgoError;
use crate::model::{OpIx, Role, Trace, VarIx};
use crate::text::xml_escape;

/// Renders `op` as XML, values included, page `page` under `budget_chars`.
///
/// ```text
/// <operation id="op-…" name="memory_system.extract_facts" category="extraction" time="…" session="…">
///   <comment>…</comment>
///   <variable role="input" id="U1:D1:1@1" category="message">…</variable>
/// </operation>
/// ```
///
/// # Errors
/// [`AlgoError::Stale`] for an op the index does not know, [`AlgoError::PageOutOfRange`].
///
/// # Complexity
/// O(size of the op's subgraph and values).
pub fn render_op_xml(
    trace: &Trace,
    op: OpIx,
    budget_chars: usize,
    page: usize,
) -> Result<Page, AlgoError> {
    let (head, blocks, tail) = op_parts(trace, op, true)?;
    paginate(&head, &blocks, &tail, budget_chars, page)
}

/// The head, one block per variable, and the tail of an op's XML.
pub(crate) fn op_parts(
    trace: &Trace,
    op: OpIx,
    values: bool,
) -> Result<(String, Vec<String>, String), AlgoError> {
    let sub = op_subgraph(trace, op)?;
    let r = trace.op(op);
    let mut head = format!(
        "<operation id=\"{}\" name=\"{}\" category=\"{}\" time=\"{}\" session=\"{}\">\n",
        xml_escape(&r.op_id),
        xml_escape(&r.op_name),
        xml_escape(&r.category),
        xml_escape(&r.created_at),
        xml_escape(&r.session_id),
    );
    if !r.comment.is_empty() {
        let _ = writeln!(head, "  <comment>{}</comment>", xml_escape(&r.comment));
    }
    if r.metadata.as_object().is_some_and(|m| !m.is_empty()) {
        let _ = writeln!(
            head,
            "  <metadata>{}</metadata>",
            xml_escape(&r.metadata.to_string())
        );
    }
    let roles = [
        (Role::Input, &sub.inputs),
        (Role::Intermediate, &sub.intermediates),
        (Role::Output, &sub.outputs),
    ];
    let blocks = roles
        .iter()
        .flat_map(|(role, list)| {
            list.iter()
                .map(move |&v| var_element(trace, v, *role, values))
        })
        .collect();
    Ok((head, blocks, "</operation>".to_owned()))
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::Input => "input",
        Role::Intermediate => "intermediate",
        Role::Output => "output",
    }
}

fn var_element(trace: &Trace, v: VarIx, role: Role, values: bool) -> String {
    let r = trace.var(v);
    let attrs = format!(
        "role=\"{}\" id=\"{}\" category=\"{}\"",
        role_name(role),
        xml_escape(&r.full_node_id),
        xml_escape(&r.category)
    );
    if values {
        format!(
            "  <variable {attrs}>{}</variable>\n",
            xml_escape(&var_text(r))
        )
    } else {
        format!(
            "  <variable {attrs} chars=\"{}\"/>\n",
            var_text(r).chars().count()
        )
    }
}
