//! The keyboard help overlay (`?`) and the page's settings (the largest file it reads); Escape
//! or the button closes it.

use wasm_bindgen::JsCast;
use web_sys::HtmlInputElement;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub on_close: Callback<()>,
    /// The largest file the page reads, in bytes.
    pub max_bytes: u64,
    /// A new largest file, in bytes (`None`: back to the default).
    pub on_max_bytes: Callback<Option<u64>>,
}

const MIB: u64 = 1024 * 1024;

/// (keys, what they do), in the order shown.
pub const KEYS: &[(&str, &str)] = &[
    ("?", "show or hide this help"),
    (
        "Esc",
        "cancel loading files; close help, then the diff, then the selection",
    ),
    ("j / k", "next / previous failed question"),
    ("/", "search the values (BM25; tick regex for a pattern)"),
    ("F", "filter the failures list"),
    ("f", "fit the graph to the window"),
    ("x", "expand the selected node (show its neighbours)"),
    ("r", "back to the failure's default view"),
    ("w", "whole trace / the failure's slice"),
    ("g", "the failure's story / its graph"),
    ("R", "report: verdicts per error type and op name"),
    ("O", "optimize: the prompt optimizer's closed loop"),
    ("L", "roles: each op name's role; override one"),
    ("Tab", "move between list, graph and inspector"),
    ("graph: arrows", "pan"),
    ("graph: + / - / 0", "zoom in / out / fit"),
    ("graph: n / p", "select the next / previous node"),
    ("graph: Enter", "expand the selected node"),
    ("graph: wheel, drag", "zoom about the cursor, pan"),
    ("graph: click / double-click", "select / expand"),
];

#[function_component(Help)]
pub fn help(props: &Props) -> Html {
    let close = props.on_close.reform(|_: MouseEvent| ());
    let now_bytes = props.max_bytes;
    let on_max = props.on_max_bytes.reform(move |e: Event| {
        let text = e
            .target()
            .and_then(|t| t.dyn_into::<HtmlInputElement>().ok())
            .map(|i| i.value())
            .unwrap_or_default();
        crate::state::typed_max_bytes(&text, now_bytes)
    });
    html! {
        <div class="overlay" onclick={close.clone()}>
            <div id="help" class="dialog" role="dialog" aria-modal="true" aria-labelledby="help-title"
                 onclick={Callback::from(|e: MouseEvent| e.stop_propagation())}>
                <h2 id="help-title">{"Keyboard"}</h2>
                <table>
                    { for KEYS.iter().map(|(k, what)| html! {
                        <tr><th><kbd>{ *k }</kbd></th><td>{ *what }</td></tr>
                    }) }
                </table>
                <p class="muted">{"Drop trace files or a saved project (memtrace-project.json) anywhere on the page. Everything stays in this browser (IndexedDB)."}</p>
                <h2>{"Settings"}</h2>
                <p>
                    <label class="setting" title="files over this are refused before they are read; a file takes about three times its size in the tab's memory (4 GiB at most)">
                        {"Largest file "}
                        <input id="max-file-mib" type="number" min="1" step="1"
                               value={props.max_bytes.div_ceil(MIB).to_string()} onchange={on_max} />
                        {" MiB (default 512; empty: the default)"}
                    </label>
                </p>
                <button class="button" onclick={close} autofocus=true>{"Close"}</button>
            </div>
        </div>
    }
}
