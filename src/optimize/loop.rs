//! The closed loop: rounds of (run the reference memory system with the current prompts →
//! judge → attribute failures → optimize) over training conversations, with held-out
//! conversations evaluated every round. A serializable [`LoopState`] is advanced one step at a
//! time ([`advance`]), so the page can keep it in IndexedDB and the CLI in a JSON file, and
//! either resumes after a reload or an interruption.
//!
//! Round `r` runs every conversation with the prompts of round `r` (train ones recorded and
//! attributed), then optimizes; the last round only evaluates. Each accepted edit becomes a new
//! [`PromptVersion`] with its lineage: the failed cases and the feedback that caused it.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::targets::{map_failure, Failure, Mapped, Selection};
use super::{step, Edit, History, Meter, OptimizeConfig, OptimizeError, Progress};
use crate::attribution::InfoFlow;
use crate::format::{load, LoadOptions};
use crate::memsys::{self, prompts as names, Conversation, Prompts};
use crate::provider::{Llm, PriceTable, Usage};

/// Why the loop could not advance.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoopError {
    #[error("running the memory system on conversation {conversation}: {message}")]
    System {
        conversation: usize,
        message: String,
    },
    #[error(transparent)]
    Optimize(#[from] OptimizeError),
    #[error("loop settings: {0}")]
    Config(String),
}

/// Settings of a loop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoopConfig {
    /// Optimization rounds; the loop evaluates `rounds + 1` times.
    pub rounds: usize,
    /// Indices of the training conversations (in the slice given to [`advance`]).
    pub train: Vec<usize>,
    /// Indices of the held-out conversations.
    pub heldout: Vec<usize>,
    /// Question categories asked (LoCoMo 1..=5); empty: all.
    pub categories: Vec<u8>,
    pub memsys: memsys::Config,
    pub optimize: OptimizeConfig,
    pub selection: Selection,
    pub infoflow: InfoFlow,
    /// The optimizer's model, for pricing.
    pub model: String,
    pub prices: PriceTable,
}

impl Default for LoopConfig {
    fn default() -> Self {
        Self {
            rounds: 3,
            train: vec![0],
            heldout: Vec::new(),
            categories: Vec::new(),
            memsys: memsys::Config {
                judge_with_llm: false,
                ..memsys::Config::default()
            },
            optimize: OptimizeConfig::default(),
            selection: super::gather::default_selection(),
            infoflow: InfoFlow::default(),
            model: String::new(),
            prices: PriceTable::builtin(),
        }
    }
}

/// Where the loop is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Phase {
    /// Run conversation `pos` of (train ++ held-out) in `round`.
    Run {
        round: usize,
        pos: usize,
    },
    /// Optimize from the failures of `round`.
    Optimize {
        round: usize,
    },
    Done,
}

/// Right / total answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Tally {
    pub right: usize,
    pub total: usize,
}

impl Tally {
    /// Share right, 0 when empty.
    pub fn accuracy(self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            self.right as f64 / self.total as f64
        }
    }
}

/// One round's results.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RoundRecord {
    pub round: usize,
    /// Version of each prompt used in this round.
    pub versions: BTreeMap<String, u32>,
    pub train: Tally,
    pub heldout: Tally,
    /// Failures attributed, by error type label.
    pub by_type: BTreeMap<String, usize>,
    /// Failures whose op held no target, and failures no attribution resolved.
    pub not_optimizable: usize,
    pub unattributed: usize,
    pub edits: Vec<Edit>,
    pub meter: Meter,
    pub system_usage: Usage,
}

/// One version of a prompt, with its lineage.
#[cfg_attr(feature = "ts", derive(tsify_next::Tsify))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptVersion {
    pub name: String,
    pub version: u32,
    pub parent: Option<u32>,
    pub value: String,
    /// The round it was made in (`None`: the starting prompt).
    pub round: Option<usize>,
    /// Train accuracy of the first round that used it.
    pub score: Option<f64>,
    /// What the step that made it cost (`None`: no price for the model).
    pub cost_usd: Option<f64>,
    /// Unified diff from the parent.
    pub diff: String,
    pub cases: Vec<String>,
    pub feedback: String,
    pub rationale: String,
}

impl PromptVersion {
    /// Version 1: the prompt a run started with.
    pub fn original(name: String, value: String) -> Self {
        PromptVersion {
            name,
            version: 1,
            parent: None,
            value,
            round: None,
            score: None,
            cost_usd: Some(0.0),
            diff: String::new(),
            cases: Vec::new(),
            feedback: String::new(),
            rationale: String::new(),
        }
    }
}

/// Everything the loop needs to resume.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoopState {
    pub config: LoopConfig,
    pub prompts: Prompts,
    pub phase: Phase,
    pub history: History,
    pub rounds: Vec<RoundRecord>,
    /// Failures collected in the current round, waiting for the optimize step.
    pub pending: Vec<Failure>,
    pub versions: Vec<PromptVersion>,
    /// User ids of the conversations the loop was started on, checked on resume.
    #[serde(default)]
    pub conversations: Vec<String>,
}

