//! "Find all causes" on the selected failure (issue #17): runs the core's decisive-set search
//! (delta debugging over replays of the reference memory system, simulated provider — the
//! same call as `memtrace attribute --decisive-set`), shows the model calls made while it runs
//! with a Cancel, then the set — each op a numbered, coloured cause, drawn in the story and
//! the graph too — and every replay with the ops it repaired and whether the answer came out
//! right. A trace that cannot be replayed says so and keeps its single-op verdict.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::rc::Rc;

use gloo_timers::future::TimeoutFuture;
use memtrace::attribution::Roles;
use memtrace::layout::NodeRef;
use memtrace::provider::{ChatRequest, ChatResponse, Llm, ProviderError};
use memtrace::Trace;
use memtrace_memsys::replay::{decisive_set, DecisiveSet, SetOutcome};
use memtrace_memsys::simulated::SimulatedLlm;
use yew::prelude::*;

use super::Shared;
use crate::runs::causes::{
    cause_color, outcome_label, replay_rows, short_name, tag, Search, BUDGET,
};
use crate::runs::causes::{CausesAction, OpTag};
use crate::state::Verdict;

#[derive(Properties, PartialEq)]
pub struct Props {
    /// The trace's name (searches are kept per trace name and question).
    pub name: String,
    pub trace: Shared<Trace>,
    pub case: usize,
    /// This failure's search, if one ran.
    pub search: Option<Search>,
    /// The single-op verdict on screen, kept when the trace cannot be replayed.
    pub verdict: Option<Verdict>,
    pub roles: Shared<Roles>,
    pub on_action: Callback<CausesAction>,
    pub on_select: Callback<Option<NodeRef>>,
}

/// Model calls between two reports (and yields to the browser, so the page repaints and a
/// Cancel click gets through).
const REPORT_EVERY: u32 = 8;

/// The simulated provider, counting calls, yielding now and then, stopped by `cancel`.
struct Watched {
    calls: Cell<u32>,
    cancel: Rc<Cell<bool>>,
    report: Box<dyn Fn(u32)>,
}

impl Llm for Watched {
    async fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, ProviderError> {
        if self.cancel.get() {
            return Err(ProviderError::Cancelled);
        }
        let n = self.calls.get() + 1;
        self.calls.set(n);
        if n % REPORT_EVERY == 0 {
            (self.report)(n);
            TimeoutFuture::new(0).await;
            if self.cancel.get() {
                return Err(ProviderError::Cancelled);
            }
        }
        SimulatedLlm.chat(req).await
    }
}

#[function_component(CausesPanel)]
pub fn causes_panel(props: &Props) -> Html {
    let _t = crate::timing::stage("render: causes panel");
    // Cancel flags of the searches this panel started, by question.
    let cancels = use_mut_ref(BTreeMap::<String, Rc<Cell<bool>>>::new);
    let t = &props.trace.0;
    let Some(c) = t.cases.get(props.case) else {
        return html! {};
    };
    let qid = c.query_id.clone();
    let running = matches!(props.search, Some(Search::Running { .. }));
    let find = {
        let (trace, roles, name, on_action) = (
            props.trace.clone(),
            props.roles.clone(),
            props.name.clone(),
            props.on_action.clone(),
        );
        let (case, qid, cancels) = (props.case, qid.clone(), cancels.clone());
        Callback::from(move |_: MouseEvent| {
            let cancel = Rc::new(Cell::new(false));
            cancels.borrow_mut().insert(qid.clone(), cancel.clone());
            on_action.emit(CausesAction::Start {
                name: name.clone(),
                trace: trace.0.clone(),
                query_id: qid.clone(),
            });
            let (trace, roles, name, qid, on_action) = (
                trace.clone(),
                roles.clone(),
                name.clone(),
                qid.clone(),
                on_action.clone(),
            );
            wasm_bindgen_futures::spawn_local(async move {
                let progress = {
                    let (on_action, name, qid) = (on_action.clone(), name.clone(), qid.clone());
                    move |calls| {
                        on_action.emit(CausesAction::Progress {
                            name: name.clone(),
                            query_id: qid.clone(),
                            calls,
                        });
                    }
                };
                let llm = Watched {
                    calls: Cell::new(0),
                    cancel,
                    report: Box::new(progress),
                };
                // Let the page show "running" before the first replays.
                TimeoutFuture::new(0).await;
                let result = match trace.0.cases.get(case) {
                    Some(c) => decisive_set(&llm, &trace.0, &roles.0, c, BUDGET)
                        .await
                        .map_err(|e| match e {
                            ProviderError::Cancelled => "cancelled".to_owned(),
                            e => format!("a replay failed: {e}"),
                        }),
                    None => Err("the failure is no longer in the trace".to_owned()),
                };
                on_action.emit(CausesAction::Finish {
                    name,
                    query_id: qid,
                    result,
                });
            });
        })
    };
    let cancel = {
        let (cancels, qid) = (cancels.clone(), qid.clone());
        Callback::from(move |_: MouseEvent| {
            if let Some(flag) = cancels.borrow().get(&qid) {
                flag.set(true);
            }
        })
    };
    let state = match &props.search {
        None => "idle",
        Some(Search::Running { .. }) => "running",
        Some(Search::Done(_)) => "done",
        Some(Search::Stopped(_)) => "stopped",
    };
    html! {
        <section id="causes" class="causes-pane" aria-label="all causes" data-state={state}
                 data-query={qid.clone()}>
            <div class="causes-head">
                <button id="find-causes" class="button" disabled={running} onclick={find}
                        title={format!("find every op whose repair the answer needs: delta debugging over replays of the memory system (simulated provider, at most {BUDGET} replays)")}>
                    {"Find all causes"}</button>
                if let Some(Search::Running { calls }) = &props.search {
                    <span id="causes-progress" class="muted" role="status">
                        { format!("replaying… {calls} model calls") }</span>
                    <button id="causes-cancel" class="button small" onclick={cancel}
                            title="stop the search">{"Cancel"}</button>
                }
            </div>
            if props.search.is_none() {
                <p class="muted causes-hint">{"The minimal set of ops whose repair rescues this answer, when one op is not enough."}</p>
            }
            if let Some(Search::Stopped(why)) = &props.search {
                <p class="muted" id="causes-stopped" role="status">{ format!("stopped: {why}") }</p>
            }
            if let Some(Search::Done(set)) = &props.search {
                { result(props, set) }
            }
        </section>
    }
}

