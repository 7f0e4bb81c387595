//! Small readers of JSON values.

use serde_json::Value;

/// The strings of a JSON array, in order (other items skipped); empty when `v` is not an array.
///
/// # Example
/// ```
/// let v = serde_json::json!(["a", 1, "b"]);
/// assert_eq!(memtrace::util::json::str_list(&v), ["a", "b"]);
/// ```
pub fn str_list(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}