/// The prompt names the reference memory system reads, and their values.
pub fn prompt_values(p: &Prompts) -> BTreeMap<String, String> {
    [
        (names::FACT_EXTRACTION, &p.fact_extraction),
        (names::UPDATE_DECISION, &p.update_decision),
        (names::QUESTION_ANSWERING, &p.question_answering),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.clone()))
    .collect()
}

fn set_prompt(p: &mut Prompts, name: &str, value: &str) -> bool {
    let slot = match name {
        names::FACT_EXTRACTION => &mut p.fact_extraction,
        names::UPDATE_DECISION => &mut p.update_decision,
        names::QUESTION_ANSWERING => &mut p.question_answering,
        _ => return false,
    };
    value.clone_into(slot);
    true
}

/// A unified diff of two prompt values.
pub fn diff(name: &str, old: &str, new: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .header(&format!("{name} (old)"), &format!("{name} (new)"))
        .to_string()
}

impl LoopState {
    /// A fresh loop starting from `prompts`.
    ///
    /// # Errors
    /// [`LoopError::Config`] when no training conversation is given.
    pub fn new(config: LoopConfig, prompts: Prompts) -> Result<Self, LoopError> {
        if config.train.is_empty() {
            return Err(LoopError::Config(
                "choose at least one training conversation".into(),
            ));
        }
        let versions = prompt_values(&prompts)
            .into_iter()
            .map(|(name, value)| PromptVersion::original(name, value))
            .collect();
        Ok(Self {
            history: History::new(config.optimize.history_len),
            config,
            prompts,
            phase: Phase::Run { round: 0, pos: 0 },
            rounds: Vec::new(),
            pending: Vec::new(),
            versions,
            conversations: Vec::new(),
        })
    }

    /// The latest version number of each prompt.
    pub fn current_versions(&self) -> BTreeMap<String, u32> {
        let mut out = BTreeMap::new();
        for v in &self.versions {
            let e = out.entry(v.name.clone()).or_insert(0);
            *e = (*e).max(v.version);
        }
        out
    }

    /// `(round, train accuracy, held-out accuracy)` per finished or running round.
    pub fn series(&self) -> Vec<(usize, f64, Option<f64>)> {
        self.rounds
            .iter()
            .map(|r| {
                let held = (r.heldout.total > 0).then(|| r.heldout.accuracy());
                (r.round, r.train.accuracy(), held)
            })
            .collect()
    }

    /// The accuracy series as JSON: `[{round, train, heldout}]`.
    pub fn series_json(&self) -> serde_json::Value {
        serde_json::Value::from(
            self.series()
                .into_iter()
                .map(|(round, train, held)| serde_json::json!({"round": round, "train": train, "heldout": held}))
                .collect::<Vec<_>>(),
        )
    }

    /// A text chart of the accuracy per round (`#` train, `=` held-out, 40 columns = 100 %).
    pub fn chart_text(&self) -> String {
        let mut out = String::from("round  train                                      held-out\n");
        for (round, train, held) in self.series() {
            #[allow(clippy::cast_sign_loss)] // clamped to 0..=40 first
            let bar = |a: f64, c: char| -> String {
                let n = (a.clamp(0.0, 1.0) * 40.0).round() as usize;
                std::iter::repeat_n(c, n).collect()
            };
            let _ = write!(
                out,
                "{round:>5}  {:<40} {:>5.1}%",
                bar(train, '#'),
                train * 100.0
            );
            if let Some(h) = held {
                let _ = write!(out, "  {:<40} {:>5.1}%", bar(h, '='), h * 100.0);
            }
            out.push('\n');
        }
        out
    }

    fn order(&self) -> Vec<(usize, bool)> {
        let c = &self.config;
        c.train
            .iter()
            .map(|&i| (i, true))
            .chain(c.heldout.iter().map(|&i| (i, false)))
            .collect()
    }
}

