//! OpenTelemetry OTLP JSON: one `TracesData` object, or JSON Lines of them (the file exporter
//! of the collector). Spans with `gen_ai.*` semantic-convention and `OpenInference` attributes become the
//! common [`Span`] form; `docs/formats-import.md` lists what each attribute maps to.

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::otlp_agents;
use super::otlp_logs::{self, Logs};
use super::otlp_messages::{indexed, messages};
use super::otlp_value::{attributes, hex_id, KeyValue};
use super::spans::{self, json_in, Ids, Imported, Kind, Lines, Origin, Port, Span, Work};
use super::FormatError;
use crate::model::GraphMeta;
use crate::text::text_of;

#[derive(Deserialize, Default)]
#[serde(default)]
struct TracesData<'a> {
    #[serde(borrow, rename = "resourceSpans", alias = "resource_spans")]
    resource_spans: Vec<ResourceSpans<'a>>,
    #[serde(rename = "resourceLogs", alias = "resource_logs")]
    resource_logs: Vec<Value>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ResourceSpans<'a> {
    resource: Resource,
    #[serde(borrow)]
    #[serde(
        rename = "scopeSpans",
        alias = "scope_spans",
        alias = "instrumentationLibrarySpans"
    )]
    scope_spans: Vec<ScopeSpans<'a>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Resource {
    attributes: Vec<KeyValue>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ScopeSpans<'a> {
    /// Kept raw, so each span's position in the file is known.
    #[serde(borrow)]
    spans: Vec<&'a RawValue>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct RawSpan {
    #[serde(alias = "trace_id")]
    trace_id: String,
    #[serde(alias = "span_id")]
    span_id: String,
    #[serde(alias = "parent_span_id")]
    parent_span_id: Option<String>,
    name: String,
    kind: Value,
    #[serde(alias = "start_time_unix_nano")]
    start_time_unix_nano: Value,
    #[serde(alias = "end_time_unix_nano")]
    end_time_unix_nano: Value,
    attributes: Vec<KeyValue>,
    events: Vec<RawEvent>,
    status: Option<Status>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawEvent {
    name: String,
    attributes: Vec<KeyValue>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Status {
    code: Value,
    message: String,
}

/// Reads OTLP JSON or JSON Lines into spans and graph metadata.
///
/// # Errors
/// [`FormatError::Json`] with the line and column of bad JSON (in JSON Lines, the file's line);
/// [`FormatError::Field`] naming the JSON path of a field of the wrong type or a span without
/// an id; [`FormatError::BadTimestamp`] for a start or end that is not unix nanoseconds.
/// In lenient mode, a bad line or span is dropped and reported instead.
pub fn parse(bytes: &[u8], lenient: bool) -> Result<Imported, FormatError> {
    let mut problems = Vec::new();
    let lines = Lines::new(bytes);
    let mut docs: Vec<TracesData<'_>> = Vec::new();
    let nonblank = |l: &&[u8]| !l.iter().all(u8::is_ascii_whitespace);
    let mut split = bytes.split(|&b| b == b'\n').filter(nonblank);
    let first_is_whole = split
        .next()
        .is_some_and(|l| serde_json::from_slice::<serde::de::IgnoredAny>(l).is_ok());
    if first_is_whole && split.next().is_some() {
        // JSON Lines: one TracesData per line.
        for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
            if !nonblank(&line) {
                continue;
            }
            match read(line, i + 1) {
                Ok(d) => docs.push(d),
                Err(e) if lenient => problems.push(e),
                Err(e) => return Err(e),
            }
        }
    } else {
        docs.push(read(bytes, 1)?);
    }

    let mut logs = Logs::default();
    for doc in &docs {
        let mut bad = Vec::new();
        logs.add(&doc.resource_logs, "", &mut bad);
        if let (false, Some(e)) = (lenient, bad.first()) {
            return Err(e.clone());
        }
        problems.extend(bad);
    }
    let mut out = Vec::new();
    let mut meta_resource: Option<Map<String, Value>> = None;
    for doc in docs {
        for (r, rs) in doc.resource_spans.into_iter().enumerate() {
            let mut bad = Vec::new();
            let at = format!("resourceSpans[{r}].resource.attributes");
            let resource = attributes(&rs.resource.attributes, &at, &mut bad);
            for e in bad {
                if !lenient {
                    return Err(e);
                }
                problems.push(e);
            }
            let service = resource
                .get("service.name")
                .map_or_else(|| "unknown_service".to_owned(), text_of);
            meta_resource.get_or_insert_with(|| resource.clone());
            for (s, ss) in rs.scope_spans.into_iter().enumerate() {
                for (k, raw) in ss.spans.into_iter().enumerate() {
                    let at = lines.prefix(bytes, raw.get());
                    let path = format!("{at}resourceSpans[{r}].scopeSpans[{s}].spans[{k}]");
                    let parsed = read_span(raw, bytes, &lines, &path);
                    let mut bad = Vec::new();
                    let read = parsed.and_then(|raw| span(raw, &service, path, &logs, &mut bad));
                    if let (false, Some(e)) = (lenient, bad.first()) {
                        return Err(e.clone());
                    }
                    problems.extend(bad);
                    match read {
                        Ok(sp) => out.push(sp),
                        Err(e) if lenient => problems.push(e),
                        Err(e) => return Err(e),
                    }
                }
            }
        }
    }
    if out.is_empty() && logs.records > 0 {
        return Err(otlp_logs::logs_only(logs.records));
    }
    let resource = meta_resource.unwrap_or_default();
    let mut meta = GraphMeta {
        graph_id: out.first().map_or_else(
            || "graph-otlp".to_owned(),
            |s| format!("graph-{}", s.trace_id),
        ),
        ..GraphMeta::default()
    };
    meta.project_id = resource.get("service.name").cloned().unwrap_or(Value::Null);
    let mut m = Map::new();
    m.insert("source_format".into(), Value::String("otlp".into()));
    m.insert("resource".into(), Value::Object(resource));
    meta.metadata = Value::Object(m);
    Ok(Imported::new(out, meta, problems))
}

