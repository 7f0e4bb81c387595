//! The failure story: the selected case's decisive path as cards read left to right (wrapping),
//! built by the core's [`memtrace::story`]. A card selects its node (click, Enter); a folded
//! group opens in place; `g` switches to the graph. The ops of a decisive set found by "find all
//! causes" carry a numbered, coloured `cause N` chip.

use std::sync::Arc;

use memtrace::algo::{GraphIndex, GraphIndexBuild};
use memtrace::attribution::{Attribution, InfoFlow, Roles};
use memtrace::layout::NodeRef;
use memtrace::story::{story_in, Card, CardKind, Group, Story};
use memtrace::Trace;
use web_sys::KeyboardEvent;
use yew::prelude::*;

use super::Shared;
use crate::runs::causes::{cause_color, short_name};
use crate::state::Verdict;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub trace: Shared<Trace>,
    pub case: usize,
    /// The verdict on screen (any method); info-flow's path when it names the same op.
    pub verdict: Option<Verdict>,
    pub roles: Shared<Roles>,
    pub selected: Option<NodeRef>,
    pub on_select: Callback<Option<NodeRef>>,
    pub on_graph: Callback<()>,
    /// The ops of the failure's decisive set ("find all causes"), cause 1 first: marked on
    /// their cards, or pinned out of their folded group (or after the chain when the story
    /// does not hold them).
    #[prop_or_default]
    pub causes: Vec<String>,
}

/// Group members listed when a group opens.
const GROUP_LIST: usize = 60;

/// The verdict the story marks: the one on screen (stored in the project: info-flow's until a
/// method gives another), with its own evidence path, or info-flow's path when it has none and
/// info-flow blames the same op (an LLM method names no path).
fn attribution(t: &Trace, roles: &Roles, case: usize, shown: &Verdict) -> Option<Attribution> {
    let c = t.cases.get(case)?;
    let path = if shown.evidence_path.is_empty() {
        InfoFlow::default()
            .attribute_with(t, roles, c)
            .ok()
            .filter(|f| f.op_id == shown.op_id)
            .map(|f| f.evidence_path)
            .unwrap_or_default()
    } else {
        shown.evidence_path.clone()
    };
    Some(Attribution {
        case_id: c.query_id.clone(),
        op_id: shown.op_id.clone(),
        op_name: t
            .op_by_id(&shown.op_id)
            .map(|o| t.op(o).op_name.clone())
            .unwrap_or_default(),
        error_type: shown.error_type,
        reason: shown.reason.clone(),
        evidence_path: path,
        confidence: shown.confidence,
        cost: memtrace::attribution::Cost::default(),
        method: shown.method.clone(),
    })
}

fn node_of(t: &Trace, id: &str) -> Option<NodeRef> {
    t.var_by_id(id)
        .map(NodeRef::Var)
        .or_else(|| t.op_by_id(id).map(NodeRef::Op))
}

