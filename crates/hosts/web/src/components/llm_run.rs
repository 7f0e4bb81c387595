//! Running an LLM attribution method: on the selected case or on every case still without a
//! verdict of that method, with a progress bar, a live token and cost meter, Cancel, the cases
//! that failed (retry them), the transcript of the selected case and its counterfactual check.
//! Each verdict goes up as soon as its case finishes, so the page stores it at once.

use std::collections::BTreeMap;
use std::rc::Rc;

use memtrace::attribution::counterfactual::Outcome;
use memtrace::attribution::transcript::Step;
use memtrace::attribution::RoleConfig;
use memtrace::session::pending;
use memtrace::session::MethodOptions;
use memtrace::Trace;
use yew::prelude::*;

use super::provider::stored_key;
use super::transcript::Transcript;
use super::Shared;
use crate::runs::llm_run::{Meter, ProviderSettings};
use crate::services::runner::{self, RunEvent, Stopper};
use crate::state::Verdict;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub method: String,
    pub trace: Shared<Trace>,
    pub case: Option<usize>,
    pub verdicts: BTreeMap<String, Verdict>,
    pub provider: ProviderSettings,
    pub on_verdict: Callback<(String, Option<Verdict>)>,
    pub on_highlight: Callback<Vec<String>>,
    /// The op roles with the user's overrides: every run uses them.
    pub roles: RoleConfig,
}

/// The run on screen.
#[derive(Debug, Clone, PartialEq, Default)]
struct RunState {
    running: bool,
    done: usize,
    total: usize,
    meter: Meter,
    /// The case being worked on, and its steps so far.
    current: Option<String>,
    live: Vec<Step>,
    /// Failed cases: `query_id` → error.
    failed: BTreeMap<String, String>,
    /// The steps of each failed case (all its attempts): what the model said, though it gave no
    /// verdict.
    failed_steps: BTreeMap<String, Vec<Step>>,
    note: Option<String>,
}

enum Msg {
    Begin(usize),
    Event(RunEvent),
}

impl Reducible for RunState {
    type Action = Msg;
    fn reduce(self: Rc<Self>, msg: Msg) -> Rc<Self> {
        let mut s = (*self).clone();
        match msg {
            Msg::Begin(total) => {
                s.running = true;
                s.done = 0;
                s.total = total;
                s.note = None;
            }
            Msg::Event(RunEvent::Started { query_id }) => {
                s.current = Some(query_id);
                s.live.clear();
            }
            Msg::Event(RunEvent::Reply { usage, steps }) => {
                s.meter.add(usage);
                s.live.extend(steps);
            }
            Msg::Event(RunEvent::Resolved { turn, steps }) => {
                // The turn's pending steps give way to the resolved ones, in place.
                if let Some(at) = s.live.iter().position(|x| x.turn == turn) {
                    let end = s.live[at..]
                        .iter()
                        .position(|x| x.turn != turn)
                        .map_or(s.live.len(), |n| at + n);
                    s.live.splice(at..end, steps);
                }
            }
            Msg::Event(RunEvent::Finished { query_id, .. }) => {
                s.done += 1;
                s.failed.remove(&query_id);
                s.failed_steps.remove(&query_id);
            }
            Msg::Event(RunEvent::Failed { query_id, error }) => {
                s.done += 1;
                s.failed_steps
                    .insert(query_id.clone(), std::mem::take(&mut s.live));
                s.failed.insert(query_id, error);
            }
            Msg::Event(RunEvent::Ended { cancelled }) => {
                s.running = false;
                s.current = None;
                s.live.clear();
                s.note = cancelled.then(|| "cancelled".to_owned());
            }
        }
        Rc::new(s)
    }
}

