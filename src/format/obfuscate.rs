//! `memtrace obfuscate`: a trace with every name a user chose replaced by a stable token, values
//! kept, in the format it came in (smartcomment, OTLP, Langfuse), so it can be shared and still
//! analysed the same way.
//!
//! Renamed: op / span / observation / trace / score names, variable names and classes,
//! categories (smartcomment), session names, comments, metadata keys (at every depth), source
//! file names, OTLP `service.name` and attribute keys that no convention defines, Langfuse tags.
//! Kept: every value, every id (op ids, span ids, session ids; variable ids are rebuilt from
//! the renamed names), timestamps, the `sentinel` category, and OTLP attribute keys and event
//! names of the OpenTelemetry / OpenInference / OpenLLMetry / Langfuse conventions
//! ([`CONVENTION_PREFIXES`]): they say what a span does, not what the user called it.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::{detect, Format, FormatError};
use crate::util::hash::fnv1a;

/// Attribute keys (and event names) starting with one of these are conventions, kept as they are.
pub const CONVENTION_PREFIXES: [&str; 23] = [
    "openinference.",
    "input.",
    "output.",
    "llm.",
    "gen_ai.",
    "embedding.",
    "retrieval.",
    "reranker.",
    "document.",
    "tool.",
    "tool_call.",
    "message.",
    "session.",
    "user.",
    "tag.",
    "eval.",
    "evaluation.",
    "traceloop.",
    "langfuse.",
    "telemetry.",
    "exception.",
    "otel.",
    "db.",
];

/// Keys kept whole: `metadata` (its JSON text's keys are renamed) and `service.name` (its
/// value is renamed).
const KEPT_KEYS: [&str; 2] = ["metadata", "service.name"];

/// The obfuscated file and the names replaced (original → token).
#[derive(Debug, Clone, Default)]
pub struct Obfuscated {
    pub bytes: Vec<u8>,
    pub format: Option<Format>,
    pub names: BTreeMap<String, String>,
}

struct Renamer {
    seed: u64,
    names: BTreeMap<String, String>,
}

impl Renamer {
    /// The token of a name: `n` and 12 hex digits of a seeded hash; empty stays empty.
    fn tok(&mut self, name: &str) -> String {
        if name.is_empty() {
            return String::new();
        }
        if let Some(t) = self.names.get(name) {
            return t.clone();
        }
        let mut bytes = self.seed.to_le_bytes().to_vec();
        bytes.extend_from_slice(name.as_bytes());
        let t = format!("n{:012x}", fnv1a(&bytes) & 0xffff_ffff_ffff);
        self.names.insert(name.to_owned(), t.clone());
        t
    }

    /// Renames the string at `key` of `o`, when it is one.
    fn field(&mut self, o: &mut Map<String, Value>, key: &str) {
        if let Some(Value::String(s)) = o.get_mut(key) {
            *s = self.tok(s);
        }
    }

    /// Renames every object key inside `v`, values kept.
    fn keys(&mut self, v: &mut Value) {
        match v {
            Value::Object(o) => {
                let old = std::mem::take(o);
                for (k, mut x) in old {
                    self.keys(&mut x);
                    o.insert(self.tok(&k), x);
                }
            }
            Value::Array(a) => a.iter_mut().for_each(|x| self.keys(x)),
            _ => {}
        }
    }

    /// Renames the keys of the metadata at `key` (an object, or JSON text of one).
    fn metadata(&mut self, o: &mut Map<String, Value>, key: &str) {
        match o.get_mut(key) {
            Some(Value::String(s)) => {
                if let Ok(mut v @ Value::Object(_)) = serde_json::from_str::<Value>(s) {
                    self.keys(&mut v);
                    *s = v.to_string();
                }
            }
            Some(v) => self.keys(v),
            None => {}
        }
    }
}

