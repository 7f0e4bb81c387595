//! [`HttpLlm`]: an [`Llm`] over HTTP. Builds the request for the configured API shape, sends it
//! through the caller's [`Transport`], retries what is worth retrying (waiting through the
//! caller's [`Sleep`]), parses the reply and keeps count of attempts, retries and tokens.

use std::cell::{Cell, RefCell};

use super::config::{ApiKind, ProviderConfig};
use super::cost::UsageLedger;
use super::embeddings::{self, Embeddings};
use super::http::{CancelToken, HttpRequest, HttpResponse, Sleep, Transport, TransportError};
use super::retry::{is_retryable_status, retry_after_ms};
use super::{anthropic, openai, ChatRequest, ChatResponse, Llm, ProviderError};
use crate::util::rng::SplitMix64;

/// Retries of a fetch the browser refused (see [`TransportError::Blocked`]).
pub const BLOCKED_RETRIES: u32 = 2;

/// What a provider has done so far.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CallStats {
    /// Logical calls (`chat` / `embed`).
    pub calls: u64,
    /// HTTP requests sent, retries included.
    pub attempts: u64,
    /// Attempts after a retryable failure.
    pub retries: u64,
    /// Total backoff asked of the sleeper.
    pub waited_ms: u64,
    /// The longest single wait.
    pub max_wait_ms: u64,
    /// Calls that ended in an error.
    pub failures: u64,
    /// Answered calls whose reply had no token counts (their usage is estimated).
    pub estimated_calls: u64,
    pub usage: UsageLedger,
}

/// An HTTP chat (and embeddings) provider.
pub struct HttpLlm<T, S> {
    cfg: ProviderConfig,
    transport: T,
    sleep: S,
    cancel: CancelToken,
    rng: RefCell<SplitMix64>,
    stats: RefCell<CallStats>,
    /// The server refused `response_format: json_schema`: send schemas as `json_object`.
    json_object: Cell<bool>,
}

impl<T: Transport, S: Sleep> HttpLlm<T, S> {
    /// A provider; the configuration is checked first.
    ///
    /// # Errors
    /// [`ProviderError::Config`] when the base URL or model is unusable.
    pub fn new(cfg: ProviderConfig, transport: T, sleep: S) -> Result<Self, ProviderError> {
        cfg.validate().map_err(ProviderError::Config)?;
        let rng = RefCell::new(SplitMix64::new(cfg.retry.seed));
        Ok(Self {
            cfg,
            transport,
            sleep,
            cancel: CancelToken::new(),
            rng,
            stats: RefCell::default(),
            json_object: Cell::new(false),
        })
    }

    /// Uses `token` to cancel this provider's calls.
    #[must_use]
    pub fn with_cancel(mut self, token: CancelToken) -> Self {
        self.cancel = token;
        self
    }

    /// The configuration (its key prints redacted).
    pub fn config(&self) -> &ProviderConfig {
        &self.cfg
    }

    /// Counts so far.
    pub fn stats(&self) -> CallStats {
        self.stats.borrow().clone()
    }

    /// The transport (tests inspect what it saw).
    pub fn transport(&self) -> &T {
        &self.transport
    }

    /// Embeds `inputs` (OpenAI-compatible APIs only).
    ///
    /// # Errors
    /// [`ProviderError::Config`] for the Anthropic shape (it has no embeddings API), else as
    /// [`Llm::chat`].
    pub async fn embed(&self, inputs: &[String]) -> Result<Embeddings, ProviderError> {
        if self.cfg.api == ApiKind::Anthropic {
            return Err(ProviderError::Config(
                "Anthropic has no embeddings API: configure an OpenAI-compatible provider for \
                 embeddings"
                    .into(),
            ));
        }
        self.stats.borrow_mut().calls += 1;
        let result = async {
            let resp = self
                .send(&embeddings::build_embed(&self.cfg, inputs))
                .await?;
            embeddings::parse_embed(&resp.body, inputs.len())
        }
        .await;
        self.finish(result.map(|e| {
            let model = if e.model.is_empty() {
                self.cfg.model.clone()
            } else {
                e.model.clone()
            };
            (e, model)
        }))
    }

    /// Sends with retries; returns a 2xx response.
    async fn send(&self, req: &HttpRequest) -> Result<HttpResponse, ProviderError> {
        let mut retry = 0u32;
        loop {
            if self.cancel.is_cancelled() {
                return Err(ProviderError::Cancelled);
            }
            self.stats.borrow_mut().attempts += 1;
            let Some(outcome) = self.cancel.guard(self.transport.send(req)).await else {
                return Err(ProviderError::Cancelled);
            };
            let (error, wait_hint) = match outcome {
                Ok(resp) if (200..300).contains(&resp.status) => return Ok(resp),
                Ok(resp) => {
                    let err = self.status_error(req, &resp);
                    if !is_retryable_status(resp.status) {
                        return Err(err);
                    }
                    (err, retry_after_ms(&resp.headers))
                }
                Err(TransportError::Timeout { after_ms }) => {
                    (ProviderError::Timeout { after_ms }, None)
                }
                Err(TransportError::Network(m)) => (ProviderError::Network(self.redact(&m)), None),
                // A browser reports a dropped connection and a CORS refusal alike: retry a
                // little, then say which setting to change.
                Err(TransportError::Blocked(m)) if retry >= BLOCKED_RETRIES => {
                    return Err(self.blocked(&m));
                }
                Err(TransportError::Blocked(m)) => (self.blocked(&m), None),
                Err(TransportError::Cancelled) => return Err(ProviderError::Cancelled),
            };
            if retry >= self.cfg.retry.max_retries {
                return Err(error);
            }
            if let Some(ms) = wait_hint.filter(|ms| *ms > self.cfg.retry.max_retry_after_ms) {
                return Err(ProviderError::Http {
                    status: 429,
                    message: format!(
                        "the provider asks to wait {} s before retrying, longer than the {} s \
                         limit: try again later or raise the limit",
                        ms.div_ceil(1000),
                        self.cfg.retry.max_retry_after_ms / 1000
                    ),
                });
            }
            let wait = self
                .cfg
                .retry
                .delay_ms(retry, wait_hint, &mut self.rng.borrow_mut());
            {
                let mut s = self.stats.borrow_mut();
                s.retries += 1;
                s.waited_ms += wait;
                s.max_wait_ms = s.max_wait_ms.max(wait);
            }
            if self.cancel.guard(self.sleep.sleep(wait)).await.is_none() {
                return Err(ProviderError::Cancelled);
            }
            retry += 1;
        }
    }

