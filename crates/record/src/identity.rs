//! smartcomment's content identity and value text, as Python would write them:
//! `<type qualname>:<sha1 of json.dumps(value, sort_keys=True)>` and `repr(value)`.

use std::fmt::Write as _;

use serde_json::Value;
use sha1::{Digest, Sha1};

/// The Python type name of a JSON value (`str`, `int`, `float`, `bool`, `NoneType`, `list`, `dict`).
pub fn py_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "NoneType",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

/// smartcomment's default identity of an unnamed value.
///
/// # Example
/// ```
/// use memtrace_record::content_id;
/// let id = content_id(&serde_json::json!("The user likes graph visualization."));
/// assert_eq!(id, "str:a49c76c7ab6fc8aad410da8adf158826a62ffe1b");
/// ```
///
/// # Complexity
/// O(size of the value).
pub fn content_id(v: &Value) -> String {
    format!("{}:{}", py_type(v), sha1_hex(py_json_dumps(v).as_bytes()))
}

/// Lower-case hex SHA-1 of bytes.
pub fn sha1_hex(bytes: &[u8]) -> String {
    let digest = Sha1::digest(bytes);
    let mut s = String::with_capacity(40);
    for b in digest {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// `json.dumps(v, sort_keys=True)` with Python's defaults: `", "` and `": "` separators and
/// ASCII escaping (`ensure_ascii=True`).
pub fn py_json_dumps(v: &Value) -> String {
    let mut out = String::new();
    dumps_into(v, &mut out);
    out
}

fn dumps_into(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&py_number(n)),
        Value::String(s) => json_str(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                dumps_into(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                json_str(k, out);
                out.push_str(": ");
                if let Some(item) = map.get(k) {
                    dumps_into(item, out);
                }
            }
            out.push('}');
        }
    }
}

fn py_number(n: &serde_json::Number) -> String {
    match n.as_f64() {
        Some(f) if n.is_f64() => py_float(f),
        _ => n.to_string(),
    }
}

/// Python's `repr(float)` for the usual range: integral values keep a `.0`.
fn py_float(f: f64) -> String {
    if f.is_finite() && f.fract() == 0.0 && f.abs() < 1e16 {
        format!("{f:.1}")
    } else {
        format!("{f}")
    }
}

fn json_str(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if c.is_ascii() && !c.is_ascii_control() => out.push(c),
            c => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{u:04x}");
                }
            }
        }
    }
    out.push('"');
}

/// Python's `repr()` of a JSON value (`'text'`, `['a', 'b']`, `{'k': 1.0, 'x': None}`).
pub fn py_repr(v: &Value) -> String {
    let mut out = String::new();
    repr_into(v, &mut out);
    out
}

fn repr_into(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("None"),
        Value::Bool(b) => out.push_str(if *b { "True" } else { "False" }),
        Value::Number(n) => out.push_str(&py_number(n)),
        Value::String(s) => out.push_str(&py_str_repr(s)),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                repr_into(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&py_str_repr(k));
                out.push_str(": ");
                repr_into(item, out);
            }
            out.push('}');
        }
    }
}

/// Python's `repr(str)`: single quotes unless the text has `'` and no `"`.
pub fn py_str_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dumps_matches_python() {
        // Values checked against CPython 3.12 `json.dumps(v, sort_keys=True)`.
        assert_eq!(
            py_json_dumps(&json!({"b": [1, 2.0], "a": "é\n"})),
            r#"{"a": "\u00e9\n", "b": [1, 2.0]}"#
        );
        assert_eq!(py_json_dumps(&json!("😀")), r#""\ud83d\ude00""#);
        assert_eq!(py_json_dumps(&json!(null)), "null");
    }

    #[test]
    fn repr_matches_python() {
        assert_eq!(py_repr(&json!("it's")), r#""it's""#);
        assert_eq!(py_repr(&json!("say \"hi\" it's")), r#"'say "hi" it\'s'"#);
        assert_eq!(
            py_repr(&json!(["a", 1, 1.0, null, true])),
            "['a', 1, 1.0, None, True]"
        );
        assert_eq!(py_repr(&json!({"k": "v"})), "{'k': 'v'}");
    }

    #[test]
    fn types() {
        assert_eq!(content_id(&json!(1.0)).split(':').next(), Some("float"));
        assert_eq!(content_id(&json!([])).split(':').next(), Some("list"));
        assert_eq!(content_id(&json!({})).split(':').next(), Some("dict"));
    }
}
