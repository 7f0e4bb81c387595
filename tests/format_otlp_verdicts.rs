#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed expectation should panic
//! Attribution on the OTLP fixtures written by real instrumentation packages
//! (tests/fixtures/otel/README.md). Each runs one memory agent whose answer op says "Mochi"
//! though memory says "Miso" (the injected fault): the user's turn must become a message
//! variable by its place in the data flow, and the verdict must name the answering call.

#[path = "common/formats.rs"]
mod formats;

use formats::load_ok;
use memtrace::attribution::InfoFlow;
use memtrace::model::Trace;

const FIXTURES: [(&str, &[u8]); 7] = [
    (
        "traceloop",
        include_bytes!("fixtures/otel/traceloop_traces.pb"),
    ),
    (
        "genai_memory",
        include_bytes!("fixtures/otel/genai_memory_traces.pb"),
    ),
    (
        "openinference",
        include_bytes!("fixtures/otel/openinference_traces.pb"),
    ),
    (
        "genai_spans",
        include_bytes!("fixtures/otel/genai_spans_traces.pb"),
    ),
    (
        "langfuse",
        include_bytes!("fixtures/otel/langfuse_traces.pb"),
    ),
    (
        "phoenix REST export",
        include_bytes!("fixtures/otel/phoenix_spans.json"),
    ),
    (
        "phoenix OTLP span list",
        include_bytes!("fixtures/otel/phoenix_spans_otlpv1.json"),
    ),
];

/// The fixtures above, and `opentelemetry-instrumentation-openai-v2`'s traces with their content
/// in log records, one JSON per line as the collector's file exporter writes both.
fn fixtures() -> Vec<(&'static str, Vec<u8>)> {
    let lines: String = [
        include_str!("fixtures/otel/genai_traces.json"),
        include_str!("fixtures/otel/genai_logs.json"),
    ]
    .iter()
    .map(|p| {
        serde_json::from_str::<serde_json::Value>(p)
            .unwrap()
            .to_string()
            + "\n"
    })
    .collect();
    let mut all: Vec<(&str, Vec<u8>)> = FIXTURES.iter().map(|(w, b)| (*w, b.to_vec())).collect();
    all.push(("genai traces + logs", lines.into_bytes()));
    all
}

const TURN: &str = "I adopted a cat named Miso in March 2023";

/// The op id of the op that wrote the answer.
fn answer_op(t: &Trace) -> String {
    let v = t
        .vars
        .iter()
        .position(|v| v.value == "Your cat is named Mochi.")
        .expect("the answer is a variable");
    let op = t.flow.producers[v][0];
    t.ops[op.get()].op_id.clone()
}

#[test]
fn the_users_turn_is_a_message_and_the_question_is_not() {
    for (which, bytes) in fixtures() {
        let t = load_ok(&bytes).trace;
        let messages: Vec<&str> = t
            .vars
            .iter()
            .filter(|v| v.category == "message")
            .map(|v| v.value.as_str())
            .collect();
        assert!(
            messages.iter().any(|m| m.contains(TURN)),
            "{which}: {messages:?}"
        );
        assert!(
            messages
                .iter()
                .all(|m| !m.contains("What is the name of my cat?")
                    && !m.contains("Grade the answer")),
            "{which}: {messages:?}"
        );
    }
}

#[test]
fn each_failure_gets_a_verdict_naming_the_answering_call() {
    for (which, bytes) in fixtures() {
        let t = load_ok(&bytes).trace;
        assert_eq!(t.cases.len(), 1, "{which}");
        let case = &t.cases[0];
        // The judge's prompt "Grade the answer. Question: …? Gold: Miso. Answer: …" holds one
        // item beside the question and the answer: the gold answer, found by that shape.
        assert_eq!(case.golden_answers, ["Miso"], "{which}");
        let got = InfoFlow::default().attribute(&t, case).unwrap();
        assert_eq!(got.op_id, answer_op(&t), "{which}: {got:?}");
        assert_eq!(
            got.error_type.to_string(),
            "ResponseError",
            "{which}: {got:?}"
        );
        // The reason quotes what the answer read; the ids stay in the evidence path.
        assert!(got.reason.contains("Miso"), "{which}: {}", got.reason);
        assert!(
            got.evidence_path
                .iter()
                .all(|id| !got.reason.contains(id.as_str())),
            "{which}: {}",
            got.reason
        );
    }
}
