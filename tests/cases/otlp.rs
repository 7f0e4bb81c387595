// OTLP import tests; included by tests/format_otlp.rs (native) and tests/format_browser.rs.

use memtrace::format::{detect, Format, FormatError};
use serde_json::json;

use crate::formats::{
    components, edit_line, load_as, load_err, load_lenient, load_ok, op_named, produced_with,
    produces, reads, var,
};

const JSONL: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/otlp/mem0_openinference.jsonl"
));
const GENAI: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/otlp/genai_semconv.json"
));
const UNIT_1: &str = "memory-unit-2f6c1e0a-5b8e-4c61-9d3e-7a1f0c2b9e41";
const SPANS: &str = "/resourceSpans/0/scopeSpans/0/spans";

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn otlp_jsonl_is_one_connected_bipartite_graph() {
    let loaded = load_ok(JSONL.as_bytes());
    assert_eq!(loaded.format, Format::Otlp);
    assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
    let t = &loaded.trace;
    // Leaf spans with inputs or outputs: 3 (add), 4 (add), 2 × 3 (search, answer, judge).
    assert_eq!(t.ops.len(), 13);
    // Root spans: 2 × mem0.add, 2 × answer_question, 2 × llm_judge.
    assert_eq!(t.sessions.len(), 6);
    assert_eq!(
        components(t),
        1,
        "every variable and op is reachable from every other"
    );
    for o in 0..t.ops.len() {
        let op = memtrace::model::OpIx(o as u32);
        assert!(
            !t.flow.op_inputs[o].is_empty(),
            "{} reads something",
            t.ops[o].op_name
        );
        assert!(
            t.flow.op_produced(op).count() > 0,
            "{} writes something",
            t.ops[o].op_name
        );
    }
    assert!(
        t.vars
            .iter()
            .all(|v| v.created_at.starts_with("2024-05-01 10:0")),
        "timestamps from unix nanos, UTC"
    );
    assert!(t
        .ops
        .iter()
        .all(|o| o.op_id.starts_with("op-a1b2c3d4") && o.filename == "otlp:mem0-demo"));
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn otlp_data_flow_is_inferred_from_content_and_ids() {
    let t = load_ok(JSONL.as_bytes()).trace;
    let (extract, decide, apply) = (
        op_named(&t, "extract_facts", 0),
        op_named(&t, "memory_update_decision", 0),
        op_named(&t, "apply_memory_actions", 0),
    );
    // The facts the extraction wrote occur inside the decision's user prompt.
    let facts = produced_with(&t, extract, "\"facts\"");
    assert!(reads(&t, decide, facts));
    // The decision's output is the tool's input itself (same value, same variable).
    let decision = produced_with(&t, decide, "\"memory\"");
    assert!(reads(&t, apply, decision));
    // Memory units: the tool wrote unit 1; session 2's retriever read it by document id; the
    // second tool call read version 1 and wrote version 2 (an update chain).
    let (v1, v2) = (
        var(&t, &format!("{UNIT_1}@1")),
        var(&t, &format!("{UNIT_1}@2")),
    );
    assert!(produces(&t, apply, v1));
    assert!(reads(&t, op_named(&t, "search_existing_memories", 0), v1));
    let apply2 = op_named(&t, "apply_memory_actions", 1);
    assert!(reads(&t, apply2, v1) && produces(&t, apply2, v2));
    assert!(t.var(v2).value.contains("Munich"));
    // The answer read what the search retrieved (its text is in the prompt) and the question.
    let (search, answer) = (op_named(&t, "mem0.search", 0), op_named(&t, "answer", 0));
    let doc = t.flow.op_outputs[search.get()][0];
    assert!(reads(&t, answer, doc));
    let question = t.flow.op_inputs[search.get()]
        .iter()
        .copied()
        .find(|&v| t.var(v).class_name.as_deref() == Some("query"));
    let question = question.expect("the search reads a query variable");
    assert_eq!(t.var(question).value, "Where does Alice live now?");
    assert!(reads(&t, answer, question));
    // The updated unit (Munich) was never read: the evidence stops before retrieval.
    assert!(t.flow.consumers[v2.get()].is_empty());
    assert!(
        t.edges.iter().any(|e| e.comment.starts_with("inferred")),
        "inferred edges are marked"
    );
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn otlp_evaluator_score_zero_is_a_failure_case() {
    let t = load_ok(JSONL.as_bytes()).trace;
    assert_eq!(t.cases.len(), 1, "one of the two judged questions scored 0");
    let c = &t.cases[0];
    assert_eq!(c.query, "Where does Alice live now?");
    assert_eq!(c.golden_answers, vec!["Munich".to_owned()]);
    assert_eq!(c.judge_score, Some(0.0));
    assert_eq!(
        c.answer_op.as_deref(),
        Some(t.op(op_named(&t, "answer", 0)).op_id.as_str())
    );
    assert_eq!(
        c.judge_op.as_deref(),
        Some(t.op(op_named(&t, "llm_judge", 0)).op_id.as_str())
    );
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn otlp_genai_semantic_conventions_in_one_json_object() {
    let loaded = load_ok(GENAI.as_bytes());
    assert_eq!(loaded.format, Format::Otlp);
    let t = &loaded.trace;
    let (chat, tool) = (
        op_named(t, "chat gpt-4o-mini", 0),
        op_named(t, "execute_tool add_memories", 0),
    );
    let prompt = t.flow.op_inputs[chat.get()]
        .iter()
        .find(|&&v| t.var(v).category == "prompt");
    assert!(prompt.is_some_and(|&p| t
        .var(p)
        .value
        .starts_with("You are a Personal Information Organizer")));
    let facts = produced_with(t, chat, "\"facts\"");
    assert!(
        reads(t, tool, facts),
        "the tool's input.value is the chat output"
    );
    assert_eq!(
        t.flow
            .op_produced(tool)
            .filter(|&v| t.var(v).name.starts_with("memory-unit-"))
            .count(),
        2
    );
    assert_eq!(components(t), 1);
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn otlp_is_detected_from_content_and_can_be_forced() {
    assert_eq!(detect(JSONL.as_bytes()), Ok(Format::Otlp));
    assert_eq!(detect(GENAI.as_bytes()), Ok(Format::Otlp));
    assert_eq!(Format::parse("otel"), Ok(Format::Otlp));
    // Forced to Langfuse, JSON Lines is not one JSON document.
    let err = load_as(JSONL.as_bytes(), Format::Langfuse).err();
    assert!(
        matches!(err, Some(FormatError::Json { line: 2, .. })),
        "{err:?}"
    );
    assert!(load_as(GENAI.as_bytes(), Format::Otlp).is_ok());
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn otlp_not_a_trace_is_unknown() {
    for text in ["{\"hello\": [1, 2]}", "resourceSpans", "", "[1, 2, 3]"] {
        let err = load_err(text.as_bytes());
        assert!(
            matches!(err, FormatError::Unknown { .. }),
            "{text:?}: {err}"
        );
        assert!(
            err.to_string().contains("OTLP"),
            "says what memtrace reads: {err}"
        );
    }
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn otlp_truncated_line_names_line_and_column() {
    let lines: Vec<&str> = JSONL.lines().collect();
    let cut = format!(
        "{}\n{}\n{}\n",
        lines[0],
        &lines[1][..lines[1].len() / 2],
        lines[2]
    );
    let err = load_err(cut.as_bytes());
    let FormatError::Json { line, column, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!((*line, *column > 1), (2, true));
    assert!(err.to_string().contains("line 2, column"), "{err}");
    // Lenient: the broken line is skipped, the other two load.
    let loaded = load_lenient(cut.as_bytes());
    assert_eq!(loaded.problems.len(), 1);
    assert!(loaded.trace.ops.iter().any(|o| o.op_name == "answer"));
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn otlp_dangling_parent_names_line_column_path_and_id() {
    let bad = edit_line(
        JSONL,
        0,
        &format!("{SPANS}/1/parentSpanId"),
        json!("ffffffffffffffff"),
    );
    let err = load_err(&bad);
    let FormatError::Dangling { path, id, .. } = &err else {
        panic!("{err:?}")
    };
    assert!(
        path.starts_with("line 1, column ") && path.ends_with("spans[1].parentSpanId"),
        "{path}"
    );
    assert_eq!(id, "ffffffffffffffff");
    let loaded = load_lenient(&bad);
    assert!(matches!(
        loaded.problems.as_slice(),
        [FormatError::Dangling { .. }]
    ));
    assert_eq!(
        loaded.trace.ops.len(),
        13,
        "the span becomes a root and still loads"
    );
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn otlp_duplicate_span_id_names_both_places() {
    let bad = edit_line(
        JSONL,
        0,
        &format!("{SPANS}/2/spanId"),
        json!("a1b2c3d400000002"),
    );
    let err = load_err(&bad);
    let FormatError::DuplicateId { path, id, first } = &err else {
        panic!("{err:?}")
    };
    assert!(
        path.starts_with("line 1, column ") && path.ends_with("spans[2].spanId"),
        "{path}"
    );
    assert!(first.ends_with("spans[1]"), "{first}");
    assert_eq!(id, "a1b2c3d400000002");
    let loaded = load_lenient(&bad);
    assert!(matches!(
        loaded.problems.as_slice(),
        [FormatError::DuplicateId { .. }]
    ));
    assert_eq!(loaded.trace.ops.len(), 12, "the duplicate span is dropped");
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn otlp_parent_cycle_is_reported() {
    // The root's parent becomes its own child.
    let bad = edit_line(
        JSONL,
        0,
        &format!("{SPANS}/0/parentSpanId"),
        json!("a1b2c3d400000002"),
    );
    let err = load_err(&bad);
    let FormatError::Cycle { path, id } = &err else {
        panic!("{err:?}")
    };
    assert!(
        path.starts_with("line 1, column ") && path.contains("parentSpanId"),
        "{path}"
    );
    assert!(id.starts_with("a1b2c3d40000000"), "{id}");
    let loaded = load_lenient(&bad);
    assert!(matches!(
        loaded.problems.as_slice(),
        [FormatError::Cycle { .. }]
    ));
    assert_eq!(components(&loaded.trace), 1);
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn otlp_bad_timestamp_names_the_field() {
    for (field, value) in [
        ("startTimeUnixNano", json!("yesterday")),
        ("endTimeUnixNano", json!("1")),
    ] {
        let bad = edit_line(JSONL, 1, &format!("{SPANS}/2/{field}"), value);
        let err = load_err(&bad);
        let FormatError::BadTimestamp { path, .. } = &err else {
            panic!("{err:?}")
        };
        assert!(
            path.starts_with("line 2, column ") && path.ends_with(&format!("spans[2].{field}")),
            "{path}"
        );
        assert!(err.to_string().contains("unix nanoseconds"), "{err}");
        let loaded = load_lenient(&bad);
        assert!(matches!(
            loaded.problems.as_slice(),
            [FormatError::BadTimestamp { .. }]
        ));
        assert_eq!(loaded.trace.ops.len(), 12, "only the bad span is dropped");
    }
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn otlp_wrong_type_names_path_line_and_column() {
    let bad = edit_line(JSONL, 1, &format!("{SPANS}/2/attributes"), json!("oops"));
    let err = load_err(&bad);
    let FormatError::Field { path, message } = &err else {
        panic!("{err:?}")
    };
    assert!(
        path.starts_with("line 2, column ") && path.ends_with("spans[2].attributes"),
        "{path}"
    );
    assert!(message.contains("(line 2, column "), "{message}");
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn otlp_import_is_deterministic() {
    // Each load hashes with fresh random keys; the records must not depend on them.
    assert_eq!(
        load_ok(JSONL.as_bytes()).trace,
        load_ok(JSONL.as_bytes()).trace
    );
}
