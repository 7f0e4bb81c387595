//! Hand-made graphs with known answers.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a failed unwrap is a failed test

use crate::common::{time, TraceBuilder};
use memtrace::Trace;

/// `a → op-1 → b`, `a → op-2 → c`, `b, c → op-3 → d`; op-2 is stamped before op-1.
pub fn diamond() -> Trace {
    let mut b = TraceBuilder::new();
    b.var("a", 1, "x", "'alpha'");
    b.var("b", 1, "x", "'beta'");
    b.var("c", 1, "x", "'gamma'");
    b.var("d", 1, "x", "'delta'");
    b.at(&time(10))
        .op("op-2", "right", "step", &["a@1"], &[], &["c@1"]);
    b.at(&time(11))
        .op("op-1", "left", "step", &["a@1"], &[], &["b@1"]);
    b.at(&time(12))
        .op("op-3", "join", "step", &["b@1", "c@1"], &[], &["d@1"]);
    b.build()
}

fn message(b: &mut TraceBuilder, name: &str, content: &str) -> String {
    let value = serde_json::json!({"content": content, "name": "Mel", "role": "user", "timestamp": "2023-06-01"});
    b.var(
        name,
        1,
        "message",
        &serde_json::to_string_pretty(&value).unwrap(),
    )
}

/// A small Mem0-style pipeline in two sessions:
/// - s1: four messages; m1, m2, m3 are extracted; memory-unit-1 is born (from m1), updated (from
///   m2) and deleted; memory-unit-2 is born from m3; m4 is extracted into an unused fact;
/// - s2: a query retrieves memory-unit-2 and is answered (wrongly), then judged 0.
///
/// The gold evidence of the failed question is m1.
#[allow(clippy::too_many_lines)] // one graph, read top to bottom
pub fn memory() -> Trace {
    let mut b = TraceBuilder::new();
    b.session("s1");
    let p = b.var(
        "fact-extraction-prompt",
        1,
        "prompt",
        "'Extract the facts. Use <facts> tags & be brief.'",
    );
    let m1 = message(
        &mut b,
        "U1:D1:1",
        "I went camping with my kids at the lake in June.",
    );
    let m2 = message(
        &mut b,
        "U1:D1:2",
        "Caroline researched adoption agencies last week.",
    );
    let m3 = message(&mut b, "U1:D1:3", "I painted a sunset over the ocean. Café → résumé. The colours were orange, pink and purple, and the waves were calm; I stayed until the stars came out and then walked home along the beach, humming a song my grandmother used to sing.");
    let m4 = message(&mut b, "U1:D1:4", "My favourite food is pasta with pesto.");
    b.var("facts-1", 1, "facts", "['Mel camped at the lake in June']");
    b.op(
        "op-e1",
        "extract_facts",
        "extraction",
        &[&*p, &*m1],
        &[],
        &["facts-1@1"],
    );
    b.var(
        "memory-unit-1",
        1,
        "memory_entry",
        "{'memory': 'Mel camped in June', 'deleted': False}",
    );
    b.op(
        "op-u1",
        "update_memory",
        "update",
        &["facts-1@1"],
        &[],
        &["memory-unit-1@1"],
    );
    b.var(
        "facts-2",
        1,
        "facts",
        "['Caroline researched adoption agencies']",
    );
    b.op(
        "op-e2",
        "extract_facts",
        "extraction",
        &[&*p, &*m2],
        &[],
        &["facts-2@1"],
    );
    b.var(
        "memory-unit-1",
        2,
        "memory_entry",
        "{'memory': 'Caroline researched adoption', 'deleted': False}",
    );
    b.op(
        "op-u2",
        "update_memory",
        "update",
        &["facts-2@1", "memory-unit-1@1"],
        &[],
        &["memory-unit-1@2"],
    );
    b.var(
        "memory-unit-1",
        3,
        "memory_entry",
        "{'memory': None, 'deleted': True}",
    );
    b.op(
        "op-d1",
        "delete_memory",
        "deletion",
        &["memory-unit-1@2"],
        &[],
        &["memory-unit-1@3"],
    );
    b.var("facts-3", 1, "facts", "['Mel painted a sunset']");
    b.op(
        "op-e3",
        "extract_facts",
        "extraction",
        &[&*p, &*m3],
        &[],
        &["facts-3@1"],
    );
    b.var(
        "memory-unit-2",
        1,
        "memory_entry",
        "{'memory': 'Mel painted a sunset', 'deleted': False}",
    );
    b.op(
        "op-u3",
        "update_memory",
        "update",
        &["facts-3@1"],
        &[],
        &["memory-unit-2@1"],
    );
    b.var("facts-4", 1, "facts", "['Mel likes pasta']");
    b.op(
        "op-e4",
        "extract_facts",
        "extraction",
        &[&*p, &*m4],
        &[],
        &["facts-4@1"],
    );
    b.session("s2");
    b.var(
        "query:q1",
        1,
        "message & query",
        "'When did Mel go camping?'",
    );
    b.var("raw-response", 1, "llm_response", "'<ctx>painted</ctx>'");
    b.var("context", 1, "memory_context", "['Mel painted a sunset']");
    b.op(
        "op-r",
        "search",
        "retrieval",
        &["query:q1@1", "memory-unit-2@1"],
        &["raw-response@1"],
        &["context@1"],
    );
    b.var("prediction", 1, "prediction", "'I do not know'");
    b.op(
        "op-a",
        "question-answering",
        "evaluation",
        &["query:q1@1", "context@1"],
        &[],
        &["prediction@1"],
    );
    b.var("golden", 1, "golden_answers", "['June 2023']");
    b.var("judge_score", 1, "judge_score", "0.0");
    b.op(
        "op-j",
        "llm-judge",
        "evaluation",
        &["query:q1@1", "prediction@1", "golden@1"],
        &[],
        &["judge_score@1"],
    );
    let mut t = b.raw();
    t.annotations = Some(vec![serde_json::from_value(serde_json::json!({
        "query_id": "query:q1@1", "query": "When did Mel go camping?", "golden_answers": ["June 2023"],
        "prediction": "I do not know", "prediction_id": "prediction@1", "source_evidence_ids": [m1],
        "final_error_type": "DeletionError", "final_op_id": "op-d1",
    }))
    .unwrap()]);
    t.reindex().unwrap();
    t
}

