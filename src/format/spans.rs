//! The common form of the span-based formats (OTLP, Langfuse): a call tree of spans, each with
//! the values it read and wrote. [`super::span_graph`] turns it into smartcomment records.
//!
//! Helpers here read the value shapes both formats share: chat message lists, retrieved
//! document lists, Mem0-style memory write results and evaluator scores.

use serde_json::{Map, Value};

use super::time::format_nanos;
use super::FormatError;
use crate::model::GraphMeta;
use crate::text::text_of;

/// What an importer read: spans, graph-level fields, and (lenient mode) what it skipped.
#[derive(Debug, Clone, Default)]
pub struct Imported {
    pub spans: Vec<Span>,
    pub meta: GraphMeta,
    pub problems: Vec<FormatError>,
}

impl Imported {
    /// What a reader read, the graph created when its first span started.
    pub fn new(spans: Vec<Span>, mut meta: GraphMeta, problems: Vec<FormatError>) -> Imported {
        meta.created_at = spans
            .iter()
            .map(|s| s.start_ns)
            .min()
            .map(format_nanos)
            .unwrap_or_default();
        Imported {
            spans,
            meta,
            problems,
        }
    }
}

/// What a span does, from `openinference.span.kind`, `gen_ai.operation.name`
/// or the Langfuse observation `type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Llm,
    Embedding,
    Chain,
    Retriever,
    Reranker,
    Tool,
    Agent,
    Guardrail,
    Evaluator,
    Event,
    Unknown,
}

impl Kind {
    /// Reads a kind name, case-insensitive (`LLM`, `GENERATION`, `RETRIEVER`, ...).
    pub fn parse(name: &str) -> Kind {
        match name.to_ascii_uppercase().as_str() {
            "LLM" | "GENERATION" | "CHAT" | "TEXT_COMPLETION" | "GENERATE_CONTENT" => Kind::Llm,
            "EMBEDDING" | "EMBEDDINGS" => Kind::Embedding,
            "CHAIN" | "SPAN" | "PROMPT" => Kind::Chain,
            "RETRIEVER" | "RETRIEVAL" | "SEARCH" => Kind::Retriever,
            "RERANKER" => Kind::Reranker,
            "TOOL" | "EXECUTE_TOOL" => Kind::Tool,
            "AGENT" | "INVOKE_AGENT" | "CREATE_AGENT" => Kind::Agent,
            "GUARDRAIL" => Kind::Guardrail,
            "EVALUATOR" | "EVALUATION" => Kind::Evaluator,
            "EVENT" => Kind::Event,
            _ => Kind::Unknown,
        }
    }

    /// The operation category written for spans of this kind.
    pub fn category(self) -> &'static str {
        match self {
            Kind::Llm => "llm",
            Kind::Embedding => "embedding",
            Kind::Chain => "chain",
            Kind::Retriever => "retrieval",
            Kind::Reranker => "reranking",
            Kind::Tool => "tool",
            Kind::Agent => "agent",
            Kind::Guardrail => "guardrail",
            Kind::Evaluator => "evaluation",
            Kind::Event => "event",
            Kind::Unknown => "span",
        }
    }
}

/// One value a span reads or writes.
#[derive(Debug, Clone, PartialEq)]
pub struct Port {
    /// `class_name` hint: the attribute kind (`llm_output`, `retrieved_document`, ...).
    pub class: String,
    /// True when the class comes from a JSON key the user chose (`query`, `prediction`): it
    /// wins over generic hints when several spans name the same value.
    pub strong: bool,
    /// `category` of the variable.
    pub category: String,
    /// The value as plain text (JSON text for structured values).
    pub text: String,
    /// A document or memory id (retrieved documents).
    pub doc_id: Option<String>,
    pub metadata: Map<String, Value>,
    /// The last user turn of a span an evaluation judged: its question, unless it quotes one
    /// (see `Builder::op_inputs`).
    pub judged_turn: bool,
}

