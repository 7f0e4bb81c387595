//! Verdict exports: MemTrace result records (a scored run file), a CSV table, and verdicts or
//! labels as MemTraceBench annotations. Pure; the page and the JavaScript module call these.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde_json::{json, Value};

use super::eval::{run_file, score, Scored};
use super::Attribution;
use crate::model::{Annotation, FailureCase, Trace};

/// Verdicts by case `query_id`: the attribution, or why there is none that can be exported.
pub type Verdicts = BTreeMap<String, Result<Attribution, String>>;

/// Labels by case `query_id`: a person's annotation standing in for the file's.
pub type Labels = BTreeMap<String, Annotation>;

/// The op's name, or an empty string for an id the trace lacks.
pub fn op_name(t: &Trace, op_id: &str) -> String {
    t.op_by_id(op_id)
        .map(|o| t.op(o).op_name.clone())
        .unwrap_or_default()
}

/// The case with its label (if any) standing in for the file's annotation.
fn labelled(case: &FailureCase, labels: &Labels) -> FailureCase {
    let mut c = case.clone();
    if let Some(l) = labels.get(&case.query_id) {
        c.annotation = Some(l.clone());
    }
    c
}

/// MemTrace run file (`{split, sampled_graph_paths, results, metrics}`) of the verdicts on the
/// cases of trace `name`, scored against the labels where given, else the file's annotations.
///
/// # Complexity
/// O(cases).
pub fn results_json(name: &str, t: &Trace, verdicts: &Verdicts, labels: &Labels) -> Value {
    let scored: Vec<Scored> = t
        .cases
        .iter()
        .map(|c| {
            let (result, error) = match verdicts.get(&c.query_id) {
                None => (None, Some("not attributed".to_owned())),
                Some(Ok(a)) => (Some(a.clone()), None),
                Some(Err(e)) => (None, Some(e.clone())),
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
        .find_map(|v| v.as_ref().ok())
        .map_or("none", |a| a.method.as_str());
    let report = score(method, &scored);
    run_file("viewer", &[name.to_owned()], &scored, &report)
}

/// One CSV field, quoted when it holds a comma, quote or line break (RFC 4180). A field that a
/// spreadsheet would read as a formula (it starts with `=`, `+`, `-`, `@`, a tab or a carriage
/// return: trace text is untrusted LLM output) gets a leading `'` and is quoted, as OWASP advises.
pub fn csv_field(s: &str) -> String {
    let guard = if s.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        "'"
    } else {
        ""
    };
    if guard.is_empty() && !s.contains([',', '"', '\n', '\r']) {
        return s.to_owned();
    }
    format!("\"{guard}{}\"", s.replace('"', "\"\""))
}

/// CSV of every case: `case_id,query,verdict_type,op_id,op_name,reason,annotation_type,
/// annotation_op,agrees` (annotation = label if given, else the file's). `agrees` is empty when
/// either side is missing.
///
/// # Complexity
/// O(total text length).
pub fn results_csv(t: &Trace, verdicts: &Verdicts, labels: &Labels) -> String {
    let mut out = String::from(
        "case_id,query,verdict_type,op_id,op_name,reason,annotation_type,annotation_op,agrees\r\n",
    );
    for c in &t.cases {
        let v = verdicts.get(&c.query_id).and_then(|v| v.as_ref().ok());
        let ann = labelled(c, labels).annotation;
        let agrees = match (v, &ann) {
            (Some(v), Some(a)) => (v.op_id == a.op_id && v.error_type == a.error_type).to_string(),
            _ => String::new(),
        };
        let cells = [
            c.query_id.clone(),
            c.query.clone(),
            v.map(|v| v.error_type.as_str().to_owned())
                .unwrap_or_default(),
            v.map(|v| v.op_id.clone()).unwrap_or_default(),
            v.map(|v| op_name(t, &v.op_id)).unwrap_or_default(),
            v.map(|v| v.reason.clone()).unwrap_or_default(),
            ann.as_ref()
                .map(|a| a.error_type.as_str().to_owned())
                .unwrap_or_default(),
            ann.map(|a| a.op_id).unwrap_or_default(),
            agrees,
        ];
        let line: Vec<String> = cells.iter().map(|s| csv_field(s)).collect();
        let _ = write!(out, "{}\r\n", line.join(","));
    }
    out
}

/// The labels as MemTraceBench annotation records (`{"annotations": [...]}`), in case order;
/// cases without a label are left out. Loads back as an annotation file.
///
/// # Complexity
/// O(cases).
pub fn annotations_json(t: &Trace, labels: &Labels) -> Value {
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
                "final_error_type": l.error_type.as_str(),
                "final_op_id": l.op_id,
            }))
        })
        .collect();
    json!({ "annotations": records })
}

/// The verdicts as labels: each attribution's op and type (for [`annotations_json`]).
pub fn verdict_labels(verdicts: &Verdicts) -> Labels {
    verdicts
        .iter()
        .filter_map(|(k, v)| {
            let a = v.as_ref().ok()?;
            Some((
                k.clone(),
                Annotation {
                    op_id: a.op_id.clone(),
                    error_type: a.error_type,
                },
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::csv_field;

    #[test]
    fn csv_quotes_commas_quotes_and_newlines() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\"\nthen"), "\"say \"\"hi\"\"\nthen\"");
    }

    #[test]
    fn csv_neutralizes_formulas() {
        for bad in ["=HYPERLINK(\"x\")", "+1", "-2+3", "@SUM(A1)", "\tx", "\rx"] {
            let f = csv_field(bad);
            assert!(f.starts_with("\"'"), "{bad:?} -> {f:?}");
        }
        assert_eq!(csv_field("=1,\"2\""), "\"'=1,\"\"2\"\"\"");
        assert_eq!(csv_field("a-b"), "a-b");
    }
}
