//! The attribution panel: pick a method, attribute the selected case or all of them, see the
//! verdict (jump to its op), label it (confirm or correct), and export verdicts and labels.
//! The LLM methods run through the provider settings and the run panel (`llm_run.rs`).
//! Text only: trace content is never injected as HTML.

use std::collections::BTreeMap;

use memtrace::attribution::{OpRole, Roles};
use memtrace::layout::{failure_view, NodeRef};
use memtrace::model::{ErrorType, FailureCase};
use memtrace::Trace;
use wasm_bindgen::JsCast;
use web_sys::HtmlSelectElement;
use yew::prelude::*;

use super::llm_run::RunPanel;
use super::provider::ProviderForm;
use super::Shared;
use crate::runs::llm_run::ProviderSettings;
use crate::services::files;
use crate::state::roles::basis_label;
use crate::state::{Label, Verdict};
use memtrace::attribution::results::op_name;
use memtrace::session::infoflow_verdict;
use memtrace::session::op_role;
use memtrace::session::{labels_json, verdict_rows_jsonl, verdicts_csv, verdicts_json};

/// Methods listed; only the first runs without an LLM provider.
const METHODS: &[(&str, &str)] = &[
    ("infoflow", "info-flow (no LLM)"),
    ("graphtrace", "GraphTrace"),
    ("obstrace", "ObsTrace"),
    ("all-at-once", "all-at-once"),
    ("step-by-step", "step-by-step"),
    ("binary-search", "binary search"),
];

#[derive(Properties, PartialEq)]
pub struct Props {
    pub name: String,
    pub trace: Shared<Trace>,
    pub case: Option<usize>,
    pub verdicts: BTreeMap<String, Verdict>,
    pub labels: BTreeMap<String, Label>,
    pub on_verdict: Callback<(String, Option<Verdict>)>,
    pub on_label: Callback<(String, Option<Label>)>,
    pub on_select: Callback<Option<NodeRef>>,
    /// A download failed: the message.
    pub on_error: Callback<String>,
    pub provider: ProviderSettings,
    pub on_provider: Callback<ProviderSettings>,
    /// Highlight these node and op ids in the graph.
    pub on_highlight: Callback<Vec<String>>,
    /// The roles in force (inferred, with the user's overrides), for every method.
    pub roles: Shared<Roles>,
    /// The user's overrides behind `roles`, passed to the LLM runs.
    pub role_overrides: BTreeMap<String, OpRole>,
}

/// Builds an export's bytes from (trace name, trace, verdicts, labels).
type Maker = fn(&str, &Trace, &BTreeMap<String, Verdict>, &BTreeMap<String, Label>) -> Vec<u8>;

fn select_value(e: &Event) -> String {
    e.target()
        .and_then(|t| t.dyn_into::<HtmlSelectElement>().ok())
        .map(|s| s.value())
        .unwrap_or_default()
}

/// The file-name stem of `name` (without `.json`).
fn stem(name: &str) -> &str {
    name.strip_suffix(".json").unwrap_or(name)
}

