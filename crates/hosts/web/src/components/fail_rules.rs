//! Above the failures list: the failure rules (`span=NAME output~REGEX`, as `--failed-if`), what
//! was looked for when no failure is found, and every question with "mark as failed".

use memtrace::model::{FailRule, Mark};
use memtrace::Trace;
use wasm_bindgen::JsCast;
use web_sys::{HtmlInputElement, HtmlTextAreaElement};
use yew::prelude::*;

use super::Shared;
use crate::state::fail_rules::parse_rules;
use memtrace::session::{questions, Question};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub trace: Shared<Trace>,
    /// The trace's marked questions.
    pub marks: Vec<Mark>,
    pub rules: Vec<String>,
    pub selected: Option<usize>,
    pub on_rules: Callback<Vec<String>>,
    /// (query id, gold answer, marked).
    pub on_mark: Callback<(String, Option<String>, bool)>,
    pub on_select: Callback<usize>,
}

fn lines(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

#[function_component(FailRulesPanel)]
pub fn fail_rules_panel(props: &Props) -> Html {
    let _t = crate::timing::stage("render: failure rules panel");
    let draft = use_state(|| props.rules.join("\n"));
    let questions_open = use_state(|| false);
    {
        let draft = draft.clone();
        use_effect_with(props.rules.clone(), move |r| draft.set(r.join("\n")));
    }
    let (_, errors) = parse_rules(&lines(&draft));
    let on_input = {
        let draft = draft.clone();
        Callback::from(move |e: InputEvent| {
            if let Some(t) = e
                .target()
                .and_then(|t| t.dyn_into::<HtmlTextAreaElement>().ok())
            {
                draft.set(t.value());
            }
        })
    };
    let apply = {
        let (draft, on_rules) = (draft.clone(), props.on_rules.clone());
        Callback::from(move |_: MouseEvent| on_rules.emit(lines(&draft)))
    };
    let t = &props.trace.0;
    let rules: Vec<FailRule> = parse_rules(&props.rules).0;
    // What was looked for, only when nothing was found (it runs the rules again).
    let looked = t
        .cases
        .is_empty()
        .then(|| t.detect(&rules, &props.marks).ok())
        .flatten();
    let use_suggestion = looked.as_ref().map(|d| {
        let rule = d
            .suggestion
            .trim_start_matches("--failed-if '")
            .trim_end_matches('\'')
            .to_owned();
        let (mut next, on_rules) = (props.rules.clone(), props.on_rules.clone());
        next.push(rule.clone());
        (
            rule,
            Callback::from(move |_: MouseEvent| on_rules.emit(next.clone())),
        )
    });
    // Listed only when opened: finding every question of a large trace takes a while.
    let rows = use_memo(
        (props.trace.clone(), props.marks.clone(), *questions_open),
        |(t, marks, open)| open.then(|| questions(&t.0, marks)),
    );
    let toggle = {
        let open = questions_open.clone();
        Callback::from(move |_: MouseEvent| open.set(!*open))
    };
    html! {
        <div id="fail-rules" class="fail-rules">
            <details open={!props.rules.is_empty() || looked.is_some()}>
                <summary>{ format!("Failure rules ({})", props.rules.len()) }</summary>
                <p class="muted small">{"One per line: "}<code>{"span=NAME output~REGEX"}</code>
                    {" (or op=NAME, or only output~REGEX). A matching op fails the question it reads. "}
                    {"See docs/failures.md for the built-in rules."}</p>
                <textarea id="fail-rules-text" rows="2" aria-label="failure rules, one per line"
                    placeholder="span=llm_judge output~WRONG" value={(*draft).clone()} oninput={on_input} />
                { for errors.iter().map(|e| html! { <p class="rule-error" role="alert">{ e.to_string() }</p> }) }
                <button id="fail-rules-apply" class="button small" onclick={apply}>{"Apply rules"}</button>
                if let Some(d) = &looked {
                    <div class="looked-for">
                        <p>{ format!("No failed question found among {} question(s). Looked for, in order:", d.questions) }</p>
                        <ol>
                            { for d.rules.iter().map(|r| html! {
                                <li title={r.looks_for.clone()}>{ format!("{}: judged {}, failed {}", r.rule, r.judged, r.failed) }</li>
                            }) }
                        </ol>
                        { for d.unused_judges.iter().take(5).map(|u| html! {
                            <p class="muted small">{ format!("{} did not count: {}", u.op_name, u.why) }</p>
                        }) }
                        if let Some((rule, add)) = use_suggestion {
                            <p>{"Try: "}<code>{ rule.clone() }</code>{" "}
                                <button id="fail-rules-suggest" class="button small" onclick={add}>{"Add this rule"}</button></p>
                        }
                    </div>
                }
            </details>
            <button id="questions-toggle" class="button small" aria-pressed={questions_open.to_string()} onclick={toggle}>
                { match rows.as_ref() {
                    Some(rows) => format!("Questions ({}) — mark as failed", rows.len()),
                    None => "Questions — mark as failed".to_owned(),
                } }
            </button>
            if let Some(rows) = rows.as_ref() {
                <ol class="question-list" aria-label="all questions">
                    { for rows.iter().map(|r| question(props, r)) }
                </ol>
            }
        </div>
    }
}

fn question(props: &Props, r: &Question) -> Html {
    let (q, on_mark) = (r.query_id.clone(), props.on_mark.clone());
    let gold_id = format!("gold-{}", r.query_id);
    let mark = {
        let gold_id = gold_id.clone();
        Callback::from(move |_: MouseEvent| {
            let gold = web_sys::window()
                .and_then(|w| w.document())
                .and_then(|d| d.get_element_by_id(&gold_id))
                .and_then(|e| e.dyn_into::<HtmlInputElement>().ok())
                .map(|i| i.value());
            on_mark.emit((q.clone(), gold, true));
        })
    };
    let (q, on_mark) = (r.query_id.clone(), props.on_mark.clone());
    let unmark = Callback::from(move |_: MouseEvent| on_mark.emit((q.clone(), None, false)));
    let select = r.case.map(|c| {
        let on_select = props.on_select.clone();
        Callback::from(move |_: MouseEvent| on_select.emit(c))
    });
    let selected = r.case.is_some() && r.case == props.selected;
    html! {
        <li class={classes!("question", selected.then_some("selected"))} data-query={r.query_id.clone()}>
            <div class="q">{ &r.text }</div>
            <div class="badges">
                if let Some(onclick) = select {
                    <button class="badge failed" {onclick} title="show this failure">{"failed"}</button>
                } else {
                    <span class="badge muted">{"not failed"}</span>
                }
                if r.marked {
                    <button class="button small mark" onclick={unmark}>{"Unmark"}</button>
                } else if r.case.is_none() {
                    <input id={gold_id} class="gold" placeholder="gold answer (optional)" aria-label="gold answer" />
                    <button class="button small mark" onclick={mark}>{"Mark as failed"}</button>
                }
            </div>
        </li>
    }
}
