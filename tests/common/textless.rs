//! Roles from what values are (issue #62): an op that wrote only vectors or numbers lost no text.

use memtrace::model::Trace;

/// A value with no words: a number, or a list of them (an embedding).
fn numeric(v: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::Number(_) => true,
        serde_json::Value::Array(xs) => !xs.is_empty() && xs.iter().all(numeric),
        _ => false,
    }
}

/// An op whose outputs are all vectors or numbers (or an embedding call that recorded none) lost
/// no text: it is never the Extraction, Update or Deletion error.
pub fn not_blamed(t: &Trace, a: &memtrace::attribution::Attribution, at: &str) {
    use memtrace::model::ErrorType::{DeletionError, ExtractionError, UpdateError};
    if !matches!(a.error_type, ExtractionError | UpdateError | DeletionError) {
        return;
    }
    let o = t.op_by_id(&a.op_id).expect("the blamed op is in the trace");
    let outs: Vec<serde_json::Value> = t
        .flow
        .op_produced(o)
        .map(|v| serde_json::from_str(&t.var(v).value).unwrap_or(serde_json::Value::Null))
        .collect();
    let textless = if outs.is_empty() {
        t.op(o).category == "embedding"
    } else {
        outs.iter().all(numeric)
    };
    assert!(
        !textless,
        "{at}: {} blamed as {:?}, but it wrote only vectors or numbers",
        a.op_name, a.error_type
    );
}
