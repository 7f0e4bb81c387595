//! Which provider to call and how: API shape, base URL, model, key, timeout, retries.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::retry::RetryPolicy;

/// The wire shape of a chat API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ApiKind {
    /// `OpenAI` Chat Completions; also Gemini (OpenAI-compatible endpoint), `OpenRouter`, Groq,
    /// Together, Ollama, LM Studio, llama.cpp server and vLLM through their base URLs.
    OpenAi,
    /// Anthropic Messages.
    Anthropic,
}

impl ApiKind {
    /// The public base URL used when the user gives none.
    pub fn default_base_url(self) -> &'static str {
        match self {
            Self::OpenAi => "https://api.openai.com/v1",
            Self::Anthropic => "https://api.anthropic.com/v1",
        }
    }
}

/// An API key. Its `Debug` prints `ApiKey(<redacted>)`; it has no `Display` and no `Serialize`,
/// so it cannot end up in a log line, an error or an exported file by accident.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key; surrounding whitespace (a pasted newline) is dropped.
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into().trim().to_owned())
    }

    /// The key itself: only for building the credential header and for the page's key storage.
    pub fn expose_secret(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

/// Everything an HTTP provider needs.
#[derive(Debug, Clone)]
pub struct ProviderConfig {
    pub api: ApiKind,
    /// Up to and including the version path, e.g. `https://api.openai.com/v1` or
    /// `http://localhost:11434/v1`. The key is sent to URLs under this base only.
    pub base_url: String,
    pub model: String,
    pub api_key: Option<ApiKey>,
    /// Per attempt.
    pub timeout_ms: u64,
    pub retry: RetryPolicy,
    /// Output tokens asked for at most when a request sets no limit of its own (a small local
    /// model may otherwise write until its context is full).
    pub max_tokens: Option<u32>,
}

impl ProviderConfig {
    /// A configuration with the API's public base URL, a 60 s timeout and the default retries.
    pub fn new(api: ApiKind, model: impl Into<String>, api_key: Option<ApiKey>) -> Self {
        Self {
            api,
            base_url: api.default_base_url().to_owned(),
            model: model.into(),
            api_key,
            timeout_ms: 60_000,
            retry: RetryPolicy::default(),
            max_tokens: None,
        }
    }

    /// The URL of an endpoint under the base URL, e.g. `endpoint("chat/completions")`.
    pub fn endpoint(&self, path: &str) -> String {
        format!(
            "{}/{}",
            self.base_url.trim_end_matches('/'),
            path.trim_start_matches('/')
        )
    }

    /// Checks the base URL before anything is sent.
    ///
    /// # Errors
    /// A message saying what is wrong with the base URL: not `http(s)://`, has a query or
    /// embedded credentials (keys never go into URLs), or contains the key itself.
    pub fn validate(&self) -> Result<(), String> {
        let url = self.base_url.trim();
        let Some(rest) = url
            .strip_prefix("https://")
            .or_else(|| url.strip_prefix("http://"))
        else {
            return Err(format!(
                "base URL `{url}` must start with http:// or https:// (e.g. {})",
                self.api.default_base_url()
            ));
        };
        let host = rest.split('/').next().unwrap_or_default();
        if host.is_empty() {
            return Err(format!("base URL `{url}` has no host"));
        }
        if host.contains('@') || url.contains('?') || url.contains('#') {
            return Err(
                "the base URL must not contain credentials, a query or a fragment: \
                 the API key is sent in a header, never in the URL"
                    .to_owned(),
            );
        }
        if let Some(key) = &self.api_key {
            if !key.0.is_empty() && url.contains(&key.0) {
                return Err(
                    "the base URL contains the API key: remove it; the key is sent in a \
                            header only"
                        .to_owned(),
                );
            }
        }
        if self.model.trim().is_empty() {
            return Err("no model name: set the model (e.g. --model gpt-4o-mini)".to_owned());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_debug_is_redacted() {
        let cfg = ProviderConfig::new(ApiKind::OpenAi, "m", Some(ApiKey::new(" sk-123 \n")));
        let shown = format!("{cfg:?}");
        assert!(!shown.contains("sk-123"), "{shown}");
        assert_eq!(
            cfg.api_key.as_ref().map(ApiKey::expose_secret),
            Some("sk-123")
        );
    }

    #[test]
    fn endpoint_joins_one_slash() {
        let mut cfg = ProviderConfig::new(ApiKind::OpenAi, "m", None);
        cfg.base_url = "http://localhost:11434/v1/".into();
        assert_eq!(
            cfg.endpoint("/chat/completions"),
            "http://localhost:11434/v1/chat/completions"
        );
    }

    #[test]
    fn validate_rejects_bad_urls() {
        let mut cfg = ProviderConfig::new(ApiKind::Anthropic, "m", Some(ApiKey::new("sk-9")));
        assert!(cfg.validate().is_ok());
        for bad in [
            "ftp://x",
            "http://",
            "http://u:p@h/v1",
            "http://h/v1?key=sk-9",
            "http://h/sk-9",
        ] {
            cfg.base_url = bad.into();
            let err = cfg.validate().unwrap_err();
            assert!(!err.contains("sk-9"), "{bad}: {err}");
        }
    }
}
