//! Failure cases: questions the memory system answered wrongly, with their annotation if any.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::judged::{answer_op_of, answers_of};
use super::GraphError;
use super::{AnnotationRecord, Trace, VarIx};

/// Why a question failed. The first five are memory errors; the last two are labels
/// MemTraceBench uses for cases that evaluations filter out.
#[cfg_attr(feature = "ts", derive(tsify_next::Tsify))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum ErrorType {
    ExtractionError,
    UpdateError,
    DeletionError,
    RetrievalError,
    ResponseError,
    AnnotationError,
    #[serde(rename = "LLMAsAJudgeError")]
    LlmAsAJudgeError,
}

impl ErrorType {
    /// The five memory-error labels, in pipeline order.
    pub const MEMORY: [ErrorType; 5] = [
        ErrorType::ExtractionError,
        ErrorType::UpdateError,
        ErrorType::DeletionError,
        ErrorType::RetrievalError,
        ErrorType::ResponseError,
    ];

    /// The label as written in files.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorType::ExtractionError => "ExtractionError",
            ErrorType::UpdateError => "UpdateError",
            ErrorType::DeletionError => "DeletionError",
            ErrorType::RetrievalError => "RetrievalError",
            ErrorType::ResponseError => "ResponseError",
            ErrorType::AnnotationError => "AnnotationError",
            ErrorType::LlmAsAJudgeError => "LLMAsAJudgeError",
        }
    }

    /// True for the five memory errors.
    pub fn is_memory_error(self) -> bool {
        Self::MEMORY.contains(&self)
    }
}

impl fmt::Display for ErrorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ErrorType {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let all = [
            ErrorType::ExtractionError,
            ErrorType::UpdateError,
            ErrorType::DeletionError,
            ErrorType::RetrievalError,
            ErrorType::ResponseError,
            ErrorType::AnnotationError,
            ErrorType::LlmAsAJudgeError,
        ];
        all.into_iter().find(|t| t.as_str() == s).ok_or_else(|| {
            format!(
                "unknown error type {s:?}; expected one of {}",
                all.map(ErrorType::as_str).join(", ")
            )
        })
    }
}

/// The ground truth of a failed question: the single decisive op and its error type.
#[cfg_attr(feature = "ts", derive(tsify_next::Tsify))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Annotation {
    pub op_id: String,
    pub error_type: ErrorType,
}

/// One failed question.
#[cfg_attr(feature = "ts", derive(tsify_next::Tsify))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FailureCase {
    /// `full_node_id` of the query variable: the case's id.
    pub query_id: String,
    pub query: String,
    pub golden_answers: Vec<String>,
    pub prediction: String,
    pub prediction_id: Option<String>,
    /// Message `full_node_id`s that hold the gold evidence (may be empty).
    pub evidence_ids: Vec<String>,
    pub judge_score: Option<f64>,
    pub annotation: Option<Annotation>,
    /// The op that produced the prediction (the answer op), when found.
    pub answer_op: Option<String>,
    /// The judging op, when found.
    pub judge_op: Option<String>,
}

/// Checks the annotations (MemTraceBench) as [`annotated`] reads them: a known error type, ids
/// that name a node and an operation of the trace. Cheaper than [`annotated`], which also
/// finds each case's answer op.
pub(super) fn check_annotations(t: &Trace) -> Result<(), GraphError> {
    for (i, a) in t.annotations.iter().flatten().enumerate() {
        checked_type(t, i, a)?;
    }
    Ok(())
}

/// The error type of the `i`th annotation `a`, once its ids are checked.
fn checked_type(t: &Trace, i: usize, a: &AnnotationRecord) -> Result<ErrorType, GraphError> {
    let error_type = a
        .final_error_type
        .parse::<ErrorType>()
        .map_err(|msg| GraphError::Field {
            path: format!("data.annotations[{i}].final_error_type"),
            message: msg,
        })?;
    if t.var_by_id(&a.query_id).is_none() {
        return Err(GraphError::Dangling {
            path: format!("data.annotations[{i}].query_id"),
            id: a.query_id.clone(),
            kind: "node".into(),
        });
    }
    if !a.final_op_id.is_empty() && t.op_by_id(&a.final_op_id).is_none() {
        return Err(GraphError::Dangling {
            path: format!("data.annotations[{i}].final_op_id"),
            id: a.final_op_id.clone(),
            kind: "operation".into(),
        });
    }
    Ok(error_type)
}

/// The annotated cases (MemTraceBench), in file order; judge fields are filled by the caller.
pub(super) fn annotated(t: &Trace) -> Result<Vec<FailureCase>, GraphError> {
    let mut cases = Vec::new();
    for (i, a) in t.annotations.iter().flatten().enumerate() {
        let error_type = checked_type(t, i, a)?;
        let prediction_id = a.prediction_id.clone();
        let answer_op = prediction_id
            .as_deref()
            .and_then(|p| t.var_by_id(p))
            .and_then(|p| answer_op_of(t, p, t.var_by_id(&a.query_id)))
            .map(|o| t.op(o).op_id.clone());
        cases.push(FailureCase {
            query_id: a.query_id.clone(),
            query: a.query.clone(),
            golden_answers: answers_of(&a.golden_answers),
            prediction: match &a.prediction {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Null => String::new(),
                other => other.to_string(),
            },
            prediction_id,
            evidence_ids: a.source_evidence_ids.clone(),
            judge_score: None,
            annotation: Some(Annotation {
                op_id: a.final_op_id.clone(),
                error_type,
            }),
            answer_op,
            judge_op: None,
        });
    }
    Ok(cases)
}

/// Evidence message ids from the query's metadata (`evidence`: message names), resolved to the
/// latest version of each named variable.
pub(super) fn evidence_of(t: &Trace, q: VarIx) -> Vec<String> {
    let Some(list) = t.var(q).metadata.get("evidence").and_then(|e| e.as_array()) else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|e| e.as_str())
        .filter_map(|name| {
            let exact = t.flow.versions.get(name);
            let by_suffix = || {
                // LoCoMo evidence names are dia ids ("D1:3"); MemBase names messages "U1:D1:3".
                t.vars
                    .iter()
                    .position(|v| v.category == "message" && v.name.ends_with(&format!(":{name}")))
                    .map(|i| vec![VarIx(i as u32)])
            };
            let list = exact.cloned().or_else(by_suffix)?;
            list.last().map(|&v| t.var(v).full_node_id.clone())
        })
        .collect()
}
