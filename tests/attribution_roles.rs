//! Op roles come from what ops read and write: a NaiveRAG trace's `memory_system.add`
//! (category `update`) creates memory units from messages (extraction), its message buffer
//! passes messages on verbatim (other); a Mem0 trace keeps its roles when every op name and
//! category is replaced; the user's override wins and changes the verdict's type.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed expectation should panic

mod common {
    include!("common/locomo.rs");
}

use std::collections::BTreeMap;

use memtrace::attribution::{Basis, InfoFlow, OpRole, RoleConfig, Roles};
use memtrace::format::{load, LoadOptions};
use memtrace::model::{ErrorType, Trace};
use memtrace_memsys::bench::{generate, BenchFormat, BenchOptions};
use memtrace_memsys::simulated::SimulatedLlm;
use memtrace_memsys::System;

fn first_file(system: System) -> Trace {
    let dir = common::locomo_dir();
    let convs = common::conversations(&dir);
    let opts = BenchOptions {
        per_type: 2,
        seed: 1,
        system,
        ..BenchOptions::default()
    };
    let report =
        futures_executor::block_on(generate(&SimulatedLlm, &convs, &opts)).expect("generate");
    let f = report.files.first().expect("a file");
    load(&f.bytes, LoadOptions::default()).unwrap().trace
}

fn by_name(t: &Trace, cfg: &RoleConfig) -> BTreeMap<String, (OpRole, Basis)> {
    Roles::infer(t, cfg)
        .by_name(t)
        .into_iter()
        .map(|n| (n.op_name, (n.role, n.basis)))
        .collect()
}

#[test]
fn naiverag_roles_from_structure() {
    let t = first_file(System::NaiveRag);
    let roles = by_name(&t, &RoleConfig::default());
    println!("{roles:?}");
    assert_eq!(
        roles["memory_system.add"],
        (OpRole::Extraction, Basis::Structure)
    );
    assert_eq!(
        roles["memory_system.message_buffer_update"].0,
        OpRole::Other
    );
    assert_eq!(roles["memory_system.retrieve"].0, OpRole::Retrieval);
    assert_eq!(roles["question-answering"].0, OpRole::Response);
    assert_eq!(roles["llm-judge"].0, OpRole::Judge);
}

/// NaiveRAG as OTLP, judged by an LLM span (the e2e roles test's files): the answer copies
/// retrieved chunks, so a later answer's prompt holds an earlier prediction. Reading it does
/// not make the later answer a judge.
#[test]
fn naiverag_otlp_answers_stay_responses() {
    let dir = common::locomo_dir();
    let convs = common::conversations(&dir);
    let opts = BenchOptions {
        per_type: 2,
        seed: 3,
        system: System::NaiveRag,
        format: BenchFormat::Otlp,
        ..BenchOptions::default()
    };
    let report =
        futures_executor::block_on(generate(&SimulatedLlm, &convs[..1], &opts)).expect("generate");
    assert!(report.files.len() >= 2, "{} files", report.files.len());
    for f in &report.files {
        let t = load(&f.bytes, LoadOptions::default()).unwrap().trace;
        let roles = by_name(&t, &RoleConfig::default());
        println!("{}: {roles:?}", f.name);
        assert_eq!(
            roles["question_answering"].0,
            OpRole::Response,
            "{}",
            f.name
        );
        assert_eq!(roles["llm_judge"].0, OpRole::Judge, "{}", f.name);
    }
}

#[test]
fn mem0_roles_survive_meaningless_names() {
    let mut t = first_file(System::Mem0);
    let before = by_name(&t, &RoleConfig::default());
    let mut renamed: BTreeMap<String, String> = BTreeMap::new();
    for op in &mut t.ops {
        let n = renamed.len();
        let new = renamed
            .entry(op.op_name.clone())
            .or_insert_with(|| format!("step{n}"))
            .clone();
        op.op_name = new;
        op.category = "step".into();
    }
    let after = by_name(&t, &RoleConfig::default());
    for (old, new) in &renamed {
        assert_eq!(before[old].0, after[new].0, "{old} became {new}");
    }
    let roles: Vec<OpRole> = before.values().map(|r| r.0).collect();
    for want in [
        OpRole::Extraction,
        OpRole::Update,
        OpRole::Retrieval,
        OpRole::Response,
        OpRole::Judge,
    ] {
        assert!(roles.contains(&want), "{want} missing: {before:?}");
    }
}

#[test]
fn an_override_wins_and_changes_the_type() {
    let t = first_file(System::NaiveRag);
    let infoflow = InfoFlow::default();
    let default_roles = Roles::infer(&t, &RoleConfig::default());
    let case = t
        .cases
        .iter()
        .find(|c| {
            infoflow
                .attribute_with(&t, &default_roles, c)
                .is_ok_and(|a| a.error_type == ErrorType::ExtractionError)
        })
        .expect("an extraction verdict in the file");
    let mut cfg = RoleConfig::default();
    cfg.add_override("memory_system.add=update").unwrap();
    let roles = Roles::infer(&t, &cfg);
    assert_eq!(
        by_name(&t, &cfg)["memory_system.add"],
        (OpRole::Update, Basis::User)
    );
    let a = infoflow.attribute_with(&t, &roles, case).unwrap();
    assert_eq!(a.error_type, ErrorType::UpdateError, "{}", a.reason);
    assert!(cfg.add_override("x=writer").unwrap_err().contains("roles:"));
    assert!(cfg.add_override("no-equals").is_err());
    let json = serde_json::to_string(&cfg).unwrap();
    assert_eq!(serde_json::from_str::<RoleConfig>(&json).unwrap(), cfg);
}
