//! `memtrace gen`, `convert` and `info` end to end, through the built binary.
#![allow(clippy::expect_used)] // helpers outside #[test] fns

use std::path::PathBuf;
use std::process::{Command, Output};

fn memtrace(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_memtrace"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn fixture(rel: &str) -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../tests/fixtures")
        .join(rel);
    root.to_string_lossy().into_owned()
}

fn scratch(name: &str) -> String {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    dir.join(name).to_string_lossy().into_owned()
}

#[test]
fn gen_is_deterministic_and_info_reads_it() {
    let (a, b) = (scratch("gen-a.json"), scratch("gen-b.json"));
    for out in [&a, &b] {
        let o = memtrace(&["gen", "--nodes", "300", "--seed", "5", "-o", out]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    assert_eq!(
        std::fs::read(&a).expect("written"),
        std::fs::read(&b).expect("written")
    );
    let o = memtrace(&["info", "--json", &a]);
    assert!(o.status.success());
    let summary: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON line");
    assert_eq!(summary["format"], "smartcomment");
    assert!(
        summary["variables"].as_u64().is_some_and(|n| n >= 300),
        "{summary}"
    );
    assert!(
        summary["failures"].as_u64().is_some_and(|n| n > 0),
        "{summary}"
    );
}

#[test]
fn convert_writes_otlp_and_langfuse_as_smartcomment() {
    for (input, ops) in [
        ("otlp/mem0_openinference.jsonl", 13),
        ("langfuse/mem0_traces.json", 13),
    ] {
        let out = scratch("converted.json");
        let o = memtrace(&[
            "convert",
            &fixture(input),
            "--to",
            "smartcomment",
            "-o",
            &out,
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let o = memtrace(&["info", "--json", &out]);
        let summary: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON line");
        assert_eq!(
            (summary["format"].as_str(), summary["operations"].as_u64()),
            (Some("smartcomment"), Some(ops))
        );
        assert_eq!(summary["failures"], 1);
    }
}

#[test]
fn convert_and_info_fail_with_the_location_on_a_bad_file() {
    let bad = scratch("bad.jsonl");
    let text = std::fs::read_to_string(fixture("otlp/mem0_openinference.jsonl")).expect("fixture");
    let lines: Vec<&str> = text.lines().collect();
    std::fs::write(&bad, format!("{}\n{}\n", lines[0], &lines[1][..100])).expect("scratch file");
    for args in [
        vec!["info", bad.as_str()],
        vec!["convert", bad.as_str(), "-o", "-"],
    ] {
        let o = memtrace(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?}");
        assert!(err.contains("line 2, column"), "{args:?}: {err}");
    }
    let o = memtrace(&["convert", &bad, "-o", "-", "--lenient"]);
    assert!(o.status.success(), "lenient loads the first line");
    assert!(String::from_utf8_lossy(&o.stderr).contains("skipped"));
}
