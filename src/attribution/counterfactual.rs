//! The counterfactual check of a verdict, as data: correct the blamed op's output, replay what
//! lies downstream of it up to the answer, and see whether the answer is rescued. Shown beside
//! the verdict as "verified / refuted / not replayable" ([`Outcome`]; a [`crate::session::Verdict`]
//! keeps it). The check itself re-runs the reference memory system's answer step and pipeline,
//! so it lives with that system (`memtrace_memsys::counterfactual`).

use serde::{Deserialize, Serialize};

use super::text::content_tokens;
use crate::algo::answer_op;
use crate::model::{FailureCase, OpIx, Trace};
use crate::provider::Usage;

/// The result of a counterfactual check.
#[cfg_attr(feature = "ts", derive(tsify_next::Tsify))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Correcting the op rescues the answer.
    Verified,
    /// Correcting the op does not rescue the answer.
    Refuted,
    /// The downstream of the op cannot be replayed from what the trace recorded.
    NotReplayable,
}

impl Outcome {
    /// `verified`, `refuted` or `not replayable`.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Verified => "verified",
            Outcome::Refuted => "refuted",
            Outcome::NotReplayable => "not replayable",
        }
    }
}

/// What the check found.
#[cfg_attr(feature = "ts", derive(tsify_next::Tsify))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    pub outcome: Outcome,
    /// Why, in one sentence.
    pub detail: String,
    /// The replayed answer, when a replay ran.
    pub replayed_answer: Option<String>,
    pub usage: Usage,
}

impl Check {
    /// A check with `outcome` and its reason, no replayed answer and no usage yet.
    pub fn new(outcome: Outcome, detail: impl Into<String>) -> Check {
        Check {
            outcome,
            detail: detail.into(),
            replayed_answer: None,
            usage: Usage::default(),
        }
    }
}

/// The reply holds most content words of one gold answer.
pub fn answers_gold(reply: &str, gold: &[String]) -> bool {
    let have = content_tokens(reply);
    gold.iter().any(|g| {
        let want = content_tokens(g);
        !want.is_empty() && want.iter().filter(|w| have.contains(*w)).count() * 2 > want.len()
    })
}

/// The op the check would replay from (the answer op of the case).
pub fn replay_root(trace: &Trace, case: &FailureCase) -> Option<OpIx> {
    answer_op(trace, case)
}
