//! `memtrace optimize` writes each round's verdicts as a run file, and `memtrace compare` on
//! round 0 vs the last round prints fixed / broken / still-failing counts that match the two
//! files' verdicts. The loop runs on the built-in retrieval-starved conversations
//! (tests/optimize_data/settings.json) from `top_k` 2, the simulated provider running the memory
//! system and the page's optimizer script answering the optimizer; the raised `top_k` is in
//! `settings.txt` and in `update_results.json`'s `settings` block.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

fn memtrace(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_memtrace"))
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "memtrace {args:?} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

fn verdicts(path: &Path) -> BTreeMap<String, bool> {
    let v: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    assert_eq!(v["kind"], "memtrace-run");
    v["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["question_id"].as_str().unwrap().to_owned(),
                x["correct"].as_bool().unwrap(),
            )
        })
        .collect()
}

/// `label N` from the summary line `fixed 2 · broken 0 · …`.
fn count(summary: &str, label: &str) -> usize {
    summary
        .split(" · ")
        .find_map(|p| p.strip_prefix(label)?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no `{label}` in {summary:?}"))
}

#[test]
fn compare_counts_match_the_rounds_verdicts() {
    let tmp = std::env::temp_dir().join(format!("memtrace-compare-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let dir = tmp.join("opt");
    let root = root();
    let settings = root.join("tests/optimize_data/settings.json");
    let script = root.join("tests/llm_server/scripts/optimize_loop.json");
    let conversations = ["optimize", "--conversations", settings.to_str().unwrap()];
    let rest = [
        "--top-k",
        "2",
        "--optimizer-script",
        script.to_str().unwrap(),
        "--out",
        dir.to_str().unwrap(),
    ];
    let printed = memtrace(&[&conversations[..], &common::SPLIT, &rest].concat());
    println!("{printed}");
    assert!(printed.contains("top_k@2 = 3"), "{printed}");
    let history = std::fs::read_to_string(dir.join("settings.txt")).unwrap();
    assert!(history.contains("just below the cut"), "{history}");
    let results: Value =
        serde_json::from_slice(&std::fs::read(dir.join("update_results.json")).unwrap()).unwrap();
    assert_eq!(results["settings"]["top_k@2"]["value"], 3);
    assert_eq!(results["settings"]["top_k@2"]["parent"], "top_k@1");

    let (a, b) = (
        dir.join("rounds/round-0.json"),
        dir.join("rounds/round-2.json"),
    );
    let printed = memtrace(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    println!("{printed}");
    let (va, vb) = (verdicts(&a), verdicts(&b));
    assert_eq!(va.keys().collect::<Vec<_>>(), vb.keys().collect::<Vec<_>>());
    let expect = |x: bool, y: bool| va.iter().filter(|(k, &c)| c == x && vb[*k] == y).count();
    let summary = printed.lines().nth(2).unwrap();
    assert_eq!(count(summary, "fixed"), expect(false, true), "{printed}");
    assert_eq!(count(summary, "broken"), expect(true, false), "{printed}");
    assert_eq!(
        count(summary, "still failing"),
        expect(false, false),
        "{printed}"
    );
    assert_eq!(
        count(summary, "still right"),
        expect(true, true),
        "{printed}"
    );
    assert!(
        count(summary, "fixed") > 0,
        "the raised top_k fixed answers: {printed}"
    );
    assert!(printed.contains("RetrievalError"), "{printed}");
    // A file that is no run is refused with what to give.
    let bad = tmp.join("bad.json");
    std::fs::write(&bad, "{}").unwrap();
    let err = Command::new(env!("CARGO_BIN_EXE_memtrace"))
        .args(["compare", bad.to_str().unwrap(), b.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!err.status.success());
    assert!(String::from_utf8_lossy(&err.stderr).contains("not a run file"));
    let _ = std::fs::remove_dir_all(&tmp);
}
