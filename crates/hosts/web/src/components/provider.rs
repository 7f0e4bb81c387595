//! Provider settings: API shape, base URL, model, key, prices, "remember the key" and a test
//! request. The key goes to `sessionStorage` (or `localStorage` when remembered), never into
//! the page state, so it is not in IndexedDB, bundles, exports or URLs.

use memtrace::provider::{ApiKey, ApiKind};
use wasm_bindgen::JsCast;
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

use crate::runs::llm_run::{api_name, ProviderSettings};
use crate::services::{http, runner};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub settings: ProviderSettings,
    pub on_change: Callback<ProviderSettings>,
}

fn input_value(e: &Event) -> String {
    e.target()
        .and_then(|t| t.dyn_into::<HtmlInputElement>().ok())
        .map(|i| i.value())
        .unwrap_or_default()
}

fn checked(e: &Event) -> bool {
    e.target()
        .and_then(|t| t.dyn_into::<HtmlInputElement>().ok())
        .is_some_and(|i| i.checked())
}

fn select_value(e: &Event) -> String {
    e.target()
        .and_then(|t| t.dyn_into::<HtmlSelectElement>().ok())
        .map(|s| s.value())
        .unwrap_or_default()
}

/// The key stored for these settings, if any.
pub fn stored_key(s: &ProviderSettings) -> Option<ApiKey> {
    http::load_key(&s.key_slot())
}

