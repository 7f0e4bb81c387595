//! The OTLP export of each reference system (Mem0, NaiveRAG, EverMemOS, A-Mem), imported by the span
//! importer: every annotated failure is detected without a user rule, and the info-flow
//! attributor keeps a floor on op-id and type accuracy. Seeds 11, 12 and 21 are HELD OUT: the
//! importer was tuned on seeds 1-6 only, never on these (seed 21 joined this test in session 19;
//! before that it had been measured, never tuned on). The target for these runs is
//! 0.90 / 0.95 per family. Reads `tests/data/locomo/` at run time.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed expectation should panic

mod common {
    include!("common/locomo.rs");
}

use std::collections::BTreeSet;

use memtrace::format::{load, sidecar, LoadOptions};
use memtrace_memsys::bench::{generate, BenchFile, BenchFormat, BenchOptions};
use memtrace_memsys::simulated::SimulatedLlm;
use memtrace_memsys::{Conversation, System};

const HELD_OUT: [u64; 3] = [11, 12, 21];

fn convs() -> Vec<Conversation> {
    let dir = common::locomo_dir();
    common::conversations(&dir)
}

fn files(convs: &[Conversation], system: System, seed: u64) -> Vec<BenchFile> {
    let opts = BenchOptions {
        per_type: 20,
        seed,
        system,
        format: BenchFormat::Otlp,
        ..BenchOptions::default()
    };
    futures_executor::block_on(generate(&SimulatedLlm, convs, &opts))
        .expect("generate")
        .files
}

/// The query ids the sidecar annotates.
fn annotated(f: &BenchFile) -> BTreeSet<String> {
    let side: serde_json::Value =
        serde_json::from_slice(f.sidecar.as_ref().expect("an OTLP file has a sidecar")).unwrap();
    side["annotations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["query_id"].as_str().unwrap().to_owned())
        .collect()
}

/// `(cases, op-id right, type right)` over one family's held-out benches; asserts on the way
/// that the failures detected without a rule are exactly the annotated ones.
fn run(system: System) -> (usize, usize, usize) {
    let convs = convs();
    let method = memtrace::attribution::InfoFlow::default();
    let (mut n, mut op, mut ty) = (0, 0, 0);
    for seed in HELD_OUT {
        for f in files(&convs, system, seed) {
            let mut t = load(&f.bytes, LoadOptions::default()).unwrap().trace;
            // Loading found the cases by the ordered rules alone, no user rule.
            let found: BTreeSet<String> = t.cases.iter().map(|c| c.query_id.clone()).collect();
            assert_eq!(
                found,
                annotated(&f),
                "{} seed {seed}: detected failures",
                f.name
            );
            sidecar::attach(&mut t, f.sidecar.as_ref().unwrap()).unwrap();
            for c in &t.cases {
                let a = c.annotation.as_ref().expect("annotated");
                n += 1;
                if let Ok(got) = method.attribute(&t, c) {
                    op += usize::from(got.op_id == a.op_id);
                    ty += usize::from(got.error_type == a.error_type);
                }
            }
        }
    }
    println!(
        "{}: {n} cases, op-id {:.3}, type {:.3}",
        system.name(),
        op as f64 / n as f64,
        ty as f64 / n as f64
    );
    (n, op, ty)
}

fn check(system: System, op_floor: f64, type_floor: f64) {
    let (n, op, ty) = run(system);
    assert!(n >= 40, "{}: only {n} cases", system.name());
    let (op, ty) = (op as f64 / n as f64, ty as f64 / n as f64);
    assert!(
        op >= op_floor,
        "{}: op-id {op:.3} < {op_floor}",
        system.name()
    );
    assert!(
        ty >= type_floor,
        "{}: type {ty:.3} < {type_floor}",
        system.name()
    );
}

#[test]
fn mem0_otlp_failures_found_and_attributed() {
    check(System::Mem0, MEM0.0, MEM0.1);
}

#[test]
fn naiverag_otlp_failures_found_and_attributed() {
    check(System::NaiveRag, NAIVERAG.0, NAIVERAG.1);
}

#[test]
fn evermemos_otlp_failures_found_and_attributed() {
    check(System::EverMemOs, EVERMEMOS.0, EVERMEMOS.1);
}

/// A-Mem, a family never tuned on.
#[test]
fn amem_otlp_failures_found_and_attributed() {
    check(System::AMem, AMEM.0, AMEM.1);
}

// (op-id, type) floors: measured on the held-out seeds 11 + 12 minus 0.02-0.03 (branch `otlp3`:
// Mem0 0.925 / 0.925, NaiveRAG 0.958 / 0.958, EverMemOS 0.819 / 0.825; tuned on seeds 1-6 only).
// After the "answer read a memory that lost it" rule (seeds 1, 2, 31, 32 tuned): Mem0 0.940,
// NaiveRAG 0.958 / 0.967, EverMemOS 0.831 / 0.838, A-Mem 0.950. After the "answer ignored the
// gold it had" rule: NaiveRAG 0.967 / 0.975, the others unchanged. After the relative-date
// corruption rule, close-together answer words and whole-answer EverMemOS fault targets:
// EverMemOS 0.881 / 0.887, the others unchanged. After the generator kept only faults that fit
// the error types' definitions (see `attribution_families.rs`): Mem0 0.935 / 0.950, NaiveRAG
// 0.942 / 0.967, EverMemOS 0.950 / 0.956, A-Mem 0.945. After a long gold answer needs half its
// words: NaiveRAG 0.950 / 0.975, the others unchanged. After the weakened-version and
// asked-about rules (session 16): Mem0 0.940 / 0.955, the others unchanged. After a store's
// input is matched with JSON's escapes undone (session 19): Mem0 1.000 / 1.000, NaiveRAG
// 0.958 / 0.975, EverMemOS 0.975 / 0.981, A-Mem unchanged. With seed 21 added (seeds 11, 12,
// 21): Mem0 1.000 / 1.000 (300 cases), NaiveRAG 0.956 / 0.978 (180), EverMemOS 0.958 / 0.967
// (240), A-Mem 0.950 / 0.950 (300).
const MEM0: (f64, f64) = (0.97, 0.97);
const NAIVERAG: (f64, f64) = (0.93, 0.95);
const EVERMEMOS: (f64, f64) = (0.93, 0.95);
/// A-Mem, never tuned on.
const AMEM: (f64, f64) = (0.93, 0.93);
