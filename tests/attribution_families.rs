//! Info-flow accuracy per memory-system family, on generator seeds held out of tuning: 11, 12
//! and 21. Tuning used seeds 1-6, 31 and 32 only.
//! Measured once at the end (issue 14, op-id / type), after the "answer repeated a corrupted
//! copy" rule (tuned on seeds 1-6, 31, 32 of Mem0, NaiveRAG and EverMemOS):
//! - Mem0:      seed 11 0.970 / 0.970, seed 12 1.000 / 1.000, seed 21 0.980 / 0.980 (100 cases each)
//! - NaiveRAG:  seed 11 1.000 / 1.000, seed 12 0.967 / 0.967, seed 21 0.933 / 0.950 (60 cases each)
//! - EverMemOS: seed 11 0.925 / 0.925, seed 12 0.863 / 0.863, seed 21 0.850 / 0.850 (80 cases each)
//! - A-Mem (a family never tuned on): seed 11 0.910, seed 12 0.960, seed 21 0.910
//!   (op-id = type, 100 cases each)
//!
//! Then (session 13) the relative-date corruption rule, answer words held only as close together
//! as the evidence has them, and EverMemOS faults that target only an item or fact stating the
//! whole answer (a profile item "dramas and romcoms" is not "drama and romance"):
//! - EverMemOS: seed 11 0.925, seed 12 0.912, seed 21 0.887 (op-id = type)
//! - A-Mem: seed 11 0.910, seed 12 0.980, seed 21 0.920; Mem0 and NaiveRAG unchanged
//!
//! Then the generator keeps only faults that fit the error types' definitions: a question is a
//! target only when the clean answer states the whole gold answer (not one word of it that the
//! judge passes), and a memory fault (extraction, update, deletion, retrieval) only when no
//! retrieved memory still states the whole answer (else the answer op failed):
//! - Mem0:      seed 11 0.990 / 0.990, seed 12 1.000 / 1.000, seed 21 1.000 / 1.000
//! - NaiveRAG:  seed 11 0.983 / 1.000, seed 12 0.983 / 0.983, seed 21 0.983 / 1.000
//! - EverMemOS: seed 11 0.988 / 0.988, seed 12 0.975 / 0.988, seed 21 0.950 / 0.950
//! - A-Mem (never tuned on): seed 11 0.950, seed 12 0.930, seed 21 0.950 (op-id = type)
//!
//! Then a long literal gold answer (5+ words) needs half its words (was 0.4) close together:
//! NaiveRAG seed 12 1.000 / 1.000, the rest unchanged.
//!
//! Then (session 14, tuned on seeds 1-6, 31, 32 and 41-44 of EverMemOS) a "when" answered only
//! by a message's time is not held by an undated restatement, memory versions older than the
//! evidence are not followed, gold sources are taken near the annotated evidence, a negated
//! question's answer stands under its negation, and "a year ago" is that month a year back:
//! - Mem0 seed 11 1.000 / 1.000; EverMemOS seed 21 0.963 / 0.963; the rest unchanged.
//!
//! Then (session 16, same tuning seeds) a memory version that dropped the item stating the
//! answer while keeping a vaguer one lost the information, a text must speak of what the
//! question asked about, and a name alone does not hold a longer answer:
//! - EverMemOS seed 11 1.000 / 1.000 (tuning seeds 928 → 937 of 959); the rest unchanged.
//!
//! Then (session 32, tuned on the lab's langmem conversations and these families' tuning seeds)
//! an added negation is one the evidence does not say in the same place ("long time *no* see"):
//! Mem0 seed 11 0.990 → 1.000, seed 12 0.980 → 0.990, seed 21 0.990 → 1.000; the rest unchanged.
//!
//! The target is 0.95 / 0.98 per family (the held-out seeds together), checked as such for
//! Mem0, NaiveRAG and EverMemOS. Each per-seed floor is what was measured minus a small
//! margin, so a regression fails.
//! Reads `tests/data/locomo/` and fails when it is absent.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed expectation should panic

mod common {
    include!("common/locomo.rs");
}

