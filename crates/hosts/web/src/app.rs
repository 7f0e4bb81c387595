//! The page: one reducer shared by small components; keyboard shortcuts; IndexedDB restore and
//! sync.

use std::rc::Rc;
use std::sync::Arc;

use wasm_bindgen::JsCast;
use web_sys::{HtmlElement, KeyboardEvent};
use yew::prelude::*;

use crate::components::{
    attribution::AttributionPanel,
    causes::CausesPanel,
    compare_traces::CompareTraces,
    drop_zone::{DropZone, FilePicker},
    errors::ErrorList,
    fail_rules::FailRulesPanel,
    failures::FailuresList,
    graph::Graph,
    help::Help,
    inspector::Inspector,
    optimize::OptimizeView,
    progress::ProgressBar,
    report::ReportView,
    roles::RolesPanel,
    search::Search,
    story::StoryView,
    summary::SummaryCard,
    Shared,
};
use crate::runs::causes::{Causes, CausesAction, Search as CauseSearch};
use crate::services::{files, storage};
use crate::state::{Action, PageState};

/// Adapter so `PageState::reduce` drives `use_reducer`.
#[derive(Default, PartialEq)]
struct Store(PageState);

impl Reducible for Store {
    type Action = Action;
    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        Rc::new(Store(self.0.clone().reduce(action)))
    }
}

/// True when the key goes to a text field or menu.
fn typing(e: &KeyboardEvent) -> bool {
    e.target()
        .and_then(|t| t.dyn_into::<HtmlElement>().ok())
        .is_some_and(|el| matches!(el.tag_name().as_str(), "INPUT" | "SELECT" | "TEXTAREA"))
}

/// The shortcut for a key press outside text fields, if any.
fn shortcut(e: &KeyboardEvent) -> Option<Action> {
    if e.ctrl_key() || e.meta_key() || e.alt_key() {
        return None;
    }
    let key = e.key();
    if typing(e) && key != "Escape" {
        return None;
    }
    Some(match key.as_str() {
        "?" => Action::ToggleHelp,
        "Escape" => Action::Escape,
        "j" => Action::MoveCase(1),
        "k" => Action::MoveCase(-1),
        "f" => Action::Fit,
        "x" => Action::ExpandSelected,
        "r" => Action::ResetView,
        "w" => Action::ToggleWhole,
        "g" => Action::ToggleGraph,
        "R" => Action::ToggleReport,
        "O" => Action::ToggleOptimize,
        "L" => Action::ToggleRoles,
        _ => return None,
    })
}

/// Adapter so `Causes::reduce` ("find all causes" searches) drives `use_reducer`.
#[derive(Default, PartialEq)]
struct CausesStore(Causes);

impl Reducible for CausesStore {
    type Action = CausesAction;
    fn reduce(self: Rc<Self>, action: CausesAction) -> Rc<Self> {
        Rc::new(CausesStore(self.0.clone().reduce(action)))
    }
}

fn storage_error(dispatch: &UseReducerDispatcher<Store>, message: String) {
    dispatch.dispatch(Action::ReadFailed {
        name: "browser storage".into(),
        message,
    });
}

