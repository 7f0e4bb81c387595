//! Exports whose spans are another shape of a format memtrace reads, rewritten into it:
//! Phoenix's span export (`{"data": [spans]}` or a list of spans, each with `context.trace_id` /
//! `span_id`, `span_kind`, `parent_id`, ISO times and OpenInference attributes as one object)
//! becomes OTLP JSON; a Langfuse flat observation list (`GET /api/public/observations`:
//! `{"data": [observations]}` or a list, each with a `traceId`) becomes a list of traces; a list
//! of bare OTLP spans (Phoenix's `/spans/otlpv1`) becomes OTLP JSON.

use serde_json::{json, Map, Value};

use super::time::parse_rfc3339;

/// The items of a list or of a `{"data": [...]}` wrapper.
fn items(doc: &Value) -> Option<&Vec<Value>> {
    match doc {
        Value::Array(a) => Some(a),
        Value::Object(o) => o.get("data").and_then(Value::as_array),
        _ => None,
    }
}

/// Phoenix spans as an OTLP `TracesData`, or `None` when `doc` holds no Phoenix spans.
pub fn phoenix_to_otlp(doc: &Value) -> Option<Value> {
    let mut spans: Vec<&Value> = items(doc)?
        .iter()
        .filter(|s| s.get("span_kind").is_some() || s.get("context").is_some())
        .collect();
    // Phoenix lists the newest first; the OTLP reader takes sessions in file order.
    spans.sort_by_key(|s| start_nanos(s.get("start_time")));
    let spans: Vec<Value> = spans.into_iter().map(phoenix_span).collect();
    if spans.is_empty() {
        return None;
    }
    Some(json!({"resourceSpans": [{
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "phoenix"}}]},
        "scopeSpans": [{"scope": {"name": "phoenix-export"}, "spans": spans}],
    }]}))
}

/// A list of OTLP spans (`{"data": [spans]}` or a list, as Phoenix's `/spans/otlpv1` gives) as
/// an OTLP `TracesData` in time order, the null fields of its proto-JSON left out; `None` when
/// `doc` holds no span.
pub fn otlp_span_list(doc: &Value) -> Option<Value> {
    let mut spans: Vec<Value> = items(doc)?
        .iter()
        .filter(|s| s.is_object())
        .map(without_nulls)
        .collect();
    if spans.is_empty() {
        return None;
    }
    let start = |s: &Value| {
        let t = s
            .get("start_time_unix_nano")
            .or_else(|| s.get("startTimeUnixNano"));
        match t {
            Some(Value::Number(n)) => n.as_u64(),
            Some(Value::String(n)) => n.parse().ok(),
            _ => None,
        }
        .unwrap_or(u64::MAX)
    };
    spans.sort_by_key(start);
    Some(json!({"resourceSpans": [{
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "phoenix"}}]},
        "scopeSpans": [{"scope": {"name": "phoenix-export"}, "spans": spans}],
    }]}))
}

