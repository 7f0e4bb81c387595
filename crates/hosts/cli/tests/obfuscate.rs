//! `memtrace obfuscate`: the renamed file is in its input's format, holds none of the user's
//! names, and `info` finds the same failures in it; `--judge-threshold` is taken by `info`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

mod common;

use common::memtrace;
use serde_json::Value;

fn info(path: &str, extra: &[&str]) -> Value {
    let out = memtrace(&[&["info", "--json"], extra, &[path]].concat());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Each case's (op id, error type) from `attribute --json`, in case order (a renamed
/// smartcomment question has a renamed id); `None` for a case without a verdict.
fn verdicts(path: &str) -> Vec<Option<(Value, Value)>> {
    let out = memtrace(&["attribute", "--json", path]);
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|v| {
            v.get("op_id")
                .map(|op| (op.clone(), v["error_type"].clone()))
        })
        .collect()
}

#[test]
fn renamed_traces_keep_their_format_and_failures() {
    let fixtures = [
        ("otlp/mem0_unnamed_judge.jsonl", "check_answer", "otlp"),
        ("langfuse/mem0_traces.json", "mem0.search", "langfuse"),
        (
            "smartcomment/locomo/locomo_locomo-2.json",
            "memory_system.extract_facts",
            "smartcomment",
        ),
    ];
    for (i, (fixture, name, format)) in fixtures.iter().enumerate() {
        let input = format!("../../../tests/fixtures/{fixture}");
        let out = std::env::temp_dir().join(format!("memtrace-obf-{i}-{}", std::process::id()));
        let out = out.display().to_string();
        let run = memtrace(&["obfuscate", &input, "-o", &out, "--seed", "9"]);
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        let text = std::fs::read_to_string(&out).unwrap();
        assert!(
            !text.contains(&format!("\"{name}\"")),
            "{fixture}: {name} left in"
        );
        let (a, b) = (info(&input, &[]), info(&out, &[]));
        println!(
            "{fixture}: failures {} → {}, questions {} → {}",
            a["failures"], b["failures"], a["questions"], b["questions"]
        );
        assert_eq!(b["format"], *format, "{fixture}");
        assert_eq!(a["failures"], b["failures"], "{fixture}");
        assert!(a["failures"].as_u64().unwrap() > 0, "{fixture}");
        // Renaming is a no-op for attribution: the same op, the same type, case by case.
        let (va, vb) = (verdicts(&input), verdicts(&out));
        assert!(
            va.iter().any(Option::is_some),
            "{fixture}: no verdict: {va:?}"
        );
        assert_eq!(va, vb, "{fixture}: renaming changed a verdict");
        std::fs::remove_file(&out).ok();
    }
}

#[test]
fn info_takes_a_judge_threshold() {
    let judged = "../../../tests/fixtures/otlp/mem0_llm_judge.jsonl";
    // A label is read as said, whatever the threshold.
    assert_eq!(info(judged, &["--judge-threshold", "0.9"])["failures"], 1);
    let bad = memtrace(&["info", "--judge-threshold", "high", judged]);
    assert!(!bad.status.success());
}
