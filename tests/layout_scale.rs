#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed expectation should panic
//! The layout at benchmark size: a generated Mem0-style trace with ~100k nodes lays out with every
//! edge pointing right, and the time it took is printed (`cargo test --release --test layout_scale -- --nocapture`).

use memtrace::layout::{layout, LayoutOptions, NodeSet, XAxis};
use serde_json::json;

/// messages → extract → fact → add/update memory units → search → context → answer → prediction.
fn generated(messages: usize) -> Vec<u8> {
    let mut nodes = Vec::new();
    let mut ops = Vec::new();
    let mut edges = Vec::new();
    let stamp = |i: usize| {
        format!(
            "2024-01-01 {:02}:{:02}:{:02}.{:03}",
            i / 3_600_000 % 24,
            i / 60_000 % 60,
            i / 1000 % 60,
            i % 1000
        )
    };
    let mut clock = 0usize;
    let mut tick = || {
        clock += 1;
        stamp(clock)
    };
    let node = |name: String, version: u32, t: String| json!({"created_at": t, "filename": "g.py", "lineno": 1, "name": name, "version": version, "value": "'x'"});
    let op = |id: String, name: &str, t: String| json!({"created_at": t, "filename": "g.py", "lineno": 1, "op_id": id, "op_name": name});
    let edge = |s: String, d: String, o: &str| json!({"created_at": "2024-01-01 00:00:00.000", "filename": "g.py", "lineno": 1, "edge_id": format!("edge-{s}-{d}"), "op_id": o, "source_full_node_id": s, "target_full_node_id": d});
    let units = messages / 4;
    let mut version = vec![0u32; units];
    for m in 0..messages {
        nodes.push(node(format!("m{m}"), 1, tick()));
        let ex = format!("op-ex{m}");
        ops.push(op(ex.clone(), "extract", tick()));
        nodes.push(node(format!("f{m}"), 1, tick()));
        nodes.push(node(format!("p{m}"), 1, tick()));
        edges.push(edge(format!("m{m}@1"), format!("f{m}@1"), &ex));
        edges.push(edge(format!("m{m}@1"), format!("p{m}@1"), &ex));
        let up = format!("op-up{m}");
        ops.push(op(up.clone(), "update", tick()));
        let u = (m * 7919) % units;
        version[u] += 1;
        let v = version[u];
        nodes.push(node(format!("mem{u}"), v, tick()));
        edges.push(edge(format!("f{m}@1"), format!("mem{u}@{v}"), &up));
        if v > 1 {
            edges.push(edge(
                format!("mem{u}@{}", v - 1),
                format!("mem{u}@{v}"),
                &up,
            ));
        }
        if m % 100 == 99 {
            let s = format!("op-search{m}");
            ops.push(op(s.clone(), "search", tick()));
            nodes.push(node(format!("ctx{m}"), 1, tick()));
            for k in 0..10 {
                let u = (m + k * 13) % units;
                if version[u] > 0 {
                    edges.push(edge(
                        format!("mem{u}@{}", version[u]),
                        format!("ctx{m}@1"),
                        &s,
                    ));
                }
            }
            let a = format!("op-answer{m}");
            ops.push(op(a.clone(), "answer", tick()));
            nodes.push(node(format!("prediction{m}"), 1, tick()));
            edges.push(edge(format!("ctx{m}@1"), format!("prediction{m}@1"), &a));
        }
    }
    serde_json::to_vec(&json!({"graph_id": "graph-gen", "data": {"nodes": nodes, "operations": ops, "edges": edges, "sessions": []}})).unwrap()
}

#[test]
fn hundred_thousand_nodes_lay_out_left_to_right() {
    let bytes = generated(16_000);
    let trace = memtrace::load(&bytes, memtrace::LoadOptions::default())
        .unwrap()
        .trace;
    let n = trace.vars.len() + trace.ops.len();
    assert!(n >= 96_000, "{n} nodes");
    let t0 = std::time::Instant::now();
    let l = layout(&trace, &NodeSet::all(&trace), LayoutOptions::default());
    let full_ms = t0.elapsed().as_secs_f64() * 1e3;
    assert_eq!(l.nodes.len(), n);
    assert!(l
        .edges
        .iter()
        .all(|e| l.nodes[e.from as usize].x < l.nodes[e.to as usize].x));
    assert!(l.lifelines.len() > 1000);
    let t2 = std::time::Instant::now();
    let time_axis = LayoutOptions {
        x_axis: XAxis::Time,
        ..LayoutOptions::default()
    };
    let lt = layout(&trace, &NodeSet::all(&trace), time_axis);
    let time_ms = t2.elapsed().as_secs_f64() * 1e3;
    assert!(lt
        .edges
        .iter()
        .all(|e| lt.nodes[e.from as usize].x < lt.nodes[e.to as usize].x));
    println!(
        "layout (time axis): {} columns x {} lanes: {time_ms:.0} ms",
        lt.columns, lt.lanes
    );
    let pred = trace.var_by_id("prediction15999@1").unwrap();
    let t1 = std::time::Instant::now();
    let set = memtrace::layout::backward_reach(&trace, &[pred]);
    let slice = layout(&trace, &set, LayoutOptions::default());
    let slice_ms = t1.elapsed().as_secs_f64() * 1e3;
    assert!(slice.nodes.len() < n);
    println!(
        "layout (rank axis): {n} nodes, {} edges, {} lifelines on {} lanes, {} columns x {} lanes: {full_ms:.0} ms; backward slice of one prediction ({} nodes) + layout: {slice_ms:.1} ms",
        l.edges.len(), l.lifelines.len(), l.lifeline_lanes, l.columns, l.lanes, slice.nodes.len()
    );
}
