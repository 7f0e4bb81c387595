//! The loading bar: bytes read, then how much of the file is parsed ("parsing" when it is
//! parsed in one go), with a Cancel button (Escape).

use yew::prelude::*;

use crate::state::Progress;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub progress: Option<Progress>,
}

#[function_component(ProgressBar)]
pub fn progress_bar(props: &Props) -> Html {
    let Some(p) = &props.progress else {
        return html! {};
    };
    let total = p.bytes_total.max(1);
    let mut percent = (p.bytes_done.min(total) * 100 / total) as u32;
    let text = if let Some(parsed) = p.parsed {
        percent = u32::from(parsed);
        format!("Loading {} — {percent} %", p.file)
    } else if p.bytes_done >= p.bytes_total {
        format!(
            "parsing and indexing… file {} of {}",
            (p.files_done + 1).min(p.files_total),
            p.files_total
        )
    } else {
        format!(
            "reading {} of {} file(s): {percent} %",
            p.files_done + 1,
            p.files_total
        )
    };
    html! {
        <div id="load-progress" class="progress" role="status" aria-live="polite">
            <progress max="100" value={percent.to_string()}></progress>
            <span>{ text }</span>
            <button id="load-cancel" class="button" title="stop loading (Esc)"
                    onclick={Callback::from(|_: MouseEvent| crate::services::files::cancel())}>{"Cancel"}</button>
        </div>
    }
}
