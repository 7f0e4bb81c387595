//! Where the LLM is, as every host's caller says it, and the one provider configuration built
//! from it with its defaults: the API (`openai`, any OpenAI-compatible server, or `anthropic`),
//! its public URL and default model, a 60 s timeout per attempt, 6 retries from 500 ms.
//! The host brings the transport (`ureq` natively, `fetch` in a browser) and the key.

use serde::Deserialize;

use super::SessionError;
use crate::provider::{ApiKey, ApiKind, ProviderConfig};

/// The default model of each API.
pub const DEFAULT_MODELS: [(&str, &str); 2] = [
    ("openai", "gpt-4o-mini"),
    ("anthropic", "claude-3-5-haiku-latest"),
];

/// An LLM provider's settings; what a host leaves out takes the default.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ProviderOptions {
    /// `openai` (any OpenAI-compatible server) or `anthropic`.
    pub kind: String,
    /// Up to the version path (`http://localhost:11434/v1`); `None`: the API's public URL.
    pub base_url: Option<String>,
    /// `None`: the API's default model ([`DEFAULT_MODELS`]).
    pub model: Option<String>,
    /// Per attempt.
    pub timeout_ms: u64,
    /// Retries of a request on 429, 5xx, timeouts and network errors.
    pub max_retries: u32,
    /// The first backoff (doubled each retry, jittered; a longer `Retry-After` wins).
    pub retry_base_ms: u64,
    /// Output tokens per reply at most, for requests that set no limit.
    pub max_tokens: Option<u32>,
}

impl Default for ProviderOptions {
    fn default() -> Self {
        let cfg = ProviderConfig::new(ApiKind::OpenAi, "", None);
        ProviderOptions {
            kind: "openai".to_owned(),
            base_url: None,
            model: None,
            timeout_ms: cfg.timeout_ms,
            max_retries: cfg.retry.max_retries,
            retry_base_ms: cfg.retry.base_delay_ms,
            max_tokens: None,
        }
    }
}

impl ProviderOptions {
    /// The API these settings name.
    ///
    /// # Errors
    /// [`SessionError::Argument`] for a kind other than `openai` or `anthropic`.
    pub fn api(&self) -> Result<ApiKind, SessionError> {
        match self.kind.trim() {
            "openai" | "" => Ok(ApiKind::OpenAi),
            "anthropic" => Ok(ApiKind::Anthropic),
            other => Err(SessionError::Argument(format!(
                "unknown provider kind {other:?}; use \"openai\" (any OpenAI-compatible server) \
                 or \"anthropic\""
            ))),
        }
    }

    /// The model these settings name, else the API's default.
    ///
    /// # Errors
    /// As [`ProviderOptions::api`].
    pub fn model(&self) -> Result<String, SessionError> {
        let api = self.api()?;
        Ok(match self.model.as_deref().map(str::trim) {
            Some(m) if !m.is_empty() => m.to_owned(),
            _ => DEFAULT_MODELS
                .iter()
                .find(|(k, _)| *k == api_name(api))
                .map_or("", |(_, m)| m)
                .to_owned(),
        })
    }

    /// The provider configuration with `api_key` (a blank key is none), checked before
    /// anything is sent.
    ///
    /// # Errors
    /// [`SessionError::Argument`] for an unknown kind; [`SessionError::Provider`] for a base
    /// URL or model that cannot be used (the sentence says which).
    pub fn config(&self, api_key: Option<&str>) -> Result<ProviderConfig, SessionError> {
        let key = api_key.filter(|k| !k.trim().is_empty()).map(ApiKey::new);
        let mut cfg = ProviderConfig::new(self.api()?, self.model()?, key);
        if let Some(url) = self.base_url.as_deref().map(str::trim) {
            if !url.is_empty() {
                url.clone_into(&mut cfg.base_url);
            }
        }
        cfg.timeout_ms = self.timeout_ms.max(1);
        cfg.retry.max_retries = self.max_retries;
        cfg.retry.base_delay_ms = self.retry_base_ms;
        cfg.max_tokens = self.max_tokens.filter(|n| *n > 0);
        cfg.validate().map_err(SessionError::Provider)?;
        Ok(cfg)
    }
}

/// `openai` or `anthropic`: the kind that names `api`.
pub fn api_name(api: ApiKind) -> &'static str {
    match api {
        ApiKind::OpenAi => "openai",
        ApiKind::Anthropic => "anthropic",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_fill_what_is_left_out() {
        let cfg = ProviderOptions::default().config(Some("  ")).unwrap();
        assert_eq!(cfg.model, "gpt-4o-mini");
        assert_eq!(cfg.base_url, ApiKind::OpenAi.default_base_url());
        assert!(cfg.api_key.is_none());
        assert_eq!((cfg.timeout_ms, cfg.retry.max_retries), (60_000, 6));
        let o: ProviderOptions = serde_json::from_str(
            r#"{"kind": "anthropic", "base_url": " http://127.0.0.1:9/v1 ", "max_tokens": 0}"#,
        )
        .unwrap();
        let cfg = o.config(Some("k")).unwrap();
        assert_eq!(cfg.model, "claude-3-5-haiku-latest");
        assert_eq!(cfg.base_url, "http://127.0.0.1:9/v1");
        assert_eq!(cfg.max_tokens, None);
        assert!(cfg.api_key.is_some());
    }

    #[test]
    fn a_bad_kind_or_url_says_what_to_fix() {
        let o = ProviderOptions {
            kind: "gemini".into(),
            ..ProviderOptions::default()
        };
        assert!(
            matches!(o.config(None), Err(SessionError::Argument(m)) if m.contains("anthropic"))
        );
        let o = ProviderOptions {
            base_url: Some("ftp://x".into()),
            ..ProviderOptions::default()
        };
        assert!(matches!(o.config(None), Err(SessionError::Provider(_))));
    }
}
