//! The runs as an instrumented app would export them: OTLP JSON Lines, one trace per ingest
//! call and per answered question. Each trace is a call tree: a `CHAIN` root, `LLM` spans with
//! OpenInference (`llm.input_messages…`, `input.value`, `output.value`) and GenAI
//! (`gen_ai.operation.name`, `gen_ai.request.model`, `gen_ai.usage.*`) attributes, `RETRIEVER`
//! and `RERANKER` spans with their documents, `EMBEDDING` spans, and memory-write spans whose
//! output is Mem0's `{"results": [{id, memory, event}]}`. The judge is an `LLM` span (not an
//! evaluator) answering `{"label": "CORRECT" | "WRONG"}`, as Mem0's LoCoMo judge does; the
//! question's root span outputs the label and a score.
//!
//! The pipelines write spans into [`SpanLog`] as they run (when [`super::Config::record_spans`]
//! is set) and [`SpanLog::tie`] each recorded op that can carry a fault to its span, so a
//! fault's op can be named in the OTLP import (`op-<spanId>`).

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use memtrace_record::{parse_timestamp, sha1_hex};

use memtrace::provider::{ChatRequest, ChatRole, Usage};
use memtrace::text::text_of;

/// One recorded span.
#[derive(Debug, Clone)]
struct SpanRec {
    trace_id: String,
    span_id: String,
    parent: Option<String>,
    name: String,
    /// OTLP `SpanKind`: 1 internal, 3 client.
    kind: u8,
    start: u64,
    end: u64,
    attrs: Map<String, Value>,
}

/// The spans of a run, in start order.
#[derive(Debug, Clone, Default)]
pub struct SpanLog {
    enabled: bool,
    seed: u64,
    next: u64,
    now_ns: u64,
    spans: Vec<SpanRec>,
    root: Option<usize>,
    /// Recorded op id → id of the span that did the same work.
    op_spans: BTreeMap<String, String>,
    /// Memory writes since the root opened.
    results: Vec<Value>,
    /// Root spans kept open by key (one per question), by index.
    kept: BTreeMap<String, usize>,
}

const STEP_NS: u64 = 1_000_000;

fn role_name(r: ChatRole) -> &'static str {
    match r {
        ChatRole::System => "system",
        ChatRole::User => "user",
        ChatRole::Assistant => "assistant",
        ChatRole::Tool => "tool",
    }
}

/// `documents.{i}.document.id|content|score` attributes under `prefix`.
fn documents(attrs: &mut Map<String, Value>, prefix: &str, docs: &[(String, String, f64)]) {
    for (i, (id, content, score)) in docs.iter().enumerate() {
        attrs.insert(format!("{prefix}.{i}.document.id"), json!(id));
        attrs.insert(format!("{prefix}.{i}.document.content"), json!(content));
        attrs.insert(format!("{prefix}.{i}.document.score"), json!(score));
    }
}

impl SpanLog {
    /// A log that records (when `enabled`) from `start_time` (`YYYY-MM-DD HH:MM:SS`), with
    /// ids seeded by `seed`.
    pub fn new(enabled: bool, seed: u64, start_time: &str) -> SpanLog {
        let ms = parse_timestamp(start_time).unwrap_or(0);
        SpanLog {
            enabled,
            seed,
            now_ns: u64::try_from(ms).unwrap_or(0) * 1_000_000,
            ..SpanLog::default()
        }
    }

    /// True when spans are recorded.
    pub fn is_enabled(&self) -> bool {
        self.enabled
    }

    fn id(&mut self, hex: usize) -> String {
        self.next += 1;
        let h = sha1_hex(format!("span:{}:{}", self.seed, self.next).as_bytes());
        h.get(..hex).unwrap_or_default().to_owned()
    }

    /// Opens a `CHAIN` root span (a new trace), closing the open one. `input` is its
    /// `input.value` (JSON text for structured values).
    pub fn open(&mut self, name: &str, input: &Value, metadata: &Value) {
        if !self.enabled {
            return;
        }
        self.close(None);
        self.results.clear();
        self.start_root(name, input, metadata);
    }

    /// Opens a root span that stays open under `key` while others open and close (a request
    /// served in stages); [`SpanLog::resume`] makes it current again.
    pub fn open_kept(&mut self, key: &str, name: &str, input: &Value, metadata: &Value) {
        if !self.enabled {
            return;
        }
        self.start_root(name, input, metadata);
        if let Some(r) = self.root {
            self.kept.insert(key.to_owned(), r);
        }
    }

    /// Makes the root kept under `key` current (children go under it).
    pub fn resume(&mut self, key: &str) {
        if let Some(&r) = self.kept.get(key) {
            self.root = Some(r);
        }
    }

