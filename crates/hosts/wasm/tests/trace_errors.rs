#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed expectation should panic
//! Load errors thrown as `MemtraceError` objects: kind, where, hint; options that change loading.

mod common;

use common::{json, opts, thrown, FIXTURE_1};
use memtrace_wasm::Trace;
use serde_json::json;
use wasm_bindgen::JsValue;
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
fn truncated_json_has_a_line_and_column() {
    let e = thrown(
        Trace::load(
            b"{\"graph_id\": \"g\",\n \"data\": {\"nodes\": [",
            JsValue::UNDEFINED,
        )
        .err()
        .unwrap(),
    );
    assert_eq!(e["name"], "MemtraceError");
    assert_eq!(e["kind"], "json");
    assert_eq!(e["line"], 2);
    assert!(e["column"].as_u64().unwrap() > 0);
    assert!(
        e["hint"].as_str().unwrap().contains("export it again"),
        "{e}"
    );
}

#[wasm_bindgen_test]
fn a_dangling_reference_has_a_path() {
    let mut v: serde_json::Value = serde_json::from_slice(FIXTURE_1).unwrap();
    v["data"]["edges"][0]["op_id"] = json!("op-missing");
    let bytes = serde_json::to_vec(&v).unwrap();
    let e = thrown(Trace::load(&bytes, JsValue::UNDEFINED).err().unwrap());
    assert_eq!(e["kind"], "dangling", "{e}");
    assert!(
        e["path"].as_str().unwrap().starts_with("data.edges[0]"),
        "{e}"
    );
    assert!(e["hint"].as_str().unwrap().contains("lenient"), "{e}");
}

/// The failed questions are found on the first query, but what finding them refuses (an
/// annotation's error type) is refused by `load`, never by a later query.
#[wasm_bindgen_test]
fn a_bad_annotation_is_refused_at_load() {
    let mut v: serde_json::Value = serde_json::from_slice(FIXTURE_1).unwrap();
    v["data"]["annotations"][2]["final_error_type"] = json!("TypoError");
    let bytes = serde_json::to_vec(&v).unwrap();
    let e = thrown(Trace::load(&bytes, JsValue::UNDEFINED).err().unwrap());
    assert_eq!(e["path"], "data.annotations[2].final_error_type", "{e}");
    // And a good file's cases are there on the first query.
    let t = Trace::load(FIXTURE_1, JsValue::UNDEFINED).unwrap();
    assert_eq!(json(t.cases().unwrap()).as_array().unwrap().len(), 6);
}

#[wasm_bindgen_test]
fn not_a_trace_and_bad_options() {
    let e = thrown(
        Trace::load(b"{\"hello\": 1}", JsValue::UNDEFINED)
            .err()
            .unwrap(),
    );
    assert_eq!(e["kind"], "unknown_format");
    let e = thrown(
        Trace::load(FIXTURE_1, opts(&json!({"format": "csv"})))
            .err()
            .unwrap(),
    );
    assert_eq!(e["kind"], "argument");
    assert!(
        e["message"].as_str().unwrap().contains("smartcomment"),
        "{e}"
    );
    let e = thrown(
        Trace::load(FIXTURE_1, opts(&json!({"failedIf": ["span="]})))
            .err()
            .unwrap(),
    );
    assert_eq!(e["kind"], "rule", "{e}");
}

#[wasm_bindgen_test]
fn failed_if_and_names_change_what_is_loaded() {
    // A rule that matches no output leaves the annotated cases only.
    let t = Trace::load(
        FIXTURE_1,
        opts(&json!({"failedIf": ["output~^NO SUCH ANSWER$"], "name": "one.json"})),
    )
    .unwrap();
    let cases = json(t.cases().unwrap());
    assert!(!cases.as_array().unwrap().is_empty());
    let run: serde_json::Value = serde_json::from_str(&t.results_json()).unwrap();
    assert_eq!(run["sampled_graph_paths"][0], "one.json");
}

#[wasm_bindgen_test]
fn summarize_and_version_still_work() {
    let s = json(memtrace_wasm::summarize(FIXTURE_1).unwrap());
    assert_eq!(s["format"], "smartcomment");
    assert_eq!(memtrace_wasm::version(), env!("CARGO_PKG_VERSION"));
    let e = thrown(memtrace_wasm::summarize(b"").err().unwrap());
    assert_eq!(e["kind"], "unknown_format");
}

/// `{maxBytes}` sets the largest file: under the file's size it refuses it, naming itself in
/// the hint; over it the file loads; 0 is a bad argument.
#[wasm_bindgen_test]
fn max_bytes_lowers_and_raises_the_largest_file() {
    let size = FIXTURE_1.len();
    let e = thrown(
        Trace::load(FIXTURE_1, opts(&json!({"maxBytes": size - 1})))
            .err()
            .unwrap(),
    );
    assert_eq!(e["kind"], "too_large", "{e}");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains(&format!("({size} bytes)")),
        "{e}"
    );
    assert!(e["hint"].as_str().unwrap().contains("{maxBytes: "), "{e}");
    assert!(Trace::load(FIXTURE_1, opts(&json!({"maxBytes": size}))).is_ok());
    let zero = thrown(
        Trace::load(FIXTURE_1, opts(&json!({"maxBytes": 0})))
            .err()
            .unwrap(),
    );
    assert_eq!(zero["kind"], "argument", "{zero}");
}
