//! The browser transport ([`FetchTransport`], [`TimerSleep`] from `memtrace-fetch`, shared with
//! the JavaScript module), and where the page keeps the API key: for the tab's session, or
//! remembered only when the user opts in.

use memtrace::provider::ApiKey;

pub use memtrace_fetch::{FetchTransport, TimerSleep};

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
