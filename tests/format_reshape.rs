#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed expectation should panic
//! Exports in another shape of a format memtrace reads: Phoenix's span export (OTLP spans as
//! `{"data": [spans]}`) and Langfuse flat observation lists.

#[path = "common/formats.rs"]
mod formats;

use formats::load_ok;
use memtrace::format::otlp_value::hex_id;
use memtrace::format::{detect, Format};
use memtrace::model::Trace;
use serde_json::{json, Map, Value};

const OI_JSON: &str = include_str!("fixtures/otel/openinference_traces.json");
/// The same agent traced into a real Phoenix server and exported by its REST API
/// (tests/fixtures/otel/make_phoenix.py).
const PHOENIX: &str = include_str!("fixtures/otel/phoenix_spans.json");
/// The same run's spans from Phoenix's `/spans/otlpv1` (bare OTLP spans, snake_case, nulls).
const PHOENIX_OTLP: &str = include_str!("fixtures/otel/phoenix_spans_otlpv1.json");
const LANGFUSE: &str = include_str!("fixtures/langfuse/mem0_traces.json");

/// Op names and categories, and variable (class, value) pairs, sorted.
fn summary(t: &Trace) -> (Vec<String>, Vec<String>) {
    let mut ops: Vec<String> = t
        .ops
        .iter()
        .map(|o| format!("{} {} {}", o.op_id, o.op_name, o.category))
        .collect();
    let mut vars: Vec<String> = t
        .vars
        .iter()
        .map(|v| format!("{:?} {} {}", v.class_name, v.version, v.value))
        .collect();
    ops.sort();
    vars.sort();
    (ops, vars)
}