    fn start_root(&mut self, name: &str, input: &Value, metadata: &Value) {
        let mut attrs = Map::new();
        attrs.insert("openinference.span.kind".into(), json!("CHAIN"));
        if !input.is_null() {
            attrs.insert("input.value".into(), json!(text_of(input)));
        }
        if !input.is_string() && !input.is_null() {
            attrs.insert("input.mime_type".into(), json!("application/json"));
        }
        if !metadata.is_null() {
            attrs.insert("metadata".into(), json!(metadata.to_string()));
        }
        let (trace_id, span_id) = (self.id(32), self.id(16));
        self.root = Some(self.spans.len());
        self.spans.push(SpanRec {
            trace_id,
            span_id,
            parent: None,
            name: name.to_owned(),
            kind: 1,
            start: self.now_ns,
            end: self.now_ns,
            attrs,
        });
        self.now_ns += STEP_NS;
    }

    /// Closes the open root span with `output` as its `output.value`.
    pub fn close(&mut self, output: Option<&Value>) {
        let Some(r) = self.root.take() else {
            return;
        };
        let end = self.now_ns;
        self.now_ns += STEP_NS;
        if let Some(s) = self.spans.get_mut(r) {
            s.end = end;
            if let Some(o) = output {
                s.attrs.insert("output.value".into(), json!(text_of(o)));
                if !o.is_string() {
                    s.attrs
                        .insert("output.mime_type".into(), json!("application/json"));
                }
            }
        }
    }

    /// Closes the open root span with the memory writes made under it as its output
    /// (`{"results": [...]}`, what Mem0's `add` returns).
    pub fn close_with_results(&mut self) {
        let out = json!({ "results": std::mem::take(&mut self.results) });
        self.close(Some(&out));
    }

    /// A leaf span under the open root; returns its id ("" when disabled or no root is open).
    fn child(&mut self, name: &str, kind: u8, attrs: Map<String, Value>) -> String {
        if !self.enabled {
            return String::new();
        }
        let Some(root) = self.root.and_then(|r| self.spans.get(r)) else {
            return String::new();
        };
        let (trace_id, parent) = (root.trace_id.clone(), root.span_id.clone());
        let span_id = self.id(16);
        self.spans.push(SpanRec {
            trace_id,
            span_id: span_id.clone(),
            parent: Some(parent),
            name: name.to_owned(),
            kind,
            start: self.now_ns,
            end: self.now_ns + STEP_NS / 2,
            attrs,
        });
        self.now_ns += STEP_NS;
        span_id
    }

    /// An LLM call: `req` answered with `content` (what the model said) by `model`.
    pub fn llm(
        &mut self,
        name: &str,
        req: &ChatRequest,
        content: &str,
        model: &str,
        usage: Usage,
    ) -> String {
        if !self.enabled {
            return String::new();
        }
        let mut a = Map::new();
        a.insert("openinference.span.kind".into(), json!("LLM"));
        a.insert("llm.model_name".into(), json!(model));
        a.insert("llm.provider".into(), json!("simulated"));
        let msgs: Vec<Value> = req
            .messages
            .iter()
            .map(|m| json!({"role": role_name(m.role), "content": m.content}))
            .collect();
        for (i, m) in req.messages.iter().enumerate() {
            a.insert(
                format!("llm.input_messages.{i}.message.role"),
                json!(role_name(m.role)),
            );
            a.insert(
                format!("llm.input_messages.{i}.message.content"),
                json!(m.content),
            );
        }
        a.insert(
            "llm.output_messages.0.message.role".into(),
            json!("assistant"),
        );
        a.insert(
            "llm.output_messages.0.message.content".into(),
            json!(content),
        );
        a.insert(
            "input.value".into(),
            json!(json!({ "messages": msgs }).to_string()),
        );
        a.insert("input.mime_type".into(), json!("application/json"));
        a.insert("output.value".into(), json!(content));
        a.insert(
            "llm.invocation_parameters".into(),
            json!(json!({"temperature": req.temperature}).to_string()),
        );
        a.insert("llm.token_count.prompt".into(), json!(usage.input_tokens));
        a.insert(
            "llm.token_count.completion".into(),
            json!(usage.output_tokens),
        );
        a.insert(
            "llm.token_count.total".into(),
            json!(usage.input_tokens + usage.output_tokens),
        );
        a.insert("gen_ai.operation.name".into(), json!("chat"));
        a.insert("gen_ai.provider.name".into(), json!("simulated"));
        a.insert("gen_ai.request.model".into(), json!(model));
        a.insert("gen_ai.response.model".into(), json!(model));
        a.insert(
            "gen_ai.usage.input_tokens".into(),
            json!(usage.input_tokens),
        );
        a.insert(
            "gen_ai.usage.output_tokens".into(),
            json!(usage.output_tokens),
        );
        self.child(name, 3, a)
    }

    /// A retrieval: `query` returned `docs` (`(id, content, score)`, best first).
    pub fn retriever(&mut self, name: &str, query: &str, docs: &[(String, String, f64)]) -> String {
        let mut a = Map::new();
        a.insert("openinference.span.kind".into(), json!("RETRIEVER"));
        a.insert("input.value".into(), json!(query));
        documents(&mut a, "retrieval.documents", docs);
        self.child(name, 1, a)
    }

