//! Info-flow follows the evidence through a message buffer only as far as the buffer holds it:
//! after a reset that kept only the newest message, what follows is other messages. A later
//! episode with a look-alike of the answer then no longer makes the answer op look at fault
//! for the extraction that lost it. Hand-built, EverMemOS-shaped (the boundary decision value
//! is one node written by both segments' boundary ops, as the recorder writes it).

#![allow(clippy::unwrap_used)]

mod common;

use common::{ask, case, message, TraceBuilder};
use memtrace::attribution::InfoFlow;
use memtrace::model::ErrorType;
use serde_json::json;

const SAID: &str = "2022-04-03T10:00:00";

fn buffer(b: &mut TraceBuilder, version: u32, texts: &[&str]) -> String {
    let value: Vec<_> = texts.iter().map(|t| json!({"content": t})).collect();
    b.var(
        "message-buffer",
        version,
        "message_buffer",
        &json!(value).to_string(),
    )
}

/// A memory unit made from `segment` (its raw messages), then rewritten by an extraction as
/// `text`; returns the rewritten version.
fn episode(b: &mut TraceBuilder, name: &str, segment: &str, raw: &[&str], text: &str) -> String {
    let raw: Vec<_> = raw.iter().map(|t| json!({"content": t})).collect();
    let v1 = json!({"event_id": name, "original_data": raw, "episode": null});
    let unit = b.var(name, 1, "memory_entry", &v1.to_string());
    let fin = format!("op-finalize-{name}");
    b.op(
        &fin,
        "memory_system.finalize_memory_unit",
        "initialization",
        &[segment],
        &[],
        &[&unit],
    );
    let p = b.var(
        &format!("episode-prompt-{name}"),
        1,
        "prompt",
        "Rewrite the segment as an episode.",
    );
    let v2 = json!({"event_id": name, "episode": text});
    let done = b.var(name, 2, "memory_entry", &v2.to_string());
    let ext = format!("op-extract-{name}");
    b.op(
        &ext,
        "memory_system.extract_memory",
        "extraction",
        &[&unit, &p],
        &[],
        &[&done],
    );
    done
}

#[test]
fn a_later_segment_is_not_the_evidence() {
    let evidence = "My favourite game is Apex Legends, we play it every night.";
    let newest = "Anyway, I have to go now, see you soon!";
    let later = "Man, Apex Legends looks tough, but I never played it myself.";
    let mut b = TraceBuilder::new();
    let e = message(&mut b, "U1:D1:1", evidence, SAID);
    let n = message(&mut b, "U1:D1:2", newest, SAID);
    let buf1 = buffer(&mut b, 1, &[evidence, newest]);
    b.op(
        "op-buf1",
        "memory_system.message_buffer_update",
        "update",
        &[&e, &n],
        &[],
        &[&buf1],
    );
    let decision = b.var(
        "boundary_detection_result",
        1,
        "llm_response",
        &json!({"should_end": true, "reasoning": "The time gap closes the episode."}).to_string(),
    );
    let seg1 = b.var(
        "temporary_variable-1",
        1,
        "temporary_variable",
        &json!([{"content": evidence}]).to_string(),
    );
    b.op_pairs(
        "op-bound1",
        "evermemos.boundary_detection",
        "boundary_detection",
        &[(&buf1, &decision), (&buf1, &seg1), (&decision, &seg1)],
    );
    let lost = episode(
        &mut b,
        "memory-unit-1",
        &seg1,
        &[evidence],
        "James plays a game with his team every night.",
    );
    let buf2 = buffer(&mut b, 2, &[newest]);
    b.op(
        "op-reset",
        "memory_system.message_buffer_update",
        "update",
        &[&buf1],
        &[],
        &[&buf2],
    );
    let m = message(&mut b, "U1:D2:1", later, SAID);
    let buf3 = buffer(&mut b, 3, &[newest, later]);
    b.op(
        "op-buf2",
        "memory_system.message_buffer_update",
        "update",
        &[&buf2, &m],
        &[],
        &[&buf3],
    );
    let seg2 = b.var(
        "temporary_variable-2",
        1,
        "temporary_variable",
        &json!([{"content": newest}, {"content": later}]).to_string(),
    );
    b.op_pairs(
        "op-bound2",
        "evermemos.boundary_detection",
        "boundary_detection",
        &[(&buf3, &decision), (&buf3, &seg2), (&decision, &seg2)],
    );
    let look_alike = episode(
        &mut b,
        "memory-unit-2",
        &seg2,
        &[newest, later],
        "John said Apex Legends looks tough.",
    );
    let question = "What is James's favourite game?";
    let rerank = ("op-rerank", "memory_system.agentic_final_rerank");
    let prediction = "A game with his team.";
    ask(
        &mut b,
        rerank,
        question,
        &[&lost, &look_alike],
        prediction,
        false,
    );
    let t = b.build();
    let c = case(question, "Apex Legends", prediction, &e);
    let a = InfoFlow::default().attribute(&t, &c).unwrap();
    assert_eq!(
        (a.op_id.as_str(), a.error_type),
        ("op-extract-memory-unit-1", ErrorType::ExtractionError),
        "{}",
        a.reason
    );
}
