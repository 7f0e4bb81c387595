//! Info-flow does not take a date for the answer where it is not the answer's: a memory unit's
//! `timestamp` field (when it was written) holds no "When …?" answer, and a text dated in the
//! same week as the gold answer holds it only when it speaks of the asked event. Either
//! look-alike used to make the answer op look at fault (ResponseError) for an extraction that
//! lost the answer. Hand-built traces, episode-shaped memory units (EverMemOS).

#![allow(clippy::unwrap_used)]

mod common;

use common::{ask, case, message, TraceBuilder};
use memtrace::attribution::InfoFlow;
use memtrace::model::ErrorType;
use memtrace::Trace;

/// One evidence message said on `day`, an extraction that turned it into `episode`, the memory
/// unit holding that episode, and a second unit (`other`, written `other_day`) the same
/// extraction wrote; retrieval hands both units to the answer op.
fn trace(evidence: &str, day: &str, episode: &str, other: &str, other_day: &str) -> Trace {
    let mut b = TraceBuilder::new();
    let m = message(&mut b, "U1:D1:1", evidence, day);
    let p = b.var(
        "episode-prompt",
        1,
        "prompt",
        "Rewrite the segment as an episode.",
    );
    let raw = b.var(
        "raw_episode_response",
        1,
        "llm_response",
        &serde_json::json!({"facts": [episode, other]}).to_string(),
    );
    let unit = |b: &mut TraceBuilder, name: &str, text: &str, at: &str| {
        let value = serde_json::json!({"event_id": name, "episode": text, "subject": null, "timestamp": at});
        b.var(name, 1, "memory_entry", &value.to_string())
    };
    let a = unit(&mut b, "memory-unit-a", episode, day);
    let o = unit(&mut b, "memory-unit-b", other, other_day);
    b.op(
        "op-extract",
        "memory_system.extract_memory",
        "extraction",
        &[&m, &p],
        &[],
        &[&raw, &a, &o],
    );
    let rerank = ("op-rerank", "memory_system.agentic_final_rerank");
    ask(
        &mut b,
        rerank,
        "the question",
        &[&a, &o],
        "I don't know.",
        false,
    );
    b.build()
}

fn verdict(t: &Trace, question: &str, gold: &str) -> (String, ErrorType, String) {
    let c = case(question, gold, "I don't know.", "U1:D1:1@1");
    let a = InfoFlow::default().attribute(t, &c).unwrap();
    (a.op_id, a.error_type, a.reason)
}

#[test]
fn a_timestamp_field_does_not_hold_a_when_answer() {
    let t = trace(
        "Been hectic lately. Started hitting the gym last week to stay on track.",
        "2023-03-16T14:35:00",
        "Jon has been busy with his business lately.",
        "Gina's store opened and customers love it.",
        "2023-03-16T14:35:00",
    );
    let (op, kind, reason) = verdict(&t, "When did Jon start to go to the gym?", "March, 2023");
    assert_eq!(
        (op.as_str(), kind),
        ("op-extract", ErrorType::ExtractionError),
        "{reason}"
    );
}

#[test]
fn a_date_of_another_event_in_the_same_week_does_not_hold_the_answer() {
    let t = trace(
        "My friends make all the difference. We even had a picnic last week!",
        "2023-07-06T10:00:00",
        "Caroline's friends make all the difference.",
        "Yesterday (5 July 2023) Melanie took the kids to the museum.",
        "2023-07-06T10:00:00",
    );
    let (op, kind, reason) = verdict(
        &t,
        "When did Caroline have a picnic?",
        "The week before 6 July 2023",
    );
    assert_eq!(
        (op.as_str(), kind),
        ("op-extract", ErrorType::ExtractionError),
        "{reason}"
    );
}

#[test]
fn a_dated_episode_of_the_asked_event_still_holds_the_answer() {
    let t = trace(
        "My friends make all the difference. We even had a picnic last week!",
        "2023-07-06T10:00:00",
        "Caroline had a picnic with her friends last week (the week before 6 July 2023).",
        "Melanie took the kids to the museum.",
        "2023-07-06T10:00:00",
    );
    let (op, kind, reason) = verdict(
        &t,
        "When did Caroline have a picnic?",
        "The week before 6 July 2023",
    );
    assert_eq!(
        (op.as_str(), kind),
        ("op-answer", ErrorType::ResponseError),
        "{reason}"
    );
}

#[test]
fn the_asked_event_is_read_in_the_evidence_s_words_not_the_question_s() {
    // The question misspells the festival and says "go … together"; the evidence and its
    // episode say "the Pride fest": the episode still speaks of the asked event.
    let t = trace(
        "I'm always here for you, Mel! We had a blast last year at the Pride fest.",
        "2023-08-17T13:50:00",
        "Caroline and Melanie had a blast in 2022 at the Pride fest.",
        "Melanie took the kids to the museum.",
        "2023-08-17T13:50:00",
    );
    let (op, kind, reason) = verdict(
        &t,
        "When did Caroline and Melanie go to a pride fesetival together?",
        "2022",
    );
    assert_eq!(
        (op.as_str(), kind),
        ("op-answer", ErrorType::ResponseError),
        "{reason}"
    );
}

#[test]
fn a_date_the_evidence_states_in_words_still_belongs_to_the_asked_event() {
    // The evidence has most of the gold's words ("Friday", "before", "October"): the unit of
    // another event dated inside the asked span does not hold the answer; the extraction that
    // moved the interview a week did.
    let t = trace(
        "Woohoo! I passed the adoption agency interviews last Friday, before my October trip.",
        "2023-10-22T10:00:00",
        "Caroline passed the adoption agency interviews on 29 October 2023.",
        "Melanie bought figurines on 20 October 2023; they remind her of family.",
        "2023-10-22T10:00:00",
    );
    let (op, kind, reason) = verdict(
        &t,
        "When did Caroline pass the adoption interview?",
        "The Friday before 22 October 2023",
    );
    assert_eq!(
        (op.as_str(), kind),
        ("op-extract", ErrorType::ExtractionError),
        "{reason}"
    );
}
