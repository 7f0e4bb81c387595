//! The Optimize view (`O`): the prompt optimizer's closed loop on the reference memory system.
//! Conversations (built in, or a LoCoMo file), the train / held-out split and rounds; the
//! memory system run by the simulated provider or the configured one; the optimizer is the
//! configured provider. Steps advance with a progress bar, a token and cost meter and Cancel;
//! the loop is saved to IndexedDB after each step, so a reload resumes it. Shows accuracy per
//! round, each prompt's versions with a side-by-side diff, and the exports.

use std::rc::Rc;

use memtrace::provider::{ChatRequest, ChatResponse, HttpLlm, Llm, ProviderError, Usage};
use memtrace_memsys::closed_loop::{advance, ExportKind, LoopState, Phase};
use memtrace_memsys::simulated::SimulatedLlm;
use memtrace_memsys::{Conversation, Prompts};
use wasm_bindgen::JsCast;
use web_sys::{DragEvent, HtmlInputElement};
use yew::prelude::*;

use super::compare::CompareRounds;
use super::inspector::diff_rows;
use super::provider::{stored_key, ProviderForm};
use crate::runs::llm_run::{Meter, ProviderSettings};
use crate::runs::optimize::{
    check_setup, conversations_of, loop_config, parse_conversations, parse_positions, SavedLoop,
    Setup, Source,
};
use crate::services::http::{FetchTransport, TimerSleep};
use crate::services::runner::{self, Stopper};
use crate::services::{files, storage};
use memtrace::text::diff::side_by_side;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub provider: ProviderSettings,
    pub on_provider: Callback<ProviderSettings>,
    pub on_close: Callback<()>,
}

/// The view's state.
#[derive(Clone, Default)]
struct View {
    source: Source,
    convs: Rc<Vec<Conversation>>,
    setup: Setup,
    /// The loop on screen (running, stopped or done), as saved.
    saved: Option<SavedLoop>,
    restored: bool,
    running: bool,
    meter: Meter,
    note: Option<String>,
    /// The prompt version whose diff is shown.
    selected: Option<(String, u32)>,
}

enum Msg {
    Restored(Option<SavedLoop>, Option<String>),
    Conversations(Source, Vec<Conversation>),
    Setup(Setup),
    Begin,
    Step(SavedLoop),
    Usage(Usage),
    Ended(Option<String>),
    Note(Option<String>),
    Select(String, u32),
    Discard,
}

impl Reducible for View {
    type Action = Msg;
    fn reduce(self: Rc<Self>, msg: Msg) -> Rc<Self> {
        let mut s = (*self).clone();
        match msg {
            Msg::Restored(saved, note) => {
                s.restored = true;
                s.note = note;
                if let Some(saved) = saved {
                    match conversations_of(&saved.source) {
                        Ok(c) => {
                            s.convs = Rc::new(c);
                            s.source = saved.source.clone();
                            s.setup = saved.setup.clone();
                            s.saved = Some(saved);
                        }
                        Err(m) => s.note = Some(format!("the saved loop cannot resume: {m}")),
                    }
                }
            }
            Msg::Conversations(source, convs) => {
                s.source = source;
                s.convs = Rc::new(convs);
                s.saved = None;
                s.note = None;
            }
            Msg::Setup(setup) => s.setup = setup,
            Msg::Begin => {
                s.running = true;
                s.note = None;
            }
            Msg::Step(saved) => s.saved = Some(saved),
            Msg::Usage(u) => s.meter.add(u),
            Msg::Ended(note) => {
                s.running = false;
                s.note = note;
            }
            Msg::Note(note) => s.note = note,
            Msg::Select(name, version) => s.selected = Some((name, version)),
            Msg::Discard => {
                s.saved = None;
                s.selected = None;
                s.meter = Meter::default();
            }
        }
        Rc::new(s)
    }
}

/// An [`Llm`] that reports each answered call's usage.
struct Metered<'a, L> {
    inner: &'a L,
    on_usage: &'a dyn Fn(Usage),
}

impl<L: Llm> Llm for Metered<'_, L> {
    async fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, ProviderError> {
        let reply = self.inner.chat(req).await?;
        (self.on_usage)(reply.usage);
        Ok(reply)
    }
}

/// Who runs the memory system.
enum System {
    Simulated,
    Provider(Box<HttpLlm<FetchTransport, TimerSleep>>),
}

impl Llm for System {
    async fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, ProviderError> {
        match self {
            Self::Simulated => SimulatedLlm.chat(req).await,
            Self::Provider(p) => p.chat(req).await,
        }
    }
}

