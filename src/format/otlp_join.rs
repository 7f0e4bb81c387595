//! OTLP traces and logs exported to separate files (the SDK's span and log exporters each POST
//! their own request) and opened together: a file of log records only is joined to the traces
//! file whose spans its records name, as one JSON Lines file (traces, then logs) that
//! [`super::load`] reads whole. What does not pair stays as it was.

use std::collections::HashSet;

use serde_json::Value;

use super::otlp_value::hex_id;
use super::{body, limits};

/// A file's name and bytes.
pub type NamedFile = (String, Vec<u8>);

/// The span ids (lowercase hex) of `doc`'s spans (`want` = "spans") or named by its log records
/// (`want` = "logs").
fn span_ids(doc: &Value, logs: bool) -> HashSet<String> {
    let (res, scope, items) = if logs {
        (
            ["resourceLogs", "resource_logs"],
            ["scopeLogs", "scope_logs"],
            ["logRecords", "log_records"],
        )
    } else {
        (
            ["resourceSpans", "resource_spans"],
            ["scopeSpans", "scope_spans"],
            ["spans", "spans"],
        )
    };
    let list = |v: &Value, keys: [&str; 2]| -> Vec<Value> {
        keys.iter()
            .find_map(|k| v.get(*k).and_then(Value::as_array).cloned())
            .unwrap_or_default()
    };
    let mut out = HashSet::new();
    for r in list(doc, res) {
        for s in list(&r, scope) {
            for item in list(&s, items) {
                let id = item.get("spanId").or_else(|| item.get("span_id"));
                if let Some(id) = id.and_then(Value::as_str).filter(|i| !i.is_empty()) {
                    out.insert(hex_id(id.to_owned()).to_ascii_lowercase());
                }
            }
        }
    }
    out
}

/// The file's OTLP documents (one per JSON Lines line), when it is OTLP JSON or protobuf.
fn documents(bytes: &[u8]) -> Option<Vec<Value>> {
    let (text, _) = body::decode(bytes, limits::MAX_FILE_BYTES).ok()?;
    if let Ok(doc) = serde_json::from_slice::<Value>(&text) {
        return Some(vec![doc]);
    }
    text.split(|&b| b == b'\n')
        .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
        .map(|l| serde_json::from_slice(l).ok())
        .collect()
}

fn mentions_logs(bytes: &[u8]) -> bool {
    let has = |needle: &[u8]| memchr::memmem::find(bytes, needle).is_some();
    has(b"resourceLogs") || has(b"resource_logs")
}

fn logs_only(docs: &[Value]) -> bool {
    docs.iter().all(|d| span_ids(d, false).is_empty())
        && docs.iter().any(|d| !span_ids(d, true).is_empty())
}

/// Joins each file of OTLP log records only to the OTLP traces file of `files` whose spans its
/// records name (the first, when several do); the joined file keeps the traces file's name
/// (without a compression ending) and place, the logs file is gone. Files that pair with nothing
/// come back unchanged, in order.
#[must_use]
pub fn join_logs_to_traces(files: Vec<NamedFile>) -> Vec<NamedFile> {
    if files.len() < 2 {
        // Nothing to join a logs file to (a logs file alone is refused where it is read).
        return files;
    }
    // Only files that look like logs (protobuf, or JSON naming resourceLogs) are parsed first.
    let looks_like_logs = |b: &[u8]| {
        body::decompressed(b, limits::MAX_FILE_BYTES).is_ok_and(|p| {
            let first = p.iter().find(|c| !c.is_ascii_whitespace());
            first.is_some_and(|c| *c != b'{' && *c != b'[') || mentions_logs(&p)
        })
    };
    let mut docs: Vec<Option<Vec<Value>>> = files
        .iter()
        .map(|(_, b)| looks_like_logs(b).then(|| documents(b).unwrap_or_default()))
        .collect();
    if !docs.iter().flatten().any(|d| logs_only(d)) {
        return files;
    }
    // A logs file is here: the other files are read for the spans they hold.
    let docs: Vec<Vec<Value>> = docs
        .iter_mut()
        .zip(&files)
        .map(|(d, (_, b))| d.take().unwrap_or_else(|| documents(b).unwrap_or_default()))
        .collect();
    let mut extra: Vec<Vec<Value>> = vec![Vec::new(); files.len()];
    let mut gone = vec![false; files.len()];
    for (l, d) in docs.iter().enumerate().filter(|(_, d)| logs_only(d)) {
        let named: HashSet<String> = d.iter().flat_map(|x| span_ids(x, true)).collect();
        let traces = (0..files.len()).find(|&t| {
            t != l
                && !logs_only(&docs[t])
                && docs[t]
                    .iter()
                    .any(|x| !span_ids(x, false).is_disjoint(&named))
        });
        if let Some(t) = traces {
            extra[t].extend(d.iter().cloned());
            gone[l] = true;
        }
    }
    files
        .into_iter()
        .zip(docs)
        .zip(extra)
        .zip(gone)
        .filter(|(_, gone)| !gone)
        .map(|((((name, bytes), docs), extra), _)| {
            if extra.is_empty() {
                return (name, bytes);
            }
            let lines: String = docs
                .iter()
                .chain(&extra)
                .map(|d| d.to_string() + "\n")
                .collect();
            (super::plain_name(&name).to_owned(), lines.into_bytes())
        })
        .collect()
}
