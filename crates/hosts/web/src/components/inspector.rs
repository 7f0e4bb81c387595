//! The inspector: the selected variable (value, metadata, source, versions with a side-by-side
//! diff between any two) or operation (inputs, outputs, comment, prompts). Text only: trace
//! content is never injected as HTML.

use memtrace::layout::NodeRef;
use memtrace::model::{pyrepr, Role, VarIx};
use memtrace::Trace;
use wasm_bindgen::JsCast;
use web_sys::HtmlSelectElement;
use yew::prelude::*;

use super::Shared;
use memtrace::text::diff::{side_by_side, Cell, Row, RowKind};

use crate::view::graph_model::label;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub trace: Shared<Trace>,
    pub node: Option<NodeRef>,
    pub compare: Option<(VarIx, VarIx)>,
    pub on_select: Callback<Option<NodeRef>>,
    pub on_compare: Callback<Option<(VarIx, VarIx)>>,
    pub on_expand: Callback<NodeRef>,
}

#[function_component(Inspector)]
pub fn inspector(props: &Props) -> Html {
    let body = match props.node {
        None => html! {
            <p class="muted">{"Click a node in the graph (or press n) to see its value, versions and source."}</p>
        },
        Some(NodeRef::Var(v)) if v.get() < props.trace.0.vars.len() => var_view(props, v),
        Some(NodeRef::Op(o)) if o.get() < props.trace.0.ops.len() => op_view(props, o),
        Some(_) => html! {},
    };
    html! {
        <aside id="inspector" class="inspector-pane" aria-label="inspector">{ body }</aside>
    }
}

fn node_button(props: &Props, n: NodeRef, extra: &str) -> Html {
    let on_select = props.on_select.clone();
    let text = label(&props.trace.0, n);
    html! {
        <button class="link" onclick={Callback::from(move |_| on_select.emit(Some(n)))}>
            { text }{ extra.to_owned() }
        </button>
    }
}

/// Buttons for `nodes`; past the first few, the rest fold into a "N more" disclosure.
fn node_buttons(props: &Props, nodes: impl Iterator<Item = NodeRef>) -> Html {
    const SHOWN: usize = 8;
    let all: Vec<NodeRef> = nodes.collect();
    let (head, tail) = all.split_at(all.len().min(SHOWN));
    html! {
        <>
            { for head.iter().map(|&n| node_button(props, n, "")) }
            if !tail.is_empty() {
                <details class="more">
                    <summary>{ format!("{} more", tail.len()) }</summary>
                    { for tail.iter().map(|&n| node_button(props, n, "")) }
                </details>
            }
        </>
    }
}

fn field(k: &str, v: impl Into<Html>) -> Html {
    html! { <tr><th>{ k.to_owned() }</th><td>{ v.into() }</td></tr> }
}

fn json_block(v: &serde_json::Value) -> Html {
    let empty = v.is_null() || v.as_object().is_some_and(serde_json::Map::is_empty);
    if empty {
        return html! { <span class="muted">{"none"}</span> };
    }
    let text = serde_json::to_string_pretty(v).unwrap_or_default();
    html! { <pre class="value">{ text }</pre> }
}

fn var_view(props: &Props, v: VarIx) -> Html {
    let t = &props.trace.0;
    let r = t.var(v);
    let versions: Vec<VarIx> = t
        .flow
        .versions
        .get(&r.full_name)
        .cloned()
        .unwrap_or_default();
    let producers = &t.flow.producers[v.get()];
    let consumers = &t.flow.consumers[v.get()];
    let on_expand = props.on_expand.clone();
    let expand = Callback::from(move |_: MouseEvent| on_expand.emit(NodeRef::Var(v)));
    html! {
        <>
            <div class="pane-head">
                <span class="kind var">{"variable"}</span>
                <h2 class="node-title" data-field="node-id">{ &r.full_node_id }</h2>
            </div>
            <table class="fields">
                { field("name", r.name.clone()) }
                if let Some(c) = &r.class_name { { field("class", c.clone()) } }
                { field("category", r.category.clone()) }
                { field("version", format!("{} of {}", r.version, versions.len().max(1))) }
                { field("created", r.created_at.clone()) }
                { field("source", format!("{}:{}", r.filename, r.lineno)) }
                { field("session", r.session_id.clone()) }
                if !r.comment.is_empty() { { field("comment", r.comment.clone()) } }
            </table>
            <h3>{"Value"}</h3>
            <pre class="value" data-field="value">{ pyrepr::pretty(&r.value) }</pre>
            <h3>{"Metadata"}</h3>
            { json_block(&r.metadata) }
            <h3>{"Flow"}</h3>
            <div class="flow">
                <span class="muted">{"made by "}</span>
                { node_buttons(props, producers.iter().map(|&o| NodeRef::Op(o))) }
                if producers.is_empty() { <span class="muted">{"nothing (a source)"}</span> }
            </div>
            <div class="flow">
                <span class="muted">{"read by "}</span>
                { node_buttons(props, consumers.iter().map(|&o| NodeRef::Op(o))) }
                if consumers.is_empty() { <span class="muted">{"nothing"}</span> }
            </div>
            <button class="button small" onclick={expand}>{"show neighbours in graph (x)"}</button>
            if versions.len() > 1 {
                { versions_view(props, v, &versions) }
            }
        </>
    }
}

