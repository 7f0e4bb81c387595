// Langfuse import tests; included by tests/format_langfuse.rs (native) and tests/format_browser.rs.

use memtrace::format::{detect, Format, FormatError};
use serde_json::json;

use crate::formats::{
    components, edit, load_as, load_err, load_lenient, load_ok, op_named, produced_with, produces,
    reads, var,
};

const TRACES: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/langfuse/mem0_traces.json"
));
const UNIT_1: &str = "memory-unit-2f6c1e0a-5b8e-4c61-9d3e-7a1f0c2b9e41";

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn langfuse_export_is_one_connected_bipartite_graph() {
    let loaded = load_ok(TRACES.as_bytes());
    assert_eq!(loaded.format, Format::Langfuse);
    assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
    let t = &loaded.trace;
    // Observations: 3 + 4 + 2 + 2, plus one judge op per score (2).
    assert_eq!(t.ops.len(), 13);
    assert_eq!(t.sessions.len(), 4, "one session per trace");
    assert_eq!(components(t), 1);
    assert!(t.ops.iter().all(|o| o.filename.starts_with("langfuse:")));
    let generation = op_named(t, "extract_facts", 0);
    assert_eq!(t.op(generation).category, "llm");
    assert_eq!(t.op(generation).metadata["model"], "gpt-4o-mini");
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn langfuse_data_flow_is_inferred_from_content_and_ids() {
    let t = load_ok(TRACES.as_bytes()).trace;
    let (extract, decide) = (
        op_named(&t, "extract_facts", 0),
        op_named(&t, "memory_update_decision", 0),
    );
    // The trace input (the conversation) feeds the extraction, message by message.
    let messages: Vec<_> = t.flow.op_inputs[extract.get()]
        .iter()
        .filter(|&&v| t.var(v).category == "message")
        .collect();
    assert_eq!(messages.len(), 2);
    assert!(reads(&t, decide, produced_with(&t, extract, "\"facts\"")));
    // Update chain through a TOOL observation; the RETRIEVER read version 1 by id.
    let (v1, v2) = (
        var(&t, &format!("{UNIT_1}@1")),
        var(&t, &format!("{UNIT_1}@2")),
    );
    assert!(produces(&t, op_named(&t, "apply_memory_actions", 0), v1));
    assert!(reads(&t, op_named(&t, "search_existing_memories", 0), v1));
    let apply2 = op_named(&t, "apply_memory_actions", 1);
    assert!(reads(&t, apply2, v1) && produces(&t, apply2, v2));
    // The answer generation read the retrieved document.
    let (search, answer) = (op_named(&t, "mem0.search", 0), op_named(&t, "answer", 0));
    assert!(t.flow.op_outputs[search.get()]
        .iter()
        .any(|&d| reads(&t, answer, d)));
    assert!(
        t.flow.consumers[v2.get()].is_empty(),
        "the updated unit was never retrieved"
    );
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn langfuse_trace_score_zero_is_a_failure_case() {
    let t = load_ok(TRACES.as_bytes()).trace;
    assert_eq!(t.cases.len(), 1);
    let c = &t.cases[0];
    assert_eq!(c.query, "Where does Alice live now?");
    assert_eq!(c.golden_answers, vec!["Munich".to_owned()]);
    assert_eq!(
        c.answer_op.as_deref(),
        Some(t.op(op_named(&t, "answer", 0)).op_id.as_str())
    );
    assert_eq!(c.judge_op.as_deref(), Some("op-score-score-1"));
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn langfuse_shapes_and_detection() {
    assert_eq!(detect(TRACES.as_bytes()), Ok(Format::Langfuse));
    let list: serde_json::Value = serde_json::from_str(TRACES).expect("fixture");
    let single = serde_json::to_string(&list[3]).expect("json");
    let wrapped = serde_json::to_string(&json!({"data": list, "meta": {"page": 1}})).expect("json");
    assert_eq!(
        load_ok(single.as_bytes()).trace.ops.len(),
        3,
        "one trace object: 2 observations + its score"
    );
    assert_eq!(
        load_ok(wrapped.as_bytes()).trace.ops.len(),
        13,
        "{{data: [traces]}} as from the public API"
    );
    // Forced to OTLP, a Langfuse export has no spans: nothing to load, and no panic.
    let forced = load_as(TRACES.as_bytes(), Format::Otlp).map(|l| l.trace.ops.len());
    assert!(
        matches!(forced, Ok(0) | Err(FormatError::Field { .. })),
        "{forced:?}"
    );
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn langfuse_without_observation_objects_says_what_to_export() {
    let err = load_err(br#"{"id": "t1", "observations": ["obs-1", "obs-2"]}"#);
    let FormatError::Field { path, message } = &err else {
        panic!("{err:?}")
    };
    assert!(path.ends_with("trace.observations[0]"), "{path}");
    assert!(message.contains("full observations"), "{message}");
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn langfuse_truncated_json_names_line_and_column() {
    let cut = TRACES.find("Moved to Munich").expect("fixture text") + 5;
    let err = load_err(&TRACES.as_bytes()[..cut]);
    let FormatError::Json { line, column, .. } = &err else {
        panic!("{err:?}")
    };
    assert!(*line > 100 && *column > 1, "{err}");
    assert!(err
        .to_string()
        .contains(&format!("line {line}, column {column}")));
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn langfuse_dangling_parent_names_line_column_path_and_id() {
    let bad = edit(
        TRACES,
        "/0/observations/1/parentObservationId",
        json!("obs-missing"),
    );
    let err = load_err(bad.as_bytes());
    let FormatError::Dangling { path, id, .. } = &err else {
        panic!("{err:?}")
    };
    assert!(
        path.starts_with("line 1, column ")
            && path.ends_with("[0].observations[1].parentObservationId"),
        "{path}"
    );
    assert_eq!(id, "obs-missing");
    let loaded = load_lenient(bad.as_bytes());
    assert!(matches!(
        loaded.problems.as_slice(),
        [FormatError::Dangling { .. }]
    ));
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn langfuse_duplicate_observation_id_names_both_places() {
    let bad = edit(TRACES, "/1/observations/3/id", json!("obs-b1"));
    let err = load_err(bad.as_bytes());
    let FormatError::DuplicateId { path, id, first } = &err else {
        panic!("{err:?}")
    };
    assert!(
        path.ends_with("[1].observations[3].id") && path.starts_with("line 1, column "),
        "{path}"
    );
    assert!(first.ends_with("[1].observations[0]"), "{first}");
    assert_eq!(id, "obs-b1");
    assert_eq!(load_lenient(bad.as_bytes()).trace.ops.len(), 12);
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn langfuse_parent_cycle_is_reported() {
    let bad = edit(
        TRACES,
        "/0/observations/0/parentObservationId",
        json!("obs-a1"),
    );
    let err = load_err(bad.as_bytes());
    let FormatError::Cycle { path, id } = &err else {
        panic!("{err:?}")
    };
    assert!(
        path.ends_with("[0].observations[0].parentObservationId"),
        "{path}"
    );
    assert_eq!(id, "obs-a1");
    assert_eq!(load_lenient(bad.as_bytes()).problems.len(), 1);
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn langfuse_bad_timestamp_names_the_field() {
    for (field, value) in [
        ("startTime", json!("yesterday")),
        ("endTime", json!("2024-05-01T09:00:00Z")),
        ("startTime", json!(17)),
    ] {
        let bad = edit(TRACES, &format!("/1/observations/2/{field}"), value);
        let err = load_err(bad.as_bytes());
        let FormatError::BadTimestamp { path, .. } = &err else {
            panic!("{err:?}")
        };
        assert!(
            path.ends_with(&format!("[1].observations[2].{field}")),
            "{path}"
        );
        assert!(err.to_string().contains("ISO 8601"), "{err}");
        assert_eq!(
            load_lenient(bad.as_bytes()).trace.ops.len(),
            12,
            "only that observation is dropped"
        );
    }
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn langfuse_import_is_deterministic() {
    // Each load hashes with fresh random keys; the records must not depend on them.
    assert_eq!(
        load_ok(TRACES.as_bytes()).trace,
        load_ok(TRACES.as_bytes()).trace
    );
}
