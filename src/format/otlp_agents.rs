//! Agent spans in OTLP whose inputs and outputs are not chat messages: OpenLLMetry's
//! `traceloop.span.kind` / `traceloop.entity.input|output` (workflow, task, agent and tool
//! spans), GenAI `execute_tool` arguments and result, GenAI retrieval query and documents, and
//! the GenAI memory operations (`search_memory`, `create_memory`, `update_memory`,
//! `upsert_memory`, `delete_memory` with `gen_ai.memory.*`), whose records are versions of
//! memory units keyed by `gen_ai.memory.id`; Langfuse-over-OTel observations
//! (`langfuse.observation.type|input|output`).

use serde_json::{Map, Value};

use super::otlp_messages::indexed;
use super::spans::{self, json_in, Kind, MemoryWrite, Port};
use crate::text::text_of;

/// What [`normalize`] read besides `input.value` / `output.value`.
pub(crate) struct Extra {
    pub kind: Kind,
    pub documents: Vec<Port>,
    pub writes: Vec<MemoryWrite>,
}

/// The GenAI memory operations that write a memory unit, with the event they record.
const WRITES: [(&str, &str); 4] = [
    ("create_memory", "ADD"),
    ("update_memory", "UPDATE"),
    ("upsert_memory", "UPDATE"),
    ("delete_memory", "DELETE"),
];

/// Moves the agent conventions' input and output attributes to `input.value` /
/// `output.value` (when those are absent) and reads the span's kind, retrieved documents and
/// memory writes.
pub(crate) fn normalize(attrs: &mut Map<String, Value>) -> Extra {
    let op = attrs
        .get("gen_ai.operation.name")
        .map(text_of)
        .unwrap_or_default();
    let mut extra = Extra {
        kind: kind(attrs, &op),
        documents: Vec::new(),
        writes: Vec::new(),
    };
    let input_keys = [
        "traceloop.entity.input",
        "gen_ai.tool.call.arguments",
        "gen_ai.retrieval.query.text",
        "gen_ai.memory.query",
        "langfuse.observation.input",
    ];
    let output_keys = [
        "traceloop.entity.output",
        "gen_ai.tool.call.result",
        "langfuse.observation.output",
    ];
    for (keys, to) in [
        (&input_keys[..], "input.value"),
        (&output_keys, "output.value"),
    ] {
        for k in keys {
            if attrs.contains_key(to) {
                break;
            }
            if let Some(v) = attrs.remove(*k) {
                let text = if k.starts_with("traceloop.") {
                    entity_text(&text_of(&v))
                } else {
                    text_of(&v)
                };
                attrs.insert(to.to_owned(), Value::String(text));
            }
        }
    }
    // OpenInference's completions API: `llm.prompts.{i}.prompt.text`, `llm.choices.{i}.completion.text`.
    for (prefix, field, to) in [
        ("llm.prompts.", "prompt.text", "input.value"),
        ("llm.choices.", "completion.text", "output.value"),
    ] {
        let texts: Vec<Value> = indexed(attrs, prefix)
            .values()
            .filter_map(|m| m.get(field).cloned())
            .collect();
        if texts.is_empty() || attrs.contains_key(to) {
            continue;
        }
        attrs.retain(|k, _| !k.starts_with(prefix));
        let text = match texts.as_slice() {
            [one] => text_of(one),
            _ => Value::Array(texts).to_string(),
        };
        attrs.insert(to.to_owned(), Value::String(text));
    }
    // Documents not shaped as records stay in the metadata, as they came.
    if let Some(docs) = attrs
        .get("gen_ai.retrieval.documents")
        .and_then(|v| json_in(&text_of(v)).or_else(|| Some(v.clone())))
        .as_ref()
        .and_then(spans::documents_in)
    {
        attrs.remove("gen_ai.retrieval.documents");
        extra.documents = docs;
    }
    let id = attrs.get("gen_ai.memory.id").map(text_of);
    if let (Some(id), Some((_, event))) = (id, WRITES.iter().find(|(o, _)| *o == op)) {
        let content = attrs.get("gen_ai.memory.content").map(text_of);
        if let (Some(c), false) = (&content, attrs.contains_key("input.value")) {
            attrs.insert("input.value".into(), Value::String(c.clone()));
        }
        // Without its content (opt-in) a write is no version: the record's text is unknown.
        if content.is_some() || *event == "DELETE" {
            extra.writes.push(MemoryWrite {
                id,
                text: content.filter(|_| *event != "DELETE"),
                event: (*event).to_owned(),
            });
        }
    }
    extra
}