fn without_nulls(v: &Value) -> Value {
    match v {
        Value::Object(o) => Value::Object(
            o.iter()
                .filter(|(_, x)| !x.is_null())
                .map(|(k, x)| (k.clone(), without_nulls(x)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(without_nulls).collect()),
        other => other.clone(),
    }
}

fn phoenix_span(s: &Value) -> Value {
    let get = |k: &str| s.get(k).cloned().unwrap_or(Value::Null);
    let ctx = |k: &str| s.get("context").and_then(|c| c.get(k)).cloned();
    let mut flat = Map::new();
    if let Some(a) = s.get("attributes") {
        flatten(a, "", &mut flat);
    }
    if let (false, Some(kind)) = (
        flat.contains_key("openinference.span.kind"),
        // `UNKNOWN` is Phoenix's word for a span that named no kind.
        s.get("span_kind")
            .filter(|k| k.is_string() && *k != "UNKNOWN"),
    ) {
        flat.insert("openinference.span.kind".into(), kind.clone());
    }
    let code = match s.get("status_code").and_then(Value::as_str) {
        Some("ERROR") => 2,
        Some("OK") => 1,
        _ => 0,
    };
    let events: Vec<Value> = s
        .get("events")
        .and_then(Value::as_array)
        .map(|evs| {
            evs.iter()
                .map(|e| {
                    let mut attrs = Map::new();
                    if let Some(a) = e.get("attributes") {
                        flatten(a, "", &mut attrs);
                    }
                    json!({"name": e.get("name").cloned().unwrap_or(Value::Null),
                           "timeUnixNano": nanos(e.get("timestamp")),
                           "attributes": key_values(attrs)})
                })
                .collect()
        })
        .unwrap_or_default();
    json!({
        "traceId": ctx("trace_id").unwrap_or(Value::Null),
        "spanId": ctx("span_id").unwrap_or_else(|| get("id")),
        "parentSpanId": get("parent_id"),
        "name": get("name"),
        "startTimeUnixNano": nanos(s.get("start_time")),
        "endTimeUnixNano": nanos(s.get("end_time")),
        "attributes": key_values(flat),
        "events": events,
        "status": {"code": code, "message": s.get("status_message").cloned().unwrap_or(Value::Null)},
    })
}

/// An ISO start time as unix nanoseconds, for ordering (unreadable ones last, in file order).
fn start_nanos(v: Option<&Value>) -> u64 {
    v.and_then(Value::as_str)
        .and_then(parse_rfc3339)
        .unwrap_or(u64::MAX)
}

/// An ISO time as unix nanoseconds (a decimal string); anything else is kept, so the OTLP
/// reader reports it as a bad timestamp.
fn nanos(v: Option<&Value>) -> Value {
    match v {
        Some(Value::String(t)) => parse_rfc3339(t).map_or_else(
            || Value::String(t.clone()),
            |n| Value::String(n.to_string()),
        ),
        Some(other) => other.clone(),
        None => Value::Null,
    }
}

/// Nested attributes as OpenInference's flat keys: objects join with `.`, lists of objects by
/// index (`llm.input_messages.0.message.role`); lists of plain values stay lists.
fn flatten(v: &Value, prefix: &str, out: &mut Map<String, Value>) {
    let key = |k: &str| {
        if prefix.is_empty() {
            k.to_owned()
        } else {
            format!("{prefix}.{k}")
        }
    };
    match v {
        Value::Object(o) => o.iter().for_each(|(k, x)| flatten(x, &key(k), out)),
        Value::Array(a) if a.iter().any(Value::is_object) => {
            for (i, x) in a.iter().enumerate() {
                flatten(x, &key(&i.to_string()), out);
            }
        }
        Value::Null => {}
        other => {
            out.insert(prefix.to_owned(), other.clone());
        }
    }
}

/// Plain values as OTLP `AnyValue`s (strings, numbers, booleans and lists of them).
fn key_values(m: Map<String, Value>) -> Vec<Value> {
    fn any(v: Value) -> Value {
        match v {
            Value::String(s) => json!({"stringValue": s}),
            Value::Bool(b) => json!({"boolValue": b}),
            Value::Number(n) if n.is_i64() || n.is_u64() => json!({"intValue": n.to_string()}),
            Value::Number(n) => json!({"doubleValue": n}),
            Value::Array(a) => {
                json!({"arrayValue": {"values": a.into_iter().map(any).collect::<Vec<_>>()}})
            }
            other => json!({"stringValue": other.to_string()}),
        }
    }
    m.into_iter()
        .map(|(k, v)| json!({"key": k, "value": any(v)}))
        .collect()
}

/// A Langfuse flat observation list as a list of traces `{id, observations}` (in order of first
/// appearance), or `None` when `doc` holds no observations with a `traceId`.
pub fn langfuse_flat_to_traces(doc: &Value) -> Option<Value> {
    let mut traces: Vec<(String, Vec<Value>)> = Vec::new();
    for o in items(doc)? {
        let Some(tid) = o.get("traceId").and_then(Value::as_str) else {
            continue;
        };
        match traces.iter_mut().find(|(t, _)| t == tid) {
            Some((_, list)) => list.push(o.clone()),
            None => traces.push((tid.to_owned(), vec![o.clone()])),
        }
    }
    if traces.is_empty() {
        return None;
    }
    let traces: Vec<Value> = traces
        .into_iter()
        .map(|(id, observations)| {
            let first = observations
                .iter()
                .find_map(|o| o.get("startTime"))
                .cloned();
            json!({"id": id, "name": id, "timestamp": first, "observations": observations})
        })
        .collect();
    Some(Value::Array(traces))
}
