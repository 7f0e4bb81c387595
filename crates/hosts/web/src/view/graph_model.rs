//! What the graph canvas draws, computed once per view: the layout of the shown nodes, which of
//! them lie on the verdict's information path, a culling grid, colours and labels. Pure.

use memtrace::layout::{
    expand, failure_view, information_path, layout, Layout, LayoutOptions, NodeRef, NodeSet, XAxis,
};
use memtrace::model::{pyrepr, FailureCase};
use memtrace::text::{fit, one_line};
use memtrace::Trace;

use crate::view::viewport::{Grid, Rect};

/// Colour slots; the canvas maps them to theme colours.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Hue {
    Message,
    Memory,
    Llm,
    Prompt,
    Retrieval,
    Query,
    Extraction,
    Update,
    Deletion,
    Evaluation,
    Other,
}

impl Hue {
    pub const ALL: [Hue; 11] = [
        Hue::Message,
        Hue::Memory,
        Hue::Llm,
        Hue::Prompt,
        Hue::Retrieval,
        Hue::Query,
        Hue::Extraction,
        Hue::Update,
        Hue::Deletion,
        Hue::Evaluation,
        Hue::Other,
    ];

    /// Legend text.
    pub fn label(self) -> &'static str {
        match self {
            Hue::Message => "message",
            Hue::Memory => "memory unit",
            Hue::Llm => "LLM output",
            Hue::Prompt => "prompt",
            Hue::Retrieval => "retrieved",
            Hue::Query => "query / answer",
            Hue::Extraction => "extraction op",
            Hue::Update => "update op",
            Hue::Deletion => "deletion op",
            Hue::Evaluation => "retrieval / QA / judge op",
            Hue::Other => "other",
        }
    }
}

/// The colour of a category string. Names are hints only: unknown categories get `Other`.
pub fn hue_of(category: &str, class_name: &str, is_op: bool) -> Hue {
    let c = category.to_ascii_lowercase();
    let k = class_name.to_ascii_lowercase();
    let has = |s: &str| c.contains(s);
    if is_op {
        return if has("extract") {
            Hue::Extraction
        } else if has("updat") || has("mutation") || has("add") {
            Hue::Update
        } else if has("delet") || has("remov") {
            Hue::Deletion
        } else if has("retriev") || has("search") || has("eval") || has("answer") {
            Hue::Evaluation
        } else {
            Hue::Other
        };
    }
    if has("query") || k.contains("query") || k.contains("prediction") || k.contains("golden") {
        Hue::Query
    } else if has("message") {
        Hue::Message
    } else if has("memory_entry") || has("memory unit") || (has("memory") && !has("context")) {
        Hue::Memory
    } else if has("prompt") {
        Hue::Prompt
    } else if has("context") || has("similar") || has("retriev") {
        Hue::Retrieval
    } else if has("llm") || has("response") {
        Hue::Llm
    } else {
        Hue::Other
    }
}

/// The drawable view of one trace, case and expansion.
#[derive(Debug, Clone, Default)]
pub struct GraphModel {
    pub layout: Layout,
    /// Per laid node: on the verdict's information path.
    pub on_path: Vec<bool>,
    /// Per laid node: its colour.
    pub hues: Vec<Hue>,
    /// Laid index of the verdict op, if shown.
    pub verdict: Option<u32>,
    pub grid: Grid,
    pub bounds: Option<Rect>,
}

/// Builds the model: the case's view (or the whole trace when no case is selected), grown by
/// `expanded`, laid out.
///
/// # Complexity
/// O(n log n) for n shown nodes (the layout).
pub fn build(
    trace: &Trace,
    case: Option<&FailureCase>,
    verdict_op: Option<&str>,
    expanded: &[NodeRef],
) -> GraphModel {
    let mut set = match case {
        Some(c) => failure_view(trace, c, verdict_op),
        None => NodeSet::all(trace),
    };
    for &n in expanded {
        expand(trace, &mut set, n);
    }
    let path = case.map(|c| information_path(trace, &set, c, verdict_op));
    // A case's slice reads best by stage (rank); the whole run by time.
    let x_axis = if case.is_some() {
        XAxis::Rank
    } else {
        XAxis::Time
    };
    let layout = layout(
        trace,
        &set,
        LayoutOptions {
            x_axis,
            ..LayoutOptions::default()
        },
    );
    let on_path = layout
        .nodes
        .iter()
        .map(|n| path.as_ref().is_some_and(|p| p.contains(n.node)))
        .collect();
    let hues = layout
        .nodes
        .iter()
        .map(|n| match n.node {
            NodeRef::Var(v) => {
                let r = trace.var(v);
                hue_of(&r.category, r.class_name.as_deref().unwrap_or(""), false)
            }
            NodeRef::Op(o) => hue_of(&trace.op(o).category, "", true),
        })
        .collect();
    let verdict = verdict_op
        .and_then(|id| trace.op_by_id(id))
        .and_then(|o| layout.index_of(NodeRef::Op(o)));
    let points: Vec<(f64, f64)> = layout
        .nodes
        .iter()
        .map(|n| (f64::from(n.x), f64::from(n.y)))
        .collect();
    let bounds = Rect::around(points.iter().copied());
    let grid = Grid::build(points, 200.0);
    GraphModel {
        layout,
        on_path,
        hues,
        verdict,
        grid,
        bounds,
    }
}

