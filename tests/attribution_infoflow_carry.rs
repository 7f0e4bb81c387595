//! Info-flow blames the faulty op, not the one after it, when a look-alike keeps the gold
//! answer's words but not its discriminating part: an extraction that changed a date is an
//! ExtractionError (not the answer op's fault), and a deleted unit with a look-alike left in
//! memory is a DeletionError (not a ResponseError). Hand-built traces, Mem0-shaped.

#![allow(clippy::unwrap_used)]

mod common;

use common::{ask, assert_blames, blame, case, extract_op, message, unit, TraceBuilder};
use memtrace::model::ErrorType;

/// Mem0's retrieval op.
const SEARCH: (&str, &str) = ("op-search", "memory.search");
const SAID: &str = "2023-04-02T10:00:00";

#[test]
fn an_extraction_that_changed_a_date_is_blamed_on_the_extraction() {
    let mut b = TraceBuilder::new();
    let m = message(
        &mut b,
        "U1:D1:1",
        "I moved to Denver on 27 March 2023, right after my birthday!",
        SAID,
    );
    let p = b.var("extract-prompt", 1, "prompt", "Extract the facts.");
    let wrong = "Caroline moved to Denver on 20 March 2023, right after her birthday.";
    let facts = b.var(
        "extracted_facts",
        1,
        "llm_response",
        &serde_json::json!([wrong]).to_string(),
    );
    extract_op(&mut b, "memory.extract_facts", &[&m, &p], &[&facts]);
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
    ask(&mut b, SEARCH, question, &[&a], "20 March 2023", true);
    let t = b.build();
    let reason = assert_blames(
        &blame(&t, &case(question, "27 March 2023", "20 March 2023", &m)),
        "op-extract",
        ErrorType::ExtractionError,
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
        SAID,
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
        SAID,
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
    ask(&mut b, SEARCH, question, &[&b1], "Yosemite", true);
    let t = b.build();
    let c = case(question, "a camping trip to Banff", "Yosemite", &m1);
    assert_blames(&blame(&t, &c), "op-decide", ErrorType::DeletionError);
}
