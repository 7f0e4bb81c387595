//! The reference memory systems of other shapes (NaiveRAG, EverMemOS; Mem0 is covered by
//! `memsys_bench.rs`): each answers clean with reasonable accuracy, every error type it can
//! have is injected and verified, the same seed writes the same files, and the OTLP export
//! imports with memtrace's OTLP reader with its sidecar ids resolving. Reads
//! `tests/data/locomo/` at run time.
//!
//! `heldout_baseline` (ignored: slow) prints the info-flow attributor's accuracy per system and
//! format on the HELD-OUT seeds 11 and 12 — nothing is tuned on them.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed expectation should panic

mod common {
    include!("common/locomo.rs");
}

use std::collections::BTreeMap;

use memtrace::format::{load, sidecar, Format, LoadOptions};
use memtrace::model::{ErrorType, Trace};
use memtrace_memsys::bench::{generate, BenchFile, BenchFormat, BenchOptions, BenchReport};
use memtrace_memsys::simulated::SimulatedLlm;
use memtrace_memsys::{Config, Conversation, System};

const OTHERS: [System; 3] = [System::NaiveRag, System::EverMemOs, System::AMem];

fn convs() -> Vec<Conversation> {
    let dir = common::locomo_dir();
    common::conversations(&dir)
}

fn bench(
    convs: &[Conversation],
    system: System,
    format: BenchFormat,
    per_type: usize,
    seed: u64,
) -> BenchReport {
    let opts = BenchOptions {
        per_type,
        seed,
        system,
        format,
        ..BenchOptions::default()
    };
    futures_executor::block_on(generate(&SimulatedLlm, convs, &opts)).expect("generate")
}

/// The file's trace with its annotations (embedded, or from the OTLP sidecar).
fn trace_of(f: &BenchFile) -> Trace {
    let loaded =
        load(&f.bytes, LoadOptions::default()).expect("a generated file loads in strict mode");
    let mut t = loaded.trace;
    if let Some(side) = &f.sidecar {
        assert_eq!(loaded.format, Format::Otlp, "{}", f.name);
        let n = sidecar::attach(&mut t, side).expect("the sidecar's ids resolve in the import");
        assert_eq!(n, f.cases.len(), "{}", f.name);
    }
    t
}

#[test]
fn each_system_answers_most_questions_clean() {
    let convs = convs();
    for system in OTHERS {
        let (mut right, mut total) = (0usize, 0usize);
        for conv in &convs {
            let cfg = Config {
                system,
                ..Config::default()
            };
            let run = common::clean_run(conv, &cfg, &common::single_hop(conv));
            let (r, t) = run.accuracy(|_| true);
            right += r;
            total += t;
        }
        let share = right as f64 / total as f64;
        println!(
            "{}: clean category-4 accuracy {right}/{total} = {:.1} %",
            system.layer_type(),
            100.0 * share
        );
        assert!(
            share >= 0.5,
            "{}: clean accuracy {share:.3} is below 50 %",
            system.layer_type()
        );
    }
}

#[test]
fn every_error_type_a_system_can_have_is_injected_and_verified() {
    let convs = convs();
    for system in OTHERS {
        let report = bench(&convs, system, BenchFormat::Smartcomment, 3, 7);
        let mut by_type: BTreeMap<ErrorType, usize> = BTreeMap::new();
        for f in &report.files {
            let t = trace_of(f);
            assert_eq!(t.meta.project_id, serde_json::json!(system.layer_type()));
            common::assert_every_failure_annotated(&t, &f.name);
            for c in &t.cases {
                let a = c.annotation.as_ref().expect("annotated");
                assert!(
                    t.op_by_id(&a.op_id).is_some(),
                    "{}: the annotated op exists",
                    f.name
                );
                assert_eq!(
                    c.judge_score,
                    Some(0.0),
                    "{}: the annotated question is judged wrong",
                    f.name
                );
                *by_type.entry(a.error_type).or_insert(0) += 1;
            }
        }
        println!("{}: {by_type:?}", system.layer_type());
        for kind in ErrorType::MEMORY {
            let n = by_type.get(&kind).copied().unwrap_or(0);
            if system.error_types().contains(&kind) {
                assert!(n >= 3, "{}: only {n} verified {kind}", system.layer_type());
            } else {
                assert_eq!(n, 0, "{}: it cannot have a {kind}", system.layer_type());
            }
        }
    }
}

#[test]
fn naiverag_extraction_faults_sit_on_the_update_category_add_op() {
    let report = bench(&convs(), System::NaiveRag, BenchFormat::Smartcomment, 3, 7);
    let mut seen = 0;
    for f in &report.files {
        let t = trace_of(f);
        for c in &t.cases {
            let a = c.annotation.as_ref().expect("annotated");
            if a.error_type == ErrorType::ExtractionError {
                let op = t.op(t.op_by_id(&a.op_id).expect("the op exists"));
                assert_eq!(
                    (op.op_name.as_str(), op.category.as_str()),
                    ("memory_system.add", "update")
                );
                seen += 1;
            }
        }
    }
    assert!(seen >= 3, "only {seen} extraction cases");
}

#[test]
fn same_seed_same_files_in_both_formats() {
    let convs = convs();
    for system in OTHERS {
        for format in [BenchFormat::Smartcomment, BenchFormat::Otlp] {
            let one = bench(&convs, system, format, 2, 3);
            let two = bench(&convs, system, format, 2, 3);
            assert!(!one.files.is_empty());
            assert_eq!(one.files.len(), two.files.len());
            for (a, b) in one.files.iter().zip(&two.files) {
                assert!(
                    a.name == b.name && a.bytes == b.bytes && a.sidecar == b.sidecar,
                    "{} differs between two runs with the same seed",
                    a.name
                );
            }
        }
    }
}

