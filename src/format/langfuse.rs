//! Langfuse trace exports: a trace with its `observations` (and `scores`), a list of such
//! traces, or `{"data": [traces]}`. Observations become the common [`Span`] form; the trace is
//! the root span; scores become evaluator spans. `docs/formats-import.md` has the mapping.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::error::from_json;
use super::otlp::value_ports;
use super::spans::{self, Ids, Imported, Kind, Lines, Origin, Port, Span, Work};
use super::time::parse_rfc3339;
use super::FormatError;
use crate::model::GraphMeta;
use crate::text::text_of;

/// Reads a Langfuse export into spans and graph metadata.
///
/// # Errors
/// [`FormatError::Json`] for bad JSON; [`FormatError::Field`] naming the JSON path of a trace
/// or observation of the wrong shape; [`FormatError::BadTimestamp`] for a time that is not
/// ISO 8601. In lenient mode a bad observation is dropped and reported instead.
pub fn parse(bytes: &[u8], lenient: bool) -> Result<Imported, FormatError> {
    let doc: Value = serde_json::from_slice(bytes).map_err(|e| from_json(&e))?;
    let traces: Vec<(String, &Value)> =
        match &doc {
            Value::Array(items) => items
                .iter()
                .enumerate()
                .map(|(i, t)| (format!("[{i}]"), t))
                .collect(),
            Value::Object(o) => match o.get("data") {
                Some(Value::Array(items)) if !o.contains_key("observations") => items
                    .iter()
                    .enumerate()
                    .map(|(i, t)| (format!("data[{i}]"), t))
                    .collect(),
                _ => vec![("trace".to_owned(), &doc)],
            },
            _ => return Err(FormatError::Field {
                path: "$".into(),
                message:
                    "a Langfuse export is a trace object, a list of traces or {\"data\": [traces]}"
                        .into(),
            }),
        };
    let at = positions(bytes);
    let mut problems = Vec::new();
    let mut out = Vec::new();
    let mut meta = GraphMeta::default();
    for (k, (path, t)) in traces.into_iter().enumerate() {
        match trace(t, &path, &at, lenient, &mut problems) {
            Ok(mut spans) => {
                if k == 0 {
                    meta.graph_id = format!(
                        "graph-{}",
                        spans.first().map_or("langfuse", |s| s.id.as_str())
                    );
                    meta.user_id = t.get("userId").cloned().unwrap_or(Value::Null);
                    let mut m = Map::new();
                    m.insert("source_format".into(), Value::String("langfuse".into()));
                    for key in ["sessionId", "tags", "release", "version", "environment"] {
                        if let Some(v) = t.get(key) {
                            m.insert(key.into(), v.clone());
                        }
                    }
                    meta.metadata = Value::Object(m);
                }
                out.append(&mut spans);
            }
            Err(e) if lenient => problems.push(e),
            Err(e) => return Err(e),
        }
    }
    Ok(Imported::new(out, meta, problems))
}

fn time(v: Option<&Value>, path: String) -> Result<Option<u64>, FormatError> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => parse_rfc3339(s).map(Some).ok_or(FormatError::BadTimestamp {
            path,
            value: s.clone(),
        }),
        Some(other) => Err(FormatError::BadTimestamp {
            path,
            value: other.to_string(),
        }),
    }
}

fn str_field(o: &Map<String, Value>, key: &str) -> Option<String> {
    o.get(key).filter(|v| !v.is_null()).map(text_of)
}

