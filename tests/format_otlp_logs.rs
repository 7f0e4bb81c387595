#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed expectation should panic
//! GenAI content sent as OTLP log records, joined to its spans (fixtures from the real
//! `opentelemetry-instrumentation-openai-v2`, see tests/fixtures/otel/README.md).

#[path = "common/formats.rs"]
mod formats;

use formats::load_ok;
use memtrace::format::LoadOptions;
use memtrace::model::Trace;
use serde_json::Value;

const TRACES: &str = include_str!("fixtures/otel/genai_traces.json");
const LOGS: &str = include_str!("fixtures/otel/genai_logs.json");
const ON_SPANS: &str = include_str!("fixtures/otel/genai_spans_traces.json");

/// The collector's file exporter with traces and logs going to one file: one JSON per line.
fn jsonl(parts: &[&str]) -> String {
    parts
        .iter()
        .map(|p| serde_json::from_str::<Value>(p).unwrap().to_string() + "\n")
        .collect()
}

fn values(t: &Trace) -> Vec<String> {
    let mut v: Vec<String> = t
        .vars
        .iter()
        .filter(|v| !v.name.starts_with("status"))
        .map(|v| format!("{:?} {}", v.class_name, v.value))
        .collect();
    v.sort();
    v
}

#[test]
fn content_in_log_records_is_read_as_on_the_spans() {
    let alone = load_ok(TRACES.as_bytes()).trace;
    // Without the logs the spans carry no content: the calls are ops with no values.
    assert_eq!(alone.ops.len(), 4, "the 4 chat calls still happened");
    let content: Vec<String> = values(&alone)
        .into_iter()
        .filter(|v| !v.starts_with("Some(\"COMMENT\")"))
        .collect();
    assert_eq!(content, Vec::<String>::new(), "no content without the logs");
    let joined = load_ok(jsonl(&[TRACES, LOGS]).as_bytes());
    assert!(joined.problems.is_empty(), "{:?}", joined.problems);
    let t = &joined.trace;
    assert_eq!(t.ops.len(), 4, "4 chat completions");
    let on_spans = load_ok(ON_SPANS.as_bytes()).trace;
    let got = values(t);
    assert!(
        got.iter()
            .any(|v| v.contains("What is the name of my cat?")),
        "{got:#?}"
    );
    assert!(got.iter().any(|v| v.contains("Mochi")), "{got:#?}");
    assert_eq!(
        got,
        values(&on_spans),
        "logs give what SPAN_ONLY capture puts on spans"
    );
    // Logs before traces in the file join as well.
    assert_eq!(
        values(&load_ok(jsonl(&[LOGS, TRACES]).as_bytes()).trace),
        got
    );
}

/// The op whose outputs hold `needle`, and that variable.
fn producer(t: &Trace, needle: &str) -> (usize, usize) {
    for (o, _) in t.ops.iter().enumerate() {
        let op = memtrace::model::OpIx(o as u32);
        for v in t.flow.op_produced(op) {
            if t.vars[v.get()].value.contains(needle) {
                return (o, v.get());
            }
        }
    }
    panic!("no op writes {needle:?}");
}

