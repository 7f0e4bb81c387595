//! The HTTP seam: plain request/response values and the [`Transport`] and [`Sleep`] traits
//! through which the caller (CLI, page, test) supplies the network and the passing of time.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// An HTTP request, built by the core and sent by a [`Transport`].
#[derive(Clone, PartialEq, Eq)]
pub struct HttpRequest {
    /// `GET` or `POST`.
    pub method: String,
    /// The full URL. Never contains a key.
    pub url: String,
    /// Header names are lower case.
    pub headers: Vec<(String, String)>,
    pub body: String,
    /// The transport gives up after this long and reports [`TransportError::Timeout`].
    pub timeout_ms: u64,
}

impl HttpRequest {
    /// The value of a header (name compared case-insensitively).
    pub fn header(&self, name: &str) -> Option<&str> {
        find_header(&self.headers, name)
    }
}

/// Debug output hides the values of the credential headers, so a request can be logged.
impl fmt::Debug for HttpRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: Vec<(&str, &str)> = self
            .headers
            .iter()
            .map(|(k, v)| {
                let shown = if is_secret_header(k) {
                    "<redacted>"
                } else {
                    v.as_str()
                };
                (k.as_str(), shown)
            })
            .collect();
        f.debug_struct("HttpRequest")
            .field("method", &self.method)
            .field("url", &self.url)
            .field("headers", &headers)
            .field("body", &self.body)
            .field("timeout_ms", &self.timeout_ms)
            .finish()
    }
}

/// Whether a header carries a credential (`authorization`, `x-api-key`, `api-key`).
pub fn is_secret_header(name: &str) -> bool {
    ["authorization", "x-api-key", "api-key"]
        .iter()
        .any(|s| name.eq_ignore_ascii_case(s))
}

/// An HTTP response as the transport received it, whatever its status.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HttpResponse {
    pub status: u16,
    /// Header names are lower case.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl HttpResponse {
    /// The value of a header (name compared case-insensitively).
    pub fn header(&self, name: &str) -> Option<&str> {
        find_header(&self.headers, name)
    }
}

fn find_header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// Why a transport produced no response.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TransportError {
    /// No answer within the request's `timeout_ms`.
    #[error("no reply within {after_ms} ms")]
    Timeout { after_ms: u64 },
    /// The connection failed (refused, reset, DNS, TLS).
    #[error("{0}")]
    Network(String),
    /// The browser refused or failed the fetch without saying why: the server is down or does
    /// not allow cross-origin requests (CORS). Browsers cannot tell the two apart.
    #[error("the browser could not fetch the URL: {0}")]
    Blocked(String),
    /// The caller cancelled the request.
    #[error("cancelled")]
    Cancelled,
}

/// Sends HTTP requests. Implemented with `fetch` in the browser and a blocking client on worker
/// threads in the CLI; in unit tests by a closure over canned replies.
#[allow(async_fn_in_trait)] // single-threaded by design, like `Llm`
pub trait Transport {
    /// Sends one request and returns the response, whatever its status.
    ///
    /// # Errors
    /// A [`TransportError`] when no response arrived.
    async fn send(&self, req: &HttpRequest) -> Result<HttpResponse, TransportError>;
}

/// Waits. The core has no clock: backoff asks this to wait and tests count instead of waiting.
#[allow(async_fn_in_trait)]
pub trait Sleep {
    /// Resolves after `ms` milliseconds (or at once, in tests).
    async fn sleep(&self, ms: u64);
}

/// A sleeper that returns at once and remembers what it was asked: for tests and for replays.
#[derive(Debug, Default)]
pub struct RecordingSleep {
    slept_ms: std::cell::RefCell<Vec<u64>>,
}

impl RecordingSleep {
    /// Every wait asked for, in order.
    pub fn slept_ms(&self) -> Vec<u64> {
        self.slept_ms.borrow().clone()
    }
}

impl Sleep for RecordingSleep {
    async fn sleep(&self, ms: u64) {
        self.slept_ms.borrow_mut().push(ms);
    }
}

/// A cancellation flag shared between the caller and in-flight requests. Cancelling stops
/// retries and waits at the next step; dropping a request's future cancels it at once.
#[derive(Debug, Clone, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    /// A token that is not cancelled.
    pub fn new() -> Self {
        Self::default()
    }

    /// Cancels every request holding this token.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// Whether [`cancel`](Self::cancel) was called.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_hides_credentials() {
        let req = HttpRequest {
            method: "POST".into(),
            url: "http://h/v1".into(),
            headers: vec![
                ("authorization".into(), "Bearer sk-secret".into()),
                ("x-api-key".into(), "sk-secret".into()),
                ("content-type".into(), "application/json".into()),
            ],
            body: "{}".into(),
            timeout_ms: 5,
        };
        let shown = format!("{req:?}");
        assert!(!shown.contains("sk-secret"), "{shown}");
        assert!(shown.contains("application/json"));
        assert_eq!(req.header("Authorization"), Some("Bearer sk-secret"));
    }

    #[test]
    fn cancel_token_is_shared() {
        let a = CancelToken::new();
        let b = a.clone();
        assert!(!b.is_cancelled());
        a.cancel();
        assert!(b.is_cancelled());
    }
}