#[function_component(ProviderForm)]
pub fn provider_form(props: &Props) -> Html {
    let s = &props.settings;
    let has_key = use_state(|| stored_key(s).is_some());
    let status = use_state(|| None::<Result<String, String>>);
    let testing = use_state(|| false);
    // Open at first when no key is stored; after that the user folds it (not re-rendered shut).
    let first_open = use_state(|| stored_key(s).is_none());
    {
        let has_key = has_key.clone();
        use_effect_with(s.key_slot(), move |slot| {
            has_key.set(http::load_key(slot).is_some());
        });
    }

    // Every field edit sends a whole new settings value up.
    let edit = |f: fn(&mut ProviderSettings, Event)| {
        let (s, on_change) = (s.clone(), props.on_change.clone());
        Callback::from(move |e: Event| {
            let mut next = s.clone();
            f(&mut next, e);
            on_change.emit(next);
        })
    };
    let on_api = edit(|s, e| {
        let api = if select_value(&e) == "anthropic" {
            ApiKind::Anthropic
        } else {
            ApiKind::OpenAi
        };
        if s.base_url == s.api.default_base_url() {
            api.default_base_url().clone_into(&mut s.base_url);
        }
        s.api = api;
    });
    let on_url = edit(|s, e| input_value(&e).trim().clone_into(&mut s.base_url));
    let on_model = edit(|s, e| input_value(&e).trim().clone_into(&mut s.model));
    let on_in = edit(|s, e| s.input_usd_per_mtok = input_value(&e).parse().unwrap_or(0.0));
    let on_out = edit(|s, e| s.output_usd_per_mtok = input_value(&e).parse().unwrap_or(0.0));
    let on_timeout = edit(|s, e| {
        // Whole seconds, 1 s to 10 min.
        s.timeout_ms = input_value(&e)
            .trim()
            .parse::<u64>()
            .map_or(s.timeout_ms, |secs| secs.clamp(1, 600) * 1000);
    });
    let on_max_calls = edit(|s, e| {
        s.max_calls = input_value(&e)
            .trim()
            .parse::<usize>()
            .map_or(s.max_calls, |n| n.clamp(1, 200));
    });
    let on_max_tokens = edit(|s, e| {
        s.max_tokens = input_value(&e)
            .trim()
            .parse::<u32>()
            .map_or(s.max_tokens, |n| n.min(100_000));
    });
    let on_remember = {
        let (s, on_change, status) = (s.clone(), props.on_change.clone(), status.clone());
        Callback::from(move |e: Event| {
            let mut next = s.clone();
            next.remember_key = checked(&e);
            // Move the key to the chosen storage (or out of the remembered one).
            if let Some(k) = stored_key(&s) {
                if let Err(m) = http::store_key(&s.key_slot(), &k, next.remember_key) {
                    status.set(Some(Err(m)));
                }
            }
            on_change.emit(next);
        })
    };
    let on_key = {
        let (s, has_key, status) = (s.clone(), has_key.clone(), status.clone());
        Callback::from(move |e: Event| {
            let key = input_value(&e);
            if key.trim().is_empty() {
                http::forget_key(&s.key_slot());
                has_key.set(false);
                return;
            }
            match http::store_key(&s.key_slot(), &ApiKey::new(key), s.remember_key) {
                Ok(()) => has_key.set(true),
                Err(m) => status.set(Some(Err(m))),
            }
        })
    };
    let on_forget = {
        let (s, has_key) = (s.clone(), has_key.clone());
        Callback::from(move |_: MouseEvent| {
            http::forget_key(&s.key_slot());
            has_key.set(false);
        })
    };
    let on_test = {
        let (s, status, testing) = (s.clone(), status.clone(), testing.clone());
        Callback::from(move |_: MouseEvent| {
            let (s, status, testing) = (s.clone(), status.clone(), testing.clone());
            testing.set(true);
            status.set(None);
            wasm_bindgen_futures::spawn_local(async move {
                let r = runner::test_connection(&s, stored_key(&s)).await;
                status.set(Some(r));
                testing.set(false);
            });
        })
    };

    html! {
        <details id="provider" class="provider-settings" open={*first_open}>
            <summary>{ format!("Provider: {} · {} · key {}", api_name(s.api), s.model,
                if *has_key { "set" } else { "not set" }) }</summary>
            <div class="provider-grid">
                <label>{"API "}
                    <select id="provider-api" aria-label="provider API" onchange={on_api}>
                        <option value="openai" selected={s.api == ApiKind::OpenAi}>{"OpenAI-compatible"}</option>
                        <option value="anthropic" selected={s.api == ApiKind::Anthropic}>{"Anthropic"}</option>
                    </select>
                </label>
                <label>{"Base URL "}
                    <input id="provider-base-url" type="url" value={s.base_url.clone()} onchange={on_url}
                           spellcheck="false" autocomplete="off" />
                </label>
                <label>{"Model "}
                    <input id="provider-model" value={s.model.clone()} onchange={on_model} spellcheck="false" autocomplete="off" />
                </label>
                <label>{"API key "}
                    <input id="provider-key" type="password" autocomplete="off" spellcheck="false"
                           placeholder={if *has_key { "(stored; type to replace)" } else { "sk-…" }}
                           onchange={on_key} />
                </label>
                <label>{"$ / 1M input "}
                    <input id="price-in" type="number" min="0" step="0.01" value={s.input_usd_per_mtok.to_string()} onchange={on_in} />
                </label>
                <label>{"$ / 1M output "}
                    <input id="price-out" type="number" min="0" step="0.01" value={s.output_usd_per_mtok.to_string()} onchange={on_out} />
                </label>
                <label>{"timeout (s) "}
                    <input id="provider-timeout" type="number" min="1" step="1" value={(s.timeout_ms / 1000).to_string()} onchange={on_timeout} />
                </label>
                <label title="the agents' step cap: a case with no answer by then ends with no verdict">{"max calls / case "}
                    <input id="provider-max-calls" type="number" min="1" step="1" value={s.max_calls.to_string()} onchange={on_max_calls} />
                </label>
                <label title="0: the provider's default; a small local model may otherwise write until its context is full">{"max output tokens "}
                    <input id="provider-max-tokens" type="number" min="0" step="1" value={s.max_tokens.to_string()} onchange={on_max_tokens} />
                </label>
                <label class="remember" title="off: the key is kept for this tab only (sessionStorage)">
                    <input id="remember-key" type="checkbox" checked={s.remember_key} onchange={on_remember} />
                    {" remember the key on this device"}
                </label>
                <span>
                    <button id="test-connection" class="button" disabled={*testing} onclick={on_test}>
                        { if *testing { "testing…" } else { "test connection" } }</button>
                    {" "}<button id="forget-key" class="button" disabled={!*has_key} onclick={on_forget}>{"forget key"}</button>
                </span>
            </div>
            { match &*status {
                Some(Ok(m)) => html! { <p id="connection-status" class="ok" data-ok="true">{ m.clone() }</p> },
                Some(Err(m)) => html! { <p id="connection-status" class="error" role="alert" data-ok="false">{ m.clone() }</p> },
                None => html! {},
            } }
        </details>
    }
}