#[test]
fn a_tool_call_reply_flows_into_the_call_that_carries_it() {
    let oi = include_str!("fixtures/otel/openinference_traces.json");
    for (name, text) in [
        ("openinference", oi.to_owned()),
        ("genai spans", ON_SPANS.to_owned()),
        ("genai logs", jsonl(&[TRACES, LOGS])),
    ] {
        let t = load_ok(text.as_bytes()).trace;
        // The reply `{content: null, tool_calls: [search_memory(query)]}` is an output...
        let (asked, call) = producer(&t, r#""tool_call":"search_memory""#);
        assert!(
            t.vars[call].value.contains("name of the user's cat"),
            "{name}"
        );
        // ...that the next chat completion (which got the tool's result) reads.
        let readers: Vec<usize> = (0..t.ops.len())
            .filter(|&o| t.flow.op_inputs[o].iter().any(|v| v.get() == call))
            .collect();
        assert!(
            !readers.is_empty() && !readers.contains(&asked),
            "{name}: {readers:?}"
        );
    }
}

/// The SDK's span and log exporters write two files; opened together (the page's drop, in any
/// order, protobuf or JSON), the logs join the traces whose spans they name, and load as the
/// collector's one-file JSON Lines does. A traces file the logs do not name is left alone.
#[test]
fn a_logs_file_opened_with_its_traces_file_joins_it() {
    use memtrace::format::otlp_join::join_logs_to_traces;
    let want = values(&load_ok(jsonl(&[TRACES, LOGS]).as_bytes()).trace);
    let file = |name: &str, bytes: &[u8]| (name.to_owned(), bytes.to_vec());
    let other = include_bytes!("fixtures/otel/openinference_traces.pb");
    for (traces, logs) in [
        (
            file(
                "genai_traces.pb.gz",
                include_bytes!("fixtures/otel/genai_traces.pb.gz"),
            ),
            file(
                "genai_logs.pb",
                include_bytes!("fixtures/otel/genai_logs.pb"),
            ),
        ),
        (
            file("genai_traces.json", TRACES.as_bytes()),
            file("genai_logs.json", LOGS.as_bytes()),
        ),
    ] {
        let batch = vec![file("oi.pb", other), logs, traces];
        let out = join_logs_to_traces(batch);
        let names: Vec<&str> = out.iter().map(|(n, _)| n.as_str()).collect();
        assert!(
            names == ["oi.pb", "genai_traces.pb"] || names == ["oi.pb", "genai_traces.json"],
            "{names:?}"
        );
        assert_eq!(out[0].1, other, "the unrelated traces file is unchanged");
        let joined = load_ok(&out[1].1);
        assert!(joined.problems.is_empty(), "{:?}", joined.problems);
        assert_eq!(joined.trace.ops.len(), 4);
        assert_eq!(values(&joined.trace), want);
    }
    // Logs whose spans are in no file of the batch stay a file of their own.
    let alone = vec![
        file("oi.pb", other),
        file("genai_logs.json", LOGS.as_bytes()),
    ];
    assert_eq!(join_logs_to_traces(alone.clone()), alone);
}

/// A logs file opened alone (JSON or protobuf, strict or lenient) is refused with where and what
/// to do, not shown as an empty trace; a traces file with no spans and no logs still loads.
#[test]
fn a_logs_file_opened_alone_says_to_open_its_traces_file_with_it() {
    let pb: &[u8] = include_bytes!("fixtures/otel/genai_logs.pb");
    for bytes in [LOGS.as_bytes(), pb] {
        for lenient in [false, true] {
            let opts = LoadOptions {
                lenient,
                ..LoadOptions::default()
            };
            let e = memtrace::format::load(bytes, opts).unwrap_err();
            assert_eq!(e.location(), "resourceLogs");
            let text = e.to_string();
            assert!(text.contains("4 OTLP log record(s) and no spans"), "{text}");
            assert!(text.contains("drop its traces file with it"), "{text}");
        }
    }
    assert_eq!(load_ok(br#"{"resourceSpans": []}"#).trace.ops.len(), 0);
}

/// The older span events `gen_ai.content.prompt` / `gen_ai.content.completion` (attributes
/// `gen_ai.prompt` / `gen_ai.completion`): the real SPAN_ONLY export with each span's messages
/// moved into them loads to the same values, and the failure is blamed on the answering call.
#[test]
fn older_content_span_events_are_read_as_the_message_attributes() {
    let mut d: Value = serde_json::from_str(ON_SPANS).unwrap();
    let mut moved = 0;
    for span in d["resourceSpans"][0]["scopeSpans"][0]["spans"]
        .as_array_mut()
        .unwrap()
    {
        let end = span["endTimeUnixNano"].clone();
        let attrs = span["attributes"].as_array_mut().unwrap();
        let mut events = Vec::new();
        for (key, event, attr) in [
            (
                "gen_ai.input.messages",
                "gen_ai.content.prompt",
                "gen_ai.prompt",
            ),
            (
                "gen_ai.output.messages",
                "gen_ai.content.completion",
                "gen_ai.completion",
            ),
        ] {
            if let Some(i) = attrs.iter().position(|a| a["key"] == key) {
                let a = attrs.remove(i);
                events.push(serde_json::json!({"name": event, "timeUnixNano": end,
                    "attributes": [{"key": attr, "value": a["value"]}]}));
                moved += 1;
            }
        }
        span["events"] = Value::Array(events);
    }
    assert_eq!(moved, 8, "4 chat spans, input and output each");
    let old = load_ok(d.to_string().as_bytes());
    assert!(old.problems.is_empty(), "{:?}", old.problems);
    let t = &old.trace;
    let want = load_ok(ON_SPANS.as_bytes()).trace;
    assert_eq!(values(t), values(&want));
    assert_eq!(t.cases.len(), 1);
    let got = memtrace::attribution::InfoFlow::default()
        .attribute(t, &t.cases[0])
        .unwrap();
    let (answer, _) = producer(t, "Your cat is named Mochi.");
    assert_eq!(got.op_id, t.ops[answer].op_id);
}
