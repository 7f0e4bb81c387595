//! Failure slices on traces of the reference memory system (`memsys::bench::generate` over the
//! LoCoMo conversations): a slice follows each memory unit back to the op that wrote it,
//! not to a later retrieval that re-emitted it, and holds no other question. Reads
//! `tests/data/locomo/` (fails when absent). Run with `--nocapture` for the sizes.
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed expectation should panic

mod common {
    include!("common/locomo.rs");
}

use memtrace::algo::{failure_slice, GraphIndex};
use memtrace::format::{load, LoadOptions};
use memtrace_memsys::bench::{generate, BenchOptions};
use memtrace_memsys::simulated::SimulatedLlm;

#[test]
fn slices_reach_the_ops_that_wrote_the_memory() {
    let dir = common::locomo_dir();
    let convs = common::conversations(&dir);
    let opts = BenchOptions {
        per_type: 2,
        seed: 1,
        ..BenchOptions::default()
    };
    let report =
        futures_executor::block_on(generate(&SimulatedLlm, &convs, &opts)).expect("generate");
    let mut cases = 0;
    for f in &report.files {
        let t = load(&f.bytes, LoadOptions::default()).unwrap().trace;
        let g = GraphIndex::build(&t).unwrap();
        for c in &t.cases {
            let s = failure_slice(&t, &g, c).unwrap();
            let q = t.var_by_id(&c.query_id).unwrap();
            // Each produced variable in the slice has its earliest producer (by the ops'
            // recorded time) in the slice: the op that made it, whatever re-emitted it later.
            for &v in &s.vars {
                let earliest = t.flow.producers[v.get()]
                    .iter()
                    .min_by_key(|&&o| (&t.op(o).created_at, o))
                    .copied();
                if let Some(o) = earliest {
                    assert!(
                        s.ops.contains(&o),
                        "{} {}: {} leads back to {} ({}), which is not in the slice",
                        f.name,
                        c.query_id,
                        t.var(v).full_node_id,
                        t.op(o).op_name,
                        t.op(o).created_at
                    );
                }
            }
            let other_questions = s
                .vars
                .iter()
                .filter(|&&v| v != q && t.var(v).class_name.as_deref() == Some("query"))
                .count();
            assert_eq!(other_questions, 0, "{} {}", f.name, c.query_id);
            println!(
                "{} {}: slice of {} ops and {} variables",
                f.name,
                c.query_id,
                s.ops.len(),
                s.vars.len()
            );
            cases += 1;
        }
    }
    assert!(cases >= 10, "only {cases} cases");
}
