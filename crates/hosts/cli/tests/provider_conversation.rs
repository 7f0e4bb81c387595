//! The scripted multi-turn tool-calling conversation, over real HTTP to the local server, for
//! both API shapes; every request body the server received is checked. The same script also
//! drives the in-process `ScriptedLlm`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

mod common;

use common::conversation::{
    check_headers_and_key, check_outcome, expected_bodies, request, weather, WEATHER_SCRIPT,
};
use common::Server;
use memtrace::provider::{run_tool_loop, ApiKind, HttpLlm, Script, ScriptedLlm, ToolLoop};
use memtrace_native::http::{NativeTransport, ThreadSleep};

const KEY: &str = "sk-conv-test-0001";
const MODEL: &str = "script:weather";

fn converse(server: &Server, api: ApiKind) -> ToolLoop {
    let cfg = server.config(api, MODEL, KEY);
    let llm = HttpLlm::new(cfg, NativeTransport::default(), ThreadSleep).unwrap();
    let out = futures_executor::block_on(run_tool_loop(&llm, request(), 8, weather)).unwrap();
    let stats = llm.stats();
    assert_eq!((stats.calls, stats.attempts, stats.retries), (4, 4, 0));
    assert!(stats.usage.total().input_tokens > 0);
    out
}

fn check_log(server: &Server, api: ApiKind, path: &str) {
    let log = server.log();
    let expected = expected_bodies(api, MODEL);
    assert_eq!(log.len(), expected.len());
    for (i, (rec, want)) in log.iter().zip(&expected).enumerate() {
        assert_eq!(rec["path"], path, "request {i}");
        assert_eq!(&rec["body"], want, "request {i} body");
        check_headers_and_key(rec, api, KEY);
    }
}

#[test]
fn openai_shape_conversation() {
    let server = Server::start();
    let out = converse(&server, ApiKind::OpenAi);
    check_outcome(&out);
    check_log(&server, ApiKind::OpenAi, "/v1/chat/completions");
    // The malformed arguments went back verbatim, as the model wrote them.
    let log = server.log();
    let args = &log[1]["body"]["messages"][2]["tool_calls"][1]["function"]["arguments"];
    assert_eq!(args, "{\"city\": \"Oslo\"");
}

#[test]
fn anthropic_shape_conversation() {
    let server = Server::start();
    let out = converse(&server, ApiKind::Anthropic);
    check_outcome(&out);
    check_log(&server, ApiKind::Anthropic, "/v1/messages");
    // Two tool results of one turn travel in one user message.
    assert_eq!(
        server.log()[1]["body"]["messages"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
}

#[test]
fn same_script_drives_the_in_process_provider() {
    let llm = ScriptedLlm::new(Script::from_json(WEATHER_SCRIPT).unwrap());
    let out = futures_executor::block_on(run_tool_loop(&llm, request(), 8, weather)).unwrap();
    check_outcome(&out);
    assert_eq!(llm.requests().len(), 4);
}

#[test]
fn embeddings_over_http() {
    let server = Server::start();
    let cfg = server.config(ApiKind::OpenAi, "embed-model", KEY);
    let llm = HttpLlm::new(cfg, NativeTransport::default(), ThreadSleep).unwrap();
    let inputs = [
        "Caroline likes hiking".to_owned(),
        "Melanie paints".to_owned(),
    ];
    let a = futures_executor::block_on(llm.embed(&inputs)).unwrap();
    let b = futures_executor::block_on(llm.embed(&inputs[..1])).unwrap();
    assert_eq!(a.vectors.len(), 2);
    assert!(a.vectors.iter().all(|v| v.len() == 8));
    assert_eq!(a.vectors[0], b.vectors[0], "same text, same vector");
    assert_ne!(a.vectors[0], a.vectors[1]);
    assert_eq!(a.usage.input_tokens, 5);
    let log = server.log();
    assert_eq!(log[0]["path"], "/v1/embeddings");
    assert_eq!(
        log[0]["body"],
        serde_json::json!({"model": "embed-model", "input": inputs})
    );
    check_headers_and_key(&log[0], ApiKind::OpenAi, KEY);
}

#[test]
fn structured_output_for_both_shapes() {
    use memtrace::provider::{ChatMessage, ChatRequest, ChatRole, Llm};
    let schema = serde_json::json!({"type": "object", "required": ["facts"],
        "properties": {"facts": {"type": "array", "items": {"type": "string"}}}});
    let server = Server::start();
    for (api, model) in [
        (ApiKind::OpenAi, "script:structured_openai"),
        (ApiKind::Anthropic, "script:structured_anthropic"),
    ] {
        let llm = HttpLlm::new(
            server.config(api, model, KEY),
            NativeTransport::default(),
            ThreadSleep,
        )
        .unwrap();
        let req = ChatRequest {
            messages: vec![ChatMessage::text(
                ChatRole::User,
                "Extract the facts: Caroline likes hiking.",
            )],
            json_schema: Some(schema.clone()),
            ..ChatRequest::default()
        };
        let reply = futures_executor::block_on(llm.chat(&req)).unwrap();
        let parsed: serde_json::Value = serde_json::from_str(&reply.content).unwrap();
        assert_eq!(
            parsed,
            serde_json::json!({"facts": ["Caroline likes hiking"]}),
            "{api:?}"
        );
        assert!(reply.tool_calls.is_empty(), "{api:?}");
    }
    let log = server.log();
    assert_eq!(
        log[0]["body"]["response_format"]["json_schema"]["schema"],
        schema
    );
    assert_eq!(
        log[1]["body"]["tool_choice"],
        serde_json::json!({"type": "tool", "name": "respond"})
    );
    assert_eq!(log[1]["body"]["tools"][0]["input_schema"], schema);
}
