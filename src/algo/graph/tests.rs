//! The walk on seeded random DAGs: sweep and depth-first agree; positions are topological.

use super::*;
use crate::model::{EdgeRecord, NodeRecord, OpRecord};
use serde_json::json;

/// A seeded random DAG: ops read 1-3 earlier variables and make 1-2 new ones, sometimes
/// through an intermediate; "retrievals" link a fresh root to an existing variable
/// (re-emission), and an "answer" reads both.
fn random_trace(seed: u64, ops: usize) -> Trace {
    let mut x = seed;
    let mut rnd = |n: usize| {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((x >> 33) as usize) % n.max(1)
    };
    let mut t = Trace::default();
    let mut tick = 0u32;
    let var = |t: &mut Trace, tick: &mut u32| {
        *tick += 1;
        let i = t.vars.len();
        let mut r: NodeRecord =
            serde_json::from_value(json!({"created_at": format!("{:08}", *tick),
            "filename": "f", "lineno": 1, "name": format!("v{i}"), "version": 1, "value": "x"}))
            .unwrap();
        r.fill_computed();
        t.vars.push(r);
        format!("v{i}@1")
    };
    let mut edge_count = 0;
    let mut op = |t: &mut Trace, tick: &mut u32, pairs: &[(String, String)]| {
        *tick += 1;
        let id = format!("op-{}", t.ops.len());
        let r: OpRecord = serde_json::from_value(json!({"created_at": format!("{:08}", *tick),
            "filename": "f", "lineno": 1, "op_id": id, "op_name": "o"}))
        .unwrap();
        t.ops.push(r);
        for (a, b) in pairs {
            edge_count += 1;
            let e: EdgeRecord = serde_json::from_value(json!({"created_at": "0", "filename": "f",
                "lineno": 1, "edge_id": format!("e{edge_count}"), "op_id": id,
                "source_full_node_id": a, "target_full_node_id": b}))
            .unwrap();
            t.edges.push(e);
        }
    };
    for _ in 0..3 {
        var(&mut t, &mut tick);
    }
    for _ in 0..ops {
        let have = t.vars.len();
        let ins: Vec<String> = (0..=rnd(3))
            .map(|_| format!("v{}@1", have - 1 - rnd(have.min(40))))
            .collect();
        match rnd(6) {
            0 => {
                let q = var(&mut t, &mut tick);
                let old = format!("v{}@1", rnd(have));
                op(&mut t, &mut tick, &[(q.clone(), old.clone())]);
                let out = var(&mut t, &mut tick);
                op(&mut t, &mut tick, &[(q, out.clone()), (old, out)]);
            }
            1 => {
                let mid = var(&mut t, &mut tick);
                let out = var(&mut t, &mut tick);
                let mut pairs: Vec<(String, String)> =
                    ins.iter().map(|i| (i.clone(), mid.clone())).collect();
                pairs.push((mid, out));
                op(&mut t, &mut tick, &pairs);
            }
            _ => {
                let outs: Vec<String> = (0..=rnd(2)).map(|_| var(&mut t, &mut tick)).collect();
                let pairs: Vec<(String, String)> = ins
                    .iter()
                    .flat_map(|i| outs.iter().map(move |o| (i.clone(), o.clone())))
                    .collect();
                op(&mut t, &mut tick, &pairs);
            }
        }
    }
    t.reindex().unwrap();
    t
}

#[test]
fn sweep_and_depth_first_walk_agree() {
    let t = random_trace(11, 3000);
    let g = GraphIndex::build(&t).unwrap();
    let n = g.node_count();
    let mut big = 0;
    for k in (0..n).step_by(97) {
        let seeds = [g.node_ref(k as u32), g.node_ref(((k * 7) % n) as u32)];
        for dir in [Direction::Backward, Direction::Forward] {
            let dfs = g.reach_with_budget(&seeds, dir, usize::MAX);
            let sweep = g.reach_with_budget(&seeds, dir, 0);
            assert_eq!(dfs, sweep, "seeds {seeds:?} {dir:?}");
            assert!(dfs.windows(2).all(|w| w[0] < w[1]), "sorted");
            big = big.max(dfs.len());
        }
    }
    assert!(big > 1000, "some walks must be large: {big}");
}

#[test]
fn positions_are_a_topological_order() {
    let t = random_trace(5, 500);
    let g = GraphIndex::build(&t).unwrap();
    for x in 0..g.node_count() as u32 {
        assert_eq!(g.node(g.node_ref(x)), x);
        assert!(neighbours(&g.successors, x).iter().all(|&y| y > x));
    }
}

/// `m@1` made by `op-x` (recorded first) and by `op-y`, with these edge times.
fn two_producers(x_time: &str, y_time: &str) -> Trace {
    let mut t = Trace::default();
    for name in ["a", "b", "m"] {
        let mut r: NodeRecord = serde_json::from_value(json!({"created_at": "1",
            "filename": "f", "lineno": 1, "name": name, "version": 1, "value": "x"}))
        .unwrap();
        r.fill_computed();
        t.vars.push(r);
    }
    for (id, source, time) in [("op-x", "a@1", x_time), ("op-y", "b@1", y_time)] {
        let r: OpRecord = serde_json::from_value(json!({"created_at": time,
            "filename": "f", "lineno": 1, "op_id": id, "op_name": "o"}))
        .unwrap();
        t.ops.push(r);
        let e: EdgeRecord = serde_json::from_value(json!({"created_at": time, "filename": "f",
            "lineno": 1, "edge_id": format!("e-{id}"), "op_id": id,
            "source_full_node_id": source, "target_full_node_id": "m@1"}))
        .unwrap();
        t.edges.push(e);
    }
    t.reindex().unwrap();
    t
}

#[test]
fn the_earliest_edge_defines_a_version_and_record_order_breaks_ties() {
    let writer = |t: &Trace| {
        let m = t.var_by_id("m@1").unwrap();
        let op = defining_producers(t)[m.get()].unwrap();
        t.op(op).op_id.clone()
    };
    assert_eq!(writer(&two_producers("5", "3")), "op-y");
    assert_eq!(writer(&two_producers("3", "5")), "op-x");
    assert_eq!(writer(&two_producers("4", "4")), "op-x");
    let t = two_producers("5", "3");
    let g = GraphIndex::build(&t).unwrap();
    let m = NodeRef::Var(t.var_by_id("m@1").unwrap());
    let slice = g.ancestors(m);
    let b = NodeRef::Var(t.var_by_id("b@1").unwrap());
    let a = NodeRef::Var(t.var_by_id("a@1").unwrap());
    assert!(slice.contains(&b) && !slice.contains(&a), "{slice:?}");
}

#[test]
fn the_index_is_built_in_stages_a_host_can_yield_between() {
    let t = random_trace(7, 400);
    let mut building = GraphIndexBuild::new(&t);
    let mut stages = 1;
    let g = loop {
        match building.step() {
            None => stages += 1,
            Some(done) => break done.unwrap(),
        }
    };
    assert!(stages >= 6, "{stages} stages");
    assert_eq!(g.node_count(), t.vars.len() + t.ops.len());
    assert!(matches!(
        building.step(),
        Some(Err(AlgoError::Stale { .. }))
    ));
}

#[test]
fn a_build_that_failed_stays_failed() {
    let mut t = random_trace(3, 50);
    t.ops.pop();
    let mut building = GraphIndexBuild::new(&t);
    assert!(matches!(
        building.step(),
        Some(Err(AlgoError::Stale { .. }))
    ));
    for _ in 0..300 {
        assert!(matches!(
            building.step(),
            Some(Err(AlgoError::Stale { .. }))
        ));
    }
}
