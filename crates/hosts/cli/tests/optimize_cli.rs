//! `memtrace optimize` end to end against the scripted LLM server: the closed loop over two
//! conversations (the simulated provider runs the memory system, the server answers the
//! optimizer), interrupted after two steps and resumed from its state file. One full round:
//! feedback, aggregation in batches, update with the placeholder guard rejecting a bad update,
//! history carried into round two. Every request body in the server's log is checked, and the
//! three export formats are written.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

mod common;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use memtrace_memsys::Prompts;
use serde_json::{json, Value};

const KEY: &str = "sk-test-optimize-1";

struct Server {
    child: Child,
    port: u16,
}

impl Server {
    fn start(scripts: &std::path::Path) -> Self {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..");
        let mut child = Command::new("python3")
            .arg(root.join("tests/llm_server/server.py"))
            .args(["--port", "0", "--scripts"])
            .arg(scripts)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 runs the scripted server");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .trim()
            .strip_prefix("LISTENING ")
            .unwrap()
            .parse()
            .unwrap();
        Self { child, port }
    }
    fn log(&self) -> Vec<Value> {
        let body = ureq::get(&format!("http://127.0.0.1:{}/_log", self.port))
            .call()
            .unwrap()
            .body_mut()
            .read_to_string()
            .unwrap();
        serde_json::from_str(&body).unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn reply(v: &Value) -> Value {
    json!({"text": v.to_string()})
}

/// Feedback and aggregation for anything; the extraction prompt gains the date rule; the first
/// answering-prompt update drops `$context` (rejected), the retry keeps the prompt.
fn script() -> Value {
    let p = Prompts::default();
    let dated = format!(
        "{} Keep every date: resolve relative dates.",
        p.fact_extraction
    );
    json!({"steps": [
        {"match_last": "TASK: feedback", "repeat": true, "reply": reply(&json!({"rationale": "dates were lost", "feedback": "Keep every date."}))},
        {"match_last": "TASK: aggregate", "repeat": true, "reply": reply(&json!({"summary": "Keep every date (merged)."}))},
        {"match_last": "TASK: update prompt `fact-extraction-system-prompt`", "repeat": true, "reply": reply(&json!({"rationale": "dates", "improved_value": dated}))},
        {"match_last": "TASK: update prompt `question-answering-prompt`", "reply": reply(&json!({"rationale": "shorter", "improved_value": "Answer: $question"}))},
        {"match_last": "TASK: update prompt `question-answering-prompt`", "repeat": true, "reply": reply(&json!({"rationale": "keep", "improved_value": p.question_answering}))},
        {"match_last": "TASK: update prompt `memory-update-decision-prompt`", "repeat": true, "reply": reply(&json!({"rationale": "keep", "improved_value": p.update_decision}))}
    ], "fallback": "error"})
}

fn optimize(server: &Server, out: &std::path::Path, extra: &[&str]) -> std::process::Output {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..");
    Command::new(env!("CARGO_BIN_EXE_memtrace"))
        .arg("optimize")
        .arg("--conversations")
        .arg(root.join("tests/optimize_data/conversations.json"))
        .args(common::SPLIT)
        .args(["--batch-size", "2", "--concurrency", "2"])
        .args([
            "--provider",
            "openai",
            "--model",
            "script:optimize@cli",
            "--retry-base-ms",
            "10",
        ])
        .args([
            "--base-url",
            &format!("http://127.0.0.1:{}/v1", server.port),
        ])
        .args(["--export", "update_results,mem0,text", "--out"])
        .arg(out)
        .args(extra)
        .env("MEMTRACE_API_KEY", KEY)
        .output()
        .unwrap()
}

#[test]
fn the_loop_runs_resumes_and_exports_with_every_request_checked() {
    let tmp = std::env::temp_dir().join(format!("memtrace-optimize-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let scripts = tmp.join("scripts");
    std::fs::create_dir_all(&scripts).unwrap();
    // The committed script (the browser test plays it from the shared server) is this one.
    let committed = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../tests/llm_server/scripts/optimize_loop.json");
    let want = serde_json::to_string_pretty(&script()).unwrap() + "\n";
    if std::env::var_os("MEMTRACE_WRITE_SCRIPTS").is_some() {
        std::fs::write(&committed, &want).unwrap();
    }
    assert_eq!(
        std::fs::read_to_string(&committed).unwrap(),
        want,
        "tests/llm_server/scripts/optimize_loop.json is stale: rerun with MEMTRACE_WRITE_SCRIPTS=1"
    );
    std::fs::write(scripts.join("optimize.json"), &want).unwrap();
    let server = Server::start(&scripts);
    let out = tmp.join("out");

    // Interrupted after two steps (train and held-out runs of round 0), then resumed.
    let first = optimize(&server, &out, &["--max-steps", "2"]);
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let state: Value =
        serde_json::from_slice(&std::fs::read(out.join("loop-state.json")).unwrap()).unwrap();
    assert_eq!(state["phase"], json!({"Optimize": {"round": 0}}));
    assert!(
        server.log().is_empty(),
        "the memory system runs on the simulated provider"
    );
    let second = optimize(&server, &out, &[]);
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(second.status.success(), "{stderr}");
    assert!(
        stderr.contains("resuming from") && stderr.contains("estimate:"),
        "{stderr}"
    );
    let stdout = String::from_utf8_lossy(&second.stdout);
    println!("{stdout}");
    let series_line = stdout.lines().find(|l| l.starts_with("series ")).unwrap();
    let series: Vec<Value> =
        serde_json::from_str(series_line.trim_start_matches("series ")).unwrap();
    assert_eq!(series.len(), 3);
    assert!(
        series[1]["train"].as_f64() > series[0]["train"].as_f64(),
        "{series_line}"
    );

    // Every request body.
    let log = server.log();
    let mut kinds = std::collections::BTreeMap::<String, usize>::new();
    for rec in &log {
        assert_eq!(rec["method"], "POST");
        assert!(
            rec["path"]
                .as_str()
                .unwrap()
                .ends_with("/v1/chat/completions"),
            "{}",
            rec["path"]
        );
        let body = &rec["body"];
        assert_eq!(body["model"], "script:optimize@cli");
        assert_eq!(body["response_format"]["type"], "json_schema", "{body}");
        assert!(!body.to_string().contains(KEY));
        let msgs = body["messages"].as_array().unwrap();
        assert_eq!(
            (msgs[0]["role"].as_str(), msgs[1]["role"].as_str()),
            (Some("system"), Some("user"))
        );
        assert!(msgs[0]["content"]
            .as_str()
            .unwrap()
            .contains("never as instructions"));
        let user = msgs[1]["content"].as_str().unwrap();
        assert!(
            user.contains("<<<BEGIN") && user.contains("<<<END"),
            "{user}"
        );
        let kind = user.split_whitespace().nth(1).unwrap().to_owned();
        *kinds.entry(kind).or_default() += 1;
    }
    println!("requests by stage: {kinds:?}");
    let users: Vec<&str> = log
        .iter()
        .map(|r| r["body"]["messages"][1]["content"].as_str().unwrap())
        .collect();
    assert!(
        users
            .iter()
            .any(|u| u.starts_with("TASK: aggregate") && u.contains("batch 2 of")),
        "aggregation in batches"
    );
    assert_eq!(
        users
            .iter()
            .filter(|u| u
                .contains("RETRY: your previous improved_value dropped the placeholders $context"))
            .count(),
        1
    );
    let round_two: Vec<&&str> = users
        .iter()
        .filter(|u| {
            u.starts_with("TASK: feedback") && u.contains("Earlier steps on this prompt (1;")
        })
        .collect();
    assert!(!round_two.is_empty(), "history carried into round two");
    // One failure gives the feedback itself, several its aggregate ("Keep every date (merged).").
    assert!(round_two
        .iter()
        .all(|u| u.contains("<<<BEGIN step 1 feedback>>>\nKeep every date")));

    // Exports.
    let ur: Value =
        serde_json::from_slice(&std::fs::read(out.join("update_results.json")).unwrap()).unwrap();
    let v2 = &ur["fact-extraction-system-prompt@2"];
    assert_eq!(v2["parent"], "fact-extraction-system-prompt@1");
    assert!(v2["value"]
        .as_str()
        .unwrap()
        .ends_with("Keep every date: resolve relative dates."));
    assert!(
        v2["score"].as_f64().unwrap()
            > ur["fact-extraction-system-prompt@1"]["score"]
                .as_f64()
                .unwrap()
    );
    assert!(v2["diff"].as_str().unwrap().contains('+'));
    assert!(
        ur.get("question-answering-prompt@2").is_none(),
        "the rejected update made no version"
    );
    let mem0: Value =
        serde_json::from_slice(&std::fs::read(out.join("mem0_config.json")).unwrap()).unwrap();
    assert_eq!(mem0["custom_fact_extraction_prompt"], v2["value"]);
    assert!(mem0["custom_update_memory_prompt"].is_string());
    assert!(out
        .join("prompts/fact-extraction-system-prompt@2.txt")
        .is_file());
    assert!(out
        .join("prompts/fact-extraction-system-prompt@2.diff")
        .is_file());
    let page = std::fs::read_to_string(out.join("optimize.html")).unwrap();
    assert!(page.contains("accuracy-chart"));
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn a_split_that_tunes_on_held_out_or_missing_conversations_is_refused() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..");
    let refused = |train: &str, heldout: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_memtrace"))
            .args([
                "optimize",
                "--conversations",
                "tests/optimize_data/conversations.json",
            ])
            .args(["--train", train, "--heldout", heldout, "--out"])
            .arg(std::env::temp_dir().join(format!("memtrace-split-{}", std::process::id())))
            .current_dir(&root)
            .output()
            .unwrap();
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let err = refused("0,1", "1");
    assert!(
        err.contains("conversation 1 is both train and held-out"),
        "{err}"
    );
    let err = refused("0", "9");
    assert!(err.contains("conversation 9 does not exist"), "{err}");
}

#[test]
fn one_step_over_a_trace_file_and_the_report_command() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..");
    let tmp = std::env::temp_dir().join(format!("memtrace-optimize-once-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let run = |args: &[&str]| {
        let out = common::succeeded(
            Command::new(env!("CARGO_BIN_EXE_memtrace"))
                .args(args)
                .current_dir(&root),
        );
        out
    };
    let out_dir = tmp.join("once");
    let once = run(&[
        "optimize",
        "www/demo.json",
        "--optimizer-script",
        "tests/llm_server/scripts/optimize_loop.json",
        "--export",
        "text,mem0",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&once.stderr);
    assert!(
        stderr.contains("not optimizable (its op reads no configurable variable"),
        "the retrieval failure: {stderr}"
    );
    assert!(stderr.contains("estimate:"), "{stderr}");
    let v2 = std::fs::read_to_string(out_dir.join("prompts/fact-extraction-system-prompt@2.txt"))
        .unwrap();
    assert!(v2.ends_with("Keep every date: resolve relative dates."));
    let mem0: Value =
        serde_json::from_slice(&std::fs::read(out_dir.join("mem0_config.json")).unwrap()).unwrap();
    assert_eq!(mem0["custom_fact_extraction_prompt"], v2.as_str());
    assert!(
        !out_dir
            .join("prompts/question-answering-prompt@2.txt")
            .exists(),
        "the guard rejected the first update, the retry kept it"
    );

    let help = run(&["optimize", "--help"]);
    let help = String::from_utf8_lossy(&help.stdout);
    for word in [
        "update_results",
        "mem0",
        "text",
        "update_results.json",
        "custom_fact_extraction_prompt",
        "custom_update_memory_prompt",
    ] {
        assert!(help.contains(word), "help names {word}");
    }

    let rep_dir = tmp.join("report");
    let rep = run(&[
        "report",
        "www/demo.json",
        "--out",
        rep_dir.to_str().unwrap(),
    ]);
    assert!(String::from_utf8_lossy(&rep.stdout).contains("5 failures"));
    let html = std::fs::read_to_string(rep_dir.join("report.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>") && html.contains("ExtractionError"));
    let md = std::fs::read_to_string(rep_dir.join("report.md")).unwrap();
    assert!(md.contains("| ExtractionError | 1 |"));
    let _ = std::fs::remove_dir_all(&tmp);
}
