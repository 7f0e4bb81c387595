//! Verdict and label exports: the page's verdicts and labels handed to the core's
//! [`memtrace::attribution::results`]. Pure: the page only turns the output into a download.

use std::collections::BTreeMap;

use memtrace::attribution::results::{self, Labels, Verdicts};
use memtrace::attribution::{Attribution, Cost};
use memtrace::model::Annotation;
use memtrace::Trace;
use serde_json::Value;

pub use memtrace::attribution::results::op_name;

use crate::state::{Label, Verdict};

/// The verdict as a core [`Attribution`].
fn attribution(t: &Trace, case_id: &str, v: &Verdict) -> Attribution {
    Attribution {
        case_id: case_id.to_owned(),
        op_id: v.op_id.clone(),
        op_name: op_name(t, &v.op_id),
        error_type: v.error_type,
        reason: v.reason.clone(),
        evidence_path: Vec::new(),
        confidence: v.confidence,
        cost: v.cost.map_or_else(Cost::default, |c| Cost {
            llm_calls: c.llm_calls,
            input_tokens: c.input_tokens,
            output_tokens: c.output_tokens,
            ..Cost::default()
        }),
        method: v.method.clone(),
    }
}

/// The page's verdicts as the core's.
fn core_verdicts(t: &Trace, verdicts: &BTreeMap<String, Verdict>) -> Verdicts {
    verdicts
        .iter()
        .map(|(k, v)| (k.clone(), Ok(attribution(t, k, v))))
        .collect()
}

/// The page's labels as core annotations.
fn core_labels(labels: &BTreeMap<String, Label>) -> Labels {
    labels
        .iter()
        .map(|(k, l)| {
            (
                k.clone(),
                Annotation {
                    op_id: l.op_id.clone(),
                    error_type: l.error_type,
                },
            )
        })
        .collect()
}

/// MemTrace run file of the verdicts on trace `name`, scored against the labels where given,
/// else the file's annotations ([`results::results_json`]).
pub fn verdicts_json(
    name: &str,
    t: &Trace,
    verdicts: &BTreeMap<String, Verdict>,
    labels: &BTreeMap<String, Label>,
) -> Value {
    results::results_json(name, t, &core_verdicts(t, verdicts), &core_labels(labels))
}

/// CSV of every case ([`results::results_csv`]).
pub fn verdicts_csv(
    t: &Trace,
    verdicts: &BTreeMap<String, Verdict>,
    labels: &BTreeMap<String, Label>,
) -> String {
    results::results_csv(t, &core_verdicts(t, verdicts), &core_labels(labels))
}

/// The labels as MemTraceBench annotation records ([`results::annotations_json`]).
pub fn labels_json(t: &Trace, labels: &BTreeMap<String, Label>) -> Value {
    results::annotations_json(t, &core_labels(labels))
}

#[cfg(test)]
mod tests;
