//! The counts of the trace on screen.

use memtrace::Summary;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub name: String,
    pub summary: Summary,
}

#[function_component(SummaryCard)]
pub fn summary_card(props: &Props) -> Html {
    let s = &props.summary;
    let row = |key: &'static str, label: &'static str, value: String| {
        html! { <tr><th>{label}</th><td data-field={key}>{value}</td></tr> }
    };
    let by_type = s
        .annotations_by_type
        .iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect::<Vec<_>>()
        .join(", ");
    html! {
        <section id="summary" class="card">
            <h2 data-field="name">{ &props.name }</h2>
            <table>
                { row("format", "format", s.format.clone()) }
                { row("graph_id", "graph", s.graph_id.clone()) }
                { row("sessions", "sessions", s.sessions.to_string()) }
                { row("operations", "operations", s.operations.to_string()) }
                { row("variables", "variables", s.variables.to_string()) }
                { row("edges", "edges", s.edges.to_string()) }
                { row("failures", "failures", s.failures.to_string()) }
                { row("annotations", "annotations", format!("{} {}", s.annotations, if by_type.is_empty() { String::new() } else { format!("({by_type})") })) }
            </table>
        </section>
    }
}
