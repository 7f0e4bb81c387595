#![cfg(target_arch = "wasm32")]
//! A 401 from the provider ends a case at once in the page's runner, over real `fetch` in
//! headless Chromium against the local scripted server (`MEMTRACE_TEST_LLM_URL`): one request
//! (no retry, no second attempt), the case reported failed with "key rejected".

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

mod common;

use std::cell::RefCell;
use std::rc::Rc;

use memtrace::attribution::RoleConfig;
use memtrace::provider::ApiKey;
use memtrace::{load, LoadOptions};
use memtrace_web::runs::llm_run::ProviderSettings;
use memtrace_web::services::runner::{run_cases, RunEvent, Stopper};
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

use common::{graphtrace, BASE, FIXTURE};

wasm_bindgen_test_configure!(run_in_browser);

/// Requests the server logged for `model`.
async fn requests_for(model: &str) -> usize {
    let resp = gloo_net::http::Request::get(&format!("{BASE}/_log"))
        .send()
        .await
        .unwrap();
    let log: Vec<serde_json::Value> = serde_json::from_str(&resp.text().await.unwrap()).unwrap();
    log.iter().filter(|r| r["body"]["model"] == model).count()
}

#[wasm_bindgen_test]
async fn a_rejected_key_ends_the_case_at_once() {
    let trace = std::sync::Arc::new(load(FIXTURE, LoadOptions::default()).unwrap().trace);
    let model = format!("agent:3@key-{:.0}", js_sys::Date::now());
    let settings = ProviderSettings {
        base_url: format!("{BASE}/_fault/401/v1"),
        model: model.clone(),
        timeout_ms: 20_000,
        ..ProviderSettings::default()
    };
    let events: Rc<RefCell<Vec<RunEvent>>> = Rc::default();
    let sink = events.clone();
    run_cases(
        trace,
        graphtrace(),
        vec![0],
        settings,
        RoleConfig::default(),
        Some(ApiKey::new("sk-wrong")),
        Stopper::new().unwrap(),
        Rc::new(move |e| sink.borrow_mut().push(e)),
    )
    .await;
    let events = events.borrow().clone();
    let error = events
        .iter()
        .find_map(|e| match e {
            RunEvent::Failed { error, .. } => Some(error.clone()),
            _ => None,
        })
        .expect("the case fails");
    assert!(error.contains("key rejected"), "{error}");
    assert!(!events.iter().any(|e| matches!(e, RunEvent::Reply { .. })));
    assert_eq!(
        requests_for(&model).await,
        1,
        "one request, then the case ends"
    );
}