/// Reads one `TracesData`: the whole file, or the JSON Lines line numbered `line`.
fn read(part: &[u8], line: usize) -> Result<TracesData<'_>, FormatError> {
    // Fast path first; on a type error, read again tracking the path to name it.
    if let Ok(data) = serde_json::from_slice::<TracesData<'_>>(part) {
        return Ok(data);
    }
    let mut de = serde_json::Deserializer::from_slice(part);
    let data = serde_path_to_error::deserialize::<_, TracesData<'_>>(&mut de).map_err(|e| {
        let path = e.path().to_string();
        located(e.inner(), &path, (line, 1))
    })?;
    de.end().map_err(|e| located(&e, "", (line, 1)))?;
    Ok(data)
}

/// Parses one raw span; a type error names its path and absolute line and column.
fn read_span(
    raw: &RawValue,
    file: &[u8],
    lines: &Lines,
    path: &str,
) -> Result<RawSpan, FormatError> {
    let offset = raw
        .get()
        .as_ptr()
        .addr()
        .saturating_sub(file.as_ptr().addr());
    if let Ok(span) = serde_json::from_str::<RawSpan>(raw.get()) {
        return Ok(span);
    }
    let mut de = serde_json::Deserializer::from_str(raw.get());
    serde_path_to_error::deserialize::<_, RawSpan>(&mut de).map_err(|e| {
        let inner_path = e.path().to_string();
        let path = if inner_path == "." {
            path.to_owned()
        } else {
            format!("{path}.{inner_path}")
        };
        located(e.inner(), &path, lines.at(offset))
    })
}

/// A serde error inside a part of the file that starts at `start` (line, column).
fn located(inner: &serde_json::Error, path: &str, start: (usize, usize)) -> FormatError {
    let line = start.0 + inner.line().saturating_sub(1);
    let column = if inner.line() <= 1 {
        start.1 + inner.column().saturating_sub(1)
    } else {
        inner.column()
    };
    let message = inner.to_string();
    let message = message
        .rsplit_once(" at line ")
        .map_or(message.as_str(), |(m, _)| m)
        .to_owned();
    if inner.is_syntax() || inner.is_eof() {
        FormatError::Json {
            line,
            column,
            message,
        }
    } else {
        FormatError::Field {
            path: path.to_owned(),
            message: format!("{message} (line {line}, column {column})"),
        }
    }
}