#[test]
fn otlp_export_imports_and_its_sidecar_ids_resolve() {
    let convs = convs();
    for system in System::ALL {
        let report = bench(&convs, system, BenchFormat::Otlp, 2, 5);
        assert!(!report.files.is_empty());
        for f in &report.files {
            assert!(
                std::path::Path::new(&f.name)
                    .extension()
                    .is_some_and(|e| e == "jsonl"),
                "{}",
                f.name
            );
            let text = String::from_utf8(f.bytes.clone()).expect("UTF-8");
            assert!(
                text.contains("\"openinference.span.kind\"")
                    && text.contains("\"gen_ai.request.model\"")
            );
            assert!(
                text.contains("retrieval.documents.0.document.id"),
                "{}: retriever documents",
                f.name
            );
            assert!(
                text.contains("{\\\"label\\\":\\\"WRONG\\\"}"),
                "{}: a judge span answers WRONG",
                f.name
            );
            assert!(
                !text.contains("EVALUATOR"),
                "{}: the judge is an LLM span",
                f.name
            );
            let t = trace_of(f);
            assert_eq!(t.cases.len(), f.cases.len());
            for c in &t.cases {
                let a = c.annotation.as_ref().expect("annotated");
                assert!(
                    a.op_id.starts_with("op-") && t.op_by_id(&a.op_id).is_some(),
                    "{}: {}",
                    f.name,
                    a.op_id
                );
                assert!(t.var_by_id(&c.query_id).is_some());
                assert!(
                    c.prediction_id
                        .as_deref()
                        .is_some_and(|p| t.var_by_id(p).is_some()),
                    "{}: prediction of {}",
                    f.name,
                    c.query_id
                );
            }
        }
    }
}

/// `(cases, op-id right, type right)` of the info-flow attributor over `files`, per type.
fn infoflow(files: &[BenchFile]) -> BTreeMap<ErrorType, (usize, usize, usize)> {
    let method = memtrace::attribution::InfoFlow::default();
    let mut out: BTreeMap<ErrorType, (usize, usize, usize)> = BTreeMap::new();
    for f in files {
        let t = trace_of(f);
        for c in &t.cases {
            let a = c.annotation.as_ref().expect("annotated");
            let e = out.entry(a.error_type).or_default();
            e.0 += 1;
            if let Ok(got) = method.attribute(&t, c) {
                e.1 += usize::from(got.op_id == a.op_id);
                e.2 += usize::from(got.error_type == a.error_type);
            }
        }
    }
    out
}

#[test]
#[ignore = "slow (12 benches of 20 cases per type): run with --release -- --ignored --nocapture"]
fn heldout_baseline() {
    let convs = convs();
    println!("| system | format | seed | cases | op-id accuracy | type accuracy | per type (op / type) |");
    println!("|---|---|---|---|---|---|---|");
    for system in System::ALL {
        for format in [BenchFormat::Smartcomment, BenchFormat::Otlp] {
            for seed in [11, 12] {
                let report = bench(&convs, system, format, 20, seed);
                let scores = infoflow(&report.files);
                let n: usize = scores.values().map(|s| s.0).sum();
                let op: usize = scores.values().map(|s| s.1).sum();
                let ty: usize = scores.values().map(|s| s.2).sum();
                let per: Vec<String> = scores
                    .iter()
                    .map(|(k, s)| {
                        format!(
                            "{k} {}: {:.0}/{:.0}",
                            s.0,
                            100.0 * s.1 as f64 / s.0 as f64,
                            100.0 * s.2 as f64 / s.0 as f64
                        )
                    })
                    .collect();
                println!(
                    "| {} | {format:?} | {seed} | {n} | {:.1} % | {:.1} % | {} |",
                    system.name(),
                    100.0 * op as f64 / n as f64,
                    100.0 * ty as f64 / n as f64,
                    per.join("; ")
                );
                assert!(
                    n >= 20 * system.error_types().len() / 2,
                    "{}: only {n} cases",
                    system.name()
                );
            }
        }
    }
}

#[test]
fn amem_faults_sit_on_the_op_that_did_the_work() {
    let report = bench(&convs(), System::AMem, BenchFormat::Smartcomment, 3, 7);
    let expected = [
        (ErrorType::ExtractionError, "amem.add_note"),
        (ErrorType::UpdateError, "amem.process_memory"),
        (ErrorType::DeletionError, "amem.consolidate_memories"),
        (ErrorType::RetrievalError, "amem.search_agentic"),
        (ErrorType::ResponseError, "question-answering"),
    ];
    let mut seen: BTreeMap<ErrorType, usize> = BTreeMap::new();
    let mut tombstones = 0;
    for f in &report.files {
        let t = trace_of(f);
        for c in &t.cases {
            let a = c.annotation.as_ref().expect("annotated");
            let op = t.op(t.op_by_id(&a.op_id).expect("the op exists"));
            let want = expected
                .iter()
                .find(|(k, _)| *k == a.error_type)
                .map(|e| e.1);
            assert_eq!(Some(op.op_name.as_str()), want, "{}: {}", f.name, a.op_id);
            *seen.entry(a.error_type).or_insert(0) += 1;
            if a.error_type == ErrorType::DeletionError {
                tombstones += t
                    .edges
                    .iter()
                    .filter(|e| e.op_id == a.op_id)
                    .filter_map(|e| t.var_by_id(&e.target_full_node_id))
                    .filter(|&v| {
                        memtrace::model::pyrepr::display(&t.var(v).value).contains("deleted")
                    })
                    .count();
            }
        }
    }
    println!("A-Mem: {seen:?}");
    assert_eq!(seen.len(), 5, "every error type: {seen:?}");
    assert!(
        tombstones >= 3,
        "the consolidation writes tombstone versions"
    );
}
