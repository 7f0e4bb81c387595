//! What each operation does in the memory pipeline. Roles come from the graph's structure first
//! (who reads the query, who writes the prediction, who writes the versions retrieval reads);
//! names and categories are hints, editable for systems that name things differently.

use serde::{Deserialize, Serialize};

use crate::model::{ErrorType, OpRecord};

/// The stage of the pipeline an operation belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OpRole {
    Extraction,
    Update,
    Deletion,
    Retrieval,
    Response,
    Other,
}

impl OpRole {
    /// The error type a fault in this role is.
    pub fn error_type(self) -> Option<ErrorType> {
        match self {
            OpRole::Extraction => Some(ErrorType::ExtractionError),
            OpRole::Update => Some(ErrorType::UpdateError),
            OpRole::Deletion => Some(ErrorType::DeletionError),
            OpRole::Retrieval => Some(ErrorType::RetrievalError),
            OpRole::Response => Some(ErrorType::ResponseError),
            OpRole::Other => None,
        }
    }
}

/// Substrings of an op's category or name that hint at its role, checked in this order.
/// The defaults fit Mem0 / MemBase traces; users remap them for other systems.
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
            deletion: v(&["delet", "remove", "forget", "evict"]),
            retrieval: v(&["retriev", "search", "recall", "lookup", "rerank"]),
            response: v(&[
                "question-answering",
                "answer",
                "respond",
                "response",
                "generate_reply",
            ]),
            extraction: v(&["extract", "summar", "distill", "ingest"]),
            update: v(&[
                "update", "upsert", "add", "write", "store", "insert", "merge", "mutation",
            ]),
            judge: v(&["judge", "grade", "score", "eval_"]),
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
        if has(&self.judge) {
            return Some(OpRole::Other);
        }
        [
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
