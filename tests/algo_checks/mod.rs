//! Checks of the graph engine on hand-made graphs with known answers. Shared by the native
//! tests (`tests/algo.rs`) and the browser tests (`tests/algo_browser.rs`) through
//! [`algo_checks!`], so each check is written once.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a failed unwrap is a failed test

pub mod graphs;

use memtrace::algo::render::{
    flat_log_blocks, render_flat_log, render_op_xml, render_preview, render_value,
    render_value_hits,
};
use memtrace::algo::start_points::{message_vars, start_point_query};
use memtrace::algo::{
    backward_slice, def_use, evaluate_start_points, failure_slice, filter_ops, filter_vars,
    forward_impact, lifeline, op_subgraph, start_points, AlgoError, Filter, GraphIndex,
    MessageIndex, NodeRef, RegexOptions, SearchIndex, Slice, StartPointOptions, VersionKind,
};
use memtrace::Trace;

use crate::common::{time, TraceBuilder};

/// Declares one test per check, each carrying the given attribute (`#[test]`, `#[wasm_bindgen_test]`).
#[macro_export]
macro_rules! algo_checks {
    (#[$attr:meta]) => {
        $crate::algo_checks!(@each #[$attr]
            topo_order_follows_dependencies_then_time,
            ancestors_and_descendants_of_a_diamond,
            slices_of_a_diamond,
            failure_slice_stays_in_its_session,
            forward_impact_follows_versions,
            re_emitted_versions_do_not_mix_questions,
            disconnected_sessions_do_not_leak,
            lifeline_with_update_and_tombstone,
            lifeline_deletion_by_value_or_marker,
            def_use_and_op_subgraph,
            filters_by_session_category_and_time,
            bm25_search_ranks_with_offsets,
            regex_search_reports_char_offsets,
            start_points_find_the_evidence,
            op_xml_has_roles_ids_values_and_escapes,
            renders_stay_within_budget_on_every_page,
            preview_has_no_values,
            value_window_and_hits,
            flat_log_is_time_ordered_without_ids,
            errors_are_typed,
        );
    };
    (@each #[$attr:meta] $($name:ident),* $(,)?) => {
        $( #[$attr] fn $name() { checks::$name() } )*
    };
}

fn node_id(t: &Trace, r: NodeRef) -> String {
    match r {
        NodeRef::Var(v) => t.var(v).full_node_id.clone(),
        NodeRef::Op(o) => t.op(o).op_id.clone(),
    }
}

fn ids(t: &Trace, nodes: &[NodeRef]) -> Vec<String> {
    nodes.iter().map(|&r| node_id(t, r)).collect()
}

fn slice_ids(t: &Trace, s: &Slice) -> (Vec<String>, Vec<String>) {
    let mut vars: Vec<String> = s
        .vars
        .iter()
        .map(|&v| t.var(v).full_node_id.clone())
        .collect();
    let mut ops: Vec<String> = s.ops.iter().map(|&o| t.op(o).op_id.clone()).collect();
    vars.sort();
    ops.sort();
    (vars, ops)
}

fn var(t: &Trace, id: &str) -> NodeRef {
    NodeRef::Var(
        t.var_by_id(id)
            .unwrap_or_else(|| panic!("no variable {id}")),
    )
}

fn op(t: &Trace, id: &str) -> NodeRef {
    NodeRef::Op(t.op_by_id(id).unwrap_or_else(|| panic!("no op {id}")))
}

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

/// Every edge goes forward in the topological order, and the order holds every node once.
fn assert_topological(t: &Trace, g: &GraphIndex) {
    let order: Vec<NodeRef> = g.topo_order().collect();
    assert_eq!(order.len(), t.vars.len() + t.ops.len());
    for o in 0..t.ops.len() {
        let o = NodeRef::Op(memtrace::model::OpIx(o as u32));
        let ro = g.topo_rank(o).unwrap();
        for p in g.predecessors(o) {
            assert!(
                g.topo_rank(p).unwrap() < ro,
                "{} before {}",
                node_id(t, p),
                node_id(t, o)
            );
        }
        for s in g.successors(o) {
            assert!(
                g.topo_rank(s).unwrap() > ro,
                "{} after {}",
                node_id(t, s),
                node_id(t, o)
            );
        }
    }
}

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
    assert_eq!(succ, strs(&["op-2", "op-1"]), "in op order");
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

pub fn bm25_search_ranks_with_offsets() {
    let t = graphs::memory();
    let ix = SearchIndex::build(&t);
    let hits = ix.bm25("pasta with PESTO", 3);
    let top = hits.first().expect("a hit");
    assert_eq!(
        top.id, "U1:D1:4@1",
        "the only text with both rare terms wins: {hits:?}"
    );
    assert_eq!(hits[1].id, "facts-4@1", "{hits:?}");
    let text = ix.text(top.var).unwrap();
    let found: String = text
        .chars()
        .skip(top.start)
        .take(top.end - top.start)
        .collect();
    assert_eq!(found.to_lowercase(), "pasta");
    assert!(top.snippet.contains("pasta"));
    assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
    assert!(ix.bm25("zzz", 5).is_empty());
}

pub fn regex_search_reports_char_offsets() {
    let t = graphs::memory();
    let ix = SearchIndex::build(&t);
    let opts = RegexOptions {
        case_insensitive: true,
        max_hits: 10,
        context_chars: 5,
        literal: false,
    };
    let hits = ix.regex("r.sum.", &opts).unwrap();
    assert_eq!(hits.len(), 1);
    let h = &hits[0];
    assert_eq!(h.id, "U1:D1:3@1");
    let text = ix.text(h.var).unwrap();
    let found: String = text.chars().skip(h.start).take(h.end - h.start).collect();
    assert_eq!(found, "résumé");
    assert!(
        h.snippet.starts_with('…') && h.snippet.contains("résumé"),
        "{}",
        h.snippet
    );
    let capped = ix
        .regex(
            "memory",
            &RegexOptions {
                max_hits: 2,
                ..opts.clone()
            },
        )
        .unwrap();
    assert_eq!(capped.len(), 2);
    let lit = ix
        .regex(
            "<facts>",
            &RegexOptions {
                literal: true,
                ..opts
            },
        )
        .unwrap();
    assert_eq!(
        lit.iter().map(|h| h.id.as_str()).collect::<Vec<_>>(),
        vec!["fact-extraction-prompt@1"]
    );
}

pub fn start_points_find_the_evidence() {
    let t = graphs::memory();
    let msgs: Vec<String> = message_vars(&t)
        .iter()
        .map(|&v| t.var(v).full_node_id.clone())
        .collect();
    assert_eq!(
        msgs,
        strs(&["U1:D1:1@1", "U1:D1:2@1", "U1:D1:3@1", "U1:D1:4@1"])
    );
    let opts = StartPointOptions {
        limit: 2,
        ..StartPointOptions::default()
    };
    let ix = MessageIndex::build(&t, &opts);
    let case = &t.cases[0];
    let q = start_point_query(case);
    assert_eq!(q, "When did Mel go camping?\nJune 2023");
    let sp = start_points(&ix, &q, &opts, &[]);
    assert_eq!(sp.len(), 2);
    assert_eq!(t.var(sp[0].0).full_node_id, "U1:D1:1@1");
    assert!(sp[0].1 > sp[1].1);
    let report = evaluate_start_points(&t, &opts);
    assert_eq!(report.cases.len(), 1);
    assert_eq!(report.cases[0].recall, Some(1.0));
    assert_eq!(report.mean, Some(1.0));
}

pub fn op_xml_has_roles_ids_values_and_escapes() {
    let t = graphs::memory();
    let page = render_op_xml(&t, t.op_by_id("op-e1").unwrap(), 10_000, 0).unwrap();
    assert_eq!(page.pages, 1);
    let x = &page.text;
    assert!(
        x.starts_with("<operation id=\"op-e1\" name=\"extract_facts\" category=\"extraction\""),
        "{x}"
    );
    assert!(x.contains("<comment>does extract_facts</comment>"));
    assert!(x.contains("<variable role=\"input\" id=\"U1:D1:1@1\" category=\"message\">"));
    assert!(x.contains("<variable role=\"output\" id=\"facts-1@1\" category=\"facts\">"));
    assert!(x.contains("Use &lt;facts&gt; tags &amp; be brief."), "{x}");
    assert!(x.contains("camping with my kids"));
    assert!(x.ends_with("</operation>"));
    let r = render_op_xml(&t, t.op_by_id("op-r").unwrap(), 10_000, 0).unwrap();
    assert!(r
        .text
        .contains("role=\"intermediate\" id=\"raw-response@1\""));
    assert_eq!(
        render_op_xml(&t, t.op_by_id("op-e1").unwrap(), 10_000, 0).unwrap(),
        page,
        "deterministic"
    );
}

pub fn renders_stay_within_budget_on_every_page() {
    let t = graphs::memory();
    let budget = 300;
    let e1 = t.op_by_id("op-e1").unwrap();
    let first = render_op_xml(&t, e1, budget, 0).unwrap();
    assert!(first.pages > 1, "a small budget must paginate");
    let mut all = String::new();
    for p in 0..first.pages {
        let page = render_op_xml(&t, e1, budget, p).unwrap();
        assert!(
            page.text.chars().count() <= budget,
            "page {p} has {} chars",
            page.text.chars().count()
        );
        all.push_str(&page.text);
    }
    for needle in [
        "id=\"U1:D1:1@1\"",
        "id=\"facts-1@1\"",
        "id=\"fact-extraction-prompt@1\"",
    ] {
        assert!(all.contains(needle), "{needle} missing across pages");
    }
    let log = render_flat_log(&t, budget, 0).unwrap();
    for p in 0..log.pages {
        assert!(render_flat_log(&t, budget, p).unwrap().text.chars().count() <= budget);
    }
    assert!(matches!(
        render_flat_log(&t, budget, log.pages),
        Err(AlgoError::PageOutOfRange { .. })
    ));
}

pub fn preview_has_no_values() {
    let t = graphs::memory();
    let page = render_preview(&t, var(&t, "memory-unit-1@2"), 10_000, 0).unwrap();
    let x = &page.text;
    assert!(x.starts_with("<node id=\"memory-unit-1@2\""), "{x}");
    assert!(x.contains("previous=\"memory-unit-1@1\" next=\"memory-unit-1@3\""));
    assert!(x.contains("<produced-by op=\"op-u2\""));
    assert!(x.contains("<read-by op=\"op-d1\""));
    assert!(
        x.contains("id=\"facts-2@1\""),
        "the op's other variables are listed"
    );
    assert!(!x.contains("adoption"), "no values in a preview: {x}");
    let op_page = render_preview(&t, op(&t, "op-e1"), 10_000, 0).unwrap();
    assert!(op_page.text.contains("role=\"input\" id=\"U1:D1:1@1\""));
    assert!(!op_page.text.contains("camping"));
}

pub fn value_window_and_hits() {
    let t = graphs::memory();
    let m3 = t.var_by_id("U1:D1:3@1").unwrap();
    let ix = SearchIndex::build(&t);
    let text = ix.text(m3).unwrap().to_owned();
    let first = render_value(&t, m3, 0, 200, 0).unwrap();
    assert!(first.pages > 1);
    let mut body = String::new();
    for p in 0..first.pages {
        let page = render_value(&t, m3, 0, 200, p).unwrap();
        assert!(page.text.chars().count() <= 200);
        let start = page.text.find('\n').unwrap() + 1;
        let end = page.text.find("\n</value>").unwrap();
        body.push_str(&page.text[start..end]);
    }
    assert_eq!(body, text);
    let from = render_value(&t, m3, 20, 10_000, 0).unwrap();
    assert!(from
        .text
        .contains(&text.chars().skip(20).collect::<String>()));
    assert!(from.text.contains("from=\"20\""));
    let opts = RegexOptions {
        context_chars: 4,
        ..RegexOptions::default()
    };
    let hits = render_value_hits(&t, m3, "sun\\w+", &opts, 10_000, 0).unwrap();
    assert!(hits.text.contains("count=\"1\""), "{}", hits.text);
    assert!(hits.text.contains("d a [[sunset]] ove"), "{}", hits.text);
}

pub fn flat_log_is_time_ordered_without_ids() {
    let t = graphs::memory();
    let blocks = flat_log_blocks(&t).unwrap();
    assert_eq!(blocks.len(), t.ops.len());
    let names: Vec<&str> = blocks
        .iter()
        .map(|b| b.lines().next().unwrap().split(' ').nth(1).unwrap())
        .collect();
    assert_eq!(
        names[..3],
        ["extract_facts", "update_memory", "extract_facts"]
    );
    assert_eq!(names.last(), Some(&"llm-judge"));
    let all = blocks.concat();
    assert!(!all.contains("op-"), "no op ids");
    assert!(!all.contains("@1"), "no node ids");
    assert!(all.contains("### input (message):"));
    assert!(all.contains("### intermediate (llm_response):\n<ctx>painted</ctx>"));
    assert!(all.contains("I do not know"));
}

pub fn errors_are_typed() {
    let mut b = TraceBuilder::new();
    b.var("a", 1, "x", "'1'");
    let raw = b.raw();
    assert!(matches!(
        GraphIndex::build(&raw),
        Err(AlgoError::Stale { .. })
    ));
    let t = graphs::memory();
    let ix = SearchIndex::build(&t);
    let err = ix.regex("(unclosed", &RegexOptions::default()).unwrap_err();
    assert!(err.to_string().contains("(unclosed"), "{err}");
    let err = render_op_xml(&t, t.op_by_id("op-e1").unwrap(), 10_000, 3).unwrap_err();
    assert_eq!(err, AlgoError::PageOutOfRange { page: 3, pages: 1 });
}
