//! `--logs FILE`: the OTLP log records `opentelemetry-instrumentation-openai-v2` exports beside
//! its traces (the prompts and replies are in the logs) are joined to the spans they name, as
//! the page joins the two files dropped together. Reads `tests/fixtures/otel/` (fails when absent).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::process::Command;

fn otel(name: &str) -> String {
    let p = common::repo_root().join("tests/fixtures/otel").join(name);
    assert!(p.exists(), "missing fixture {}", p.display());
    p.display().to_string()
}

fn run(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_memtrace"))
        .args(args)
        .output()
        .unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.success(), text(&out.stdout), text(&out.stderr))
}

#[test]
fn the_logs_file_brings_the_failed_question_and_its_verdict() {
    let traces = otel("genai_traces.pb");
    let logs = otel("genai_logs.pb");
    // Alone, the traces hold no prompt or reply: no question is judged.
    let (ok, alone, _) = run(&["attribute", &traces, "--json"]);
    assert!(ok);
    assert!(!alone.contains("ResponseError"), "{alone}");
    // With its logs: one failed question, blamed on the answering call.
    let (ok, joined, err) = run(&["attribute", &traces, "--logs", &logs, "--json"]);
    assert!(ok, "{err}");
    let verdicts: Vec<serde_json::Value> = joined
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(verdicts.len(), 1, "{joined}");
    assert_eq!(verdicts[0]["error_type"], "ResponseError", "{joined}");
}

#[test]
fn a_logs_file_of_another_run_is_refused_with_what_to_do() {
    let (ok, _, err) = run(&[
        "info",
        &otel("openinference_traces.json"),
        "--logs",
        &otel("genai_logs.pb"),
    ]);
    assert!(!ok);
    assert!(
        err.contains("holds no OTLP log records") && err.contains("--logs"),
        "{err}"
    );
    // The logs file alone says to pass it with --logs.
    let (ok, _, err) = run(&["info", &otel("genai_logs.pb")]);
    assert!(!ok);
    assert!(err.contains("--logs FILE"), "{err}");
}
