//! `OpenAI` Chat Completions: build the request, parse the reply. The same shape serves Gemini's
//! OpenAI-compatible endpoint, `OpenRouter`, Groq, Together, Ollama, LM Studio, llama.cpp server
//! and vLLM, so only two headers are sent: `content-type` and `authorization`.

use serde_json::{json, Map, Value};

use super::config::ProviderConfig;
use super::http::HttpRequest;
use super::{ChatMessage, ChatRequest, ChatResponse, ChatRole, ProviderError, ToolCall};

/// The name given to the JSON schema of a structured-output request.
pub const SCHEMA_NAME: &str = "response";

/// Builds the HTTP request for `POST {base}/chat/completions`.
pub fn build_chat(cfg: &ProviderConfig, req: &ChatRequest) -> HttpRequest {
    build_chat_with(cfg, req, false)
}

/// As [`build_chat`]; with `json_object`, a structured-output schema is sent as
/// `{"type": "json_object", "schema": …}`, the form of servers that refuse `json_schema`
/// (llama-cpp-python).
pub fn build_chat_with(cfg: &ProviderConfig, req: &ChatRequest, json_object: bool) -> HttpRequest {
    let mut body = Map::new();
    body.insert("model".into(), json!(cfg.model));
    body.insert(
        "messages".into(),
        Value::Array(req.messages.iter().map(message).collect()),
    );
    if !req.tools.is_empty() {
        let tools = req
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name, "description": t.description, "parameters": t.parameters}})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
        body.insert("tool_choice".into(), json!("auto"));
    }
    if let Some(schema) = &req.json_schema {
        let format = if json_object {
            json!({"type": "json_object", "schema": schema})
        } else {
            json!({"type": "json_schema",
                   "json_schema": {"name": SCHEMA_NAME, "schema": schema, "strict": true}})
        };
        body.insert("response_format".into(), format);
    }
    if let Some(n) = req.max_tokens.or(cfg.max_tokens) {
        body.insert("max_tokens".into(), json!(n));
    }
    if let Some(t) = req.temperature {
        body.insert("temperature".into(), json!(t));
    }
    post_json(cfg, "chat/completions", &Value::Object(body))
}

/// A JSON `POST` under the base URL with the minimal headers (bearer key if any).
pub(crate) fn post_json(cfg: &ProviderConfig, path: &str, body: &Value) -> HttpRequest {
    let mut headers = vec![("content-type".to_owned(), "application/json".to_owned())];
    if let Some(key) = cfg
        .api_key
        .as_ref()
        .filter(|k| !k.expose_secret().is_empty())
    {
        headers.push((
            "authorization".to_owned(),
            format!("Bearer {}", key.expose_secret()),
        ));
    }
    HttpRequest {
        method: "POST".to_owned(),
        url: cfg.endpoint(path),
        headers,
        body: body.to_string(),
        timeout_ms: cfg.timeout_ms,
    }
}

fn message(m: &ChatMessage) -> Value {
    let role = match m.role {
        ChatRole::System => "system",
        ChatRole::User => "user",
        ChatRole::Assistant => "assistant",
        ChatRole::Tool => "tool",
    };
    let mut out = Map::new();
    out.insert("role".into(), json!(role));
    let content = if m.content.is_empty() && !m.tool_calls.is_empty() {
        Value::Null
    } else {
        json!(m.content)
    };
    out.insert("content".into(), content);
    if !m.tool_calls.is_empty() {
        let calls = m
            .tool_calls
            .iter()
            .map(|c| {
                json!({"id": c.id, "type": "function",
                       "function": {"name": c.name, "arguments": c.arguments}})
            })
            .collect();
        out.insert("tool_calls".into(), Value::Array(calls));
    }
    if let Some(id) = &m.tool_call_id {
        out.insert("tool_call_id".into(), json!(id));
    }
    Value::Object(out)
}

/// Parses a 2xx reply body.
///
/// # Errors
/// [`ProviderError::BadResponse`] naming the missing or ill-typed field.
pub fn parse_chat(body: &str) -> Result<ChatResponse, ProviderError> {
    let v: Value = serde_json::from_str(body)
        .map_err(|e| ProviderError::BadResponse(format!("chat reply is not JSON: {e}")))?;
    let msg = v
        .pointer("/choices/0/message")
        .ok_or_else(|| bad("no `choices[0].message` in the chat reply"))?;
    let content = match msg.get("content") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => {
            // Some servers send content parts: keep the text ones.
            other.as_array().map_or_else(String::new, |parts| {
                parts
                    .iter()
                    .filter_map(|p| p.get("text").and_then(Value::as_str))
                    .collect()
            })
        }
    };
    let mut tool_calls = Vec::new();
    if let Some(calls) = msg.get("tool_calls").and_then(Value::as_array) {
        for (i, c) in calls.iter().enumerate() {
            let name = c
                .pointer("/function/name")
                .and_then(Value::as_str)
                .ok_or_else(|| bad(&format!("`choices[0].message.tool_calls[{i}]` has no name")))?;
            // The arguments are a JSON string; a few servers send an object instead.
            let arguments = match c.pointer("/function/arguments") {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Null) | None => String::new(),
                Some(other) => other.to_string(),
            };
            let id = c
                .get("id")
                .and_then(Value::as_str)
                .map_or_else(|| format!("call_{i}"), str::to_owned);
            tool_calls.push(ToolCall {
                id,
                name: name.to_owned(),
                arguments,
            });
        }
    }
    Ok(ChatResponse::from_wire(
        &v,
        content,
        tool_calls,
        ("/usage/prompt_tokens", "/usage/completion_tokens"),
    ))
}

