//! `memtrace attribute --verify` on a generated bench: each info-flow verdict that names the
//! annotated op is checked by counterfactual replay, memory ops included (extraction, update,
//! deletion are replayed through the reference memory system). Reads `tests/data/locomo/`
//! (fails when absent).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

mod common;

use common::{gen_bench, memtrace_ok};
use serde_json::Value;
use std::collections::BTreeMap;

#[test]
fn verify_checks_memory_op_verdicts_by_replay() {
    let bench = gen_bench("verify", 2, 2);
    let mut files: Vec<_> = std::fs::read_dir(&bench)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    // (error type, outcome) → count, over verdicts that name the annotated op.
    let mut tally: BTreeMap<(String, String), usize> = BTreeMap::new();
    for f in &files {
        let text = memtrace_ok([
            "attribute".as_ref(),
            f.as_os_str(),
            "--verify".as_ref(),
            "--json".as_ref(),
        ] as [&std::ffi::OsStr; 4]);
        let annotations: Value = serde_json::from_slice::<Value>(&std::fs::read(f).unwrap())
            .unwrap()["data"]["annotations"]
            .clone();
        for line in text.lines() {
            let v: Value = serde_json::from_str(line).unwrap();
            let ann = annotations
                .as_array()
                .unwrap()
                .iter()
                .find(|a| a["query_id"] == v["case_id"])
                .unwrap();
            if ann["final_op_id"] != v["op_id"] {
                continue;
            }
            let outcome = v["counterfactual"]["outcome"].as_str().unwrap().to_owned();
            let ty = ann["final_error_type"].as_str().unwrap().to_owned();
            *tally.entry((ty, outcome)).or_default() += 1;
        }
    }
    let _ = std::fs::remove_dir_all(&bench);
    println!("{tally:?}");
    for ty in ["ExtractionError", "UpdateError", "DeletionError"] {
        let verified = tally
            .get(&(ty.to_owned(), "verified".to_owned()))
            .copied()
            .unwrap_or(0);
        assert!(
            verified > 0,
            "{ty}: no verdict verified by replay: {tally:?}"
        );
        assert!(
            !tally.contains_key(&(ty.to_owned(), "not-replayable".to_owned())),
            "{ty}: {tally:?}"
        );
    }
}

#[test]
fn llm_methods_refuse_the_simulated_provider_at_once() {
    let demo = common::repo_root().join("www/demo.json");
    for method in ["graphtrace", "all-at-once"] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_memtrace"))
            .arg("attribute")
            .arg(&demo)
            .args(["--method", method, "--provider", "simulated"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{method}: {err}");
        assert!(
            err.contains(method) && err.contains("--provider openai") && out.stdout.is_empty(),
            "{method}: {err}"
        );
    }
}
