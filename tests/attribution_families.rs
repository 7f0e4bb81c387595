//! Info-flow accuracy per memory-system family, on a generator seed held out of tuning: seed 11
//! (tuning used seeds 1, 2, 3 only; EverMemOS was tuned on seeds 1-3 in a second pass and
//! measured 0.838 / 0.838 on seed 11). Each floor is what was measured minus a small margin, so a regression fails.
//! Reads `../shared/data/locomo/` and fails when it is absent.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed expectation should panic

mod common {
    include!("common/locomo.rs");
}

use memtrace::attribution::{InfoFlow, RoleConfig, Roles};
use memtrace::format::{load, LoadOptions};
use memtrace::memsys::bench::{generate, BenchOptions};
use memtrace::memsys::simulated::SimulatedLlm;
use memtrace::memsys::System;

/// Held out of tuning for every family.
const HELD_OUT_SEED: u64 = 11;

/// (op-id accuracy, error-type accuracy, cases) of info-flow on a generated bench.
fn accuracy(system: System, seed: u64) -> (f64, f64, usize) {
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
    let (op, ty) = (op as f64 / n as f64, ty as f64 / n as f64);
    println!("{system:?} seed {seed}: op-id {op:.3}, type {ty:.3} over {n} cases");
    (op, ty, n)
}

fn check(system: System, floor_op: f64, floor_type: f64) {
    let (op, ty, n) = accuracy(system, HELD_OUT_SEED);
    assert!(n >= 40, "only {n} cases");
    assert!(
        op >= floor_op && ty >= floor_type,
        "{system:?}: op-id {op:.3} (floor {floor_op}), type {ty:.3} (floor {floor_type})"
    );
}

/// Measured 0.96 / 0.96 (100 cases).
#[test]
fn mem0_held_out_seed() {
    check(System::Mem0, 0.93, 0.93);
}

/// Measured 0.983 / 0.983 (60 cases): extraction faults in `memory_system.add` (category
/// `update`) are typed ExtractionError.
#[test]
fn naiverag_held_out_seed() {
    check(System::NaiveRag, 0.95, 0.95);
}

/// Measured 0.575 / 0.588 (80 cases): below the 0.95 / 0.98 target; this floor only keeps it
/// from getting worse.
#[test]
fn evermemos_held_out_seed() {
    check(System::EverMemOs, 0.80, 0.80);
}