impl Port {
    /// A port with a generic class.
    pub fn new(class: &str, category: &str, text: String) -> Port {
        Port {
            class: class.to_owned(),
            strong: false,
            category: category.to_owned(),
            text,
            doc_id: None,
            metadata: Map::new(),
            judged_turn: false,
        }
    }
}

/// A memory unit written by a span (Mem0's `{"results": [{"id", "memory", "event"}]}` shape).
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryWrite {
    pub id: String,
    /// The new text; `None` for a deletion.
    pub text: Option<String>,
    pub event: String,
}

/// A span (OTLP) or observation (Langfuse), in the common form.
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    pub id: String,
    pub trace_id: String,
    pub parent: Option<String>,
    pub name: String,
    pub kind: Kind,
    pub start_ns: u64,
    pub end_ns: u64,
    pub inputs: Vec<Port>,
    pub outputs: Vec<Port>,
    /// Retrieved documents: outputs linked to the memory unit or value they came from.
    pub documents: Vec<Port>,
    pub memory_writes: Vec<MemoryWrite>,
    /// Everything else worth keeping (model, token counts, status, other attributes).
    pub metadata: Map<String, Value>,
    /// `filename` of the records made from it (`otlp:<service.name>`, `langfuse:<trace name>`).
    pub filename: String,
    /// Where it is in the file, for errors: a JSON path, prefixed by `line N: ` in JSON Lines.
    pub path: String,
    /// Name of the id field in the source format (`spanId`, `id`), for error paths.
    pub id_field: &'static str,
    /// Name of the parent field in the source format (`parentSpanId`, `parentObservationId`).
    pub parent_field: &'static str,
    /// Status text (`OK`, `ERROR: message`), used when the span writes nothing else.
    pub status: String,
}

/// Who a span is: its id, its trace's and its parent's, and its name.
#[derive(Debug, Clone)]
pub struct Ids {
    pub id: String,
    pub trace_id: String,
    pub parent: Option<String>,
    pub name: String,
}

/// What a span did: the values it read and wrote, the documents it returned, the memory units
/// it wrote, what else is worth keeping and its status text.
#[derive(Debug, Clone, Default)]
pub struct Work {
    pub inputs: Vec<Port>,
    pub outputs: Vec<Port>,
    pub documents: Vec<Port>,
    pub memory_writes: Vec<MemoryWrite>,
    pub metadata: Map<String, Value>,
    pub status: String,
}

/// Where a span was read: the `filename` of the records made from it, its path in the file,
/// and the format's names for the id and parent fields (for error paths).
#[derive(Debug, Clone)]
pub struct Origin {
    pub filename: String,
    pub path: String,
    pub id_field: &'static str,
    pub parent_field: &'static str,
}

impl Span {
    /// A span as each format's reader hands it on: who it is, what it did between `start_ns`
    /// and `end_ns`, and where it was read.
    pub fn new(
        ids: Ids,
        kind: Kind,
        (start_ns, end_ns): (u64, u64),
        work: Work,
        origin: Origin,
    ) -> Span {
        Span {
            id: ids.id,
            trace_id: ids.trace_id,
            parent: ids.parent,
            name: ids.name,
            kind,
            start_ns,
            end_ns,
            inputs: work.inputs,
            outputs: work.outputs,
            documents: work.documents,
            memory_writes: work.memory_writes,
            metadata: work.metadata,
            filename: origin.filename,
            path: origin.path,
            id_field: origin.id_field,
            parent_field: origin.parent_field,
            status: work.status,
        }
    }
}

/// Line and column (1-based; the column counts bytes, like `serde_json`) of offsets in a file.
pub struct Lines {
    starts: Vec<usize>,
}

impl Lines {
    /// Indexes the line starts of `file`.
    pub fn new(file: &[u8]) -> Lines {
        let mut starts = vec![0];
        starts.extend(
            file.iter()
                .enumerate()
                .filter(|(_, &b)| b == b'\n')
                .map(|(i, _)| i + 1),
        );
        Lines { starts }
    }

