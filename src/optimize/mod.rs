//! Prompt optimization from attributions, like textual gradients (TextGrad): credit assignment
//! (attribution) is decoupled from rewriting.
//!
//! 1. [`targets`]: each attributed failure maps to the configurable variables (prompts) inside
//!    its decisive op's subgraph, else it is reported as not optimizable;
//! 2. [`feedback`]: one call per (target, failure) → `{rationale, feedback}`;
//! 3. [`aggregate`]: per target, feedbacks shuffled with a seed and folded in batches → one summary;
//! 4. [`update`]: per target → `{rationale, improved_value}`; an update dropping a placeholder
//!    ([`placeholders`]) is rejected and retried;
//! 5. [`history`]: the last N (old value, aggregated feedback) pairs per target, shown to the next
//!    feedback step.
//!
//! [`estimate`] predicts calls, tokens and cost before a run; each edit becomes a
//! [`PromptVersion`] ([`version`]); [`export`] writes the versions as `update_results.json`, Mem0
//! config keys (the prompts named in [`prompt_names`]) or text files; [`gather`] feeds one step
//! from attributed traces. [`settings`] makes the memory system's settings (`top_k`, …)
//! optimizable next to the prompts, and [`compare`] sets two runs' verdicts side by side
//! ([`trace_run`]: any trace as a run). The closed loop, rounds of (memory system → judge →
//! attribute → optimize) as a resumable state machine with a held-out acceptance check, runs
//! the reference memory system and lives with it (`memtrace_memsys::closed_loop`).

pub mod aggregate;
pub mod compare;
pub mod estimate;
pub mod export;
pub mod feedback;
pub mod gather;
pub mod history;
pub mod placeholders;
pub mod prompt_names;
pub mod settings;
pub mod targets;
pub mod trace_run;
pub mod update;
pub mod version;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::provider::{chat_batch, ChatMessage, ChatRequest, ChatRole, Llm, ProviderError, Usage};

pub use feedback::Feedback;
pub use history::{History, HistoryEntry};
pub use targets::{map_failure, targets, Failure, Mapped, Selection, Target};
pub use version::PromptVersion;

/// Why an optimization step failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
pub enum OptimizeError {
    #[error("the optimizer's LLM call failed: {0}")]
    Provider(#[from] ProviderError),
    #[error("the {purpose} reply is unusable: {message}. Use a model that follows JSON instructions, or retry.")]
    Reply { purpose: String, message: String },
    #[error("bad input: {0}")]
    Input(String),
}

/// Settings of the optimizer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OptimizeConfig {
    /// Seeds the shuffle of feedbacks before aggregation.
    pub seed: u64,
    /// Feedbacks folded per aggregation call.
    pub batch_size: usize,
    /// (old value, feedback) pairs kept per target.
    pub history_len: usize,
    /// Extra update attempts after one that dropped a placeholder.
    pub update_retries: u32,
    /// Requests in flight during the feedback stage.
    pub concurrency: usize,
    /// Characters of the decisive op's rendering put into a feedback prompt.
    pub render_chars: usize,
}

impl Default for OptimizeConfig {
    fn default() -> Self {
        Self {
            seed: 0,
            batch_size: 4,
            history_len: 3,
            update_retries: 2,
            concurrency: 4,
            render_chars: 6000,
        }
    }
}

/// An update attempt the placeholder guard refused.
#[cfg_attr(feature = "ts", derive(tsify_next::Tsify))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rejected {
    pub value: String,
    pub dropped: Vec<String>,
}

/// What a step did to one target, with its lineage.
#[cfg_attr(feature = "ts", derive(tsify_next::Tsify))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Edit {
    pub target: String,
    pub old_value: String,
    /// Equals `old_value` when every attempt was rejected.
    pub new_value: String,
    pub accepted: bool,
    pub rationale: String,
    /// The aggregated feedback that drove the update.
    pub feedback: String,
    /// The failed cases whose feedback it aggregates.
    pub cases: Vec<String>,
    pub rejected: Vec<Rejected>,
}

/// Calls and tokens spent so far (an optimization's, a page's batch of LLM attributions).
#[cfg_attr(feature = "ts", derive(tsify_next::Tsify))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Meter {
    pub calls: u64,
    pub usage: Usage,
}

impl Meter {
    /// Counts one answered call (retries are not billed).
    pub fn add(&mut self, usage: Usage) {
        self.calls += 1;
        self.usage += usage;
    }
}

/// Progress of a step: the stage, items done of total, and the meter.
#[cfg_attr(feature = "ts", derive(tsify_next::Tsify))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
// Its TypeScript name (the module already has an `attributeWith` `Progress`); JSON has no
// struct names, so files and replies are unchanged.
#[serde(rename = "OptimizeProgress")]
pub struct Progress {
    pub stage: String,
    pub done: usize,
    pub total: usize,
    pub meter: Meter,
}

/// What one optimization step produced.
#[cfg_attr(feature = "ts", derive(tsify_next::Tsify))]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct StepOutcome {
    pub feedbacks: Vec<Feedback>,
    /// Aggregated feedback per target.
    #[cfg_attr(feature = "ts", tsify(type = "Record<string, string>"))]
    pub summaries: BTreeMap<String, String>,
    pub edits: Vec<Edit>,
    pub meter: Meter,
}

/// Fences `text` as data: `<<<BEGIN label>>>` … `<<<END label>>>`. Marker-like runs inside the
/// text are broken up so the data cannot close its fence ([`crate::text::fence`]).
pub fn fence(label: &str, text: &str) -> String {
    crate::text::fence(crate::text::Fence::Labeled(label), text)
}