/// `line L, column C: ` of each trace and observation, by JSON path (`[0]`,
/// `[0].observations[2]`, `data[1]`, `trace.observations[0]`).
fn positions(bytes: &[u8]) -> HashMap<String, String> {
    #[derive(Deserialize)]
    struct TraceRaw<'a> {
        #[serde(borrow, default)]
        observations: Option<Vec<&'a RawValue>>,
        #[serde(borrow, default)]
        data: Option<Vec<&'a RawValue>>,
    }
    let lines = Lines::new(bytes);
    let mut out = HashMap::new();
    let Ok(top) = serde_json::from_slice::<&RawValue>(bytes) else {
        return out;
    };
    let traces: Vec<(String, &RawValue)> = if top.get().starts_with('[') {
        let list: Vec<&RawValue> = serde_json::from_str(top.get()).unwrap_or_default();
        list.into_iter()
            .enumerate()
            .map(|(i, t)| (format!("[{i}]"), t))
            .collect()
    } else {
        match serde_json::from_str::<TraceRaw<'_>>(top.get()) {
            Ok(TraceRaw {
                observations: None,
                data: Some(list),
            }) => list
                .into_iter()
                .enumerate()
                .map(|(i, t)| (format!("data[{i}]"), t))
                .collect(),
            _ => vec![("trace".to_owned(), top)],
        }
    };
    for (path, raw) in traces {
        out.insert(path.clone(), lines.prefix(bytes, raw.get()));
        let Ok(TraceRaw {
            observations: Some(obs),
            ..
        }) = serde_json::from_str(raw.get())
        else {
            continue;
        };
        for (j, ob) in obs.into_iter().enumerate() {
            out.insert(
                format!("{path}.observations[{j}]"),
                lines.prefix(bytes, ob.get()),
            );
        }
    }
    out
}

fn trace(
    t: &Value,
    json_path: &str,
    at: &HashMap<String, String>,
    lenient: bool,
    problems: &mut Vec<FormatError>,
) -> Result<Vec<Span>, FormatError> {
    let located = |p: &str| format!("{}{p}", at.get(p).map_or("", String::as_str));
    let path = &located(json_path);
    let Some(o) = t.as_object() else {
        return Err(FormatError::Field {
            path: path.to_owned(),
            message: "expected a trace object".into(),
        });
    };
    let Some(obs) = o.get("observations").and_then(Value::as_array) else {
        return Err(FormatError::Field {
            path: format!("{path}.observations"),
            message:
                "expected a list of observation objects; export the trace with its observations"
                    .into(),
        });
    };
    let trace_id = str_field(o, "id").unwrap_or_else(|| format!("trace-{json_path}"));
    let name = str_field(o, "name").unwrap_or_else(|| "trace".into());
    let filename = format!("langfuse:{name}");
    let mut spans = Vec::new();
    for (j, ob) in obs.iter().enumerate() {
        match observation(
            ob,
            &located(&format!("{json_path}.observations[{j}]")),
            &trace_id,
            &filename,
        ) {
            Ok(s) => spans.push(s),
            Err(e) if lenient => problems.push(e),
            Err(e) => return Err(e),
        }
    }
    let first = spans.iter().map(|s| s.start_ns).min();
    let start_ns = time(o.get("timestamp"), format!("{path}.timestamp"))?
        .or(first)
        .unwrap_or(0);
    let last = spans
        .iter()
        .map(|s| s.end_ns)
        .max()
        .unwrap_or(start_ns)
        .max(start_ns);
    let input = o.get("input").filter(|v| !v.is_null());
    let mut metadata = Map::new();
    for key in ["sessionId", "userId", "tags", "metadata"] {
        if let Some(v) = o.get(key).filter(|v| !v.is_null()) {
            metadata.insert(key.into(), v.clone());
        }
    }

    add_scores(o, &mut spans, &trace_id, &filename, path, last);

    let ids = Ids {
        id: trace_id.clone(),
        trace_id: trace_id.clone(),
        parent: None,
        name,
    };
    let work = Work {
        inputs: input
            .map(|v| value_ports(&text_of(v), Kind::Chain))
            .unwrap_or_default(),
        metadata,
        status: "OK".into(),
        ..Work::default()
    };
    let from = Origin {
        filename,
        path: path.to_owned(),
        id_field: "id",
        parent_field: "parentObservationId",
    };
    let root = Span::new(ids, Kind::Chain, (start_ns, last), work, from);
    spans.insert(0, root);
    Ok(spans)
}

