//! Chat messages in OTLP attributes: OpenInference's flat `llm.input_messages.{i}.message.*`
//! (with `message.tool_calls.{j}.tool_call.function.name|arguments`), the older
//! `gen_ai.prompt.{i}.*`, and the GenAI JSON lists `gen_ai.input.messages` /
//! `gen_ai.output.messages` (parts `text`, `tool_call`, `tool_call_response`).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::spans::{self, json_in};
use crate::text::text_of;

/// `prefix{i}.rest` attributes grouped by `i`.
pub(crate) fn indexed(
    attrs: &Map<String, Value>,
    prefix: &str,
) -> BTreeMap<usize, Map<String, Value>> {
    let mut out: BTreeMap<usize, Map<String, Value>> = BTreeMap::new();
    for (k, v) in attrs {
        let Some(rest) = k.strip_prefix(prefix) else {
            continue;
        };
        let Some((i, field)) = rest.split_once('.') else {
            continue;
        };
        if let Ok(i) = i.parse::<usize>() {
            out.entry(i)
                .or_default()
                .insert(field.to_owned(), v.clone());
        }
    }
    out
}

/// Chat messages from flattened attributes (`llm.input_messages.{i}.message.role|content`,
/// `gen_ai.prompt.{i}.role|content`) or a JSON attribute (`gen_ai.input.messages`).
pub(crate) fn messages(
    attrs: &Map<String, Value>,
    flat: &[(&str, &str)],
    json_key: &str,
) -> Vec<(String, String)> {
    for (prefix, field) in flat {
        let groups = indexed(attrs, prefix);
        if groups.is_empty() {
            continue;
        }
        return groups
            .values()
            .flat_map(|m| {
                let role = m
                    .get(&format!("{field}role"))
                    .map(text_of)
                    .unwrap_or_default();
                let content = m
                    .get(&format!("{field}content"))
                    .map(text_of)
                    .filter(|c| !c.is_empty())
                    .unwrap_or_else(|| {
                        // `message.contents.{j}.message_content.text`
                        let parts: Vec<String> = m
                            .iter()
                            .filter(|(k, _)| k.rsplit('.').next() == Some("text"))
                            .map(|(_, v)| text_of(v))
                            .collect();
                        parts.join("\n")
                    });
                with_tool_calls(content, &indexed(m, &format!("{field}tool_calls.")))
                    .into_iter()
                    .map(move |text| (role.clone(), text))
            })
            .collect();
    }
    let Some(v) = attrs.get(json_key) else {
        return Vec::new();
    };
    let parsed = match v {
        Value::String(s) => json_in(s).unwrap_or(Value::Null),
        other => other.clone(),
    };
    spans::messages_in(&parsed).unwrap_or_default()
}

/// A message's text, then each of its tool calls as a text of its own
/// (`{"tool_call": name, "arguments": {...}}`, [`spans::tool_call_text`]): each call is a value
/// the model made, which the tool span that ran it reads. `{content: null, tool_calls}` replies
/// are the calls alone.
fn with_tool_calls(content: String, calls: &BTreeMap<usize, Map<String, Value>>) -> Vec<String> {
    let mut out: Vec<String> = Some(content)
        .filter(|c| !c.is_empty())
        .into_iter()
        .collect();
    for call in calls.values() {
        let get = |k: &str| call.get(&format!("tool_call.function.{k}"));
        if let Some(name) = get("name") {
            out.push(spans::tool_call_text(name, get("arguments")));
        }
    }
    if out.is_empty() {
        out.push(String::new());
    }
    out
}