    /// `line L, column C: ` for the start of `part`, a slice of the indexed file at `file`.
    pub fn prefix(&self, file: &[u8], part: &str) -> String {
        let offset = part.as_ptr().addr().saturating_sub(file.as_ptr().addr());
        let (line, column) = self.at(offset);
        format!("line {line}, column {column}: ")
    }

    /// Line and column of a byte offset.
    pub fn at(&self, offset: usize) -> (usize, usize) {
        let line = self.starts.partition_point(|&s| s <= offset).max(1);
        (line, offset - self.starts[line - 1] + 1)
    }
}

/// Parses text that holds JSON (an object or array); `None` for plain text.
pub fn json_in(text: &str) -> Option<Value> {
    let t = text.trim_start();
    if t.starts_with('{') || t.starts_with('[') {
        serde_json::from_str(text).ok()
    } else {
        None
    }
}

/// The text of a chat message's content: a string, or the text parts of a list
/// (`[{type: "text", text | content}]`, `gen_ai` `parts`).
pub fn message_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => {
            let texts: Vec<String> = parts
                .iter()
                .filter_map(|p| match p {
                    Value::String(s) => Some(s.clone()),
                    Value::Object(o) => o
                        .get("text")
                        .or_else(|| o.get("content"))
                        .map(text_of)
                        .or_else(|| tool_part(o)),
                    _ => None,
                })
                .collect();
            texts.join("\n")
        }
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// A GenAI `tool_call` part as `{"tool_call": name, "arguments": {...}}` (as OpenInference tool
/// calls are written), a `tool_call_response` part as its response.
fn tool_part(o: &Map<String, Value>) -> Option<String> {
    match o.get("type").and_then(Value::as_str) {
        Some("tool_call") => {
            let name = o.get("name").cloned().unwrap_or(Value::Null);
            Some(tool_call_text(&name, o.get("arguments")))
        }
        Some("tool_call_response") => o.get("response").or_else(|| o.get("result")).map(text_of),
        _ => None,
    }
}

/// One tool call as a value: `{"tool_call": name, "arguments": {...}}`, the arguments parsed
/// when they are JSON. A model's call and the tool span that ran it (its input made the same
/// way, [`tool_input_text`]) give the same text: one variable, the call's.
pub fn tool_call_text(name: &Value, args: Option<&Value>) -> String {
    let args = match args {
        Some(Value::String(a)) => json_in(a).unwrap_or_else(|| Value::String(a.clone())),
        Some(other) => other.clone(),
        None => Value::Null,
    };
    serde_json::json!({"tool_call": name, "arguments": args}).to_string()
}

/// A tool span's input as the call that asked for it ([`tool_call_text`]), when the input is a
/// JSON object of arguments.
#[must_use]
pub fn tool_input_text(name: &str, input: &str) -> Option<String> {
    json_in(input).filter(Value::is_object).map(|_| {
        tool_call_text(
            &Value::String(name.to_owned()),
            Some(&Value::String(input.to_owned())),
        )
    })
}

/// Metadata key of a tool span's result when it was read as retrieved records.
pub const TOOL_RESULT: &str = "tool.result";

/// Ports of a chat message: system messages are prompts (what an optimizer rewrites).
pub fn message_port(role: &str, text: String, output: bool) -> Port {
    if output {
        return Port::new("llm_output", "llm_output", text);
    }
    match role {
        "system" | "developer" => Port::new("system_prompt", "prompt", text),
        "" => Port::new("llm_input", "llm_input", text),
        r => {
            let mut p = Port::new("llm_input", "llm_input", text);
            p.metadata
                .insert("role".into(), Value::String(r.to_owned()));
            p
        }
    }
}

