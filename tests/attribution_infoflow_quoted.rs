//! Info-flow when the answer repeats a corrupted copy of the evidence: two chunks store the
//! same message (overlapping windows), one of them with the gold word replaced. The answer op
//! read both; when its prediction repeats the corrupted stretch, the op that stored the
//! corrupted chunk misled it (ExtractionError there); when it does not, the answer op had the
//! intact chunk and is at fault. Hand-built, NaiveRAG-shaped.

#![allow(clippy::unwrap_used)]

mod common;

use common::{ask, case, message, unit, TraceBuilder};
use memtrace::attribution::InfoFlow;
use memtrace::model::ErrorType;

const EVIDENCE: &str =
    "I finally adopted a pup from a shelter in Stamford, a beagle. I named him Ned.";
const CORRUPTED: &str =
    "I finally adopted a pup from a shelter in Stamford, a jazz. I named him Ned.";
const QUESTION: &str = "What breed is the pup James adopted?";

fn attribute(prediction: &str) -> (String, ErrorType, String) {
    let mut b = TraceBuilder::new();
    let e = message(&mut b, "U1:D1:1", EVIDENCE, "2022-04-03T10:00:00");
    let intact = unit(&mut b, "memory-unit-1", 1, Some(EVIDENCE));
    b.op(
        "op-add-1",
        "memory_system.add",
        "update",
        &[&e],
        &[],
        &[&intact],
    );
    let bad = unit(&mut b, "memory-unit-2", 1, Some(CORRUPTED));
    b.op(
        "op-add-2",
        "memory_system.add",
        "update",
        &[&e],
        &[],
        &[&bad],
    );
    let retrieval = ("op-retrieve", "memory_system.retrieve");
    ask(
        &mut b,
        retrieval,
        QUESTION,
        &[&bad, &intact],
        prediction,
        false,
    );
    let t = b.build();
    let a = InfoFlow::default()
        .attribute(&t, &case(QUESTION, "a beagle", prediction, &e))
        .unwrap();
    (a.op_id, a.error_type, a.reason)
}

#[test]
fn an_answer_repeating_the_corrupted_copy_blames_the_op_that_corrupted_it() {
    let (op, ty, why) = attribute("James adopted a pup in Stamford, a jazz.");
    assert_eq!(
        (op.as_str(), ty),
        ("op-add-2", ErrorType::ExtractionError),
        "{why}"
    );
    assert!(why.contains("in stamford a jazz"), "{why}");
}

#[test]
fn an_answer_that_does_not_repeat_it_is_the_answer_ops_fault() {
    let (op, ty, why) = attribute("James adopted a cat.");
    assert_eq!(
        (op.as_str(), ty),
        ("op-answer", ErrorType::ResponseError),
        "{why}"
    );
}
