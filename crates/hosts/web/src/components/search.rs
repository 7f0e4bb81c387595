//! Search over variable values: BM25 by default, a regex toggle; clicking a hit selects that
//! variable. Hits are shown as text.

use std::rc::Rc;

use memtrace::algo::search::{RegexOptions, SearchIndex};
use memtrace::layout::NodeRef;
use memtrace::Trace;
use wasm_bindgen::JsCast;
use web_sys::HtmlInputElement;
use yew::prelude::*;

use super::Shared;

/// Hits shown at most.
const LIMIT: usize = 50;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub trace: Shared<Trace>,
    pub on_select: Callback<Option<NodeRef>>,
}

fn input_of(e: &Event) -> Option<HtmlInputElement> {
    e.target()
        .and_then(|t| t.dyn_into::<HtmlInputElement>().ok())
}

#[function_component(Search)]
pub fn search(props: &Props) -> Html {
    let query = use_state(String::new);
    let regex = use_state(|| false);
    // The index of the trace, built at its first query (not when a trace opens: a large
    // trace's index takes a while).
    let cache = use_mut_ref(|| None::<(Shared<Trace>, Rc<SearchIndex>)>);
    let results = use_memo(
        (props.trace.clone(), (*query).clone(), *regex),
        move |(t, q, regex)| {
            if q.trim().is_empty() {
                return Ok(Vec::new());
            }
            let index = {
                let mut c = cache.borrow_mut();
                match &*c {
                    Some((of, index)) if of == t => index.clone(),
                    _ => {
                        let _t = crate::timing::stage("search index");
                        let index = Rc::new(SearchIndex::build(&t.0));
                        *c = Some((t.clone(), index.clone()));
                        index
                    }
                }
            };
            if *regex {
                let opts = RegexOptions {
                    case_insensitive: true,
                    max_hits: LIMIT,
                    ..RegexOptions::default()
                };
                index.regex(q, &opts).map_err(|e| e.to_string())
            } else {
                Ok(index.bm25(q, LIMIT))
            }
        },
    );
    let on_input = {
        let query = query.clone();
        Callback::from(move |e: InputEvent| {
            if let Some(i) = input_of(&e) {
                query.set(i.value());
            }
        })
    };
    let on_regex = {
        let regex = regex.clone();
        Callback::from(move |e: Event| {
            if let Some(i) = input_of(&e) {
                regex.set(i.checked());
            }
        })
    };
    html! {
        <section id="search" class="search-pane" aria-label="search">
            <input id="search-box" type="search" placeholder="search values (/)" aria-label="search values"
                   value={(*query).clone()} oninput={on_input} />
            <label class="muted"><input id="search-regex" type="checkbox" checked={*regex} onchange={on_regex} />{" regex"}</label>
            { match &*results {
                Err(m) => html! { <p class="error" role="alert">{ m.clone() }</p> },
                Ok(hits) if hits.is_empty() && !query.trim().is_empty() => html! { <p class="muted">{"no hits"}</p> },
                Ok(hits) => html! {
                    <ol id="search-results">
                        { for hits.iter().map(|h| {
                            let on_select = props.on_select.clone();
                            let var = h.var;
                            html! {
                                <li class="search-hit" data-id={h.id.clone()}>
                                    <button class="link" onclick={Callback::from(move |_: MouseEvent| on_select.emit(Some(NodeRef::Var(var))))}>
                                        <code>{ h.id.clone() }</code>
                                    </button>
                                    <span class="snippet">{ h.snippet.clone() }</span>
                                </li>
                            }
                        }) }
                    </ol>
                },
            } }
        </section>
    }
}
