#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed expectation should panic
//! `attributeWith` and `counterfactual` against the local scripted LLM server
//! (`python3 tests/llm_server/server.py --port 8765`, started by `scripts/test`; another URL can
//! be compiled in with `MEMTRACE_TEST_LLM_URL`), in a real browser, and cancelled by an AbortSignal.

mod common;

use common::{json, load, opts, thrown, BASE, DEMO};
use serde_json::json;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

fn run_id() -> String {
    format!(
        "{:.0}-{:.0}",
        js_sys::Date::now(),
        js_sys::Math::random() * 1e9
    )
}

fn provider(base: &str, model: &str) -> serde_json::Value {
    json!({"kind": "openai", "baseUrl": format!("{base}/v1"), "model": model, "apiKey": "sk-wasm-test", "timeoutMs": 20000})
}

#[wasm_bindgen_test]
async fn graphtrace_attributes_every_demo_case_over_fetch() {
    let t = load(DEMO);
    let n = json(t.cases().unwrap()).as_array().unwrap().len();
    let o = opts(&json!({
        "method": "graphtrace",
        "provider": provider(BASE, &format!("auto@wasm-{}", run_id())),
        "concurrency": 2,
    }));
    // onProgress is a JS function: count its calls.
    let counter = js_sys::Array::new();
    let on_progress = wasm_bindgen::closure::Closure::<dyn FnMut(JsValue)>::new({
        let counter = counter.clone();
        move |p: JsValue| {
            counter.push(&p);
        }
    });
    js_sys::Reflect::set(&o, &"onProgress".into(), on_progress.as_ref()).unwrap();
    let out = JsFuture::from(t.attribute_with(None, o).unwrap())
        .await
        .unwrap();
    let out = json(out);
    let out = out.as_array().unwrap();
    assert_eq!(out.len(), n);
    for x in out {
        assert_eq!(x["method"], "graphtrace", "{x}");
        assert!(x["op_id"].as_str().unwrap().starts_with("op-"), "{x}");
    }
    assert_eq!(counter.length() as usize, n, "one progress call per case");
    let last = json(counter.get(counter.length() - 1));
    assert_eq!(last["done"], n);
    assert_eq!(last["total"], n);
    // The kept verdicts feed the exports.
    let run: serde_json::Value = serde_json::from_str(&t.results_json()).unwrap();
    assert_eq!(
        run["results"][0]["error_attribution_result"]["method"],
        "graphtrace"
    );
}

#[wasm_bindgen_test]
async fn an_abort_signal_cancels_a_run() {
    let t = load(DEMO);
    let controller = web_sys::AbortController::new().unwrap();
    let o = opts(&json!({
        "method": "obstrace",
        // Every reply on this path is slow: the run is still waiting when the abort comes.
        "provider": provider(&format!("{BASE}/_fault/slow"), &format!("auto@wasm-cancel-{}", run_id())),
    }));
    js_sys::Reflect::set(&o, &"signal".into(), &controller.signal()).unwrap();
    let promise = t.attribute_with(None, o).unwrap();
    gloo_timers::future::TimeoutFuture::new(300).await;
    let started = js_sys::Date::now();
    controller.abort();
    let err = JsFuture::from(promise).await.unwrap_err();
    let e = thrown(err);
    assert_eq!(e["kind"], "cancelled", "{e}");
    assert!(
        js_sys::Date::now() - started < 2000.0,
        "the abort ends the run at once"
    );
}

#[wasm_bindgen_test]
async fn counterfactual_checks_a_verdict_and_bad_providers_are_refused() {
    let t = load(DEMO);
    let verdicts = t.attribute(None, JsValue::UNDEFINED).unwrap();
    let first = js_sys::Array::from(&verdicts).get(0);
    // A verdict row names its case and op: the check takes it as it is.
    let attribution = first;
    let o = opts(&json!({"provider": provider(BASE, &format!("auto@wasm-cf-{}", run_id()))}));
    let check = json(
        JsFuture::from(t.counterfactual(attribution, o).unwrap())
            .await
            .unwrap(),
    );
    let outcome = check["outcome"].as_str().unwrap();
    assert!(
        !outcome.is_empty() && check["detail"].is_string(),
        "{check}"
    );
    let e = thrown(
        t.attribute_with(None, opts(&json!({"method": "graphtrace"})))
            .unwrap_err(),
    );
    assert_eq!(e["kind"], "argument");
    let e = thrown(
        t.attribute_with(
            None,
            opts(&json!({"method": "graphtrace", "provider": {"kind": "gemini", "model": "x"}})),
        )
        .unwrap_err(),
    );
    assert_eq!(e["kind"], "argument", "{e}");
}
