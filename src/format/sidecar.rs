//! Ground truth kept beside a trace: `<name>.annotations.json` holds MemTraceBench
//! annotations (`{"annotations": [...]}` or a bare list) whose ids name what the import of the
//! trace produces (`op-<spanId>` ops, imported variable ids). Span-based formats have no
//! place for annotations, so benchmark files in those formats carry them this way.

use serde_json::Value;

use super::FormatError;
use crate::model::{AnnotationRecord, Trace};

/// Compression suffixes a trace file name may end with (the loader decompresses the content).
const COMPRESSED: [&str; 2] = [".gz", ".zst"];

/// The file name without one compression suffix: `x.jsonl.gz` → `x.jsonl`.
fn uncompressed_name(file_name: &str) -> &str {
    COMPRESSED
        .iter()
        .find_map(|s| file_name.strip_suffix(s).filter(|n| !n.is_empty()))
        .unwrap_or(file_name)
}

/// The sidecar path's file name for a trace file name: `x.jsonl` → `x.annotations.json`, and
/// a compressed trace keeps a plain sidecar: `x.jsonl.gz` → `x.annotations.json`.
pub fn sidecar_name(trace_file: &str) -> String {
    let name = uncompressed_name(trace_file);
    let stem = name.rsplit_once('.').map_or(name, |(stem, _)| stem);
    format!("{stem}.annotations.json")
}

/// The extension of a trace file name once a compression suffix is set aside, lowercased:
/// `x.jsonl.gz` → `jsonl`, `x.JSON` → `json`, `x` → none.
pub fn trace_extension(file_name: &str) -> Option<String> {
    let lower = file_name.to_ascii_lowercase();
    let name = uncompressed_name(&lower);
    name.rsplit_once('.').map(|(_, ext)| ext.to_owned())
}

/// True for a sidecar file name (so folder listings can skip it as a trace).
pub fn is_sidecar(file_name: &str) -> bool {
    file_name.ends_with(".annotations.json")
}

/// True when `bytes` look like an annotation file (a sidecar, or the page's export) rather than
/// a trace (checked on the first 4 KiB only).
pub fn is_annotation_file(bytes: &[u8]) -> bool {
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(4096)]);
    let head = head.trim_start_matches('\u{feff}').trim_start();
    (head.starts_with('[') || head.starts_with('{'))
        && head.contains("\"query_id\"")
        && head.contains("\"final_error_type\"")
        && !head.contains("\"nodes\"")
}

/// Reads the annotation records of a sidecar or of an annotation file the page exported: a
/// list, or an object with an `annotations` list.
///
/// # Errors
/// [`FormatError::Json`] (line, column) for text that is not JSON; [`FormatError::Field`] for
/// JSON that is not annotation records.
pub fn parse(bytes: &[u8]) -> Result<Vec<AnnotationRecord>, FormatError> {
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    let v: Value = serde_json::from_slice(bytes).map_err(|e| super::error::from_json(&e))?;
    let list = match v {
        Value::Array(items) => items,
        Value::Object(mut o) => match o.remove("annotations") {
            Some(Value::Array(items)) => items,
            _ => {
                return Err(FormatError::Field {
                    path: "annotations".into(),
                    message: "expected a list of annotations under `annotations`".into(),
                })
            }
        },
        _ => {
            return Err(FormatError::Field {
                path: "annotations".into(),
                message: "expected a list of annotations (objects with `query_id`, \
                          `final_error_type`, `final_op_id`), or an object with `annotations`"
                    .into(),
            })
        }
    };
    let mut records = Vec::with_capacity(list.len());
    for (i, item) in list.into_iter().enumerate() {
        let r: AnnotationRecord = serde_json::from_value(item).map_err(|e| FormatError::Field {
            path: format!("annotations[{i}]"),
            message: format!("not a MemTraceBench annotation: {e}"),
        })?;
        records.push(r);
    }
    Ok(records)
}

/// Reads a sidecar and attaches its annotations to `trace`, replacing any it had; the failure
/// cases are found again. Returns how many annotations it attached.
///
/// # Errors
/// As [`parse`]; [`FormatError::Dangling`] when an annotation names a variable or op the trace
/// lacks.
pub fn attach(trace: &mut Trace, bytes: &[u8]) -> Result<usize, FormatError> {
    let records = parse(bytes)?;
    let n = records.len();
    trace.annotations = Some(records);
    trace.reindex()?;
    Ok(n)
}

/// Merges `records` into `trace`'s annotations (one for a query already annotated replaces it)
/// and finds the failure cases again.
///
/// # Errors
/// [`FormatError::Dangling`] (with the annotation's path) when a record names a variable or op
/// the trace lacks; `trace` is left unchanged then.
pub fn merge(trace: &mut Trace, records: Vec<AnnotationRecord>) -> Result<(), FormatError> {
    *trace = merged(trace, records)?;
    Ok(())
}

/// As [`merge`], into a copy of `trace` (the one copy the merge needs).
///
/// # Errors
/// As [`merge`].
pub fn merged(trace: &Trace, records: Vec<AnnotationRecord>) -> Result<Trace, FormatError> {
    let mut t = trace.clone();
    let list = t.annotations.get_or_insert_with(Vec::new);
    for r in records {
        if let Some(old) = list.iter_mut().find(|o| o.query_id == r.query_id) {
            *old = r;
        } else {
            list.push(r);
        }
    }
    t.reindex()?;
    Ok(t)
}

/// Whether every record's question is in `trace` (so the file belongs to it).
pub fn fits(trace: &Trace, records: &[AnnotationRecord]) -> bool {
    records
        .iter()
        .all(|r| trace.var_by_id(&r.query_id).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_compressed_trace_keeps_a_plain_sidecar() {
        assert_eq!(sidecar_name("26.jsonl"), "26.annotations.json");
        assert_eq!(sidecar_name("26.jsonl.gz"), "26.annotations.json");
        assert_eq!(sidecar_name("run.json.zst"), "run.annotations.json");
        assert_eq!(sidecar_name("trace"), "trace.annotations.json");
        assert_eq!(sidecar_name(".gz"), ".annotations.json");
        assert_eq!(trace_extension("26.jsonl.gz").as_deref(), Some("jsonl"));
        assert_eq!(trace_extension("A.JSON").as_deref(), Some("json"));
        assert_eq!(trace_extension("26.pb.gz").as_deref(), Some("pb"));
        assert_eq!(trace_extension("trace"), None);
        assert!(is_sidecar(&sidecar_name("26.jsonl.gz")));
    }
}