/// Chat messages in a JSON value: `[{role, content | parts}]`, `{messages: [...]}`, or one
/// `{role, content}` object. `None` when the value is not shaped like that.
pub fn messages_in(v: &Value) -> Option<Vec<(String, String)>> {
    // A message, then each of its tool calls as a message of its own (a value the model made).
    let one = |o: &Map<String, Value>| -> Option<Vec<(String, String)>> {
        let role = o
            .get("role")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let content = o.get("content").or_else(|| o.get("parts"));
        let calls = o.get("tool_calls").and_then(Value::as_array);
        if content.is_none() && calls.is_none() {
            return None;
        }
        // OpenAI's chat format: an assistant turn that only calls tools has no content; GenAI
        // parts hold the calls beside the text.
        let is_call = |p: &Value| p.get("type").and_then(Value::as_str) == Some("tool_call");
        let (text, part_calls) = match content {
            Some(Value::Array(parts)) => {
                let (calls, rest): (Vec<&Value>, Vec<&Value>) =
                    parts.iter().partition(|p| is_call(p));
                let calls: Vec<String> = calls
                    .into_iter()
                    .filter_map(|p| p.as_object().and_then(tool_part))
                    .collect();
                (
                    message_text(&Value::Array(rest.into_iter().cloned().collect())),
                    calls,
                )
            }
            other => (other.map(message_text).unwrap_or_default(), Vec::new()),
        };
        let mut out: Vec<(String, String)> = Vec::new();
        if !text.is_empty() || (calls.is_none_or(Vec::is_empty) && part_calls.is_empty()) {
            out.push((role.clone(), text));
        }
        out.extend(part_calls.into_iter().map(|c| (role.clone(), c)));
        for c in calls.into_iter().flatten() {
            let f = c.get("function").unwrap_or(c);
            let name = f.get("name").cloned().unwrap_or(Value::Null);
            out.push((role.clone(), tool_call_text(&name, f.get("arguments"))));
        }
        Some(out)
    };
    match v {
        Value::Array(items) if !items.is_empty() => items
            .iter()
            .map(|m| m.as_object().and_then(one))
            .collect::<Option<Vec<_>>>()
            .map(|ms| ms.into_iter().flatten().collect()),
        Value::Object(o) => match o.get("messages") {
            Some(inner @ Value::Array(_)) => messages_in(inner),
            _ if o.contains_key("role") => one(o),
            _ => None,
        },
        _ => None,
    }
}

/// Retrieved documents in a JSON value: a list of objects with an id and a text field
/// (`content`, `text`, `page_content`, `memory`, `document`), or such a list under
/// `documents` / `results` / `memories`.
pub fn documents_in(v: &Value) -> Option<Vec<Port>> {
    let list = match v {
        Value::Array(items) => items,
        Value::Object(o) => ["documents", "results", "memories"]
            .iter()
            .find_map(|k| o.get(*k).and_then(Value::as_array))?,
        _ => return None,
    };
    let mut out = Vec::new();
    for item in list {
        let o = item.as_object()?;
        let text = ["content", "text", "page_content", "memory", "document"]
            .iter()
            .find_map(|k| o.get(*k))?;
        let id = o.get("id").map(text_of);
        let mut p = Port::new("retrieved_document", "retrieved_document", text_of(text));
        p.doc_id = id;
        for (k, val) in o {
            if !matches!(
                k.as_str(),
                "id" | "content" | "text" | "page_content" | "memory" | "document"
            ) {
                p.metadata.insert(k.clone(), val.clone());
            }
        }
        out.push(p);
    }
    Some(out)
}

