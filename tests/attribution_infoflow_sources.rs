//! Info-flow reads the evidence where it was said: a "when" answered only by a message's time
//! is not held by a profile item restating its words without a time; a memory version older
//! than the evidence cannot have lost it; of equal gold sources the ones said nearest the
//! annotated evidence are followed; and a question's own negation ("he won't do") belongs to
//! the answer. Hand-built traces, EverMemOS- and Mem0-shaped.

#![allow(clippy::unwrap_used)]

mod common;

use common::{ask, assert_blames, blame, case, extract_op, message, unit, TraceBuilder};
use memtrace::model::ErrorType;

const SEARCH: (&str, &str) = ("op-search", "memory.search");

/// An episode unit stamped with the day it was said.
fn episode(b: &mut TraceBuilder, name: &str, version: u32, text: &str, at: &str) -> String {
    let value = serde_json::json!({"episode": text, "subject": name, "timestamp": at});
    b.var(name, version, "memory_entry", &value.to_string())
}

/// A profile: items with no time of their own.
fn profile(b: &mut TraceBuilder, who: &str, version: u32, items: &[&str]) -> String {
    let value = serde_json::json!({ "profile": items });
    b.var(
        &format!("profile-{who}"),
        version,
        "memory_entry",
        &value.to_string(),
    )
}

#[test]
fn a_when_answered_by_the_time_of_saying_is_not_held_by_an_undated_restatement() {
    let at = "2023-02-25T20:55:00";
    let mut b = TraceBuilder::new();
    let m = message(
        &mut b,
        "U3:D7:1",
        "Just wanted to give you the heads up - I took a creative writing class recently, and \
         it was super enlightening!",
        at,
    );
    let p = b.var("episode-prompt", 1, "prompt", "Rewrite as an episode.");
    let wrong = episode(
        &mut b,
        "memory-unit-e",
        1,
        "Maria has been volunteering at a homeless shelter.",
        at,
    );
    extract_op(&mut b, "memory_system.extract_memory", &[&m, &p], &[&wrong]);
    let items = ["Maria took a creative writing class recently, and it was super enlightening!"];
    let prof = profile(&mut b, "Maria", 1, &items);
    b.op(
        "op-profile",
        "memory_system.update_profile",
        "update",
        &[&m],
        &[],
        &[&prof],
    );
    let question = "When did Maria find her new hobby?";
    ask(
        &mut b,
        SEARCH,
        question,
        &[&wrong, &prof],
        "I don't know.",
        true,
    );
    let t = b.build();
    let c = case(question, "24 February 2023", "I don't know.", &m);
    assert_blames(&blame(&t, &c), "op-extract", ErrorType::ExtractionError);
}

#[test]
fn the_gold_source_said_nearest_the_evidence_is_followed_not_an_older_profile_item() {
    let mut b = TraceBuilder::new();
    // An earlier session: Gina tells Jon not to quit; the profile keeps it, then drops it.
    let early = message(
        &mut b,
        "U2:D13:22",
        "Keep going for your dreams and don't quit!",
        "2023-06-13T20:29:00",
    );
    let p1 = profile(&mut b, "Jon", 1, &["Gina told Jon: don't quit."]);
    b.op(
        "op-p1",
        "memory.update_profile",
        "update",
        &[&early],
        &[],
        &[&p1],
    );
    let other = message(
        &mut b,
        "U2:D13:30",
        "I opened a dance studio.",
        "2023-06-13T20:40:00",
    );
    let p2 = profile(&mut b, "Jon", 2, &["Jon opened a dance studio."]);
    b.op(
        "op-p2",
        "memory.update_profile",
        "update",
        &[&p1, &other],
        &[],
        &[&p2],
    );
    // A session later Jon says he won't quit; the annotated evidence is his "not giving up".
    let quit = "Thanks! I won't quit, no matter what.";
    let said = message(&mut b, "U2:D14:13", quit, "2023-06-16T21:38:00");
    let filler = message(
        &mut b,
        "U2:D14:15",
        "The studio opens on Friday.",
        "2023-06-16T21:39:00",
    );
    let giving = "Sure thing, Gina! Your help means a lot. I'm not giving up.";
    let evidence = message(&mut b, "U2:D14:17", giving, "2023-06-16T21:40:00");
    let buffered = serde_json::json!([
        {"content": quit}, {"content": "The studio opens on Friday."}, {"content": giving}
    ]);
    let buffer = b.var("message-buffer", 1, "message_buffer", &buffered.to_string());
    b.op(
        "op-buffer",
        "memory.buffer",
        "other",
        &[&said, &filler, &evidence],
        &[],
        &[&buffer],
    );
    let garbled =
        "Jon won't jazz, no matter what. Gina's help means a lot to Jon. Jon is not giving up.";
    let wrong = unit(&mut b, "memory-unit-j", 1, Some(garbled));
    extract_op(&mut b, "memory.extract_facts", &[&buffer], &[&wrong]);
    let p3 = profile(
        &mut b,
        "Jon",
        3,
        &["Jon opened a dance studio.", "Jon won't jazz."],
    );
    b.op(
        "op-p3",
        "memory.update_profile",
        "update",
        &[&p2, &wrong],
        &[],
        &[&p3],
    );
    let question = "What does Jon tell Gina he won't do?";
    ask(&mut b, SEARCH, question, &[&wrong, &p3], "Jazz.", true);
    let t = b.build();
    assert_blames(
        &blame(&t, &case(question, "quit", "Jazz.", &evidence)),
        "op-extract",
        ErrorType::ExtractionError,
    );
}