use memtrace::attribution::{InfoFlow, RoleConfig, Roles};
use memtrace::format::{load, LoadOptions};
use memtrace_memsys::bench::{generate, BenchOptions};
use memtrace_memsys::simulated::SimulatedLlm;
use memtrace_memsys::System;

/// (op-id right, error-type right, cases) of info-flow on a generated bench.
fn accuracy(system: System, seed: u64) -> (usize, usize, usize) {
    let dir = common::locomo_dir();
    let convs = common::conversations(&dir);
    let opts = BenchOptions {
        per_type: 20,
        seed,
        system,
        ..BenchOptions::default()
    };
    let report =
        futures_executor::block_on(generate(&SimulatedLlm, &convs, &opts)).expect("generate");
    let infoflow = InfoFlow::default();
    let (mut op, mut ty, mut n) = (0usize, 0usize, 0usize);
    for f in &report.files {
        let t = load(&f.bytes, LoadOptions::default()).unwrap().trace;
        let roles = Roles::infer(&t, &RoleConfig::default());
        for c in &t.cases {
            let want = c.annotation.as_ref().expect("annotated");
            let got = infoflow.attribute_with(&t, &roles, c).expect("attributed");
            n += 1;
            op += usize::from(got.op_id == want.op_id);
            ty += usize::from(got.error_type == want.error_type);
        }
    }
    let share = |k: usize| k as f64 / n as f64;
    println!(
        "{system:?} seed {seed}: op-id {:.3}, type {:.3} over {n} cases",
        share(op),
        share(ty)
    );
    (op, ty, n)
}

/// Checks each held-out `(seed, op-id floor, type floor)`, then the family over all of them
/// against `family` (op-id, type): the acceptance is per family and per format.
fn check(system: System, floors: &[(u64, f64, f64)], family: (f64, f64)) {
    let (mut all_op, mut all_ty, mut all_n) = (0, 0, 0);
    for &(seed, floor_op, floor_type) in floors {
        let (op, ty, n) = accuracy(system, seed);
        assert!(n >= 40, "only {n} cases");
        let (op_share, ty_share) = (op as f64 / n as f64, ty as f64 / n as f64);
        assert!(
            op_share >= floor_op && ty_share >= floor_type,
            "{system:?} seed {seed}: op-id {op_share:.3} (floor {floor_op}), type {ty_share:.3} (floor {floor_type})"
        );
        (all_op, all_ty, all_n) = (all_op + op, all_ty + ty, all_n + n);
    }
    let (op, ty) = (all_op as f64 / all_n as f64, all_ty as f64 / all_n as f64);
    println!("{system:?} held-out seeds together: op-id {op:.3} ({all_op}/{all_n}), type {ty:.3} ({all_ty}/{all_n})");
    assert!(
        op >= family.0 && ty >= family.1,
        "{system:?} over the held-out seeds: op-id {op:.3} (floor {}), type {ty:.3} (floor {})",
        family.0,
        family.1
    );
}

/// The target for Mem0, NaiveRAG and the third system (EverMemOS), per family.
const TARGET: (f64, f64) = (0.95, 0.98);

#[test]
fn mem0_held_out_seeds() {
    check(
        System::Mem0,
        &[(11, 0.98, 0.98), (12, 0.98, 0.98), (21, 0.98, 0.98)],
        TARGET,
    );
}

/// Extraction faults in `memory_system.add` (category `update`) are typed ExtractionError.
#[test]
fn naiverag_held_out_seeds() {
    check(
        System::NaiveRag,
        &[(11, 0.96, 0.98), (12, 0.97, 0.97), (21, 0.96, 0.98)],
        TARGET,
    );
}

/// Seed 21 alone is below the type target (0.963 of 0.98); the three seeds together meet it.
#[test]
fn evermemos_held_out_seeds() {
    check(
        System::EverMemOs,
        &[(11, 0.98, 0.98), (12, 0.95, 0.96), (21, 0.94, 0.94)],
        TARGET,
    );
}

/// A-Mem: a family never tuned on (no seed of it was looked at while tuning); below the target.
#[test]
fn amem_held_out_family() {
    check(
        System::AMem,
        &[(11, 0.92, 0.92), (12, 0.91, 0.91), (21, 0.92, 0.92)],
        (0.93, 0.93),
    );
}