/// Memory writes in an output value: objects with an `id` and a `memory` field, or an `id`
/// and an `event` of ADD / UPDATE / DELETE (Mem0's `add` result), anywhere in the value.
pub fn memory_writes_in(v: &Value, out: &mut Vec<MemoryWrite>, depth: usize) {
    if depth > 16 {
        return;
    }
    match v {
        Value::Array(items) => items
            .iter()
            .for_each(|i| memory_writes_in(i, out, depth + 1)),
        Value::Object(o) => {
            let id = o
                .get("id")
                .filter(|i| i.is_string() || i.is_number())
                .map(text_of);
            let event = o
                .get("event")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_ascii_uppercase();
            let memory = o.get("memory");
            let is_write =
                matches!(event.as_str(), "ADD" | "UPDATE" | "DELETE") || memory.is_some();
            if let (Some(id), true) = (id, is_write) {
                if event != "NONE" {
                    let text = if event == "DELETE" {
                        None
                    } else {
                        memory.or_else(|| o.get("text")).map(text_of)
                    };
                    out.push(MemoryWrite {
                        id,
                        text,
                        event: if event.is_empty() {
                            "ADD".into()
                        } else {
                            event
                        },
                    });
                }
                return;
            }
            o.values().for_each(|i| memory_writes_in(i, out, depth + 1));
        }
        _ => {}
    }
}

/// An evaluator's score in an output value: a number, a numeric string, or `{score: x}`.
pub fn score_in(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
        Value::String(s) => s
            .trim()
            .parse()
            .ok()
            .or_else(|| json_in(s).as_ref().and_then(score_in)),
        Value::Object(o) => o.get("score").or_else(|| o.get("value")).and_then(score_in),
        _ => None,
    }
}

/// The score port of an evaluator (`class_name` `score`, the shape failure-case detection reads).
pub fn score_port(score: f64) -> Port {
    let mut p = Port::new("score", "score", format!("{score:?}"));
    p.strong = true;
    p
}

/// Inputs of an evaluator: one port per key of a JSON object, class = the key (`query`,
/// `prediction`, `golden_answers`, ...), so failure-case detection finds them.
pub fn keyed_ports(v: &Value, category: &str) -> Option<Vec<Port>> {
    let o = v.as_object()?;
    Some(
        o.iter()
            .map(|(k, val)| {
                let mut p = Port::new(k, category, text_of(val));
                p.strong = true;
                p
            })
            .collect(),
    )
}

/// The ports of an `output.value` that is neither a score nor documents: a model's reply
/// written as one chat message (`{"role": "assistant", ...}`) is that message, else one port.
pub(crate) fn plain_output(text: String, parsed: Option<&Value>, kind: Kind) -> Vec<Port> {
    let reply = parsed
        .filter(|v| kind == Kind::Llm && v.get("role").is_some())
        .and_then(messages_in);
    if let Some(msgs) = reply {
        return msgs
            .into_iter()
            .map(|(role, t)| message_port(&role, t, true))
            .collect();
    }
    let class = if kind == Kind::Llm {
        "llm_output"
    } else {
        "output"
    };
    vec![Port::new(class, class, text)]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn messages_documents_writes_and_scores() {
        let m = messages_in(
            &json!([{"role": "system", "content": "Be brief."}, {"role": "user", "parts": [{"type": "text", "content": "hi"}]}]),
        );
        assert_eq!(
            m,
            Some(vec![
                ("system".into(), "Be brief.".into()),
                ("user".into(), "hi".into())
            ])
        );
        assert_eq!(messages_in(&json!({"a": 1})), None);
        let d =
            documents_in(&json!({"results": [{"id": "m1", "memory": "Likes tea", "score": 0.9}]}))
                .unwrap();
        assert_eq!(
            (d[0].doc_id.as_deref(), d[0].text.as_str()),
            (Some("m1"), "Likes tea")
        );
        let mut w = Vec::new();
        memory_writes_in(
            &json!({"results": [{"id": "m1", "memory": "x", "event": "UPDATE"}, {"id": "m2", "event": "DELETE"}, {"id": "m3", "memory": "y", "event": "NONE"}]}),
            &mut w,
            0,
        );
        assert_eq!(w.len(), 2);
        assert_eq!((w[1].id.as_str(), w[1].text.as_deref()), ("m2", None));
        assert_eq!(score_in(&json!({"score": 0})), Some(0.0));
        assert_eq!(score_in(&json!("1.0")), Some(1.0));
        assert_eq!(score_in(&json!("good")), None);
    }
}
