//! Talking to LLMs, sans-IO: one internal chat model ([`ChatRequest`] / [`ChatResponse`]) that
//! every caller in the core uses through the [`Llm`] trait. HTTP providers build requests and
//! parse responses here; the bytes travel through a [`Transport`] supplied by the CLI or the page.
//!
//! - [`openai`], [`anthropic`], [`embeddings`]: request builders and reply parsers per API shape;
//! - [`client::HttpLlm`]: an [`Llm`] over a [`Transport`] with retries ([`retry`]), timeouts,
//!   cancellation ([`CancelToken`]) and usage counting ([`cost`]);
//! - [`batch`]: bounded concurrency; [`tools`]: the tool-calling loop that answers malformed
//!   calls with an error message to the model; [`scripted`]: an in-process scripted provider.
//!   The offline rule-based stand-in lives with the memory systems it serves
//!   (`memtrace_memsys::simulated`).

use serde::{Deserialize, Serialize};

pub mod anthropic;
pub mod batch;
pub mod client;
pub mod config;
pub mod cost;
pub mod embeddings;
pub mod http;
pub mod openai;
pub mod retry;
pub mod scripted;
pub mod text_calls;
pub mod tools;

pub use batch::{chat_batch, run_bounded};
pub use client::{CallStats, HttpLlm};
pub use config::{ApiKey, ApiKind, ProviderConfig};
pub use cost::{Price, PriceTable, UsageLedger};
pub use embeddings::Embeddings;
pub use http::{
    CancelToken, HttpRequest, HttpResponse, RecordingSleep, Sleep, Transport, TransportError,
};
pub use retry::RetryPolicy;
pub use scripted::{Script, ScriptedLlm};
pub use text_calls::tool_calls_in_text;
pub use tools::{check_tool_call, run_tool_loop, ToolLoop};

/// Who said a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChatRole {
    System,
    User,
    Assistant,
    Tool,
}

/// A tool call the model asked for. `arguments` is the raw JSON text the model wrote: it may be
/// malformed, and callers answer that with an error message rather than failing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    pub role: ChatRole,
    pub content: String,
    /// Tool calls made by an assistant message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For a `Tool` message: the id of the call it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl ChatMessage {
    /// A message with text only.
    pub fn text(role: ChatRole, content: impl Into<String>) -> Self {
        Self {
            role,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }

    /// The result of a tool call, sent back to the model.
    pub fn tool_result(call_id: impl Into<String>, content: impl Into<String>) -> Self {
        Self {
            role: ChatRole::Tool,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: Some(call_id.into()),
        }
    }
}

/// A tool the model may call: name, description and a JSON Schema of its arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub parameters: serde_json::Value,
}

/// A request in the internal chat model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ChatRequest {
    pub messages: Vec<ChatMessage>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolSpec>,
    /// Force a JSON answer matching this schema (structured output), when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json_schema: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// What the call is for (e.g. `extract`, `graphtrace`): shown in progress, used by the
    /// simulated provider to pick its rule.
    #[serde(default)]
    pub purpose: String,
}

/// Tokens counted by the provider.
#[cfg_attr(feature = "ts", derive(tsify_next::Tsify))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, o: Usage) {
        self.input_tokens += o.input_tokens;
        self.output_tokens += o.output_tokens;
    }
}

/// A reply in the internal chat model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ChatResponse {
    pub content: String,
    #[serde(default)]
    pub tool_calls: Vec<ToolCall>,
    #[serde(default)]
    pub usage: Usage,
    /// The model that answered, as the provider reported it.
    #[serde(default)]
    pub model: String,
    /// The reply carried no token counts: `usage` is an estimate (4 characters a token).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub usage_estimated: bool,
}

impl ChatResponse {
    /// A parsed wire reply: `content` and `tool_calls` as the dialect read them, usage from the
    /// counters at JSON pointers `input` and `output` (0 when absent; both absent marks the
    /// usage for estimating, see [`ChatResponse::estimate_usage`]), and the reported model.
    pub(crate) fn from_wire(
        v: &serde_json::Value,
        content: String,
        tool_calls: Vec<ToolCall>,
        (input, output): (&str, &str),
    ) -> Self {
        let count = |ptr: &str| v.pointer(ptr).and_then(serde_json::Value::as_u64);
        Self {
            content,
            tool_calls,
            usage: Usage {
                input_tokens: count(input).unwrap_or(0),
                output_tokens: count(output).unwrap_or(0),
            },
            model: v
                .get("model")
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            usage_estimated: count(input).is_none() && count(output).is_none(),
        }
    }

    /// When the server sent no token counts, estimates them (4 characters a token) from the
    /// request body sent and this reply's text and tool calls; marked by `usage_estimated`.
    pub fn estimate_usage(&mut self, request_body: &str) {
        if !self.usage_estimated {
            return;
        }
        let out: usize = self.content.chars().count()
            + self
                .tool_calls
                .iter()
                .map(|c| c.name.len() + c.arguments.chars().count())
                .sum::<usize>();
        let tokens = |chars: usize| u64::try_from(chars.div_ceil(4)).unwrap_or(u64::MAX);
        self.usage = Usage {
            input_tokens: tokens(request_body.chars().count()),
            output_tokens: tokens(out),
        };
    }
}

/// Why a chat call failed, in words a user can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
pub enum ProviderError {
    #[error(
        "key rejected: the provider refused the API key (HTTP 401). Check the key in the \
         provider settings (MEMTRACE_API_KEY on the command line)."
    )]
    Unauthorized,
    #[error(
        "model or endpoint not found (HTTP 404) at {url}. Check the base URL and the model name."
    )]
    NotFound { url: String },
    #[error("rate limited (HTTP 429) and retries ran out")]
    RateLimited,
    #[error("the provider failed (HTTP {status}): {message}")]
    Http { status: u16, message: String },
    #[error("network error: {0}")]
    Network(String),
    #[error("the request timed out after {after_ms} ms")]
    Timeout { after_ms: u64 },
    #[error("cancelled")]
    Cancelled,
    #[error("could not read the provider's reply: {0}")]
    BadResponse(String),
    /// The browser could not fetch: the server is down or refuses cross-origin requests.
    #[error(
        "could not reach {url} from this page: the server is down or does not allow \
             cross-origin requests. {hint}"
    )]
    Blocked { url: String, hint: String },
    /// The provider settings are unusable (base URL, model).
    #[error("provider settings: {0}")]
    Config(String),
}

impl ProviderError {
    /// True when trying again cannot help until the user changes a setting (a rejected key, a
    /// wrong URL or model, unusable settings): a case that meets one ends at once.
    pub fn is_permanent(&self) -> bool {
        matches!(
            self,
            ProviderError::Unauthorized | ProviderError::NotFound { .. } | ProviderError::Config(_)
        )
    }
}

/// Anything that answers chat requests: an HTTP provider, the simulated provider, a script.
///
/// Not `Send`: in the browser everything runs on one thread, and the native CLI gets
/// concurrency from a transport that does its blocking I/O on worker threads.
#[allow(async_fn_in_trait)] // single-threaded by design, see above
pub trait Llm {
    /// Sends one chat request.
    ///
    /// # Errors
    /// A [`ProviderError`] once retries (if any) are exhausted.
    async fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, ProviderError>;
}

/// A borrowed LLM answers as the LLM (a host lends one provider to many runs).
impl<L: Llm + ?Sized> Llm for &L {
    async fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, ProviderError> {
        (**self).chat(req).await
    }
}