    /// A reranking of `input` into `output` for `query`.
    pub fn reranker(
        &mut self,
        name: &str,
        model: &str,
        query: &str,
        input: &[(String, String, f64)],
        output: &[(String, String, f64)],
    ) -> String {
        let mut a = Map::new();
        a.insert("openinference.span.kind".into(), json!("RERANKER"));
        a.insert("reranker.query".into(), json!(query));
        a.insert("reranker.model_name".into(), json!(model));
        a.insert("reranker.top_k".into(), json!(output.len()));
        documents(&mut a, "reranker.input_documents", input);
        documents(&mut a, "reranker.output_documents", output);
        self.child(name, 1, a)
    }

    /// An embedding of `text` by `model`.
    pub fn embedding(&mut self, name: &str, model: &str, text: &str) -> String {
        let mut a = Map::new();
        a.insert("openinference.span.kind".into(), json!("EMBEDDING"));
        a.insert("embedding.model_name".into(), json!(model));
        a.insert("embedding.embeddings.0.embedding.text".into(), json!(text));
        a.insert("gen_ai.operation.name".into(), json!("embeddings"));
        a.insert("gen_ai.request.model".into(), json!(model));
        self.child(name, 1, a)
    }

    /// A memory write: a traced store call taking `input` and returning Mem0's
    /// `{"results": [{id, memory, event}]}`.
    pub fn write(&mut self, name: &str, input: &Value, results: &[Value]) -> String {
        if !self.enabled {
            return String::new();
        }
        self.results.extend_from_slice(results);
        let mut a = Map::new();
        a.insert("openinference.span.kind".into(), json!("CHAIN"));
        a.insert("input.value".into(), json!(text_of(input)));
        a.insert("input.mime_type".into(), json!("application/json"));
        a.insert(
            "output.value".into(),
            json!(json!({ "results": results }).to_string()),
        );
        a.insert("output.mime_type".into(), json!("application/json"));
        self.child(name, 1, a)
    }

    /// Records that the recorded op `op_id` did the work of span `span`.
    pub fn tie(&mut self, op_id: &str, span: &str) {
        if self.enabled && !op_id.is_empty() && !span.is_empty() {
            self.op_spans.insert(op_id.to_owned(), span.to_owned());
        }
    }

    /// The span tied to the recorded op `op_id`.
    pub fn span_of(&self, op_id: &str) -> Option<&str> {
        self.op_spans.get(op_id).map(String::as_str)
    }

    /// OTLP JSON Lines: one `TracesData` per trace, service `service`.
    pub fn to_jsonl(&self, service: &str) -> Vec<u8> {
        let mut order: Vec<&str> = Vec::new();
        let mut by_trace: BTreeMap<&str, Vec<&SpanRec>> = BTreeMap::new();
        for s in &self.spans {
            if !by_trace.contains_key(s.trace_id.as_str()) {
                order.push(&s.trace_id);
            }
            by_trace.entry(&s.trace_id).or_default().push(s);
        }
        let mut out = Vec::new();
        for t in order {
            let spans: Vec<Value> = by_trace
                .get(t)
                .into_iter()
                .flatten()
                .map(|s| span_json(s))
                .collect();
            let line = json!({"resourceSpans": [{
                "resource": {"attributes": [
                    {"key": "service.name", "value": {"stringValue": service}},
                    {"key": "telemetry.sdk.language", "value": {"stringValue": "python"}},
                ]},
                "scopeSpans": [{"scope": {"name": "openinference.instrumentation", "version": "0.1"}, "spans": spans}],
            }]});
            out.extend_from_slice(line.to_string().as_bytes());
            out.push(b'\n');
        }
        out
    }
}

fn any_value(v: &Value) -> Value {
    match v {
        Value::String(s) => json!({"stringValue": s}),
        Value::Bool(b) => json!({"boolValue": b}),
        Value::Number(n) if n.is_i64() || n.is_u64() => json!({"intValue": n.to_string()}),
        Value::Number(n) => json!({"doubleValue": n.as_f64()}),
        other => json!({"stringValue": other.to_string()}),
    }
}

fn span_json(s: &SpanRec) -> Value {
    let attrs: Vec<Value> = s
        .attrs
        .iter()
        .map(|(k, v)| json!({"key": k, "value": any_value(v)}))
        .collect();
    let mut o = json!({
        "traceId": s.trace_id,
        "spanId": s.span_id,
        "name": s.name,
        "kind": s.kind,
        "startTimeUnixNano": s.start.to_string(),
        "endTimeUnixNano": s.end.to_string(),
        "attributes": attrs,
        "status": {"code": 1},
    });
    if let (Some(p), Some(m)) = (&s.parent, o.as_object_mut()) {
        m.insert("parentSpanId".into(), json!(p));
    }
    o
}