/// A unit with neutral op names whose last version is a tombstone by value only.
pub fn neutral_deletion() -> Trace {
    let mut b = TraceBuilder::new();
    b.var("in", 1, "x", "'seed'");
    b.var("unit", 1, "y", "{'memory': 'v1'}");
    b.op("op-a", "step", "x", &["in@1"], &[], &["unit@1"]);
    b.var("unit", 2, "y", "{'memory': None, 'deleted': True}");
    b.op("op-b", "step", "x", &["unit@1"], &[], &["unit@2"]);
    b.build()
}

/// Real Mem0 style: the deletion is a link from the last version to a marker, no new version.
pub fn marker_deletion() -> Trace {
    let mut b = TraceBuilder::new();
    b.var("in", 1, "x", "'seed'");
    b.var("unit", 1, "memory_entry", "{'memory': 'v1'}");
    b.op(
        "op-a",
        "memory_update",
        "update",
        &["in@1"],
        &[],
        &["unit@1"],
    );
    b.var("unit", 2, "memory_entry", "{'memory': 'v2'}");
    b.op(
        "op-b",
        "memory_update",
        "update",
        &["unit@1", "in@1"],
        &[],
        &["unit@2"],
    );
    b.var("delete_marker", 1, "marker", "'DELETED'");
    b.op(
        "op-c",
        "memory_update",
        "deletion",
        &["unit@2"],
        &[],
        &["delete_marker@1"],
    );
    b.build()
}

/// smartcomment-style retrieval: each retrieval op links its query to the existing unit it
/// found (re-emitting `u@1`); two questions retrieve the same unit.
pub fn shared_retrieval() -> Trace {
    let mut b = TraceBuilder::new();
    b.var("msg", 1, "message", "'I like tea'");
    b.var("u", 1, "memory_entry", "'likes tea'");
    b.op("op-make", "add", "update", &["msg@1"], &[], &["u@1"]);
    for q in ["a", "b"] {
        let query = b.var(&format!("q{q}"), 1, "query", "'what drink?'");
        b.op(
            &format!("op-r{q}"),
            "search",
            "retrieval",
            &[&*query],
            &[],
            &["u@1"],
        );
        let pred = b.var(&format!("p{q}"), 1, "prediction", "'tea'");
        b.op(
            &format!("op-ans{q}"),
            "answer",
            "evaluation",
            &[&*query, "u@1"],
            &[],
            &[&*pred],
        );
    }
    b.build()
}

/// Real MemBase/Mem0 style: one update-decision op reads two units and links only `a@2` to the
/// shared `delete_marker` (the decision deleted `a`, kept `b`); no op name says deletion.
pub fn decision_deletes_one_of_two() -> Trace {
    let mut b = TraceBuilder::new();
    b.var("fact", 1, "facts", "'x'");
    b.var("a", 1, "memory_entry", "'a1'");
    b.var("b", 1, "memory_entry", "'b1'");
    b.op(
        "op-1",
        "update_memory_decision",
        "update",
        &["fact@1"],
        &[],
        &["a@1", "b@1"],
    );
    b.var("a", 2, "memory_entry", "'a2'");
    b.op(
        "op-2",
        "update_memory_decision",
        "update",
        &["fact@1", "a@1"],
        &[],
        &["a@2"],
    );
    b.var("delete_marker", 1, "marker", "'DELETE'");
    b.var("decision", 1, "llm_response", "'DELETE a'");
    b.op_pairs(
        "op-3",
        "update_memory_decision",
        "update",
        &[
            ("a@2", "delete_marker@1"),
            ("b@1", "decision@1"),
            ("fact@1", "decision@1"),
        ],
    );
    b.build()
}

/// A memory built in two steps and retrieved later, as the reference memory system records it:
/// `op-w` writes `m@1`, `op-u` reads `m@1` and writes `n@1`, then the retrieval `op-r` links the
/// question to both units (re-emitting them). Topological order must put `op-r` before `op-u`
/// (`op-u` reads `m@1`, which `op-r` also produces), so `op-r` is `n@1`'s first producer in
/// topological order although `op-u` wrote it.
pub fn late_retrieval() -> Trace {
    let mut b = TraceBuilder::new();
    b.var("f1", 1, "facts", "'likes tea'");
    b.var("m", 1, "memory_entry", "'likes tea'");
    b.op("op-w", "add", "update", &["f1@1"], &[], &["m@1"]);
    b.var("f2", 1, "facts", "'likes green tea'");
    b.var("n", 1, "memory_entry", "'likes green tea'");
    b.op("op-u", "add", "update", &["m@1", "f2@1"], &[], &["n@1"]);
    b.var("q", 1, "query", "'what drink?'");
    b.op(
        "op-r",
        "search",
        "retrieval",
        &["q@1"],
        &[],
        &["m@1", "n@1"],
    );
    b.var("p", 1, "prediction", "'green tea'");
    b.op(
        "op-a",
        "answer",
        "evaluation",
        &["q@1", "n@1"],
        &[],
        &["p@1"],
    );
    b.build()
}
