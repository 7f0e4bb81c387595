//! The HTTP seam: plain request/response values and the [`Transport`] and [`Sleep`] traits
//! through which the caller (CLI, page, test) supplies the network and the passing of time.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

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

/// A cancellation signal shared between the caller and requests in flight. Cancelling ends
/// a request at once, even mid-transfer or mid-backoff (its future resolves to
/// `ProviderError::Cancelled`); dropping a request's future cancels it too. Any thread may
/// cancel.
#[derive(Debug, Clone, Default)]
pub struct CancelToken(Arc<CancelInner>);

#[derive(Debug, Default)]
struct CancelInner {
    cancelled: AtomicBool,
    wakers: Mutex<Vec<Waker>>,
}

impl CancelToken {
    /// A token that is not cancelled.
    pub fn new() -> Self {
        Self::default()
    }

    /// Cancels every request holding this token.
    pub fn cancel(&self) {
        self.0.cancelled.store(true, Ordering::SeqCst);
        let wakers = match self.0.wakers.lock() {
            Ok(mut w) => std::mem::take(&mut *w),
            Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
        };
        for w in wakers {
            w.wake();
        }
    }

    /// Whether [`cancel`](Self::cancel) was called.
    pub fn is_cancelled(&self) -> bool {
        self.0.cancelled.load(Ordering::SeqCst)
    }

    /// Resolves once the token is cancelled.
    pub fn cancelled(&self) -> Cancelled<'_> {
        Cancelled(self)
    }

    /// Runs `fut` unless the token is cancelled first; `None` means cancelled.
    pub async fn guard<F: Future>(&self, fut: F) -> Option<F::Output> {
        if self.is_cancelled() {
            return None;
        }
        let fut = std::pin::pin!(fut);
        let cancelled = self.cancelled();
        match futures_util::future::select(fut, cancelled).await {
            futures_util::future::Either::Left((out, _)) => Some(out),
            futures_util::future::Either::Right(((), _)) => None,
        }
    }
}

/// The future of [`CancelToken::cancelled`].
#[derive(Debug)]
pub struct Cancelled<'a>(&'a CancelToken);

impl Future for Cancelled<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0.is_cancelled() {
            return Poll::Ready(());
        }
        let mut wakers = match self.0 .0.wakers.lock() {
            Ok(w) => w,
            Err(poisoned) => poisoned.into_inner(),
        };
        if !wakers.iter().any(|w| w.will_wake(cx.waker())) {
            wakers.push(cx.waker().clone());
        }
        drop(wakers);
        // Cancelled between the check and the registration: do not miss it.
        if self.0.is_cancelled() {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
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

    /// Never ready: a request that hangs.
    struct Hang;
    impl Future for Hang {
        type Output = u8;
        fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<u8> {
            Poll::Pending
        }
    }

    #[test]
    fn guard_ends_a_hanging_future_when_cancelled() {
        let token = CancelToken::new();
        let canceller = async {
            futures_util::future::ready(()).await;
            token.cancel();
        };
        let (out, ()) =
            futures_executor::block_on(futures_util::future::join(token.guard(Hang), canceller));
        assert_eq!(out, None);
        let fresh = CancelToken::new();
        assert_eq!(
            futures_executor::block_on(fresh.guard(async { 7 })),
            Some(7)
        );
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
