//! The whole page is a drop target; the file picker in the top bar does the same for keyboard
//! users. Several files at once: traces and saved projects.

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
    html! {
        <div id="drop-zone" class={classes!("drop-zone", hovering.then_some("hovering"))}
             {ondragover} {ondragleave} {ondrop}>
            { props.children.clone() }
            if *hovering {
                <div class="drop-hint" aria-hidden="true">{"Drop trace files or a saved project"}</div>
            }
        </div>
    }
}

#[derive(Properties, PartialEq)]
pub struct PickerProps {
    pub on_files: Callback<Vec<web_sys::File>>,
}

/// "Open files…": a real file input behind a label, reachable with Tab.
#[function_component(FilePicker)]
pub fn file_picker(props: &PickerProps) -> Html {
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
        <label class="button picker" title="or drop files anywhere">
            {"Open files…"}
            <input id="file-input" type="file" multiple=true accept=".json,.jsonl,application/json" {onchange} />
        </label>
    }
}
