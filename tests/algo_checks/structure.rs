//! Checks of the structure queries: order, slices, lifelines, def-use, filters.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a failed unwrap is a failed test

use memtrace::algo::{
    backward_slice, def_use, failure_slice, filter_ops, filter_vars, forward_impact, lifeline,
    op_subgraph, AlgoError, Filter, GraphIndex, NodeRef, VersionKind,
};

use super::{assert_topological, graphs, ids, node_id, op, slice_ids, strs, var};
use crate::common::{time, TraceBuilder};

pub fn topo_order_follows_dependencies_then_time() {
    let t = graphs::diamond();
    let g = GraphIndex::build(&t).unwrap();
    let order: Vec<NodeRef> = g.topo_order().collect();
    // op-2 is stamped before op-1; c (made by op-2) is older than op-1, so it comes next.
    assert_eq!(
        ids(&t, &order),
        strs(&["a@1", "op-2", "c@1", "op-1", "b@1", "op-3", "d@1"])
    );
    let ops: Vec<String> = g
        .ops_in_topo_order()
        .iter()
        .map(|&o| t.op(o).op_id.clone())
        .collect();
    assert_eq!(ops, strs(&["op-2", "op-1", "op-3"]));
    assert_topological(&t, &g);
    let m = graphs::memory();
    assert_topological(&m, &GraphIndex::build(&m).unwrap());
}

pub fn ancestors_and_descendants_of_a_diamond() {
    let t = graphs::diamond();
    let g = GraphIndex::build(&t).unwrap();
    let anc = g.ancestors(var(&t, "d@1"));
    assert_eq!(
        ids(&t, &anc),
        strs(&["a@1", "op-2", "c@1", "op-1", "b@1", "op-3"])
    );
    let desc = g.descendants(var(&t, "b@1"));
    assert_eq!(ids(&t, &desc), strs(&["op-3", "d@1"]));
    assert!(g.ancestors(var(&t, "a@1")).is_empty());
    assert!(g.descendants(var(&t, "d@1")).is_empty());
    let succ: Vec<String> = g
        .successors(var(&t, "a@1"))
        .map(|r| node_id(&t, r))
        .collect();
    assert_eq!(succ, strs(&["op-2", "op-1"]), "in topological order");
}

pub fn slices_of_a_diamond() {
    let t = graphs::diamond();
    let g = GraphIndex::build(&t).unwrap();
    let back = backward_slice(&g, &[var(&t, "b@1")]);
    assert_eq!(
        slice_ids(&t, &back),
        (strs(&["a@1", "b@1"]), strs(&["op-1"]))
    );
    let fwd = forward_impact(&g, &[var(&t, "c@1")]);
    assert_eq!(
        slice_ids(&t, &fwd),
        (strs(&["c@1", "d@1"]), strs(&["op-3"]))
    );
    // Two seeds, union; lists come in topological order.
    let both = backward_slice(&g, &[var(&t, "b@1"), var(&t, "c@1")]);
    let vars: Vec<String> = both
        .vars
        .iter()
        .map(|&v| t.var(v).full_node_id.clone())
        .collect();
    assert_eq!(vars, strs(&["a@1", "c@1", "b@1"]));
    assert_eq!(backward_slice(&g, &[var(&t, "d@1")]).len(), 7);
}

pub fn failure_slice_stays_in_its_session() {
    let t = graphs::memory();
    let g = GraphIndex::build(&t).unwrap();
    let case = t.cases.first().expect("one failure case");
    let s = failure_slice(&t, &g, case).unwrap();
    let (vars, ops) = slice_ids(&t, &s);
    assert_eq!(
        vars,
        strs(&[
            "U1:D1:3@1",
            "context@1",
            "fact-extraction-prompt@1",
            "facts-3@1",
            "memory-unit-2@1",
            "prediction@1",
            "query:q1@1",
            "raw-response@1",
        ])
    );
    assert_eq!(ops, strs(&["op-a", "op-e3", "op-r", "op-u3"]));
    // The decisive op (the deletion) is outside the slice: the answer never saw that unit.
    assert!(!ops.contains(&"op-d1".to_owned()));
    let mut no_answer = case.clone();
    no_answer.prediction_id = None;
    no_answer.answer_op = None;
    assert!(matches!(
        failure_slice(&t, &g, &no_answer),
        Err(AlgoError::NoAnswer { .. })
    ));
}

