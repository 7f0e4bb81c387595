//! `memtrace attribute` with every LLM method against the local scripted LLM server: each
//! method plays its full conversation (`tests/llm_server/scripts/agent_<method>.json`, every
//! tool, a malformed call, a history summarization) over HTTP and names the annotated op.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

mod common;

use std::process::Command;

use common::{repo_root, Server};
use serde_json::Value;

const FIXTURE: &str = "../shared/fixtures/smartcomment/locomo_locomo-2.json";
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