#[function_component(StoryView)]
pub fn story_view(props: &Props) -> Html {
    // The graph index gives the story its folded groups. Built once per trace, not per case
    // (most of a story's time on a large trace), in a task of its own after the first story is
    // on screen.
    let later = use_state(|| None::<(Shared<Trace>, Shared<GraphIndex>)>);
    {
        let later = later.clone();
        use_effect_with(props.trace.clone(), move |t| {
            let done = later.as_ref().is_some_and(|(lt, _)| lt == t);
            if !done {
                let t = t.clone();
                wasm_bindgen_futures::spawn_local(async move {
                    crate::timing::after_paint().await;
                    let _t = crate::timing::stage("story: graph index");
                    // A stage a task: the page stays responsive while it is built.
                    let built = {
                        let mut building = GraphIndexBuild::new(&t.0);
                        loop {
                            if let Some(done) = building.step() {
                                break done;
                            }
                            crate::services::files::next_task().await;
                        }
                    };
                    if let Ok(g) = built {
                        later.set(Some((t, Shared(Arc::new(g)))));
                    }
                });
            }
        });
    }
    let index = later
        .as_ref()
        .filter(|(lt, _)| *lt == props.trace)
        .map(|(_, g)| g.clone());
    let s = use_memo(
        (
            props.trace.clone(),
            props.roles.clone(),
            props.case,
            props.verdict.clone(),
            index,
        ),
        |(t, roles, case, v, index)| {
            let _t = crate::timing::stage("story");
            let t = &t.0;
            let c = t.cases.get(*case)?;
            let a = v.as_ref().and_then(|v| attribution(t, &roles.0, *case, v));
            Some(story_in(
                t,
                index.as_ref().map(|g| &*g.0),
                c,
                a.as_ref(),
                &roles.0,
            ))
        },
    );
    let Some(s) = (*s).as_ref() else {
        return html! { <section class="story-pane"><p class="muted">{"No such case."}</p></section> };
    };
    let t = &props.trace.0;
    let selected_id = props.selected.map(|n| match n {
        NodeRef::Var(v) => t.var(v).full_node_id.clone(),
        NodeRef::Op(o) => t.op(o).op_id.clone(),
    });
    let select = |id: &str| {
        let (cb, node) = (props.on_select.clone(), node_of(t, id));
        (Callback::from(move |_: MouseEvent| cb.emit(node)), node)
    };
    let on_graph = props.on_graph.reform(|_: MouseEvent| ());
    // Causes neither on a card nor in a group: pinned after the chain.
    let outside: Vec<&String> = props
        .causes
        .iter()
        .filter(|id| {
            !s.cards.iter().any(|c| c.id == **id) && !s.groups.iter().any(|g| g.ids.contains(id))
        })
        .collect();
    html! {
        <section class="story-pane" aria-label="failure story" id="story">
            { header(s, on_graph) }
            <ol class="story-chain">
                { for s.cards.iter().enumerate().map(|(i, c)| {
                    let (onclick, node) = select(&c.id);
                    let cb = props.on_select.clone();
                    let onkeydown = Callback::from(move |e: KeyboardEvent| {
                        if e.key() == "Enter" || e.key() == " " {
                            e.prevent_default();
                            cb.emit(node);
                        }
                    });
                    let groups: Vec<&Group> = s.groups.iter().filter(|g| g.after == i).collect();
                    let active = selected_id.as_deref() == Some(c.id.as_str());
                    let pinned: Vec<&String> = groups.iter().flat_map(|g| &g.ids)
                        .filter(|id| props.causes.contains(id)).collect();
                    html! {
                        <li class="story-step">
                            { card(c, cause_of(&props.causes, &c.id), active, onclick, onkeydown) }
                            { pins(t, &props.causes, &pinned, &props.on_select) }
                            if !groups.is_empty() {
                                <div class="story-groups">
                                    { for groups.iter().map(|g| group(t, g, &props.causes, &props.on_select)) }
                                </div>
                            }
                        </li>
                    }
                }) }
            </ol>
            { pins(t, &props.causes, &outside, &props.on_select) }
        </section>
    }
}

/// The causes among `ids`, each a button with its chip and op name (selects the op).
fn pins(
    t: &Trace,
    causes: &[String],
    ids: &[&String],
    on_select: &Callback<Option<NodeRef>>,
) -> Html {
    if ids.is_empty() {
        return html! {};
    }
    html! {
        <div class="story-pins">
            { for ids.iter().filter_map(|id| {
                let n = cause_of(causes, id)?;
                let (cb, node) = (on_select.clone(), node_of(t, id));
                Some(html! {
                    <button class="cause-pin" data-id={(*id).clone()} data-cause={n.to_string()}
                            title={format!("{id}: show it in the inspector")} onclick={Callback::from(move |_| cb.emit(node))}
                            style={format!("--cause: {}", cause_color(n))}>
                        { cause_chip(n) }<span class="pin-name">{ short_name(t, id) }</span>
                    </button>
                })
            }) }
        </div>
    }
}

fn header(s: &Story, on_graph: Callback<MouseEvent>) -> Html {
    html! {
        <div class="story-head">
            <div class="story-q">
                <span class="story-label">{"Question"}</span>
                <span data-field="question">{ &s.question }</span>
            </div>
            <div class="story-q">
                <span class="story-label">{"Gold"}</span>
                <span class="gold" data-field="gold">{ s.golden_answers.join(" / ") }</span>
                <span class="story-label">{"Answered"}</span>
                <span class="wrong" data-field="prediction">{ &s.prediction }</span>
            </div>
            <button class="button story-graph" onclick={on_graph} title="the graph of this failure (g)">{"Graph view"}</button>
        </div>
    }
}

