//! Anthropic Messages: build the request, parse the reply. System messages go to the top-level
//! `system`; tool calls are `tool_use` blocks and their results `tool_result` blocks in the next
//! user turn. Structured output is a forced tool (`respond`) whose input is the answer.

use serde_json::{json, Map, Value};

use super::config::ProviderConfig;
use super::http::HttpRequest;
use super::{ChatMessage, ChatRequest, ChatResponse, ChatRole, ProviderError, ToolCall};

/// The `anthropic-version` header value.
pub const API_VERSION: &str = "2023-06-01";
/// `max_tokens` is required by the API; this is used when the request sets none.
pub const DEFAULT_MAX_TOKENS: u32 = 1024;
/// The tool that carries a structured-output answer.
pub const RESPOND_TOOL: &str = "respond";

/// Builds the HTTP request for `POST {base}/messages`.
pub fn build_chat(cfg: &ProviderConfig, req: &ChatRequest) -> HttpRequest {
    let mut body = Map::new();
    body.insert("model".into(), json!(cfg.model));
    body.insert(
        "max_tokens".into(),
        json!(req
            .max_tokens
            .or(cfg.max_tokens)
            .unwrap_or(DEFAULT_MAX_TOKENS)),
    );
    let system: Vec<&str> = req
        .messages
        .iter()
        .filter(|m| m.role == ChatRole::System)
        .map(|m| m.content.as_str())
        .collect();
    if !system.is_empty() {
        body.insert("system".into(), json!(system.join("\n\n")));
    }
    body.insert("messages".into(), Value::Array(messages(&req.messages)));
    let mut tools: Vec<Value> = req
        .tools
        .iter()
        .map(
            |t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}),
        )
        .collect();
    if let Some(schema) = &req.json_schema {
        tools.push(json!({"name": RESPOND_TOOL,
                          "description": "Give the final answer in this structure.",
                          "input_schema": schema}));
        let choice = if req.tools.is_empty() {
            json!({"type": "tool", "name": RESPOND_TOOL})
        } else {
            json!({"type": "auto"})
        };
        body.insert("tool_choice".into(), choice);
    } else if !tools.is_empty() {
        body.insert("tool_choice".into(), json!({"type": "auto"}));
    }
    if !tools.is_empty() {
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(t) = req.temperature {
        body.insert("temperature".into(), json!(t));
    }
    let mut headers = vec![
        ("content-type".to_owned(), "application/json".to_owned()),
        ("anthropic-version".to_owned(), API_VERSION.to_owned()),
        (
            "anthropic-dangerous-direct-browser-access".to_owned(),
            "true".to_owned(),
        ),
    ];
    if let Some(key) = cfg
        .api_key
        .as_ref()
        .filter(|k| !k.expose_secret().is_empty())
    {
        headers.push(("x-api-key".to_owned(), key.expose_secret().to_owned()));
    }
    HttpRequest {
        method: "POST".to_owned(),
        url: cfg.endpoint("messages"),
        headers,
        body: Value::Object(body).to_string(),
        timeout_ms: cfg.timeout_ms,
    }
}

/// User and tool messages become user turns, assistant messages assistant turns; consecutive
/// messages of one side merge into one turn, so tool results follow their `tool_use` directly.
fn messages(msgs: &[ChatMessage]) -> Vec<Value> {
    let mut turns: Vec<(&str, Vec<Value>)> = Vec::new();
    for m in msgs {
        let (role, blocks) = match m.role {
            ChatRole::System => continue,
            ChatRole::User => ("user", vec![json!({"type": "text", "text": m.content})]),
            ChatRole::Tool => (
                "user",
                vec![json!({"type": "tool_result",
                            "tool_use_id": m.tool_call_id.clone().unwrap_or_default(),
                            "content": m.content})],
            ),
            ChatRole::Assistant => {
                let mut blocks = Vec::new();
                if !m.content.is_empty() {
                    blocks.push(json!({"type": "text", "text": m.content}));
                }
                for c in &m.tool_calls {
                    // Anthropic wants an object; malformed arguments go back as an empty one.
                    let input = serde_json::from_str::<Value>(&c.arguments)
                        .ok()
                        .filter(Value::is_object)
                        .unwrap_or_else(|| json!({}));
                    blocks.push(
                        json!({"type": "tool_use", "id": c.id, "name": c.name, "input": input}),
                    );
                }
                ("assistant", blocks)
            }
        };
        match turns.last_mut() {
            Some((last, acc)) if *last == role => acc.extend(blocks),
            _ => turns.push((role, blocks)),
        }
    }
    turns
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect()
}

