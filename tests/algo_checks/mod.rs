//! Checks of the graph engine on hand-made graphs with known answers. Shared by the native
//! tests (`tests/algo.rs`) and the browser tests (`tests/algo_browser.rs`) through
//! [`algo_checks!`], so each check is written once.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a failed unwrap is a failed test

pub mod graphs;
mod structure;
mod views;

pub use structure::*;
pub use views::*;

use memtrace::algo::{GraphIndex, NodeRef, Slice};
use memtrace::Trace;

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
            re_emitted_versions_lead_back_to_their_writer,
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
