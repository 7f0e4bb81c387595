//! An LLM run's transcript: one row per step (turn, tool, arguments, result). Hovering a step
//! highlights the nodes it looked at in the graph; clicking keeps the highlight.

use memtrace::attribution::transcript::Step;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub steps: Vec<Step>,
    /// True while the run is going (steps still arriving, results not yet known).
    #[prop_or_default]
    pub live: bool,
    pub on_highlight: Callback<Vec<String>>,
}

#[function_component(Transcript)]
pub fn transcript(props: &Props) -> Html {
    let pinned = use_state(|| None::<usize>);
    if props.steps.is_empty() {
        return html! {};
    }
    let leave = {
        let (on_highlight, pinned, steps) = (
            props.on_highlight.clone(),
            pinned.clone(),
            props.steps.clone(),
        );
        Callback::from(move |_: MouseEvent| {
            let keep = pinned.and_then(|i| steps.get(i)).map(|s| s.nodes.clone());
            on_highlight.emit(keep.unwrap_or_default());
        })
    };
    html! {
        <ol id="transcript" class={classes!("transcript", props.live.then_some("live"))}
            aria-label="transcript of the LLM run" onmouseleave={leave}>
            { for props.steps.iter().enumerate().map(|(i, s)| {
                let nodes = s.nodes.clone();
                let enter = props.on_highlight.reform(move |_: MouseEvent| nodes.clone());
                let click = {
                    let (on_highlight, pinned, nodes) = (props.on_highlight.clone(), pinned.clone(), s.nodes.clone());
                    Callback::from(move |_: MouseEvent| {
                        let again = *pinned == Some(i);
                        pinned.set((!again).then_some(i));
                        on_highlight.emit(if again { Vec::new() } else { nodes.clone() });
                    })
                };
                html! {
                    <li class={classes!("step", s.rejected.then_some("rejected"), (*pinned == Some(i)).then_some("pinned"))}
                        data-turn={s.turn.to_string()} data-tool={s.tool.clone()} data-nodes={s.nodes.len().to_string()}
                        onmouseenter={enter} onclick={click}>
                        <span class="step-turn">{ format!("#{}", s.turn) }</span>
                        {" "}<strong class="step-tool">{ s.tool.clone() }</strong>
                        {" "}<code class="step-args">{ s.args.clone() }</code>
                        if !s.result.is_empty() {
                            <div class="step-result muted">{ format!("→ {}", s.result) }</div>
                        }
                        if !s.nodes.is_empty() {
                            <div class="step-nodes muted">{ format!("looked at {} node(s)", s.nodes.len()) }</div>
                        }
                    </li>
                }
            }) }
        </ol>
    }
}
