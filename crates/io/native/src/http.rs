//! The native [`Transport`]: `ureq`, blocking, one worker thread per request. The core's future
//! waits on a channel, so one thread polling a batch keeps many requests in flight.

use std::io::Read;
use std::thread;
use std::time::Duration;

use futures_channel::oneshot;
use memtrace::provider::{HttpRequest, HttpResponse, Sleep, Transport, TransportError};

/// Sends requests with `ureq` on worker threads. Redirects are not followed, so a credential
/// header can never travel to another host.
#[derive(Clone)]
pub struct NativeTransport {
    agent: ureq::Agent,
}

impl Default for NativeTransport {
    fn default() -> Self {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .user_agent(concat!("memtrace/", env!("CARGO_PKG_VERSION")))
            .build();
        Self {
            agent: config.into(),
        }
    }
}

impl NativeTransport {
    /// Sends on the calling thread, blocking.
    ///
    /// # Errors
    /// [`TransportError::Timeout`] after `req.timeout_ms`, [`TransportError::Network`] for
    /// connection, DNS and TLS failures (the message never includes headers).
    pub fn send_blocking(&self, req: &HttpRequest) -> Result<HttpResponse, TransportError> {
        let timeout = Some(Duration::from_millis(req.timeout_ms.max(1)));
        let result = if req.method.eq_ignore_ascii_case("GET") {
            let mut b = self
                .agent
                .get(&req.url)
                .config()
                .timeout_global(timeout)
                .build();
            for (k, v) in &req.headers {
                b = b.header(k.as_str(), v.as_str());
            }
            b.call()
        } else {
            let mut b = self
                .agent
                .post(&req.url)
                .config()
                .timeout_global(timeout)
                .build();
            for (k, v) in &req.headers {
                b = b.header(k.as_str(), v.as_str());
            }
            b.send(req.body.as_bytes())
        };
        let mut resp = result.map_err(|e| match e {
            ureq::Error::Timeout(_) => TransportError::Timeout {
                after_ms: req.timeout_ms,
            },
            other => TransportError::Network(format!("{} ({other})", req.url)),
        })?;
        let status = resp.status().as_u16();
        let headers = resp
            .headers()
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_ascii_lowercase(),
                    v.to_str().unwrap_or("").to_owned(),
                )
            })
            .collect();
        let mut body = String::new();
        resp.body_mut()
            .as_reader()
            .read_to_string(&mut body)
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::TimedOut => TransportError::Timeout {
                    after_ms: req.timeout_ms,
                },
                _ => {
                    TransportError::Network(format!("{}: reading the reply failed ({e})", req.url))
                }
            })?;
        Ok(HttpResponse {
            status,
            headers,
            body,
        })
    }
}

impl Transport for NativeTransport {
    async fn send(&self, req: &HttpRequest) -> Result<HttpResponse, TransportError> {
        let (tx, rx) = oneshot::channel();
        let me = self.clone();
        let req = req.clone();
        // If the future is dropped (cancelled), the worker finishes and its result is discarded.
        thread::spawn(move || {
            let _ = tx.send(me.send_blocking(&req));
        });
        rx.await.unwrap_or_else(|_| {
            Err(TransportError::Network(
                "the HTTP worker thread died".into(),
            ))
        })
    }
}

/// Real waiting, on a helper thread, so the polling thread keeps serving other requests.
#[derive(Debug, Clone, Copy, Default)]
pub struct ThreadSleep;

impl Sleep for ThreadSleep {
    async fn sleep(&self, ms: u64) {
        let (tx, rx) = oneshot::channel::<()>();
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(ms));
            let _ = tx.send(());
        });
        let _ = rx.await;
    }
}
