#![cfg(target_arch = "wasm32")]
//! The LLM attribution methods over real `fetch` in headless Chromium: each plays its scripted
//! conversation (`tests/llm_server/scripts/agent_<method>.json`: every tool, a malformed call,
//! a history summarization) against the local server (`MEMTRACE_TEST_LLM_URL`, default
//! http://127.0.0.1:8765, started by `scripts/test`) — the same checks as the native
//! `crates/hosts/cli/tests/agents_server.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

mod common;

use memtrace::attribution::agent::{AgentLimits, AgentRun};
use memtrace::attribution::{
    attribute_baseline, Attribution, Baseline, GraphTrace, ObsTrace, RoleConfig, Roles,
};
use memtrace::provider::{ApiKey, ApiKind, HttpLlm, ProviderConfig, RetryPolicy};
use memtrace::{load, LoadOptions};
use memtrace_web::services::http::{FetchTransport, TimerSleep};
use serde_json::{json, Value};
use wasm_bindgen_test::{console_log, wasm_bindgen_test, wasm_bindgen_test_configure};

use common::{control, server_log, BASE, FIXTURE};

wasm_bindgen_test_configure!(run_in_browser);

const SCRIPTS: [(&str, &str); 5] = [
    (
        "graphtrace",
        include_str!("../../../../tests/llm_server/scripts/agent_graphtrace.json"),
    ),
    (
        "obstrace",
        include_str!("../../../../tests/llm_server/scripts/agent_obstrace.json"),
    ),
    (
        "all-at-once",
        include_str!("../../../../tests/llm_server/scripts/agent_all_at_once.json"),
    ),
    (
        "step-by-step",
        include_str!("../../../../tests/llm_server/scripts/agent_step_by_step.json"),
    ),
    (
        "binary-search",
        include_str!("../../../../tests/llm_server/scripts/agent_binary_search.json"),
    ),
];

fn llm(model: &str) -> HttpLlm<FetchTransport, TimerSleep> {
    let mut cfg = ProviderConfig::new(ApiKind::OpenAi, model, Some(ApiKey::new("sk-web-agents")));
    cfg.base_url = format!("{BASE}/v1");
    cfg.timeout_ms = 20_000;
    cfg.retry = RetryPolicy {
        max_retries: 10,
        base_delay_ms: 20,
        max_delay_ms: 400,
        seed: 7,
        ..RetryPolicy::default()
    };
    HttpLlm::new(cfg, FetchTransport::default(), TimerSleep).unwrap()
}

#[wasm_bindgen_test]
async fn every_method_completes_its_conversation_over_fetch() {
    control(&json!({"fault_rate": 0.0})).await;
    let trace = load(FIXTURE, LoadOptions::default()).unwrap().trace;
    let case = &trace.cases[0];
    let ann = case.annotation.clone().unwrap();
    let limits = AgentLimits {
        history_budget_tokens: 1_500,
        keep_recent_turns: 2,
        ..AgentLimits::default()
    };
    let run_id = format!("{:.0}", js_sys::Date::now());
    let roles = Roles::infer(&trace, &RoleConfig::default());
    for (method, script) in SCRIPTS {
        let model = format!("script:agent_{}@web-{run_id}", method.replace('-', "_"));
        let llm = llm(&model);
        let (a, r): (Attribution, AgentRun) = match method {
            "graphtrace" => {
                let agent = GraphTrace {
                    limits,
                    ..GraphTrace::default()
                };
                agent
                    .attribute_with(&llm, &trace, &roles, case)
                    .await
                    .unwrap()
            }
            "obstrace" => {
                let agent = ObsTrace {
                    limits,
                    ..ObsTrace::default()
                };
                agent
                    .attribute_with(&llm, &trace, &roles, case)
                    .await
                    .unwrap()
            }
            b => attribute_baseline(Baseline::parse(b).unwrap(), &llm, &trace, case)
                .await
                .unwrap(),
        };
        assert_eq!(
            (a.op_id.as_str(), a.error_type),
            (ann.op_id.as_str(), ann.error_type),
            "{method}"
        );
        let steps = serde_json::from_str::<Value>(script).unwrap()["steps"]
            .as_array()
            .unwrap()
            .len();
        assert_eq!(
            r.calls as usize, steps,
            "{method}: every scripted step is played"
        );
        assert!(
            r.rejected_calls >= 1,
            "{method}: no malformed call answered"
        );
        if matches!(method, "graphtrace" | "obstrace") {
            assert!(r.summaries >= 1, "{method}: never summarized");
        }
        let log = server_log(&model).await;
        assert_eq!(log.len(), steps, "{method}: requests the server saw");
        console_log!(
            "{method}: {} calls over fetch, {} input tokens",
            r.calls,
            r.usage.input_tokens
        );
    }
}
