//! The report view (`R`): verdict counts per error type and per op name as bar charts; clicking a
//! bar lists its cases, clicking a case selects it in the failures list. Numbers from
//! `memtrace::session::tally`.

use std::collections::BTreeMap;

use memtrace::Trace;
use wasm_bindgen::JsCast;
use web_sys::HtmlSelectElement;
use yew::prelude::*;

use super::Shared;
use crate::state::{Label, Verdict};
use memtrace::session::{tally, Bar, Source};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub trace: Shared<Trace>,
    pub verdicts: BTreeMap<String, Verdict>,
    pub labels: BTreeMap<String, Label>,
    pub selected: Option<usize>,
    pub on_select: Callback<usize>,
    pub on_close: Callback<()>,
}

/// The open bar: (chart, key).
type Open = Option<(&'static str, String)>;

#[function_component(ReportView)]
pub fn report_view(props: &Props) -> Html {
    let source = use_state(Source::default);
    let open = use_state(|| None::<(&'static str, String)>);
    let t = &props.trace.0;
    let r = tally(t, &props.verdicts, &props.labels, *source);
    let on_source = {
        let (source, open) = (source.clone(), open.clone());
        Callback::from(move |e: Event| {
            let v = e
                .target()
                .and_then(|t| t.dyn_into::<HtmlSelectElement>().ok())
                .and_then(|s| Source::parse(&s.value()))
                .unwrap_or_default();
            source.set(v);
            open.set(None);
        })
    };
    let close = props.on_close.reform(|_: MouseEvent| ());
    let cases = (*open)
        .as_ref()
        .and_then(|(chart, key)| r.bar(chart, key).map(|b| (*chart, b)));
    html! {
        <section id="report" class="report-pane" aria-label="report">
            <div class="report-head">
                <h2>{"Report"}</h2>
                <span class="muted" data-field="judged">
                    { format!("{} of {} failed questions judged", r.judged, r.cases) }
                </span>
                <select id="report-source" aria-label="count" onchange={on_source}>
                    { for Source::ALL.iter().map(|s| html! {
                        <option value={s.as_str()} selected={*source == *s}>{ format!("count {}", s.label()) }</option>
                    }) }
                </select>
                <span class="spacer"></span>
                <button class="button small" onclick={close} title="close the report (R)">{"close"}</button>
            </div>
            if r.judged == 0 {
                <p class="muted">{ format!("No {} yet: attribute the failures (Attribute all) or label them.", source.label()) }</p>
            }
            <div class="charts">
                { chart("type", "per error type", &r.by_type, &open) }
                { chart("op", "per op name", &r.by_op, &open) }
            </div>
            if let Some((chart, bar)) = cases {
                { case_list(props, t, chart, bar) }
            }
        </section>
    }
}

fn chart(id: &'static str, title: &str, bars: &[Bar], open: &UseStateHandle<Open>) -> Html {
    let max = bars.iter().map(Bar::count).max().unwrap_or(0).max(1);
    html! {
        <div class="chart" data-chart={id}>
            <h3>{ title }</h3>
            <ul class="bars">
                { for bars.iter().map(|b| {
                    let pressed = open.as_ref().is_some_and(|(c, k)| *c == id && *k == b.key);
                    let onclick = {
                        let (open, key) = (open.clone(), b.key.clone());
                        Callback::from(move |_: MouseEvent| {
                            open.set((!pressed).then(|| (id, key.clone())));
                        })
                    };
                    let pct = b.count() * 100 / max;
                    html! {
                        <li>
                            <button class="bar" data-key={b.key.clone()} data-count={b.count().to_string()}
                                    aria-pressed={pressed.to_string()} disabled={b.count() == 0} {onclick}
                                    title={format!("{}: {} cases", b.key, b.count())}>
                                <span class="bar-key">{ &b.key }</span>
                                <span class="bar-track"><span class="bar-fill" style={format!("width:{pct}%")}></span></span>
                                <span class="bar-count">{ b.count() }</span>
                            </button>
                        </li>
                    }
                }) }
            </ul>
        </div>
    }
}

fn case_list(props: &Props, t: &Trace, chart: &str, bar: &Bar) -> Html {
    html! {
        <div id="report-cases" data-chart={chart.to_owned()} data-key={bar.key.clone()}>
            <h3>{ format!("{} — {} case{}", bar.key, bar.count(), if bar.count() == 1 { "" } else { "s" }) }</h3>
            <ol>
                { for bar.cases.iter().filter_map(|&i| t.cases.get(i).map(|c| (i, c))).map(|(i, c)| {
                    let on_select = props.on_select.clone();
                    let selected = props.selected == Some(i);
                    html! {
                        <li>
                            <button class={classes!("report-case", selected.then_some("selected"))}
                                    data-case={i.to_string()}
                                    onclick={Callback::from(move |_: MouseEvent| on_select.emit(i))}>
                                { &c.query }
                            </button>
                        </li>
                    }
                }) }
            </ol>
        </div>
    }
}