fn iso(nanos: &Value) -> String {
    let n: u64 = nanos.as_str().unwrap().parse().unwrap();
    let (secs, frac) = (n / 1_000_000_000, n % 1_000_000_000);
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = memtrace::util::calendar::civil_from_days(i64::try_from(days).unwrap());
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{frac:09}+00:00",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// The OTLP spans in the shape of Phoenix's `GET /v1/projects/{id}/spans` (the `Span` schema:
/// `context`, `span_kind`, `parent_id`, ISO times, `status_code`, attributes as one object),
/// nested (`{"llm": {"input_messages": [...]}}`) or with OpenInference's flat dotted keys.
fn phoenix(otlp: &Value, nested: bool) -> Value {
    let scopes = otlp["resourceSpans"][0]["scopeSpans"].as_array().unwrap();
    let mut out = Vec::new();
    for s in scopes.iter().flat_map(|sc| sc["spans"].as_array().unwrap()) {
        let mut attrs = Map::new();
        for kv in s["attributes"].as_array().into_iter().flatten() {
            let v = kv["value"].as_object().unwrap().values().next().unwrap();
            let v = match kv["value"].get("intValue") {
                Some(i) => json!(i.as_str().unwrap().parse::<i64>().unwrap()),
                None => v.clone(),
            };
            attrs.insert(kv["key"].as_str().unwrap().to_owned(), v);
        }
        let attributes = if nested {
            nest(&attrs)
        } else {
            Value::Object(attrs.clone())
        };
        let id = |k: &str| s.get(k).map(|v| hex_id(v.as_str().unwrap().to_owned()));
        out.push(json!({
            "id": format!("U3BhbjoxMjM{}", out.len()),
            "name": s["name"],
            "context": {"trace_id": id("traceId"), "span_id": id("spanId")},
            "span_kind": attrs.get("openinference.span.kind").cloned().unwrap_or(json!("CHAIN")),
            "parent_id": id("parentSpanId"),
            "start_time": iso(&s["startTimeUnixNano"]),
            "end_time": iso(&s["endTimeUnixNano"]),
            "status_code": "OK",
            "status_message": "",
            "attributes": attributes,
            "events": [],
        }));
    }
    json!({"data": out, "next_cursor": null})
}

/// Dotted keys as nested objects, numeric parts as list indexes.
fn nest(flat: &Map<String, Value>) -> Value {
    fn put(node: &mut Value, parts: &[&str], v: Value) {
        let Some((head, rest)) = parts.split_first() else {
            *node = v;
            return;
        };
        if let Ok(i) = head.parse::<usize>() {
            if !node.is_array() {
                *node = json!([]);
            }
            let a = node.as_array_mut().unwrap();
            while a.len() <= i {
                a.push(Value::Null);
            }
            put(&mut a[i], rest, v);
        } else {
            if !node.is_object() {
                *node = json!({});
            }
            let child = node
                .as_object_mut()
                .unwrap()
                .entry(*head)
                .or_insert(Value::Null);
            put(child, rest, v);
        }
    }
    let mut root = json!({});
    for (k, v) in flat {
        put(&mut root, &k.split('.').collect::<Vec<_>>(), v.clone());
    }
    root
}

#[test]
fn phoenix_span_export_loads_as_its_otlp_spans() {
    let otlp: Value = serde_json::from_str(OI_JSON).unwrap();
    let want = summary(&load_ok(OI_JSON.as_bytes()).trace);
    assert_eq!(want.0.len(), 4);
    for nested in [false, true] {
        let text = phoenix(&otlp, nested).to_string();
        assert_eq!(detect(text.as_bytes()), Ok(Format::Otlp));
        let loaded = load_ok(text.as_bytes());
        assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
        assert_eq!(summary(&loaded.trace), want, "nested attributes: {nested}");
    }
}

/// Everything of the graph but span ids and the OTLP span kind (which Phoenix does not keep):
/// sessions in order, ops, variables and edges with their ends.
fn shape_of(t: &Trace) -> Vec<String> {
    let strip = |m: &Value| {
        let mut m = m.clone();
        if let Some(o) = m.as_object_mut() {
            for k in ["otel_kind", "trace_id", "span_id", "parent_span_id"] {
                o.remove(k);
            }
        }
        let mut pairs: Vec<String> = m
            .as_object()
            .map(|o| o.iter().map(|(k, v)| format!("{k}={v}")).collect())
            .unwrap_or_default();
        pairs.sort();
        pairs.join(" ")
    };
    let sessions = t
        .sessions
        .iter()
        .map(|s| format!("session {:?} {}", s.session_name, strip(&s.metadata)));
    let mut rest: Vec<String> = t
        .ops
        .iter()
        .map(|o| format!("op {} {} {}", o.op_name, o.category, strip(&o.metadata)))
        .chain(t.vars.iter().map(|v| {
            format!(
                "var {:?} {} {} {}",
                v.class_name, v.category, v.version, v.value
            )
        }))
        .collect();
    rest.sort();
    let edges = t.flow.edge_ends.len();
    sessions
        .chain(rest)
        .chain([format!("{edges} edges, {} cases", t.cases.len())])
        .collect()
}

#[test]
fn real_phoenix_export_loads_as_the_same_agents_otlp_spans() {
    let doc: Value = serde_json::from_str(PHOENIX).unwrap();
    assert!(doc["next_cursor"].is_null());
    assert_eq!(doc["data"].as_array().unwrap().len(), 7);
    assert_eq!(detect(PHOENIX.as_bytes()), Ok(Format::Otlp));
    let loaded = load_ok(PHOENIX.as_bytes());
    assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
    // Phoenix lists the newest span first and calls a span without a kind `UNKNOWN`: read in
    // time order, with no kind invented, the graph is the one the OTLP export gives.
    let want = shape_of(&load_ok(OI_JSON.as_bytes()).trace);
    assert_eq!(shape_of(&loaded.trace), want);
    // What `memtrace info` prints for it.
    let c =
        memtrace::format::conventions(PHOENIX.as_bytes(), memtrace::format::limits::MAX_FILE_BYTES);
    assert_eq!(c.encoding, ["Phoenix span export"]);
    assert_eq!(c.recognized, ["OpenInference"]);
    assert_eq!((c.llm_calls, c.tool_calls, c.memory_ops), (4, 1, 0));
}

#[test]
fn real_phoenix_otlp_span_list_loads_as_the_same_graph() {
    assert_eq!(detect(PHOENIX_OTLP.as_bytes()), Ok(Format::Otlp));
    let loaded = load_ok(PHOENIX_OTLP.as_bytes());
    assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
    let c = memtrace::format::conventions(
        PHOENIX_OTLP.as_bytes(),
        memtrace::format::limits::MAX_FILE_BYTES,
    );
    assert_eq!(c.encoding, ["OTLP span list (Phoenix /spans/otlpv1)"]);
    assert_eq!((c.llm_calls, c.tool_calls), (4, 1));
    // The same spans as the REST export of the same run: the same graph, span ids and all.
    let ids = |t: &Trace| {
        let mut v: Vec<String> = t.ops.iter().map(|o| o.op_id.clone()).collect();
        v.sort();
        v
    };
    let rest = load_ok(PHOENIX.as_bytes()).trace;
    assert_eq!(ids(&loaded.trace), ids(&rest));
    assert_eq!(shape_of(&loaded.trace), shape_of(&rest));
}

#[test]
fn langfuse_flat_observation_list_loads_its_observations() {
    let traces: Value = serde_json::from_str(LANGFUSE).unwrap();
    let flat: Vec<Value> = traces
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| t["observations"].as_array().unwrap().clone())
        .collect();
    let nested = load_ok(LANGFUSE.as_bytes()).trace;
    for doc in [json!(flat), json!({"data": flat, "meta": {"page": 1}})] {
        let text = doc.to_string();
        assert_eq!(detect(text.as_bytes()), Ok(Format::Langfuse));
        let t = load_ok(text.as_bytes()).trace;
        let names = |t: &Trace| {
            let mut v: Vec<String> = t.ops.iter().map(|o| o.op_id.clone()).collect();
            v.sort();
            v
        };
        // Without the trace objects, the trace-level scores' evaluator ops are missing.
        let observed: Vec<String> = names(&nested)
            .into_iter()
            .filter(|id| !id.starts_with("op-score"))
            .collect();
        assert!(!observed.is_empty());
        assert_eq!(names(&t), observed);
    }
}
