//! OTLP import: the data-flow rules that link spans through values — matching ignores line
//! layout, a value quoted inside a longer one is read through it, messages an untraced buffer
//! held link to the memory write that stored (or dropped, or garbled) them, a reranker reads
//! the documents it was given. Each trace is written here, a few spans long.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

#[path = "common/otlp_build.rs"]
mod otlp_build;

use memtrace::model::{OpIx, Trace, VarIx};
use otlp_build::{span, stored, trace};

fn op(t: &Trace, name: &str) -> OpIx {
    let i = t.ops.iter().position(|o| o.op_name == name);
    OpIx(i.unwrap_or_else(|| panic!("no op {name}")) as u32)
}

/// The variable holding exactly `value` (its first version).
fn var(t: &Trace, value: &str) -> VarIx {
    let i = t.vars.iter().position(|v| v.value == value);
    VarIx(i.unwrap_or_else(|| panic!("no variable {value:?}")) as u32)
}

/// True when `reader` reads the variable holding `value` (a value no op reads is no variable).
fn reads(t: &Trace, reader: &str, value: &str) -> bool {
    let read = &t.flow.op_inputs[op(t, reader).get()];
    t.vars
        .iter()
        .position(|v| v.value == value)
        .is_some_and(|i| read.contains(&VarIx(i as u32)))
}

/// A scope that takes in one chat message (`NaiveRAG`'s `add_message`), with `children`.
fn message(id: &str, at: u64, text: &str) -> serde_json::Value {
    let input = serde_json::json!({"messages": [{"role": "user", "content": text}]}).to_string();
    span(
        id,
        None,
        (at, at + 9),
        &[
            ("openinference.span.kind", "CHAIN"),
            ("input.value", &input),
        ],
    )
}

/// A memory write under `parent` storing `memory` as unit `id`.
fn put(name: &str, parent: &str, at: u64, id: &str, memory: &str) -> serde_json::Value {
    let input = serde_json::json!({"key": id, "value": {"content": memory}}).to_string();
    span(
        name,
        Some(parent),
        (at, at + 1),
        &[
            ("openinference.span.kind", "CHAIN"),
            ("input.value", &input),
            ("output.value", &stored(id, memory)),
        ],
    )
}

const M1: &str = "Caroline went to a support group yesterday and it was powerful.";
const M2: &str = "Melanie says she painted a lake sunrise last year for fun.";
const M3: &str = "Caroline wants to create a safe and inviting place for people to grow.";
const M4: &str = "Melanie signed up for a pottery class on Saturday morning.";

#[test]
fn a_value_laid_out_on_other_lines_still_links() {
    let fact = "Alice moved to Munich in May 2023";
    let t = trace(&[
        span(
            "extract",
            None,
            (0, 10),
            &[
                ("openinference.span.kind", "CHAIN"),
                ("input.value", "hi"),
                ("output.value", fact),
            ],
        ),
        span(
            "decide",
            None,
            (20, 30),
            &[
                ("openinference.span.kind", "CHAIN"),
                (
                    "input.value",
                    "Facts:\n  Alice moved to\n    Munich in May 2023\nDecide.",
                ),
                ("output.value", "NONE"),
            ],
        ),
    ]);
    assert!(
        reads(&t, "decide", fact),
        "the fact, wrapped over lines, is read"
    );
}

#[test]
fn a_value_with_quotes_stored_inside_a_json_input_still_links() {
    // The model's reply lists the fact as a JSON string (its quotes escaped); the store's input
    // and the next prompt quote it as JSON too: matching undoes the escapes.
    let fact = r#"Gina's team danced a piece called "Finding Freedom" in May 2023"#;
    let reply = serde_json::json!({"memory": [{"id": "0", "text": fact, "event": "ADD"}]});
    let store = serde_json::json!({"id": "u-1", "data": fact});
    let prompt = format!("Old profile: []\nNew facts: {}", serde_json::json!([fact]));
    let t = trace(&[
        span(
            "decide",
            None,
            (0, 10),
            &[
                ("openinference.span.kind", "LLM"),
                ("input.value", "Decide what to store."),
                ("output.value", &reply.to_string()),
            ],
        ),
        span(
            "insert",
            None,
            (20, 30),
            &[
                ("openinference.span.kind", "CHAIN"),
                ("input.value", &store.to_string()),
                ("output.value", "ok"),
            ],
        ),
        span(
            "profile",
            None,
            (12, 18),
            &[
                ("openinference.span.kind", "LLM"),
                ("input.value", &prompt),
                ("output.value", "{}"),
            ],
        ),
    ]);
    assert!(
        reads(&t, "insert", &reply.to_string()),
        "the store reads the reply whose fact it stores"
    );
    assert!(
        reads(&t, "profile", &reply.to_string()),
        "a prompt quoting the fact in a JSON list reads the reply too"
    );
}

