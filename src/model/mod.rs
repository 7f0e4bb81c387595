//! The bipartite execution graph: sessions, operations, variable versions, and the edges
//! between them, as read from a trace file; plus the failure cases found in it.
//!
//! A [`Trace`] keeps the records exactly as read (so it can be written back), and an index
//! ([`Flow`]) of the bipartite form: variable → operation (input) and operation → variable
//! (output or intermediate).

mod case;
mod detect;
mod error;
mod fail_rule;
mod flow;
mod gold;
mod judged;
pub mod judgement;
pub mod pyrepr;
mod question;
mod record;
mod structure;
mod suggest;

pub use case::{Annotation, ErrorType, FailureCase};
pub use detect::{DetectSteps, Detection, FoundBy, RuleReport, Unused, RULES};
pub use error::GraphError;
pub(crate) use error::{cycle, dangling, duplicate_id};
pub use fail_rule::{FailRule, Mark, RuleError};
pub use flow::{Flow, FlowSteps, Role, Versions};
pub(crate) use judged::answer_op_of;
pub use question::{question_ref, QuestionRef};
pub(crate) use record::StrLen;
pub use record::{
    AnnotationRecord, EdgeRecord, GraphMeta, NodeRecord, OpRecord, SessionRecord, Unset,
};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Index of a variable version in [`Trace::vars`].
#[cfg_attr(feature = "ts", derive(tsify_next::Tsify))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct VarIx(pub u32);

/// Index of an operation in [`Trace::ops`].
#[cfg_attr(feature = "ts", derive(tsify_next::Tsify))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct OpIx(pub u32);

/// A node of the bipartite graph: a variable version or an operation (the graph index numbers
/// them, a view holds a set of them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", content = "ix", rename_all = "lowercase")]
pub enum NodeRef {
    Var(VarIx),
    Op(OpIx),
}

impl VarIx {
    /// The index as `usize`, for slices.
    pub fn get(self) -> usize {
        self.0 as usize
    }
}

impl OpIx {
    /// The index as `usize`, for slices.
    pub fn get(self) -> usize {
        self.0 as usize
    }
}

/// A whole trace: the records as read plus the derived bipartite index and failure cases.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Trace {
    pub meta: GraphMeta,
    pub sessions: Vec<SessionRecord>,
    pub vars: Vec<NodeRecord>,
    pub ops: Vec<OpRecord>,
    pub edges: Vec<EdgeRecord>,
    /// `data.annotations`, when the file had that key (MemTraceBench).
    pub annotations: Option<Vec<AnnotationRecord>>,
    /// Unknown keys inside `data`.
    pub data_extra: Map<String, Value>,
    /// The bipartite index, built from the records.
    pub flow: Flow,
    /// Failed questions: annotated ones, and judged-zero ones without annotation.
    pub cases: Vec<FailureCase>,
    /// Graded judge scores below this fail; `None` = [`judgement::DEFAULT_JUDGE_THRESHOLD`].
    pub judge_threshold: Option<f64>,
}

/// Counts shown by `memtrace info`, the page summary and the JS API.
#[cfg_attr(feature = "ts", derive(tsify_next::Tsify))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    pub format: String,
    pub graph_id: String,
    pub sessions: usize,
    pub operations: usize,
    pub variables: usize,
    pub edges: usize,
    pub failures: usize,
    pub annotations: usize,
    /// Annotated cases per error type label, sorted by label.
    pub annotations_by_type: std::collections::BTreeMap<String, usize>,
}

impl Trace {
    /// Builds the index and the failure cases from the records (call after changing them).
    ///
    /// # Errors
    /// A dangling reference, a duplicate id or a cycle, located by JSON path.
    pub fn reindex(&mut self) -> Result<(), GraphError> {
        self.index_flow()?;
        // Failed questions by the ordered rules alone (no user rules, no marks).
        self.cases = detect::detect(self, &[], &[])?.cases;
        Ok(())
    }

