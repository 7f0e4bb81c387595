//! Tool calls written in a reply's text. Servers whose chat template has no tool support (a
//! small model behind llama.cpp, a template that ignores `tools`) answer with the call as JSON in
//! the message text instead of `tool_calls`: `{"name": …, "arguments": {…}}`, wrapped as
//! `{"tool_call": …}`, `{"function": …}` or a list, often inside a code fence or prose. Only calls
//! naming an offered tool count, so a verdict or any other JSON is never taken for one.

use serde_json::Value;

use super::{ToolCall, ToolSpec};

/// Text scanned for JSON at most (a model's reply is far shorter; this bounds the work).
pub const MAX_SCAN_CHARS: usize = 64 * 1024;

/// Every top-level JSON object or array in `text`, in order (prose, code fences and anything
/// between them skipped).
///
/// # Complexity
/// O(n²) in the worst case of many unbalanced braces, n ≤ [`MAX_SCAN_CHARS`].
pub fn json_values(text: &str) -> Vec<Value> {
    let end = text
        .char_indices()
        .nth(MAX_SCAN_CHARS)
        .map_or(text.len(), |(i, _)| i);
    let text = text.get(..end).unwrap_or(text);
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(off) = text.get(at..).and_then(|t| t.find(['{', '['])) {
        let start = at + off;
        let rest = text.get(start..).unwrap_or("");
        let mut stream = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
        match stream.next() {
            Some(Ok(v)) => {
                out.push(v);
                at = start + stream.byte_offset().max(1);
            }
            _ => at = start + 1,
        }
    }
    out
}

/// The first JSON object in `text` (models wrap JSON in prose or code fences).
pub fn first_object(text: &str) -> Option<Value> {
    json_values(text).into_iter().find(Value::is_object)
}

/// The calls of offered tools written as JSON in `text`, ids `text_call_<i>`. Arguments given
/// as an object are kept as its JSON text; given as a string, as written.
pub fn tool_calls_in_text(text: &str, tools: &[ToolSpec]) -> Vec<ToolCall> {
    let mut found = Vec::new();
    for v in json_values(text) {
        collect(&v, tools, &mut found, 0);
    }
    found
        .into_iter()
        .enumerate()
        .map(|(i, (name, arguments))| ToolCall {
            id: format!("text_call_{i}"),
            name,
            arguments,
        })
        .collect()
}

/// Wrappers followed at most this deep (`{"tool_calls": [{"function": {…}}]}` is 3).
const MAX_DEPTH: usize = 4;

fn collect(v: &Value, tools: &[ToolSpec], out: &mut Vec<(String, String)>, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    match v {
        Value::Array(items) => {
            for item in items {
                collect(item, tools, out, depth + 1);
            }
        }
        Value::Object(map) => {
            if let Some(call) = as_call(map, tools) {
                out.push(call);
                return;
            }
            for key in [
                "tool_calls",
                "tool_call",
                "function_call",
                "function",
                "call",
            ] {
                if let Some(inner) = map.get(key) {
                    collect(inner, tools, out, depth + 1);
                }
            }
        }
        _ => {}
    }
}

/// `{"name": tool, "arguments" | "parameters" | "args" | "input": …}` naming an offered tool.
fn as_call(map: &serde_json::Map<String, Value>, tools: &[ToolSpec]) -> Option<(String, String)> {
    let name = map.get("name").and_then(Value::as_str)?;
    if !tools.iter().any(|t| t.name == name) {
        return None;
    }
    let args = ["arguments", "parameters", "args", "input"]
        .iter()
        .find_map(|k| map.get(*k));
    let arguments = match args {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    };
    Some((name.to_owned(), arguments))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tools() -> Vec<ToolSpec> {
        ["view_operation", "final_answer"]
            .into_iter()
            .map(|n| ToolSpec {
                name: n.into(),
                description: String::new(),
                parameters: json!({"type": "object"}),
            })
            .collect()
    }

    #[test]
    fn finds_values_between_prose_and_fences() {
        let v = json_values("see {\"a\": 1} and ```json\n[2, {\"b\": {}}]\n``` then {broken");
        assert_eq!(v, vec![json!({"a": 1}), json!([2, {"b": {}}])]);
        assert_eq!(
            first_object("x [1] {\"k\": true}"),
            Some(json!({"k": true}))
        );
        assert!(json_values("no json at all }{").is_empty());
    }

    #[test]
    fn reads_each_wrapper_and_argument_form() {
        let text = r#"{"name": "view_operation", "arguments": {"op_id": "op-1"}}
            {"tool_call": {"name": "final_answer", "arguments": "{\"op_id\": \"op-2\"}"}}
            [{"type": "function", "function": {"name": "view_operation", "parameters": {"op_id": "op-3"}}}]
            {"name": "not_a_tool", "arguments": {}} {"error_type": "RetrievalError"}"#;
        let calls = tool_calls_in_text(text, &tools());
        let got: Vec<(&str, &str, &str)> = calls
            .iter()
            .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("text_call_0", "view_operation", r#"{"op_id":"op-1"}"#),
                ("text_call_1", "final_answer", r#"{"op_id": "op-2"}"#),
                ("text_call_2", "view_operation", r#"{"op_id":"op-3"}"#),
            ]
        );
    }

    #[test]
    fn a_call_without_arguments_has_empty_ones() {
        let calls = tool_calls_in_text(r#"{"name": "final_answer"}"#, &tools());
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].arguments, "");
        assert!(tool_calls_in_text(r#"{"name": "final_answer"}"#, &[]).is_empty());
    }
}