/// A span's kind: OpenInference's span kind, else the GenAI operation name (memory searches
/// are retrievals, memory writes chains), else OpenLLMetry's `traceloop.span.kind`, else the
/// Langfuse observation type.
fn kind(attrs: &Map<String, Value>, op: &str) -> Kind {
    if let Some(k) = attrs.get("openinference.span.kind") {
        return Kind::parse(&text_of(k));
    }
    match op {
        "search_memory" => return Kind::Retriever,
        o if WRITES.iter().any(|(w, _)| *w == o) => return Kind::Chain,
        "" => {}
        o => return Kind::parse(o),
    }
    match attrs.get("traceloop.span.kind").map(text_of).as_deref() {
        Some("workflow" | "task") => Kind::Chain,
        Some("agent") => Kind::Agent,
        Some("tool") => Kind::Tool,
        // Langfuse over OTel: the observation type (`generation`, `span`, `retriever`, ...).
        _ => attrs
            .get("langfuse.observation.type")
            .map_or(Kind::Unknown, |t| Kind::parse(&text_of(t))),
    }
}

/// OpenLLMetry's entity input `{"args": [...], "kwargs": {...}}` as the value the function
/// was called with: the one argument alone, else the arguments as a JSON list (keyword
/// arguments as an object at its end); an output that is a JSON string as that string.
fn entity_text(text: &str) -> String {
    let Some(v) = json_in(text) else {
        return text.to_owned();
    };
    match &v {
        Value::String(s) => s.clone(),
        Value::Object(o) if o.len() == 2 && o.contains_key("args") && o.contains_key("kwargs") => {
            let mut args: Vec<Value> = o["args"].as_array().cloned().unwrap_or_default();
            if let Some(kw) = o["kwargs"].as_object().filter(|k| !k.is_empty()) {
                args.push(Value::Object(kw.clone()));
            }
            match args.as_slice() {
                [Value::String(one)] => one.clone(),
                [one] => one.to_string(),
                _ => Value::Array(args).to_string(),
            }
        }
        _ => text.to_owned(),
    }
}

/// True when a tool's output reads like retrieved records (ids and texts, no write events):
/// a memory-search tool's result, read as documents rather than as memory writes.
pub(crate) fn is_search_result(v: &Value) -> bool {
    fn has_event(v: &Value, depth: usize) -> bool {
        match v {
            Value::Object(o) => {
                o.contains_key("event") || o.values().any(|x| depth < 8 && has_event(x, depth + 1))
            }
            Value::Array(a) => a.iter().any(|x| depth < 8 && has_event(x, depth + 1)),
            _ => false,
        }
    }
    spans::documents_in(v).is_some() && !has_event(v, 0)
}

/// Prefixes of OpenInference's evaluation and annotation attributes (`evaluation.label`,
/// `evaluation.score`, `annotation.label`, ...).
const JUDGED: [&str; 3] = ["evaluation.", "annotation.", "eval."];

/// The label or score OpenInference's evaluation / annotation attributes put on a span, as
/// GenAI evaluation results (`gen_ai.evaluation.score.label` / `.value`): the span they sit
/// on is the one judged. A score that is no number is kept as it came, so the failure
/// detection reports it rather than reading nothing.
pub(crate) fn attribute_results(attrs: &Map<String, Value>) -> Vec<Value> {
    JUDGED
        .iter()
        .filter_map(|p| {
            let label = attrs.get(&format!("{p}label"));
            let score = attrs.get(&format!("{p}score"));
            if label.is_none() && score.is_none() {
                return None;
            }
            let mut r = Map::new();
            if let Some(l) = label {
                r.insert(
                    "gen_ai.evaluation.score.label".into(),
                    Value::String(text_of(l)),
                );
            }
            if let Some(s) = score {
                let value = spans::score_in(s).map_or_else(|| s.clone(), Value::from);
                r.insert("gen_ai.evaluation.score.value".into(), value);
            }
            let name = attrs
                .get(&format!("{p}name"))
                .map_or_else(|| p.trim_end_matches('.').to_owned(), text_of);
            r.insert("gen_ai.evaluation.name".into(), Value::String(name));
            Some(Value::Object(r))
        })
        .collect()
}

/// An evaluator span's own label (`evaluation.label`, ...) as a verdict object: it judged
/// another span's answer, so the label is its output.
pub(crate) fn evaluator_label(attrs: &Map<String, Value>) -> Option<String> {
    JUDGED.iter().find_map(|p| {
        attrs
            .get(&format!("{p}label"))
            .map(|l| serde_json::json!({ "label": text_of(l) }).to_string())
    })
}

/// A span judged by an evaluation result (an event or attributes on it) judged its question:
/// the last message of role `user` among its inputs (GenAI and OpenInference name roles). The
/// graph builder makes it the question, or the earlier value it quotes (`Builder::op_inputs`).
pub(crate) fn mark_question(inputs: &mut [Port]) {
    let user = inputs
        .iter_mut()
        .rev()
        .find(|p| p.metadata.get("role").and_then(Value::as_str) == Some("user"));
    if let Some(p) = user {
        p.judged_turn = true;
    }
}