#[function_component(AttributionPanel)]
pub fn attribution_panel(props: &Props) -> Html {
    let _t = crate::timing::stage("render: attribution panel");
    let method = use_state(|| METHODS[0].0.to_owned());
    let problem = use_state(|| None::<String>);
    let t = &props.trace.0;
    let case = props.case.and_then(|i| t.cases.get(i));

    let on_method = {
        let method = method.clone();
        Callback::from(move |e: Event| method.set(select_value(&e)))
    };
    let ready = method.as_str() == "infoflow";
    let attribute_one = {
        let (trace, roles, on_verdict, problem) = (
            props.trace.clone(),
            props.roles.clone(),
            props.on_verdict.clone(),
            problem.clone(),
        );
        let case = props.case;
        Callback::from(move |_: MouseEvent| {
            let t = &trace.0;
            let Some(c) = case.and_then(|i| t.cases.get(i)) else {
                return;
            };
            match infoflow_verdict(t, &roles.0, c) {
                Ok(v) => {
                    problem.set(None);
                    on_verdict.emit((c.query_id.clone(), Some(v)));
                }
                Err(e) => problem.set(Some(e.to_string())),
            }
        })
    };
    let attribute_all = {
        let (trace, roles, on_verdict, problem) = (
            props.trace.clone(),
            props.roles.clone(),
            props.on_verdict.clone(),
            problem.clone(),
        );
        Callback::from(move |_: MouseEvent| {
            let t = &trace.0;
            let mut failed = Vec::new();
            for c in &t.cases {
                match infoflow_verdict(t, &roles.0, c) {
                    Ok(v) => on_verdict.emit((c.query_id.clone(), Some(v))),
                    Err(e) => failed.push(e.to_string()),
                }
            }
            problem.set((!failed.is_empty()).then(|| failed.join("; ")));
        })
    };
    let data = (
        props.name.clone(),
        props.trace.clone(),
        props.verdicts.clone(),
        props.labels.clone(),
    );
    let download = |file: String, mime: &'static str, make: Maker| {
        let on_error = props.on_error.clone();
        let data = data.clone();
        Callback::from(move |_: MouseEvent| {
            let (name, trace, verdicts, labels) = &data;
            let bytes = make(name, &trace.0, verdicts, labels);
            if let Err(m) = files::download(&file, &bytes, mime) {
                on_error.emit(m);
            }
        })
    };
    let base = stem(&props.name).to_owned();
    let export_json = download(
        format!("{base}.verdicts.json"),
        "application/json",
        |n, t, v, l| serde_json::to_vec_pretty(&verdicts_json(n, t, v, l)).unwrap_or_default(),
    );
    let export_csv = download(format!("{base}.verdicts.csv"), "text/csv", |_, t, v, l| {
        verdicts_csv(t, v, l).into_bytes()
    });
    let export_rows = download(
        format!("{base}.verdicts.jsonl"),
        "application/x-ndjson",
        |_, t, v, _| verdict_rows_jsonl(t, v).into_bytes(),
    );
    let export_labels = download(
        format!("{base}.annotations.json"),
        "application/json",
        |_, t, _, l| serde_json::to_vec_pretty(&labels_json(t, l)).unwrap_or_default(),
    );

    html! {
        <section id="attribution" class="attribution-pane" aria-label="attribution">
            <div class="attr-controls">
                <label>{"Method "}
                    <select id="attr-method" aria-label="attribution method" onchange={on_method}>
                        { for METHODS.iter().enumerate().map(|(i, (id, name))| {
                            let text = if i == 0 { (*name).to_owned() } else { format!("{name} — LLM") };
                            html! { <option value={*id} selected={*method == *id}>{ text }</option> }
                        }) }
                    </select>
                </label>
                if ready {
                    <button id="attribute-one" class="button" disabled={case.is_none()} onclick={attribute_one}>
                        {"Attribute this case"}</button>
                    <button id="attribute-all" class="button" disabled={t.cases.is_empty()} onclick={attribute_all}>
                        {"Attribute all"}</button>
                }
                <span class="spacer"></span>
                <button id="export-verdicts-json" class="button" disabled={props.verdicts.is_empty()} onclick={export_json}
                        title="MemTrace result records">{"Verdicts JSON"}</button>
                <button id="export-verdicts-csv" class="button" disabled={props.verdicts.is_empty()} onclick={export_csv}>
                    {"Verdicts CSV"}</button>
                <button id="export-verdict-rows" class="button" disabled={props.verdicts.is_empty()} onclick={export_rows}
                        title="one row a case, as `memtrace attribute --json` prints them">{"Rows"}</button>
                <button id="export-labels" class="button" disabled={props.labels.is_empty()} onclick={export_labels}
                        title="labels as MemTraceBench annotations">{"Labels"}</button>
            </div>
            if let Some(m) = &*problem {
                <p class="error" role="alert">{ m.clone() }</p>
            }
            if !ready {
                <ProviderForm settings={props.provider.clone()} on_change={props.on_provider.clone()} />
                <RunPanel method={(*method).clone()} trace={props.trace.clone()} case={props.case}
                    verdicts={props.verdicts.clone()} provider={props.provider.clone()}
                    roles={memtrace::session::role_config(&props.role_overrides)}
                    on_verdict={props.on_verdict.clone()} on_highlight={props.on_highlight.clone()} />
            }
            if let Some(c) = case {
                { verdict_view(props, c) }
                { label_view(props, c) }
            } else {
                <p class="muted">{"Select a failed question to attribute it."}</p>
            }
        </section>
    }
}