/// The set, or why there is none, and the replays.
fn result(props: &Props, set: &DecisiveSet) -> Html {
    let t = &props.trace.0;
    let outcome = outcome_label(set.outcome);
    let head = match set.outcome {
        SetOutcome::Found | SetOutcome::Budget => format!(
            "{} cause{} {outcome}",
            set.ops.len(),
            if set.ops.len() == 1 { "" } else { "s" }
        ),
        _ => outcome.to_owned(),
    };
    html! {
        <div class="causes-result" data-outcome={outcome}>
            <p class="causes-outcome" role="status"><strong>{ head }</strong>
                {" — "}<span class="muted">{ &set.detail }</span></p>
            if set.outcome == SetOutcome::NotReplayable {
                { single(props) }
            }
            if !set.ops.is_empty() {
                <ol id="causes-list" class="causes-list">
                    { for set.ops.iter().map(|op| cause_item(props, &tag(t, &set.ops, op))) }
                </ol>
            }
            if !set.replays.is_empty() {
                { replays(props, set) }
            }
        </div>
    }
}

/// The single-op verdict that stands for a trace that cannot be replayed.
fn single(props: &Props) -> Html {
    let t = &props.trace.0;
    let v = props.verdict.clone().or_else(|| {
        let c = t.cases.get(props.case)?;
        memtrace::session::infoflow_verdict(t, &props.roles.0, c).ok()
    });
    let Some(v) = v else {
        return html! { <p id="causes-single" class="muted">{"No single-op verdict either."}</p> };
    };
    let (on_select, op) = (props.on_select.clone(), t.op_by_id(&v.op_id));
    html! {
        <p id="causes-single" data-op={v.op_id.clone()}>
            {"The single-op verdict stands: "}<strong>{ v.error_type.as_str() }</strong>{" at "}
            <button class="link" onclick={Callback::from(move |_| on_select.emit(op.map(NodeRef::Op)))}>
                { short_name(t, &v.op_id) }</button>
            {" "}<code>{ v.op_id.clone() }</code>
        </p>
    }
}

/// A chip naming an op: `cause N` in its colour, or the op's short name.
fn chip(g: &OpTag) -> Html {
    let style = g.cause.map(|n| format!("--cause: {}", cause_color(n)));
    html! {
        <span class={classes!("op-tag", g.cause.is_some().then_some("cause-chip"))} data-op={g.op_id.clone()}
              data-cause={g.cause.map(|n| n.to_string())} {style} title={g.op_id.clone()}>{ &g.label }</span>
    }
}

fn cause_item(props: &Props, g: &OpTag) -> Html {
    let t = &props.trace.0;
    let op = t.op_by_id(&g.op_id);
    let on_select = props.on_select.clone();
    html! {
        <li class="cause" data-op={g.op_id.clone()} data-cause={g.cause.map(|n| n.to_string())}>
            { chip(g) }
            <button class="link" title="show this op in the inspector"
                    onclick={Callback::from(move |_| on_select.emit(op.map(NodeRef::Op)))}>
                { short_name(t, &g.op_id) }</button>
            <code class="muted">{ &g.op_id }</code>
        </li>
    }
}

fn replays(props: &Props, set: &DecisiveSet) -> Html {
    let rows = replay_rows(&props.trace.0, set);
    html! {
        <details class="causes-replays" open=true>
            <summary>{ format!("{} replays", rows.len()) }</summary>
            <ol id="causes-replays">
                { for rows.iter().map(|r| {
                    let (outcome, class) = if r.rescued { ("right", "ok") } else { ("wrong", "wrong") };
                    html! {
                        <li class="replay" data-n={r.n.to_string()} data-rescued={r.rescued.to_string()}>
                            <span class="replay-what">{"repaired "}{ for r.repaired.iter().map(chip) }</span>
                            <span class={classes!("replay-outcome", class)}
                                  title={if r.rescued { "the replayed answer is judged right: rescued" } else { "the replayed answer is still judged wrong" }}>
                                { format!("→ {outcome}") }</span>
                            if let Some(a) = &r.answer {
                                <span class="replay-answer muted" title={a.clone()}>{ a.clone() }</span>
                            }
                        </li>
                    }
                }) }
            </ol>
        </details>
    }
}