pub(crate) fn request(purpose: &str, system: &str, user: String, schema: Value) -> ChatRequest {
    ChatRequest {
        messages: vec![
            ChatMessage::text(ChatRole::System, system),
            ChatMessage::text(ChatRole::User, user),
        ],
        json_schema: Some(schema),
        temperature: Some(0.0),
        purpose: purpose.to_owned(),
        ..ChatRequest::default()
    }
}

pub(crate) fn reply_json(reply: &str, purpose: &str) -> Result<Value, OptimizeError> {
    let text = reply.trim();
    let start = text.find('{');
    let end = text.rfind('}');
    let body = match (start, end) {
        (Some(s), Some(e)) if s < e => &text[s..=e],
        _ => text,
    };
    serde_json::from_str(body).map_err(|e| OptimizeError::Reply {
        purpose: purpose.to_owned(),
        message: format!(
            "not JSON ({e}); it starts {:?}",
            text.chars().take(80).collect::<String>()
        ),
    })
}

pub(crate) fn field(v: &Value, key: &str, purpose: &str) -> Result<String, OptimizeError> {
    v.get(key)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| OptimizeError::Reply {
            purpose: purpose.to_owned(),
            message: format!("no string field `{key}`"),
        })
}

/// One optimization step over `failures` (from [`map_failure`]) for the current `values` of the
/// targets: feedback, aggregation, update. The history is read by the feedback stage and
/// extended by the update stage. `progress` is called as each reply is read (feedback replies
/// arrive together from a bounded-concurrency batch).
///
/// # Errors
/// The first provider failure, or a reply that is not the JSON asked for.
pub async fn step<L: Llm>(
    llm: &L,
    values: &BTreeMap<String, String>,
    failures: &[Failure],
    history: &mut History,
    cfg: &OptimizeConfig,
    progress: &mut dyn FnMut(&Progress),
) -> Result<StepOutcome, OptimizeError> {
    let mut out = StepOutcome::default();
    let usable: Vec<&Failure> = failures
        .iter()
        .filter(|f| values.contains_key(&f.target))
        .collect();
    // 1. Feedback.
    let requests: Vec<ChatRequest> = usable
        .iter()
        .map(|f| {
            let value = values.get(&f.target).map_or("", String::as_str);
            feedback::build(value, f, &history.of(&f.target))
        })
        .collect();
    let replies = chat_batch(llm, &requests, cfg.concurrency.max(1)).await;
    for (i, (f, reply)) in usable.iter().zip(replies).enumerate() {
        let reply = reply?;
        out.meter.add(reply.usage);
        out.feedbacks.push(feedback::parse(&reply.content, f)?);
        progress(&Progress {
            stage: "feedback".into(),
            done: i + 1,
            total: usable.len(),
            meter: out.meter,
        });
    }
    // 2. Aggregation, per target.
    let mut by_target: BTreeMap<String, Vec<Feedback>> = BTreeMap::new();
    for f in &out.feedbacks {
        by_target
            .entry(f.target.clone())
            .or_default()
            .push(f.clone());
    }
    for (target, fbs) in &by_target {
        let summary = if let [only] = fbs.as_slice() {
            only.feedback.clone()
        } else {
            let batches = aggregate::batches(fbs, target, cfg.seed, cfg.batch_size);
            let mut summary = String::new();
            for (k, batch) in batches.iter().enumerate() {
                let reply = llm
                    .chat(&aggregate::build(
                        target,
                        &summary,
                        batch,
                        k + 1,
                        batches.len(),
                    ))
                    .await?;
                out.meter.add(reply.usage);
                summary = aggregate::parse(&reply.content)?;
                progress(&Progress {
                    stage: format!("aggregate {target}"),
                    done: k + 1,
                    total: batches.len(),
                    meter: out.meter,
                });
            }
            summary
        };
        out.summaries.insert(target.clone(), summary);
    }
    // 3. Update, per target, with the placeholder guard.
    let total = out.summaries.len();
    for (k, (target, summary)) in out.summaries.iter().enumerate() {
        let old = values.get(target).cloned().unwrap_or_default();
        let keep: Vec<String> = placeholders::placeholders(&old).into_iter().collect();
        let mut edit = Edit {
            target: target.clone(),
            old_value: old.clone(),
            new_value: old.clone(),
            accepted: false,
            rationale: String::new(),
            feedback: summary.clone(),
            cases: by_target
                .get(target)
                .map(|f| f.iter().map(|x| x.case_id.clone()).collect())
                .unwrap_or_default(),
            rejected: Vec::new(),
        };
        edit.cases.sort();
        edit.cases.dedup();
        let mut last_dropped: Vec<String> = Vec::new();
        for _attempt in 0..=cfg.update_retries {
            let reply = llm
                .chat(&update::build(target, &old, summary, &keep, &last_dropped))
                .await?;
            out.meter.add(reply.usage);
            let proposal = update::parse(&reply.content)?;
            let dropped = placeholders::dropped(&old, &proposal.improved_value);
            if dropped.is_empty() {
                edit.accepted = true;
                edit.new_value = proposal.improved_value;
                edit.rationale = proposal.rationale;
                break;
            }
            edit.rejected.push(Rejected {
                value: proposal.improved_value,
                dropped: dropped.clone(),
            });
            last_dropped = dropped;
        }
        history.push(
            target,
            HistoryEntry {
                old_value: old,
                feedback: summary.clone(),
            },
        );
        progress(&Progress {
            stage: "update".into(),
            done: k + 1,
            total,
            meter: out.meter,
        });
        out.edits.push(edit);
    }
    Ok(out)
}
