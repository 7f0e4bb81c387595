//! `memtrace compare A B` on two traces, not run files: every question of each trace is a
//! verdict (right unless it is a failure), questions aligned by id, else by text. The traces are
//! `tests/fixtures/otlp/mem0_llm_judge.jsonl` (real OpenTelemetry SDK output: one question judged
//! CORRECT, one WRONG) and the same export with the two judge labels swapped.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use serde_json::Value;

fn counts(a: &str, b: &str) -> Value {
    let out = common::memtrace_ok(["compare", a, b, "--json"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    v["counts"].clone()
}

#[test]
fn two_traces_compare_by_their_judged_questions() {
    let a = common::repo_root().join("tests/fixtures/otlp/mem0_llm_judge.jsonl");
    let text = std::fs::read_to_string(&a).unwrap();
    // Swap the judges' labels (and the question spans' scores): the right one turns wrong.
    let swapped = text
        .replace(r#"\"label\": \"WRONG\""#, "@@W@@")
        .replace(r#"\"label\": \"CORRECT\""#, r#"\"label\": \"WRONG\""#)
        .replace("@@W@@", r#"\"label\": \"CORRECT\""#)
        .replace(r#"\"score\": 0}"#, "@@0@@")
        .replace(r#"\"score\": 1}"#, r#"\"score\": 0}"#)
        .replace("@@0@@", r#"\"score\": 1}"#);
    assert_ne!(swapped, text);
    let dir = std::env::temp_dir().join(format!("memtrace-compare-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let b = dir.join("swapped.jsonl");
    std::fs::write(&b, swapped).unwrap();
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());

    let same = counts(a, a);
    assert_eq!(same["still failing"], 1, "{same}");
    assert_eq!(same["still right"], 1, "{same}");
    let c = counts(a, b);
    assert_eq!(c["fixed"], 1, "{c}");
    assert_eq!(c["broken"], 1, "{c}");
    assert!(c.get("still failing").is_none(), "{c}");
    let text = common::memtrace_ok(["compare", a, b]);
    assert!(text.contains("fixed 1 · broken 1"), "{text}");
    std::fs::remove_dir_all(&dir).ok();
}
