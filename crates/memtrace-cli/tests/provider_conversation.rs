//! The scripted multi-turn tool-calling conversation, over real HTTP to the local server, for
//! both API shapes; every request body the server received is checked. The same script also
//! drives the in-process `ScriptedLlm`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

mod common;

use common::{repo_root, Server};
use memtrace::provider::{
    run_tool_loop, ApiKind, ChatMessage, ChatRequest, ChatRole, HttpLlm, Script, ScriptedLlm,
    ToolLoop, ToolSpec,
};
use memtrace_cli::http::{NativeTransport, ThreadSleep};
use serde_json::{json, Value};

const KEY: &str = "sk-conv-test-0001";

fn request() -> ChatRequest {
    ChatRequest {
        messages: vec![
            ChatMessage::text(
                ChatRole::System,
                "You answer weather questions. Use the tools.",
            ),
            ChatMessage::text(
                ChatRole::User,
                "What is the weather in Paris and Oslo? Answer in one sentence.",
            ),
        ],
        tools: vec![ToolSpec {
            name: "get_weather".into(),
            description: "Current temperature of a city".into(),
            parameters: json!({"type": "object", "properties": {"city": {"type": "string"}},
                               "required": ["city"]}),
        }],
        max_tokens: Some(200),
        purpose: "test".into(),
        ..ChatRequest::default()
    }
}

fn weather(name: &str, args: &Value) -> Result<String, String> {
    assert_eq!(name, "get_weather");
    match args["city"].as_str() {
        Some("Paris") => Ok("Paris: 18 C".into()),
        Some("Oslo") => Ok("Oslo: 4 C".into()),
        other => Err(format!("unknown city {other:?}")),
    }
}

fn check_outcome(out: &ToolLoop) {
    use ChatRole::{Assistant as A, System as S, Tool as T, User as U};
    assert_eq!(
        out.reply.content,
        "Paris is 18 C and Oslo is 4 C (about 39 F)."
    );
    assert_eq!(out.turns, 4);
    assert_eq!(
        out.rejected_calls, 2,
        "one malformed argument list, one unknown tool"
    );
    let roles: Vec<ChatRole> = out.messages.iter().map(|m| m.role).collect();
    assert_eq!(roles, [S, U, A, T, T, A, T, A, T]);
    assert_eq!(out.messages[3].content, "Paris: 18 C");
    assert!(
        out.messages[4].content.contains("Call it again"),
        "{}",
        out.messages[4].content
    );
    assert_eq!(out.messages[6].content, "Oslo: 4 C");
    assert!(out.messages[8]
        .content
        .contains("no tool named `to_fahrenheit`"));
}

/// The `OpenAI` wire form of the transcript prefix (written out here, independent of the builder).
fn openai_messages(msgs: &[ChatMessage]) -> Value {
    let wire: Vec<Value> = msgs
        .iter()
        .map(|m| match m.role {
            ChatRole::System => json!({"role": "system", "content": m.content}),
            ChatRole::User => json!({"role": "user", "content": m.content}),
            ChatRole::Tool => json!({"role": "tool", "content": m.content,
                                      "tool_call_id": m.tool_call_id}),
            ChatRole::Assistant => {
                let calls: Vec<Value> = m
                    .tool_calls
                    .iter()
                    .map(|c| {
                        json!({"id": c.id, "type": "function",
                                    "function": {"name": c.name, "arguments": c.arguments}})
                    })
                    .collect();
                let content = if m.content.is_empty() {
                    Value::Null
                } else {
                    json!(m.content)
                };
                json!({"role": "assistant", "content": content, "tool_calls": calls})
            }
        })
        .collect();
    Value::Array(wire)
}

