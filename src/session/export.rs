//! Verdict and label exports: a project's [`Verdict`]s and [`Label`]s handed to the core's
//! [`crate::attribution::results`] (a MemTrace run file, CSV, annotation records), and its
//! verdicts as the verdict rows every host gives. A host only turns the output into a file or a
//! download.

use std::collections::BTreeMap;

use serde_json::Value;

use super::row::VerdictRow;
use super::verdict::{Label, Verdict};
use crate::attribution::results::{self, op_name, Labels, Verdicts};
use crate::attribution::{Attribution, Cost};
use crate::model::{Annotation, Trace};

/// The verdict as a core [`Attribution`].
fn attribution(t: &Trace, case_id: &str, v: &Verdict) -> Attribution {
    Attribution {
        case_id: case_id.to_owned(),
        op_id: v.op_id.clone(),
        op_name: op_name(t, &v.op_id),
        error_type: v.error_type,
        reason: v.reason.clone(),
        evidence_path: v.evidence_path.clone(),
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

/// The verdicts as the core's.
fn core_verdicts(t: &Trace, verdicts: &BTreeMap<String, Verdict>) -> Verdicts {
    verdicts
        .iter()
        .map(|(k, v)| (k.clone(), Ok(attribution(t, k, v))))
        .collect()
}

/// The labels as core annotations.
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

/// The verdicts on `t`'s failed cases as verdict rows, in case order (a case without a verdict
/// has no row): the lines `memtrace attribute --json` prints for the same verdicts, but for
/// the wall time and the counterfactual check's detail, which a project does not keep.
pub fn verdict_rows(t: &Trace, verdicts: &BTreeMap<String, Verdict>) -> Vec<VerdictRow> {
    t.cases
        .iter()
        .filter_map(|c| {
            let v = verdicts.get(&c.query_id)?;
            Some(VerdictRow::new(
                t,
                c,
                Ok(attribution(t, &c.query_id, v)),
                None,
            ))
        })
        .collect()
}

/// [`verdict_rows`] as JSON Lines, one row a line.
pub fn verdict_rows_jsonl(t: &Trace, verdicts: &BTreeMap<String, Verdict>) -> String {
    verdict_rows(t, verdicts)
        .iter()
        .map(|r| r.to_json() + "\n")
        .collect()
}

/// The labels as MemTraceBench annotation records ([`results::annotations_json`]).
pub fn labels_json(t: &Trace, labels: &BTreeMap<String, Label>) -> Value {
    results::annotations_json(t, &core_labels(labels))
}

#[cfg(test)]
mod tests;
