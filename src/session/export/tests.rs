use super::*;
use std::collections::BTreeMap;

use crate::attribution::InfoFlow;
use crate::model::ErrorType;

const FIXTURE: &[u8] =
    include_bytes!("../../../tests/fixtures/smartcomment/locomo/locomo_locomo-1.json");

fn trace() -> Trace {
    crate::load(FIXTURE, crate::LoadOptions::default())
        .unwrap()
        .trace
}

/// Info-flow verdicts on every case, as the panel's "Attribute all" stores them.
fn verdicts(t: &Trace) -> BTreeMap<String, Verdict> {
    t.cases
        .iter()
        .filter_map(|c| {
            let a = InfoFlow::default().attribute(t, c).ok()?;
            Some((c.query_id.clone(), Verdict::from(&a)))
        })
        .collect()
}

#[test]
fn json_export_is_a_scored_run_file() {
    let t = trace();
    let v = verdicts(&t);
    assert!(!v.is_empty());
    let out = verdicts_json("f.json", &t, &v, &BTreeMap::new());
    let results = out["results"].as_array().unwrap();
    assert_eq!(results.len(), t.cases.len());
    let agree = t
        .cases
        .iter()
        .filter(|c| {
            let (Some(a), Some(v)) = (&c.annotation, v.get(&c.query_id)) else {
                return false;
            };
            a.op_id == v.op_id
        })
        .count();
    let flagged = results
        .iter()
        .filter(|r| r["is_operation_identifier_correct"] == true)
        .count();
    assert_eq!(flagged, agree);
    assert_eq!(out["sampled_graph_paths"][0], "f.json");
    assert_eq!(results[0]["error_attribution_result"]["method"], "infoflow");
}

#[test]
fn a_label_overrides_the_annotation_in_scoring_and_csv() {
    let t = trace();
    let v = verdicts(&t);
    let c = &t.cases[0];
    let mine = &v[&c.query_id];
    // Label the verdict's own op with another type: the op agrees, the type does not.
    let other = if mine.error_type == ErrorType::UpdateError {
        ErrorType::DeletionError
    } else {
        ErrorType::UpdateError
    };
    let labels: BTreeMap<String, Label> = [(
        c.query_id.clone(),
        Label {
            error_type: other,
            op_id: mine.op_id.clone(),
        },
    )]
    .into();
    let out = verdicts_json("f.json", &t, &v, &labels);
    assert_eq!(out["results"][0]["final_error_type"], other.as_str());
    assert_eq!(out["results"][0]["is_operation_identifier_correct"], true);
    assert_eq!(out["results"][0]["is_error_type_correct"], false);
    let csv = verdicts_csv(&t, &v, &labels);
    let lines: Vec<&str> = csv.split("\r\n").filter(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), t.cases.len() + 1);
    assert!(lines[0].starts_with("case_id,query,verdict_type"));
    assert!(lines[1].starts_with(&c.query_id), "{}", lines[1]);
    assert!(
        lines[1].ends_with(&format!(",{},{},false", other.as_str(), mine.op_id)),
        "{}",
        lines[1]
    );
}

#[test]
fn labels_export_as_annotations_that_load_back() {
    let t = trace();
    let c = &t.cases[1];
    let op = t.ops[0].op_id.clone();
    let labels: BTreeMap<String, Label> = [(
        c.query_id.clone(),
        Label {
            error_type: ErrorType::RetrievalError,
            op_id: op.clone(),
        },
    )]
    .into();
    let out = labels_json(&t, &labels);
    let list = out["annotations"].as_array().unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["query"], c.query.as_str());
    let bytes = serde_json::to_vec(&out).unwrap();
    assert!(crate::format::sidecar::is_annotation_file(&bytes));
    let anns = crate::format::sidecar::parse(&bytes).unwrap();
    let merged = crate::format::sidecar::merged(&t, anns).unwrap();
    let back = merged
        .cases
        .iter()
        .find(|m| m.query_id == c.query_id)
        .and_then(|m| m.annotation.clone())
        .unwrap();
    assert_eq!(back.op_id, op);
    assert_eq!(back.error_type.as_str(), "RetrievalError");
}

#[test]
fn a_projects_verdicts_are_the_rows_the_cli_prints() {
    let t = trace();
    let v = verdicts(&t);
    let rows = verdict_rows(&t, &v);
    assert_eq!(rows.len(), v.len());
    for (row, c) in rows.iter().zip(&t.cases) {
        let a = InfoFlow::default().attribute(&t, c).unwrap();
        assert_eq!(*row, VerdictRow::new(&t, c, Ok(a), None));
    }
    let text = verdict_rows_jsonl(&t, &v);
    assert_eq!(text.lines().count(), rows.len());
    assert!(text.lines().all(|l| l.starts_with("{\"case_id\"")));
}
