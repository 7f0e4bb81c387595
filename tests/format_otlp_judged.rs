#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed expectation should panic
//! Judgements that are not an LLM judge's reply: OpenInference's `evaluation.label|score` /
//! `annotation.label|score` attributes and GenAI `gen_ai.evaluation.result` events (on the
//! span, or as log records). Each test takes a real fixture (tests/fixtures/otel/README.md),
//! drops its LLM judge and puts the judgement on the answering span instead.

#[path = "common/formats.rs"]
mod formats;

use formats::load_ok;
use memtrace::attribution::InfoFlow;
use memtrace::model::Trace;
use serde_json::{json, Value};

const SPANS: &str = include_str!("fixtures/otel/openinference_traces.json");
const TRACES: &str = include_str!("fixtures/otel/genai_traces.json");
const LOGS: &str = include_str!("fixtures/otel/genai_logs.json");
const ANSWER: &str = "Your cat is named Mochi.";
const JUDGE: &str = "Grade the answer";

fn mentions(v: &Value, text: &str) -> bool {
    v.to_string().contains(text)
}

/// The openinference fixture without its judge, `edit` applied to the answering span.
fn judged_by(edit: impl Fn(&mut Value)) -> Trace {
    let mut d: Value = serde_json::from_str(SPANS).unwrap();
    let spans = d["resourceSpans"][0]["scopeSpans"][0]["spans"]
        .as_array_mut()
        .unwrap();
    let before = spans.len();
    spans.retain(|s| !mentions(&s["attributes"], JUDGE));
    assert_eq!(spans.len(), before - 1, "the judge span is dropped");
    let answer = spans
        .iter_mut()
        .find(|s| mentions(&s["attributes"], ANSWER) && !mentions(&s["attributes"], "Miso."))
        .unwrap();
    edit(answer);
    load_ok(d.to_string().as_bytes()).trace
}

fn attr(key: &str, value: Value) -> impl Fn(&mut Value) {
    let key = key.to_owned();
    move |s: &mut Value| {
        s["attributes"]
            .as_array_mut()
            .unwrap()
            .push(json!({"key": key, "value": value}));
    }
}

/// The one failed case names the answering call; attribution blames it.
fn failed_at_answer(t: &Trace, which: &str) {
    assert_eq!(t.cases.len(), 1, "{which}");
    let answer = t.vars.iter().position(|v| v.value == ANSWER).unwrap();
    let op = t.flow.producers[answer][0];
    let case = &t.cases[0];
    assert_eq!(case.query, "What is the name of my cat?", "{which}");
    assert_eq!(
        case.answer_op.as_deref(),
        Some(t.ops[op.get()].op_id.as_str()),
        "{which}"
    );
    let mut case = case.clone();
    case.golden_answers = vec!["Miso".into()];
    let got = InfoFlow::default().attribute(t, &case).unwrap();
    assert_eq!(got.op_id, t.ops[op.get()].op_id, "{which}: {got:?}");
}

#[test]
fn a_failing_label_on_the_answer_span_marks_the_failure() {
    for key in ["evaluation.label", "annotation.label"] {
        for label in ["incorrect", "WRONG", "fail"] {
            let t = judged_by(attr(key, json!({"stringValue": label})));
            failed_at_answer(&t, &format!("{key}={label}"));
        }
        let t = judged_by(attr(key, json!({"stringValue": "correct"})));
        assert!(t.cases.is_empty(), "{key}=correct passes");
    }
}

#[test]
fn a_graded_score_fails_below_the_threshold() {
    let t = judged_by(attr("annotation.score", json!({"doubleValue": 0.3})));
    failed_at_answer(&t, "annotation.score 0.3");
    let t = judged_by(attr("evaluation.score", json!({"doubleValue": 0.7})));
    assert!(t.cases.is_empty(), "0.7 passes");
}

#[test]
fn an_evaluation_event_on_the_span_marks_the_failure() {
    let t = judged_by(|s: &mut Value| {
        s["events"] = json!([{
            "name": "gen_ai.evaluation.result",
            "timeUnixNano": s["endTimeUnixNano"].clone(),
            "attributes": [
                {"key": "gen_ai.evaluation.name", "value": {"stringValue": "correctness"}},
                {"key": "gen_ai.evaluation.score.label", "value": {"stringValue": "incorrect"}}
            ]
        }]);
    });
    failed_at_answer(&t, "span event");
}

#[test]
fn an_evaluation_log_record_marks_the_failure() {
    let mut logs: Value = serde_json::from_str(LOGS).unwrap();
    let records = logs["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
        .as_array_mut()
        .unwrap();
    records.retain(|r| !mentions(r, JUDGE));
    let answer = records
        .iter()
        .find(|r| mentions(r, ANSWER))
        .unwrap()
        .clone();
    let mut event = json!({
        "eventName": "gen_ai.evaluation.result",
        "spanId": answer["spanId"].clone(),
        "traceId": answer["traceId"].clone(),
        "timeUnixNano": answer["timeUnixNano"].clone(),
        "attributes": [
            {"key": "gen_ai.evaluation.name", "value": {"stringValue": "relevance"}},
            {"key": "gen_ai.evaluation.score.value", "value": {"doubleValue": 0.2}}
        ]
    });
    records.push(event.clone());
    let jsonl = |logs: &Value| {
        format!(
            "{}\n{}\n",
            serde_json::from_str::<Value>(TRACES).unwrap(),
            logs
        )
    };
    let t = load_ok(jsonl(&logs).as_bytes()).trace;
    failed_at_answer(&t, "log record, score 0.2");
    // The same record with a passing score finds no failure.
    event["attributes"][1]["value"] = json!({"doubleValue": 0.9});
    let records = logs["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
        .as_array_mut()
        .unwrap();
    *records.last_mut().unwrap() = event;
    assert!(load_ok(jsonl(&logs).as_bytes()).trace.cases.is_empty());
}
