//! Command-line conventions every command keeps: `-` reads standard input, exit status 0 / 1
//! (`--fail-on-failures` with failed cases) / 2 (usage or input error), JSON output is only JSON
//! and names each case's question, `--format` / `--lenient` on commands that read a trace, shell
//! completions. Reads `tests/fixtures/smartcomment/locomo/` (fails when absent).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::process::Output;

use serde_json::Value;

fn fixture() -> std::path::PathBuf {
    common::repo_root().join("tests/fixtures/smartcomment/locomo/locomo_locomo-1.json")
}

fn run(args: &[&str], stdin: Option<&[u8]>) -> Output {
    common::memtrace_with_stdin(args, stdin.unwrap_or_default())
}

#[test]
fn stdin_reads_the_same_trace_as_the_file() {
    let bytes = std::fs::read(fixture()).unwrap();
    let path = fixture();
    let from_file = run(&["attribute", "--json", path.to_str().unwrap()], None);
    let from_stdin = run(&["attribute", "--json", "-"], Some(&bytes));
    assert!(from_file.status.success() && from_stdin.status.success());
    // The same verdicts; only the time each took may differ.
    let verdicts = |out: &Output| -> Vec<Value> {
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.lines()
            .map(|l| {
                let mut v: Value = serde_json::from_str(l).unwrap();
                v["cost"]["wall_ms"] = Value::Null;
                v
            })
            .collect()
    };
    let (a, b) = (verdicts(&from_file), verdicts(&from_stdin));
    assert!(!a.is_empty());
    assert!(a == b, "stdin gave other verdicts than the file");
    for cmd in ["info", "search", "story", "roles", "start-points"] {
        let mut args = vec![cmd, "-"];
        if cmd == "search" {
            args.push("camping");
        }
        let out = run(&args, Some(&bytes));
        assert!(
            out.status.success(),
            "{cmd}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn exit_status_says_ran_failures_or_error() {
    let path = fixture();
    let path = path.to_str().unwrap();
    assert_eq!(run(&["info", path], None).status.code(), Some(0));
    assert_eq!(
        run(&["info", "--fail-on-failures", path], None)
            .status
            .code(),
        Some(1)
    );
    let attributed = run(&["attribute", "--fail-on-failures", path], None);
    assert_eq!(attributed.status.code(), Some(1));
    assert_eq!(
        run(&["info", "/no/such/file.json"], None).status.code(),
        Some(2)
    );
    assert_eq!(
        run(&["attribute", "-"], Some(b"{\"x\": 1}")).status.code(),
        Some(2)
    );
    assert_eq!(
        run(&["attribute", "--no-such-flag", path], None)
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn json_verdicts_are_json_and_name_their_question() {
    let path = fixture();
    let out = run(&["attribute", "--json", path.to_str().unwrap()], None);
    let text = String::from_utf8(out.stdout).unwrap();
    let mut n = 0;
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        let q = &v["question"];
        assert_eq!(q["id"], v["case_id"], "{line}");
        assert!(!q["text"].as_str().unwrap().is_empty(), "{line}");
        assert!(!q["session_id"].as_str().unwrap().is_empty(), "{line}");
        n += 1;
    }
    assert!(n > 0, "no verdicts");
    // A trace with no failed case prints nothing on stdout with --json (the note goes to stderr).
    let clean = br#"{"graph_id":"g","data":{"nodes":[],"edges":[],"operations":[],"sessions":[]}}"#;
    let out = run(&["attribute", "--json", "-"], Some(clean));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("no failed cases"));
}

#[test]
fn format_and_lenient_are_on_every_reading_command() {
    let path = fixture();
    let path = path.to_str().unwrap();
    for cmd in [
        "info",
        "attribute",
        "search",
        "story",
        "roles",
        "start-points",
        "report",
    ] {
        let mut args = vec![cmd, "--format", "langfuse", path];
        if cmd == "search" {
            args.push("camping");
        }
        let out = run(&args, None);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{cmd}: read as Langfuse must fail: {err}"
        );
        let out = run(&[cmd, "--help"], None);
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(
            help.contains("--lenient") && help.contains("--format"),
            "{cmd}: {help}"
        );
    }
}

#[test]
fn completions_for_each_shell() {
    for shell in ["bash", "zsh", "fish"] {
        let out = run(&["completions", shell], None);
        assert!(out.status.success());
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("attribute") && text.contains("memtrace"),
            "{shell}"
        );
    }
}
