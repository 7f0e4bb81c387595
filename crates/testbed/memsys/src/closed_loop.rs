//! The closed loop: rounds of (run the reference memory system with the current prompts →
//! judge → attribute failures → optimize) over training conversations, with held-out
//! conversations evaluated every round. A serializable [`LoopState`] is advanced one step at a
//! time ([`advance`]), so the page can keep it in IndexedDB and the CLI in a JSON file, and
//! either resumes after a reload or an interruption.
//!
//! Round `r` runs every conversation with the prompts of round `r` (train ones recorded and
//! attributed), then optimizes; the last round only evaluates. Each accepted edit becomes a new
//! [`PromptVersion`] with its lineage: the failed cases and the feedback that caused it. The
//! memory system's settings (`top_k`, …) are optimized alongside ([`settings`]; applied to the
//! [`Config`] by [`crate::settings`]), each change a [`SettingVersion`]. A round whose held-out
//! accuracy (train accuracy without a held-out split) falls below the last kept round's is
//! rejected: its prompts and settings go back to the kept ones, and the round's record says
//! why ([`keep`]); [`page`] draws the loop as an HTML page.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use memtrace::attribution::InfoFlow;
use memtrace::optimize::compare::AnsweredQuestion;
use memtrace::optimize::settings::{self, Miss, SettingEdit, SettingVersion};
use memtrace::optimize::targets::{default_selection, Failure, Selection};
use memtrace::optimize::{
    step, Edit, History, Meter, OptimizeConfig, OptimizeError, Progress, PromptVersion,
};
use memtrace::provider::{Llm, PriceTable, Usage};
use memtrace::text::diff::unified;

use crate::prompts as names;
use crate::{Config, Conversation, Prompts};
use round::run_conversation;

pub mod keep;
pub mod page;
mod progress;
mod round;

pub use progress::ExportKind;

use keep::Kept;

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
    pub memsys: Config,
    pub optimize: OptimizeConfig,
    pub selection: Selection,
    pub infoflow: InfoFlow,
    /// The optimizer's model, for pricing.
    pub model: String,
    pub prices: PriceTable,
    /// The memory system's settings the loop tunes ([`settings::SPECS`] names); empty: prompts only.
    #[serde(default = "default_settings")]
    pub settings: Vec<String>,
}

fn default_settings() -> Vec<String> {
    vec![settings::TOP_K.to_owned()]
}