/// Per laid node of `model`: named by `ids` (variable `full_node_id`s or `op_id`s).
///
/// # Complexity
/// O(ids + shown nodes).
pub fn marked(trace: &Trace, model: &GraphModel, ids: &[String]) -> Vec<bool> {
    let wanted: std::collections::HashSet<NodeRef> = ids
        .iter()
        .filter_map(|id| {
            trace
                .var_by_id(id)
                .map(NodeRef::Var)
                .or_else(|| trace.op_by_id(id).map(NodeRef::Op))
        })
        .collect();
    model
        .layout
        .nodes
        .iter()
        .map(|n| wanted.contains(&n.node))
        .collect()
}

/// A short label for a node: the op name's last segment, or the variable's class/name with its
/// version when it has several.
pub fn label(trace: &Trace, node: NodeRef) -> String {
    let text = match node {
        NodeRef::Op(o) => {
            let name = &trace.op(o).op_name;
            name.rsplit('.').next().unwrap_or(name).to_owned()
        }
        NodeRef::Var(v) => {
            let r = trace.var(v);
            let base = r.class_name.as_deref().unwrap_or(&r.name);
            let base = base.strip_prefix("memory-unit-").map_or_else(
                || base.to_owned(),
                |id| format!("mem {}", id.chars().take(8).collect::<String>()),
            );
            if r.version > 1 {
                format!("{base} v{}", r.version)
            } else {
                base
            }
        }
    };
    label_text(&text, 18)
}

/// A one-line preview of a variable's value for tooltips.
pub fn preview(trace: &Trace, node: NodeRef) -> String {
    match node {
        NodeRef::Op(o) => trace.op(o).op_name.clone(),
        NodeRef::Var(v) => label_text(&pyrepr::display(&trace.var(v).value), 120),
    }
}

/// `s` on one line in at most `max` characters, `…` included.
fn label_text(s: &str, max: usize) -> String {
    fit(&one_line(s), max)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::view::failures::tests::fixture;

    #[test]
    fn marked_names_exactly_the_given_ids() {
        let t = memtrace::load(crate::DEMO_TRACE, memtrace::LoadOptions::default())
            .unwrap()
            .trace;
        let c = &t.cases[0];
        let m = build(&t, Some(c), None, &[]);
        let first = m.layout.nodes[0].node;
        let id = match first {
            NodeRef::Var(v) => t.var(v).full_node_id.clone(),
            NodeRef::Op(o) => t.op(o).op_id.clone(),
        };
        let marks = marked(&t, &m, &[id, "not-an-id".into()]);
        assert_eq!(marks.len(), m.layout.nodes.len());
        assert_eq!(marks.iter().filter(|&&b| b).count(), 1);
        assert!(marks[0]);
    }

    #[test]
    fn case_view_highlights_a_path_to_the_prediction() {
        let t = fixture();
        for c in &t.cases {
            let verdict = c.annotation.as_ref().map(|a| a.op_id.as_str());
            let m = build(&t, Some(c), verdict, &[]);
            assert_eq!(m.on_path.len(), m.layout.nodes.len());
            assert!(m.on_path.iter().any(|&b| b), "{}", c.query);
            assert!(m.verdict.is_some(), "verdict op shown for {}", c.query);
            assert_eq!(m.grid.len(), m.layout.nodes.len());
            let b = m.bounds.unwrap();
            assert!(b.x1 > b.x0);
        }
    }

    #[test]
    fn expanding_grows_the_view() {
        let t = fixture();
        let c = &t.cases[0];
        let m = build(&t, Some(c), None, &[]);
        let grow =
            m.layout.nodes.iter().map(|n| n.node).find(|&n| {
                build(&t, Some(c), None, &[n]).layout.nodes.len() > m.layout.nodes.len()
            });
        assert!(grow.is_some(), "some node has unseen neighbours");
        assert_eq!(
            build(&t, None, None, &[]).layout.nodes.len(),
            t.vars.len() + t.ops.len()
        );
    }

    #[test]
    fn colours_and_labels_come_from_categories() {
        assert_eq!(hue_of("message", "", false), Hue::Message);
        assert_eq!(hue_of("memory_entry", "", false), Hue::Memory);
        assert_eq!(hue_of("deletion", "", true), Hue::Deletion);
        assert_eq!(hue_of("weird", "", true), Hue::Other);
        assert_eq!(label_text("a  b\nc", 10), "a b c");
        assert_eq!(label_text("abcdefghijkl", 5).chars().count(), 5);
        let t = fixture();
        let mem = t
            .flow
            .versions
            .iter()
            .find(|(n, v)| n.starts_with("memory-unit-") && v.len() > 1)
            .map(|(_, v)| v[1])
            .unwrap();
        let l = label(&t, NodeRef::Var(mem));
        assert!(l.starts_with("mem ") && l.ends_with("v2"), "{l}");
    }
}
