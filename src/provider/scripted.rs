//! An in-process scripted provider for tests and demos. Its script format is the one the local
//! test server (`tests/llm_server/server.py`) reads, so one script drives both.
//!
//! ```json
//! {"steps": [
//!   {"match_last": "weather in Paris", "reply": {"tool_calls": [
//!       {"id": "c1", "name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}]}},
//!   {"index": 1, "reply": {"text": "It is sunny."}}
//! ], "fallback": "echo"}
//! ```
//! A step matches the n-th call (0-based) when its `index` is absent or n, and its `match_last`
//! is absent or contained in the last message's text. The first unused matching step answers
//! (`"repeat": true` keeps it usable). No match: `echo: <last text>`, or an error with
//! `"fallback": "error"`.

use std::cell::RefCell;

use serde::{Deserialize, Serialize};

use super::{ChatRequest, ChatResponse, Llm, ProviderError, ToolCall, Usage};

/// A scripted conversation.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Script {
    pub steps: Vec<ScriptStep>,
    #[serde(default)]
    pub fallback: Fallback,
}

/// One scripted reply and when to give it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScriptStep {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_last: Option<String>,
    #[serde(default)]
    pub repeat: bool,
    pub reply: ScriptReply,
}

/// The reply of a step.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ScriptReply {
    #[serde(default)]
    pub text: String,
    #[serde(default)]
    pub tool_calls: Vec<ToolCall>,
}

/// What to answer when no step matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Fallback {
    /// `echo: <last message text>`.
    #[default]
    Echo,
    /// A [`ProviderError::BadResponse`] naming the unmatched call.
    Error,
}

impl Script {
    /// Reads a script.
    ///
    /// # Errors
    /// The JSON path and reason when the text is not a script.
    pub fn from_json(text: &str) -> Result<Self, String> {
        let de = &mut serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(de)
            .map_err(|e| format!("script at `{}`: {}", e.path(), e.inner()))
    }
}

/// Answers from a [`Script`] and remembers every request.
#[derive(Debug, Default)]
pub struct ScriptedLlm {
    script: Script,
    used: RefCell<Vec<bool>>,
    requests: RefCell<Vec<ChatRequest>>,
}

impl ScriptedLlm {
    /// A provider playing `script`.
    pub fn new(script: Script) -> Self {
        let used = RefCell::new(vec![false; script.steps.len()]);
        Self {
            script,
            used,
            requests: RefCell::default(),
        }
    }

    /// Every request received, in order.
    pub fn requests(&self) -> Vec<ChatRequest> {
        self.requests.borrow().clone()
    }
}

/// Whitespace-separated words: the scripted stand-in for tokens.
fn words(text: &str) -> u64 {
    text.split_whitespace().count() as u64
}

impl Llm for ScriptedLlm {
    async fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, ProviderError> {
        let n = {
            let mut seen = self.requests.borrow_mut();
            seen.push(req.clone());
            seen.len() - 1
        };
        let last = req.messages.last().map_or("", |m| m.content.as_str());
        let mut used = self.used.borrow_mut();
        let step = self.script.steps.iter().enumerate().find(|(i, s)| {
            (s.repeat || !used.get(*i).copied().unwrap_or(true))
                && s.index.is_none_or(|want| want == n)
                && s.match_last.as_deref().is_none_or(|m| last.contains(m))
        });
        let reply = match step {
            Some((i, s)) => {
                if let Some(u) = used.get_mut(i) {
                    *u = true;
                }
                s.reply.clone()
            }
            None if self.script.fallback == Fallback::Echo => ScriptReply {
                text: format!("echo: {last}"),
                tool_calls: Vec::new(),
            },
            None => {
                return Err(ProviderError::BadResponse(format!(
                    "the script has no step for call {n} (last message: {last:?})"
                )))
            }
        };
        let input_tokens = req.messages.iter().map(|m| words(&m.content)).sum();
        let output_tokens = words(&reply.text)
            + reply
                .tool_calls
                .iter()
                .map(|c| words(&c.arguments))
                .sum::<u64>();
        Ok(ChatResponse {
            content: reply.text,
            tool_calls: reply.tool_calls,
            usage: Usage {
                input_tokens,
                output_tokens,
            },
            model: "scripted".to_owned(),
            usage_estimated: false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::{ChatMessage, ChatRole};

    fn ask(llm: &ScriptedLlm, text: &str) -> Result<ChatResponse, ProviderError> {
        let req = ChatRequest {
            messages: vec![ChatMessage::text(ChatRole::User, text)],
            ..ChatRequest::default()
        };
        futures_executor::block_on(llm.chat(&req))
    }

    #[test]
    fn matches_by_index_and_text_then_echoes() {
        let script = Script::from_json(
            r#"{"steps": [{"index": 1, "reply": {"text": "second"}},
                          {"match_last": "hello", "reply": {"text": "hi there"}}]}"#,
        )
        .unwrap();
        let llm = ScriptedLlm::new(script);
        assert_eq!(ask(&llm, "say hello").unwrap().content, "hi there");
        assert_eq!(ask(&llm, "hello again").unwrap().content, "second");
        let echo = ask(&llm, "hello once more").unwrap();
        assert_eq!(echo.content, "echo: hello once more");
        assert_eq!(
            echo.usage,
            Usage {
                input_tokens: 3,
                output_tokens: 4
            }
        );
        assert_eq!(llm.requests().len(), 3);
    }

    #[test]
    fn error_fallback_and_bad_scripts() {
        let llm =
            ScriptedLlm::new(Script::from_json(r#"{"steps": [], "fallback": "error"}"#).unwrap());
        assert!(
            matches!(ask(&llm, "x"), Err(ProviderError::BadResponse(m)) if m.contains("call 0"))
        );
        let err = Script::from_json(r#"{"steps": [{"reply": {"text": 3}}]}"#).unwrap_err();
        assert!(err.contains("steps[0].reply.text"), "{err}");
    }
}
