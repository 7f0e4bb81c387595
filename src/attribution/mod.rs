//! Attribution: which operation broke a failed answer, and how.
//!
//! [`infoflow::InfoFlow`] follows the evidence through the graph with no LLM; the LLM methods
//! are [`graphtrace`] (a frontier walk over the graph), [`obstrace`] (the flat log) and the
//! Who&When [`baselines`], all over the shared tool loop in [`agent`]. Every method returns the
//! same [`Attribution`] (see [`methods`]), exported as MemTrace-compatible result records.
//! [`counterfactual`] holds what a check of a verdict by replay finds; the check, the replay of
//! the reference memory system's pipeline and its decisive sets live with that system
//! (`memtrace_memsys`).

pub mod agent;
pub mod baselines;
pub mod counterfactual;
pub mod eval;
pub mod graphtrace;
pub mod infoflow;
pub mod methods;
pub mod obstrace;
pub mod prompts;
pub mod results;
pub mod roles;
pub mod text;
pub mod transcript;
pub mod values;

use serde::{Deserialize, Serialize};

use crate::model::ErrorType;

pub use baselines::{attribute_baseline, attribute_baseline_with, Baseline};
pub use graphtrace::GraphTrace;
pub use infoflow::InfoFlow;
pub use methods::{
    attribute_case, attribute_case_run, attribute_case_with, Method, MethodSettings,
};
pub use obstrace::ObsTrace;
pub use roles::{Assigned, Basis, NameRole, OpRole, RoleConfig, RoleHints, Roles, RolesInference};

/// What an attribution cost. Wall time is filled in by the caller (the core has no clock).
#[cfg_attr(feature = "ts", derive(tsify_next::Tsify))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Cost {
    pub llm_calls: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub wall_ms: u64,
    /// Some reply had no token counts: the tokens are partly estimated (4 characters a token).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tokens_estimated: bool,
}

/// The verdict on one failed case.
#[cfg_attr(feature = "ts", derive(tsify_next::Tsify))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attribution {
    /// The case's query `full_node_id`.
    pub case_id: String,
    /// The earliest decisive faulty operation.
    pub op_id: String,
    pub op_name: String,
    pub error_type: ErrorType,
    pub reason: String,
    /// Node and op ids the verdict rests on, in information-flow order.
    pub evidence_path: Vec<String>,
    /// 0..=1.
    pub confidence: f64,
    pub cost: Cost,
    /// `infoflow`, `graphtrace`, `obstrace`, `all-at-once`, `step-by-step`, `binary-search`.
    pub method: String,
}

/// Verdicts at or above this confidence are settled by the method; below it, a second opinion
/// (an LLM method) is worth its cost. Info-flow's confident verdicts are right ≥ 90 % of the time
/// on the lab's held-out traces without evidence ids (`tests/lab_corpus.rs`), 80 % on its held-out
/// voices (`tests/lab_voices.rs`).
pub const CONFIDENT: f64 = 0.8;

impl Attribution {
    /// Whether the verdict is at least [`CONFIDENT`].
    #[must_use]
    pub fn is_confident(&self) -> bool {
        self.confidence >= CONFIDENT
    }
}

/// Why a case could not be attributed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
pub enum AttributionError {
    #[error("case {case_id}: {reason}")]
    Unresolvable { case_id: String, reason: String },
    /// The provider failed a call of the `purpose` step (after its own retries).
    #[error("case {case_id}: {purpose}: {error}")]
    Provider {
        case_id: String,
        purpose: String,
        error: crate::provider::ProviderError,
    },
}

impl AttributionError {
    /// Wraps a provider error of `case_id`'s `purpose` step (for `map_err`).
    pub fn provider<'a>(
        case_id: &'a str,
        purpose: &'a str,
    ) -> impl FnOnce(crate::provider::ProviderError) -> AttributionError + 'a {
        move |error| AttributionError::Provider {
            case_id: case_id.to_owned(),
            purpose: purpose.to_owned(),
            error,
        }
    }

    /// True when running the case again cannot help (see [`ProviderError::is_permanent`]).
    ///
    /// [`ProviderError::is_permanent`]: crate::provider::ProviderError::is_permanent
    pub fn is_permanent(&self) -> bool {
        matches!(self, AttributionError::Provider { error, .. } if error.is_permanent())
    }
}
