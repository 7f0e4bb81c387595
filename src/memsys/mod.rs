//! The reference memory system: a Mem0-style pipeline that records every step as a
//! smartcomment trace with MemBase's conventions. Per message pair it extracts facts (LLM),
//! decides ADD / UPDATE / NONE against similar memory units (LLM), and deletes units the new
//! facts retract (LLM); per question it retrieves the top-k units (BM25), answers (LLM) and
//! judges against the gold answer (LLM or the normalized-token rule).
//!
//! It runs over LoCoMo-format conversations ([`locomo`]) with any [`Llm`]; the
//! [`crate::provider::simulated`] provider makes it work offline. [`fault`] injects exactly
//! one wrong operation per target question; [`bench`] turns that into MemTraceBench files.

pub mod bench;
pub mod demo;
mod evaluate;
pub mod fault;
pub mod locomo;
mod pipeline;
pub mod prompts;
pub mod store;
pub mod text;

use std::collections::BTreeSet;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use memtrace_record::{GraphInfo, Recorder, SteppingClock};

pub use evaluate::label_is_correct;
pub use fault::Fault;
pub use locomo::{Conversation, Question};
pub use pipeline::{pair_of, pairs};
pub use prompts::Prompts;

use crate::provider::{Llm, ProviderError, Usage};

/// Why a memory-system run failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MemsysError {
    #[error("the LLM call failed: {0}")]
    Provider(#[from] ProviderError),
    #[error("bad input: {0}")]
    Input(String),
}

/// Settings of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Config {
    /// Units retrieved per question.
    pub top_k: usize,
    /// Similar units looked up per new fact.
    pub similar_k: usize,
    /// Seeds memory-unit ids and the recorder's ids.
    pub seed: u64,
    /// Judge with the LLM (else with the normalized-token rule).
    pub judge_with_llm: bool,
    /// Where the trace says it came from (graph metadata `trace_source`).
    pub source: String,
    /// First `created_at` of the trace (`YYYY-MM-DD HH:MM:SS`); the clock steps 1 ms a record.
    pub start_time: String,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            top_k: 10,
            similar_k: 5,
            seed: 0,
            judge_with_llm: true,
            source: "memtrace reference memory system".into(),
            start_time: "2026-01-01 00:00:00.000".into(),
        }
    }
}

/// One answered question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuestionResult {
    /// The QA id (`locomo-qa-<n>-<i>`).
    pub question: String,
    /// Index into the conversation's questions.
    pub index: usize,
    pub prediction: String,
    pub correct: bool,
    pub query_id: String,
    pub prediction_id: String,
    pub golden_answers_id: String,
    pub evidence_ids: Vec<String>,
    /// Ids of the retrieved units, best first.
    pub retrieved: Vec<String>,
}

/// The state and results of a run.
#[derive(Debug, Default)]
pub struct Run {
    pub store: store::Store,
    pub results: Vec<QuestionResult>,
    /// For each fault given, the op that carried it (`None`: it found nothing to break).
    pub applied: Vec<Option<String>>,
    /// Message pairs whose extraction gave at least one fact.
    pub pairs_with_facts: BTreeSet<usize>,
    pub usage: Usage,
}

impl Run {
    /// Share of results judged correct, over the results passing `filter`.
    pub fn accuracy(&self, filter: impl Fn(&QuestionResult) -> bool) -> (usize, usize) {
        let picked: Vec<&QuestionResult> = self.results.iter().filter(|r| filter(r)).collect();
        (picked.iter().filter(|r| r.correct).count(), picked.len())
    }
}

/// A recorder for a run over `conv` (disabled when `record` is false).
pub fn recorder_for(conv: &Conversation, cfg: &Config, record: bool) -> Recorder {
    if !record {
        return Recorder::disabled();
    }
    let mut info = GraphInfo::new(&conv.user_id(), "Mem0");
    info.metadata.insert("layer_type".into(), json!("Mem0"));
    info.metadata.insert(
        "dataset_cls".into(),
        json!(if conv.dataset == "locomo" {
            "LoCoMo"
        } else {
            conv.dataset.as_str()
        }),
    );
    info.metadata.insert(
        "traj_metadata".into(),
        json!({"speaker_a": conv.speaker_a, "speaker_b": conv.speaker_b}),
    );
    info.metadata
        .insert("trace_source".into(), json!(cfg.source));
    Recorder::new(
        info,
        Arc::new(SteppingClock::starting_at(&cfg.start_time, 1)),
        cfg.seed,
    )
}

/// Runs the pipeline over `conv`: builds memory with `faults` injected, then answers the
/// questions at `questions` (indices into `conv.questions`).
///
/// # Errors
/// The provider's error, if a call fails.
pub async fn run<L: Llm>(
    llm: &L,
    conv: &Conversation,
    prompts: &Prompts,
    cfg: &Config,
    faults: &[Fault],
    questions: &[usize],
    rec: &Recorder,
) -> Result<Run, MemsysError> {
    let mut run = Run {
        applied: vec![None; faults.len()],
        ..Run::default()
    };
    pipeline::construct(llm, conv, prompts, cfg, faults, rec, &mut run).await?;
    evaluate::evaluate(llm, conv, prompts, cfg, faults, questions, rec, &mut run).await?;
    Ok(run)
}

/// A MemTraceBench annotation for a failed question.
pub fn annotation(
    result: &QuestionResult,
    query: &str,
    gold: &str,
    fault: &Fault,
    op_id: &str,
) -> Value {
    json!({
        "query_id": result.query_id,
        "query": query,
        "golden_answers": [gold],
        "golden_answers_id": result.golden_answers_id,
        "prediction": result.prediction,
        "prediction_id": result.prediction_id,
        "source_evidence_ids": result.evidence_ids,
        "final_error_type": fault.error_type().as_str(),
        "final_op_id": op_id,
    })
}
