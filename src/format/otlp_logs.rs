//! OTLP log records (`resourceLogs`) that carry GenAI content for a span: the events of the GenAI
//! semantic conventions sent as logs (`gen_ai.client.inference.operation.details` with
//! `gen_ai.input.messages` / `gen_ai.output.messages`, the older per-message events
//! `gen_ai.system.message`, `gen_ai.user.message`, `gen_ai.assistant.message`,
//! `gen_ai.tool.message`, `gen_ai.choice`, and `gen_ai.evaluation.result`), joined to their span
//! by span id. The event name is the record's `eventName`, else its `event.name` attribute.
//! Also the older span events `gen_ai.content.prompt` / `gen_ai.content.completion`.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::otlp_value::{any_value, attributes, hex_id, KeyValue};
use super::FormatError;

/// One log record as an event of its span: its name and attributes (the body's fields too).
pub type Event = (String, Map<String, Value>);

/// Log records by the span id they name (lowercase hex).
#[derive(Default)]
pub struct Logs {
    by_span: HashMap<String, Vec<Event>>,
    /// Records read, and how many named a span.
    pub records: usize,
    pub joined: usize,
}

fn get<'a>(o: &'a Value, camel: &str, snake: &str) -> Option<&'a Value> {
    o.get(camel).or_else(|| o.get(snake))
}

fn list<'a>(o: &'a Value, camel: &str, snake: &str) -> &'a [Value] {
    get(o, camel, snake)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

impl Logs {
    /// Reads the `resourceLogs` of one `LogsData` document (`path` names it in errors).
    pub fn add(&mut self, resource_logs: &[Value], path: &str, bad: &mut Vec<FormatError>) {
        for (r, rl) in resource_logs.iter().enumerate() {
            for (s, sl) in list(rl, "scopeLogs", "scope_logs").iter().enumerate() {
                for (k, rec) in list(sl, "logRecords", "log_records").iter().enumerate() {
                    let at = format!("{path}resourceLogs[{r}].scopeLogs[{s}].logRecords[{k}]");
                    self.record(rec, &at, bad);
                }
            }
        }
    }

    fn record(&mut self, rec: &Value, at: &str, bad: &mut Vec<FormatError>) {
        self.records += 1;
        let kvs: Vec<KeyValue> = rec
            .get("attributes")
            .and_then(|a| serde_json::from_value(a.clone()).ok())
            .unwrap_or_default();
        let mut attrs = attributes(&kvs, &format!("{at}.attributes"), bad);
        let name = get(rec, "eventName", "event_name")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            .map(str::to_owned)
            .or_else(|| {
                attrs
                    .get("event.name")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            })
            .unwrap_or_default();
        match rec.get("body").map(|b| any_value(b, &format!("{at}.body"))) {
            Some(Ok(Value::Object(body))) => {
                for (k, v) in body {
                    attrs.entry(k).or_insert(v);
                }
            }
            Some(Ok(Value::Null)) | None => {}
            Some(Ok(other)) => {
                attrs.insert("body".into(), other);
            }
            Some(Err(e)) => bad.push(e),
        }
        let span = get(rec, "spanId", "span_id")
            .and_then(Value::as_str)
            .unwrap_or("");
        if span.is_empty() || !name.starts_with("gen_ai.") {
            return;
        }
        self.joined += 1;
        let span = hex_id(span.to_owned());
        self.by_span.entry(span).or_default().push((name, attrs));
    }

    /// The records of span `id`.
    pub fn of(&self, id: &str) -> &[Event] {
        self.by_span.get(id).map_or(&[], Vec::as_slice)
    }
}