fn verdict_view(props: &Props, c: &FailureCase) -> Html {
    let t = &props.trace.0;
    let Some(v) = props.verdicts.get(&c.query_id) else {
        return html! { <p id="verdict" class="muted">{"Not attributed yet."}</p> };
    };
    let jump = {
        let on_select = props.on_select.clone();
        let op = t.op_by_id(&v.op_id);
        Callback::from(move |_: MouseEvent| {
            if let Some(o) = op {
                on_select.emit(Some(NodeRef::Op(o)));
            }
        })
    };
    let ann = c.annotation.as_ref();
    let role = op_role(t, &props.roles.0, &v.op_id);
    // The role the verdict says the op played here (a memory manager's op that adds and updates
    // memories made this one: extraction), shown when its inferred role differs.
    let acting = memtrace::attribution::OpRole::of_error(v.error_type)
        .filter(|p| role.is_some_and(|(r, _)| r != *p));
    html! {
        <div id="verdict" class="verdict" data-type={v.error_type.as_str()} data-op={v.op_id.clone()}
             data-method={v.method.clone()} data-role={role.map(|(r, _)| r.as_str())}>
            <div>
                <strong class="verdict-type">{ v.error_type.as_str() }</strong>
                {" at "}<code class="verdict-op">{ v.op_id.clone() }</code>
                {" "}<span class="verdict-op-name">{ op_name(t, &v.op_id) }</span>
                if let Some((r, b)) = role {
                    if let Some(p) = acting {
                        {" · acting as "}<span class="verdict-played">{ p.as_str() }</span>
                        <span class="muted">{" (its role: "}</span>
                    } else {
                        {" · role "}
                    }
                    <span class="verdict-role" title={format!("{} — {}", r.meaning(), basis_label(b))}>{ r.as_str() }</span>
                    if b == memtrace::attribution::Basis::User { <span class="muted">{" (yours)"}</span> }
                    if acting.is_some() { <span class="muted">{")"}</span> }
                }
                {" · confidence "}<span class="verdict-confidence">{ format!("{:.2}", v.confidence) }</span>
                {" · "}<span class="muted">{ v.method.clone() }</span>
                {" "}<button id="jump-to-op" class="button" onclick={jump}
                    disabled={t.op_by_id(&v.op_id).is_none()}>{"jump to op"}</button>
            </div>
            <p class="verdict-reason">{ v.reason.clone() }</p>
            if v.method == "infoflow" && v.confidence < memtrace::attribution::CONFIDENT {
                <p id="verdict-low" class="muted verdict-low">
                    {"Low confidence: the data flow leaves this verdict open (often because the trace names no evidence). \
                      Run an LLM method (graphtrace) on this case from the LLM panel for a second opinion."}
                </p>
            }
            if let Some(c) = &v.cost {
                <p class="muted verdict-cost" data-calls={c.llm_calls.to_string()}>
                    { format!("cost: {} LLM calls · {} in / {} out tokens · ${:.4}", c.llm_calls, c.input_tokens, c.output_tokens, c.cost_usd) }
                    if let Some(cf) = v.counterfactual { { format!(" · counterfactual: {}", cf.as_str()) } }
                </p>
            }
            if let Some(a) = ann {
                <p class="muted verdict-vs">
                    { format!("annotation: {} at {} — ", a.error_type.as_str(), a.op_id) }
                    { if a.op_id == v.op_id && a.error_type == v.error_type { "agrees" } else { "differs" } }
                </p>
            }
        </div>
    }
}

