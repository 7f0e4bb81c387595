//! The browser [`Transport`]: `fetch` through gloo-net, with a per-request timeout
//! (`AbortSignal.timeout`), optional cancellation (an `AbortController` the page owns) and no
//! redirects (`redirect: "error"`, so a credential header never follows one). Also where the
//! page keeps the API key: for the tab's session, or remembered only when the user opts in.

use gloo_net::http::{Method, RequestBuilder};
use memtrace::provider::{ApiKey, HttpRequest, HttpResponse, Sleep, Transport, TransportError};
use wasm_bindgen::JsValue;
use web_sys::{AbortController, AbortSignal, RequestRedirect};

/// Sends requests with `fetch`.
#[derive(Debug, Default, Clone)]
pub struct FetchTransport {
    cancel: Option<AbortSignal>,
}

impl FetchTransport {
    /// A transport whose requests abort when `controller` aborts (the page's Stop button).
    pub fn with_cancel(controller: &AbortController) -> Self {
        Self {
            cancel: Some(controller.signal()),
        }
    }

    fn signal(&self, timeout_ms: u64) -> AbortSignal {
        let timeout = AbortSignal::timeout_with_f64(timeout_ms.max(1) as f64);
        match &self.cancel {
            Some(cancel) => {
                let both = js_sys::Array::of2(&timeout, cancel);
                AbortSignal::any(&both)
            }
            None => timeout,
        }
    }
}

/// Maps a failed fetch: the timeout signal rejects with `TimeoutError`, the page's controller
/// with `AbortError`, and anything else the browser reports as `TypeError` without detail
/// (server down, or CORS refused; the page cannot tell which).
fn fetch_error(e: &gloo_net::Error, timeout_ms: u64) -> TransportError {
    match e {
        gloo_net::Error::JsError(js) if js.name == "TimeoutError" => TransportError::Timeout {
            after_ms: timeout_ms,
        },
        gloo_net::Error::JsError(js) if js.name == "AbortError" => TransportError::Cancelled,
        gloo_net::Error::JsError(js) => {
            TransportError::Blocked(format!("{}: {}", js.name, js.message))
        }
        other => TransportError::Network(other.to_string()),
    }
}

impl Transport for FetchTransport {
    async fn send(&self, req: &HttpRequest) -> Result<HttpResponse, TransportError> {
        let method = if req.method.eq_ignore_ascii_case("GET") {
            Method::GET
        } else {
            Method::POST
        };
        let signal = self.signal(req.timeout_ms);
        let mut builder = RequestBuilder::new(&req.url)
            .method(method)
            .redirect(RequestRedirect::Error)
            .abort_signal(Some(&signal));
        for (k, v) in &req.headers {
            builder = builder.header(k, v);
        }
        let request = if req.method.eq_ignore_ascii_case("GET") {
            builder.build()
        } else {
            builder.body(JsValue::from_str(&req.body))
        }
        .map_err(|e| TransportError::Network(format!("could not build the request: {e}")))?;
        let resp = request
            .send()
            .await
            .map_err(|e| fetch_error(&e, req.timeout_ms))?;
        let status = resp.status();
        let headers = resp
            .headers()
            .entries()
            .map(|(k, v)| (k.to_ascii_lowercase(), v))
            .collect();
        let body = resp
            .text()
            .await
            .map_err(|e| fetch_error(&e, req.timeout_ms))?;
        Ok(HttpResponse {
            status,
            headers,
            body,
        })
    }
}

/// Waits with `setTimeout`.
#[derive(Debug, Default, Clone, Copy)]
pub struct TimerSleep;

impl Sleep for TimerSleep {
    async fn sleep(&self, ms: u64) {
        gloo_timers::future::TimeoutFuture::new(u32::try_from(ms).unwrap_or(u32::MAX)).await;
    }
}

const KEY_PREFIX: &str = "memtrace.api-key.";

/// Keeps `key` for `provider`: in `sessionStorage` (gone when the tab closes), or in
/// `localStorage` when the user ticked "remember". Choosing not to remember also forgets a
/// previously remembered key.
///
/// # Errors
/// When the browser refuses storage (private mode, quota): the message says so.
pub fn store_key(provider: &str, key: &ApiKey, remember: bool) -> Result<(), String> {
    let name = format!("{KEY_PREFIX}{provider}");
    let (keep, drop) = (storage(remember)?, storage(!remember)?);
    drop.remove_item(&name)
        .map_err(|_| "the browser refused to clear the stored key".to_owned())?;
    keep.set_item(&name, key.expose_secret()).map_err(|_| {
        "the browser refused to store the key (private mode or storage full)".to_owned()
    })
}

/// The stored key of `provider`: this tab's first, else a remembered one.
pub fn load_key(provider: &str) -> Option<ApiKey> {
    let name = format!("{KEY_PREFIX}{provider}");
    [false, true]
        .into_iter()
        .filter_map(|remember| storage(remember).ok())
        .find_map(|s| s.get_item(&name).ok().flatten())
        .filter(|k| !k.is_empty())
        .map(ApiKey::new)
}

/// Forgets the key of `provider` everywhere.
pub fn forget_key(provider: &str) {
    let name = format!("{KEY_PREFIX}{provider}");
    for remember in [false, true] {
        if let Ok(s) = storage(remember) {
            let _ = s.remove_item(&name);
        }
    }
}

fn storage(remember: bool) -> Result<web_sys::Storage, String> {
    let window = web_sys::window().ok_or("no window")?;
    let s = if remember {
        window.local_storage()
    } else {
        window.session_storage()
    };
    s.ok()
        .flatten()
        .ok_or_else(|| "the browser has no web storage here".to_owned())
}
