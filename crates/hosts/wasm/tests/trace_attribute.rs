#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed expectation should panic
//! Info-flow attribution through the handle, and the exports of its verdicts, in a real browser.

mod common;

use common::{fixtures, json, load, opts, FIXTURE_1};
use serde_json::json;
use wasm_bindgen::JsValue;
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
fn infoflow_verdicts_agree_with_the_annotations() {
    let (mut agree, mut annotated) = (0, 0);
    for (name, bytes) in fixtures() {
        let t = load(bytes);
        let out = json(t.attribute(None, JsValue::UNDEFINED).unwrap());
        let cases = json(t.cases().unwrap());
        assert_eq!(
            out.as_array().unwrap().len(),
            cases.as_array().unwrap().len(),
            "{name}"
        );
        for (o, c) in out
            .as_array()
            .unwrap()
            .iter()
            .zip(cases.as_array().unwrap())
        {
            assert_eq!(o["case_id"], c["query_id"]);
            let a = o;
            assert_eq!(a["method"], "infoflow", "{name}: {o}");
            if c["annotation"].is_object() {
                annotated += 1;
                agree += usize::from(
                    a["op_id"] == c["annotation"]["op_id"]
                        && a["error_type"] == c["annotation"]["error_type"],
                );
            }
        }
    }
    assert!(annotated >= 9, "{annotated}");
    // The README's measured 9/9 on the LoCoMo smartcomment fixtures, and every demo case.
    assert_eq!(
        agree, annotated,
        "op and type agree on every annotated case"
    );
}

#[wasm_bindgen_test]
fn one_case_by_id_and_llm_methods_are_sent_to_attribute_with() {
    let t = load(FIXTURE_1);
    let id = json(t.cases().unwrap())[1]["query_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let out = json(
        t.attribute(Some(id.clone()), opts(&json!({"method": "infoflow"})))
            .unwrap(),
    );
    assert_eq!(out.as_array().unwrap().len(), 1);
    assert_eq!(out[0]["case_id"], id.as_str());
    let err = common::thrown(
        t.attribute(None, opts(&json!({"method": "graphtrace"})))
            .unwrap_err(),
    );
    assert_eq!(err["kind"], "argument");
    assert!(
        err["message"].as_str().unwrap().contains("attributeWith"),
        "{err}"
    );
    let err = common::thrown(
        t.attribute(Some("query:none".into()), JsValue::UNDEFINED)
            .unwrap_err(),
    );
    assert_eq!(err["kind"], "not_found");
}

#[wasm_bindgen_test]
fn exports_carry_the_kept_verdicts() {
    let t = load(FIXTURE_1);
    let n = json(t.cases().unwrap()).as_array().unwrap().len();
    // Before attributing: every case "not attributed", no annotations, an empty report.
    let run: serde_json::Value = serde_json::from_str(&t.results_json()).unwrap();
    assert_eq!(run["results"].as_array().unwrap().len(), n);
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&t.annotations()).unwrap()["annotations"],
        json!([])
    );
    t.attribute(None, JsValue::UNDEFINED).unwrap();
    let run: serde_json::Value = serde_json::from_str(&t.results_json()).unwrap();
    let results = run["results"].as_array().unwrap();
    let right = results
        .iter()
        .filter(|r| r["is_operation_identifier_correct"] == true)
        .count();
    assert_eq!(right, n, "{run}");
    let csv = t.csv();
    assert_eq!(csv.split("\r\n").filter(|l| !l.is_empty()).count(), n + 1);
    assert!(
        csv.lines().skip(1).all(|l| l.trim_end().ends_with(",true")),
        "{csv}"
    );
    let anns: serde_json::Value = serde_json::from_str(&t.annotations()).unwrap();
    assert_eq!(anns["annotations"].as_array().unwrap().len(), n);
    let html = t.report_html();
    assert!(
        html.starts_with("<!DOCTYPE html>") || html.starts_with("<!doctype html>"),
        "{}",
        &html[..80]
    );
    let md = t.report_markdown();
    assert!(md.contains("Error"), "{md}");
    // The smartcomment export loads back to the same summary.
    let back = t.to_smartcomment().unwrap();
    assert_eq!(
        back.as_slice(),
        FIXTURE_1,
        "a smartcomment file is written back byte for byte"
    );
}
