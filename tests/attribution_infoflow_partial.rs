//! A gold answer in two parts, one of them not retrieved: info-flow blames the retrieval when
//! the answer used the part it had, and the answer op when it used neither (a lenient judge
//! passes a partial answer, so the missing part did not decide the failure). Hand-built,
//! NaiveRAG-shaped: messages stored verbatim as chunks by an `update` op.

#![allow(clippy::unwrap_used)]

mod common;

use common::{ask, assert_blames, case, message, unit, TraceBuilder};
use memtrace::attribution::InfoFlow;
use memtrace::model::ErrorType;

const SAID: &str = "2022-12-17T11:01:00";
const QUESTION: &str = "What martial arts has John done?";

/// Two messages, each stored as its own chunk; the search hands only the first to the answer,
/// which says `prediction`. Returns the verdict's op and type.
fn verdict(prediction: &str) -> (String, ErrorType, String) {
    let mut b = TraceBuilder::new();
    let texts = [
        "I'm doing kickboxing and it's giving me so much energy.",
        "Gotta make the most of the time we have. I'm off to do some taekwondo!",
    ];
    let mut messages = Vec::new();
    let mut chunks = Vec::new();
    for (i, text) in texts.iter().enumerate() {
        let m = message(&mut b, &format!("U3:D1:{}", i + 1), text, SAID);
        let chunk = unit(&mut b, &format!("memory-unit-{i}"), 1, Some(text));
        b.op(
            &format!("op-add-{i}"),
            "memory_system.add",
            "update",
            &[&m],
            &[],
            &[&chunk],
        );
        messages.push(m);
        chunks.push(chunk);
    }
    let search = ("op-search", "memory_system.retrieve");
    ask(&mut b, search, QUESTION, &[&chunks[0]], prediction, false);
    let t = b.build();
    let mut c = case(QUESTION, "Kickboxing, Taekwondo", prediction, &messages[0]);
    c.evidence_ids.push(messages[1].clone());
    let a = InfoFlow::default().attribute(&t, &c).unwrap();
    (a.op_id, a.error_type, a.reason)
}

#[test]
fn an_answer_with_the_retrieved_part_blames_the_retrieval() {
    assert_blames(
        &verdict("John does kickboxing."),
        "op-search",
        ErrorType::RetrievalError,
    );
}

#[test]
fn an_answer_that_ignored_the_retrieved_part_is_a_response_error() {
    assert_blames(
        &verdict("Any specific areas you want to tackle?"),
        "op-answer",
        ErrorType::ResponseError,
    );
}
