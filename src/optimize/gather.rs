//! One optimization step over attributed traces (no loop): gather the targets and the mapped
//! failures of each trace, then turn the step's edits into prompt versions. Used by
//! `memtrace optimize FILES…` and the JavaScript module's `optimizeStep`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::version::PromptVersion;
use super::{map_failure, targets, Failure, Mapped, Selection, StepOutcome};
use crate::attribution::Attribution;
use crate::model::Trace;
use crate::text::diff::unified;

/// A verdict whose op reads no target.
#[cfg_attr(feature = "ts", derive(tsify_next::Tsify))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotOptimizable {
    pub case_id: String,
    pub op_id: String,
    pub why: String,
}

/// What a step reads, gathered trace by trace.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Gathered {
    /// Current value of each target by full name (the first trace naming it wins).
    pub values: BTreeMap<String, String>,
    pub failures: Vec<Failure>,
    pub not_optimizable: Vec<NotOptimizable>,
}

impl Gathered {
    /// Adds the targets of `trace` and its verdicts mapped onto them.
    ///
    /// # Complexity
    /// O(variables + the verdicts' op subgraphs).
    pub fn add(
        &mut self,
        trace: &Trace,
        verdicts: &[Attribution],
        sel: &Selection,
        render_chars: usize,
    ) {
        for (name, t) in targets(trace, sel) {
            self.values.entry(name).or_insert(t.value);
        }
        for a in verdicts {
            match map_failure(trace, a, sel, render_chars) {
                Mapped::Targets(f) => self.failures.extend(f),
                Mapped::NotOptimizable {
                    case_id,
                    op_id,
                    why,
                } => {
                    self.not_optimizable.push(NotOptimizable {
                        case_id,
                        op_id,
                        why,
                    });
                }
            }
        }
    }
}

/// The prompt versions after one step: version 1 of every target as it was, version 2 of each
/// target the step changed (its diff, cases, feedback, and `cost_usd` of the step).
pub fn versions(
    values: &BTreeMap<String, String>,
    out: &StepOutcome,
    cost_usd: Option<f64>,
) -> Vec<PromptVersion> {
    let mut versions: Vec<PromptVersion> = values
        .iter()
        .map(|(name, value)| PromptVersion::original(name.clone(), value.clone()))
        .collect();
    for ed in out
        .edits
        .iter()
        .filter(|e| e.accepted && e.new_value != e.old_value)
    {
        versions.push(PromptVersion {
            name: ed.target.clone(),
            version: 2,
            parent: Some(1),
            value: ed.new_value.clone(),
            round: Some(0),
            score: None,
            cost_usd,
            diff: unified(&ed.target, &ed.old_value, &ed.new_value),
            cases: ed.cases.clone(),
            feedback: ed.feedback.clone(),
            rationale: ed.rationale.clone(),
            rejected: None,
        });
    }
    versions
}