pub fn forward_impact_follows_versions() {
    let t = graphs::memory();
    let g = GraphIndex::build(&t).unwrap();
    let s = forward_impact(&g, &[var(&t, "U1:D1:1@1")]);
    assert_eq!(
        slice_ids(&t, &s),
        (
            strs(&[
                "U1:D1:1@1",
                "facts-1@1",
                "memory-unit-1@1",
                "memory-unit-1@2",
                "memory-unit-1@3"
            ]),
            strs(&["op-d1", "op-e1", "op-u1", "op-u2"])
        )
    );
}

pub fn re_emitted_versions_do_not_mix_questions() {
    let t = graphs::shared_retrieval();
    let g = GraphIndex::build(&t).unwrap();
    assert_topological(&t, &g);
    let s = backward_slice(&g, &[var(&t, "pa@1")]);
    assert_eq!(
        slice_ids(&t, &s),
        (
            strs(&["msg@1", "pa@1", "qa@1", "u@1"]),
            strs(&["op-ansa", "op-make", "op-ra"])
        )
    );
    let f = forward_impact(&g, &[var(&t, "qa@1")]);
    assert_eq!(
        slice_ids(&t, &f),
        (strs(&["pa@1", "qa@1", "u@1"]), strs(&["op-ansa", "op-ra"]))
    );
    let f = forward_impact(&g, &[var(&t, "msg@1")]);
    assert_eq!(
        slice_ids(&t, &f),
        (
            strs(&["msg@1", "pa@1", "pb@1", "u@1"]),
            strs(&["op-ansa", "op-ansb", "op-make"])
        )
    );
}

/// A version's defining producer is the op that wrote it first (its earliest edge), not its
/// first producer in topological order: a later retrieval that re-emits it ranks earlier there.
pub fn re_emitted_versions_lead_back_to_their_writer() {
    let t = graphs::late_retrieval();
    let g = GraphIndex::build(&t).unwrap();
    assert_topological(&t, &g);
    let rank = |id: &str| g.topo_rank(op(&t, id)).unwrap();
    assert!(
        rank("op-r") < rank("op-u"),
        "the graph no longer shows the case this check is about"
    );
    let s = backward_slice(&g, &[var(&t, "p@1")]);
    assert_eq!(
        slice_ids(&t, &s),
        (
            strs(&["f1@1", "f2@1", "m@1", "n@1", "p@1", "q@1"]),
            strs(&["op-a", "op-r", "op-u", "op-w"])
        )
    );
    let f = forward_impact(&g, &[var(&t, "f1@1")]);
    assert_eq!(
        slice_ids(&t, &f),
        (
            strs(&["f1@1", "m@1", "n@1", "p@1"]),
            strs(&["op-a", "op-u", "op-w"])
        )
    );
}

pub fn disconnected_sessions_do_not_leak() {
    let mut b = TraceBuilder::new();
    b.session("s1");
    b.var("a", 1, "x", "'1'");
    b.var("b", 1, "x", "'2'");
    b.op("op-1", "f", "x", &["a@1"], &[], &["b@1"]);
    b.session("s2");
    b.var("c", 1, "x", "'3'");
    b.var("d", 1, "x", "'4'");
    b.op("op-2", "f", "x", &["c@1"], &[], &["d@1"]);
    b.var("lonely", 1, "x", "'5'");
    let t = b.build();
    let g = GraphIndex::build(&t).unwrap();
    assert_topological(&t, &g);
    assert_eq!(
        slice_ids(&t, &backward_slice(&g, &[var(&t, "d@1")])),
        (strs(&["c@1", "d@1"]), strs(&["op-2"]))
    );
    assert_eq!(
        slice_ids(&t, &forward_impact(&g, &[var(&t, "a@1")])),
        (strs(&["a@1", "b@1"]), strs(&["op-1"]))
    );
    assert_eq!(backward_slice(&g, &[var(&t, "lonely@1")]).len(), 1);
    assert_eq!(
        g.topo_rank(var(&t, "lonely@1")),
        Some(6),
        "an isolated node sorts by its time"
    );
}