fn versions_view(props: &Props, v: VarIx, versions: &[VarIx]) -> Html {
    let t = &props.trace.0;
    let pos = versions.iter().position(|&x| x == v).unwrap_or(0);
    let (left, right) = props.compare.unwrap_or_else(|| {
        if pos == 0 {
            (versions[0], versions[1])
        } else {
            (versions[pos - 1], v)
        }
    });
    let picker = |current: VarIx, is_left: bool| {
        let on_compare = props.on_compare.clone();
        let list = versions.to_vec();
        let other = if is_left { right } else { left };
        let onchange = Callback::from(move |e: Event| {
            let Some(ix) = e
                .target()
                .and_then(|t| t.dyn_into::<HtmlSelectElement>().ok())
                .and_then(|s| s.value().parse::<usize>().ok())
                .and_then(|i| list.get(i).copied())
            else {
                return;
            };
            on_compare.emit(Some(if is_left { (ix, other) } else { (other, ix) }));
        });
        html! {
            <select aria-label={if is_left { "left version" } else { "right version" }} {onchange}>
                { for versions.iter().enumerate().map(|(i, &x)| html! {
                    <option value={i.to_string()} selected={x == current}>
                        { format!("v{}", t.var(x).version) }
                    </option>
                }) }
            </select>
        }
    };
    let rows = side_by_side(
        &pyrepr::pretty(&t.var(left).value),
        &pyrepr::pretty(&t.var(right).value),
    );
    let changed = rows.iter().filter(|r| r.kind != RowKind::Same).count();
    html! {
        <>
            <h3>{ format!("Versions ({})", versions.len()) }</h3>
            <div class="versions">
                { for versions.iter().map(|&x| {
                    let cls = classes!("chip", (x == v).then_some("current"));
                    let on_select = props.on_select.clone();
                    html! {
                        <button class={cls} onclick={Callback::from(move |_| on_select.emit(Some(NodeRef::Var(x))))}>
                            { format!("v{}", t.var(x).version) }
                            <span class="muted">{ format!(" {}", t.var(x).created_at.get(11..19).unwrap_or("")) }</span>
                        </button>
                    }
                }) }
            </div>
            <div class="diff-head">
                {"compare "}{ picker(left, true) }{" with "}{ picker(right, false) }
                <span class="muted">{ format!(" {changed} changed line(s)") }</span>
            </div>
            <table id="version-diff" class="diff">
                { diff_rows(&rows) }
            </table>
        </>
    }
}

fn op_view(props: &Props, o: memtrace::model::OpIx) -> Html {
    let t = &props.trace.0;
    let r = t.op(o);
    let on_expand = props.on_expand.clone();
    let expand = Callback::from(move |_: MouseEvent| on_expand.emit(NodeRef::Op(o)));
    let vars: Vec<(VarIx, Role)> = t.flow.op_vars(o).collect();
    let group = |role: Role, title: &str| {
        let list: Vec<VarIx> = vars
            .iter()
            .filter(|(_, r)| *r == role)
            .map(|(v, _)| *v)
            .collect();
        if list.is_empty() {
            return html! {};
        }
        html! {
            <>
                <h3>{ format!("{title} ({})", list.len()) }</h3>
                <ul class="io">
                    { for list.iter().map(|&v| html! {
                        <li>
                            { node_button(props, NodeRef::Var(v), "") }
                            <span class="muted">{ format!(" {}", t.var(v).category) }</span>
                        </li>
                    }) }
                </ul>
            </>
        }
    };
    let prompts: Vec<VarIx> = vars
        .iter()
        .filter(|(v, r)| *r == Role::Input && t.var(*v).category.contains("prompt"))
        .map(|(v, _)| *v)
        .collect();
    html! {
        <>
            <div class="pane-head">
                <span class="kind op">{"operation"}</span>
                <h2 class="node-title" data-field="node-id">{ &r.op_name }</h2>
            </div>
            <table class="fields">
                { field("op id", r.op_id.clone()) }
                { field("category", r.category.clone()) }
                { field("created", r.created_at.clone()) }
                { field("source", format!("{}:{}", r.filename, r.lineno)) }
                { field("session", r.session_id.clone()) }
            </table>
            <h3>{"Comment"}</h3>
            if r.comment.is_empty() { <p class="muted">{"none"}</p> } else { <p class="comment">{ &r.comment }</p> }
            <button class="button small" onclick={expand}>{"show neighbours in graph (x)"}</button>
            { group(Role::Input, "Inputs") }
            { group(Role::Intermediate, "Intermediates") }
            { group(Role::Output, "Outputs") }
            { for prompts.iter().map(|&p| html! {
                <details class="prompt">
                    <summary>{ format!("prompt: {}", t.var(p).name) }</summary>
                    <pre class="value">{ pyrepr::display(&t.var(p).value) }</pre>
                </details>
            }) }
            <h3>{"Metadata"}</h3>
            { json_block(&r.metadata) }
        </>
    }
}

/// The rows of a side-by-side diff table (`<tr>`s classed same / changed / removed / added); text
/// only, the changed segments in `<mark>`.
pub fn diff_rows(rows: &[Row]) -> Html {
    let cell = |c: Option<&Cell>| match c {
        None => html! { <><td class="ln"></td><td class="empty"></td></> },
        Some(c) => html! {
            <>
                <td class="ln">{ c.line }</td>
                <td>{ for c.segments.iter().map(|(emph, s)| if *emph {
                    html! { <mark>{ s.clone() }</mark> }
                } else {
                    html! { s.clone() }
                }) }</td>
            </>
        },
    };
    html! {
        { for rows.iter().map(|r| {
            let cls = match r.kind {
                RowKind::Same => "same",
                RowKind::Changed => "changed",
                RowKind::Removed => "removed",
                RowKind::Added => "added",
            };
            html! { <tr class={cls}>{ cell(r.left.as_ref()) }{ cell(r.right.as_ref()) }</tr> }
        }) }
    }
}
