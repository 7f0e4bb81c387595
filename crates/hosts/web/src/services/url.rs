//! Opens the trace (or bundle, annotation file; gzip or zstd too) at the address the page was
//! opened with, `?url=https://…/trace.jsonl.gz`: fetched with the browser's `fetch`, so the file
//! must be on this page's origin or served with CORS. A failure is one error on the page saying
//! what failed, at which address, and what to do.

use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use memtrace::format::LoadOptions;

use crate::services::files;
use crate::state::{Action, Progress};

/// The `url` query parameter of the page's address, if any (empty counts as none).
pub fn requested() -> Option<String> {
    let href = web_sys::window()?.location().href().ok()?;
    let url = web_sys::Url::new(&href).ok()?;
    url.search_params()
        .get("url")
        .filter(|u| !u.trim().is_empty())
}

/// The address `raw` resolved against the page's (a relative `?url=traces/a.json` works), or
/// why it cannot be fetched.
fn resolve(raw: &str) -> Result<web_sys::Url, String> {
    let base = web_sys::window()
        .and_then(|w| w.location().href().ok())
        .unwrap_or_default();
    let url = web_sys::Url::new_with_base(raw.trim(), &base)
        .map_err(|_| "it is not a web address".to_owned())?;
    match url.protocol().as_str() {
        "http:" | "https:" => Ok(url),
        other => Err(format!(
            "its scheme is {other}; only http: and https: addresses are fetched"
        )),
    }
}

/// The name the fetched file is shown under: the last part of its path, else the host.
fn file_name(url: &web_sys::Url) -> String {
    let path = url.pathname();
    let last = path.rsplit('/').next().unwrap_or_default();
    let last = js_sys::decode_uri_component(last)
        .ok()
        .and_then(|s| s.as_string())
        .unwrap_or_else(|| last.to_owned());
    if last.is_empty() {
        url.host()
    } else {
        last
    }
}

fn js_text(e: &wasm_bindgen::JsValue) -> String {
    let get = |k: &str| {
        js_sys::Reflect::get(e, &k.into())
            .ok()
            .and_then(|v| v.as_string())
            .unwrap_or_default()
    };
    match (get("name"), get("message")) {
        (n, m) if n.is_empty() && m.is_empty() => format!("{e:?}"),
        (n, m) => format!("{n}: {m}"),
    }
}

/// Fetches the file's bytes (at most `options`' largest file), or a sentence saying what
/// failed and what to do.
async fn fetch(url: &web_sys::Url, options: &LoadOptions) -> Result<Vec<u8>, String> {
    let href = url.href();
    let window = web_sys::window().ok_or("no browser window")?;
    let response = JsFuture::from(window.fetch_with_str(&href))
        .await
        .map_err(|e| {
            format!(
                "could not fetch {href} ({}). The server is not reachable, or it does not let \
                 other sites read the file (CORS: it must send Access-Control-Allow-Origin), or \
                 the page only fetches https: and local (127.0.0.1, localhost) addresses. \
                 Download the file and drop it here instead.",
                js_text(&e)
            )
        })?;
    let response: web_sys::Response = response
        .dyn_into()
        .map_err(|_| format!("fetching {href} did not give a response"))?;
    if !response.ok() {
        return Err(format!(
            "{href} answered HTTP {} {}: check the address (is the file public?), or download \
             the file and drop it here instead.",
            response.status(),
            response.status_text()
        ));
    }
    let body = response
        .array_buffer()
        .map_err(|e| format!("could not read the body of {href}: {}", js_text(&e)))?;
    let body = JsFuture::from(body).await.map_err(|e| {
        format!(
            "the download of {href} broke off ({}); try again, or download the file and drop it \
             here instead.",
            js_text(&e)
        )
    })?;
    let body = js_sys::Uint8Array::new(&body);
    // Refused before the bytes are copied into the page's memory.
    memtrace::format::limits::check_length(u64::from(body.length()), &options.limits)
        .map_err(|e| crate::state::error_text(&e))?;
    Ok(body.to_vec())
}

/// The demo trace: the address of the page's `<link id="memtrace-demo">` (index.html preloads
/// `demo.json`, which it copies into dist/), else `demo.json` next to the page.
///
/// # Errors
/// A sentence when it cannot be fetched.
pub async fn demo() -> Result<Vec<u8>, String> {
    let window = web_sys::window().ok_or("no browser window")?;
    let base = window.location().href().map_err(|e| js_text(&e))?;
    let href = window
        .document()
        .and_then(|d| d.query_selector("link#memtrace-demo").ok().flatten())
        .and_then(|l| l.get_attribute("href"))
        .unwrap_or_else(|| "demo.json".to_owned());
    let url = web_sys::Url::new_with_base(&href, &base).map_err(|e| js_text(&e))?;
    fetch(&url, &LoadOptions::default()).await
}

/// Fetches `raw` (the `?url=` value) and loads it as a dropped file; emits progress, then the
/// file's `Parsed`/`Load` or one `ReadFailed` named by the address.
pub fn open(raw: String, options: LoadOptions, emit: impl Fn(Action) + 'static) {
    let started = files::started();
    wasm_bindgen_futures::spawn_local(async move {
        let failed = |message: String| Action::ReadFailed {
            name: format!("?url={raw}"),
            message,
        };
        let url = match resolve(&raw) {
            Ok(u) => u,
            Err(why) => {
                emit(failed(format!(
                    "the page's ?url= value {raw:?} cannot be opened: {why}. Give the address of \
                     a trace file, e.g. ?url=https://example.org/trace.json"
                )));
                return;
            }
        };
        let mut progress = Progress {
            files_total: 1,
            bytes_total: 1,
            file: url.href(),
            ..Progress::default()
        };
        emit(Action::Progress(Some(progress.clone())));
        match fetch(&url, &options).await {
            Ok(bytes) => {
                progress.bytes_done = 1;
                emit(Action::Progress(Some(progress.clone())));
                let name = file_name(&url);
                if files::show(
                    name.clone(),
                    bytes.into(),
                    options,
                    &mut progress,
                    &emit,
                    started,
                )
                .await
                .is_err()
                {
                    emit(Action::ReadFailed {
                        name,
                        message: "loading cancelled; the file was not loaded".into(),
                    });
                }
            }
            Err(message) => emit(failed(message)),
        }
        emit(Action::Progress(None));
    });
}
