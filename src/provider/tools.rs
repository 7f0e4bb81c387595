//! The tool-calling loop: send, run the tools the model called, send their results back, until
//! the model answers in text. A malformed call (unknown tool, arguments that are not a JSON
//! object) is answered with an error message to the model, never a crash.

use serde_json::Value;

use super::{
    ChatMessage, ChatRequest, ChatResponse, ChatRole, Llm, ProviderError, ToolCall, ToolSpec, Usage,
};

/// The outcome of a tool loop.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolLoop {
    /// The final reply (no tool calls).
    pub reply: ChatResponse,
    /// The whole conversation, the request's messages first, then every assistant turn and
    /// tool result.
    pub messages: Vec<ChatMessage>,
    /// Chat calls made.
    pub turns: usize,
    /// Tool calls answered with an error because they were malformed.
    pub rejected_calls: usize,
    pub usage: Usage,
}

/// Checks a call against the offered tools and parses its arguments.
///
/// # Errors
/// The message to send back to the model: which tool is unknown (and which exist), or why the
/// arguments are not a JSON object.
pub fn check_tool_call(call: &ToolCall, tools: &[ToolSpec]) -> Result<Value, String> {
    if !tools.iter().any(|t| t.name == call.name) {
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        return Err(format!(
            "error: there is no tool named `{}`. Available tools: {}. Call one of them or answer \
             in text.",
            call.name,
            if names.is_empty() {
                "none".to_owned()
            } else {
                names.join(", ")
            }
        ));
    }
    if call.arguments.trim().is_empty() {
        return Ok(Value::Object(serde_json::Map::new()));
    }
    match serde_json::from_str::<Value>(&call.arguments) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(_) => Err(format!(
            "error: the arguments of `{}` must be a JSON object matching its schema. Call it again.",
            call.name
        )),
        Err(e) => Err(format!(
            "error: the arguments of `{}` are not valid JSON ({e}). Call it again with one JSON \
             object matching its schema.",
            call.name
        )),
    }
}

/// Runs the conversation in `req` until the model replies without tool calls, calling
/// `handler(name, arguments)` for each well-formed tool call. A handler error is sent to the
/// model as `error: …` too.
///
/// # Errors
/// The provider's error, or [`ProviderError::BadResponse`] when the model still calls tools
/// after `max_turns` chat calls.
pub async fn run_tool_loop<L, H>(
    llm: &L,
    mut req: ChatRequest,
    max_turns: usize,
    mut handler: H,
) -> Result<ToolLoop, ProviderError>
where
    L: Llm,
    H: FnMut(&str, &Value) -> Result<String, String>,
{
    let mut out = ToolLoop::default();
    while out.turns < max_turns {
        let reply = llm.chat(&req).await?;
        out.turns += 1;
        out.usage += reply.usage;
        if reply.tool_calls.is_empty() {
            out.reply = reply;
            out.messages = req.messages;
            return Ok(out);
        }
        let mut assistant = ChatMessage::text(ChatRole::Assistant, reply.content.clone());
        assistant.tool_calls.clone_from(&reply.tool_calls);
        req.messages.push(assistant);
        for call in &reply.tool_calls {
            let result = match check_tool_call(call, &req.tools) {
                Ok(args) => handler(&call.name, &args).unwrap_or_else(|e| format!("error: {e}")),
                Err(message) => {
                    out.rejected_calls += 1;
                    message
                }
            };
            req.messages
                .push(ChatMessage::tool_result(call.id.clone(), result));
        }
    }
    Err(ProviderError::BadResponse(format!(
        "the model still called tools after {max_turns} turns: raise the turn limit or simplify \
         the task"
    )))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::provider::scripted::{Script, ScriptedLlm};

    fn spec(name: &str) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: String::new(),
            parameters: json!({"type": "object"}),
        }
    }

    fn call(name: &str, args: &str) -> ToolCall {
        ToolCall {
            id: format!("id_{name}"),
            name: name.into(),
            arguments: args.into(),
        }
    }

    #[test]
    fn malformed_calls_become_messages() {
        let tools = [spec("add")];
        assert_eq!(
            check_tool_call(&call("add", r#"{"a":1}"#), &tools),
            Ok(json!({"a": 1}))
        );
        assert_eq!(check_tool_call(&call("add", " "), &tools), Ok(json!({})));
        let unknown = check_tool_call(&call("mul", "{}"), &tools).unwrap_err();
        assert!(
            unknown.contains("`mul`") && unknown.contains("add"),
            "{unknown}"
        );
        let bad = check_tool_call(&call("add", r#"{"a":"#), &tools).unwrap_err();
        assert!(bad.contains("not valid JSON"), "{bad}");
        let arr = check_tool_call(&call("add", "[1]"), &tools).unwrap_err();
        assert!(arr.contains("JSON object"), "{arr}");
    }

    #[test]
    fn loop_recovers_from_a_malformed_call() {
        let script = Script::from_json(
            r#"{"steps": [
                {"index": 0, "reply": {"tool_calls": [{"id": "c1", "name": "add", "arguments": "{\"a\": 2, \"b\""}]}},
                {"match_last": "not valid JSON", "reply": {"tool_calls": [{"id": "c2", "name": "add", "arguments": "{\"a\": 2, \"b\": 3}"}]}},
                {"match_last": "5", "reply": {"text": "2 + 3 = 5"}}
            ]}"#,
        )
        .unwrap();
        let llm = ScriptedLlm::new(script);
        let req = ChatRequest {
            messages: vec![ChatMessage::text(ChatRole::User, "add 2 and 3")],
            tools: vec![spec("add")],
            ..ChatRequest::default()
        };
        let mut calls = Vec::new();
        let out = futures_executor::block_on(run_tool_loop(&llm, req, 5, |name, args| {
            calls.push((name.to_owned(), args.clone()));
            let sum = args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0);
            Ok(sum.to_string())
        }))
        .unwrap();
        assert_eq!(out.reply.content, "2 + 3 = 5");
        assert_eq!((out.turns, out.rejected_calls), (3, 1));
        assert_eq!(calls, vec![("add".to_owned(), json!({"a": 2, "b": 3}))]);
        assert_eq!(out.messages.len(), 5);
        assert_eq!(out.messages[2].tool_call_id.as_deref(), Some("c1"));
        assert_eq!(llm.requests().len(), 3);
    }

    #[test]
    fn loop_stops_after_max_turns() {
        let script = Script::from_json(
            r#"{"steps": [{"reply": {"tool_calls": [{"id": "c", "name": "f", "arguments": "{}"}]}, "repeat": true}]}"#,
        )
        .unwrap();
        let llm = ScriptedLlm::new(script);
        let req = ChatRequest {
            tools: vec![spec("f")],
            ..ChatRequest::default()
        };
        let err = futures_executor::block_on(run_tool_loop(&llm, req, 3, |_, _| Ok("ok".into())))
            .unwrap_err();
        assert!(matches!(err, ProviderError::BadResponse(m) if m.contains("after 3 turns")));
    }
}
