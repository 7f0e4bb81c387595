//! Before running: how many calls, tokens and dollars a step will take. Feedback prompts are
//! built exactly and measured; aggregation and update prompts are sized from their parts.
//! Tokens are estimated as characters / 4.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::history::History;
use super::targets::Failure;
use super::{feedback, OptimizeConfig};
use crate::provider::{ChatRequest, PriceTable, Usage};

/// Output tokens assumed per feedback / summary reply.
pub const REPLY_TOKENS: u64 = 300;

/// A prediction of one step's cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub feedback_calls: u64,
    pub aggregate_calls: u64,
    /// Update calls with no rejection; each rejection adds one (up to `update_retries`).
    pub update_calls: u64,
    pub max_calls: u64,
    pub usage: Usage,
    /// `None` when the model has no price in the table.
    pub cost_usd: Option<f64>,
}

fn chars(req: &ChatRequest) -> u64 {
    req.messages
        .iter()
        .map(|m| m.content.chars().count() as u64)
        .sum()
}

/// Estimates a step over `failures` for `values`, priced for `model`.
///
/// # Complexity
/// O(total size of the feedback prompts).
pub fn estimate(
    values: &BTreeMap<String, String>,
    failures: &[Failure],
    history: &History,
    cfg: &OptimizeConfig,
    prices: &PriceTable,
    model: &str,
) -> Estimate {
    let mut per_target: BTreeMap<&str, u64> = BTreeMap::new();
    let mut input_chars = 0u64;
    let mut feedback_calls = 0u64;
    for f in failures {
        let Some(value) = values.get(&f.target) else {
            continue;
        };
        input_chars += chars(&feedback::build(value, f, &history.of(&f.target)));
        feedback_calls += 1;
        *per_target.entry(f.target.as_str()).or_default() += 1;
    }
    let batch = cfg.batch_size.max(1) as u64;
    let mut aggregate_calls = 0u64;
    let mut update_chars = 0u64;
    for (target, n) in &per_target {
        if *n > 1 {
            let calls = n.div_ceil(batch);
            aggregate_calls += calls;
            // Each call carries the summary so far plus a batch of feedbacks.
            input_chars += calls * (1200 + REPLY_TOKENS * 4 * (batch + 1));
        }
        let value = values.get(*target).map_or(0, |v| v.chars().count() as u64);
        update_chars += 1200 + value + REPLY_TOKENS * 4;
    }
    let update_calls = per_target.len() as u64;
    input_chars += update_chars;
    let output_tokens = (feedback_calls + aggregate_calls) * REPLY_TOKENS
        + per_target
            .keys()
            .map(|t| values.get(*t).map_or(0, |v| v.chars().count() as u64) / 4 + 100)
            .sum::<u64>();
    let usage = Usage {
        input_tokens: input_chars / 4,
        output_tokens,
    };
    Estimate {
        feedback_calls,
        aggregate_calls,
        update_calls,
        max_calls: feedback_calls
            + aggregate_calls
            + update_calls * (1 + u64::from(cfg.update_retries)),
        usage,
        cost_usd: prices.cost_usd(model, usage),
    }
}
