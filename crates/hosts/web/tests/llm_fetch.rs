#![cfg(target_arch = "wasm32")]
//! The LLM providers over real `fetch` in headless Chromium, against the local scripted server
//! (`python3 tests/llm_server/server.py --port 8765`, started by `scripts/test`; another URL can
//! be compiled in with `MEMTRACE_TEST_LLM_URL`). The same conversation and checks as the native
//! tests in `crates/hosts/cli/tests/`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

#[path = "../../cli/tests/common/conversation.rs"]
mod conversation;

mod common;

use conversation::{check_headers_and_key, check_outcome, expected_bodies, request, weather};
use memtrace::provider::{
    chat_batch, run_tool_loop, ApiKey, ApiKind, CancelToken, ChatMessage, ChatRequest, ChatRole,
    HttpLlm, ProviderConfig, ProviderError, RetryPolicy,
};
use memtrace_web::services::http::{forget_key, load_key, store_key, FetchTransport, TimerSleep};
use serde_json::{json, Value};
use wasm_bindgen_test::{console_log, wasm_bindgen_test, wasm_bindgen_test_configure};

use common::{control, run_id, server_log, BASE};

wasm_bindgen_test_configure!(run_in_browser);

const KEY: &str = "sk-browser-SECRET-5e1d";

fn config(api: ApiKind, model: &str) -> ProviderConfig {
    let mut cfg = ProviderConfig::new(api, model, Some(ApiKey::new(KEY)));
    cfg.base_url = format!("{BASE}/v1");
    cfg.timeout_ms = 10_000;
    cfg.retry = RetryPolicy {
        max_retries: 10,
        base_delay_ms: 20,
        max_delay_ms: 400,
        seed: 5,
        ..RetryPolicy::default()
    };
    cfg
}

async fn conversation(api: ApiKind, path: &str) {
    control(&json!({"fault_rate": 0.0})).await;
    let model = format!("script:weather@{}", run_id());
    let llm = HttpLlm::new(config(api, &model), FetchTransport::default(), TimerSleep).unwrap();
    let out = run_tool_loop(&llm, request(), 8, weather).await.unwrap();
    check_outcome(&out);
    let stats = llm.stats();
    assert_eq!((stats.calls, stats.attempts, stats.retries), (4, 4, 0));
    let log = server_log(&model).await;
    let expected = expected_bodies(api, &model);
    assert_eq!(log.len(), expected.len(), "requests the server saw");
    for (i, (rec, want)) in log.iter().zip(&expected).enumerate() {
        assert_eq!(rec["path"], path, "request {i}");
        assert_eq!(&rec["body"], want, "request {i} body");
        check_headers_and_key(rec, api, KEY);
    }
}

#[wasm_bindgen_test]
async fn openai_conversation_over_fetch() {
    conversation(ApiKind::OpenAi, "/v1/chat/completions").await;
}

#[wasm_bindgen_test]
async fn anthropic_conversation_over_fetch() {
    conversation(ApiKind::Anthropic, "/v1/messages").await;
}

