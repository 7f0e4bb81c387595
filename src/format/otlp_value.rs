//! OTLP `AnyValue` and attribute lists as plain JSON. Proto-JSON allows both the lowerCamelCase
//! field names (`stringValue`, `kvlistValue`) and the original snake_case ones (`string_value`,
//! `kvlist_value`); both are read. A value of a type we cannot read is an error naming its path,
//! never a silent null.

use serde_json::{Map, Value};

use super::FormatError;

/// The `AnyValue` fields, each as (lowerCamelCase, snake_case).
const SCALARS: [(&str, &str); 4] = [
    ("stringValue", "string_value"),
    ("doubleValue", "double_value"),
    ("boolValue", "bool_value"),
    ("bytesValue", "bytes_value"),
];

/// A field of an object under either casing.
fn field<'a>(o: &'a Map<String, Value>, camel: &str, snake: &str) -> Option<&'a Value> {
    o.get(camel).or_else(|| o.get(snake))
}

/// An OTLP `AnyValue` as plain JSON; `path` names it in errors.
///
/// # Errors
/// [`FormatError::Field`] for an object with none of the `AnyValue` fields (`{}` is an empty
/// value, null) or an `intValue` that is not an integer.
pub fn any_value(v: &Value, path: &str) -> Result<Value, FormatError> {
    let Some(o) = v.as_object() else {
        return Ok(v.clone());
    };
    if o.is_empty() {
        return Ok(Value::Null);
    }
    for (camel, snake) in SCALARS {
        if let Some(x) = field(o, camel, snake) {
            return Ok(x.clone());
        }
    }
    if let Some(i) = field(o, "intValue", "int_value") {
        return match i {
            Value::String(s) => s.parse::<i64>().map(Value::from).map_err(|_| bad(path, v)),
            Value::Number(_) => Ok(i.clone()),
            _ => Err(bad(path, v)),
        };
    }
    let values = |camel: &str, snake: &str| {
        field(o, camel, snake).map(|a| {
            a.as_object()
                .and_then(|a| a.get("values"))
                .map_or(&[][..], |l| l.as_array().map_or(&[][..], Vec::as_slice))
        })
    };
    if let Some(items) = values("arrayValue", "array_value") {
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            out.push(any_value(item, &format!("{path}.arrayValue.values[{i}]"))?);
        }
        return Ok(Value::Array(out));
    }
    if let Some(items) = values("kvlistValue", "kvlist_value") {
        let mut m = Map::new();
        for (i, kv) in items.iter().enumerate() {
            let at = format!("{path}.kvlistValue.values[{i}]");
            let Some(key) = kv.get("key").and_then(Value::as_str) else {
                return Err(FormatError::Field {
                    path: at,
                    message: "a key-value pair without a string `key`".into(),
                });
            };
            let value = kv.get("value").unwrap_or(&Value::Null);
            m.insert(key.to_owned(), any_value(value, &format!("{at}.value"))?);
        }
        return Ok(Value::Object(m));
    }
    Err(bad(path, v))
}

fn bad(path: &str, v: &Value) -> FormatError {
    let shown = crate::text::fit(&v.to_string(), 120);
    FormatError::Field {
        path: path.to_owned(),
        message: format!(
            "an attribute value memtrace cannot read: {shown}; expected an OTLP AnyValue \
             (stringValue, intValue, doubleValue, boolValue, bytesValue, arrayValue or \
             kvlistValue, in camelCase or snake_case)"
        ),
    }
}

/// One attribute as it appears in a JSON list.
#[derive(serde::Deserialize, Default, Debug, Clone)]
#[serde(default)]
pub struct KeyValue {
    pub key: String,
    pub value: Value,
}

/// An attribute list as a JSON object. An attribute whose value cannot be read is left out and
/// its error pushed to `bad` (`path` is the list's path).
pub fn attributes(list: &[KeyValue], path: &str, bad: &mut Vec<FormatError>) -> Map<String, Value> {
    let mut out = Map::new();
    for (i, kv) in list.iter().enumerate() {
        match any_value(&kv.value, &format!("{path}[{i}].value")) {
            Ok(v) => {
                out.insert(kv.key.clone(), v);
            }
            Err(e) => bad.push(e),
        }
    }
    out
}

/// A trace or span id as lowercase hex. OTLP JSON writes ids in hex, but protobuf's generic
/// JSON mapping (`json_format`, `JsonFormat`) writes `bytes` as base64: a 16-byte trace id is
/// 24 characters ending `==`, an 8-byte span id 12 ending `=`; those are decoded.
pub fn hex_id(id: String) -> String {
    let padded = (id.len() == 24 && id.ends_with("==")) || (id.len() == 12 && id.ends_with('='));
    if !padded {
        return id;
    }
    let digit = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' | b'-' => Some(62),
        b'/' | b'_' => Some(63),
        _ => None,
    };
    let mut bits = 0u32;
    let mut n = 0;
    let mut out = Vec::with_capacity(id.len());
    for c in id.trim_end_matches('=').bytes() {
        let Some(d) = digit(c) else {
            return id;
        };
        bits = (bits << 6) | u32::from(d);
        n += 6;
        if n >= 8 {
            n -= 8;
            out.push(((bits >> n) & 0xff) as u8);
        }
    }
    out.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .concat()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn both_casings_read_and_unknown_shapes_are_errors() {
        let camel = json!({"kvlistValue": {"values": [
            {"key": "a", "value": {"intValue": "7"}},
            {"key": "b", "value": {"arrayValue": {"values": [{"stringValue": "x"}]}}}]}});
        let snake = json!({"kvlist_value": {"values": [
            {"key": "a", "value": {"int_value": "7"}},
            {"key": "b", "value": {"array_value": {"values": [{"string_value": "x"}]}}}]}});
        let want = json!({"a": 7, "b": ["x"]});
        assert_eq!(any_value(&camel, "v").ok(), Some(want.clone()));
        assert_eq!(any_value(&snake, "v").ok(), Some(want));
        assert_eq!(any_value(&json!({}), "v").ok(), Some(Value::Null));
        let err = any_value(&json!({"stringvalue": "x"}), "spans[0].attributes[3].value");
        assert!(
            matches!(&err, Err(FormatError::Field { path, .. }) if path == "spans[0].attributes[3].value"),
            "{err:?}"
        );
        assert!(any_value(&json!({"intValue": "seven"}), "v").is_err());
        assert_eq!(hex_id("fsKPcSi6upw=".into()), "7ec28f7128baba9c");
        assert_eq!(hex_id("a6i1P3fvoJn/yT12thILwA==".into()).len(), 32);
        assert_eq!(hex_id("7ec28f7128baba9c".into()), "7ec28f7128baba9c");
    }
}
