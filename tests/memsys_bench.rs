//! `memsys::bench::generate` over the LoCoMo conversations: at least 20 verified cases
//! of each error type, files that load in strict mode with one annotation per failure, and
//! the same seed giving the same files; the info-flow attributor finds the injected faults of
//! two seeds. Reads `tests/data/locomo/` (fails when absent).
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed expectation should panic

mod common {
    include!("common/locomo.rs");
}

use std::collections::BTreeMap;

use memtrace::format::{load, LoadOptions};
use memtrace::model::ErrorType;
use memtrace_memsys::bench::{generate, BenchOptions, BenchReport};
use memtrace_memsys::simulated::SimulatedLlm;

#[test]
fn twenty_verified_cases_of_each_type() {
    let report = bench(7);
    println!(
        "{} files, {} cases kept of {} planned, per type {:?}",
        report.files.len(),
        report.kept,
        report.planned,
        report.per_type
    );
    assert!(report.kept >= 100, "only {} cases", report.kept);
    let mut by_type: BTreeMap<ErrorType, usize> = BTreeMap::new();
    for f in &report.files {
        let loaded =
            load(&f.bytes, LoadOptions::default()).expect("a generated file loads in strict mode");
        let t = loaded.trace;
        common::assert_every_failure_annotated(&t, &f.name);
        for c in &t.cases {
            let a = c.annotation.as_ref().expect("annotated");
            *by_type.entry(a.error_type).or_insert(0) += 1;
            let op = t
                .op_by_id(&a.op_id)
                .map(|o| t.op(o).category.clone())
                .expect("the annotated op exists");
            let expected = match a.error_type {
                ErrorType::ExtractionError => "extraction",
                ErrorType::UpdateError => "update",
                ErrorType::DeletionError => "deletion",
                ErrorType::RetrievalError => "retrieval",
                _ => "evaluation",
            };
            assert_eq!(
                op, expected,
                "{}: {} points at a {op} op",
                f.name, a.error_type
            );
            assert_eq!(c.judge_score, Some(0.0));
        }
    }
    check_infoflow(&report.files, 7);
    for kind in ErrorType::MEMORY {
        assert!(
            by_type.get(&kind).copied().unwrap_or(0) >= 20,
            "{kind}: {by_type:?}"
        );
    }
}

/// The offline attributor must find the injected faults: op-id accuracy ≥ 90 % and error-type
/// accuracy ≥ 93 % (measured 99–100 % on seeds 1, 2 and 7, 97–100 % on seeds 3–6 and 8).
fn check_infoflow(files: &[memtrace_memsys::bench::BenchFile], seed: u64) {
    let infoflow = memtrace::attribution::InfoFlow::default();
    let (mut op_right, mut type_right, mut attributed) = (0usize, 0usize, 0usize);
    for f in files {
        let t = load(&f.bytes, LoadOptions::default()).unwrap().trace;
        for c in &t.cases {
            let a = c.annotation.as_ref().expect("annotated");
            let got = infoflow
                .attribute(&t, c)
                .expect("infoflow attributes every case");
            attributed += 1;
            op_right += usize::from(got.op_id == a.op_id);
            type_right += usize::from(got.error_type == a.error_type);
        }
    }
    let (op_acc, type_acc) = (
        op_right as f64 / attributed as f64,
        type_right as f64 / attributed as f64,
    );
    println!("infoflow on the generated bench (seed {seed}): op-id accuracy {op_acc:.3}, error-type accuracy {type_acc:.3} over {attributed} cases");
    assert!(attributed >= 100, "only {attributed} cases");
    assert!(
        op_acc >= 0.90 && type_acc >= 0.93,
        "infoflow fell below its floor (op 0.90, type 0.93): op {op_acc:.3}, type {type_acc:.3}"
    );
}

#[test]
fn infoflow_finds_the_injected_faults_of_a_second_seed() {
    check_infoflow(&bench(1).files, 1);
}

/// A bench of 20 cases per type from the LoCoMo conversations.
fn bench(seed: u64) -> BenchReport {
    let convs = common::conversations(&common::locomo_dir());
    let opts = BenchOptions {
        per_type: 20,
        seed,
        ..BenchOptions::default()
    };
    futures_executor::block_on(generate(&SimulatedLlm, &convs, &opts)).expect("generate")
}

#[test]
fn same_seed_same_files() {
    let dir = common::locomo_dir();
    let convs = common::conversations(&dir);
    let opts = |seed| BenchOptions {
        per_type: 2,
        seed,
        ..BenchOptions::default()
    };
    let one =
        futures_executor::block_on(generate(&SimulatedLlm, &convs, &opts(3))).expect("generate");
    let two = futures_executor::block_on(generate(&SimulatedLlm, &convs, &opts(3)))
        .expect("generate again");
    assert!(!one.files.is_empty());
    assert_eq!(one.files.len(), two.files.len());
    for (a, b) in one.files.iter().zip(&two.files) {
        assert!(
            a.name == b.name && a.bytes == b.bytes,
            "{} differs between two runs with the same seed",
            a.name
        );
    }
    let other = futures_executor::block_on(generate(&SimulatedLlm, &convs, &opts(4)))
        .expect("generate with another seed");
    assert!(
        other
            .files
            .iter()
            .zip(&one.files)
            .any(|(a, b)| a.bytes != b.bytes),
        "another seed changes the files"
    );
}
