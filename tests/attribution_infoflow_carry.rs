//! Info-flow blames the faulty op, not the one after it, when a look-alike keeps the gold
//! answer's words but not its discriminating part: an extraction that changed a date is an
//! ExtractionError (not the answer op's fault), and a deleted unit with a look-alike left in
//! memory is a DeletionError (not a ResponseError). Hand-built traces, Mem0-shaped.

#![allow(clippy::unwrap_used)]

mod common;

use common::TraceBuilder;
use memtrace::attribution::InfoFlow;
use memtrace::model::{ErrorType, FailureCase};
use memtrace::Trace;

fn message(b: &mut TraceBuilder, name: &str, text: &str) -> String {
    let value = serde_json::json!({"content": text, "timestamp": "2023-04-02T10:00:00"});
    b.var(name, 1, "message", &value.to_string())
}

fn unit(b: &mut TraceBuilder, name: &str, version: u32, memory: Option<&str>) -> String {
    let value = match memory {
        Some(m) => serde_json::json!({"id": name, "memory": m, "timestamp": "2023-04-02T10:00:00"}),
        None => serde_json::json!({"id": name, "memory": null, "deleted": true}),
    };
    b.var(name, version, "memory_entry", &value.to_string())
}

/// Retrieval hands `units` to the answer op, which answers `prediction`.
fn ask(b: &mut TraceBuilder, question: &str, units: &[&str], prediction: &str) {
    let query = b.var("query:q1", 1, "message & query", question);
    b.op(
        "op-search",
        "memory.search",
        "retrieval",
        &[&query],
        &[],
        units,
    );
    let prompt = b.var("qa-prompt", 1, "prompt", "Answer from the memories.");
    let context = b.var("context:q1", 1, "memory_context", "the memories");
    let pred = b.var("prediction:q1", 1, "llm_response", prediction);
    let mut inputs: Vec<&str> = units.to_vec();
    inputs.extend([query.as_str(), prompt.as_str()]);
    b.op(
        "op-answer",
        "question-answering",
        "evaluation",
        &inputs,
        &[&context],
        &[&pred],
    );
}

fn case(question: &str, gold: &str, prediction: &str, evidence: &str) -> FailureCase {
    FailureCase {
        query_id: "query:q1@1".into(),
        query: question.into(),
        golden_answers: vec![gold.into()],
        prediction: prediction.into(),
        prediction_id: Some("prediction:q1@1".into()),
        evidence_ids: vec![evidence.into()],
        judge_score: Some(0.0),
        annotation: None,
        answer_op: Some("op-answer".into()),
        judge_op: None,
    }
}

fn verdict(t: &Trace, c: &FailureCase) -> (String, ErrorType, String) {
    let a = InfoFlow::default().attribute(t, c).unwrap();
    (a.op_id, a.error_type, a.reason)
}

#[test]
fn an_extraction_that_changed_a_date_is_blamed_on_the_extraction() {
    let mut b = TraceBuilder::new();
    let m = message(
        &mut b,
        "U1:D1:1",
        "I moved to Denver on 27 March 2023, right after my birthday!",
    );
    let p = b.var("extract-prompt", 1, "prompt", "Extract the facts.");
    let wrong = "Caroline moved to Denver on 20 March 2023, right after her birthday.";
    let facts = b.var(
        "extracted_facts",
        1,
        "llm_response",
        &serde_json::json!([wrong]).to_string(),
    );
    b.op(
        "op-extract",
        "memory.extract_facts",
        "extraction",
        &[&m, &p],
        &[],
        &[&facts],
    );
    let a = unit(&mut b, "memory-unit-a", 1, Some(wrong));
    b.op(
        "op-update",
        "memory.update_memory",
        "update",
        &[&facts],
        &[],
        &[&a],
    );
    let question = "When did Caroline move to Denver?";
    ask(&mut b, question, &[&a], "20 March 2023");
    let t = b.build();
    let (op, kind, reason) = verdict(&t, &case(question, "27 March 2023", "20 March 2023", &m));
    assert_eq!(
        (op.as_str(), kind),
        ("op-extract", ErrorType::ExtractionError),
        "{reason}"
    );
    assert!(reason.contains("27 March 2023 → 20 March 2023"), "{reason}");
}

#[test]
fn a_deleted_unit_with_a_look_alike_left_is_a_deletion_error() {
    let mut b = TraceBuilder::new();
    let m1 = message(
        &mut b,
        "U1:D1:1",
        "Last summer we went on a camping trip to Banff.",
    );
    let p = b.var("extract-prompt", 1, "prompt", "Extract the facts.");
    let kept = "Caroline went on a camping trip to Banff last summer.";
    let f1 = b.var(
        "extracted_facts",
        1,
        "llm_response",
        &serde_json::json!([kept]).to_string(),
    );
    b.op(
        "op-extract-1",
        "memory.extract_facts",
        "extraction",
        &[&m1, &p],
        &[],
        &[&f1],
    );
    let a1 = unit(&mut b, "memory-unit-a", 1, Some(kept));
    b.op(
        "op-update-1",
        "memory.update_memory",
        "update",
        &[&f1],
        &[],
        &[&a1],
    );
    let m2 = message(
        &mut b,
        "U1:D1:2",
        "Next year we plan a camping trip to Yosemite.",
    );
    let plan = "Caroline plans a camping trip to Yosemite next year.";
    let f2 = b.var(
        "extracted_facts",
        2,
        "llm_response",
        &serde_json::json!([plan]).to_string(),
    );
    b.op(
        "op-extract-2",
        "memory.extract_facts",
        "extraction",
        &[&m2, &p],
        &[],
        &[&f2],
    );
    // The decision deletes the Banff unit and adds the Yosemite plan in its place.
    let a2 = unit(&mut b, "memory-unit-a", 2, None);
    let b1 = unit(&mut b, "memory-unit-b", 1, Some(plan));
    b.op(
        "op-decide",
        "memory.update_memory_decision",
        "update",
        &[&f2, &a1],
        &[],
        &[&a2, &b1],
    );
    let question = "Where did Caroline travel with her family?";
    ask(&mut b, question, &[&b1], "Yosemite");
    let t = b.build();
    let c = case(question, "a camping trip to Banff", "Yosemite", &m1);
    let (op, kind, reason) = verdict(&t, &c);
    assert_eq!(
        (op.as_str(), kind),
        ("op-decide", ErrorType::DeletionError),
        "{reason}"
    );
}
