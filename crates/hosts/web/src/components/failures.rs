//! The failures list: every failed question with its gold answer, prediction, judge score,
//! annotation and attribution verdict; filter, sort, j/k (handled by the page) and click.

use std::collections::BTreeMap;

use memtrace::text::shorten;
use memtrace::Trace;
use wasm_bindgen::JsCast;
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

use super::Shared;
use crate::state::Verdict;
use crate::view::failures::{failure_rows, label_of, labels_present, ListSettings, SortKey};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub trace: Shared<Trace>,
    pub verdicts: BTreeMap<String, Verdict>,
    pub selected: Option<usize>,
    pub list: ListSettings,
    pub on_select: Callback<usize>,
    pub on_filter_text: Callback<String>,
    pub on_filter_type: Callback<Option<String>>,
    pub on_sort: Callback<SortKey>,
}

/// Rows drawn per page of the list.
const PAGE_ROWS: usize = 200;
/// Characters of an answer shown in its row (the story and the inspector show it whole).
const ANSWER_CHARS: usize = 300;

#[function_component(FailuresList)]
pub fn failures_list(props: &Props) -> Html {
    let _t = crate::timing::stage("render: failures list");
    let t = &props.trace.0;
    let rows = failure_rows(t, &props.list);
    // A long list is drawn a page at a time (a thousand rows took 0.1 s to lay out), always
    // down to the selected row so j/k can walk it all.
    let pages = use_state(|| 1usize);
    let through_selected = props
        .selected
        .and_then(|s| rows.iter().position(|&i| i == s))
        .map_or(0, |p| p + 1);
    let shown = rows.len().min((*pages * PAGE_ROWS).max(through_selected));
    let more = {
        let pages = pages.clone();
        Callback::from(move |_: MouseEvent| pages.set(*pages + 1))
    };
    // Keep the selected row in view when j/k move it.
    use_effect_with(props.selected, |_| {
        if let Some(el) = web_sys::window().and_then(|w| w.document()).and_then(|d| {
            d.query_selector("#failures .failure.selected")
                .ok()
                .flatten()
        }) {
            el.scroll_into_view_with_bool(false);
        }
    });
    let on_text = props.on_filter_text.reform(|e: InputEvent| {
        e.target()
            .and_then(|t| t.dyn_into::<HtmlInputElement>().ok())
            .map(|i| i.value())
            .unwrap_or_default()
    });
    let on_type = props.on_filter_type.reform(|e: Event| {
        let v = e
            .target()
            .and_then(|t| t.dyn_into::<HtmlSelectElement>().ok())
            .map(|s| s.value())
            .unwrap_or_default();
        (!v.is_empty()).then_some(v)
    });
    let on_sort = props.on_sort.reform(|e: Event| {
        e.target()
            .and_then(|t| t.dyn_into::<HtmlSelectElement>().ok())
            .and_then(|s| SortKey::parse(&s.value()))
            .unwrap_or_default()
    });
    let current_type = props.list.error_type.clone().unwrap_or_default();
    let arrow = if props.list.descending { "↓" } else { "↑" };
    html! {
        <section id="failures" class="failures-pane" aria-label="failed questions">
            <div class="pane-head">
                <h2>{ format!("Failed questions ({} of {})", rows.len(), t.cases.len()) }</h2>
                <div class="filters">
                    <input id="failure-filter" type="search" placeholder="filter (F)" aria-label="filter failures by text"
                        value={props.list.text.clone()} oninput={on_text} />
                    <select aria-label="filter by error type" onchange={on_type}>
                        <option value="" selected={current_type.is_empty()}>{"all types"}</option>
                        { for labels_present(t).into_iter().map(|l| html! {
                            <option value={l} selected={current_type == l}>{ l }</option>
                        }) }
                    </select>
                    <select aria-label="sort by" onchange={on_sort}>
                        { for SortKey::ALL.iter().map(|k| html! {
                            <option value={k.as_str()} selected={props.list.sort == *k}>
                                { format!("{} {}", k.label(), if props.list.sort == *k { arrow } else { "" }) }
                            </option>
                        }) }
                    </select>
                </div>
            </div>
            if t.cases.is_empty() {
                <p class="muted empty">{"No failed questions in this trace: see Failure rules above for what was looked for, add a rule, or mark a question as failed."}</p>
            }
            <ol class="failure-list" role="listbox" aria-label="failed questions">
                { for rows[..shown].iter().map(|&i| row(props, t, i)) }
            </ol>
            if shown < rows.len() {
                <button id="failures-more" class="button more" onclick={more}>
                    { format!("Show {} more ({} of {} shown)", (rows.len() - shown).min(PAGE_ROWS), shown, rows.len()) }
                </button>
            }
        </section>
    }
}

fn row(props: &Props, t: &Trace, i: usize) -> Html {
    let Some(c) = t.cases.get(i) else {
        return html! {};
    };
    let selected = props.selected == Some(i);
    let on_select = props.on_select.clone();
    let onclick = Callback::from(move |_: MouseEvent| on_select.emit(i));
    let on_select = props.on_select.clone();
    let onkeydown = Callback::from(move |e: KeyboardEvent| {
        if e.key() == "Enter" || e.key() == " " {
            e.prevent_default();
            on_select.emit(i);
        }
    });
    let label = label_of(c);
    let op_name = |id: &str| {
        t.op_by_id(id)
            .map_or_else(|| id.to_owned(), |o| t.op(o).op_name.clone())
    };
    let score = c
        .judge_score
        .map_or_else(|| "–".to_owned(), |s| format!("{s}"));
    let verdict = props.verdicts.get(&c.query_id);
    html! {
        <li class={classes!("failure", selected.then_some("selected"))} data-case={i.to_string()}
            role="option" aria-selected={selected.to_string()} tabindex="0" {onclick} {onkeydown}>
            <div class="q">{ &c.query }</div>
            <div class="kv"><span class="k">{"gold"}</span><span class="v">{ c.golden_answers.join(" | ") }</span></div>
            <div class="kv"><span class="k">{"answer"}</span><span class="v">{ shorten(&c.prediction, ANSWER_CHARS) }</span></div>
            <div class="badges">
                <span class="badge score" title="judge score">{ format!("score {score}") }</span>
                if let Some(a) = &c.annotation {
                    <span class={classes!("badge", "type", format!("t-{}", label.to_lowercase()))}
                          title={format!("annotated decisive op: {}", a.op_id)}>
                        { format!("{label} · {}", op_name(&a.op_id)) }
                    </span>
                } else {
                    <span class="badge muted">{"not annotated"}</span>
                }
                if let Some(v) = verdict {
                    <span class="badge verdict" title={v.reason.clone()}>
                        { format!("verdict: {} · {}", v.error_type, op_name(&v.op_id)) }
                    </span>
                } else {
                    <span class="badge muted" title="run an attributor to get a verdict">{"not attributed"}</span>
                }
            </div>
        </li>
    }
}
