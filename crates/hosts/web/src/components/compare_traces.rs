//! Two loaded traces of the same questions side by side (the report view, with two or more traces
//! loaded): every question of each is a verdict, right unless it is a failure case, its failures
//! attributed by info-flow under the trace's roles (`memtrace compare A B` does the same); aligned
//! by question id, else by question text; counted as fixed / broken / still failing / still right,
//! with wrong answers per error type and one row per question.

use std::collections::BTreeMap;

use memtrace::attribution::{OpRole, Roles};
use memtrace::optimize::compare::{compare, Change};
use memtrace::optimize::trace_run::{align_by_text, run_of_trace};
use memtrace::Trace;
use yew::prelude::*;

use super::compare::{cell, selected};
use crate::components::Shared;

/// One loaded trace: its name, the trace, the user's role overrides.
pub type Entry = (String, Shared<Trace>, BTreeMap<String, OpRole>);

#[derive(Properties, PartialEq)]
pub struct Props {
    pub traces: Vec<Entry>,
}

#[function_component(CompareTraces)]
pub fn compare_traces(props: &Props) -> Html {
    let n = props.traces.len();
    let pick = use_state(|| None::<(usize, usize)>);
    let (a, b) = pick.unwrap_or((0, n.saturating_sub(1)));
    let (a, b) = (a.min(n.saturating_sub(1)), b.min(n.saturating_sub(1)));
    let pair = (n >= 2).then(|| (props.traces[a].clone(), props.traces[b].clone()));
    let comparison = use_memo(pair, |pair| {
        pair.as_ref().map(|(x, y)| {
            let run = |(name, t, o): &Entry| {
                let roles = Roles::infer(&t.0, &memtrace::session::role_config(o));
                run_of_trace(name, &t.0, &roles)
            };
            let (mut ra, mut rb) = (run(x), run(y));
            align_by_text(&mut ra, &mut rb);
            compare(&ra.verdicts, &rb.verdicts)
        })
    });
    let Some(c) = (*comparison).as_ref() else {
        return html! {};
    };
    let on = |side: usize| {
        let pick = pick.clone();
        Callback::from(move |e: Event| {
            if let Some(r) = selected(&e) {
                let (a, b) = pick.unwrap_or((0, n.saturating_sub(1)));
                pick.set(Some(if side == 0 { (r, b) } else { (a, r) }));
            }
        })
    };
    let options =
        |chosen: usize| {
            props
            .traces
            .iter()
            .enumerate()
            .map(|(i, (name, _, _))| html! {
                <option value={i.to_string()} selected={i == chosen}>{ name.clone() }</option>
            })
            .collect::<Html>()
        };
    let count = |x: Change| c.count(x).to_string();
    html! {
        <section id="trace-compare" class="opt-compare report" aria-label="compare two traces">
            <h3>{"Compare traces"}</h3>
            <div class="attr-controls">
                <label>{"A "}<select id="trace-compare-a" onchange={on(0)}>{ options(a) }</select></label>
                <label>{"B "}<select id="trace-compare-b" onchange={on(1)}>{ options(b) }</select></label>
            </div>
            <p id="trace-compare-counts" data-fixed={count(Change::Fixed)} data-broken={count(Change::Broken)}
               data-still-failing={count(Change::StillFailing)} data-still-right={count(Change::StillRight)}
               data-only-a={count(Change::OnlyA)} data-only-b={count(Change::OnlyB)}>
                { c.summary() }
            </p>
            if !c.by_type.is_empty() {
                <table class="opt-types">
                    <tr><th>{"wrong answers by type"}</th><th>{"A"}</th><th>{"B"}</th></tr>
                    { for c.by_type.iter().map(|(t, (x, y))| html! {
                        <tr data-type={t.clone()}><td>{ t.clone() }</td><td>{ *x }</td><td>{ *y }</td></tr>
                    }) }
                </table>
            }
            <table id="trace-compare-rows" class="opt-compare-rows">
                <tr><th>{"question"}</th><th>{"change"}</th>
                    <th>{ format!("A: {}", props.traces[a].0) }</th><th>{ format!("B: {}", props.traces[b].0) }</th></tr>
                { for c.rows.iter().filter(|r| r.change != Change::StillRight).map(|row| {
                    let q = row.a.as_ref().or(row.b.as_ref());
                    html! {
                        <tr class={classes!("opt-row", row.change.label().replace(' ', "-"))}
                            data-question={row.question_id.clone()} data-change={row.change.label()}>
                            <td>{ q.map(|v| v.question.clone()).unwrap_or_default() }</td>
                            <td>{ row.change.label() }</td>
                            { cell(row.a.as_ref()) }
                            { cell(row.b.as_ref()) }
                        </tr>
                    }
                }) }
            </table>
        </section>
    }
}
