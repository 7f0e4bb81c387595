//! The keyboard help overlay (`?`); Escape or the button closes it.

use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub on_close: Callback<()>,
}

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
                <button class="button" onclick={close} autofocus=true>{"Close"}</button>
            </div>
        </div>
    }
}
