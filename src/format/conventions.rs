//! Which instrumentation conventions a trace file uses, for `memtrace info`: the encoding
//! (protobuf, gzip, zstd), the shape (Phoenix, Langfuse flat list), OpenInference, the GenAI
//! semantic conventions on spans or as log records, OpenLLMetry, and counts of LLM calls, tool
//! calls and memory operations. Read from the attributes, not from span names.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::otlp_value::{attributes, KeyValue};
use super::{body, detect, reshape};

/// What [`conventions`] recognized.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Conventions {
    /// `protobuf`, `gzip`, `zstd`, `Phoenix span export`, `OTLP span list (Phoenix
    /// /spans/otlpv1)`, `Langfuse observation list`.
    pub encoding: Vec<String>,
    /// `OpenInference (openinference.instrumentation.openai 0.1.66)`, `GenAI semconv on spans`,
    /// `GenAI semconv events as logs`, `OpenLLMetry`, `Langfuse over OTel`.
    pub recognized: Vec<String>,
    pub llm_calls: usize,
    pub tool_calls: usize,
    /// Spans that ran a tool (`execute_tool`, OpenLLMetry `tool`, OpenInference `TOOL`).
    pub tool_spans: usize,
    pub memory_ops: usize,
    /// Log records read, and how many were GenAI events joined to a span.
    pub log_records: usize,
}

impl Conventions {
    /// One line: `protobuf, gzip; OpenInference 0.1.66, GenAI semconv events as logs; 4 LLM
    /// calls, 1 tool calls, 0 memory ops`.
    pub fn line(&self) -> String {
        let mut parts = Vec::new();
        if !self.encoding.is_empty() {
            parts.push(self.encoding.join(", "));
        }
        if self.recognized.is_empty() {
            parts.push("no OTel GenAI / OpenInference attributes".into());
        } else {
            parts.push(self.recognized.join(", "));
        }
        let ran = if self.tool_spans > 0 {
            format!(" ({} tool spans)", self.tool_spans)
        } else {
            String::new()
        };
        parts.push(format!(
            "{} LLM calls, {} tool calls{ran}, {} memory ops",
            self.llm_calls, self.tool_calls, self.memory_ops
        ));
        parts.join("; ")
    }
}

const MEMORY_OPS: [&str; 5] = [
    "search_memory",
    "create_memory",
    "update_memory",
    "upsert_memory",
    "delete_memory",
];

/// The conventions of a file's content (any format memtrace reads; empty for smartcomment),
/// decompressed up to `max_bytes` (empty past that).
pub fn conventions(bytes: &[u8], max_bytes: u64) -> Conventions {
    let mut c = Conventions::default();
    let Ok((body, enc)) = body::decode(bytes, max_bytes) else {
        return c;
    };
    if enc.protobuf.is_some() {
        c.encoding.push("protobuf".into());
    }
    c.encoding.extend(enc.compression.map(str::to_owned));
    let mut docs: Vec<Value> = match serde_json::from_slice::<Value>(&body) {
        Ok(v) => vec![v],
        Err(_) => body
            .split(|&b| b == b'\n')
            .filter_map(|l| serde_json::from_slice(l).ok())
            .collect(),
    };
    if let Some(shape) = detect::shape(&body) {
        for d in &mut docs {
            let converted = match shape {
                detect::Shape::Phoenix => reshape::phoenix_to_otlp(d),
                detect::Shape::OtlpSpanList => reshape::otlp_span_list(d),
                detect::Shape::LangfuseFlat => reshape::langfuse_flat_to_traces(d),
            };
            *d = converted.unwrap_or(Value::Null);
        }
        c.encoding.push(match shape {
            detect::Shape::Phoenix => "Phoenix span export".into(),
            detect::Shape::OtlpSpanList => "OTLP span list (Phoenix /spans/otlpv1)".into(),
            detect::Shape::LangfuseFlat => "Langfuse observation list".into(),
        });
    }
    let mut found = BTreeSet::new();
    for d in &docs {
        for rs in arr(d, "resourceSpans", "resource_spans") {
            for ss in arr(rs, "scopeSpans", "scope_spans") {
                let scope = ss.get("scope").unwrap_or(&Value::Null);
                let name = scope.get("name").and_then(Value::as_str).unwrap_or("");
                if name.starts_with("openinference") {
                    let version = scope.get("version").and_then(Value::as_str).unwrap_or("");
                    found.insert(format!("OpenInference ({name} {version})"));
                }
                for s in arr(ss, "spans", "spans") {
                    span(&attrs_of(s), &mut c, &mut found);
                }
            }
        }
        for rl in arr(d, "resourceLogs", "resource_logs") {
            for sl in arr(rl, "scopeLogs", "scope_logs") {
                for rec in arr(sl, "logRecords", "log_records") {
                    c.log_records += 1;
                    let a = attrs_of(rec);
                    let name = rec
                        .get("eventName")
                        .or_else(|| rec.get("event_name"))
                        .or_else(|| a.get("event.name"))
                        .and_then(Value::as_str)
                        .unwrap_or("");
                    if name.starts_with("gen_ai.") {
                        found.insert("GenAI semconv events as logs".into());
                        c.tool_calls += tool_parts(&a);
                    }
                }
            }
        }
    }
    if found.iter().any(|f| f.starts_with("OpenInference (")) {
        found.remove("OpenInference");
    }
    c.recognized = found.into_iter().collect();
    c
}