fn nanos(v: &Value, path: &str) -> Result<u64, FormatError> {
    let parsed = match v {
        Value::String(s) => s.parse::<u64>().ok(),
        Value::Number(n) => n.as_u64(),
        _ => None,
    };
    parsed.ok_or_else(|| FormatError::BadTimestamp {
        path: path.to_owned(),
        value: text_of(v),
    })
}

/// Where a span's output documents are.
const OUTPUT_DOCUMENTS: [&str; 2] = ["retrieval.documents.", "reranker.output_documents."];

const CONSUMED: [&str; 8] = [
    "input.value",
    "output.value",
    "llm.input_messages.",
    "llm.output_messages.",
    "gen_ai.prompt.",
    "gen_ai.completion.",
    "retrieval.documents.",
    "reranker.",
];

/// Inputs of a span: system instructions, prompt template and input messages; else
/// `input.value` (a tool's arguments as the call that asked for them).
fn input_ports(attrs: &Map<String, Value>, kind: Kind, span_name: &str) -> Vec<Port> {
    let str_attr = |k: &str| attrs.get(k).map(text_of);
    let mut inputs = Vec::new();
    if let Some(sys) = str_attr("gen_ai.system_instructions") {
        let text = json_in(&sys).map_or(sys, |v| spans::message_text(&v));
        inputs.push(spans::message_port("system", text, false));
    }
    if let Some(t) = str_attr("llm.prompt_template.template") {
        inputs.push(Port::new("prompt_template", "prompt", t));
    }
    let flat_in = [("llm.input_messages.", "message."), ("gen_ai.prompt.", "")];
    for (role, text) in messages(attrs, &flat_in, "gen_ai.input.messages") {
        inputs.push(spans::message_port(&role, text, false));
    }
    if inputs.is_empty() {
        if let Some(text) = str_attr("input.value") {
            // A tool's arguments as the call that asked for them: the model's reply is where
            // they came from.
            let name = ["tool.name", "gen_ai.tool.name"]
                .iter()
                .find_map(|k| str_attr(k))
                .unwrap_or_else(|| span_name.to_owned());
            match spans::tool_input_text(&name, &text).filter(|_| kind == Kind::Tool) {
                Some(call) => inputs.push(Port::new("input", "input", call)),
                None => inputs.extend(value_ports(&text, kind)),
            }
        }
    }
    // A reranker reads its query and the documents it was given.
    if let Some(q) = str_attr("reranker.query") {
        inputs.push(Port::new("query", "query", q));
    }
    inputs.extend(attribute_documents(attrs, &["reranker.input_documents."]));
    inputs
}

/// `retrieval.documents.{i}.document.id|content|score` and reranker output documents
/// (`OUTPUT_DOCUMENTS`), or the documents under other prefixes.
fn attribute_documents(attrs: &Map<String, Value>, prefixes: &[&str]) -> Vec<Port> {
    let mut documents = Vec::new();
    for prefix in prefixes {
        for m in indexed(attrs, prefix).values() {
            let mut p = Port::new(
                "retrieved_document",
                "retrieved_document",
                m.get("document.content").map(text_of).unwrap_or_default(),
            );
            p.doc_id = m.get("document.id").map(text_of);
            if let Some(s) = m.get("document.score") {
                p.metadata.insert("score".into(), s.clone());
            }
            if let Some(d) = m.get("document.metadata") {
                p.metadata.insert("metadata".into(), d.clone());
            }
            documents.push(p);
        }
    }
    documents
}

/// A span kind as its number: OTLP JSON writes the number, protobuf's generic JSON mapping the
/// enum name (`SPAN_KIND_CLIENT`).
fn span_kind(kind: &Value) -> Value {
    const NAMES: [&str; 6] = [
        "UNSPECIFIED",
        "INTERNAL",
        "SERVER",
        "CLIENT",
        "PRODUCER",
        "CONSUMER",
    ];
    let name = kind.as_str().map(|k| k.trim_start_matches("SPAN_KIND_"));
    name.and_then(|n| NAMES.iter().position(|x| *x == n))
        .map_or_else(|| kind.clone(), Value::from)
}