/// The human message of an OpenAI-style error body (`{"error": {"message": …}}`), if any.
pub fn error_message(body: &str) -> Option<String> {
    let v: Value = serde_json::from_str(body).ok()?;
    let e = v.get("error")?;
    e.get("message")
        .and_then(Value::as_str)
        .or_else(|| e.as_str())
        .map(str::to_owned)
}

fn bad(what: &str) -> ProviderError {
    ProviderError::BadResponse(what.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::config::{ApiKey, ApiKind};
    use crate::provider::ToolSpec;
    use crate::provider::Usage;

    fn cfg() -> ProviderConfig {
        let mut c = ProviderConfig::new(ApiKind::OpenAi, "gpt-x", Some(ApiKey::new("sk-1")));
        c.base_url = "http://127.0.0.1:9/v1".into();
        c
    }

    #[test]
    fn builds_tools_schema_and_tool_turns() {
        let mut assistant = ChatMessage::text(ChatRole::Assistant, "");
        assistant.tool_calls = vec![ToolCall {
            id: "c1".into(),
            name: "f".into(),
            arguments: "{\"a\":1}".into(),
        }];
        let req = ChatRequest {
            messages: vec![
                ChatMessage::text(ChatRole::System, "sys"),
                ChatMessage::text(ChatRole::User, "hi"),
                assistant,
                ChatMessage::tool_result("c1", "42"),
            ],
            tools: vec![ToolSpec {
                name: "f".into(),
                description: "d".into(),
                parameters: json!({"type": "object"}),
            }],
            json_schema: Some(json!({"type": "object"})),
            max_tokens: Some(7),
            temperature: None,
            purpose: "t".into(),
        };
        let http = build_chat(&cfg(), &req);
        assert_eq!(http.url, "http://127.0.0.1:9/v1/chat/completions");
        assert_eq!(http.header("authorization"), Some("Bearer sk-1"));
        assert_eq!(http.headers.len(), 2, "only minimal headers");
        let body: Value = serde_json::from_str(&http.body).unwrap();
        assert_eq!(body["messages"][2]["content"], Value::Null);
        assert_eq!(
            body["messages"][2]["tool_calls"][0]["function"]["arguments"],
            "{\"a\":1}"
        );
        assert_eq!(
            body["messages"][3],
            json!({"role": "tool", "content": "42", "tool_call_id": "c1"})
        );
        assert_eq!(body["tools"][0]["function"]["name"], "f");
        assert_eq!(body["tool_choice"], "auto");
        assert_eq!(
            body["response_format"]["json_schema"]["schema"],
            json!({"type": "object"})
        );
        assert_eq!(body["max_tokens"], 7);
        assert!(body.get("temperature").is_none());
        assert!(!http.body.contains("sk-1"));
    }

    #[test]
    fn parses_text_tool_calls_and_usage() {
        let body = r#"{"model":"m1","choices":[{"message":{"role":"assistant","content":null,
            "tool_calls":[{"id":"c9","type":"function","function":{"name":"g","arguments":"{\"x\":"}},
            {"type":"function","function":{"name":"h","arguments":{"y":2}}}]}}],
            "usage":{"prompt_tokens":11,"completion_tokens":3}}"#;
        let r = parse_chat(body).unwrap();
        assert_eq!(r.content, "");
        assert_eq!(
            r.tool_calls[0],
            ToolCall {
                id: "c9".into(),
                name: "g".into(),
                arguments: "{\"x\":".into()
            }
        );
        assert_eq!(r.tool_calls[1].id, "call_1");
        assert_eq!(r.tool_calls[1].arguments, "{\"y\":2}");
        assert_eq!(
            r.usage,
            Usage {
                input_tokens: 11,
                output_tokens: 3
            }
        );
        assert_eq!(r.model, "m1");
    }

    #[test]
    fn bad_replies_say_what_is_missing() {
        assert!(
            matches!(parse_chat("nope"), Err(ProviderError::BadResponse(m)) if m.contains("not JSON"))
        );
        assert!(
            matches!(parse_chat("{}"), Err(ProviderError::BadResponse(m)) if m.contains("choices"))
        );
        assert_eq!(
            error_message(r#"{"error":{"message":"bad model"}}"#).as_deref(),
            Some("bad model")
        );
    }
}