fn arr<'a>(v: &'a Value, camel: &str, snake: &str) -> &'a [Value] {
    v.get(camel)
        .or_else(|| v.get(snake))
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn attrs_of(v: &Value) -> Map<String, Value> {
    let kvs: Vec<KeyValue> = v
        .get("attributes")
        .and_then(|a| serde_json::from_value(a.clone()).ok())
        .unwrap_or_default();
    attributes(&kvs, "", &mut Vec::new())
}

fn span(a: &Map<String, Value>, c: &mut Conventions, found: &mut BTreeSet<String>) {
    let kind = a.get("openinference.span.kind").and_then(Value::as_str);
    let op = a.get("gen_ai.operation.name").and_then(Value::as_str);
    if kind.is_some() {
        found.insert("OpenInference".into());
    }
    if a.keys().any(|k| k.starts_with("gen_ai.")) {
        found.insert("GenAI semconv on spans".into());
    }
    if a.keys().any(|k| k.starts_with("traceloop.")) {
        found.insert("OpenLLMetry (traceloop.*)".into());
    }
    if a.keys().any(|k| k.starts_with("langfuse.")) {
        found.insert("Langfuse over OTel (langfuse.*)".into());
    }
    let upper = |s: Option<&str>| s.map(str::to_ascii_uppercase);
    let langfuse = a.get("langfuse.observation.type").and_then(Value::as_str);
    if matches!(upper(kind).as_deref(), Some("LLM"))
        || matches!(op, Some("chat" | "text_completion" | "generate_content"))
        || langfuse == Some("generation")
    {
        c.llm_calls += 1;
    }
    let traceloop = a.get("traceloop.span.kind").and_then(Value::as_str);
    if matches!(upper(kind).as_deref(), Some("TOOL"))
        || op == Some("execute_tool")
        || traceloop == Some("tool")
    {
        c.tool_spans += 1;
    }
    if op.is_some_and(|o| MEMORY_OPS.contains(&o))
        || a.keys().any(|k| k.starts_with("gen_ai.memory."))
    {
        c.memory_ops += 1;
    }
    let ids: BTreeSet<&str> = a
        .keys()
        .filter(|k| k.starts_with("llm.output_messages.") && k.ends_with("tool_call.id"))
        .map(String::as_str)
        .collect();
    c.tool_calls += ids.len() + tool_parts(a) + langfuse_tool_calls(a);
}

/// Tool calls in a Langfuse generation's output (OpenAI's chat format: `tool_calls`).
fn langfuse_tool_calls(a: &Map<String, Value>) -> usize {
    a.get("langfuse.observation.output")
        .and_then(Value::as_str)
        .and_then(|s| serde_json::from_str::<Value>(s).ok())
        .and_then(|v| v.get("tool_calls").and_then(Value::as_array).map(Vec::len))
        .unwrap_or(0)
}

/// GenAI `tool_call` parts in the output messages (structured or JSON text).
fn tool_parts(a: &Map<String, Value>) -> usize {
    let Some(v) = a.get("gen_ai.output.messages") else {
        return 0;
    };
    let parsed = match v {
        Value::String(s) => serde_json::from_str(s).unwrap_or(Value::Null),
        other => other.clone(),
    };
    parsed
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|m| {
            m.get("parts")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
        })
        .filter(|p| p.get("type").and_then(Value::as_str) == Some("tool_call"))
        .count()
}