/// The Anthropic wire form: system apart, one user turn per run of user/tool messages.
fn anthropic_messages(msgs: &[ChatMessage]) -> Value {
    let mut turns: Vec<Value> = Vec::new();
    for m in msgs {
        let (role, blocks) = match m.role {
            ChatRole::System => continue,
            ChatRole::User => ("user", vec![json!({"type": "text", "text": m.content})]),
            ChatRole::Tool => (
                "user",
                vec![json!({"type": "tool_result",
                "tool_use_id": m.tool_call_id, "content": m.content})],
            ),
            ChatRole::Assistant => {
                let mut b = Vec::new();
                if !m.content.is_empty() {
                    b.push(json!({"type": "text", "text": m.content}));
                }
                for c in &m.tool_calls {
                    let input = serde_json::from_str::<Value>(&c.arguments)
                        .ok()
                        .filter(Value::is_object)
                        .unwrap_or(json!({}));
                    b.push(json!({"type": "tool_use", "id": c.id, "name": c.name, "input": input}));
                }
                ("assistant", b)
            }
        };
        match turns.last_mut() {
            Some(t) if t["role"] == role => {
                t["content"].as_array_mut().unwrap().extend(blocks);
            }
            _ => turns.push(json!({"role": role, "content": blocks})),
        }
    }
    Value::Array(turns)
}

fn converse(server: &Server, api: ApiKind) -> ToolLoop {
    let cfg = server.config(api, "script:weather", KEY);
    let llm = HttpLlm::new(cfg, NativeTransport::default(), ThreadSleep).unwrap();
    let out = futures_executor::block_on(run_tool_loop(&llm, request(), 8, weather)).unwrap();
    let stats = llm.stats();
    assert_eq!((stats.calls, stats.attempts, stats.retries), (4, 4, 0));
    assert!(stats.usage.total().input_tokens > 0);
    out
}

#[test]
fn openai_shape_conversation() {
    let server = Server::start();
    let out = converse(&server, ApiKind::OpenAi);
    check_outcome(&out);
    let log = server.log();
    assert_eq!(log.len(), 4);
    let tools = json!([{"type": "function", "function": {"name": "get_weather",
        "description": "Current temperature of a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                       "required": ["city"]}}}]);
    for (i, (rec, prefix)) in log.iter().zip([2usize, 5, 7, 9]).enumerate() {
        assert_eq!(rec["path"], "/v1/chat/completions", "request {i}");
        let expected = json!({
            "model": "script:weather",
            "messages": openai_messages(&out.messages[..prefix]),
            "tools": tools, "tool_choice": "auto", "max_tokens": 200,
        });
        assert_eq!(rec["body"], expected, "request {i} body");
        let h = &rec["headers"];
        assert_eq!(h["authorization"], format!("Bearer {KEY}"));
        assert_eq!(h["content-type"], "application/json");
        assert!(h.get("x-api-key").is_none() && h.get("anthropic-version").is_none());
    }
    // The malformed arguments went back verbatim, as the model wrote them.
    assert_eq!(
        log[1]["body"]["messages"][2]["tool_calls"][1]["function"]["arguments"],
        "{\"city\": \"Oslo\""
    );
}

#[test]
fn anthropic_shape_conversation() {
    let server = Server::start();
    let out = converse(&server, ApiKind::Anthropic);
    check_outcome(&out);
    let log = server.log();
    assert_eq!(log.len(), 4);
    let tools = json!([{"name": "get_weather", "description": "Current temperature of a city",
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}},
                         "required": ["city"]}}]);
    for (i, (rec, prefix)) in log.iter().zip([2usize, 5, 7, 9]).enumerate() {
        assert_eq!(rec["path"], "/v1/messages", "request {i}");
        let expected = json!({
            "model": "script:weather", "max_tokens": 200,
            "system": "You answer weather questions. Use the tools.",
            "messages": anthropic_messages(&out.messages[..prefix]),
            "tool_choice": {"type": "auto"}, "tools": tools,
        });
        assert_eq!(rec["body"], expected, "request {i} body");
        let h = &rec["headers"];
        assert_eq!(h["x-api-key"], KEY);
        assert_eq!(h["anthropic-version"], "2023-06-01");
        assert_eq!(h["anthropic-dangerous-direct-browser-access"], "true");
        assert!(h.get("authorization").is_none());
    }
    // Two tool results of one turn travel in one user message.
    assert_eq!(log[1]["body"]["messages"].as_array().unwrap().len(), 3);
}

#[test]
fn same_script_drives_the_in_process_provider() {
    let text =
        std::fs::read_to_string(repo_root().join("tests/llm_server/scripts/weather.json")).unwrap();
    let llm = ScriptedLlm::new(Script::from_json(&text).unwrap());
    let out = futures_executor::block_on(run_tool_loop(&llm, request(), 8, weather)).unwrap();
    check_outcome(&out);
    assert_eq!(llm.requests().len(), 4);
}
