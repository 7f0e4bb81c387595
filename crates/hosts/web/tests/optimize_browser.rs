#![cfg(target_arch = "wasm32")]
//! The closed loop in headless Chromium: the simulated provider runs the memory system in the
//! page, the optimizer calls go over real `fetch` to the local scripted server
//! (`tests/llm_server/scripts/optimize_loop.json`; URL from `MEMTRACE_TEST_LLM_URL`, default
//! `http://127.0.0.1:8765`). One full round and round two, the state saved and restored as JSON
//! between steps (as the page does with IndexedDB), and every request body checked.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

mod common;

use memtrace::provider::{ApiKey, ApiKind, HttpLlm, ProviderConfig, RetryPolicy};
use memtrace_memsys::closed_loop::{advance, LoopConfig, LoopState, Phase};
use memtrace_memsys::simulated::SimulatedLlm;
use memtrace_memsys::{Conversation, Prompts};
use memtrace_web::services::http::{FetchTransport, TimerSleep};
use serde_json::Value;
use wasm_bindgen_test::{console_log, wasm_bindgen_test, wasm_bindgen_test_configure};

use common::BASE;

wasm_bindgen_test_configure!(run_in_browser);

fn conversations() -> Vec<Conversation> {
    let text = include_bytes!("../../../../tests/optimize_data/conversations.json");
    memtrace_memsys::locomo::parse_conversations(text).unwrap()
}

#[wasm_bindgen_test]
async fn one_round_and_round_two_over_fetch() {
    let model = format!(
        "script:optimize_loop@{:.0}-{:.0}",
        js_sys::Date::now(),
        js_sys::Math::random() * 1e9
    );
    let mut cfg = ProviderConfig::new(
        ApiKind::OpenAi,
        &model,
        Some(ApiKey::new("sk-browser-optimize")),
    );
    cfg.base_url = format!("{BASE}/v1");
    cfg.timeout_ms = 10_000;
    cfg.retry = RetryPolicy {
        max_retries: 4,
        base_delay_ms: 20,
        max_delay_ms: 200,
        seed: 3,
        ..RetryPolicy::default()
    };
    let optimizer = HttpLlm::new(cfg, FetchTransport::default(), TimerSleep).unwrap();
    let convs = conversations();
    let loop_cfg = LoopConfig {
        rounds: 2,
        train: vec![0],
        heldout: vec![1],
        ..LoopConfig::default()
    };
    let loop_cfg = LoopConfig {
        optimize: memtrace::optimize::OptimizeConfig {
            batch_size: 2,
            ..loop_cfg.optimize.clone()
        },
        ..loop_cfg
    };
    let mut state = LoopState::new(loop_cfg, Prompts::default()).unwrap();
    let mut steps = 0;
    while state.phase != Phase::Done {
        let saved = serde_json::to_string(&state).unwrap();
        state = serde_json::from_str(&saved).unwrap();
        advance(&mut state, &convs, &SimulatedLlm, &optimizer, &mut |_| {})
            .await
            .unwrap();
        steps += 1;
        assert!(steps < 20);
    }
    console_log!("{}", state.chart_text());
    let s = state.series();
    assert!(s[1].1 > s[0].1, "train accuracy rises: {s:?}");

    let resp = gloo_net::http::Request::get(&format!("{BASE}/_log"))
        .send()
        .await
        .unwrap();
    let all: Vec<Value> = serde_json::from_str(&resp.text().await.unwrap()).unwrap();
    let log: Vec<&Value> = all
        .iter()
        .filter(|r| r["body"]["model"] == model.as_str())
        .collect();
    assert!(!log.is_empty());
    let mut users = Vec::new();
    for rec in &log {
        assert!(rec["path"]
            .as_str()
            .unwrap()
            .ends_with("/v1/chat/completions"));
        let body = &rec["body"];
        assert_eq!(body["response_format"]["type"], "json_schema");
        let msgs = body["messages"].as_array().unwrap();
        assert_eq!(msgs[0]["role"], "system");
        let user = msgs[1]["content"].as_str().unwrap().to_owned();
        assert!(user.starts_with("TASK: ") && user.contains("<<<BEGIN") && user.contains("<<<END"));
        users.push(user);
    }
    assert!(users
        .iter()
        .any(|u| u.starts_with("TASK: aggregate") && u.contains("batch 2 of")));
    assert_eq!(
        users
            .iter()
            .filter(|u| u.contains("dropped the placeholders $context"))
            .count(),
        1
    );
    assert!(
        users
            .iter()
            .any(|u| u.starts_with("TASK: feedback")
                && u.contains("Earlier steps on this prompt (1;"))
    );
    let edit = state.rounds[0]
        .edits
        .iter()
        .find(|e| e.target == "question-answering-prompt")
        .unwrap();
    assert_eq!(edit.rejected.len(), 1);
    assert!(state
        .prompts
        .fact_extraction
        .ends_with("Keep every date: resolve relative dates."));
    console_log!("{} optimizer requests over fetch", log.len());
}
