//! A benchmark file as OTLP JSON Lines plus its annotations sidecar: the run's spans are
//! exported as an instrumented app would emit them, imported back with memtrace's OTLP reader,
//! and each annotation names what that import produced — the faulty op as `op-<spanId>` of
//! the span that did the faulty work, the question, prediction and evidence messages as the
//! imported variables holding their text.

use serde_json::json;

use super::fault::Fault;
use super::locomo::{Conversation, Question};
use super::{MemsysError, QuestionResult, Run};
use memtrace::format::{load, LoadOptions};
use memtrace::model::{pyrepr, Trace};

/// What [`export`] makes: the JSON Lines, the sidecar, and `(op id, query id)` per case.
pub type Exported = (Vec<u8>, Vec<u8>, Vec<(String, String)>);

/// One annotated failure: the fault, the op that carried it, the question and its result.
pub struct Picked<'a> {
    pub fault: &'a Fault,
    pub op_id: &'a str,
    pub question: &'a Question,
    pub result: &'a QuestionResult,
}

fn text_of(t: &Trace, id: &str) -> String {
    t.var_by_id(id)
        .map(|v| pyrepr::display(&t.var(v).value))
        .unwrap_or_default()
}

/// The first variable whose text is `text`.
fn var_with_text(t: &Trace, text: &str) -> Option<String> {
    t.vars
        .iter()
        .find(|v| pyrepr::display(&v.value) == text)
        .map(|v| v.full_node_id.clone())
}

/// A variable written by `op_id` whose text is `text`.
fn written_by(t: &Trace, op_id: &str, text: &str) -> Option<String> {
    t.edges
        .iter()
        .filter(|e| e.op_id == op_id)
        .map(|e| e.target_full_node_id.as_str())
        .find(|id| text_of(t, id) == text)
        .map(str::to_owned)
}

/// The JSON Lines, the sidecar and `(op id, query id)` per case, for the recorded `run`.
///
/// # Errors
/// [`MemsysError::Input`] when the export does not import, or a fault's span or question has
/// no counterpart in the import.
pub fn export(
    conv: &Conversation,
    run: &Run,
    picked: &[Picked<'_>],
    service: &str,
    name: &str,
) -> Result<Exported, MemsysError> {
    let bytes = run.spans.to_jsonl(service);
    let trace = load(&bytes, LoadOptions::default())
        .map_err(|e| MemsysError::Input(format!("the OTLP export {name} does not import: {e}")))?
        .trace;
    let mut annotations = Vec::new();
    let mut cases = Vec::new();
    for p in picked {
        let missing = |what: &str| {
            MemsysError::Input(format!(
                "{name}: the OTLP import has no {what} for {}",
                p.question.id
            ))
        };
        let span = run
            .spans
            .span_of(p.op_id)
            .ok_or_else(|| missing("span of the faulty op"))?;
        let op_id = format!("op-{span}");
        if trace.op_by_id(&op_id).is_none() {
            return Err(missing("op of the faulty span"));
        }
        let query_id =
            var_with_text(&trace, &p.question.text).ok_or_else(|| missing("question variable"))?;
        let prediction_id = written_by(
            &trace,
            &format!("op-{}", p.result.answer_span),
            &p.result.prediction,
        );
        let evidence: Vec<String> = p
            .question
            .evidence
            .iter()
            .filter_map(|d| {
                conv.sessions
                    .iter()
                    .flat_map(|s| &s.turns)
                    .find(|t| &t.dia_id == d)
            })
            .filter_map(|turn| {
                trace
                    .vars
                    .iter()
                    .find(|v| {
                        v.category == "message" && pyrepr::display(&v.value).contains(&turn.text)
                    })
                    .map(|v| v.full_node_id.clone())
            })
            .collect();
        annotations.push(json!({
            "query_id": query_id,
            "query": p.question.text,
            "golden_answers": [p.question.answer],
            "prediction": p.result.prediction,
            "prediction_id": prediction_id,
            "source_evidence_ids": evidence,
            "final_error_type": p.fault.error_type().as_str(),
            "final_op_id": op_id,
        }));
        cases.push((op_id, query_id));
    }
    let sidecar = json!({"trace_file": name, "annotations": annotations});
    let mut check = trace;
    memtrace::format::sidecar::attach(&mut check, sidecar.to_string().as_bytes())
        .map_err(|e| MemsysError::Input(format!("the sidecar of {name} does not resolve: {e}")))?;
    let pretty = serde_json::to_vec_pretty(&sidecar).unwrap_or_default();
    Ok((bytes, pretty, cases))
}
