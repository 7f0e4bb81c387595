//! The whole page is a drop target; a file picker does the same for keyboard users.

use wasm_bindgen::JsCast;
use web_sys::{DragEvent, FileList, HtmlInputElement};
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub on_files: Callback<Vec<web_sys::File>>,
    pub children: Html,
}

fn files_of(list: Option<FileList>) -> Vec<web_sys::File> {
    let Some(list) = list else { return Vec::new() };
    (0..list.length()).filter_map(|i| list.get(i)).collect()
}

#[function_component(DropZone)]
pub fn drop_zone(props: &Props) -> Html {
    let hovering = use_state(|| false);
    let ondragover = {
        let hovering = hovering.clone();
        Callback::from(move |e: DragEvent| {
            e.prevent_default();
            hovering.set(true);
        })
    };
    let ondragleave = {
        let hovering = hovering.clone();
        Callback::from(move |_: DragEvent| hovering.set(false))
    };
    let ondrop = {
        let hovering = hovering.clone();
        let on_files = props.on_files.clone();
        Callback::from(move |e: DragEvent| {
            e.prevent_default();
            hovering.set(false);
            let files = files_of(e.data_transfer().and_then(|dt| dt.files()));
            if !files.is_empty() {
                on_files.emit(files);
            }
        })
    };
    let onchange = {
        let on_files = props.on_files.clone();
        Callback::from(move |e: Event| {
            let Some(input) = e
                .target()
                .and_then(|t| t.dyn_into::<HtmlInputElement>().ok())
            else {
                return;
            };
            let files = files_of(input.files());
            input.set_value("");
            if !files.is_empty() {
                on_files.emit(files);
            }
        })
    };
    html! {
        <div id="drop-zone" class={classes!("drop-zone", hovering.then_some("hovering"))}
             {ondragover} {ondragleave} {ondrop}>
            { props.children.clone() }
            <label class="picker">
                {"Drop trace files anywhere, or "}
                <input id="file-input" type="file" multiple=true accept=".json,.jsonl,application/json" {onchange} />
            </label>
        </div>
    }
}
