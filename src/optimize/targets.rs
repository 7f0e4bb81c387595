//! Targets: the configurable variables of a trace (prompt templates), and the mapping of an
//! attributed failure onto the targets inside its decisive op's subgraph.
//!
//! A target is a variable of a chosen category (default `prompt`) that no op produces: a
//! template set from outside. Per-call instructions filled from a template (produced by an op)
//! are not targets. Names only select; the structure decides.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::algo::render::render_op_xml;
use crate::attribution::Attribution;
use crate::model::{pyrepr, ErrorType, Trace, VarIx};

/// Which variables may be rewritten.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Selection {
    /// Variable categories that are configurable.
    pub categories: Vec<String>,
    /// Full names chosen by the user, whatever their category.
    pub names: Vec<String>,
    /// Full names never to rewrite (e.g. the judge's prompt).
    pub exclude: Vec<String>,
}

impl Default for Selection {
    fn default() -> Self {
        Self {
            categories: vec!["prompt".into()],
            names: Vec::new(),
            exclude: Vec::new(),
        }
    }
}

/// The judge's prompt in the reference memory system's traces: grading is not the system's to
/// improve, so a step leaves it out unless asked.
pub const JUDGE_PROMPT: &str = "judge_prompt:locomo-judge";

/// The selection of a step over traces: prompts, the judge's excluded.
pub fn default_selection() -> Selection {
    Selection {
        exclude: vec![JUDGE_PROMPT.into()],
        ..Selection::default()
    }
}

/// A configurable variable: its full name and its current (latest) value as text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Target {
    pub name: String,
    pub value: String,
    /// `full_node_id` of the version read.
    pub node_id: String,
}

/// One attributed failure as the optimizer sees it for one target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    pub target: String,
    pub case_id: String,
    pub error_type: ErrorType,
    pub reason: String,
    pub op_id: String,
    pub op_name: String,
    /// The decisive op's subgraph as XML (values included, cut to a budget).
    pub rendering: String,
}

/// What became of one attribution.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Mapped {
    /// One failure per target found in the op's subgraph.
    Targets(Vec<Failure>),
    /// The op's subgraph holds no target (e.g. a lexical retrieval): reported, not optimized.
    NotOptimizable {
        case_id: String,
        op_id: String,
        why: String,
    },
}

fn full_name(t: &Trace, v: VarIx) -> String {
    let r = t.var(v);
    if r.full_name.is_empty() {
        r.compute_full_name()
    } else {
        r.full_name.clone()
    }
}

/// The readable text of a value (a `repr` string loses its quotes).
pub fn value_text(raw: &str) -> String {
    match pyrepr::to_json(raw) {
        serde_json::Value::String(s) => s,
        _ => raw.to_owned(),
    }
}

fn selected(t: &Trace, v: VarIx, sel: &Selection) -> bool {
    let name = full_name(t, v);
    if sel.exclude.contains(&name) {
        return false;
    }
    if sel.names.contains(&name) {
        return true;
    }
    let produced = t.flow.producers.get(v.get()).is_some_and(|p| !p.is_empty());
    !produced && sel.categories.contains(&t.var(v).category)
}

/// The targets of a trace by full name (latest version of each).
///
/// # Complexity
/// O(variables).
pub fn targets(t: &Trace, sel: &Selection) -> BTreeMap<String, Target> {
    let mut out: BTreeMap<String, (u32, Target)> = BTreeMap::new();
    for i in 0..t.vars.len() {
        let v = VarIx(i as u32);
        if !selected(t, v, sel) {
            continue;
        }
        let r = t.var(v);
        let name = full_name(t, v);
        if out.get(&name).is_some_and(|(ver, _)| *ver >= r.version) {
            continue;
        }
        let target = Target {
            name: name.clone(),
            value: value_text(&r.value),
            node_id: r.full_node_id.clone(),
        };
        out.insert(name, (r.version, target));
    }
    out.into_iter().map(|(k, (_, t))| (k, t)).collect()
}

/// Maps an attribution to the targets inside its decisive op's subgraph.
///
/// `render_chars` bounds the op rendering put into the feedback prompt.
///
/// # Complexity
/// O(size of the op's subgraph and its values).
pub fn map_failure(t: &Trace, a: &Attribution, sel: &Selection, render_chars: usize) -> Mapped {
    let not = |why: &str| Mapped::NotOptimizable {
        case_id: a.case_id.clone(),
        op_id: a.op_id.clone(),
        why: why.to_owned(),
    };
    let Some(op) = t.op_by_id(&a.op_id) else {
        return not("the attributed op is not in this trace");
    };
    let f = &t.flow;
    let i = op.get();
    let vars: BTreeSet<VarIx> = [&f.op_inputs, &f.op_intermediates, &f.op_outputs]
        .iter()
        .filter_map(|x| x.get(i))
        .flatten()
        .copied()
        .collect();
    let names: BTreeSet<String> = vars
        .into_iter()
        .filter(|&v| selected(t, v, sel))
        .map(|v| full_name(t, v))
        .collect();
    if names.is_empty() {
        return not("its op reads no configurable variable (prompt)");
    }
    let rendering = render_op_xml(t, op, render_chars.max(200), 0)
        .map(|p| p.text)
        .unwrap_or_default();
    Mapped::Targets(
        names
            .into_iter()
            .map(|target| Failure {
                target,
                case_id: a.case_id.clone(),
                error_type: a.error_type,
                reason: a.reason.clone(),
                op_id: a.op_id.clone(),
                op_name: a.op_name.clone(),
                rendering: rendering.clone(),
            })
            .collect(),
    )
}