/// The gold answer a score's metadata carries: under a key that says so (`golden_answers`,
/// `expected_output`: hints), else the one value that is a short text or a list of short
/// texts and is neither the question nor the answer (keys are the user's names).
fn score_gold(
    meta: &Map<String, Value>,
    query: Option<&str>,
    answer: Option<&str>,
) -> Option<String> {
    if let Some(g) = meta
        .get("golden_answers")
        .or_else(|| meta.get("expected_output"))
    {
        return Some(text_of(g));
    }
    let short = |v: &Value| {
        v.as_str()
            .is_some_and(|s| !s.trim().is_empty() && s.len() <= 200)
    };
    let mut texts = meta.values().filter(|v| match v {
        Value::Array(a) => !a.is_empty() && a.iter().all(short),
        v => short(v),
    });
    let gold = texts.next()?;
    let text = text_of(gold);
    let said = |t: Option<&str>| t.is_some_and(|t| t.trim() == text.trim());
    (texts.next().is_none() && !said(query) && !said(answer)).then_some(text)
}

/// Scores: onto their evaluator observation, or as a judge span (at the end of the trace)
/// reading the query (the trace input) and the answer (the scored observation's or the trace's
/// output), so failure-case detection finds them.
fn add_scores(
    o: &Map<String, Value>,
    spans: &mut Vec<Span>,
    trace_id: &str,
    filename: &str,
    path: &str,
    last: u64,
) {
    let input = o.get("input").filter(|v| !v.is_null());
    let output = o.get("output").filter(|v| !v.is_null());
    for (k, sc) in o
        .get("scores")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        // Numeric and boolean scores carry a number; categorical ones a label (`stringValue`).
        let label = sc
            .get("stringValue")
            .or_else(|| sc.get("value"))
            .and_then(Value::as_str);
        let from_label = || {
            label
                .and_then(crate::model::judgement::label_failed)
                .map(|failed| if failed { 0.0 } else { 1.0 })
        };
        let Some(value) = sc
            .get("value")
            .and_then(spans::score_in)
            .or_else(from_label)
        else {
            continue;
        };
        let target = sc.get("observationId").and_then(Value::as_str);
        if let Some(ev) = spans
            .iter_mut()
            .find(|s| Some(s.id.as_str()) == target && s.kind == Kind::Evaluator)
        {
            if !ev.outputs.iter().any(|p| p.class == "score") {
                ev.outputs.push(spans::score_port(value));
            }
            continue;
        }
        let answer = target
            .and_then(|id| spans.iter().find(|s| s.id == id))
            .and_then(|s| s.outputs.first())
            .map(|p| p.text.clone());
        let query = input.map(text_of);
        let answer = answer.or_else(|| output.map(text_of));
        let gold = sc
            .get("metadata")
            .and_then(Value::as_object)
            .and_then(|m| score_gold(m, query.as_deref(), answer.as_deref()));
        let inputs: Vec<Port> = [
            ("query", query),
            ("prediction", answer),
            ("golden_answers", gold),
        ]
        .into_iter()
        .filter_map(|(class, text)| {
            let mut p = Port::new(class, "evaluation_input", text?);
            p.strong = true;
            Some(p)
        })
        .collect();
        let mut meta = Map::new();
        for key in ["name", "comment", "dataType", "source"] {
            if let Some(v) = sc.get(key).filter(|v| !v.is_null()) {
                meta.insert(key.into(), v.clone());
            }
        }
        meta.insert(
            "langfuse_score".into(),
            sc.get("name").cloned().unwrap_or(Value::Null),
        );
        if let Some(l) = label {
            meta.insert("label".into(), Value::String(l.to_owned()));
        }
        let id = sc
            .get("id")
            .map_or_else(|| format!("{trace_id}-score-{k}"), text_of);
        let ids = Ids {
            id: format!("score-{id}"),
            trace_id: trace_id.to_owned(),
            parent: Some(trace_id.to_owned()),
            name: format!("score:{}", sc.get("name").map(text_of).unwrap_or_default()),
        };
        let work = Work {
            inputs,
            outputs: vec![spans::score_port(value)],
            metadata: meta,
            status: "OK".into(),
            ..Work::default()
        };
        let from = Origin {
            filename: filename.to_owned(),
            path: format!("{path}.scores[{k}]"),
            id_field: "id",
            parent_field: "observationId",
        };
        spans.push(Span::new(ids, Kind::Evaluator, (last, last), work, from));
    }
}