#[function_component(App)]
pub fn app() -> Html {
    let store = use_reducer(Store::default);
    let causes = use_reducer(CausesStore::default);
    // True once storage has been read: only then is the state written back.
    let restored = use_state(|| false);

    {
        let dispatch = store.dispatcher();
        let restored = restored.clone();
        use_effect_with((), move |()| {
            wasm_bindgen_futures::spawn_local(async move {
                let (stored, settings) = storage::restore().await.unwrap_or_default();
                let settings: Option<crate::state::Settings> =
                    settings.and_then(|s| serde_json::from_str(&s).ok());
                // Files are read with the largest file the user set, from the first one on.
                let options =
                    crate::state::load_options(settings.as_ref().and_then(|s| s.max_bytes));
                let first_visit = stored.is_empty();
                let emit = |a| dispatch.dispatch(a);
                // The stored files open as dropped ones do (in steps, traces first).
                let stored = stored.into_iter().map(|(n, b)| (n, Arc::from(b))).collect();
                files::show_all(stored, options, &emit).await;
                // `?url=`: the file at that address, instead of the demo.
                let by_url = crate::services::url::requested();
                if first_visit && by_url.is_none() {
                    let name = crate::DEMO_NAME.to_owned();
                    match crate::services::url::demo().await {
                        Ok(bytes) => {
                            files::show_all(vec![(name, Arc::from(bytes))], options, &emit).await;
                        }
                        Err(m) => emit(Action::ReadFailed {
                            name,
                            message: format!("the demo did not load: {m}"),
                        }),
                    }
                }
                if let Some(s) = settings {
                    dispatch.dispatch(Action::Restore(s));
                }
                restored.set(true);
                if let Some(url) = by_url {
                    let dispatch = dispatch.clone();
                    crate::services::url::open(url, options, move |a| dispatch.dispatch(a));
                }
            });
        });
    }
    // Keep IndexedDB equal to the loaded files (the embedded demo excluded).
    {
        let files: Vec<(String, Arc<[u8]>)> = store
            .0
            .project
            .traces
            .iter()
            .filter(|t| t.name != crate::DEMO_NAME)
            .flat_map(memtrace::session::Entry::files)
            .collect();
        let names: Vec<String> = files.iter().map(|(n, _)| n.clone()).collect();
        let dispatch = store.dispatcher();
        use_effect_with((*restored, names), move |(ready, _)| {
            if *ready {
                wasm_bindgen_futures::spawn_local(async move {
                    if let Err(m) = storage::sync_files(files).await {
                        storage_error(&dispatch, m);
                    }
                });
            }
        });
    }
    {
        let settings = store.0.settings();
        use_effect_with((*restored, settings), move |(ready, settings)| {
            if *ready {
                let json = serde_json::to_string(settings).unwrap_or_default();
                wasm_bindgen_futures::spawn_local(async move {
                    let _ = storage::save_settings(json).await;
                });
            }
        });
    }
    // Page-wide shortcuts.
    {
        let dispatch = store.dispatcher();
        use_effect_with((), move |()| {
            let doc = web_sys::window().and_then(|w| w.document());
            let listener = doc.map(|d| {
                let opts = gloo_events::EventListenerOptions::enable_prevent_default();
                gloo_events::EventListener::new_with_options(&d, "keydown", opts, move |e| {
                    let Some(e) = e.dyn_ref::<KeyboardEvent>() else {
                        return;
                    };
                    let field = match e.key().as_str() {
                        "/" => Some("search-box"),
                        "F" => Some("failure-filter"),
                        _ => None,
                    };
                    if let (Some(id), false) = (field, typing(e)) {
                        let filter = web_sys::window()
                            .and_then(|w| w.document())
                            .and_then(|d| d.get_element_by_id(id))
                            .and_then(|el| el.dyn_into::<HtmlElement>().ok());
                        if let Some(f) = filter {
                            e.prevent_default();
                            let _ = f.focus();
                        }
                        return;
                    }
                    // Escape while files load (their progress bar is up) cancels the load.
                    let loading = || {
                        web_sys::window()
                            .and_then(|w| w.document())
                            .and_then(|d| d.get_element_by_id("load-progress"))
                            .is_some()
                    };
                    if e.key() == "Escape" && loading() {
                        files::cancel();
                    }
                    if let Some(a) = shortcut(e) {
                        e.prevent_default();
                        dispatch.dispatch(a);
                    }
                })
            });
            move || drop(listener)
        });
    }

    let on_files = {
        let dispatch = store.dispatcher();
        let options = store.0.load_options();
        Callback::from(move |list: Vec<web_sys::File>| {
            dispatch.dispatch(Action::ClearErrors);
            let dispatch = dispatch.clone();
            files::read_all(list, options, move |action| dispatch.dispatch(action));
        })
    };
    let d: Callback<Action> = store.dispatcher().to_callback();
    let on_export = {
        let store = store.clone();
        Callback::from(move |_: MouseEvent| {
            let s = &store.0;
            let files: Vec<(String, Arc<[u8]>)> = s
                .project
                .traces
                .iter()
                .flat_map(memtrace::session::Entry::files)
                .collect();
            let list: Vec<(String, &[u8])> = files.iter().map(|(n, b)| (n.clone(), &**b)).collect();
            let bytes = crate::state::bundle::export(&list, &s.settings());
            if let Err(m) = files::download("memtrace-project.json", &bytes, "application/json") {
                storage_error(&store.dispatcher(), m);
            }
        })
    };

    let state = &store.0;
    let current = state.current_trace();
    // The roles in force on screen: inferred once per trace and set of overrides (the
    // project's, when the reducer inferred them for a first verdict).
    let roles = use_memo(
        current.map(|t| {
            let kept = (t.in_force.as_ref())
                .filter(|(o, _)| o == t.roles)
                .map(|(_, r)| r.clone())
                .or_else(|| t.inferred.clone().filter(|_| t.roles.is_empty()));
            (Shared(t.trace.clone()), t.roles.clone(), kept.map(Shared))
        }),
        |d| {
            d.as_ref().map(|(t, o, kept)| {
                if let Some(r) = kept {
                    return r.0.clone();
                }
                let _t = crate::timing::stage("infer roles");
                Arc::new(memtrace::attribution::Roles::infer(
                    &t.0,
                    &memtrace::session::role_config(o),
                ))
            })
        },
    );
    let roles = Shared((*roles).clone().unwrap_or_default());
    let story_shown = state.selection.case.is_some() && !state.graph_view && !state.whole_trace;
    // The selected failure's "find all causes" search and the ops of its set.
    let search: Option<CauseSearch> = current.zip(state.selection.case).and_then(|(t, i)| {
        let c = t.trace.cases.get(i)?;
        causes.0.get(&t.name, &t.trace, &c.query_id).cloned()
    });
    let cause_ids: Vec<String> = search
        .as_ref()
        .map(|s| s.causes().to_vec())
        .unwrap_or_default();
    html! {
        <DropZone on_files={on_files.clone()}>
            <header class="topbar">
                <h1>{"memtrace"}</h1>
                <span class="tagline">{"why did the memory system answer wrongly?"}</span>
                <nav class="trace-tabs" aria-label="loaded traces">
                    { for state.project.traces.iter().enumerate().map(|(i, t)| {
                        let active = state.current == Some(i);
                        let (ds, dc) = (d.clone(), d.clone());
                        html! {
                            <span class={classes!("tab", active.then_some("active"))}>
                                <button class="tab-name" aria-pressed={active.to_string()}
                                        onclick={Callback::from(move |_| ds.emit(Action::Select(i)))}>
                                    { &t.name }
                                </button>
                                <button class="tab-close" aria-label={format!("close {}", t.name)} title="close"
                                        onclick={Callback::from(move |_| dc.emit(Action::Close(i)))}>{"×"}</button>
                            </span>
                        }
                    }) }
                </nav>
                <span class="spacer"></span>
                <FilePicker on_files={on_files} />
                <button class="button" onclick={on_export} disabled={state.project.traces.is_empty()}
                        title="save every loaded trace and the settings as one file">{"Export project"}</button>
                <button id="report-toggle" class="button" aria-pressed={state.report_open.to_string()}
                        disabled={state.project.traces.is_empty()} title="counts per error type and op (R)"
                        onclick={let d = d.clone(); Callback::from(move |_| d.emit(Action::ToggleReport))}>{"Report"}</button>
                <button id="roles-toggle" class="button" aria-pressed={state.roles_open.to_string()}
                        disabled={state.project.traces.is_empty()} title="each op name's role; override one (L)"
                        onclick={let d = d.clone(); Callback::from(move |_| d.emit(Action::ToggleRoles))}>{"Roles"}</button>
                <button id="optimize-toggle" class="button" aria-pressed={state.optimize_open.to_string()}
                        title="the prompt optimizer's closed loop (O)"
                        onclick={let d = d.clone(); Callback::from(move |_| d.emit(Action::ToggleOptimize))}>{"Optimize"}</button>
                <button class="button icon" aria-label="keyboard help" title="keyboard help (?)"
                        onclick={let d = d.clone(); Callback::from(move |_| d.emit(Action::ToggleHelp))}>{"?"}</button>
            </header>
            <ProgressBar progress={state.progress.clone()} />
            <ErrorList errors={state.errors.clone()} />
            if state.optimize_open {
                <OptimizeView
                    provider={state.provider.clone()}
                    on_provider={d.reform(Action::SetProvider)}
                    on_close={d.reform(|()| Action::ToggleOptimize)} />
            } else if let Some(t) = current {
                <SummaryCard name={t.name.clone()} summary={t.summary.clone()} />
                if state.roles_open {
                    <RolesPanel
                        trace={Shared(t.trace.clone())}
                        overrides={t.roles.clone()}
                        on_role={d.reform(|(op_name, role)| Action::SetRole { op_name, role })}
                        on_close={d.reform(|()| Action::ToggleRoles)} />
                }
                if state.report_open {
                    <ReportView
                        trace={Shared(t.trace.clone())}
                        verdicts={t.verdicts.clone()}
                        labels={t.labels.clone()}
                        selected={state.selection.case}
                        on_select={d.reform(Action::SelectCase)}
                        on_close={d.reform(|()| Action::ToggleReport)} />
                    if state.project.traces.len() >= 2 {
                        <CompareTraces traces={(0..state.project.traces.len()).map(|i| state.project.view(i)).map(|t| (t.name.clone(), Shared(t.trace.clone()), t.roles.clone())).collect::<Vec<_>>()} />
                    }
                }
                <div class="workspace">
                    <div class="failures-column">
                    <FailRulesPanel
                        trace={Shared(t.trace.clone())}
                        marks={t.marks.to_vec()}
                        rules={state.rules.clone()}
                        selected={state.selection.case}
                        on_rules={d.reform(Action::SetRules)}
                        on_mark={d.reform(|(query_id, gold, marked)| Action::SetMark { query_id, gold, marked })}
                        on_select={d.reform(Action::SelectCase)} />
                    <FailuresList
                        trace={Shared(t.trace.clone())}
                        verdicts={t.verdicts.clone()}
                        selected={state.selection.case}
                        list={state.list.clone()}
                        on_select={d.reform(Action::SelectCase)}
                        on_filter_text={d.reform(Action::FilterText)}
                        on_filter_type={d.reform(Action::FilterType)}
                        on_sort={d.reform(Action::Sort)} />
                    </div>
                    if let (Some(case), true) = (state.selection.case, story_shown) {
                        <StoryView
                            trace={Shared(t.trace.clone())}
                            case={case}
                            verdict={t.trace.cases.get(case).and_then(|c| t.verdicts.get(&c.query_id)).cloned()}
                            roles={roles.clone()}
                            selected={state.selection.node}
                            on_select={d.reform(Action::SelectNode)}
                            on_graph={d.reform(|()| Action::ToggleGraph)}
                            causes={cause_ids.clone()} />
                    } else {
                        <Graph
                            trace={Shared(t.trace.clone())}
                            case={if state.whole_trace { None } else { state.selection.case }}
                            verdict_op={verdict_op(&t, state.selection.case)}
                            highlight={state.highlight.clone()}
                            on_toggle_whole={d.reform(|()| Action::ToggleWhole)}
                            on_story={state.selection.case.map(|_| d.reform(|()| Action::ToggleGraph))}
                            expanded={state.selection.expanded.clone()}
                            selected={state.selection.node}
                            fit_requests={state.fit_requests}
                            on_select={d.reform(Action::SelectNode)}
                            on_expand={d.reform(Action::Expand)}
                            causes={cause_ids.clone()} />
                    }
                    <div class="side-column">
                        <AttributionPanel
                            name={t.name.clone()}
                            trace={Shared(t.trace.clone())}
                            case={state.selection.case}
                            verdicts={t.verdicts.clone()}
                            labels={t.labels.clone()}
                            on_verdict={d.reform(|(query_id, verdict)| Action::SetVerdict { query_id, verdict })}
                            on_label={d.reform(|(query_id, label)| Action::SetLabel { query_id, label })}
                            on_select={d.reform(Action::SelectNode)}
                            on_error={d.reform(|message| Action::ReadFailed { name: "export".into(), message })}
                            provider={state.provider.clone()}
                            on_provider={d.reform(Action::SetProvider)}
                            on_highlight={d.reform(Action::Highlight)}
                            roles={roles.clone()}
                            role_overrides={t.roles.clone()} />
                        if let Some(case) = state.selection.case {
                            <CausesPanel
                                name={t.name.clone()}
                                trace={Shared(t.trace.clone())}
                                case={case}
                                search={search.clone()}
                                verdict={t.trace.cases.get(case).and_then(|c| t.verdicts.get(&c.query_id)).cloned()}
                                roles={roles.clone()}
                                on_action={causes.dispatcher().to_callback()}
                                on_select={d.reform(Action::SelectNode)} />
                        }
                        <Search trace={Shared(t.trace.clone())} on_select={d.reform(Action::SelectNode)} />
                        if !story_shown || state.selection.node.is_some() {
                            <Inspector
                                trace={Shared(t.trace.clone())}
                                node={state.selection.node}
                                compare={state.selection.compare}
                                on_select={d.reform(Action::SelectNode)}
                                on_compare={d.reform(Action::Compare)}
                                on_expand={d.reform(Action::Expand)} />
                        }
                    </div>
                </div>
            } else {
                <div class="empty-state">
                    <h2>{"Drop trace files here"}</h2>
                    <p class="muted">{"smartcomment / MemTraceBench JSON, or a saved memtrace project. Nothing leaves your browser."}</p>
                </div>
            }
            if state.help_open {
                <Help on_close={d.reform(|()| Action::ToggleHelp)}
                      max_bytes={state.max_file_bytes()}
                      on_max_bytes={d.reform(Action::SetMaxBytes)} />
            }
        </DropZone>
    }
}

/// The op whose information path is highlighted: the attribution verdict, else the annotation.
fn verdict_op(t: &memtrace::session::View<'_>, case: Option<usize>) -> Option<String> {
    let c = t.trace.cases.get(case?)?;
    t.verdicts
        .get(&c.query_id)
        .map(|v| v.op_id.clone())
        .or_else(|| c.annotation.as_ref().map(|a| a.op_id.clone()))
}
