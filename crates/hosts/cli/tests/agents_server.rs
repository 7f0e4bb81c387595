//! `memtrace attribute` with every LLM method against the local scripted LLM server: each
//! method plays its full conversation (`tests/llm_server/scripts/agent_<method>.json`, every
//! tool, a malformed call, a history summarization) over HTTP and names the annotated op.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

mod common;

use std::process::Command;

use common::{repo_root, Server};
use serde_json::Value;

const FIXTURE: &str = "tests/fixtures/smartcomment/locomo/locomo_locomo-2.json";
const CASE: &str = "query:locomo-qa-2-1@1";
const METHODS: [&str; 5] = [
    "graphtrace",
    "obstrace",
    "all-at-once",
    "step-by-step",
    "binary-search",
];

fn script_steps(method: &str) -> usize {
    let path = repo_root().join(format!(
        "tests/llm_server/scripts/agent_{}.json",
        method.replace('-', "_")
    ));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    v["steps"].as_array().unwrap().len()
}

fn annotation() -> (String, String) {
    let bytes = std::fs::read(repo_root().join(FIXTURE)).unwrap();
    let v: Value = serde_json::from_slice(&bytes).unwrap();
    let a = v["data"]["annotations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["query_id"] == CASE)
        .unwrap();
    (
        a["final_op_id"].as_str().unwrap().to_owned(),
        a["final_error_type"].as_str().unwrap().to_owned(),
    )
}

#[test]
fn every_method_completes_its_conversation_over_http() {
    let server = Server::start();
    let (op, ty) = annotation();
    for method in METHODS {
        let model = format!(
            "script:agent_{}@cli-{}",
            method.replace('-', "_"),
            std::process::id()
        );
        let out = Command::new(env!("CARGO_BIN_EXE_memtrace"))
            .arg("attribute")
            .arg(repo_root().join(FIXTURE))
            .args(["--case", CASE, "--json", "--method", method])
            .args(["--provider", "openai", "--base-url", &server.url("/v1")])
            .args(["--model", &model, "--history-budget-tokens", "1500"])
            .args(["--retry-base-ms", "20"])
            .env("MEMTRACE_API_KEY", "sk-agents-test")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{method}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_str(stdout.trim())
            .unwrap_or_else(|e| panic!("{method}: {e}: {stdout}"));
        assert_eq!(
            (v["op_id"].as_str(), v["error_type"].as_str()),
            (Some(op.as_str()), Some(ty.as_str())),
            "{method}: {v}"
        );
        let steps = script_steps(method);
        assert_eq!(
            v["cost"]["llm_calls"], steps,
            "{method}: every scripted step is played"
        );
        let log: Vec<Value> = server
            .log()
            .into_iter()
            .filter(|r| r["body"]["model"] == model.as_str())
            .collect();
        assert_eq!(log.len(), steps, "{method}");
        let bodies: Vec<String> = log.iter().map(|r| r["body"].to_string()).collect();
        assert!(
            bodies.iter().any(|b| b.contains("error: ")),
            "{method}: the malformed reply was not answered with an error"
        );
        if matches!(method, "graphtrace" | "obstrace") {
            assert!(
                bodies
                    .iter()
                    .any(|b| b.contains("Summary of earlier steps")),
                "{method}: no summarization reached the server"
            );
        }
        println!(
            "{method}: {} calls over HTTP, {} input tokens",
            log.len(),
            v["cost"]["input_tokens"]
        );
    }
}

#[test]
fn eval_with_an_llm_method_reports_cost_and_resumes_from_its_cache() {
    let server = Server::start();
    let cache = std::env::temp_dir().join(format!(
        "memtrace-agents-cache-{}.jsonl",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&cache);
    let eval = |run: &str| {
        let model = format!("script:agent_all_at_once@{run}-{}", std::process::id());
        let out = common::succeeded(
            Command::new(env!("CARGO_BIN_EXE_memtrace"))
                .arg("eval")
                .arg(repo_root().join(FIXTURE))
                .args([
                    "--method",
                    "all-at-once",
                    "--limit",
                    "1",
                    "--json",
                    "--concurrency",
                    "2",
                ])
                .args([
                    "--provider",
                    "openai",
                    "--base-url",
                    &server.url("/v1"),
                    "--model",
                    &model,
                ])
                .arg("--cache")
                .arg(&cache)
                .env("MEMTRACE_API_KEY", "sk-agents-test"),
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let requests = server
            .log()
            .into_iter()
            .filter(|r| r["body"]["model"] == model.as_str())
            .count();
        (
            v,
            String::from_utf8_lossy(&out.stderr).into_owned(),
            requests,
        )
    };
    let (first, stderr, requests) = eval("first");
    println!("{stderr}");
    assert_eq!(requests, script_steps("all-at-once"));
    assert!(
        stderr.contains("input tokens"),
        "per-case cost is printed: {stderr}"
    );
    let m = &first["metrics"];
    assert_eq!(m["operation_identifier_prediction_accuracy"], 1.0);
    assert!(
        m["error_attribution_cost"]["average_input_tokens"]
            .as_f64()
            .unwrap()
            > 1000.0
    );
    assert!(m["start_point_recall_at_8"].as_f64().is_some());
    let (again, _, requests) = eval("again");
    assert_eq!(requests, 0, "a rerun resumes from the cache");
    assert_eq!(again["results"], first["results"]);
    let _ = std::fs::remove_file(&cache);
}
