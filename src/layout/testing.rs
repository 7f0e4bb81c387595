//! Small traces for the layout and view tests.

use serde_json::json;

use crate::Trace;

/// A small trace from (name, version, created_at) nodes and (src, dst, op) edges.
pub(crate) fn trace_of(
    nodes: &[(&str, u32, &str)],
    ops: &[(&str, &str)],
    edges: &[(&str, &str, &str)],
) -> Trace {
    let rec = |t: &str| json!({"created_at": t, "filename": "x.py", "lineno": 1});
    let nodes: Vec<_> = nodes
        .iter()
        .map(|(n, v, t)| {
            let mut r = rec(t);
            r["name"] = json!(n);
            r["version"] = json!(v);
            r["value"] = json!(format!("'{n} v{v}'"));
            r
        })
        .collect();
    let ops: Vec<_> = ops
        .iter()
        .map(|(id, t)| {
            let mut r = rec(t);
            r["op_id"] = json!(id);
            r["op_name"] = json!(id);
            r
        })
        .collect();
    let edges: Vec<_> = edges
        .iter()
        .enumerate()
        .map(|(i, (s, d, o))| {
            let mut r = rec("2024-01-01 00:00:00.000");
            r["edge_id"] = json!(format!("edge-{i}"));
            r["op_id"] = json!(o);
            r["source_full_node_id"] = json!(s);
            r["target_full_node_id"] = json!(d);
            r
        })
        .collect();
    let file = json!({"graph_id": "graph-t", "data": {"nodes": nodes, "operations": ops, "edges": edges, "sessions": []}});
    crate::load(
        &serde_json::to_vec(&file).unwrap(),
        crate::LoadOptions::default(),
    )
    .unwrap()
    .trace
}

/// m -> extract -> fact -> answer(+prompt) -> pred; u -> other -> w.
pub(crate) fn chain_trace() -> Trace {
    trace_of(
        &[
            ("m", 1, "2024-01-01 00:00:01.000"),
            ("fact", 1, "2024-01-01 00:00:02.000"),
            ("prompt", 1, "2024-01-01 00:00:00.000"),
            ("pred", 1, "2024-01-01 00:00:04.000"),
            ("u", 1, "2024-01-01 00:00:05.000"),
            ("w", 1, "2024-01-01 00:00:06.000"),
        ],
        &[
            ("op-extract", "2024-01-01 00:00:02.000"),
            ("op-answer", "2024-01-01 00:00:03.000"),
            ("op-other", "2024-01-01 00:00:06.000"),
        ],
        &[
            ("m@1", "fact@1", "op-extract"),
            ("fact@1", "pred@1", "op-answer"),
            ("prompt@1", "pred@1", "op-answer"),
            ("u@1", "w@1", "op-other"),
        ],
    )
}

/// A memory unit added, updated, then read: mem@1 -> update -> mem@2 -> search -> ctx.
pub(crate) fn memory_trace() -> Trace {
    trace_of(
        &[
            ("fact", 1, "2024-01-01 00:00:01.000"),
            ("mem", 1, "2024-01-01 00:00:02.000"),
            ("fact2", 1, "2024-01-01 00:00:03.000"),
            ("mem", 2, "2024-01-01 00:00:04.000"),
            ("ctx", 1, "2024-01-01 00:00:05.000"),
        ],
        &[
            ("op-add", "2024-01-01 00:00:02.000"),
            ("op-update", "2024-01-01 00:00:04.000"),
            ("op-search", "2024-01-01 00:00:05.000"),
        ],
        &[
            ("fact@1", "mem@1", "op-add"),
            ("mem@1", "mem@2", "op-update"),
            ("fact2@1", "mem@2", "op-update"),
            ("mem@2", "ctx@1", "op-search"),
        ],
    )
}
