//! One verdict type for every host: the core [`Attribution`] a method gave, plus what it cost,
//! the steps it took and the counterfactual check; and a person's [`Label`].

use serde::{Deserialize, Serialize};

use crate::attribution::agent::AgentRun;
use crate::attribution::counterfactual::Outcome;
use crate::attribution::transcript::Step;
use crate::attribution::Attribution;
use crate::model::ErrorType;
use crate::provider::{Price, Usage};

/// A verdict on a failed question, from an attributor (or imported).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub error_type: ErrorType,
    pub op_id: String,
    pub reason: String,
    /// 0..=1.
    #[serde(default)]
    pub confidence: f64,
    /// The attributor that gave it (`infoflow`, …).
    #[serde(default)]
    pub method: String,
    /// Node and op ids the verdict rests on, in information-flow order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence_path: Vec<String>,
    /// What an LLM method paid for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<VerdictCost>,
    /// An LLM method's steps.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub transcript: Vec<Step>,
    /// The counterfactual check, once run.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "outcome_as_saved"
    )]
    pub counterfactual: Option<Outcome>,
}

/// An outcome as saved: its name (`not-replayable`) or the text shown (`not replayable`, what
/// projects saved by the page before this type held).
fn outcome_as_saved<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Outcome>, D::Error> {
    let Some(text) = Option::<String>::deserialize(d)? else {
        return Ok(None);
    };
    [Outcome::Verified, Outcome::Refuted, Outcome::NotReplayable]
        .into_iter()
        .find(|o| o.as_str() == text || o.as_str().replace(' ', "-") == text)
        .map(Some)
        .ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown counterfactual outcome {text:?}; expected verified, refuted or not-replayable"
            ))
        })
}

impl From<&Attribution> for Verdict {
    /// The verdict an attributor gave, before cost, transcript and counterfactual are known.
    fn from(a: &Attribution) -> Self {
        Verdict {
            error_type: a.error_type,
            op_id: a.op_id.clone(),
            reason: a.reason.clone(),
            confidence: a.confidence,
            method: a.method.clone(),
            evidence_path: a.evidence_path.clone(),
            cost: None,
            transcript: Vec::new(),
            counterfactual: None,
        }
    }
}

impl Verdict {
    /// The verdict an LLM method gave in `run`, with what the run cost at `price` and its steps.
    pub fn of_run(a: &Attribution, run: &AgentRun, price: Price) -> Self {
        Verdict {
            cost: Some(VerdictCost::of(run.calls, run.usage, price)),
            transcript: run.transcript.clone(),
            ..Verdict::from(a)
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

/// What `usage` costs at `price`, in US dollars: the one cost formula of every host.
pub fn cost_usd(price: Price, usage: Usage) -> f64 {
    #[allow(clippy::cast_precision_loss)] // token counts are far below 2^52
    let (i, o) = (usage.input_tokens as f64, usage.output_tokens as f64);
    (i * price.input_usd_per_mtok + o * price.output_usd_per_mtok) / 1e6
}

impl VerdictCost {
    /// The cost of `calls` calls that used `usage` in all, at `price`.
    pub fn of(calls: u32, usage: Usage, price: Price) -> Self {
        VerdictCost {
            llm_calls: calls,
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
            cost_usd: cost_usd(price, usage),
        }
    }
}

/// A person's label on a failed question: the verdict confirmed or corrected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Label {
    pub error_type: ErrorType,
    pub op_id: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cost_is_tokens_times_price_per_million() {
        let price = Price {
            input_usd_per_mtok: 2.0,
            output_usd_per_mtok: 8.0,
        };
        let usage = Usage {
            input_tokens: 500_000,
            output_tokens: 250_000,
        };
        assert!((cost_usd(price, usage) - 3.0).abs() < 1e-12);
        let c = VerdictCost::of(4, usage, price);
        assert_eq!(
            (c.llm_calls, c.input_tokens, c.output_tokens),
            (4, 500_000, 250_000)
        );
    }

    #[test]
    fn a_verdict_with_an_unknown_error_type_is_a_clear_error() {
        let text = r#"{"error_type": "Oops", "op_id": "o", "reason": "r"}"#;
        let err = serde_json::from_str::<Verdict>(text)
            .unwrap_err()
            .to_string();
        assert!(err.contains("Oops"), "{err}");
        let ok: Verdict = serde_json::from_str(
            r#"{"error_type": "UpdateError", "op_id": "o", "reason": "r", "counterfactual": "not-replayable"}"#,
        )
        .unwrap();
        assert_eq!(ok.error_type, ErrorType::UpdateError);
        assert_eq!(ok.counterfactual, Some(Outcome::NotReplayable));
        let shown: Verdict = serde_json::from_str(
            r#"{"error_type": "UpdateError", "op_id": "o", "reason": "r", "counterfactual": "not replayable"}"#,
        )
        .unwrap();
        assert_eq!(shown.counterfactual, Some(Outcome::NotReplayable));
        let back: Verdict = serde_json::from_str(&serde_json::to_string(&shown).unwrap()).unwrap();
        assert_eq!(back, shown);
        let bad = r#"{"error_type": "UpdateError", "op_id": "o", "reason": "r", "counterfactual": "maybe"}"#;
        assert!(serde_json::from_str::<Verdict>(bad).is_err());
    }
}
