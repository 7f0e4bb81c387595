//! A node's neighbourhood without values: for a variable, its neighbouring versions and every
//! op that made or read it with that op's other variables; for an op, its variables by role.

use std::fmt::Write as _;

use super::xml::op_parts;
use super::{paginate, Page};
use crate::algo::graph::NodeRef;
use crate::algo::text::var_text;
use crate::algo::AlgoError;
use crate::model::{OpIx, Trace, VarIx};
use crate::text::xml_escape;

/// Renders the neighbourhood of `node` without values, page `page` under `budget_chars`.
///
/// # Errors
/// [`AlgoError::Stale`] for a node the index does not know, [`AlgoError::PageOutOfRange`].
///
/// # Complexity
/// O(Σ size of the neighbouring ops' subgraphs).
pub fn render_preview(
    trace: &Trace,
    node: NodeRef,
    budget_chars: usize,
    page: usize,
) -> Result<Page, AlgoError> {
    match node {
        NodeRef::Op(o) => {
            let (head, blocks, tail) = op_parts(trace, o, false)?;
            paginate(&head, &blocks, &tail, budget_chars, page)
        }
        NodeRef::Var(v) => {
            let (head, blocks) = var_parts(trace, v)?;
            paginate(&head, &blocks, "</node>", budget_chars, page)
        }
    }
}

fn var_parts(trace: &Trace, v: VarIx) -> Result<(String, Vec<String>), AlgoError> {
    let f = &trace.flow;
    let (Some(made), Some(read)) = (f.producers.get(v.get()), f.consumers.get(v.get())) else {
        return Err(AlgoError::Stale {
            what: format!("variable index {} is not in the flow index", v.0),
        });
    };
    let r = trace.var(v);
    let mut head = format!(
        "<node id=\"{}\" category=\"{}\" version=\"{}\" time=\"{}\" session=\"{}\" chars=\"{}\">\n",
        xml_escape(&r.full_node_id),
        xml_escape(&r.category),
        r.version,
        xml_escape(&r.created_at),
        xml_escape(&r.session_id),
        var_text(r).chars().count(),
    );
    if let Some(chain) = f.versions.get(&r.full_name) {
        let pos = chain.iter().position(|&x| x == v);
        let id = |i: Option<usize>| {
            i.and_then(|i| chain.get(i))
                .map(|&x| trace.var(x).full_node_id.clone())
        };
        let prev = id(pos.and_then(|p| p.checked_sub(1)));
        let next = id(pos.map(|p| p + 1));
        if prev.is_some() || next.is_some() {
            let _ = writeln!(
                head,
                "  <versions count=\"{}\" previous=\"{}\" next=\"{}\"/>",
                chain.len(),
                xml_escape(prev.as_deref().unwrap_or("")),
                xml_escape(next.as_deref().unwrap_or(""))
            );
        }
    }
    let mut blocks = Vec::new();
    for (tag, ops) in [("produced-by", made), ("read-by", read)] {
        for &o in ops {
            blocks.push(op_block(trace, tag, o, v)?);
        }
    }
    Ok((head, blocks))
}

fn op_block(trace: &Trace, tag: &str, o: OpIx, centre: VarIx) -> Result<String, AlgoError> {
    let (_, vars, _) = op_parts(trace, o, false)?;
    let r = trace.op(o);
    let mut s = format!(
        "  <{tag} op=\"{}\" name=\"{}\" category=\"{}\" time=\"{}\">\n",
        xml_escape(&r.op_id),
        xml_escape(&r.op_name),
        xml_escape(&r.category),
        xml_escape(&r.created_at)
    );
    let own = format!("id=\"{}\"", xml_escape(&trace.var(centre).full_node_id));
    for line in vars.iter().filter(|l| !l.contains(&own)) {
        s.push_str("  ");
        s.push_str(line);
    }
    let _ = writeln!(s, "  </{tag}>");
    Ok(s)
}