/// Advances `saved` until done or stopped, saving it after each step.
async fn run_loop(
    mut saved: SavedLoop,
    convs: Rc<Vec<Conversation>>,
    provider: ProviderSettings,
    stopper: Stopper,
    dispatch: UseReducerDispatcher<View>,
) {
    let key = stored_key(&provider);
    let optimizer = match runner::provider(&provider, key.as_ref(), &stopper) {
        Ok(o) => o,
        Err(m) => return dispatch.dispatch(Msg::Ended(Some(format!("optimizer: {m}")))),
    };
    let system = if saved.setup.system_provider {
        match runner::provider(&provider, key.as_ref(), &stopper) {
            Ok(p) => System::Provider(Box::new(p)),
            Err(m) => return dispatch.dispatch(Msg::Ended(Some(format!("memory system: {m}")))),
        }
    } else {
        System::Simulated
    };
    let d = dispatch.clone();
    let on_usage = move |u: Usage| d.dispatch(Msg::Usage(u));
    // The simulated provider is free: only a provider-run system is metered.
    let free = |_: Usage| {};
    let system = Metered {
        inner: &system,
        on_usage: if saved.setup.system_provider {
            &on_usage
        } else {
            &free
        },
    };
    let optimizer = Metered {
        inner: &optimizer,
        on_usage: &on_usage,
    };
    let mut note = None;
    while saved.state.phase != Phase::Done {
        if stopper.stopped() {
            note = Some("cancelled; Resume continues from the last finished step".to_owned());
            break;
        }
        let step = advance(&mut saved.state, &convs, &system, &optimizer, &mut |_| {}).await;
        if let Err(e) = step {
            note = Some(if stopper.stopped() {
                "cancelled; Resume continues from the last finished step".to_owned()
            } else {
                format!("the step failed ({e}); Resume retries it")
            });
            break;
        }
        let json = serde_json::to_string(&saved).ok();
        if let Err(m) = storage::save_loop(json).await {
            note = Some(m);
        }
        dispatch.dispatch(Msg::Step(saved.clone()));
    }
    dispatch.dispatch(Msg::Ended(note));
}

fn input_text(e: &Event) -> String {
    e.target()
        .and_then(|t| t.dyn_into::<HtmlInputElement>().ok())
        .map(|i| i.value())
        .unwrap_or_default()
}

fn read_file(file: web_sys::File, dispatch: UseReducerDispatcher<View>) {
    wasm_bindgen_futures::spawn_local(async move {
        let name = file.name();
        let bytes = gloo_file::futures::read_as_bytes(&gloo_file::Blob::from(file)).await;
        let parsed = bytes
            .map_err(|e| format!("the browser could not read it: {e}"))
            .and_then(|b| {
                let convs = parse_conversations(&b)?;
                Ok((String::from_utf8_lossy(&b).into_owned(), convs))
            });
        dispatch.dispatch(match parsed {
            Ok((text, convs)) => Msg::Conversations(
                Source {
                    name: name.clone(),
                    json: Some(text),
                },
                convs,
            ),
            Err(m) => Msg::Note(Some(format!("{name}: {m}"))),
        });
    });
}