#[function_component(RunPanel)]
pub fn run_panel(props: &Props) -> Html {
    let state = use_reducer(RunState::default);
    let stopper = use_mut_ref(|| None::<Stopper>);
    let checking = use_state(|| None::<String>);
    // A run stops when the trace changes or the panel goes away.
    {
        let stopper = stopper.clone();
        use_effect_with(props.trace.clone(), move |_| {
            move || {
                if let Some(s) = stopper.borrow_mut().take() {
                    s.stop();
                }
            }
        });
    }
    let method = MethodOptions {
        method: props.method.clone(),
        ..MethodOptions::default()
    };
    // A method the session cannot plan cannot run (its buttons are off).
    let unplanned = method.plan(&props.roles).is_err();
    let t = props.trace.0.clone();

    let start = {
        let (state, stopper) = (state.clone(), stopper.clone());
        let (t, provider, on_verdict, roles) = (
            t.clone(),
            props.provider.clone(),
            props.on_verdict.clone(),
            props.roles.clone(),
        );
        move |cases: Vec<usize>| {
            if cases.is_empty() || state.running {
                return;
            }
            let Some(s) = Stopper::new() else { return };
            *stopper.borrow_mut() = Some(s.clone());
            state.dispatch(Msg::Begin(cases.len()));
            let (dispatch, on_verdict) = (state.dispatcher(), on_verdict.clone());
            let report: Rc<dyn Fn(RunEvent)> = Rc::new(move |e: RunEvent| {
                if let RunEvent::Finished { query_id, verdict } = &e {
                    on_verdict.emit((query_id.clone(), Some(verdict.clone())));
                }
                dispatch.dispatch(Msg::Event(e));
            });
            let key = stored_key(&provider);
            wasm_bindgen_futures::spawn_local(runner::run_cases(
                t.clone(),
                method.clone(),
                cases,
                provider.clone(),
                roles.clone(),
                key,
                s,
                report,
            ));
        }
    };
    let run_one = {
        let (start, case) = (start.clone(), props.case);
        Callback::from(move |_: MouseEvent| start(case.into_iter().collect()))
    };
    let run_all = {
        let (start, t, verdicts, m) = (
            start.clone(),
            t.clone(),
            props.verdicts.clone(),
            props.method.clone(),
        );
        Callback::from(move |_: MouseEvent| start(pending(&t, &verdicts, Some(&m))))
    };
    let retry_failed = {
        let (start, t, failed) = (start, t.clone(), state.failed.clone());
        Callback::from(move |_: MouseEvent| {
            let cases = t
                .cases
                .iter()
                .enumerate()
                .filter(|(_, c)| failed.contains_key(&c.query_id))
                .map(|(i, _)| i)
                .collect();
            start(cases);
        })
    };
    let cancel = {
        let stopper = stopper.clone();
        Callback::from(move |_: MouseEvent| {
            if let Some(s) = stopper.borrow().as_ref() {
                s.stop();
            }
        })
    };

    let case = props.case.and_then(|i| t.cases.get(i));
    let verdict = case.and_then(|c| props.verdicts.get(&c.query_id));
    let live = case.is_some_and(|c| state.current.as_deref() == Some(c.query_id.as_str()));
    // The live run's steps, else those of the verdict's run, else (info-flow's verdict has no
    // steps) those of a run that ended without one.
    let steps = if live {
        state.live.clone()
    } else if let Some(v) = verdict.filter(|v| !v.transcript.is_empty()) {
        v.transcript.clone()
    } else {
        case.and_then(|c| state.failed_steps.get(&c.query_id))
            .cloned()
            .unwrap_or_default()
    };
    let check = {
        let (t, provider, on_verdict, checking) = (
            t.clone(),
            props.provider.clone(),
            props.on_verdict.clone(),
            checking.clone(),
        );
        let target = props
            .case
            .zip(case.map(|c| c.query_id.clone()))
            .zip(verdict.cloned());
        Callback::from(move |_: MouseEvent| {
            let Some(((ix, qid), v)) = target.clone() else {
                return;
            };
            let (t, provider, on_verdict, checking) = (
                t.clone(),
                provider.clone(),
                on_verdict.clone(),
                checking.clone(),
            );
            checking.set(Some("checking…".into()));
            wasm_bindgen_futures::spawn_local(async move {
                let key = stored_key(&provider);
                match runner::counterfactual_check(t, ix, v.op_id.clone(), provider, key).await {
                    Ok(c) => {
                        checking.set(Some(c.detail.clone()));
                        let mut v = v;
                        v.counterfactual = Some(c.outcome);
                        on_verdict.emit((qid, Some(v)));
                    }
                    Err(m) => checking.set(Some(m)),
                }
            });
        })
    };

    let m = state.meter;
    let usd = props.provider.cost_usd(m.usage);
    let to_do = pending(&t, &props.verdicts, Some(&props.method)).len();
    html! {
        <div id="llm-run" class="llm-run">
            <div class="attr-controls">
                <button id="run-one" class="button" disabled={state.running || case.is_none() || unplanned}
                        onclick={run_one}>{"Run on this case"}</button>
                <button id="run-all" class="button" disabled={state.running || to_do == 0 || unplanned}
                        onclick={run_all} title="cases with a verdict of this method are skipped">
                    { format!("Run on all ({to_do} to do)") }</button>
                <button id="run-cancel" class="button" disabled={!state.running} onclick={cancel}>{"Cancel"}</button>
                if state.total > 0 {
                    <progress id="run-progress" max={state.total.to_string()} value={state.done.to_string()}
                              data-done={state.done.to_string()} data-total={state.total.to_string()}></progress>
                    <span class="muted">{ format!("{}/{}", state.done, state.total) }</span>
                }
                <span id="run-meter" class="meter" title="spent in this tab since it opened, over all runs"
                      data-calls={m.calls.to_string()}
                      data-input={m.usage.input_tokens.to_string()} data-output={m.usage.output_tokens.to_string()}
                      data-usd={format!("{usd:.6}")}>
                    { format!("this tab: {} calls · {} in / {} out tokens · ${usd:.4}", m.calls, m.usage.input_tokens, m.usage.output_tokens) }
                </span>
                if let Some(n) = &state.note { <span class="muted">{ n.clone() }</span> }
            </div>
            if !state.failed.is_empty() {
                <div id="run-failed" class="error" role="alert">
                    <p>{ format!("{} case(s) ended with no verdict:", state.failed.len()) }
                        {" "}<button id="retry-failed" class="button" disabled={state.running} onclick={retry_failed}>{"retry failed"}</button></p>
                    <ul>
                        { for state.failed.iter().map(|(q, e)| html! {
                            <li class="failed-case" data-query={q.clone()}><code>{ q.clone() }</code>{ format!(": no verdict: {e}") }</li>
                        }) }
                    </ul>
                </div>
            }
            if let Some(v) = verdict.filter(|_| !live) {
                <div class="attr-controls">
                    <button id="cf-check" class="button" disabled={checking.as_deref() == Some("checking…")} onclick={check}
                            title="replay the answer with the blamed op corrected, through this provider">{"check counterfactual"}</button>
                    <span id="cf-status" data-outcome={v.counterfactual.map(Outcome::as_str)}>
                        { v.counterfactual.map_or("not checked", Outcome::as_str) }</span>
                    if let Some(c) = &*checking { <span class="muted">{ format!(" — {c}") }</span> }
                </div>
            }
            <Transcript steps={steps} live={live} on_highlight={props.on_highlight.clone()} />
        </div>
    }
}
