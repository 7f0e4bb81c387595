//! Ground truth kept beside a trace: `<name>.annotations.json` holds MemTraceBench
//! annotations (`{"annotations": [...]}` or a bare list) whose ids name what the import of the
//! trace produces (`op-<spanId>` ops, imported variable ids). Span-based formats have no
//! place for annotations, so benchmark files in those formats carry them this way.

use serde_json::Value;

use super::FormatError;
use crate::model::{AnnotationRecord, Trace};

/// The sidecar path's file name for a trace file name: `x.jsonl` → `x.annotations.json`.
pub fn sidecar_name(trace_file: &str) -> String {
    let stem = trace_file
        .rsplit_once('.')
        .map_or(trace_file, |(stem, _)| stem);
    format!("{stem}.annotations.json")
}

/// True for a sidecar file name (so folder listings can skip it as a trace).
pub fn is_sidecar(file_name: &str) -> bool {
    file_name.ends_with(".annotations.json")
}

/// Reads a sidecar and attaches its annotations to `trace`, replacing any it had; the failure
/// cases are found again. Returns how many annotations it attached.
///
/// # Errors
/// [`FormatError::Field`] for text that is not JSON or not annotation records;
/// [`FormatError::Dangling`] when an annotation names a variable or op the trace lacks.
pub fn attach(trace: &mut Trace, bytes: &[u8]) -> Result<usize, FormatError> {
    let v: Value = serde_json::from_slice(bytes).map_err(|e| FormatError::Field {
        path: "sidecar".into(),
        message: format!("the annotations sidecar is not JSON: {e}"),
    })?;
    let list = match v {
        Value::Array(items) => items,
        Value::Object(mut o) => match o.remove("annotations") {
            Some(Value::Array(items)) => items,
            _ => {
                return Err(FormatError::Field {
                    path: "sidecar.annotations".into(),
                    message: "expected a list of annotations under `annotations`".into(),
                })
            }
        },
        _ => {
            return Err(FormatError::Field {
                path: "sidecar".into(),
                message: "expected a list of annotations, or an object with `annotations`".into(),
            })
        }
    };
    let mut records = Vec::with_capacity(list.len());
    for (i, item) in list.into_iter().enumerate() {
        let r: AnnotationRecord = serde_json::from_value(item).map_err(|e| FormatError::Field {
            path: format!("sidecar.annotations[{i}]"),
            message: format!("not a MemTraceBench annotation: {e}"),
        })?;
        records.push(r);
    }
    let n = records.len();
    trace.annotations = Some(records);
    trace.reindex()?;
    Ok(n)
}