/// Advances the loop by one step (one conversation run, or one optimization) and returns the
/// new phase. `system` runs the memory system; `optimizer` rewrites the prompts.
///
/// # Errors
/// A memory-system or optimizer failure; the state is unchanged, so the step can be retried.
pub async fn advance<S: Llm, O: Llm>(
    state: &mut LoopState,
    conversations: &[Conversation],
    system: &S,
    optimizer: &O,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Phase, LoopError> {
    let ids: Vec<String> = conversations.iter().map(Conversation::user_id).collect();
    if state.conversations.is_empty() {
        state.conversations.clone_from(&ids);
    } else if state.conversations != ids {
        return Err(LoopError::Config(format!(
            "this loop was started on conversations {:?}, not {ids:?}: load the same conversations to resume",
            state.conversations
        )));
    }
    match state.phase {
        Phase::Done => {}
        Phase::Run { round, pos } => {
            let order = state.order();
            let Some(&(conv_ix, is_train)) = order.get(pos) else {
                return Err(LoopError::Config(format!(
                    "position {pos} is past the conversations"
                )));
            };
            let Some(conv) = conversations.get(conv_ix) else {
                return Err(LoopError::Config(format!(
                    "conversation {conv_ix} was chosen but only {} are loaded; load the same conversations to resume",
                    conversations.len()
                )));
            };
            let (tally, failures, by_type, not_opt, unattributed, usage) =
                run_conversation(state, conv, conv_ix, is_train, system).await?;
            if pos == 0 {
                state.pending.clear();
                state.rounds.push(RoundRecord {
                    round,
                    versions: state.current_versions(),
                    ..RoundRecord::default()
                });
            }
            let Some(rec) = state.rounds.last_mut() else {
                return Err(LoopError::Config("no round record".into()));
            };
            let slot = if is_train {
                &mut rec.train
            } else {
                &mut rec.heldout
            };
            slot.right += tally.right;
            slot.total += tally.total;
            for (k, n) in by_type {
                *rec.by_type.entry(k).or_default() += n;
            }
            rec.not_optimizable += not_opt;
            rec.unattributed += unattributed;
            rec.system_usage += usage;
            state.pending.extend(failures);
            state.phase = if pos + 1 < order.len() {
                Phase::Run {
                    round,
                    pos: pos + 1,
                }
            } else {
                let train_acc = rec.train.accuracy();
                let used = rec.versions.clone();
                for v in &mut state.versions {
                    if v.score.is_none() && used.get(&v.name) == Some(&v.version) {
                        v.score = Some(train_acc);
                    }
                }
                if round < state.config.rounds {
                    Phase::Optimize { round }
                } else {
                    Phase::Done
                }
            };
        }
        Phase::Optimize { round } => {
            let values = prompt_values(&state.prompts);
            let mut history = state.history.clone();
            let out = step(
                optimizer,
                &values,
                &state.pending,
                &mut history,
                &state.config.optimize,
                progress,
            )
            .await?;
            state.history = history;
            let cost = state
                .config
                .prices
                .cost_usd(&state.config.model, out.meter.usage);
            let current = state.current_versions();
            for e in out
                .edits
                .iter()
                .filter(|e| e.accepted && e.new_value != e.old_value)
            {
                if !set_prompt(&mut state.prompts, &e.target, &e.new_value) {
                    continue;
                }
                let parent = current.get(&e.target).copied();
                state.versions.push(PromptVersion {
                    name: e.target.clone(),
                    version: parent.unwrap_or(0) + 1,
                    parent,
                    value: e.new_value.clone(),
                    round: Some(round),
                    score: None,
                    cost_usd: cost,
                    diff: diff(&e.target, &e.old_value, &e.new_value),
                    cases: e.cases.clone(),
                    feedback: e.feedback.clone(),
                    rationale: e.rationale.clone(),
                });
            }
            if let Some(rec) = state.rounds.last_mut() {
                rec.edits = out.edits;
                rec.meter = out.meter;
            }
            state.pending.clear();
            state.phase = Phase::Run {
                round: round + 1,
                pos: 0,
            };
        }
    }
    Ok(state.phase)
}

type RunOutcome = (
    Tally,
    Vec<Failure>,
    BTreeMap<String, usize>,
    usize,
    usize,
    Usage,
);

async fn run_conversation<S: Llm>(
    state: &LoopState,
    conv: &Conversation,
    conv_ix: usize,
    is_train: bool,
    system: &S,
) -> Result<RunOutcome, LoopError> {
    let cfg = &state.config;
    let questions: Vec<usize> = conv
        .questions
        .iter()
        .enumerate()
        .filter(|(_, q)| cfg.categories.is_empty() || cfg.categories.contains(&q.category))
        .map(|(i, _)| i)
        .collect();
    let sys_err = |message: String| LoopError::System {
        conversation: conv_ix,
        message,
    };
    let rec = memsys::recorder_for(conv, &cfg.memsys, is_train);
    let run = memsys::run(
        system,
        conv,
        &state.prompts,
        &cfg.memsys,
        &[],
        &questions,
        &rec,
    )
    .await
    .map_err(|e| sys_err(e.to_string()))?;
    let (right, total) = run.accuracy(|_| true);
    let tally = Tally { right, total };
    let mut failures = Vec::new();
    let mut by_type = BTreeMap::new();
    let (mut not_opt, mut unattributed) = (0, 0);
    if is_train && right < total {
        let trace = load(&rec.to_json(), LoadOptions::default())
            .map_err(|e| sys_err(format!("its recorded trace does not load: {e}")))?
            .trace;
        for case in &trace.cases {
            let Ok(a) = cfg.infoflow.attribute(&trace, case) else {
                unattributed += 1;
                continue;
            };
            *by_type.entry(a.error_type.as_str().to_owned()).or_default() += 1;
            match map_failure(&trace, &a, &cfg.selection, cfg.optimize.render_chars) {
                Mapped::Targets(f) => failures.extend(f),
                Mapped::NotOptimizable { .. } => not_opt += 1,
            }
        }
    }
    Ok((tally, failures, by_type, not_opt, unattributed, run.usage))
}
