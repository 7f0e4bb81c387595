//! Two info-flow rules met in episodic memory systems (EverMemOS-shaped), each on a hand-built
//! trace that fails without it:
//! - derived text must state its dates: a message's "yesterday" counts from the day it was
//!   said, but an extracted fact that keeps only "yesterday" lost the date (extraction is asked
//!   to resolve relative dates), so the extraction is blamed, not the answer;
//! - a memory the answer read that did not come from the evidence (a profile fed by other
//!   messages) and lost part of the gold answer in an update before the question: the answer
//!   trusted what the update left, so the update is blamed.

#![allow(clippy::unwrap_used)]

mod common;

use common::{ask, case, message, unit, TraceBuilder};
use memtrace::attribution::InfoFlow;
use memtrace::model::ErrorType;

/// A message said on 28 August 2023 about "yesterday", extracted as `fact`; the answer reads
/// the stored fact and says something else. Returns the verdict's op and type.
fn dated_verdict(fact: &str) -> (String, ErrorType, String) {
    let mut b = TraceBuilder::new();
    let m = message(
        &mut b,
        "U1:D15:2",
        "Since we last spoke, I took my kids to a park yesterday.",
        "2023-08-28T10:00:00",
    );
    let fact_var = b.var("fact:1", 1, "llm_response", fact);
    b.op(
        "op-extract",
        "memory_system.extract_memory",
        "extraction",
        &[&m],
        &[],
        &[&fact_var],
    );
    let value = serde_json::json!({"episode": fact, "timestamp": "2023-08-28T10:00:00"});
    let u = b.var("memory-unit-1", 1, "memory_entry", &value.to_string());
    b.op(
        "op-store",
        "memory_system.store_episode",
        "update",
        &[&fact_var],
        &[],
        &[&u],
    );
    let question = "When did Melanie go to the park?";
    let said = "Melanie likes parks.";
    ask(
        &mut b,
        ("op-search", "memory_system.retrieve"),
        question,
        &[&u],
        said,
        false,
    );
    let t = b.build();
    let c = case(question, "27 August 2023", said, &m);
    let a = InfoFlow::default().attribute(&t, &c).unwrap();
    (a.op_id, a.error_type, a.reason)
}

#[test]
fn an_extracted_fact_that_kept_only_yesterday_lost_the_date() {
    let (op, kind, reason) = dated_verdict("Melanie took her kids to a park yesterday.");
    assert_eq!(
        (op.as_str(), kind),
        ("op-extract", ErrorType::ExtractionError),
        "{reason}"
    );
}

#[test]
fn an_extracted_fact_with_the_date_resolved_blames_the_answer() {
    let (op, kind, reason) =
        dated_verdict("Melanie took her kids to a park yesterday (27 August 2023).");
    assert_eq!(
        (op.as_str(), kind),
        ("op-answer", ErrorType::ResponseError),
        "{reason}"
    );
}

/// An episode stored from the evidence holds the gold answer; a profile item from another
/// message holds part of it until `update` rewrites the profile; the answer reads both.
fn profile_verdict(update_keeps: bool) -> (String, ErrorType, String) {
    let mut b = TraceBuilder::new();
    let other = message(
        &mut b,
        "U4:D1:3",
        "I'm all about dramas, they pull me in.",
        "2022-01-21T10:00:00",
    );
    let p1 = b.var(
        "profile-Joanna",
        1,
        "profile",
        r#"{"profile": ["Joanna is all about dramas.", "Joanna writes screenplays."]}"#,
    );
    b.op(
        "op-profile-1",
        "memory_system.update_profile",
        "update",
        &[&other],
        &[],
        &[&p1],
    );
    let m = message(
        &mut b,
        "U4:D2:5",
        "Thanks, Nate! My first screenplay is a mix of drama and romance!",
        "2022-01-23T10:00:00",
    );
    let episode = unit(
        &mut b,
        "memory-unit-7",
        1,
        Some("Joanna's first screenplay is a mix of drama and romance."),
    );
    b.op(
        "op-extract",
        "memory_system.extract_memory",
        "extraction",
        &[&m],
        &[],
        &[&episode],
    );
    let kept = if update_keeps {
        r#"{"profile": ["Joanna is all about dramas.", "Joanna writes screenplays.", "Joanna plays no games."]}"#
    } else {
        r#"{"profile": ["Joanna writes screenplays.", "Joanna plays no games."]}"#
    };
    let p2 = b.var("profile-Joanna", 2, "profile", kept);
    b.op(
        "op-profile-2",
        "memory_system.update_profile",
        "update",
        &[&p1, &episode],
        &[],
        &[&p2],
    );
    let question = "What genre is Joanna's first screenplay?";
    let said = "Joanna writes screenplays and plays no games.";
    ask(
        &mut b,
        ("op-search", "memory_system.retrieve"),
        question,
        &[&p2, &episode],
        said,
        false,
    );
    let t = b.build();
    let c = case(question, "drama and romance", said, &m);
    let a = InfoFlow::default().attribute(&t, &c).unwrap();
    (a.op_id, a.error_type, a.reason)
}

#[test]
fn a_profile_update_that_dropped_part_of_the_gold_is_trusted_loss() {
    let (op, kind, reason) = profile_verdict(false);
    assert_eq!(
        (op.as_str(), kind),
        ("op-profile-2", ErrorType::UpdateError),
        "{reason}"
    );
}

#[test]
fn a_profile_that_kept_its_part_leaves_the_answer_at_fault() {
    let (op, kind, reason) = profile_verdict(true);
    assert_eq!(
        (op.as_str(), kind),
        ("op-answer", ErrorType::ResponseError),
        "{reason}"
    );
}