fn status_text(status: Option<&Status>) -> String {
    match status {
        Some(st) => match (&st.code, st.message.as_str()) {
            (Value::Number(n), m) if n.as_u64() == Some(2) => format!("ERROR: {m}"),
            (Value::String(c), m) if c.contains("ERROR") => format!("ERROR: {m}"),
            (Value::Number(n), _) if n.as_u64() == Some(1) => "OK".to_owned(),
            (Value::String(c), _) if c.contains("OK") => "OK".to_owned(),
            _ => "UNSET".to_owned(),
        },
        None => "UNSET".to_owned(),
    }
}

/// An evaluator score from attributes (`eval.score`, `evaluation.score`,
/// `gen_ai.evaluation.score.value`) or a `gen_ai.evaluation.result` event.
fn attribute_score(
    attrs: &Map<String, Value>,
    events: &[(String, Map<String, Value>)],
) -> Option<f64> {
    let keys = [
        "eval.score",
        "evaluation.score",
        "gen_ai.evaluation.score.value",
        "annotation.score",
    ];
    keys.iter()
        .find_map(|k| attrs.get(*k).and_then(spans::score_in))
        .or_else(|| {
            events
                .iter()
                .filter(|(name, _)| name.contains("evaluation"))
                .find_map(|(_, ev_attrs)| {
                    ev_attrs
                        .get("gen_ai.evaluation.score.value")
                        .and_then(spans::score_in)
                })
        })
}

/// One span in the common form; attributes of a type we cannot read go to `bad`.
fn span(
    raw: RawSpan,
    service: &str,
    path: String,
    logs: &Logs,
    bad: &mut Vec<FormatError>,
) -> Result<Span, FormatError> {
    if raw.span_id.is_empty() {
        return Err(FormatError::Field {
            path: format!("{path}.spanId"),
            message: "a span needs a non-empty spanId; export the trace again".into(),
        });
    }
    let (start_ns, end_ns) = times(&raw, &path)?;
    let mut attrs = attributes(&raw.attributes, &format!("{path}.attributes"), bad);
    let mut events: Vec<(String, Map<String, Value>)> = raw
        .events
        .iter()
        .enumerate()
        .map(|(e, ev)| {
            let at = format!("{path}.events[{e}].attributes");
            (ev.name.clone(), attributes(&ev.attributes, &at, bad))
        })
        .collect();
    otlp_logs::merge(
        &mut attrs,
        &mut events,
        logs.of(&hex_id(raw.span_id.clone())),
    );
    let extra = otlp_agents::normalize(&mut attrs);
    let kind = extra.kind;
    let str_attr = |k: &str| attrs.get(k).map(text_of);

    let mut inputs = input_ports(&attrs, kind, &raw.name);
    let mut outputs = Vec::new();
    let flat_out = [
        ("llm.output_messages.", "message."),
        ("gen_ai.completion.", ""),
    ];
    for (role, text) in messages(&attrs, &flat_out, "gen_ai.output.messages") {
        outputs.push(spans::message_port(&role, text, true));
    }
    let mut documents = attribute_documents(&attrs, &OUTPUT_DOCUMENTS);
    if documents.is_empty() {
        documents = extra.documents;
    }
    let mut memory_writes = extra.writes;
    let mut score = attribute_score(&attrs, &events);
    if let (true, Some(text)) = (outputs.is_empty(), str_attr("output.value")) {
        let parsed = json_in(&text);
        if kind == Kind::Evaluator {
            score = score.or_else(|| {
                spans::score_in(parsed.as_ref().unwrap_or(&Value::String(text.clone())))
            });
            if text.trim().parse::<f64>().is_err() {
                outputs.push(Port::new("judge_response", "llm_output", text));
            }
        } else if let (true, Some(docs)) = (
            documents.is_empty(),
            parsed.as_ref().and_then(spans::documents_in).filter(|_| {
                kind == Kind::Retriever
                    || (kind == Kind::Tool
                        && parsed.as_ref().is_some_and(otlp_agents::is_search_result))
            }),
        ) {
            documents = docs;
        } else if documents.is_empty() {
            if let (false, Some(v)) = (kind == Kind::Llm, &parsed) {
                spans::memory_writes_in(v, &mut memory_writes, 0);
            }
            outputs.extend(spans::plain_output(text, parsed.as_ref(), kind));
        }
    }
    if let (Kind::Evaluator, Some(s)) = (kind, score) {
        outputs.push(spans::score_port(s));
    }
    let judged_here = if kind == Kind::Evaluator {
        if let (true, Some(l)) = (outputs.is_empty(), otlp_agents::evaluator_label(&attrs)) {
            outputs.push(Port::new("judge_response", "llm_output", l));
        }
        Vec::new()
    } else {
        otlp_agents::attribute_results(&attrs)
    };

    let tool_result = str_attr("output.value");
    let mut metadata: Map<String, Value> = attrs
        .into_iter()
        .filter(|(k, _)| {
            !CONSUMED.iter().any(|c| k.starts_with(c))
                && !k.ends_with(".messages")
                && k != "gen_ai.system_instructions"
        })
        .collect();
    metadata.insert("otel_kind".into(), span_kind(&raw.kind));
    let mut results: Vec<Value> = events
        .into_iter()
        .filter(|(name, _)| name == "gen_ai.evaluation.result")
        .map(|(_, a)| Value::Object(a))
        .collect();
    results.extend(judged_here);
    if !results.is_empty() {
        otlp_agents::mark_question(&mut inputs);
    }
    if !results.is_empty() {
        metadata.insert("gen_ai.evaluation.results".into(), Value::Array(results));
    }
    let status = status_text(raw.status.as_ref());
    metadata.insert("status".into(), Value::String(status.clone()));
    // A tool's result read as records: kept as said, for a tool span with children (an op
    // at its end whose result is what its caller reads).
    if let (Kind::Tool, true, Some(text)) = (kind, outputs.is_empty(), tool_result) {
        metadata.insert(spans::TOOL_RESULT.into(), Value::String(text));
    }
    let ids = Ids {
        id: hex_id(raw.span_id),
        trace_id: hex_id(raw.trace_id),
        parent: raw.parent_span_id.filter(|p| !p.is_empty()).map(hex_id),
        name: raw.name,
    };
    let from = Origin {
        filename: format!("otlp:{service}"),
        path,
        id_field: "spanId",
        parent_field: "parentSpanId",
    };
    let work = Work {
        inputs,
        outputs,
        documents,
        memory_writes,
        metadata,
        status,
    };
    Ok(Span::new(ids, kind, (start_ns, end_ns), work, from))
}

