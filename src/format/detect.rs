//! Format detection from content: the keys near the top of the first JSON value decide.

use super::Format;

/// The format whose characteristic keys appear first, scanning object keys at depth ≤ 2
/// (arrays are transparent, so a list of traces and a `{"data": [...]}` wrapper count too):
/// `resourceSpans` / `resourceLogs` or a Phoenix span's `span_kind` → OTLP; `observations`,
/// `data.observations` or a flat observation's `traceId` → Langfuse; `graph_id` or
/// `data.nodes|edges|operations|sessions` → smartcomment.
///
/// # Complexity
/// O(n) in the bytes scanned; stops at the first decisive key.
pub fn by_keys(bytes: &[u8]) -> Option<Format> {
    first_key(bytes, decide)
}

/// A shape of an export that is rewritten into a format memtrace reads (`super::reshape`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Phoenix's span export: spans with `span_kind` (and `context`), read as OTLP.
    Phoenix,
    /// A Langfuse flat observation list: observations with a `traceId`, read as Langfuse.
    LangfuseFlat,
    /// A list of OTLP spans without their resource and scope (Phoenix's `/spans/otlpv1`).
    OtlpSpanList,
}

/// The reshaped export `bytes` holds, if its first decisive key says so.
pub fn shape(bytes: &[u8]) -> Option<Shape> {
    first_key(bytes, |path| match path {
        [b"span_kind"] | [b"data", b"span_kind"] => Some(Some(Shape::Phoenix)),
        [b"traceId"] | [b"data", b"traceId"] => Some(Some(Shape::LangfuseFlat)),
        [k] | [b"data", k] if is_span_time(k) => Some(Some(Shape::OtlpSpanList)),
        p => decide(p).map(|_| None),
    })
    .flatten()
}

/// The first `decide(path)` that is `Some`, for the object keys at depth ≤ 2.
fn first_key<T>(bytes: &[u8], decide: impl Fn(&[&[u8]]) -> Option<T>) -> Option<T> {
    // Per open container: is it an object, and its current key (objects only).
    let mut stack: Vec<(bool, Option<Vec<u8>>)> = Vec::new();
    let mut expecting_key = false;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let start = i + 1;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                let text = bytes.get(start..i.min(bytes.len())).unwrap_or_default();
                if let Some((true, key)) = stack.last_mut().filter(|_| expecting_key) {
                    *key = Some(text.to_vec());
                    expecting_key = false;
                    let path: Vec<&[u8]> = stack.iter().filter_map(|(_, k)| k.as_deref()).collect();
                    if let Some(f) = decide(&path) {
                        return Some(f);
                    }
                }
            }
            b'{' => {
                stack.push((true, None));
                expecting_key = true;
            }
            b'[' => {
                stack.push((false, None));
                expecting_key = false;
            }
            b'}' | b']' => {
                stack.pop();
                expecting_key = false;
            }
            b',' => expecting_key = stack.last().is_some_and(|(obj, _)| *obj),
            _ => {}
        }
        i += 1;
    }
    None
}

/// A span's time key in OTLP JSON (snake_case or lowerCamelCase).
fn is_span_time(key: &[u8]) -> bool {
    matches!(
        key,
        b"start_time_unix_nano" | b"end_time_unix_nano" | b"startTimeUnixNano" | b"endTimeUnixNano"
    )
}

fn decide(path: &[&[u8]]) -> Option<Format> {
    match path {
        [b"resourceSpans" | b"resource_spans" | b"resourceLogs" | b"resource_logs"
        | b"span_kind"]
        | [b"data", b"span_kind"] => Some(Format::Otlp),
        [k] | [b"data", k] if is_span_time(k) => Some(Format::Otlp),
        [b"traceId" | b"observations"] | [b"data", b"traceId" | b"observations"] => {
            Some(Format::Langfuse)
        }
        [b"graph_id"] | [b"data", b"nodes" | b"edges" | b"operations" | b"sessions"] => {
            Some(Format::Smartcomment)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_decide_and_nested_values_do_not() {
        assert_eq!(by_keys(br#"{"resourceSpans": []}"#), Some(Format::Otlp));
        assert_eq!(
            by_keys(br#"{"id": "t", "input": {"data": {"nodes": 1}}, "observations": []}"#),
            Some(Format::Langfuse)
        );
        assert_eq!(
            by_keys(br#"{"data": [{"id": "t", "observations": []}]}"#),
            Some(Format::Langfuse)
        );
        assert_eq!(
            by_keys(br#"[{"observations": []}]"#),
            Some(Format::Langfuse)
        );
        assert_eq!(
            by_keys(br#"{"user_id": "u", "data": {"nodes": []}}"#),
            Some(Format::Smartcomment)
        );
        assert_eq!(
            by_keys(br#"{"note": "\"graph_id\": 1", "x": {"graph_id": 2}}"#),
            None
        );
        let phoenix = br#"{"data": [{"name": "s", "span_kind": "LLM", "context": {}}]}"#;
        assert_eq!(by_keys(phoenix), Some(Format::Otlp));
        assert_eq!(shape(phoenix), Some(Shape::Phoenix));
        let flat = br#"{"data": [{"id": "o", "traceId": "t", "type": "SPAN"}]}"#;
        assert_eq!(by_keys(flat), Some(Format::Langfuse));
        assert_eq!(shape(flat), Some(Shape::LangfuseFlat));
        let spans = br#"{"data": [{"attributes": [], "end_time_unix_nano": 2, "span_id": "a"}]}"#;
        assert_eq!(by_keys(spans), Some(Format::Otlp));
        assert_eq!(shape(spans), Some(Shape::OtlpSpanList));
        let trace = br#"[{"id": "t", "scores": [{"traceId": "t"}], "observations": []}]"#;
        assert_eq!(by_keys(trace), Some(Format::Langfuse));
        assert_eq!(shape(trace), None);
    }
}