/// The 1-based place of `id` in the set `causes`.
fn cause_of(causes: &[String], id: &str) -> Option<usize> {
    causes.iter().position(|c| c == id).map(|i| i + 1)
}

/// The `cause N` chip, in the cause's colour.
fn cause_chip(n: usize) -> Html {
    html! {
        <span class="cause-chip" data-cause={n.to_string()} style={format!("--cause: {}", cause_color(n))}>
            { format!("cause {n}") }</span>
    }
}

fn card(
    c: &Card,
    cause: Option<usize>,
    active: bool,
    onclick: Callback<MouseEvent>,
    onkeydown: Callback<KeyboardEvent>,
) -> Html {
    let role = c.role.map_or("message", |r| r.as_str());
    let kind = match c.kind {
        CardKind::Evidence => "evidence",
        CardKind::Op => "op",
        CardKind::Value => "value",
    };
    let label = c.decisive.as_ref().map_or_else(
        || format!("{role}: {}", c.title),
        |d| format!("{role}: {}, decisive, {}", c.title, d.error_type.as_str()),
    );
    html! {
        <article class={classes!("story-card", format!("role-{role}"), c.decisive.is_some().then_some("decisive"), active.then_some("active"), cause.is_some().then_some("cause"))}
                 data-id={c.id.clone()} data-kind={kind} data-role={role.to_owned()}
                 data-cause={cause.map(|n| n.to_string())} style={cause.map(|n| format!("--cause: {}", cause_color(n)))}
                 tabindex="0" role="button" aria-label={label} {onclick} {onkeydown}>
            <header class="card-head">
                <span class="role-chip">{ if c.kind == CardKind::Evidence { "evidence" } else { role } }</span>
                <span class="card-title" title={c.title.clone()}>{ short(&c.title) }</span>
                <time>{ c.time.get(11..19).unwrap_or(&c.time) }</time>
                if let Some(n) = cause { { cause_chip(n) } }
            </header>
            if let Some(d) = &c.decisive {
                <div class="card-verdict" data-type={d.error_type.as_str()}>
                    <span class="badge verdict">{ d.error_type.as_str() }</span>
                    <span class="reason">{ &d.reason }</span>
                </div>
            }
            if let Some(diff) = &c.diff {
                <p class="card-text card-diff">
                    { for diff.iter().map(|p| match p.change {
                        "removed" => html! { <del>{ &p.text }</del> },
                        "added" => html! { <ins>{ &p.text }</ins> },
                        _ => html! { <span>{ &p.text }</span> },
                    }) }
                </p>
            } else {
                <p class="card-text">
                    { for c.text.iter().map(|x| if x.mark {
                        html! { <mark>{ &x.text }</mark> }
                    } else {
                        html! { <span>{ &x.text }</span> }
                    }) }
                    if c.text.is_empty() { <span class="muted">{"(wrote nothing readable)"}</span> }
                </p>
            }
        </article>
    }
}

fn group(t: &Trace, g: &Group, causes: &[String], on_select: &Callback<Option<NodeRef>>) -> Html {
    let more = g.ids.len().saturating_sub(GROUP_LIST);
    // Causes (also pinned above the group) are listed first.
    let mut ids: Vec<&String> = g.ids.iter().collect();
    ids.sort_by_key(|id| cause_of(causes, id).unwrap_or(usize::MAX));
    html! {
        <details class="story-group">
            <summary>{ &g.label }</summary>
            <ul>
                { for ids.into_iter().take(GROUP_LIST).map(|id| {
                    let (cb, node) = (on_select.clone(), node_of(t, id));
                    let cause = cause_of(causes, id);
                    html! {
                        <li data-id={id.clone()} data-cause={cause.map(|n| n.to_string())}>
                            if let Some(n) = cause { { cause_chip(n) }{" "} }
                            <button class="link" onclick={Callback::from(move |_| cb.emit(node))}>{ id }</button>
                        </li>
                    }
                }) }
                if more > 0 { <li class="muted">{ format!("and {more} more") }</li> }
            </ul>
        </details>
    }
}

/// An op name without its class or module prefix (`memory_system.extract_facts` → `extract_facts`).
fn short(title: &str) -> &str {
    if title.contains(' ') {
        return title;
    }
    title
        .rsplit(['.', ':'])
        .next()
        .filter(|s| !s.is_empty())
        .unwrap_or(title)
}