/// Confirm the verdict, or correct it: an error type and an op of the case's slice.
fn label_view(props: &Props, c: &FailureCase) -> Html {
    let t = &props.trace.0;
    let v = props.verdicts.get(&c.query_id);
    let current = props.labels.get(&c.query_id);
    let qid = c.query_id.clone();
    let ops: Vec<String> = failure_view(t, c, v.map(|v| v.op_id.as_str()))
        .ops()
        .map(|o| t.op(o).op_id.clone())
        .collect();
    let base = current
        .cloned()
        .or_else(|| {
            v.map(|v| Label {
                error_type: v.error_type,
                op_id: v.op_id.clone(),
            })
        })
        .unwrap_or_else(|| Label {
            error_type: ErrorType::MEMORY[0],
            op_id: ops.first().cloned().unwrap_or_default(),
        });
    // A label or verdict op outside the slice is still listed, so the menu shows it.
    let mut ops = ops;
    if !base.op_id.is_empty() && !ops.contains(&base.op_id) {
        ops.push(base.op_id.clone());
    }
    let confirm = {
        let (on_label, qid) = (props.on_label.clone(), qid.clone());
        let v = v.cloned();
        Callback::from(move |_: MouseEvent| {
            if let Some(v) = &v {
                on_label.emit((
                    qid.clone(),
                    Some(Label {
                        error_type: v.error_type,
                        op_id: v.op_id.clone(),
                    }),
                ));
            }
        })
    };
    let set_type = {
        let (on_label, qid, base) = (props.on_label.clone(), qid.clone(), base.clone());
        Callback::from(move |e: Event| {
            // The menu lists only `ErrorType` names.
            if let Ok(error_type) = select_value(&e).parse::<ErrorType>() {
                on_label.emit((
                    qid.clone(),
                    Some(Label {
                        error_type,
                        op_id: base.op_id.clone(),
                    }),
                ));
            }
        })
    };
    let set_op = {
        let (on_label, qid, base) = (props.on_label.clone(), qid.clone(), base.clone());
        Callback::from(move |e: Event| {
            on_label.emit((
                qid.clone(),
                Some(Label {
                    error_type: base.error_type,
                    op_id: select_value(&e),
                }),
            ));
        })
    };
    let clear = {
        let on_label = props.on_label.clone();
        Callback::from(move |_: MouseEvent| on_label.emit((qid.clone(), None)))
    };
    html! {
        <div id="label" class="label-control" data-type={current.map(|l| l.error_type.as_str())}
             data-op={current.map(|l| l.op_id.clone())}>
            <span>{"Label: "}</span>
            <button id="label-confirm" class="button" disabled={v.is_none()} onclick={confirm}>{"confirm verdict"}</button>
            <select id="label-type" aria-label="label error type" onchange={set_type}>
                { for ErrorType::MEMORY.iter().map(|ty| html! {
                    <option value={ty.as_str()} selected={base.error_type == *ty}>{ ty.as_str() }</option>
                }) }
            </select>
            <select id="label-op" aria-label="label op" onchange={set_op}>
                { for ops.iter().map(|o| html! {
                    <option value={o.clone()} selected={base.op_id == *o}>{ format!("{o} ({})", op_name(t, o)) }</option>
                }) }
            </select>
            if current.is_some() {
                <button class="button" onclick={clear}>{"clear label"}</button>
                <span class="muted">{"labelled"}</span>
            } else {
                <span class="muted">{"not labelled"}</span>
            }
        </div>
    }
}