#[function_component(OptimizeView)]
pub fn optimize_view(props: &Props) -> Html {
    let view = use_reducer(|| View {
        source: Source::demo(),
        convs: Rc::new(crate::runs::optimize::demo_conversations()),
        ..View::default()
    });
    let stopper = use_mut_ref(|| None::<Stopper>);
    {
        let dispatch = view.dispatcher();
        let stopper = stopper.clone();
        use_effect_with((), move |()| {
            wasm_bindgen_futures::spawn_local(async move {
                let msg = match storage::load_loop().await {
                    Ok(Some(json)) => match serde_json::from_str::<SavedLoop>(&json) {
                        Ok(s) => Msg::Restored(Some(s), None),
                        Err(e) => Msg::Restored(
                            None,
                            Some(format!(
                                "the saved loop is unreadable ({e}); start a new one"
                            )),
                        ),
                    },
                    Ok(None) => Msg::Restored(None, None),
                    Err(m) => Msg::Restored(None, Some(m)),
                };
                dispatch.dispatch(msg);
            });
            // Closing the view stops a running loop (it resumes from the saved step).
            move || {
                if let Some(s) = stopper.borrow_mut().take() {
                    s.stop();
                }
            }
        });
    }

    let run = {
        let (view, stopper, provider) = (view.clone(), stopper.clone(), props.provider.clone());
        Callback::from(move |_: MouseEvent| {
            if view.running {
                return;
            }
            let saved = if let Some(s) = view.saved.clone().filter(|s| s.state.phase != Phase::Done)
            {
                s
            } else {
                if let Err(m) = check_setup(&view.setup, view.convs.len()) {
                    view.dispatch(Msg::Note(Some(m)));
                    return;
                }
                let cfg = loop_config(&view.setup, &provider);
                match LoopState::new(cfg, Prompts::default()) {
                    Ok(state) => SavedLoop {
                        source: view.source.clone(),
                        setup: view.setup.clone(),
                        state,
                    },
                    Err(e) => return view.dispatch(Msg::Note(Some(e.to_string()))),
                }
            };
            let Some(s) = Stopper::new() else { return };
            *stopper.borrow_mut() = Some(s.clone());
            view.dispatch(Msg::Begin);
            view.dispatch(Msg::Step(saved.clone()));
            wasm_bindgen_futures::spawn_local(run_loop(
                saved,
                view.convs.clone(),
                provider.clone(),
                s,
                view.dispatcher(),
            ));
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
    let discard = {
        let view = view.clone();
        Callback::from(move |_: MouseEvent| {
            view.dispatch(Msg::Discard);
            let d = view.dispatcher();
            wasm_bindgen_futures::spawn_local(async move {
                if let Err(m) = storage::save_loop(None).await {
                    d.dispatch(Msg::Note(Some(m)));
                }
            });
        })
    };
    let on_file = {
        let view = view.clone();
        Callback::from(move |e: Event| {
            let input = e
                .target()
                .and_then(|t| t.dyn_into::<HtmlInputElement>().ok());
            let file = input
                .as_ref()
                .and_then(HtmlInputElement::files)
                .and_then(|l| l.get(0));
            if let Some(i) = input {
                i.set_value("");
            }
            if let Some(f) = file {
                read_file(f, view.dispatcher());
            }
        })
    };
    let on_drop = {
        let view = view.clone();
        Callback::from(move |e: DragEvent| {
            e.prevent_default();
            e.stop_propagation();
            let file = e
                .data_transfer()
                .and_then(|dt| dt.files())
                .and_then(|l| l.get(0));
            if let Some(f) = file {
                read_file(f, view.dispatcher());
            }
        })
    };
    let use_demo = {
        let view = view.clone();
        Callback::from(move |_: MouseEvent| {
            view.dispatch(Msg::Conversations(
                Source::demo(),
                crate::runs::optimize::demo_conversations(),
            ));
        })
    };
    let edit = |f: fn(&mut Setup, &str) -> Result<(), String>| {
        let view = view.clone();
        Callback::from(move |e: Event| {
            let mut setup = view.setup.clone();
            match f(&mut setup, &input_text(&e)) {
                Ok(()) => view.dispatch(Msg::Setup(setup)),
                Err(m) => view.dispatch(Msg::Note(Some(m))),
            }
        })
    };
    let on_train = edit(|s, t| {
        s.train = parse_positions(t)?;
        Ok(())
    });
    let on_heldout = edit(|s, t| {
        s.heldout = parse_positions(t)?;
        Ok(())
    });
    let on_rounds = edit(|s, t| {
        s.rounds = t
            .trim()
            .parse()
            .map_err(|_| format!("rounds: `{t}` is not a number"))?;
        Ok(())
    });
    let on_top_k = edit(|s, t| {
        s.top_k = t
            .trim()
            .parse()
            .map_err(|_| format!("top_k: `{t}` is not a number"))?;
        Ok(())
    });
    let on_tune = edit(|s, t| {
        s.tune_top_k = t == "tune";
        Ok(())
    });
    let on_system = edit(|s, t| {
        s.system_provider = t == "provider";
        Ok(())
    });

    let busy = view.running;
    let locked = busy || view.saved.is_some();
    let setup = &view.setup;
    let join = |v: &[usize]| {
        v.iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let resumable = view
        .saved
        .as_ref()
        .is_some_and(|s| s.state.phase != Phase::Done && !busy);
    let run_label = if resumable { "Resume" } else { "Run the loop" };
    let m = view.meter;
    let usd = props.provider.cost_usd(m.usage);
    html! {
        <section id="optimize" class="report-pane optimize" aria-label="prompt optimization"
                 ondragover={Callback::from(|e: DragEvent| { e.prevent_default(); e.stop_propagation(); })}
                 ondrop={on_drop}>
            <header class="report-head">
                <h2>{"Optimize the prompts: the closed loop"}</h2>
                <span class="spacer"></span>
                <button class="button" onclick={props.on_close.reform(|_: MouseEvent| ())}>{"Close (O)"}</button>
            </header>
            <p class="muted">{"Runs the reference memory system on the training conversations, judges its answers, attributes each failure (info-flow) and rewrites the prompts the failures point at; held-out conversations are only evaluated. The optimizer is the configured provider (like the command line, there is no built-in optimizer); the memory system can be the simulated provider (rule-based, free) or the configured one."}</p>
            <div class="attr-controls">
                <span>{"Conversations: "}<strong id="opt-source">{ view.source.name.clone() }</strong>
                    { format!(" ({})", view.convs.len()) }</span>
                <button class="button" disabled={locked} onclick={use_demo}>{"use the built-in ones"}</button>
                <label class="button picker" title="or drop a LoCoMo conversations JSON on this view">
                    {"Open conversations…"}
                    <input id="opt-file" type="file" accept=".json,application/json" disabled={locked} onchange={on_file} />
                </label>
            </div>
            <ol id="opt-conversations" class="muted" start="0">
                { for view.convs.iter().map(|c| html! {
                    <li>{ format!("{} — {} and {}, {} sessions, {} questions", c.user_id(), c.speaker_a, c.speaker_b, c.sessions.len(), c.questions.len()) }</li>
                }) }
            </ol>
            <div class="attr-controls">
                <label>{"train "}<input id="opt-train" size="6" value={join(&setup.train)} disabled={locked} onchange={on_train} /></label>
                <label>{"held-out "}<input id="opt-heldout" size="6" value={join(&setup.heldout)} disabled={locked} onchange={on_heldout} /></label>
                <label>{"rounds "}<input id="opt-rounds" type="number" min="1" max="10" value={setup.rounds.to_string()} disabled={locked} onchange={on_rounds} /></label>
                <label>{"top_k "}<input id="opt-top-k" type="number" min="1" max="50" value={setup.top_k.to_string()} disabled={locked} onchange={on_top_k} /></label>
                <label>{"settings "}
                    <select id="opt-tune" disabled={locked} onchange={on_tune}>
                        <option value="tune" selected={setup.tune_top_k}>{"tune top_k too"}</option>
                        <option value="prompts" selected={!setup.tune_top_k}>{"prompts only"}</option>
                    </select>
                </label>
                <label>{"memory system "}
                    <select id="opt-system" disabled={locked} onchange={on_system}>
                        <option value="simulated" selected={!setup.system_provider}>{"simulated (free)"}</option>
                        <option value="provider" selected={setup.system_provider}>{"the configured provider"}</option>
                    </select>
                </label>
            </div>
            <ProviderForm settings={props.provider.clone()} on_change={props.on_provider.clone()} />
            <div class="attr-controls">
                <button id="opt-run" class="button" disabled={busy || !view.restored} onclick={run}>{ run_label }</button>
                <button id="opt-cancel" class="button" disabled={!busy} onclick={cancel}>{"Cancel"}</button>
                <button id="opt-discard" class="button" disabled={busy || view.saved.is_none()} onclick={discard}
                        title="forget this loop and start a new one">{"New loop"}</button>
                if let Some(s) = &view.saved {
                    <progress id="opt-progress" max={s.state.config.steps_total().to_string()} value={s.state.steps_done().to_string()}
                              data-done={s.state.steps_done().to_string()} data-total={s.state.config.steps_total().to_string()}
                              data-phase={format!("{:?}", s.state.phase)}></progress>
                    <span class="muted">{ format!("{}/{} steps · {:?}", s.state.steps_done(), s.state.config.steps_total(), s.state.phase) }</span>
                }
                <span id="opt-meter" class="meter" data-calls={m.calls.to_string()}
                      data-input={m.usage.input_tokens.to_string()} data-output={m.usage.output_tokens.to_string()}
                      data-usd={format!("{usd:.6}")}>
                    { format!("{} calls · {} in / {} out tokens · ${usd:.4}", m.calls, m.usage.input_tokens, m.usage.output_tokens) }
                </span>
            </div>
            if let Some(n) = &view.note { <p id="opt-note" class="error" role="alert">{ n.clone() }</p> }
            if let Some(s) = &view.saved {
                { chart(&s.state) }
                { versions(&s.state, view.selected.as_ref(), &view.dispatcher()) }
                <CompareRounds state={s.state.clone()} />
                { exports(&s.state, busy, &view.dispatcher()) }
            }
        </section>
    }
}

/// Accuracy per round: train and held-out bars, CSS heights.
fn chart(state: &LoopState) -> Html {
    let pct = |a: f64| format!("{:.1}", a.clamp(0.0, 1.0) * 100.0);
    html! {
        <div id="opt-chart" class="opt-chart" role="img" aria-label="accuracy per round">
            { for state.series().into_iter().zip(&state.rounds).map(|((round, train, held), rec)| html! {
                <div class={classes!("opt-round", rec.rejected.is_some().then_some("rejected"))} data-round={round.to_string()} data-train={pct(train)}
                     data-heldout={held.map(pct)} title={rec.rejected.clone().map(|w| format!("rejected: {w}"))}>
                    <div class="opt-bars">
                        <span class="opt-bar train" title={format!("train {}%", pct(train))}
                              style={format!("height:{}%", pct(train))}></span>
                        if let Some(h) = held {
                            <span class="opt-bar heldout" title={format!("held-out {}%", pct(h))}
                                  style={format!("height:{}%", pct(h))}></span>
                        }
                    </div>
                    <span class="opt-label">{ format!("r{round}: {}%", pct(train)) }
                        { held.map(|h| format!(" / {}%", pct(h))).unwrap_or_default() }
                        { memtrace_memsys::closed_loop::keep::settings_label(&rec.settings) }
                        { if rec.rejected.is_some() { " · rejected" } else { "" } }</span>
                </div>
            }) }
            <span class="muted opt-legend">{"train (green) / held-out (blue)"}</span>
        </div>
    }
}

/// Each prompt's versions as buttons; the selected one's diff from its parent, side by side.
fn versions(
    state: &LoopState,
    selected: Option<&(String, u32)>,
    dispatch: &UseReducerDispatcher<View>,
) -> Html {
    let by = state.versions_by_prompt();
    let shown = selected.and_then(|(n, ver)| {
        state
            .versions
            .iter()
            .find(|v| &v.name == n && v.version == *ver)
    });
    html! {
        <div id="opt-versions">
            <h3>{"Prompt versions"}</h3>
            <table>
                { for by.iter().map(|(name, list)| html! {
                    <tr><th>{ name.clone() }</th><td>
                        { for list.iter().map(|v| {
                            let (d, n, ver) = (dispatch.clone(), v.name.clone(), v.version);
                            let active = selected.is_some_and(|(sn, sv)| *sn == n && *sv == ver);
                            html! {
                                <button class={classes!("button", "opt-version", active.then_some("active"))}
                                        data-name={n.clone()} data-version={ver.to_string()}
                                        onclick={Callback::from(move |_| d.dispatch(Msg::Select(n.clone(), ver)))}>
                                    { format!("@{ver}") }{ v.round.map(|r| format!(" (round {r})")).unwrap_or_default() }
                                </button>
                            }
                        }) }
                    </td></tr>
                }) }
            </table>
            if let Some(v) = shown {
                <div id="opt-diff">
                    <p>{ format!("{}@{}", v.name, v.version) }
                        { v.parent.map_or_else(|| " (the starting prompt)".into(), |p| format!(" from @{p}")) }
                        { v.score.map(|s| format!(" · train accuracy when used {:.1}%", s * 100.0)).unwrap_or_default() }</p>
                    if !v.feedback.is_empty() { <p class="muted">{ format!("feedback: {}", v.feedback) }</p> }
                    if !v.cases.is_empty() { <p class="muted">{ format!("caused by: {}", v.cases.join(", ")) }</p> }
                    <table class="diff">
                        { diff_rows(&side_by_side(state.parent_value(v), &v.value)) }
                    </table>
                </div>
            }
        </div>
    }
}

fn exports(state: &LoopState, busy: bool, dispatch: &UseReducerDispatcher<View>) -> Html {
    let button = |id: &'static str, kind: ExportKind, text: &'static str| {
        let (state, dispatch) = (state.clone(), dispatch.clone());
        let onclick = Callback::from(move |_: MouseEvent| {
            let (name, mime, body) = state.export(kind);
            if let Err(m) = files::download(&name, body.as_bytes(), mime) {
                dispatch.dispatch(Msg::Note(Some(m)));
            }
        });
        html! { <button {id} class="button" disabled={busy} {onclick}>{ text }</button> }
    };
    html! {
        <div id="opt-exports" class="attr-controls opt-exports">
            <span>{"Export: "}</span>
            { button("opt-export-update-results", ExportKind::UpdateResults, "update_results.json") }
            { button("opt-export-mem0", ExportKind::Mem0, "Mem0 config keys") }
            { button("opt-export-text", ExportKind::Text, "plain text") }
            { button("opt-export-html", ExportKind::Html, "loop page (HTML)") }
        </div>
    }
}
