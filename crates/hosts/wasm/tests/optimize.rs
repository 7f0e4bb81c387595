#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed expectation should panic
//! `optimizeStep` and `exportPrompts` in a real browser against the local scripted LLM server
//! (`python3 tests/llm_server/server.py --port 8765`, started by `scripts/test`; another URL can
//! be compiled in with `MEMTRACE_TEST_LLM_URL`), the optimizer played by
//! `tests/llm_server/scripts/optimize_step.json`.

mod common;

use common::{json, load, opts, thrown, BASE, DEMO};
use memtrace_wasm::{export_prompts, optimize_step};
use serde_json::json;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

const IMPROVED: &str = "Keep every date: resolve relative dates.";

#[wasm_bindgen_test]
async fn optimize_step_rewrites_blamed_prompts_and_exports_them() {
    let t = load(DEMO);
    let n = json(t.cases().unwrap()).as_array().unwrap().len();
    let traces = js_sys::Array::of1(&JsValue::from(t));
    let model = format!(
        "script:optimize_step@wasm-{:.0}-{:.0}",
        js_sys::Date::now(),
        js_sys::Math::random() * 1e9
    );
    let o = opts(&json!({
        "provider": {"kind": "openai", "baseUrl": format!("{BASE}/v1"), "model": model, "apiKey": "sk-wasm-test", "timeoutMs": 20000},
        "concurrency": 2,
    }));
    // No verdicts given: the trace keeps none, so info-flow's are used.
    let r = JsFuture::from(optimize_step(traces.clone().into(), JsValue::UNDEFINED, o).unwrap())
        .await
        .map_err(|e| thrown(e).to_string())
        .unwrap();
    let r = json(r);
    let failures = r["failures"].as_u64().unwrap() as usize;
    assert!(failures > 0, "{}", r["not_optimizable"]);
    let edits = r["step"]["edits"].as_array().unwrap();
    let accepted: Vec<&str> = edits
        .iter()
        .filter(|e| e["accepted"] == true)
        .map(|e| e["target"].as_str().unwrap())
        .collect();
    assert!(!accepted.is_empty(), "{edits:?}");
    for e in edits {
        if e["accepted"] == true {
            assert_eq!(e["new_value"], IMPROVED);
        } else {
            assert_eq!(
                e["new_value"], e["old_value"],
                "a refused update keeps the prompt"
            );
        }
    }
    // The handle is lent, not taken: it still answers.
    let summary = js_sys::Reflect::get(&traces.get(0), &"summary".into()).unwrap();
    let summary = js_sys::Function::from(summary)
        .call0(&traces.get(0))
        .unwrap();
    assert_eq!(json(summary)["failures"], n);

    let files = json(export_prompts("update_results".into(), None).unwrap());
    assert_eq!(files[0]["path"], "update_results.json");
    let keyed: serde_json::Value =
        serde_json::from_str(files[0]["text"].as_str().unwrap()).unwrap();
    for target in &accepted {
        assert_eq!(keyed[format!("{target}@2")]["value"], IMPROVED);
    }
    let text = json(export_prompts("text".into(), Some(opts(&r["versions"]))).unwrap());
    assert!(text
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["path"] == format!("prompts/{}@2.txt", accepted[0]) && f["text"] == IMPROVED));
    let e = thrown(export_prompts("yaml".into(), None).unwrap_err());
    assert_eq!(e["kind"], "argument", "{e}");
}

#[wasm_bindgen_test]
fn optimize_step_refuses_bad_arguments() {
    let provider = json!({"kind": "openai", "baseUrl": format!("{BASE}/v1"), "model": "echo"});
    let traces = js_sys::Array::of1(&JsValue::from(load(DEMO)));
    let e = thrown(
        optimize_step(traces.clone().into(), JsValue::UNDEFINED, opts(&json!({}))).unwrap_err(),
    );
    assert_eq!(e["kind"], "argument", "no provider: {e}");
    let bad = js_sys::Array::of2(&traces.get(0), &js_sys::Object::new());
    let e = thrown(
        optimize_step(
            bad.into(),
            JsValue::UNDEFINED,
            opts(&json!({"provider": provider})),
        )
        .unwrap_err(),
    );
    assert!(e["message"].as_str().unwrap().contains("traces[1]"), "{e}");
    let verdict = opts(
        &json!([{"case_id": "no-such-case", "op_id": "op-1", "op_name": "x",
        "error_type": "RetrievalError", "reason": "", "evidence_path": [], "confidence": 1.0,
        "cost": {"llm_calls": 0, "input_tokens": 0, "output_tokens": 0, "wall_ms": 0}, "method": "infoflow"}]),
    );
    let e = thrown(
        optimize_step(traces.into(), verdict, opts(&json!({"provider": provider}))).unwrap_err(),
    );
    assert_eq!(e["kind"], "argument", "{e}");
}
