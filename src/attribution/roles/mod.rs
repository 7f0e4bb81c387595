//! What each operation does in the memory pipeline. Roles come from the graph's structure first
//! (what an op reads and writes: messages, memory-unit versions, the query, the prediction);
//! names and categories are hints that break ties, and a user's overrides (op name → role) win.
//!
//! [`RoleConfig`] is the serializable setting (hints + overrides, saved with a project);
//! [`Roles`] is what it gives for one trace, computed once and passed to every method.

mod anchors;
mod infer;
mod verbatim;

pub(crate) use verbatim::{
    holds_verbatim, is_verbatim_cut, normalized, spells_out, string_leaves, verbatim_text,
};

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::model::{ErrorType, OpIx, OpRecord, Trace};
use crate::text::lexicon::{
    DELETION_HINTS, EXTRACTION_HINTS, JUDGE_HINTS, RESPONSE_HINTS, RETRIEVAL_HINTS, UPDATE_HINTS,
};

/// The stage of the pipeline an operation belongs to.
#[cfg_attr(feature = "ts", derive(tsify_next::Tsify))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OpRole {
    Extraction,
    Update,
    Deletion,
    Retrieval,
    Response,
    /// Scores the answer; never the cause of a failure.
    Judge,
    Other,
}

impl OpRole {
    /// Every role, in pipeline order.
    pub const ALL: [OpRole; 7] = [
        OpRole::Extraction,
        OpRole::Update,
        OpRole::Deletion,
        OpRole::Retrieval,
        OpRole::Response,
        OpRole::Judge,
        OpRole::Other,
    ];

    /// The error type a fault in this role is.
    pub fn error_type(self) -> Option<ErrorType> {
        match self {
            OpRole::Extraction => Some(ErrorType::ExtractionError),
            OpRole::Update => Some(ErrorType::UpdateError),
            OpRole::Deletion => Some(ErrorType::DeletionError),
            OpRole::Retrieval => Some(ErrorType::RetrievalError),
            OpRole::Response => Some(ErrorType::ResponseError),
            OpRole::Judge | OpRole::Other => None,
        }
    }

    /// The role whose fault is `e` (the role an op blamed for `e` played in that case).
    pub fn of_error(e: ErrorType) -> Option<OpRole> {
        OpRole::ALL.into_iter().find(|r| r.error_type() == Some(e))
    }

    /// The lowercase name (`extraction`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            OpRole::Extraction => "extraction",
            OpRole::Update => "update",
            OpRole::Deletion => "deletion",
            OpRole::Retrieval => "retrieval",
            OpRole::Response => "response",
            OpRole::Judge => "judge",
            OpRole::Other => "other",
        }
    }

    /// What an op of this role does, in a few words (for prompts and listings).
    pub fn meaning(self) -> &'static str {
        match self {
            OpRole::Extraction => {
                "creates memory units (or the facts stored as them) from messages"
            }
            OpRole::Update => "writes new or changed memory units from already extracted content",
            OpRole::Deletion => "removes or tombstones memory units",
            OpRole::Retrieval => "reads the query and returns memory units",
            OpRole::Response => "writes the answer (prediction) from the retrieved context",
            OpRole::Judge => "scores the answer against the gold answer; never a cause",
            OpRole::Other => "moves data along without deciding what memory holds",
        }
    }
}

impl fmt::Display for OpRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for OpRole {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let l = s.trim().to_ascii_lowercase();
        OpRole::ALL
            .into_iter()
            .find(|r| r.as_str() == l)
            .ok_or_else(|| {
                let names: Vec<&str> = OpRole::ALL.iter().map(|r| r.as_str()).collect();
                format!("unknown role {s:?}; roles: {}", names.join(", "))
            })
    }
}

/// Substrings of an op's category or name that hint at its role, checked in this order.
/// They only break ties: structure decides first. The defaults are the lexicon's
/// ([`crate::text::lexicon::names`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoleHints {
    pub deletion: Vec<String>,
    pub retrieval: Vec<String>,
    pub response: Vec<String>,
    pub extraction: Vec<String>,
    pub update: Vec<String>,
    /// Hints for judging ops, which are never the cause of a failure.
    pub judge: Vec<String>,
}

impl Default for RoleHints {
    fn default() -> Self {
        let v = |xs: &[&str]| xs.iter().map(|s| (*s).to_owned()).collect();
        RoleHints {
            deletion: v(&DELETION_HINTS),
            retrieval: v(&RETRIEVAL_HINTS),
            response: v(&RESPONSE_HINTS),
            extraction: v(&EXTRACTION_HINTS),
            update: v(&UPDATE_HINTS),
            judge: v(&JUDGE_HINTS),
        }
    }
}

impl RoleHints {
    /// The role the op's category or name suggests, if any.
    pub fn hint(&self, op: &OpRecord) -> Option<OpRole> {
        let hay = format!("{} {}", op.category, op.op_name).to_ascii_lowercase();
        let has = |list: &[String]| {
            list.iter()
                .any(|h| !h.is_empty() && hay.contains(&h.to_ascii_lowercase()))
        };
        [
            (OpRole::Judge, &self.judge),
            (OpRole::Deletion, &self.deletion),
            (OpRole::Retrieval, &self.retrieval),
            (OpRole::Response, &self.response),
            (OpRole::Extraction, &self.extraction),
            (OpRole::Update, &self.update),
        ]
        .into_iter()
        .find(|(_, list)| has(list))
        .map(|(role, _)| role)
    }
}