pub fn lifeline_with_update_and_tombstone() {
    let t = graphs::memory();
    let l = lifeline(&t, "memory-unit-1").unwrap();
    let kinds: Vec<VersionKind> = l.versions.iter().map(|v| v.kind).collect();
    assert_eq!(
        kinds,
        vec![VersionKind::Birth, VersionKind::Update, VersionKind::Delete]
    );
    let made: Vec<Vec<String>> = l
        .versions
        .iter()
        .map(|v| v.made_by.iter().map(|&o| t.op(o).op_id.clone()).collect())
        .collect();
    assert_eq!(
        made,
        vec![strs(&["op-u1"]), strs(&["op-u2"]), strs(&["op-d1"])]
    );
    let read: Vec<Vec<String>> = l
        .versions
        .iter()
        .map(|v| v.read_by.iter().map(|&o| t.op(o).op_id.clone()).collect())
        .collect();
    assert_eq!(read, vec![strs(&["op-u2"]), strs(&["op-d1"]), vec![]]);
    assert_eq!(
        l.ended_by.map(|o| t.op(o).op_id.clone()),
        Some("op-d1".to_owned())
    );
    let alive = lifeline(&t, "memory-unit-2").unwrap();
    assert_eq!(alive.versions.len(), 1);
    assert!(!alive.is_deleted());
}

pub fn lifeline_deletion_by_value_or_marker() {
    let t = graphs::neutral_deletion();
    let l = lifeline(&t, "unit").unwrap();
    assert_eq!(
        l.versions.iter().map(|v| v.kind).collect::<Vec<_>>(),
        vec![VersionKind::Birth, VersionKind::Delete]
    );
    assert_eq!(
        l.ended_by.map(|o| t.op(o).op_id.clone()),
        Some("op-b".to_owned())
    );
    let t = graphs::marker_deletion();
    let l = lifeline(&t, "unit").unwrap();
    assert_eq!(
        l.versions.iter().map(|v| v.kind).collect::<Vec<_>>(),
        vec![VersionKind::Birth, VersionKind::Update]
    );
    assert_eq!(
        l.ended_by.map(|o| t.op(o).op_id.clone()),
        Some("op-c".to_owned())
    );
    assert!(matches!(
        lifeline(&t, "nobody"),
        Err(AlgoError::UnknownVar { .. })
    ));
    let t = graphs::decision_deletes_one_of_two();
    let a = lifeline(&t, "a").unwrap();
    assert_eq!(a.versions.len(), 2);
    assert_eq!(
        a.ended_by.map(|o| t.op(o).op_id.clone()),
        Some("op-3".to_owned())
    );
    let b = lifeline(&t, "b").unwrap();
    assert!(
        !b.is_deleted(),
        "b was read by the deciding op but not linked to the marker"
    );
}

pub fn def_use_and_op_subgraph() {
    let t = graphs::memory();
    let p = t.var_by_id("fact-extraction-prompt@1").unwrap();
    let du = def_use(&t, p).unwrap();
    assert!(du.defs.is_empty());
    let uses: Vec<String> = du.uses.iter().map(|&o| t.op(o).op_id.clone()).collect();
    assert_eq!(uses, strs(&["op-e1", "op-e2", "op-e3", "op-e4"]));
    let sub = op_subgraph(&t, t.op_by_id("op-r").unwrap()).unwrap();
    let name = |v: &[memtrace::model::VarIx]| {
        v.iter()
            .map(|&x| t.var(x).full_node_id.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(name(&sub.inputs), strs(&["query:q1@1", "memory-unit-2@1"]));
    assert_eq!(name(&sub.intermediates), strs(&["raw-response@1"]));
    assert_eq!(name(&sub.outputs), strs(&["context@1"]));
}

pub fn filters_by_session_category_and_time() {
    let t = graphs::memory();
    let op_ids = |f: &Filter| {
        filter_ops(&t, f)
            .iter()
            .map(|&o| t.op(o).op_id.clone())
            .collect::<Vec<_>>()
    };
    let s2 = Filter {
        sessions: strs(&["s2"]),
        ..Filter::default()
    };
    assert_eq!(op_ids(&s2), strs(&["op-r", "op-a", "op-j"]));
    let del = Filter {
        categories: strs(&["deletion", "retrieval"]),
        ..Filter::default()
    };
    assert_eq!(op_ids(&del), strs(&["op-d1", "op-r"]));
    let d1 = t.op(t.op_by_id("op-d1").unwrap()).created_at.clone();
    let e3 = t.op(t.op_by_id("op-e3").unwrap()).created_at.clone();
    let window = Filter {
        from: Some(d1),
        until: Some(e3),
        ..Filter::default()
    };
    assert_eq!(op_ids(&window), strs(&["op-d1"]));
    let msgs = Filter {
        categories: strs(&["message"]),
        until: Some(time(5)),
        ..Filter::default()
    };
    let vars: Vec<String> = filter_vars(&t, &msgs)
        .iter()
        .map(|&v| t.var(v).full_node_id.clone())
        .collect();
    assert_eq!(vars, strs(&["U1:D1:1@1", "U1:D1:2@1"]));
}
