//! A verdict on a failed question and a person's label on it: what the failures list shows and
//! what a project saves.

use memtrace::attribution::transcript::Step;
use serde::{Deserialize, Serialize};

/// A verdict on a failed question, from an attributor (or imported), set by the attribution
/// panel; the failures list shows it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Verdict {
    pub error_type: String,
    pub op_id: String,
    pub reason: String,
    /// 0..=1.
    #[serde(default)]
    pub confidence: f64,
    /// The attributor that gave it (`infoflow`, …).
    #[serde(default)]
    pub method: String,
    /// What an LLM method paid for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<VerdictCost>,
    /// An LLM method's steps.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub transcript: Vec<Step>,
    /// The counterfactual check, once run: `verified`, `refuted` or `not replayable`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counterfactual: Option<String>,
}

impl From<&memtrace::attribution::Attribution> for Verdict {
    /// The verdict an attributor gave, before cost, transcript and counterfactual are known.
    fn from(a: &memtrace::attribution::Attribution) -> Self {
        Verdict {
            error_type: a.error_type.as_str().to_owned(),
            op_id: a.op_id.clone(),
            reason: a.reason.clone(),
            confidence: a.confidence,
            method: a.method.clone(),
            ..Verdict::default()
        }
    }
}

/// The calls, tokens and dollars a verdict cost.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct VerdictCost {
    pub llm_calls: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: f64,
}

/// A person's label on a failed question: the verdict confirmed or corrected. Exported as a
/// MemTraceBench annotation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Label {
    pub error_type: String,
    pub op_id: String,
}