/// How roles are assigned: the hints, and the user's overrides (op name → role) that win over
/// structure. Serializable: the page saves it with a project; every method uses it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RoleConfig {
    pub hints: RoleHints,
    pub overrides: BTreeMap<String, OpRole>,
}

impl RoleConfig {
    /// Adds an override from `NAME=ROLE` (as on the command line).
    ///
    /// # Errors
    /// A message saying what is wrong when the text has no `=` or the role is unknown.
    pub fn add_override(&mut self, spec: &str) -> Result<(), String> {
        let Some((name, role)) = spec.rsplit_once('=') else {
            return Err(format!(
                "role override {spec:?} needs NAME=ROLE, e.g. memory_system.add=extraction"
            ));
        };
        if name.trim().is_empty() {
            return Err(format!("role override {spec:?} names no op"));
        }
        self.overrides
            .insert(name.trim().to_owned(), role.parse::<OpRole>()?);
        Ok(())
    }
}

/// Where an op's role came from, strongest first.
#[cfg_attr(feature = "ts", derive(tsify_next::Tsify))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Basis {
    /// The user's override.
    User,
    /// What the op reads and writes.
    Structure,
    /// Other ops of the same name had this role by structure.
    Name,
    /// The op's name or category (a [`RoleHints`] match).
    Hint,
    /// Nothing said anything.
    Default,
}

/// One op's role and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Assigned {
    pub role: OpRole,
    pub basis: Basis,
    /// One line.
    pub reason: String,
}

/// The roles of one op name over a trace.
#[cfg_attr(feature = "ts", derive(tsify_next::Tsify))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NameRole {
    pub op_name: String,
    /// The most frequent role among its ops.
    pub role: OpRole,
    /// How many ops have this name.
    pub count: usize,
    pub basis: Basis,
    pub reason: String,
    /// Ops of this name with another role, when there are any: (role, count).
    pub other_roles: Vec<(OpRole, usize)>,
}

/// [`Roles::infer`] in steps, for a caller that must stay responsive (the page runs a few
/// steps, lets the browser paint, and runs more): the same roles. `T` holds the trace (`&Trace`,
/// or an `Arc<Trace>` for a caller that keeps the inference beside nothing else).
pub struct RolesInference<T: std::borrow::Borrow<Trace>> {
    t: T,
    steps: infer::Steps,
}

impl<T: std::borrow::Borrow<Trace>> RolesInference<T> {
    /// Starts inferring the roles of `t`'s ops; the work is done in [`RolesInference::step`].
    pub fn new(t: T) -> Self {
        let steps = infer::Steps::new(t.borrow());
        RolesInference { t, steps }
    }

    /// Takes one short step: one failed case, `budget` × 16 variables, or up to `budget` ops
    /// (at least one); true when every op is looked at.
    pub fn step(&mut self, budget: usize) -> bool {
        self.steps.step(self.t.borrow(), budget)
    }

    /// Work done so far, and in all (cases, variable slices and ops, one unit each): for a
    /// progress bar.
    pub fn done(&self) -> (usize, usize) {
        self.steps.done(self.t.borrow())
    }

    /// The roles with `cfg`'s hints and overrides (looking at the ops left, if any).
    pub fn finish(self, cfg: &RoleConfig) -> Roles {
        Roles {
            ops: self.steps.finish(self.t.borrow(), cfg),
        }
    }
}

/// Every op's role in one trace. Computed once per trace ([`Roles::infer`]) and passed to every
/// attribution method.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Roles {
    ops: Vec<Assigned>,
}

impl Roles {
    /// Infers every op's role of `t` (see the module docs of `infer`).
    pub fn infer(t: &Trace, cfg: &RoleConfig) -> Roles {
        Roles {
            ops: infer::infer(t, cfg),
        }
    }

    /// The op's role ([`OpRole::Other`] for an op not in the trace).
    pub fn role(&self, op: OpIx) -> OpRole {
        self.ops.get(op.get()).map_or(OpRole::Other, |a| a.role)
    }

    /// The op's role and reason.
    pub fn get(&self, op: OpIx) -> Option<&Assigned> {
        self.ops.get(op.get())
    }

    /// `role: extraction (creates memory units …)`: the op's role as agents are told it.
    pub fn describe(&self, op: OpIx) -> String {
        let role = self.role(op);
        format!("role: {role} ({})", role.meaning())
    }

    /// The roles per op name, in order of first appearance.
    pub fn by_name(&self, t: &Trace) -> Vec<NameRole> {
        let mut order: Vec<&str> = Vec::new();
        let mut groups: BTreeMap<&str, Vec<&Assigned>> = BTreeMap::new();
        for (op, a) in t.ops.iter().zip(&self.ops) {
            let g = groups.entry(op.op_name.as_str()).or_default();
            if g.is_empty() {
                order.push(op.op_name.as_str());
            }
            g.push(a);
        }
        order
            .into_iter()
            .filter_map(|name| {
                let g = groups.get(name)?;
                let mut counts: BTreeMap<OpRole, usize> = BTreeMap::new();
                for a in g {
                    *counts.entry(a.role).or_default() += 1;
                }
                let (&role, _) = counts
                    .iter()
                    .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))?;
                let best = g
                    .iter()
                    .filter(|a| a.role == role)
                    .min_by_key(|a| a.basis)?;
                Some(NameRole {
                    op_name: name.to_owned(),
                    role,
                    count: g.len(),
                    basis: best.basis,
                    reason: best.reason.clone(),
                    other_roles: counts.into_iter().filter(|(r, _)| *r != role).collect(),
                })
            })
            .collect()
    }
}