/// Adds what the span's log records and older content events say to its attributes, without
/// overwriting the span's own: message lists, system instructions, and evaluation results (as
/// events, where the span reader looks for them).
pub fn merge(attrs: &mut Map<String, Value>, events: &mut Vec<Event>, logs: &[Event]) {
    let mut inputs = Vec::new();
    let mut outputs = Vec::new();
    let span_events = events.clone();
    for (name, a) in logs.iter().chain(span_events.iter()) {
        let role = name
            .strip_prefix("gen_ai.")
            .and_then(|r| r.strip_suffix(".message"));
        match (name.as_str(), role) {
            ("gen_ai.content.prompt", _) => {
                copy(attrs, a, "gen_ai.prompt", "gen_ai.input.messages");
            }
            ("gen_ai.content.completion", _) => {
                copy(attrs, a, "gen_ai.completion", "gen_ai.output.messages");
            }
            ("gen_ai.evaluation.result", _) => {}
            ("gen_ai.choice", _) => {
                if let Some(m) = a.get("message") {
                    outputs.push(m.clone());
                }
            }
            (_, Some(role)) => {
                let mut m = a.clone();
                m.entry("role")
                    .or_insert_with(|| Value::String(role.to_owned()));
                inputs.push(Value::Object(m));
            }
            _ => {
                for key in [
                    "gen_ai.input.messages",
                    "gen_ai.output.messages",
                    "gen_ai.system_instructions",
                ] {
                    copy(attrs, a, key, key);
                }
            }
        }
    }
    let results = logs.iter().filter(|(n, _)| n == "gen_ai.evaluation.result");
    events.extend(results.cloned());
    for (key, list) in [
        ("gen_ai.input.messages", inputs),
        ("gen_ai.output.messages", outputs),
    ] {
        if !list.is_empty() && !attrs.contains_key(key) {
            attrs.insert(key.into(), Value::Array(list));
        }
    }
}

fn copy(attrs: &mut Map<String, Value>, from: &Map<String, Value>, key: &str, to: &str) {
    if let (Some(v), false) = (from.get(key), attrs.contains_key(to)) {
        attrs.insert(to.to_owned(), v.clone());
    }
}

/// A file of OTLP log records and no spans (the SDK's log exporter's request, opened without the
/// span exporter's): the records belong to spans of another file.
pub(super) fn logs_only(records: usize) -> FormatError {
    FormatError::Field {
        path: "resourceLogs".into(),
        message: format!(
            "this file holds {records} OTLP log record(s) and no spans, so there is no operation \
             to show. Log records (such as GenAI events) are read with the spans they name: \
             drop its traces file with it on the page (the two files together), or on the \
             command line give the traces file and this one with --logs FILE"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: &Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn older_events_become_message_lists() {
        let logs = vec![
            (
                "gen_ai.system.message".to_owned(),
                obj(&json!({"content": "be brief"})),
            ),
            (
                "gen_ai.user.message".to_owned(),
                obj(&json!({"content": "hi"})),
            ),
            (
                "gen_ai.choice".to_owned(),
                obj(&json!({"index": 0, "message": {"role": "assistant", "content": "hello"}})),
            ),
            (
                "gen_ai.evaluation.result".to_owned(),
                obj(&json!({"gen_ai.evaluation.score.value": 1})),
            ),
        ];
        let mut attrs = Map::new();
        let mut events = vec![(
            "gen_ai.content.prompt".to_owned(),
            obj(&json!({"gen_ai.prompt": "[{\"role\": \"user\", \"content\": \"old\"}]"})),
        )];
        merge(&mut attrs, &mut events, &logs);
        // The span's own (older) prompt event wins over the per-message log records.
        assert_eq!(
            attrs["gen_ai.input.messages"],
            json!("[{\"role\": \"user\", \"content\": \"old\"}]")
        );
        assert_eq!(attrs["gen_ai.output.messages"][0]["content"], "hello");
        assert_eq!(
            events.len(),
            2,
            "the evaluation result joins the span's events"
        );
        let mut attrs = Map::new();
        merge(&mut attrs, &mut Vec::new(), &logs[..2]);
        assert_eq!(
            attrs["gen_ai.input.messages"][1],
            json!({"role": "user", "content": "hi"})
        );
    }
}
