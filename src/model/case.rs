//! Failure cases: questions the memory system answered wrongly, with their annotation if any.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::{pyrepr, OpIx, Trace, VarIx};
use crate::format::FormatError;

/// Why a question failed. The first five are memory errors; the last two are labels
/// MemTraceBench uses for cases that evaluations filter out.
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Annotation {
    pub op_id: String,
    pub error_type: ErrorType,
}

/// One failed question.
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

/// Annotated cases first (in file order), then judged-zero questions with no annotation.
pub(super) fn find_cases(t: &Trace) -> Result<Vec<FailureCase>, FormatError> {
    let mut cases = Vec::new();
    let all_judges = judges(t);
    for (i, a) in t.annotations.iter().flatten().enumerate() {
        let error_type =
            a.final_error_type
                .parse::<ErrorType>()
                .map_err(|msg| FormatError::Field {
                    path: format!("data.annotations[{i}].final_error_type"),
                    message: msg,
                })?;
        if t.var_by_id(&a.query_id).is_none() {
            return Err(FormatError::Dangling {
                path: format!("data.annotations[{i}].query_id"),
                id: a.query_id.clone(),
                kind: "node".into(),
            });
        }
        if !a.final_op_id.is_empty() && t.op_by_id(&a.final_op_id).is_none() {
            return Err(FormatError::Dangling {
                path: format!("data.annotations[{i}].final_op_id"),
                id: a.final_op_id.clone(),
                kind: "operation".into(),
            });
        }
        let judged = t
            .var_by_id(&a.query_id)
            .and_then(|q| all_judges.iter().find(|j| j.query == Some(q)));
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
            judge_score: judged.and_then(|j| j.score),
            annotation: Some(Annotation {
                op_id: a.final_op_id.clone(),
                error_type,
            }),
            answer_op: answer_op.or_else(|| judged.and_then(|j| j.answer_op.clone())),
            judge_op: judged.map(|j| t.op(j.op).op_id.clone()),
        });
    }
    for j in &all_judges {
        if j.score != Some(0.0) {
            continue;
        }
        let Some(q) = j.query else { continue };
        let query_id = t.var(q).full_node_id.clone();
        if cases.iter().any(|c| c.query_id == query_id) {
            continue;
        }
        let text = |v: Option<VarIx>| {
            v.map(|v| pyrepr::display(&t.var(v).value))
                .unwrap_or_default()
        };
        let gold = j
            .gold
            .map(|g| answers_of(&pyrepr::to_json(&t.var(g).value)))
            .unwrap_or_default();
        cases.push(FailureCase {
            query_id,
            query: text(Some(q)),
            golden_answers: gold,
            prediction: text(j.prediction),
            prediction_id: j.prediction.map(|p| t.var(p).full_node_id.clone()),
            evidence_ids: evidence_of(t, q),
            judge_score: j.score,
            annotation: None,
            answer_op: j.answer_op.clone(),
            judge_op: Some(t.op(j.op).op_id.clone()),
        });
    }
    Ok(cases)
}

/// A judging op and the variables around it.
struct Judged {
    op: OpIx,
    score: Option<f64>,
    query: Option<VarIx>,
    prediction: Option<VarIx>,
    gold: Option<VarIx>,
    answer_op: Option<String>,
}

/// An op that produces a `judge_score`-like variable (class or name containing "score")
/// and reads a query. Names are hints: MemBase writes `llm-judge` / `judge_score`.
fn judges(t: &Trace) -> Vec<Judged> {
    let mut out = Vec::new();
    for (o, op) in t.ops.iter().enumerate() {
        let ox = OpIx(o as u32);
        let score_var = t.flow.op_outputs[o]
            .iter()
            .copied()
            .find(|&v| class_or_name(t, v).contains("score"));
        let judge_like = op.op_name.contains("judge") || op.category == "evaluation";
        let (Some(score_var), true) = (score_var, judge_like) else {
            continue;
        };
        let inputs = &t.flow.op_inputs[o];
        let find = |needle: &str| {
            inputs
                .iter()
                .copied()
                .find(|&v| class_or_name(t, v).contains(needle))
        };
        let prediction = find("prediction").or_else(|| find("answer"));
        let answer_op = prediction
            .and_then(|p| answer_op_of(t, p, find("query")))
            .map(|a| t.op(a).op_id.clone());
        out.push(Judged {
            op: ox,
            score: pyrepr::display(&t.var(score_var).value)
                .trim()
                .parse::<f64>()
                .ok(),
            query: find("query"),
            prediction,
            gold: find("golden"),
            answer_op,
        });
    }
    out
}

/// The producer of a prediction that read the query (identical predictions of two questions are
/// one variable with two producers), else its first producer.
fn answer_op_of(t: &Trace, prediction: VarIx, query: Option<VarIx>) -> Option<OpIx> {
    let producers = &t.flow.producers[prediction.get()];
    query
        .and_then(|q| {
            producers
                .iter()
                .copied()
                .find(|&o| t.flow.op_inputs[o.get()].contains(&q))
        })
        .or_else(|| producers.first().copied())
}

fn class_or_name(t: &Trace, v: VarIx) -> String {
    let r = t.var(v);
    r.class_name.clone().unwrap_or_else(|| r.name.clone())
}

/// Gold answers from a JSON value: a list of strings, or one string or number.
fn answers_of(v: &serde_json::Value) -> Vec<String> {
    match v {
        serde_json::Value::Array(a) => a.iter().map(scalar_text).collect(),
        serde_json::Value::Null => Vec::new(),
        other => vec![scalar_text(other)],
    }
}

fn scalar_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Evidence message ids from the query's metadata (`evidence`: message names), resolved to the
/// latest version of each named variable.
fn evidence_of(t: &Trace, q: VarIx) -> Vec<String> {
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
