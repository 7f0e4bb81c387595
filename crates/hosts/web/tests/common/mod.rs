//! What the page's browser tests share: the local scripted LLM server (`MEMTRACE_TEST_LLM_URL`),
//! its log and control endpoints, a fixture, and the session's graphtrace options.

#![allow(dead_code)] // each test file uses a part
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers fail by panicking

use std::cell::RefCell;
use std::rc::Rc;

use memtrace::session::MethodOptions;
use memtrace_web::services::runner::RunEvent;
use serde_json::Value;

/// The scripted LLM server (`python3 tests/llm_server/server.py`).
pub const BASE: &str = match option_env!("MEMTRACE_TEST_LLM_URL") {
    Some(url) => url,
    None => "http://127.0.0.1:8765",
};

/// A LoCoMo trace with annotated failures.
pub const FIXTURE: &[u8] =
    include_bytes!("../../../../../tests/fixtures/smartcomment/locomo/locomo_locomo-2.json");

/// A name no other run of the tests uses (models are logged by name on the server).
pub fn run_id() -> String {
    format!(
        "{:.0}-{:.0}",
        js_sys::Date::now(),
        js_sys::Math::random() * 1e9
    )
}

/// The requests the server logged for `model`.
pub async fn server_log(model: &str) -> Vec<Value> {
    let resp = gloo_net::http::Request::get(&format!("{BASE}/_log"))
        .send()
        .await
        .unwrap();
    let all: Vec<Value> = serde_json::from_str(&resp.text().await.unwrap()).unwrap();
    all.into_iter()
        .filter(|r| r["body"]["model"] == model)
        .collect()
}

/// Sets the server's behaviour (faults, delays).
pub async fn control(settings: &Value) {
    let resp = gloo_net::http::Request::post(&format!("{BASE}/_control"))
        .body(settings.to_string())
        .unwrap()
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
}

/// The session's options for graphtrace, the rest the defaults.
pub fn graphtrace() -> MethodOptions {
    MethodOptions {
        method: "graphtrace".into(),
        ..MethodOptions::default()
    }
}

/// What a runner reported, in order.
pub type Events = Rc<RefCell<Vec<RunEvent>>>;

/// A report callback that records its events.
pub fn recorder() -> (Events, Rc<dyn Fn(RunEvent)>) {
    let events: Events = Rc::default();
    let sink = events.clone();
    (events, Rc::new(move |e| sink.borrow_mut().push(e)))
}
