//! Two rounds of the closed loop side by side (the Optimize view's compare panel): each
//! question's answer and verdict in round A and round B, aligned by question id, counted as
//! fixed / broken / still failing / still right, wrong answers per error type, the settings
//! each round ran with, and each setting's version history.

use memtrace::optimize::compare::{AnsweredQuestion, Change};
use memtrace_memsys::closed_loop::keep::settings_label;
use memtrace_memsys::closed_loop::LoopState;
use wasm_bindgen::JsCast;
use web_sys::HtmlSelectElement;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub state: LoopState,
}

/// The index a `<select>` of rounds or traces now shows.
pub(super) fn selected(e: &Event) -> Option<usize> {
    e.target()
        .and_then(|t| t.dyn_into::<HtmlSelectElement>().ok())
        .and_then(|s| s.value().parse().ok())
}

fn round_name(state: &LoopState, round: usize) -> String {
    let Some(r) = state.rounds.iter().find(|r| r.round == round) else {
        return format!("round {round}");
    };
    let mut out = format!("round {round}{}", settings_label(&r.settings));
    if r.rejected.is_some() {
        out.push_str(" · rejected");
    }
    out
}

/// One side's answer to a question: right or wrong, the error type and op, the prediction.
pub(super) fn cell(v: Option<&AnsweredQuestion>) -> Html {
    let Some(v) = v else {
        return html! { <td class="muted">{"—"}</td> };
    };
    let mark = if v.correct { "right" } else { "wrong" };
    html! {
        <td class={classes!("opt-answer", mark)}>
            <strong>{ mark }</strong>
            if let Some(t) = &v.error_type {
                <span class="opt-type">{ format!(" {t}") }{ v.op_name.as_ref().map(|o| format!(" at {o}")).unwrap_or_default() }</span>
            }
            <div class="opt-prediction">{ v.prediction.clone() }</div>
        </td>
    }
}

#[function_component(CompareRounds)]
pub fn compare_rounds_view(props: &Props) -> Html {
    let state = &props.state;
    let last = state.rounds.last().map_or(0, |r| r.round);
    let pick = use_state(|| None::<(usize, usize)>);
    let (a, b) = pick.unwrap_or((0, last));
    if state.rounds.len() < 2 {
        return html! {};
    }
    let on = |side: usize| {
        let pick = pick.clone();
        Callback::from(move |e: Event| {
            if let Some(r) = selected(&e) {
                let (a, b) = pick.unwrap_or((0, last));
                pick.set(Some(if side == 0 { (r, b) } else { (a, r) }));
            }
        })
    };
    let options = |chosen: usize| {
        state
            .rounds
            .iter()
            .map(|r| html! {
                <option value={r.round.to_string()} selected={r.round == chosen}>{ round_name(state, r.round) }</option>
            })
            .collect::<Html>()
    };
    let Some(c) = state.compare_rounds(a, b) else {
        return html! {};
    };
    let n = |x: Change| c.count(x).to_string();
    html! {
        <div id="opt-compare" class="opt-compare">
            <h3>{"Compare rounds"}</h3>
            <div class="attr-controls">
                <label>{"A "}<select id="opt-compare-a" onchange={on(0)}>{ options(a) }</select></label>
                <label>{"B "}<select id="opt-compare-b" onchange={on(1)}>{ options(b) }</select></label>
            </div>
            <p id="opt-compare-counts" data-fixed={n(Change::Fixed)} data-broken={n(Change::Broken)}
               data-still-failing={n(Change::StillFailing)} data-still-right={n(Change::StillRight)}>
                <span class="opt-fixed">{ format!("fixed {}", n(Change::Fixed)) }</span>{" · "}
                <span class="opt-broken">{ format!("broken {}", n(Change::Broken)) }</span>{" · "}
                { format!("still failing {} · still right {}", n(Change::StillFailing), n(Change::StillRight)) }
            </p>
            if !c.by_type.is_empty() {
                <table id="opt-compare-types" class="opt-types">
                    <tr><th>{"wrong answers by type"}</th><th>{"A"}</th><th>{"B"}</th></tr>
                    { for c.by_type.iter().map(|(t, (x, y))| html! {
                        <tr data-type={t.clone()}><td>{ t.clone() }</td><td>{ *x }</td><td>{ *y }</td></tr>
                    }) }
                </table>
            }
            <table id="opt-compare-rows" class="opt-compare-rows">
                <tr><th>{"question"}</th><th>{"change"}</th>
                    <th>{ format!("A: {}", round_name(state, a)) }</th><th>{ format!("B: {}", round_name(state, b)) }</th></tr>
                { for c.rows.iter().map(|row| {
                    let q = row.a.as_ref().or(row.b.as_ref());
                    html! {
                        <tr class={classes!("opt-row", row.change.label().replace(' ', "-"))}
                            data-question={row.question_id.clone()} data-change={row.change.label()}>
                            <td>{ q.map(|v| v.question.clone()).unwrap_or_default() }
                                <div class="muted">{ q.map(|v| format!("{} · {} · gold: {}", row.question_id, v.split, v.gold)).unwrap_or_default() }</div></td>
                            <td>{ row.change.label() }</td>
                            { cell(row.a.as_ref()) }
                            { cell(row.b.as_ref()) }
                        </tr>
                    }
                }) }
            </table>
            { settings(state) }
        </div>
    }
}

/// Each setting's versions: value, round, score, the reason, and why it was rejected.
fn settings(state: &LoopState) -> Html {
    if state.setting_versions.is_empty() {
        return html! {};
    }
    let mut sorted = state.setting_versions.clone();
    sorted.sort_by(|x, y| (&x.name, x.version).cmp(&(&y.name, y.version)));
    html! {
        <table id="opt-settings" class="opt-settings">
            <tr><th>{"setting"}</th><th>{"value"}</th><th>{"made in"}</th><th>{"score when used"}</th><th>{"why"}</th></tr>
            { for sorted.iter().map(|v| html! {
                <tr class="opt-setting" data-name={v.name.clone()} data-version={v.version.to_string()}
                    data-value={v.value.to_string()} data-rejected={v.rejected.is_some().to_string()}>
                    <td>{ format!("{}@{}", v.name, v.version) }</td>
                    <td>{ v.value }</td>
                    <td>{ v.round.map_or_else(|| "start".to_owned(), |r| format!("round {r}")) }</td>
                    <td>{ v.score.map(|s| format!("{:.1}%", s * 100.0)).unwrap_or_default() }</td>
                    <td>{ v.reason.clone() }
                        if let Some(why) = &v.rejected { <div class="error">{ format!("rejected: {why}") }</div> }</td>
                </tr>
            }) }
        </table>
    }
}