    /// [`Trace::reindex`] without the failure cases: builds the index and checks the
    /// annotations (what finding the cases would refuse), leaving `cases` as they are.
    ///
    /// # Errors
    /// As [`Trace::reindex`].
    pub fn index_flow(&mut self) -> Result<(), GraphError> {
        self.flow = Flow::build(self)?;
        case::check_annotations(self)
    }

    /// Runs the failure rules (`docs/failures.md`) with the user's rules and marks, and says
    /// what was looked at; `self.cases` is the same with no rules and no marks.
    ///
    /// # Errors
    /// A MemTraceBench annotation with an unknown error type or a dangling id.
    pub fn detect(&self, rules: &[FailRule], marks: &[Mark]) -> Result<Detection, GraphError> {
        detect::detect(self, rules, marks)
    }

    /// Replaces `self.cases` by the cases found with these user rules and marks.
    ///
    /// # Errors
    /// As [`Trace::detect`].
    pub fn apply_rules(
        &mut self,
        rules: &[FailRule],
        marks: &[Mark],
    ) -> Result<Detection, GraphError> {
        let d = detect::detect(self, rules, marks)?;
        self.cases.clone_from(&d.cases);
        Ok(d)
    }

    /// The questions (query variables), in file order: named so, or searched for by a
    /// retrieval op; see `docs/failures.md`.
    pub fn questions(&self) -> Vec<VarIx> {
        detect::questions(self)
    }

    /// The variable with this `full_node_id`.
    pub fn var_by_id(&self, full_node_id: &str) -> Option<VarIx> {
        self.flow.var_ix(full_node_id)
    }

    /// The operation with this `op_id`.
    pub fn op_by_id(&self, op_id: &str) -> Option<OpIx> {
        self.flow.op_ix(op_id)
    }

    /// Whether `v` is a prompt: of a kind named so (a hint), or, whatever its kind is called, a
    /// template (a value no op wrote that two calls of one op read) or a template filled in (what
    /// an op that read a template wrote and read back itself).
    pub fn is_prompt(&self, v: VarIx) -> bool {
        if self.is_template(v) {
            return true;
        }
        let (producers, readers) = (&self.flow.producers[v.get()], &self.flow.consumers[v.get()]);
        match producers.as_slice() {
            [p] => {
                readers.iter().all(|o| o == p)
                    && self.flow.op_inputs[p.get()]
                        .iter()
                        .any(|&u| u != v && self.is_template(u))
            }
            _ => false,
        }
    }

    fn is_template(&self, v: VarIx) -> bool {
        if self.var(v).category.contains("prompt") {
            return true;
        }
        if !self.flow.producers[v.get()].is_empty() {
            return false;
        }
        let mut names = std::collections::BTreeSet::new();
        self.flow.consumers[v.get()]
            .iter()
            .any(|&o| !names.insert(self.op(o).op_name.as_str()))
    }

    /// The variable record at `ix`.
    pub fn var(&self, ix: VarIx) -> &NodeRecord {
        &self.vars[ix.get()]
    }

    /// The operation record at `ix`.
    pub fn op(&self, ix: OpIx) -> &OpRecord {
        &self.ops[ix.get()]
    }

    /// Counts per kind of record, for display.
    pub fn summary(&self, format: &str) -> Summary {
        let mut by_type = std::collections::BTreeMap::new();
        for a in self.annotations.iter().flatten() {
            *by_type.entry(a.final_error_type.clone()).or_insert(0) += 1;
        }
        Summary {
            format: format.to_owned(),
            graph_id: self.meta.graph_id.clone(),
            sessions: self.sessions.len(),
            operations: self.ops.len(),
            variables: self.vars.len(),
            edges: self.edges.len(),
            failures: self.cases.len(),
            annotations: self.annotations.as_ref().map_or(0, Vec::len),
            annotations_by_type: by_type,
        }
    }
}