/// Outputs of an observation: messages (generation), a score (evaluator), documents
/// (retriever), else the value, with any memory writes in it.
fn output_ports(kind: Kind, v: &Value) -> Work {
    let (mut outputs, mut documents, mut memory_writes) = (Vec::new(), Vec::new(), Vec::new());
    match kind {
        Kind::Llm => {
            let text = spans::messages_in(v).map_or_else(
                || text_of(v),
                |m| m.into_iter().map(|(_, t)| t).collect::<Vec<_>>().join("\n"),
            );
            outputs.push(spans::message_port("assistant", text, true));
        }
        Kind::Evaluator => {
            if let Some(s) = spans::score_in(v) {
                outputs.push(spans::score_port(s));
            }
            if !v.is_number() {
                outputs.push(Port::new("judge_response", "llm_output", text_of(v)));
            }
        }
        Kind::Retriever if spans::documents_in(v).is_some() => {
            documents = spans::documents_in(v).unwrap_or_default();
        }
        _ => {
            spans::memory_writes_in(v, &mut memory_writes, 0);
            outputs.push(Port::new("output", "output", text_of(v)));
        }
    }
    Work {
        outputs,
        documents,
        memory_writes,
        ..Work::default()
    }
}

fn observation(
    ob: &Value,
    path: &str,
    trace_id: &str,
    filename: &str,
) -> Result<Span, FormatError> {
    let Some(o) = ob.as_object() else {
        return Err(FormatError::Field {
            path: path.to_owned(),
            message: "expected an observation object; export the trace with full observations"
                .into(),
        });
    };
    let Some(id) = str_field(o, "id").filter(|i| !i.is_empty()) else {
        return Err(FormatError::Field {
            path: format!("{path}.id"),
            message: "an observation needs a non-empty id".into(),
        });
    };
    let kind = o
        .get("type")
        .and_then(Value::as_str)
        .map_or(Kind::Chain, Kind::parse);
    let start_ns = time(o.get("startTime"), format!("{path}.startTime"))?.ok_or_else(|| {
        FormatError::BadTimestamp {
            path: format!("{path}.startTime"),
            value: "(missing)".into(),
        }
    })?;
    let end_ns = time(o.get("endTime"), format!("{path}.endTime"))?.unwrap_or(start_ns);
    if end_ns < start_ns {
        return Err(FormatError::BadTimestamp {
            path: format!("{path}.endTime"),
            value: format!(
                "{} (before startTime)",
                o.get("endTime").map(text_of).unwrap_or_default()
            ),
        });
    }
    let input = o.get("input").filter(|v| !v.is_null());
    let output = o.get("output").filter(|v| !v.is_null());
    let mut inputs = Vec::new();
    if let Some(v) = input {
        match (kind, spans::messages_in(v)) {
            (Kind::Llm, Some(msgs)) => inputs.extend(
                msgs.into_iter()
                    .map(|(r, t)| spans::message_port(&r, t, false)),
            ),
            _ => inputs.extend(value_ports(&text_of(v), kind)),
        }
    }
    let mut work = output.map(|v| output_ports(kind, v)).unwrap_or_default();
    work.inputs = inputs;
    for key in [
        "type",
        "model",
        "modelParameters",
        "usageDetails",
        "costDetails",
        "level",
        "statusMessage",
        "metadata",
        "promptName",
        "promptVersion",
    ] {
        if let Some(v) = o.get(key).filter(|v| !v.is_null()) {
            work.metadata.insert(key.into(), v.clone());
        }
    }
    work.status = match o.get("level").and_then(Value::as_str) {
        Some("ERROR") => format!(
            "ERROR: {}",
            str_field(o, "statusMessage").unwrap_or_default()
        ),
        _ => "OK".to_owned(),
    };
    let ids = Ids {
        id,
        trace_id: trace_id.to_owned(),
        parent: Some(str_field(o, "parentObservationId").unwrap_or_else(|| trace_id.to_owned())),
        name: str_field(o, "name").unwrap_or_else(|| kind.category().to_owned()),
    };
    let from = Origin {
        filename: filename.to_owned(),
        path: path.to_owned(),
        id_field: "id",
        parent_field: "parentObservationId",
    };
    Ok(Span::new(ids, kind, (start_ns, end_ns), work, from))
}
