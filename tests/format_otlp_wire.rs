#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed expectation should panic
//! OTLP as it arrives on the wire: snake_case proto-JSON, protobuf, gzip and zstd bodies.

#[path = "common/formats.rs"]
mod formats;

use formats::{load_err, load_ok};
use memtrace::format::{smartcomment, FormatError};
use serde_json::{Map, Value};

const JSONL: &str = include_str!("fixtures/otlp/mem0_openinference.jsonl");
const GENAI: &str = include_str!("fixtures/otlp/genai_semconv.json");

/// `startTimeUnixNano` → `start_time_unix_nano`, for every object key.
fn snake(v: &Value) -> Value {
    match v {
        Value::Object(o) => {
            let mut m = Map::new();
            for (k, x) in o {
                let mut s = String::new();
                for c in k.chars() {
                    if c.is_ascii_uppercase() {
                        s.push('_');
                        s.push(c.to_ascii_lowercase());
                    } else {
                        s.push(c);
                    }
                }
                m.insert(s, snake(x));
            }
            Value::Object(m)
        }
        Value::Array(a) => Value::Array(a.iter().map(snake).collect()),
        other => other.clone(),
    }
}

fn snake_lines(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(line).unwrap();
        out.push_str(&snake(&v).to_string());
        out.push('\n');
    }
    out
}

fn graph(bytes: &[u8]) -> String {
    String::from_utf8(smartcomment::write(&load_ok(bytes).trace).unwrap()).unwrap()
}

#[test]
fn snake_case_proto_json_loads_every_attribute_value() {
    let genai: Value = serde_json::from_str(GENAI).unwrap();
    let cases = [
        (GENAI.to_owned(), snake(&genai).to_string()),
        (JSONL.to_owned(), snake_lines(JSONL)),
    ];
    for (camel, snake) in cases {
        assert!(snake.contains("\"string_value\"") && snake.contains("\"resource_spans\""));
        assert!(!snake.contains("stringValue"));
        let (a, b) = (graph(camel.as_bytes()), graph(snake.as_bytes()));
        assert!(a.len() > 1000 && !a.contains("\"value\":null"), "{a}");
        assert_eq!(a, b, "snake_case and camelCase load to the same graph");
    }
}

#[test]
fn an_attribute_we_cannot_read_is_an_error_with_its_path() {
    let genai: Value = serde_json::from_str(GENAI).unwrap();
    let mut bent = genai.clone();
    let attr = &mut bent["resourceSpans"][0]["scopeSpans"][0]["spans"][1]["attributes"][0];
    attr["value"] = serde_json::json!({"stringvalue": "typo in the type name"});
    match load_err(bent.to_string().as_bytes()) {
        FormatError::Field { path, message } => {
            assert!(
                path.ends_with("resourceSpans[0].scopeSpans[0].spans[1].attributes[0].value"),
                "{path}"
            );
            assert!(message.contains("stringvalue"), "{message}");
        }
        other => panic!("expected a Field error, got {other}"),
    }
    let lenient = formats::load_lenient(bent.to_string().as_bytes());
    assert_eq!(lenient.problems.len(), 1, "{:?}", lenient.problems);
}

macro_rules! export {
    ($which:literal) => {
        (
            $which,
            &include_bytes!(concat!("fixtures/otel/", $which, "_traces.pb"))[..],
            &include_bytes!(concat!("fixtures/otel/", $which, "_traces.pb.gz"))[..],
            &include_bytes!(concat!("fixtures/otel/", $which, "_traces.pb.zst"))[..],
            include_str!(concat!("fixtures/otel/", $which, "_traces.json")),
            include_str!(concat!("fixtures/otel/", $which, "_traces_snake.json")),
        )
    };
}

const OI_PB: &[u8] = include_bytes!("fixtures/otel/openinference_traces.pb");
const OI_GZ: &[u8] = include_bytes!("fixtures/otel/openinference_traces.pb.gz");
const OI_ZST: &[u8] = include_bytes!("fixtures/otel/openinference_traces.pb.zst");

#[test]
fn protobuf_and_json_of_one_export_load_to_the_same_graph() {
    let exports = [
        export!("openinference"),
        export!("genai"),
        export!("genai_spans"),
    ];
    for (which, pb_bytes, gz, zst, json, snake) in exports {
        assert_eq!(
            memtrace::format::detect(pb_bytes),
            Ok(memtrace::format::Format::Otlp)
        );
        let from_pb = load_ok(pb_bytes);
        assert!(
            from_pb.problems.is_empty(),
            "{which}: {:?}",
            from_pb.problems
        );
        let pb = graph(pb_bytes);
        assert!(pb.contains(&format!("memory-agent-{which}")));
        if which != "genai" {
            // 4 chat completions under 3 app spans; "genai" has its content in log records.
            assert_eq!(from_pb.trace.ops.len(), 4, "{which}");
            assert!(pb.contains("Miso"), "{which}: message content read");
        }
        for (name, other) in [
            ("json_format camelCase", json.as_bytes()),
            ("json_format snake_case", snake.as_bytes()),
            ("gzip protobuf", gz),
            ("zstd protobuf", zst),
        ] {
            assert_eq!(
                pb,
                graph(other),
                "{which}: {name} loads to the protobuf's graph"
            );
        }
    }
}

#[test]
fn a_broken_compressed_or_protobuf_body_is_an_error() {
    let cut = &OI_GZ[..OI_GZ.len() / 2];
    assert!(matches!(load_err(cut), FormatError::Unknown { .. }));
    let cut = &OI_ZST[..OI_ZST.len() / 2];
    assert!(matches!(load_err(cut), FormatError::Unknown { .. }));
    let cut = &OI_PB[..OI_PB.len() - 3];
    assert!(matches!(load_err(cut), FormatError::Unknown { .. }));
}

#[test]
fn conventions_name_what_the_instrumentation_wrote() {
    use memtrace::format::conventions;
    let oi = conventions(OI_GZ, memtrace::format::limits::MAX_FILE_BYTES);
    assert_eq!(oi.encoding, ["protobuf", "gzip"]);
    assert_eq!(
        oi.recognized,
        ["OpenInference (openinference.instrumentation.openai 0.1.66)"]
    );
    assert_eq!((oi.llm_calls, oi.tool_calls, oi.memory_ops), (4, 1, 0));
    let logs = [
        include_str!("fixtures/otel/genai_traces.json"),
        include_str!("fixtures/otel/genai_logs.json"),
    ]
    .map(|p| serde_json::from_str::<Value>(p).unwrap().to_string())
    .join("\n");
    let g = conventions(logs.as_bytes(), memtrace::format::limits::MAX_FILE_BYTES);
    assert!(g.encoding.is_empty());
    assert_eq!(
        g.recognized,
        ["GenAI semconv events as logs", "GenAI semconv on spans"]
    );
    assert_eq!((g.llm_calls, g.tool_calls, g.log_records), (4, 1, 4));
    assert!(
        g.line().contains("4 LLM calls, 1 tool calls, 0 memory ops"),
        "{}",
        g.line()
    );
}
