//! `fetch` and `setTimeout` behind the core's sans-IO provider traits.

use memtrace::provider::{HttpRequest, HttpResponse, Sleep, Transport, TransportError};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    AbortController, AbortSignal, Headers, Request, RequestInit, RequestRedirect, Response,
};

#[wasm_bindgen]
extern "C" {
    /// The global `fetch` (window, worker or Node).
    #[wasm_bindgen(js_name = fetch)]
    fn global_fetch(request: &Request) -> js_sys::Promise;
}

/// Sends requests with `fetch`.
#[derive(Debug, Default, Clone)]
pub struct FetchTransport {
    cancel: Option<AbortSignal>,
}

impl FetchTransport {
    /// A transport whose requests abort when `controller` aborts (the page's Stop button).
    pub fn with_cancel(controller: &AbortController) -> Self {
        Self::with_signal(controller.signal())
    }

    /// A transport whose requests abort when `signal` does (a caller's `AbortSignal`).
    pub fn with_signal(signal: AbortSignal) -> Self {
        Self {
            cancel: Some(signal),
        }
    }

    fn signal(&self, timeout_ms: u64) -> AbortSignal {
        let timeout = AbortSignal::timeout_with_f64(timeout_ms.max(1) as f64);
        match &self.cancel {
            Some(cancel) => AbortSignal::any(&js_sys::Array::of2(&timeout, cancel)),
            None => timeout,
        }
    }
}

fn prop(v: &JsValue, key: &str) -> String {
    js_sys::Reflect::get(v, &JsValue::from_str(key))
        .ok()
        .and_then(|s| s.as_string())
        .unwrap_or_default()
}

/// Maps a rejected fetch: the timeout signal rejects with `TimeoutError`, the caller's signal
/// with `AbortError`, and anything else the browser reports as `TypeError` without detail
/// (server down, or CORS refused; a page cannot tell which).
fn fetch_error(e: &JsValue, timeout_ms: u64) -> TransportError {
    match prop(e, "name").as_str() {
        "TimeoutError" => TransportError::Timeout {
            after_ms: timeout_ms,
        },
        "AbortError" => TransportError::Cancelled,
        "" => TransportError::Network(format!("{e:?}")),
        name => TransportError::Blocked(format!("{name}: {}", prop(e, "message"))),
    }
}

fn build(req: &HttpRequest, signal: &AbortSignal) -> Result<Request, JsValue> {
    let init = RequestInit::new();
    let get = req.method.eq_ignore_ascii_case("GET");
    init.set_method(if get { "GET" } else { "POST" });
    init.set_redirect(RequestRedirect::Error);
    init.set_signal(Some(signal));
    let headers = Headers::new()?;
    for (k, v) in &req.headers {
        headers.append(k, v)?;
    }
    init.set_headers(&headers);
    if !get {
        init.set_body(&JsValue::from_str(&req.body));
    }
    Request::new_with_str_and_init(&req.url, &init)
}

impl Transport for FetchTransport {
    async fn send(&self, req: &HttpRequest) -> Result<HttpResponse, TransportError> {
        let signal = self.signal(req.timeout_ms);
        let request = build(req, &signal).map_err(|e| {
            TransportError::Network(format!(
                "could not build the request: {}",
                prop(&e, "message")
            ))
        })?;
        let resp = JsFuture::from(global_fetch(&request))
            .await
            .map_err(|e| fetch_error(&e, req.timeout_ms))?;
        let resp: Response = resp
            .dyn_into()
            .map_err(|_| TransportError::Network("fetch returned no Response".into()))?;
        let mut headers = Vec::new();
        if let Ok(Some(entries)) = js_sys::try_iter(&resp.headers()) {
            for pair in entries.flatten() {
                let pair = js_sys::Array::from(&pair);
                if let (Some(k), Some(v)) = (pair.get(0).as_string(), pair.get(1).as_string()) {
                    headers.push((k.to_ascii_lowercase(), v));
                }
            }
        }
        let text = resp.text().map_err(|e| fetch_error(&e, req.timeout_ms))?;
        let body = JsFuture::from(text)
            .await
            .map_err(|e| fetch_error(&e, req.timeout_ms))?
            .as_string()
            .unwrap_or_default();
        Ok(HttpResponse {
            status: resp.status(),
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
