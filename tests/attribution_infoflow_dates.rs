//! Info-flow does not take a date for the answer where it is not the answer's: a memory unit's
//! `timestamp` field (when it was written) holds no "When …?" answer, and a text dated in the
//! same week as the gold answer holds it only when it speaks of the asked event. Either
//! look-alike used to make the answer op look at fault (ResponseError) for an extraction that
//! lost the answer. Hand-built traces, episode-shaped memory units (EverMemOS).

#![allow(clippy::unwrap_used)]

mod common;

use common::{ask, assert_blames, case, extract_op, message, TraceBuilder};
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
    extract_op(
        &mut b,
        "memory_system.extract_memory",
        &[&m, &p],
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
    assert_blames(
        &verdict(&t, "When did Jon start to go to the gym?", "March, 2023"),
        "op-extract",
        ErrorType::ExtractionError,
    );
}

/// Info-flow's verdict on Caroline's picnic "last week", told on 6 July 2023: the episode
/// extracted from it and another one, both stored that day.
fn picnic(episode: &str, other: &str) -> (String, ErrorType, String) {
    let said = "My friends make all the difference. We even had a picnic last week!";
    let day = "2023-07-06T10:00:00";
    let t = trace(said, day, episode, other, day);
    let question = "When did Caroline have a picnic?";
    verdict(&t, question, "The week before 6 July 2023")
}

#[test]
fn a_date_of_another_event_in_the_same_week_does_not_hold_the_answer() {
    let v = picnic(
        "Caroline's friends make all the difference.",
        "Yesterday (5 July 2023) Melanie took the kids to the museum.",
    );
    assert_blames(&v, "op-extract", ErrorType::ExtractionError);
}

#[test]
fn a_dated_episode_of_the_asked_event_still_holds_the_answer() {
    let v = picnic(
        "Caroline had a picnic with her friends last week (the week before 6 July 2023).",
        "Melanie took the kids to the museum.",
    );
    assert_blames(&v, "op-answer", ErrorType::ResponseError);
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
    assert_blames(
        &verdict(
            &t,
            "When did Caroline and Melanie go to a pride fesetival together?",
            "2022",
        ),
        "op-answer",
        ErrorType::ResponseError,
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
    assert_blames(
        &verdict(
            &t,
            "When did Caroline pass the adoption interview?",
            "The Friday before 22 October 2023",
        ),
        "op-extract",
        ErrorType::ExtractionError,
    );
}

/// Mem0 2.x's shape in an OTLP trace (tests/data/lab): extraction calls whose prompt holds the
/// new messages and the memories already stored, and whose reply is the memory list; the
/// store is not traced, so a later call's prompt quotes an earlier reply's memory. The reply
/// holds the date of the event as the evidence told it ("the Pride fest", asked as "a pride
/// fesetival together"): no other source of the answer is sought, so the later prompt (a copy,
/// on a line whose "together" is another memory's) does not make its reader look at fault.
#[test]
fn a_date_answer_stored_as_told_needs_no_other_source_when_retrieval_drops_it() {
    let mut b = TraceBuilder::new();
    let said = "user: Caroline: I'm always here for you, Mel! We had a blast last year at the \
                Pride fest. Those supportive friends definitely make everything worth it!";
    let p1 = format!("Session date: 17 August 2023.\n\nNew Messages:\n{said}");
    let p1 = b.var("prompt-1", 1, "llm_input", &p1);
    let stored = "Caroline and their family had a blast in 2022 at the Pride fest.";
    let first = serde_json::json!({"memory": [
        {"id": "0", "text": "Caroline is always here for Melanie.", "attributed_to": "user"},
        {"id": "1", "text": stored, "attributed_to": "user"},
        {"id": "2", "text": "Melanie took the kids camping on 12 August 2023.",
         "attributed_to": "assistant"},
    ]});
    let r1 = b.var("reply-1", 1, "llm_output", &first.to_string());
    b.op("op-extract-1", "chat", "llm", &[&p1], &[], &[&r1]);
    // A later call lists the stored memory among the existing ones, verbatim, on one line with
    // others: the line has the date, "pride" and "together", but not of one event.
    let existing = serde_json::json!([
        {"id": "7", "text": stored},
        {"id": "8", "text": "Caroline and Melanie like to paint together."},
    ]);
    let p2 = format!(
        "Session date: 19 August 2023.\n\nExisting memories:\n{existing}\n\nNew Messages:\n\
         user: Melanie: I ran a charity race for mental health last Saturday."
    );
    let p2 = b.var("prompt-2", 1, "llm_input", &p2);
    let second = serde_json::json!({"memory": [
        {"id": "0", "text": "Melanie ran a charity race for mental health on 12 August 2023.",
         "attributed_to": "assistant"},
    ]});
    let r2 = b.var("reply-2", 1, "llm_output", &second.to_string());
    b.op("op-extract-2", "chat", "llm", &[&p2, &r1], &[], &[&r2]);
    // The question's embedding (the fault: the search it feeds found only the race).
    b.session("q1");
    let question = "When did Caroline and Melanie go to a pride fesetival together?";
    let query = b.var("query:q1", 1, "input", question);
    let vector = b.var("embedding-q1", 1, "llm_output", "[0.12, -0.03, 0.56]");
    b.op("op-embed", "embeddings", "llm", &[&query], &[], &[&vector]);
    let p3 = format!(
        "Answer from the memories below.\n\nMemories:\n- Melanie ran a charity race for mental \
         health on 12 August 2023.\n\nQuestion: {question}\nAnswer:"
    );
    let p3 = b.var("prompt-3", 1, "llm_input", &p3);
    let answer = b.var("prediction:q1", 1, "llm_output", "The memories do not say.");
    b.op(
        "op-answer",
        "chat",
        "llm",
        &[&p3, &r2, &query],
        &[],
        &[&answer],
    );
    let c = case(question, "2022", "The memories do not say.", "prompt-1@1");
    let a = InfoFlow::default().attribute(&b.build(), &c).unwrap();
    assert_eq!(
        (a.op_id.as_str(), a.error_type),
        ("op-embed", ErrorType::RetrievalError),
        "{}",
        a.reason
    );
}
