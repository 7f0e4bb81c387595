// Small OTLP JSON traces written in the test itself: one span per call of `span`.
#![allow(dead_code)] // each test file uses a part

use memtrace::format::{load, LoadOptions};
use memtrace::model::Trace;
use serde_json::{json, Value};

/// A span `id` under `parent`, from `start` to `end` (nanoseconds), with string attributes.
pub fn span(
    id: &str,
    parent: Option<&str>,
    (start, end): (u64, u64),
    attrs: &[(&str, &str)],
) -> Value {
    let attributes: Vec<Value> = attrs
        .iter()
        .map(|(k, v)| json!({"key": k, "value": {"stringValue": v}}))
        .collect();
    let mut s = json!({
        "traceId": "0123456789abcdef0123456789abcdef",
        "spanId": id,
        "name": id,
        "kind": 1,
        "startTimeUnixNano": (1_700_000_000_000_000_000 + start).to_string(),
        "endTimeUnixNano": (1_700_000_000_000_000_000 + end).to_string(),
        "attributes": attributes,
    });
    if let Some(p) = parent {
        s["parentSpanId"] = json!(p);
    }
    s
}

/// The trace of these spans, loaded as an OTLP file.
pub fn trace(spans: &[Value]) -> Trace {
    let doc = json!({"resourceSpans": [{
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "test"}}]},
        "scopeSpans": [{"spans": spans}],
    }]});
    let bytes = serde_json::to_vec(&doc).expect("serializable");
    load(&bytes, LoadOptions::default()).expect("loads").trace
}

/// A memory write's output: Mem0's `{"results": [{id, memory, event}]}`.
pub fn stored(id: &str, memory: &str) -> String {
    json!({"results": [{"id": id, "memory": memory, "event": "ADD"}]}).to_string()
}