/// A span's start and end, the end not before the start.
fn times(raw: &RawSpan, path: &str) -> Result<(u64, u64), FormatError> {
    let start_ns = nanos(
        &raw.start_time_unix_nano,
        &format!("{path}.startTimeUnixNano"),
    )?;
    let end_ns = nanos(&raw.end_time_unix_nano, &format!("{path}.endTimeUnixNano"))?;
    if end_ns < start_ns {
        return Err(FormatError::BadTimestamp {
            path: format!("{path}.endTimeUnixNano"),
            value: format!("{end_ns} (before the start, {start_ns})"),
        });
    }
    Ok((start_ns, end_ns))
}

/// Ports of an `input.value`: per key for an evaluator, per message for a message list, else one.
pub(crate) fn value_ports(text: &str, kind: Kind) -> Vec<Port> {
    let parsed = json_in(text);
    if kind == Kind::Evaluator {
        if let Some(ports) = parsed
            .as_ref()
            .and_then(|v| spans::keyed_ports(v, "evaluation_input"))
        {
            return ports;
        }
    }
    if let Some(msgs) = parsed.as_ref().and_then(spans::messages_in) {
        return msgs
            .into_iter()
            .map(|(role, t)| {
                if kind == Kind::Llm {
                    spans::message_port(&role, t, false)
                } else {
                    let mut p = Port::new("message", "message", t);
                    p.metadata.insert("role".into(), Value::String(role));
                    p
                }
            })
            .collect();
    }
    let (class, category) = match kind {
        Kind::Retriever | Kind::Embedding => ("query", "query"),
        Kind::Llm => ("llm_input", "llm_input"),
        _ => ("input", "input"),
    };
    vec![Port::new(class, category, text.to_owned())]
}
