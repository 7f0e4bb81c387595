//! Running the LLM attribution methods from the page, the pure parts: the provider settings the
//! page keeps (never the key) and the token and cost meter (a finished run's verdict:
//! `memtrace::session::Verdict::of_run`; the cases a batch still has to run:
//! `memtrace::session::pending`). Tested natively.

use memtrace::provider::{ApiKey, ApiKind, ProviderConfig, Usage};
pub use memtrace::session::api_name;
use memtrace::session::ProviderOptions;
use serde::{Deserialize, Serialize};

/// The provider settings kept with the page state. The key is not here: it lives in
/// `sessionStorage` (or `localStorage` when `remember_key`), see `services::http`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ProviderSettings {
    pub api: ApiKind,
    pub base_url: String,
    pub model: String,
    /// US dollars per million input tokens.
    pub input_usd_per_mtok: f64,
    /// US dollars per million output tokens.
    pub output_usd_per_mtok: f64,
    /// Keep the key in `localStorage` across sessions (opt-in).
    pub remember_key: bool,
    /// Per attempt.
    pub timeout_ms: u64,
    /// LLM calls per case at most (the agents' step cap).
    pub max_calls: usize,
    /// Output tokens per reply at most (0: the provider's default); small local models may
    /// otherwise write until their context is full.
    pub max_tokens: u32,
}

impl Default for ProviderSettings {
    fn default() -> Self {
        ProviderSettings {
            api: ApiKind::OpenAi,
            base_url: ApiKind::OpenAi.default_base_url().to_owned(),
            model: "gpt-4o-mini".to_owned(),
            input_usd_per_mtok: 0.15,
            output_usd_per_mtok: 0.60,
            remember_key: false,
            timeout_ms: 60_000,
            max_calls: 40,
            max_tokens: 0,
        }
    }
}

impl ProviderSettings {
    /// The name the key is stored under: one key per API shape and base URL.
    pub fn key_slot(&self) -> String {
        format!(
            "{}:{}",
            api_name(self.api),
            self.base_url.trim().trim_end_matches('/')
        )
    }

    /// The core provider configuration with `key`.
    ///
    /// # Errors
    /// What is wrong with the base URL or model, and what to do.
    pub fn config(&self, key: Option<&ApiKey>) -> Result<ProviderConfig, String> {
        let options = ProviderOptions {
            kind: api_name(self.api).to_owned(),
            base_url: Some(self.base_url.clone()),
            model: Some(self.model.clone()),
            timeout_ms: self.timeout_ms.max(1_000),
            max_tokens: Some(self.max_tokens),
            ..ProviderOptions::default()
        };
        let cfg = options
            .config(key.map(ApiKey::expose_secret))
            .map_err(|e| format!("{e}. Fix it in the provider settings."))?;
        if !csp_allows(&cfg.base_url) {
            return Err(format!(
                "provider settings: this page may call plain-http servers only on this machine \
                 (its Content-Security-Policy allows https: and http://127.0.0.1 / localhost); \
                 `{}` is neither: use an https:// URL or a local server",
                cfg.base_url
            ));
        }
        Ok(cfg)
    }

    /// The prices set, per million tokens.
    pub fn price(&self) -> memtrace::provider::Price {
        memtrace::provider::Price {
            input_usd_per_mtok: self.input_usd_per_mtok,
            output_usd_per_mtok: self.output_usd_per_mtok,
        }
    }

    /// What `usage` costs at these prices.
    pub fn cost_usd(&self, usage: Usage) -> f64 {
        memtrace::session::cost_usd(self.price(), usage)
    }
}

/// Whether the page's Content-Security-Policy (`connect-src 'self' https: http://127.0.0.1:*
/// http://localhost:*` in index.html) lets the page fetch `base_url`.
pub fn csp_allows(base_url: &str) -> bool {
    let url = base_url.trim().to_ascii_lowercase();
    if url.starts_with("https://") {
        return true;
    }
    let Some(rest) = url.strip_prefix("http://") else {
        return false;
    };
    let host = rest.split('/').next().unwrap_or_default();
    let name = host.rsplit_once(':').map_or(host, |(h, _)| h);
    matches!(name, "127.0.0.1" | "localhost")
}

/// Calls and tokens of a run so far: the core's meter.
pub use memtrace::optimize::Meter;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cost_follows_the_prices() {
        let p = ProviderSettings {
            input_usd_per_mtok: 2.0,
            output_usd_per_mtok: 10.0,
            ..ProviderSettings::default()
        };
        let usage = Usage {
            input_tokens: 1_500_000,
            output_tokens: 20_000,
        };
        assert!((p.cost_usd(usage) - 3.2).abs() < 1e-9);
    }

    #[test]
    fn settings_never_serialize_a_key_and_validate_urls() {
        let mut p = ProviderSettings::default();
        let json = serde_json::to_string(&p).unwrap();
        assert!(!json.contains("key\":\"") && json.contains("remember_key"));
        p.base_url = "ftp://x".into();
        let err = p.config(Some(&ApiKey::new("sk-secret"))).unwrap_err();
        assert!(err.contains("http") && !err.contains("sk-secret"), "{err}");
        p.base_url = "http://192.168.1.5:11434/v1".into();
        let err = p.config(None).unwrap_err();
        assert!(err.contains("Content-Security-Policy"), "{err}");
        assert!(csp_allows("https://api.openai.com/v1") && csp_allows("http://localhost:11434/v1"));
        assert!(!csp_allows("http://localhost.evil.com/v1"));
        p.base_url = "http://127.0.0.1:9/v1/".into();
        assert_eq!(p.key_slot(), "openai:http://127.0.0.1:9/v1");
        assert!(p.config(None).is_ok());
    }
}