/// `bytes` with its user-chosen names replaced by tokens seeded by `seed`; see the module doc.
///
/// # Errors
/// The file's format is not recognized, or it is not JSON.
pub fn obfuscate(bytes: &[u8], seed: u64) -> Result<Obfuscated, FormatError> {
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    let format = detect(bytes)?;
    let mut r = Renamer {
        seed,
        names: BTreeMap::new(),
    };
    let out = match format {
        Format::Otlp => each_json(bytes, |v| otlp(&mut r, v))?,
        Format::Langfuse => each_json(bytes, |v| langfuse(&mut r, v))?,
        Format::Smartcomment => each_json(bytes, |v| smartcomment(&mut r, v))?,
    };
    Ok(Obfuscated {
        bytes: out,
        format: Some(format),
        names: r.names,
    })
}

/// Applies `f` to the whole file as one JSON value, else to each non-empty line (JSON Lines).
fn each_json(bytes: &[u8], mut f: impl FnMut(&mut Value)) -> Result<Vec<u8>, FormatError> {
    let json_err = |e: serde_json::Error, line: usize| FormatError::Json {
        line: if line == 0 { e.line() } else { line },
        column: e.column(),
        message: e.to_string(),
    };
    if let Ok(mut v) = serde_json::from_slice::<Value>(bytes) {
        f(&mut v);
        return serde_json::to_vec(&v).map_err(|e| json_err(e, 0));
    }
    let mut out = Vec::with_capacity(bytes.len());
    for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let mut v: Value = serde_json::from_slice(line).map_err(|e| json_err(e, i + 1))?;
        f(&mut v);
        out.extend(serde_json::to_vec(&v).map_err(|e| json_err(e, i + 1))?);
        out.push(b'\n');
    }
    Ok(out)
}

fn is_convention(key: &str) -> bool {
    KEPT_KEYS.contains(&key) || CONVENTION_PREFIXES.iter().any(|p| key.starts_with(p))
}

/// OTLP attributes (`[{key, value}]`): user keys renamed, `metadata` keys renamed, the service
/// name renamed.
fn otlp_attributes(r: &mut Renamer, attrs: Option<&mut Value>) {
    for kv in attrs.and_then(Value::as_array_mut).into_iter().flatten() {
        let Some(o) = kv.as_object_mut() else {
            continue;
        };
        let key = o
            .get("key")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        if key == "metadata" {
            if let Some(v) = o.get_mut("value").and_then(Value::as_object_mut) {
                r.metadata(v, "stringValue");
            }
        } else if key == "service.name" {
            if let Some(v) = o.get_mut("value").and_then(Value::as_object_mut) {
                r.field(v, "stringValue");
            }
        } else if !is_convention(&key) {
            o.insert("key".into(), Value::String(r.tok(&key)));
        }
    }
}

fn otlp(r: &mut Renamer, v: &mut Value) {
    let Some(resources) = v.get_mut("resourceSpans").and_then(Value::as_array_mut) else {
        return;
    };
    for rs in resources {
        otlp_attributes(r, rs.pointer_mut("/resource/attributes"));
        let scopes = rs.get_mut("scopeSpans").and_then(Value::as_array_mut);
        for ss in scopes.into_iter().flatten() {
            let spans = ss.get_mut("spans").and_then(Value::as_array_mut);
            for span in spans.into_iter().flatten() {
                let Some(o) = span.as_object_mut() else {
                    continue;
                };
                r.field(o, "name");
                otlp_attributes(r, o.get_mut("attributes"));
                let events = o.get_mut("events").and_then(Value::as_array_mut);
                for ev in events.into_iter().flatten() {
                    let Some(e) = ev.as_object_mut() else {
                        continue;
                    };
                    let name = e.get("name").and_then(Value::as_str).unwrap_or_default();
                    if !is_convention(name) {
                        r.field(e, "name");
                    }
                    otlp_attributes(r, e.get_mut("attributes"));
                }
            }
        }
    }
}