#[test]
fn a_value_quoted_inside_a_stored_chunk_is_read_through_the_chunk() {
    let chunk = format!("Speaker Caroline says: {M3}\nTimestamp: 2023-06-27");
    let prompt = format!("Answer from these memories:\n{chunk}\nQuestion: what place?");
    let t = trace(&[
        message("add", 0, M3),
        put("store", "add", 2, "u-0000001", &chunk),
        span(
            "answer",
            None,
            (20, 30),
            &[
                ("openinference.span.kind", "CHAIN"),
                ("input.value", &prompt),
                ("output.value", "a place"),
            ],
        ),
    ]);
    assert!(
        reads(&t, "answer", &chunk),
        "the stored chunk is what the prompt quotes"
    );
    assert!(
        !reads(&t, "answer", M3),
        "the message reached the answer only through the chunk"
    );
}

#[test]
fn a_message_dropped_from_inside_a_chunk_links_to_the_write_that_stored_the_others() {
    let chunk = format!("{M1}\n{M3}");
    let t = trace(&[
        message("m1", 0, M1),
        message("m2", 10, M2),
        message("m3", 20, M3),
        message("m4", 30, M4),
        put("store", "m4", 32, "u-0000001", &chunk),
    ]);
    assert!(reads(&t, "store", M1) && reads(&t, "store", M3));
    assert!(
        reads(&t, "store", M2),
        "M2 was buffered between two stored messages"
    );
    assert!(
        !reads(&t, "store", M4),
        "the message whose arrival flushed the buffer waits"
    );
}

#[test]
fn the_last_message_of_a_chunk_dropped_links_to_its_write_not_the_next() {
    let t = trace(&[
        message("m1", 0, M1),
        message("m2", 10, M2),
        message("m3", 20, M3),
        put("store-1", "m3", 22, "u-0000001", &format!("Caroline: {M1}")),
        message("m4", 30, M4),
        put("store-2", "m4", 32, "u-0000002", &format!("Caroline: {M3}")),
    ]);
    assert!(
        reads(&t, "store-1", M2),
        "M2 was buffered when store-1 flushed the buffer"
    );
    assert!(!reads(&t, "store-1", M3), "M3 arrived with the flush");
    assert!(!reads(&t, "store-2", M2));
    assert!(reads(&t, "store-2", M3));
}

#[test]
fn a_garbled_message_links_to_the_write_storing_its_near_copy() {
    let garbled = "Speaker Caroline says: Caroline wants to create a bakery, inviting place for people to grow.";
    let t = trace(&[
        message("m1", 0, M3),
        message("m2", 10, M4),
        put("store-1", "m2", 12, "u-0000001", garbled),
        message("m3", 20, M1),
        put("store-2", "m3", 22, "u-0000002", &format!("Melanie: {M4}")),
    ]);
    assert!(
        reads(&t, "store-1", M3),
        "most of M3's word pairs are in what store-1 wrote"
    );
    assert!(!reads(&t, "store-1", M4));
    assert!(!reads(&t, "store-2", M3));
}

#[test]
fn a_reranker_reads_its_query_and_input_documents_by_id() {
    let q = "Where did Caroline go yesterday?";
    let t = trace(&[
        span(
            "search",
            None,
            (0, 10),
            &[
                ("openinference.span.kind", "RETRIEVER"),
                ("input.value", q),
                ("retrieval.documents.0.document.id", "d-1"),
                ("retrieval.documents.0.document.content", M1),
                ("retrieval.documents.1.document.id", "d-2"),
                ("retrieval.documents.1.document.content", M2),
            ],
        ),
        span(
            "rerank",
            None,
            (20, 30),
            &[
                ("openinference.span.kind", "RERANKER"),
                ("reranker.query", q),
                ("reranker.input_documents.0.document.id", "d-1"),
                ("reranker.input_documents.0.document.content", M1),
                ("reranker.input_documents.1.document.id", "d-2"),
                ("reranker.input_documents.1.document.content", M2),
                ("reranker.output_documents.0.document.id", "d-2"),
                ("reranker.output_documents.0.document.content", M2),
            ],
        ),
    ]);
    let (search, rerank) = (op(&t, "search"), op(&t, "rerank"));
    let inputs = &t.flow.op_inputs[rerank.get()];
    assert!(inputs.contains(&var(&t, q)), "the query");
    for doc in [M1, M2] {
        let from_search = t
            .flow
            .op_produced(search)
            .find(|&v| t.var(v).value == doc)
            .unwrap();
        assert!(
            inputs.contains(&from_search),
            "the retrieved document {doc:?}"
        );
    }
}