#[wasm_bindgen_test]
async fn batch_under_thirty_percent_faults_over_fetch() {
    for (api, seed) in [(ApiKind::OpenAi, 21), (ApiKind::Anthropic, 22)] {
        control(
            &json!({"fault_rate": 0.3, "seed": seed, "kinds": ["429", "500", "slow"],
                        "retry_after_s": 1, "slow_ms": 2500}),
        )
        .await;
        let model = format!("echo@{}", run_id());
        let mut cfg = config(api, &model);
        cfg.timeout_ms = 1200; // slow replies time out and are retried
        let llm = HttpLlm::new(cfg, FetchTransport::default(), TimerSleep).unwrap();
        let requests: Vec<ChatRequest> = (0..50)
            .map(|i| ChatRequest {
                messages: vec![ChatMessage::text(
                    ChatRole::User,
                    format!("browser request {i}"),
                )],
                ..ChatRequest::default()
            })
            .collect();
        let out = chat_batch(&llm, &requests, 6).await;
        control(&json!({"fault_rate": 0.0})).await;
        for (i, r) in out.iter().enumerate() {
            let reply = r
                .as_ref()
                .unwrap_or_else(|e| panic!("request {i} failed: {e}"));
            assert_eq!(reply.content, format!("echo: browser request {i}"));
        }
        let log = server_log(&model).await;
        let faulted = log.iter().filter(|r| !r["fault"].is_null()).count();
        let stats = llm.stats();
        assert_eq!(stats.attempts as usize, log.len());
        assert_eq!(
            stats.retries as usize, faulted,
            "one retry per injected fault"
        );
        assert!(faulted >= 5, "the fault rate was applied: {faulted}");
        let text = |r: &Value| r["body"]["messages"][0]["content"].to_string();
        let mut min_wait = f64::INFINITY;
        for rec in log.iter().filter(|r| r["fault"] == "429") {
            let seq = rec["seq"].as_u64().unwrap();
            let next = log
                .iter()
                .find(|r| r["seq"].as_u64().unwrap() > seq && text(r) == text(rec))
                .expect("the rate-limited request was retried");
            let wait = next["t_ms"].as_f64().unwrap() - rec["t_done_ms"].as_f64().unwrap();
            assert!(
                wait >= 1000.0,
                "retried after {wait} ms, Retry-After was 1 s"
            );
            min_wait = min_wait.min(wait);
        }
        console_log!(
            "browser {api:?}: 50 requests, {} attempts, {} retries, min wait after 429 {min_wait:.0} ms",
            stats.attempts,
            stats.retries
        );
    }
}

#[wasm_bindgen_test]
async fn cancel_ends_requests_in_flight() {
    control(&json!({"fault_rate": 0.0, "slow_ms": 3000})).await;
    let mut cfg = config(ApiKind::Anthropic, "m");
    cfg.base_url = format!("{BASE}/_fault/slow/v1");
    let token = CancelToken::new();
    let llm = HttpLlm::new(cfg, FetchTransport::default(), TimerSleep)
        .unwrap()
        .with_cancel(token.clone());
    let started = js_sys::Date::now();
    let canceller = async {
        gloo_timers::future::TimeoutFuture::new(200).await;
        token.cancel();
    };
    let requests = vec![ChatRequest::default(); 3];
    let (out, ()) = futures_util::future::join(chat_batch(&llm, &requests, 3), canceller).await;
    let took = js_sys::Date::now() - started;
    assert!(
        out.iter().all(|r| *r == Err(ProviderError::Cancelled)),
        "{out:?}"
    );
    assert!(
        (200.0..2000.0).contains(&took),
        "cancelled after {took} ms (the replies take 3000)"
    );
}

#[wasm_bindgen_test]
async fn unreachable_server_says_what_to_change() {
    let mut cfg = config(ApiKind::OpenAi, "m");
    cfg.base_url = "http://127.0.0.1:9/v1".into();
    let llm = HttpLlm::new(cfg, FetchTransport::default(), TimerSleep).unwrap();
    let r = chat_batch(&llm, &[ChatRequest::default()], 1).await;
    let err = r.into_iter().next().unwrap().unwrap_err();
    assert!(matches!(err, ProviderError::Blocked { .. }), "{err:?}");
    let shown = err.to_string();
    assert!(
        shown.contains("cross-origin") && !shown.contains(KEY),
        "{shown}"
    );
}

#[wasm_bindgen_test]
fn key_is_kept_for_the_session_unless_remembered() {
    let provider = format!("test-{}", run_id());
    let key = ApiKey::new("sk-stored-1");
    store_key(&provider, &key, false).unwrap();
    assert_eq!(load_key(&provider), Some(key.clone()));
    let local = web_sys::window().unwrap().local_storage().unwrap().unwrap();
    let name = format!("memtrace.api-key.{provider}");
    assert_eq!(
        local.get_item(&name).unwrap(),
        None,
        "not remembered unless asked"
    );
    store_key(&provider, &key, true).unwrap();
    assert_eq!(
        local.get_item(&name).unwrap().as_deref(),
        Some("sk-stored-1")
    );
    store_key(&provider, &key, false).unwrap();
    assert_eq!(
        local.get_item(&name).unwrap(),
        None,
        "opting out forgets the remembered key"
    );
    forget_key(&provider);
    assert_eq!(load_key(&provider), None);
}