    fn status_error(&self, req: &HttpRequest, resp: &HttpResponse) -> ProviderError {
        match resp.status {
            401 => ProviderError::Unauthorized,
            404 => ProviderError::NotFound {
                url: req.url.clone(),
            },
            429 => ProviderError::RateLimited,
            status => {
                let message = openai::error_message(&resp.body).unwrap_or_else(|| {
                    let t: String = resp.body.chars().take(300).collect();
                    if t.trim().is_empty() {
                        "(empty body)".to_owned()
                    } else {
                        t
                    }
                });
                ProviderError::Http {
                    status,
                    message: self.redact(&message),
                }
            }
        }
    }

    fn blocked(&self, detail: &str) -> ProviderError {
        ProviderError::Blocked {
            url: self.cfg.base_url.clone(),
            hint: format!(
                "{} ({})",
                cors_hint(&self.cfg.base_url),
                self.redact(detail)
            ),
        }
    }

    /// Removes the key from text that came from elsewhere (a server's error body).
    fn redact(&self, text: &str) -> String {
        match self
            .cfg
            .api_key
            .as_ref()
            .map(super::config::ApiKey::expose_secret)
        {
            Some(k) if !k.is_empty() => text.replace(k, "<redacted>"),
            _ => text.to_owned(),
        }
    }

    fn finish<R>(&self, result: Result<(R, String), ProviderError>) -> Result<R, ProviderError>
    where
        R: HasUsage,
    {
        let mut s = self.stats.borrow_mut();
        match result {
            Ok((r, model)) => {
                s.usage.add(&model, r.usage());
                Ok(r)
            }
            Err(e) => {
                s.failures += 1;
                Err(e)
            }
        }
    }
}

trait HasUsage {
    fn usage(&self) -> super::Usage;
}
impl HasUsage for ChatResponse {
    fn usage(&self) -> super::Usage {
        self.usage
    }
}
impl HasUsage for Embeddings {
    fn usage(&self) -> super::Usage {
        self.usage
    }
}

impl<T: Transport, S: Sleep> Llm for HttpLlm<T, S> {
    async fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, ProviderError> {
        self.stats.borrow_mut().calls += 1;
        let result = async {
            let (mut http, structured) = match self.cfg.api {
                ApiKind::OpenAi => (
                    openai::build_chat_with(&self.cfg, req, self.json_object.get()),
                    false,
                ),
                ApiKind::Anthropic => (
                    anthropic::build_chat(&self.cfg, req),
                    req.json_schema.is_some(),
                ),
            };
            let resp = match self.send(&http).await {
                // A server that refuses the `json_schema` form (its error names
                // `response_format`) is asked again, and from now on, with `json_object`.
                Err(ProviderError::Http { status, message })
                    if self.cfg.api == ApiKind::OpenAi
                        && req.json_schema.is_some()
                        && !self.json_object.get()
                        && (400..600).contains(&status)
                        && message.contains("response_format") =>
                {
                    self.json_object.set(true);
                    http = openai::build_chat_with(&self.cfg, req, true);
                    self.send(&http).await?
                }
                other => other?,
            };
            let mut reply = match self.cfg.api {
                ApiKind::OpenAi => openai::parse_chat(&resp.body),
                ApiKind::Anthropic => anthropic::parse_chat(&resp.body, structured),
            }?;
            if reply.usage_estimated {
                reply.estimate_usage(&http.body);
                self.stats.borrow_mut().estimated_calls += 1;
            }
            Ok(reply)
        }
        .await;
        self.finish(result.map(|r| {
            let model = if r.model.is_empty() {
                self.cfg.model.clone()
            } else {
                r.model.clone()
            };
            (r, model)
        }))
    }
}

/// What to change so a browser page may call this base URL, by the server it looks like.
pub fn cors_hint(base_url: &str) -> &'static str {
    let u = base_url.to_ascii_lowercase();
    if u.contains(":11434") || u.contains("ollama") {
        "Ollama blocks other origins by default: restart it with OLLAMA_ORIGINS set, e.g. \
         `OLLAMA_ORIGINS=* ollama serve`"
    } else if u.contains(":1234") || u.contains("lmstudio") || u.contains("lm-studio") {
        "LM Studio: in the Developer tab open Server Settings and turn on \"Enable CORS\", then \
         restart the server"
    } else if u.contains(":8000") || u.contains("vllm") {
        "vLLM: start the server with `--allowed-origins '[\"*\"]'`"
    } else if u.contains(":8080") || u.contains("llama") {
        "llama.cpp server allows all origins by default: check that it runs at this base URL"
    } else if u.contains("anthropic.com") {
        "Anthropic allows browser calls with the direct-browser-access header (sent): check the \
         network and the base URL"
    } else {
        "check that the server runs at this base URL and that it allows cross-origin requests \
         from this page (Access-Control-Allow-Origin, and OPTIONS preflight for `authorization` \
         and `content-type`)"
    }
}

#[cfg(test)]
mod tests;
