//! Files that could not be read: name, what is wrong, where.

use yew::prelude::*;

use crate::state::FileError;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub errors: Vec<FileError>,
}

#[function_component(ErrorList)]
pub fn error_list(props: &Props) -> Html {
    if props.errors.is_empty() {
        return html! {};
    }
    html! {
        <section id="load-errors" class="errors" role="alert">
            { for props.errors.iter().map(|e| html! {
                <div class="error">
                    <strong class="error-file">{ &e.name }</strong>
                    if !e.location.is_empty() {
                        <span class="error-location">{ format!(" at {}", e.location) }</span>
                    }
                    <p class="error-message">{ &e.message }</p>
                </div>
            }) }
        </section>
    }
}
