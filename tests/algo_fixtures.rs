//! The graph engine on the real smartcomment fixtures: start-point recall@8 against the gold
//! evidence of the annotated failures, and structural invariants of the index.
//!
//! The fixtures are read from `$MEMTRACE_FIXTURES` (default `tests/fixtures/smartcomment/locomo`
//! in the repository). Run with `--nocapture` to see the recall table.
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use memtrace::algo::{
    answer_op, evaluate_start_points, failure_slice, lifeline, GraphIndex, NodeRef,
    StartPointOptions,
};
use memtrace::format::{load, LoadOptions};
use memtrace::Trace;

fn fixtures() -> Vec<(String, Trace)> {
    let dir = std::env::var_os("MEMTRACE_FIXTURES").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/smartcomment/locomo"),
        PathBuf::from,
    );
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| {
            panic!(
                "cannot list {} ({e}); set MEMTRACE_FIXTURES to the fixture folder",
                dir.display()
            )
        })
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no .json fixtures in {}", dir.display());
    files
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, load(&bytes, LoadOptions::default()).unwrap().trace)
        })
        .collect()
}

#[test]
fn start_point_recall_at_8_is_at_least_0_9() {
    let opts = StartPointOptions::default();
    let mut all = Vec::new();
    for (name, trace) in fixtures() {
        let report = evaluate_start_points(&trace, &opts);
        for c in &report.cases {
            let Some(r) = c.recall else { continue };
            let hit: Vec<&String> = c
                .evidence_ids
                .iter()
                .filter(|e| c.start_points.contains(e))
                .collect();
            println!(
                "{name} {} recall@{} = {r:.3} (gold {:?}, found {hit:?})",
                c.query_id, report.k, c.evidence_ids
            );
            all.push(r);
        }
    }
    assert!(!all.is_empty(), "no annotated case with gold evidence");
    let mean = all.iter().sum::<f64>() / all.len() as f64;
    println!(
        "start points: mean recall@{} over {} annotated failures = {mean:.3}",
        opts.limit,
        all.len()
    );
    assert!(mean >= 0.9, "mean recall@8 {mean:.3} < 0.9");
}

#[test]
fn index_invariants_hold_on_real_traces() {
    for (name, trace) in fixtures() {
        let g = GraphIndex::build(&trace).unwrap();
        for o in g.ops_in_topo_order() {
            let r = g.topo_rank(NodeRef::Op(o)).unwrap();
            for p in g.predecessors(NodeRef::Op(o)) {
                assert!(g.topo_rank(p).unwrap() < r, "{name}: input after its op");
            }
        }
        for case in &trace.cases {
            let slice = failure_slice(&trace, &g, case).unwrap();
            let answer = answer_op(&trace, case).unwrap();
            let q = trace.var_by_id(&case.query_id).unwrap();
            assert!(
                trace.flow.op_inputs[answer.get()].contains(&q),
                "{name}: the answer op reads the question"
            );
            assert!(
                slice.ops.contains(&answer),
                "{name}: the answer op is in its own slice"
            );
            assert!(
                slice.contains_var(q),
                "{name}: the question is in the slice of its answer"
            );
            let readers = slice
                .ops
                .iter()
                .filter(|o| trace.flow.op_inputs[o.get()].contains(&q))
                .count();
            assert!(
                readers >= 2,
                "{name}: the question's retrieval is in the slice too"
            );
            // No other question's answer leaks in; the answer op is the last op.
            let other_questions = slice
                .vars
                .iter()
                .filter(|&&v| v != q && trace.var(v).category.contains("query"))
                .count();
            assert_eq!(
                other_questions, 0,
                "{name}: {} slice holds other questions",
                case.query_id
            );
            assert_eq!(slice.ops.last(), Some(&answer), "{name}");
        }
        // Every memory unit's lifeline starts with a birth, and deletions end it.
        let units: Vec<&str> = trace
            .flow
            .versions
            .iter()
            .map(|(name, _)| name)
            .filter(|k| k.starts_with("memory-unit-"))
            .collect();
        assert!(!units.is_empty());
        let mut ended_by = Vec::new();
        for u in units {
            let l = lifeline(&trace, u).unwrap();
            assert_eq!(
                l.versions[0].kind,
                memtrace::algo::VersionKind::Birth,
                "{name} {u}"
            );
            ended_by.extend(l.ended_by);
        }
        // Each deletion op of the fixture ends exactly one unit's lifeline, and nothing else does.
        let mut deletions: Vec<_> = (0..trace.ops.len() as u32)
            .map(memtrace::model::OpIx)
            .filter(|&o| trace.op(o).category == "deletion")
            .collect();
        ended_by.sort();
        deletions.sort();
        assert_eq!(ended_by, deletions, "{name}");
    }
}