/// Parses a 2xx reply body. With `structured`, the input of the `respond` tool becomes the
/// reply's `content` (JSON text) instead of a tool call.
///
/// # Errors
/// [`ProviderError::BadResponse`] naming the missing or ill-typed field.
pub fn parse_chat(body: &str, structured: bool) -> Result<ChatResponse, ProviderError> {
    let v: Value = serde_json::from_str(body)
        .map_err(|e| ProviderError::BadResponse(format!("messages reply is not JSON: {e}")))?;
    let blocks = v.get("content").and_then(Value::as_array).ok_or_else(|| {
        ProviderError::BadResponse("no `content` array in the messages reply".into())
    })?;
    let mut content = String::new();
    let mut tool_calls = Vec::new();
    for (i, b) in blocks.iter().enumerate() {
        match b.get("type").and_then(Value::as_str) {
            Some("text") => {
                content.push_str(b.get("text").and_then(Value::as_str).unwrap_or_default());
            }
            Some("tool_use") => {
                let name = b.get("name").and_then(Value::as_str).ok_or_else(|| {
                    ProviderError::BadResponse(format!("`content[{i}]` (tool_use) has no name"))
                })?;
                let input = b.get("input").cloned().unwrap_or_else(|| json!({}));
                if structured && name == RESPOND_TOOL {
                    content = input.to_string();
                    continue;
                }
                let id = b
                    .get("id")
                    .and_then(Value::as_str)
                    .map_or_else(|| format!("toolu_{i}"), str::to_owned);
                tool_calls.push(ToolCall {
                    id,
                    name: name.to_owned(),
                    arguments: input.to_string(),
                });
            }
            _ => {} // thinking and other block types carry nothing we use
        }
    }
    Ok(ChatResponse::from_wire(
        &v,
        content,
        tool_calls,
        ("/usage/input_tokens", "/usage/output_tokens"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::config::{ApiKey, ApiKind};
    use crate::provider::ToolSpec;
    use crate::provider::Usage;

    #[test]
    fn builds_system_blocks_and_headers() {
        let cfg = ProviderConfig::new(ApiKind::Anthropic, "claude-x", Some(ApiKey::new("sk-a")));
        let mut assistant = ChatMessage::text(ChatRole::Assistant, "let me look");
        assistant.tool_calls = vec![
            ToolCall {
                id: "t1".into(),
                name: "f".into(),
                arguments: "{\"a\":1}".into(),
            },
            ToolCall {
                id: "t2".into(),
                name: "f".into(),
                arguments: "{bad".into(),
            },
        ];
        let req = ChatRequest {
            messages: vec![
                ChatMessage::text(ChatRole::System, "s1"),
                ChatMessage::text(ChatRole::System, "s2"),
                ChatMessage::text(ChatRole::User, "hi"),
                assistant,
                ChatMessage::tool_result("t1", "one"),
                ChatMessage::tool_result("t2", "two"),
            ],
            tools: vec![ToolSpec {
                name: "f".into(),
                description: "d".into(),
                parameters: json!({"type": "object"}),
            }],
            ..ChatRequest::default()
        };
        let http = build_chat(&cfg, &req);
        assert_eq!(http.url, "https://api.anthropic.com/v1/messages");
        assert_eq!(http.header("x-api-key"), Some("sk-a"));
        assert_eq!(
            http.header("anthropic-dangerous-direct-browser-access"),
            Some("true")
        );
        assert_eq!(http.header("anthropic-version"), Some(API_VERSION));
        assert!(http.header("authorization").is_none());
        let body: Value = serde_json::from_str(&http.body).unwrap();
        assert_eq!(body["system"], "s1\n\ns2");
        assert_eq!(body["max_tokens"], DEFAULT_MAX_TOKENS);
        let msgs = body["messages"].as_array().unwrap();
        assert_eq!(msgs.len(), 3, "{msgs:?}");
        assert_eq!(
            msgs[1]["content"][1],
            json!({"type": "tool_use", "id": "t1", "name": "f", "input": {"a": 1}})
        );
        assert_eq!(msgs[1]["content"][2]["input"], json!({}));
        assert_eq!(msgs[2]["role"], "user");
        assert_eq!(msgs[2]["content"][1]["tool_use_id"], "t2");
        assert_eq!(body["tools"][0]["input_schema"], json!({"type": "object"}));
        assert_eq!(body["tool_choice"], json!({"type": "auto"}));
    }

    #[test]
    fn structured_output_is_a_forced_tool() {
        let cfg = ProviderConfig::new(ApiKind::Anthropic, "m", None);
        let req = ChatRequest {
            messages: vec![ChatMessage::text(ChatRole::User, "q")],
            json_schema: Some(json!({"type": "object", "properties": {"a": {"type": "string"}}})),
            ..ChatRequest::default()
        };
        let body: Value = serde_json::from_str(&build_chat(&cfg, &req).body).unwrap();
        assert_eq!(
            body["tool_choice"],
            json!({"type": "tool", "name": RESPOND_TOOL})
        );
        let reply = r#"{"model":"m","content":[{"type":"tool_use","id":"x","name":"respond","input":{"a":"b"}}],
                        "usage":{"input_tokens":5,"output_tokens":2}}"#;
        let r = parse_chat(reply, true).unwrap();
        assert_eq!(r.content, "{\"a\":\"b\"}");
        assert!(r.tool_calls.is_empty());
        assert_eq!(
            r.usage,
            Usage {
                input_tokens: 5,
                output_tokens: 2
            }
        );
        assert_eq!(parse_chat(reply, false).unwrap().tool_calls.len(), 1);
    }

    #[test]
    fn parses_text_and_tool_use() {
        let reply = r#"{"content":[{"type":"text","text":"a"},{"type":"thinking"},{"type":"text","text":"b"},
                        {"type":"tool_use","id":"tu","name":"g","input":{"k":[1]}}]}"#;
        let r = parse_chat(reply, false).unwrap();
        assert_eq!(r.content, "ab");
        assert_eq!(
            r.tool_calls,
            vec![ToolCall {
                id: "tu".into(),
                name: "g".into(),
                arguments: "{\"k\":[1]}".into()
            }]
        );
        assert!(
            matches!(parse_chat("{}", false), Err(ProviderError::BadResponse(m)) if m.contains("content"))
        );
    }
}
