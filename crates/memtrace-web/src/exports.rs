//! Verdict and label exports: MemTrace result records (JSON), a CSV table, and labels as
//! MemTraceBench annotations. Pure: the page only turns the output into a download.

use std::collections::BTreeMap;
use std::fmt::Write;

use memtrace::attribution::eval::{run_file, score, Scored};
use memtrace::attribution::{Attribution, Cost};
use memtrace::model::{Annotation, ErrorType, FailureCase};
use memtrace::Trace;
use serde_json::{json, Value};

use crate::state::{Label, Verdict};

/// The verdict as a core [`Attribution`], or why it cannot be one (an unknown error type).
fn attribution(t: &Trace, case: &FailureCase, v: &Verdict) -> Result<Attribution, String> {
    let error_type = v
        .error_type
        .parse::<ErrorType>()
        .map_err(|m| format!("verdict of {}: {m}", case.query_id))?;
    Ok(Attribution {
        case_id: case.query_id.clone(),
        op_id: v.op_id.clone(),
        op_name: op_name(t, &v.op_id),
        error_type,
        reason: v.reason.clone(),
        evidence_path: Vec::new(),
        confidence: v.confidence,
        cost: v.cost.map_or_else(Cost::default, |c| Cost {
            llm_calls: c.llm_calls,
            input_tokens: c.input_tokens,
            output_tokens: c.output_tokens,
            wall_ms: 0,
        }),
        method: v.method.clone(),
    })
}

/// The op's name, or an empty string for an id the trace lacks.
pub fn op_name(t: &Trace, op_id: &str) -> String {
    t.op_by_id(op_id)
        .map(|o| t.op(o).op_name.clone())
        .unwrap_or_default()
}

/// The case with its label (if any) standing in for the file's annotation.
fn labelled(case: &FailureCase, labels: &BTreeMap<String, Label>) -> FailureCase {
    let mut c = case.clone();
    if let Some(l) = labels.get(&case.query_id) {
        if let Ok(error_type) = l.error_type.parse::<ErrorType>() {
            c.annotation = Some(Annotation {
                op_id: l.op_id.clone(),
                error_type,
            });
        }
    }
    c
}

/// MemTrace run file (`{split, sampled_graph_paths, results, metrics}`) of the verdicts on the
/// cases of trace `name`, scored against the labels where given, else the file's annotations.
///
/// # Complexity
/// O(cases).
pub fn verdicts_json(
    name: &str,
    t: &Trace,
    verdicts: &BTreeMap<String, Verdict>,
    labels: &BTreeMap<String, Label>,
) -> Value {
    let scored: Vec<Scored> = t
        .cases
        .iter()
        .map(|c| {
            let (result, error) = match verdicts.get(&c.query_id).map(|v| attribution(t, c, v)) {
                None => (None, Some("not attributed".to_owned())),
                Some(Ok(a)) => (Some(a), None),
                Some(Err(e)) => (None, Some(e)),
            };
            Scored {
                file: name.to_owned(),
                case: labelled(c, labels),
                result,
                error,
            }
        })
        .collect();
    let method = verdicts
        .values()
        .next()
        .map_or("none", |v| v.method.as_str());
    let report = score(method, &scored);
    run_file("viewer", &[name.to_owned()], &scored, &report)
}

/// One CSV field, quoted when it holds a comma, quote or line break (RFC 4180).
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

/// CSV of every case: `case_id,query,verdict_type,op_id,op_name,reason,annotation_type,
/// annotation_op,agrees` (annotation = label if given, else the file's). `agrees` is empty when
/// either side is missing.
///
/// # Complexity
/// O(total text length).
pub fn verdicts_csv(
    t: &Trace,
    verdicts: &BTreeMap<String, Verdict>,
    labels: &BTreeMap<String, Label>,
) -> String {
    let mut out = String::from(
        "case_id,query,verdict_type,op_id,op_name,reason,annotation_type,annotation_op,agrees\r\n",
    );
    for c in &t.cases {
        let v = verdicts.get(&c.query_id);
        let ann = labelled(c, labels).annotation;
        let agrees = match (v, &ann) {
            (Some(v), Some(a)) => {
                (v.op_id == a.op_id && v.error_type == a.error_type.as_str()).to_string()
            }
            _ => String::new(),
        };
        let cells = [
            c.query_id.clone(),
            c.query.clone(),
            v.map(|v| v.error_type.clone()).unwrap_or_default(),
            v.map(|v| v.op_id.clone()).unwrap_or_default(),
            v.map(|v| op_name(t, &v.op_id)).unwrap_or_default(),
            v.map(|v| v.reason.clone()).unwrap_or_default(),
            ann.as_ref()
                .map(|a| a.error_type.as_str().to_owned())
                .unwrap_or_default(),
            ann.map(|a| a.op_id).unwrap_or_default(),
            agrees,
        ];
        let line: Vec<String> = cells.iter().map(|s| field(s)).collect();
        let _ = write!(out, "{}\r\n", line.join(","));
    }
    out
}

/// The labels as MemTraceBench annotation records (`{"annotations": [...]}`), in case order;
/// cases without a label are left out.
///
/// # Complexity
/// O(cases).
pub fn labels_json(t: &Trace, labels: &BTreeMap<String, Label>) -> Value {
    let records: Vec<Value> = t
        .cases
        .iter()
        .filter_map(|c| {
            let l = labels.get(&c.query_id)?;
            Some(json!({
                "query_id": c.query_id,
                "query": c.query,
                "golden_answers": c.golden_answers,
                "prediction": c.prediction,
                "prediction_id": c.prediction_id,
                "source_evidence_ids": c.evidence_ids,
                "final_error_type": l.error_type,
                "final_op_id": l.op_id,
            }))
        })
        .collect();
    json!({ "annotations": records })
}

#[cfg(test)]
#[path = "exports_tests.rs"]
mod tests;
