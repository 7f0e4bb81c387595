//! Replies of a real OpenAI-compatible server (llama-cpp-python 0.3.36 serving Gemma 3 270M, the
//! server of `scripts/test-llm`), saved byte for byte under `tests/fixtures/llm_replies/`, read by
//! the reply parser and the agent loop: a tool call written as JSON in the text (a chat format
//! without tool support), native `tool_calls` with string arguments, and (derived from the latter,
//! see the fixtures' README) arguments as an object, no call id and no `usage`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use futures_executor::block_on;
use memtrace::attribution::agent::{
    attribute_with_agent, spec, validate_verdict, verdict_schema, AgentLimits, ToolOutcome, Toolbox,
};
use memtrace::model::Trace;
use memtrace::provider::openai::parse_chat;
use memtrace::provider::{
    check_tool_call, tool_calls_in_text, ChatRole, Script, ScriptedLlm, ToolSpec,
};
use memtrace::{load, LoadOptions};
use serde_json::{json, Value};

const TEXT_CALL: &str = include_str!("fixtures/llm_replies/llamacpp_gemma_text_call.json");
const STRING_ARGS: &str = include_str!("fixtures/llm_replies/llamacpp_fc_string_args.json");
const OBJECT_ARGS: &str =
    include_str!("fixtures/llm_replies/derived_object_args_no_id_no_usage.json");
const TRACE: &[u8] = include_bytes!("fixtures/smartcomment/mem0_commented.json");

fn tools() -> Vec<ToolSpec> {
    vec![
        spec(
            "view_operation",
            "Show one operation",
            json!({"type": "object", "properties": {"op_id": {"type": "string"}}}),
        ),
        spec("final_answer", "Give the verdict", verdict_schema()),
    ]
}

#[test]
fn a_tool_call_written_in_the_text_is_found() {
    let reply = parse_chat(TEXT_CALL).unwrap();
    assert!(reply.tool_calls.is_empty(), "no native call in this reply");
    assert!(!reply.usage_estimated);
    assert_eq!(
        (reply.usage.input_tokens, reply.usage.output_tokens),
        (51, 96)
    );
    // The model repeated the example call twice, then ran out of tokens mid-sentence.
    let calls = tool_calls_in_text(&reply.content, &tools());
    assert_eq!(calls.len(), 2, "{calls:?}");
    for (i, c) in calls.iter().enumerate() {
        assert_eq!(c.id, format!("text_call_{i}"));
        assert_eq!(c.name, "view_operation");
        assert_eq!(
            check_tool_call(c, &tools()).unwrap(),
            json!({"op_id": "op-1234"})
        );
    }
}

#[test]
fn native_calls_with_string_arguments_keep_their_id() {
    let reply = parse_chat(STRING_ARGS).unwrap();
    assert_eq!(reply.content, "");
    assert_eq!(reply.tool_calls.len(), 1);
    let call = &reply.tool_calls[0];
    assert!(
        call.id.starts_with("call__0_view_operation_"),
        "{}",
        call.id
    );
    assert_eq!(call.arguments, "{\"op_id\": \"1234\" }");
    assert_eq!(
        check_tool_call(call, &tools()).unwrap(),
        json!({"op_id": "1234"})
    );
    assert_eq!(
        (reply.usage.input_tokens, reply.usage.output_tokens),
        (301, 12)
    );
}

#[test]
fn object_arguments_a_missing_id_and_missing_usage_are_read() {
    let mut reply = parse_chat(OBJECT_ARGS).unwrap();
    assert_eq!(reply.tool_calls.len(), 1);
    let call = &reply.tool_calls[0];
    assert_eq!(call.id, "call_0");
    assert_eq!(
        check_tool_call(call, &tools()).unwrap(),
        json!({"op_id": "1234"})
    );
    assert!(reply.usage_estimated, "no usage: to be estimated");
    assert_eq!(reply.usage.input_tokens + reply.usage.output_tokens, 0);
    let body = "x".repeat(400);
    reply.estimate_usage(&body);
    assert_eq!(reply.usage.input_tokens, 100);
    assert!(reply.usage.output_tokens > 0);
}

/// A toolbox with `view_operation` (echoes the op's name) and `final_answer`.
struct Ops<'a>(&'a Trace);

impl Toolbox for Ops<'_> {
    fn specs(&self) -> Vec<ToolSpec> {
        tools()
    }
    fn call(&mut self, name: &str, args: &Value) -> Result<ToolOutcome, String> {
        if name == "final_answer" {
            return validate_verdict(self.0, args).map(ToolOutcome::Final);
        }
        let id = args["op_id"].as_str().unwrap_or("");
        let op = self.0.op_by_id(id).ok_or(format!("no operation {id}"))?;
        Ok(ToolOutcome::Text(format!("op {}", self.0.op(op).op_name)))
    }
}

#[test]
fn the_agent_runs_calls_written_in_text_and_answers_in_text() {
    let trace = load(TRACE, LoadOptions::default()).unwrap().trace;
    let op = trace.ops[0].op_id.clone();
    let text = parse_chat(TEXT_CALL).unwrap().content;
    let verdict = json!({"name": "final_answer", "arguments":
        {"error_type": "ExtractionError", "op_id": op, "reason": "seen"}});
    let script = Script::from_json(
        &json!({"steps": [
            {"index": 0, "reply": {"text": text}},
            {"index": 1, "reply": {"text": format!("```json\n{verdict}\n```")}},
        ]})
        .to_string(),
    )
    .unwrap();
    let llm = ScriptedLlm::new(script);
    let (a, run) = block_on(attribute_with_agent(
        &llm,
        &trace,
        "system",
        "task",
        &mut Ops(&trace),
        &AgentLimits::default(),
        "graphtrace",
        "case",
    ))
    .unwrap();
    assert_eq!((a.op_id.as_str(), run.calls), (op.as_str(), 2));
    let tools_run: Vec<&str> = run.transcript.iter().map(|s| s.tool.as_str()).collect();
    assert_eq!(
        tools_run,
        ["view_operation", "view_operation", "final_answer"]
    );
    // The second request carries the results as a user message: no `tool` role, no call ids.
    let second = &llm.requests()[1];
    assert!(second.messages.iter().all(|m| m.role != ChatRole::Tool));
    let last = second.messages.last().unwrap();
    assert_eq!(last.role, ChatRole::User);
    assert!(
        last.content.starts_with("Result of view_operation:"),
        "{}",
        last.content
    );
    assert!(
        last.content.contains("no operation op-1234"),
        "{}",
        last.content
    );
}
