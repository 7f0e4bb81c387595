use super::testing::{chain_trace, memory_trace, trace_of};
use super::*;

fn x_of(l: &Layout, t: &Trace, n: NodeRef) -> f32 {
    let _ = t;
    l.get(n).unwrap().x
}

#[test]
fn every_edge_points_right() {
    for t in [chain_trace(), memory_trace()] {
        let l = layout(&t, &NodeSet::all(&t), LayoutOptions::default());
        assert_eq!(l.nodes.len(), t.vars.len() + t.ops.len());
        assert!(!l.edges.is_empty());
        for e in &l.edges {
            let (a, b) = (l.nodes[e.from as usize], l.nodes[e.to as usize]);
            assert!(a.x < b.x, "{:?} -> {:?}", a.node, b.node);
        }
    }
}

#[test]
fn versions_share_one_lane_above_the_rest() {
    let t = memory_trace();
    let l = layout(&t, &NodeSet::all(&t), LayoutOptions::default());
    assert_eq!(l.lifelines.len(), 1);
    assert_eq!(l.lifeline_lanes, 1);
    let line = &l.lifelines[0];
    assert_eq!(line.name, "mem");
    let lanes: Vec<u32> = line
        .nodes
        .iter()
        .map(|&i| l.nodes[i as usize].lane)
        .collect();
    assert_eq!(lanes, vec![line.lane, line.lane]);
    let xs: Vec<f32> = line.nodes.iter().map(|&i| l.nodes[i as usize].x).collect();
    assert!(xs[0] < xs[1]);
    for n in &l.nodes {
        if !line.nodes.contains(&(l.index_of(n.node).unwrap())) {
            assert!(n.lane > line.lane, "{:?} on lane {}", n.node, n.lane);
        }
    }
}

#[test]
fn non_overlapping_lifelines_share_a_lane() {
    let t = trace_of(
        &[
            ("a", 1, "2024-01-01 00:00:01.000"),
            ("a", 2, "2024-01-01 00:00:02.000"),
            ("b", 1, "2024-01-01 00:00:05.000"),
            ("b", 2, "2024-01-01 00:00:06.000"),
        ],
        &[
            ("op-a", "2024-01-01 00:00:02.000"),
            ("op-x", "2024-01-01 00:00:03.000"),
            ("op-b", "2024-01-01 00:00:06.000"),
        ],
        &[
            ("a@1", "a@2", "op-a"),
            ("a@2", "b@1", "op-x"),
            ("b@1", "b@2", "op-b"),
        ],
    );
    let l = layout(&t, &NodeSet::all(&t), LayoutOptions::default());
    assert_eq!(l.lifelines.len(), 2);
    assert_eq!(l.lifeline_lanes, 1, "{:?}", l.lifelines);
}

#[test]
fn ops_follow_time_and_sources_sit_next_to_their_reader() {
    let t = chain_trace();
    let time = LayoutOptions {
        x_axis: XAxis::Time,
        ..LayoutOptions::default()
    };
    let l = layout(&t, &NodeSet::all(&t), time);
    let op = |id| NodeRef::Op(t.op_by_id(id).unwrap());
    let var = |id| NodeRef::Var(t.var_by_id(id).unwrap());
    assert!(x_of(&l, &t, op("op-extract")) < x_of(&l, &t, op("op-answer")));
    assert!(x_of(&l, &t, op("op-answer")) < x_of(&l, &t, op("op-other")));
    // The prompt is read by the answer op: it sits one column left of it, not at the start.
    let gap = LayoutOptions::default().column_gap;
    assert!((x_of(&l, &t, op("op-answer")) - x_of(&l, &t, var("prompt@1")) - gap).abs() < 1e-3);
    // Deterministic.
    assert_eq!(l, layout(&t, &NodeSet::all(&t), time));
}

#[test]
fn rank_axis_puts_independent_ops_in_one_column_stacked_by_time() {
    let t = chain_trace();
    let l = layout(&t, &NodeSet::all(&t), LayoutOptions::default());
    let op = |id| *l.get(NodeRef::Op(t.op_by_id(id).unwrap())).unwrap();
    let (extract, answer, other) = (op("op-extract"), op("op-answer"), op("op-other"));
    assert_eq!(extract.column, other.column);
    assert!(extract.lane < other.lane, "earlier op higher up");
    assert!(answer.column > extract.column);
    assert!(
        l.columns
            < layout(
                &t,
                &NodeSet::all(&t),
                LayoutOptions {
                    x_axis: XAxis::Time,
                    ..LayoutOptions::default()
                }
            )
            .columns
    );
}

#[test]
fn a_column_follows_its_inputs_not_just_time() {
    // a (t1), b (t2) feed op-b (t3) and op-a (t4): by time op-b would sit above op-a and
    // the edges would cross; by barycenter each op sits level with its input.
    let t = trace_of(
        &[
            ("a", 1, "2024-01-01 00:00:01.000"),
            ("b", 1, "2024-01-01 00:00:02.000"),
            ("x", 1, "2024-01-01 00:00:03.000"),
            ("y", 1, "2024-01-01 00:00:04.000"),
        ],
        &[
            ("op-b", "2024-01-01 00:00:03.000"),
            ("op-a", "2024-01-01 00:00:04.000"),
        ],
        &[("b@1", "x@1", "op-b"), ("a@1", "y@1", "op-a")],
    );
    let l = layout(&t, &NodeSet::all(&t), LayoutOptions::default());
    let lane = |n| l.get(n).unwrap().lane;
    let (a, b) = (
        lane(NodeRef::Var(t.var_by_id("a@1").unwrap())),
        lane(NodeRef::Var(t.var_by_id("b@1").unwrap())),
    );
    let (op_a, op_b) = (
        lane(NodeRef::Op(t.op_by_id("op-a").unwrap())),
        lane(NodeRef::Op(t.op_by_id("op-b").unwrap())),
    );
    assert!(a < b);
    assert!(op_a < op_b, "op-a {op_a} op-b {op_b}");
}

#[test]
fn subset_limits_nodes_and_edges() {
    let t = chain_trace();
    let pred = t.var_by_id("pred@1").unwrap();
    let set = backward_reach(&t, &[pred]);
    let l = layout(&t, &set, LayoutOptions::default());
    assert_eq!(l.nodes.len(), set.len());
    assert_eq!(l.edges.len(), 5); // m→extract→fact→answer←prompt, answer→pred
    assert!(l
        .get(NodeRef::Op(t.op_by_id("op-other").unwrap()))
        .is_none());
}

#[test]
fn fixture_failure_views_lay_out() {
    let bytes = include_bytes!("../../tests/fixtures/smartcomment/locomo/locomo_locomo-1.json");
    let t = crate::load(bytes, crate::LoadOptions::default())
        .unwrap()
        .trace;
    let all = layout(&t, &NodeSet::all(&t), LayoutOptions::default());
    assert!(all.lifeline_lanes >= 1);
    assert!(all.lifelines.iter().any(|l| l.nodes.len() == 3));
    for case in &t.cases {
        let verdict = case.annotation.as_ref().map(|a| a.op_id.as_str());
        let set = failure_view(&t, case, verdict);
        let l = layout(&t, &set, LayoutOptions::default());
        assert_eq!(l.nodes.len(), set.len());
        assert!(l
            .edges
            .iter()
            .all(|e| l.nodes[e.from as usize].x < l.nodes[e.to as usize].x));
        let path = information_path(&t, &set, case, verdict);
        assert!(!path.is_empty());
    }
}