impl Default for LoopConfig {
    fn default() -> Self {
        Self {
            rounds: 3,
            train: vec![0],
            heldout: Vec::new(),
            categories: Vec::new(),
            memsys: Config {
                judge_with_llm: false,
                ..Config::default()
            },
            optimize: OptimizeConfig::default(),
            selection: default_selection(),
            infoflow: InfoFlow::default(),
            model: String::new(),
            prices: PriceTable::builtin(),
            settings: default_settings(),
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
    /// The settings this round ran with.
    #[serde(default)]
    pub settings: BTreeMap<String, i64>,
    /// Setting changes proposed from this round's failures.
    #[serde(default)]
    pub setting_edits: Vec<SettingEdit>,
    /// Every question's verdict, train and held-out (for [`memtrace::optimize::compare`]).
    #[serde(default)]
    pub verdicts: Vec<AnsweredQuestion>,
    /// Why this round's prompts and settings were thrown out (`None`: kept).
    #[serde(default)]
    pub rejected: Option<String>,
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
    /// The current value of each tuned setting.
    #[serde(default)]
    pub settings: BTreeMap<String, i64>,
    #[serde(default)]
    pub setting_versions: Vec<SettingVersion>,
    /// Setting evidence collected in the current round, waiting for the optimize step.
    #[serde(default)]
    pub misses: Vec<Miss>,
    /// The last round the acceptance check kept.
    #[serde(default)]
    pub kept: Option<Kept>,
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
        if let Some(bad) = config.settings.iter().find(|n| settings::spec(n).is_none()) {
            return Err(LoopError::Config(format!(
                "`{bad}` is no setting of the memory system (known: {})",
                settings::SPECS.map(|s| s.name).join(", ")
            )));
        }
        let versions = prompt_values(&prompts)
            .into_iter()
            .map(|(name, value)| PromptVersion::original(name, value))
            .collect();
        let current = crate::settings::values(&config.memsys, &config.settings);
        let setting_versions = current
            .iter()
            .map(|(n, &v)| SettingVersion::original(n.clone(), v))
            .collect();
        Ok(Self {
            settings: current,
            setting_versions,
            misses: Vec::new(),
            kept: None,
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

    /// The version number of each prompt in use: the latest one not rejected.
    pub fn current_versions(&self) -> BTreeMap<String, u32> {
        let mut out = BTreeMap::new();
        for v in self.versions.iter().filter(|v| v.rejected.is_none()) {
            let e = out.entry(v.name.clone()).or_insert(0);
            *e = (*e).max(v.version);
        }
        out
    }

    /// The version number of each setting in use: the latest one not rejected.
    pub fn current_setting_versions(&self) -> BTreeMap<String, u32> {
        let mut out = BTreeMap::new();
        for v in self
            .setting_versions
            .iter()
            .filter(|v| v.rejected.is_none())
        {
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
                .zip(&self.rounds)
                .map(|((round, train, held), r)| serde_json::json!({"round": round, "train": train, "heldout": held, "settings": r.settings, "rejected": r.rejected.is_some()}))
                .collect::<Vec<_>>(),
        )
    }

    /// A text chart of the accuracy per round (`#` train, `=` held-out, 40 columns = 100 %).
    pub fn chart_text(&self) -> String {
        let mut out = String::from("round  train                                      held-out\n");
        for ((round, train, held), rec) in self.series().into_iter().zip(&self.rounds) {
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
            for (name, v) in &rec.settings {
                let _ = write!(out, "  {name} {v}");
            }
            if rec.rejected.is_some() {
                out.push_str("  rejected");
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

/// Runs the loop to its end, a step at a time ([`advance`]).
///
/// # Errors
/// The first step's error; the state stays at that step, which can be retried.
pub async fn run_to_end<S: Llm, O: Llm>(
    state: &mut LoopState,
    conversations: &[Conversation],
    system: &S,
    optimizer: &O,
) -> Result<(), LoopError> {
    while state.phase != Phase::Done {
        advance(state, conversations, system, optimizer, &mut |_| {}).await?;
    }
    Ok(())
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
        Phase::Run { round, pos } => run_step(state, conversations, system, round, pos).await?,
        Phase::Optimize { round } => optimize_step(state, optimizer, round, progress).await?,
    }
    Ok(state.phase)
}

async fn run_step<S: Llm>(
    state: &mut LoopState,
    conversations: &[Conversation],
    system: &S,
    round: usize,
    pos: usize,
) -> Result<(), LoopError> {
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
    let out = run_conversation(state, conv, conv_ix, is_train, system).await?;
    if pos == 0 {
        state.pending.clear();
        state.misses.clear();
        state.rounds.push(RoundRecord {
            round,
            versions: state.current_versions(),
            settings: state.settings.clone(),
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
    slot.right += out.tally.right;
    slot.total += out.tally.total;
    for (k, n) in out.by_type {
        *rec.by_type.entry(k).or_default() += n;
    }
    rec.not_optimizable += out.not_optimizable;
    rec.unattributed += out.unattributed;
    rec.system_usage += out.usage;
    rec.verdicts.extend(out.verdicts);
    state.pending.extend(out.failures);
    state.misses.extend(out.misses);
    if pos + 1 < order.len() {
        state.phase = Phase::Run {
            round,
            pos: pos + 1,
        };
        return Ok(());
    }
    keep::judge_round(state);
    state.phase = if round < state.config.rounds {
        Phase::Optimize { round }
    } else {
        Phase::Done
    };
    Ok(())
}

async fn optimize_step<O: Llm>(
    state: &mut LoopState,
    optimizer: &O,
    round: usize,
    progress: &mut dyn FnMut(&Progress),
) -> Result<(), LoopError> {
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
        let version = keep::next_version(
            state.versions.iter().map(|v| (&v.name, v.version)),
            &e.target,
        );
        state.versions.push(PromptVersion {
            name: e.target.clone(),
            version,
            parent,
            value: e.new_value.clone(),
            round: Some(round),
            score: None,
            cost_usd: cost,
            diff: unified(&e.target, &e.old_value, &e.new_value),
            cases: e.cases.clone(),
            feedback: e.feedback.clone(),
            rationale: e.rationale.clone(),
            rejected: None,
        });
    }
    let setting_edits = keep::tune_settings(state, round);
    if let Some(rec) = state.rounds.last_mut() {
        rec.edits = out.edits;
        rec.meter = out.meter;
        rec.setting_edits = setting_edits;
    }
    state.pending.clear();
    state.misses.clear();
    state.phase = Phase::Run {
        round: round + 1,
        pos: 0,
    };
    Ok(())
}
