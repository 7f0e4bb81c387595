//! Format detection from content: the keys near the top of the first JSON value decide.

use super::Format;

/// The format whose characteristic keys appear first, scanning object keys at depth ≤ 2
/// (arrays are transparent, so a list of traces and a `{"data": [...]}` wrapper count too):
/// `resourceSpans` → OTLP; `observations` or `data.observations` → Langfuse; `graph_id` or
/// `data.nodes|edges|operations|sessions` → smartcomment.
///
/// # Complexity
/// O(n) in the bytes scanned; stops at the first decisive key.
pub fn by_keys(bytes: &[u8]) -> Option<Format> {
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

fn decide(path: &[&[u8]]) -> Option<Format> {
    match path {
        [b"resourceSpans" | b"resource_spans" | b"resourceLogs" | b"resource_logs"] => {
            Some(Format::Otlp)
        }
        [b"observations"] | [b"data", b"observations"] => Some(Format::Langfuse),
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
    }
}