/// A Langfuse export: a trace, a list of traces, or `{"data": [...]}`.
fn langfuse(r: &mut Renamer, v: &mut Value) {
    match v {
        Value::Array(a) => a.iter_mut().for_each(|x| langfuse(r, x)),
        Value::Object(o) if o.get("data").is_some_and(Value::is_array) => {
            if let Some(d) = o.get_mut("data") {
                langfuse(r, d);
            }
        }
        Value::Object(o) => {
            langfuse_record(r, o);
            for key in ["observations", "scores"] {
                let list = o.get_mut(key).and_then(Value::as_array_mut);
                for x in list.into_iter().flatten().filter_map(Value::as_object_mut) {
                    langfuse_record(r, x);
                }
            }
        }
        _ => {}
    }
}

fn langfuse_record(r: &mut Renamer, o: &mut Map<String, Value>) {
    r.field(o, "name");
    r.metadata(o, "metadata");
    if let Some(tags) = o.get_mut("tags").and_then(Value::as_array_mut) {
        for t in tags.iter_mut() {
            if let Value::String(s) = t {
                *s = r.tok(s);
            }
        }
    }
}

/// A smartcomment file: names, classes, categories, comments, metadata keys and file names of
/// every record; variable ids rebuilt from the renamed names and mapped everywhere they occur.
fn smartcomment(r: &mut Renamer, v: &mut Value) {
    let Some(root) = v.as_object_mut() else {
        return;
    };
    r.metadata(root, "metadata");
    r.field(root, "storage_path");
    let Some(data) = root.get_mut("data").and_then(Value::as_object_mut) else {
        return;
    };
    let mut ids: BTreeMap<String, String> = BTreeMap::new();
    for n in list(data, "nodes") {
        common(r, n);
        r.field(n, "name");
        r.field(n, "class_name");
        let name = n.get("name").and_then(Value::as_str).unwrap_or_default();
        let version = n.get("version").map(Value::to_string).unwrap_or_default();
        let full_name = match n.get("class_name").and_then(Value::as_str) {
            Some(c) => format!("{c}:{name}"),
            None => name.to_owned(),
        };
        let (node_id, full_id) = (
            format!("{name}@{version}"),
            format!("{full_name}@{version}"),
        );
        if let Some(Value::String(old)) = n.get("full_node_id") {
            ids.insert(old.clone(), full_id.clone());
        }
        for (k, x) in [
            ("node_id", node_id),
            ("full_node_id", full_id),
            ("full_name", full_name),
        ] {
            if n.contains_key(k) {
                n.insert(k.into(), Value::String(x));
            }
        }
    }
    for o in list(data, "operations") {
        common(r, o);
        r.field(o, "op_name");
    }
    for s in list(data, "sessions") {
        common(r, s);
        r.field(s, "session_name");
    }
    let map = |s: &mut Value| {
        if let Some(new) = s.as_str().and_then(|x| ids.get(x)) {
            *s = Value::String(new.clone());
        }
    };
    for e in list(data, "edges") {
        common(r, e);
        for k in ["source_full_node_id", "target_full_node_id"] {
            if let Some(x) = e.get_mut(k) {
                map(x);
            }
        }
    }
    for a in list(data, "annotations") {
        for k in ["query_id", "prediction_id", "golden_answers_id"] {
            if let Some(x) = a.get_mut(k) {
                map(x);
            }
        }
        let ev = a
            .get_mut("source_evidence_ids")
            .and_then(Value::as_array_mut);
        ev.into_iter().flatten().for_each(map);
    }
}

fn list<'a>(
    data: &'a mut Map<String, Value>,
    key: &str,
) -> impl Iterator<Item = &'a mut Map<String, Value>> {
    data.get_mut(key)
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
}

/// Fields every smartcomment record has: category, comment, metadata, file name.
fn common(r: &mut Renamer, o: &mut Map<String, Value>) {
    if o.get("category").and_then(Value::as_str) != Some("sentinel") {
        r.field(o, "category");
    }
    r.field(o, "comment");
    r.metadata(o, "metadata");
    r.field(o, "filename");
    if let Some(Value::String(tp)) = o.get("trigger_point") {
        let tp = match tp.rsplit_once(':') {
            Some((file, line)) => format!("{}:{line}", r.tok(file)),
            None => r.tok(tp),
        };
        o.insert("trigger_point".into(), Value::String(tp));
    }
}
