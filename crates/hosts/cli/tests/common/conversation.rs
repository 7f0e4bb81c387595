//! The scripted weather conversation (`tests/llm_server/scripts/weather.json`) and what every
//! request of it must look like on the wire (a file written out apart from the builders).
//! Pure (memtrace + `serde_json`): the browser tests include this file too.

#![allow(dead_code)] // each test file uses a part
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers fail by panicking

use memtrace::provider::{ApiKind, ChatMessage, ChatRequest, ChatRole, ToolLoop, ToolSpec};
use serde_json::{json, Value};

/// The script, for the in-process provider and the browser (which cannot read files).
pub const WEATHER_SCRIPT: &str =
    include_str!("../../../../../tests/llm_server/scripts/weather.json");

/// What each request of the script must look like on the wire.
pub const WEATHER_REQUESTS: &str =
    include_str!("../../../../../tests/llm_server/scripts/weather.requests.json");

/// Messages in the transcript before each of the 4 requests.
pub const PREFIXES: [usize; 4] = [2, 5, 7, 9];

pub const SYSTEM: &str = "You answer weather questions. Use the tools.";

/// The opening request: a system prompt, a question, one tool, a token limit.
pub fn request() -> ChatRequest {
    ChatRequest {
        messages: vec![
            ChatMessage::text(ChatRole::System, SYSTEM),
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

/// The tool: two cities.
pub fn weather(name: &str, args: &Value) -> Result<String, String> {
    assert_eq!(name, "get_weather");
    match args["city"].as_str() {
        Some("Paris") => Ok("Paris: 18 C".into()),
        Some("Oslo") => Ok("Oslo: 4 C".into()),
        other => Err(format!("unknown city {other:?}")),
    }
}

/// The conversation went as scripted: a malformed call and an unknown tool were answered with
/// errors and the model recovered.
pub fn check_outcome(out: &ToolLoop) {
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

/// The exact body of each of the 4 requests, written out in
/// `tests/llm_server/scripts/weather.requests.json` (not built by code like the builders').
pub fn expected_bodies(api: ApiKind, model: &str) -> Vec<Value> {
    let all: Value = serde_json::from_str(WEATHER_REQUESTS).unwrap();
    let shape = match api {
        ApiKind::OpenAi => "openai",
        ApiKind::Anthropic => "anthropic",
    };
    let mut bodies = all[shape].as_array().unwrap().clone();
    assert_eq!(bodies.len(), PREFIXES.len());
    for b in &mut bodies {
        b["model"] = json!(model);
    }
    bodies
}

/// Checks one logged request's headers for the API shape, and that `key` appears in it only
/// in the credential header.
pub fn check_headers_and_key(rec: &Value, api: ApiKind, key: &str) {
    let mut rec = rec.clone();
    let headers = rec["headers"].as_object_mut().unwrap();
    assert_eq!(headers["content-type"], "application/json");
    let credential = match api {
        ApiKind::OpenAi => {
            assert!(
                headers.get("x-api-key").is_none() && headers.get("anthropic-version").is_none()
            );
            headers.remove("authorization")
        }
        ApiKind::Anthropic => {
            assert_eq!(headers["anthropic-version"], "2023-06-01");
            assert_eq!(headers["anthropic-dangerous-direct-browser-access"], "true");
            assert!(headers.get("authorization").is_none());
            headers.remove("x-api-key")
        }
    };
    let credential = credential
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    let want = match api {
        ApiKind::OpenAi => format!("Bearer {key}"),
        ApiKind::Anthropic => key.to_owned(),
    };
    assert_eq!(credential, want, "credential header");
    let rest = rec.to_string();
    assert!(!rest.contains(key), "key outside its header: {rest}");
}
