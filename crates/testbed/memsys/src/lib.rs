//! memtrace's reference memory systems, and what runs them. Above the core (`memtrace`, whose
//! traces, attribution and optimizer it uses) and the recorder (`memtrace-record`, which writes
//! their traces); below the hosts.
//!
//! The systems each record every step as a smartcomment trace under their framework's naming
//! as MemBase records it ([`System`]):
//! - **Mem0** ([`pipeline`]): per message pair it extracts facts (LLM), decides ADD / UPDATE /
//!   NONE against similar memory units (LLM), and deletes units the new facts retract (LLM).
//! - **NaiveRAG** ([`naiverag`]): raw message chunks become memory units as they are.
//! - **EverMemOS** ([`evermemos`]): episodes segmented from the messages plus a user profile
//!   updated over time; hybrid retrieval with a reranker.
//! - **A-Mem** ([`amem`]): LLM-written notes linked to their neighbours, which new notes evolve
//!   and consolidation removes; retrieval follows the links. A family attribution is never
//!   tuned on (held out).
//!
//! Per question every system retrieves the top-k units, answers (LLM) and judges against the
//! gold answer (LLM or the normalized-token rule).
//!
//! It runs over LoCoMo-format conversations ([`locomo`]) with any [`Llm`]; the
//! [`simulated`] provider makes it work offline. [`fault`] injects exactly
//! one wrong operation per target question; [`bench`](mod@bench) turns that into MemTraceBench files.
//!
//! What re-runs a system lives here too: [`counterfactual`] checks a verdict by replaying the
//! answer step ([`replay`]: the Mem0 pipeline after a memory op; [`decisive`] scores its
//! decisive sets), and [`closed_loop`] runs rounds of (system → judge → attribute → optimize)
//! with the core's optimizer, tuning the [`settings`] of a [`Config`] next to the prompts.

mod amem;
mod answer_step;
pub mod bench;
mod bench_otlp;
pub mod closed_loop;
pub mod counterfactual;
pub mod decisive;
pub mod demo;
mod evaluate;
mod evermemos;
pub mod fault;
mod forced;
pub mod locomo;
mod naiverag;
pub mod otlp;
mod pipeline;
pub mod prompts;
pub mod random_shape;
mod record;
pub mod replay;
mod search;
pub mod settings;
pub mod simulated;
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
pub use prompts::Prompts;
pub use record::{pair_of, pairs};

use memtrace::model::ErrorType;
use memtrace::provider::{ChatRequest, ChatResponse, Llm, ProviderError, Usage};

/// Why a memory-system run failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MemsysError {
    #[error("the LLM call failed: {0}")]
    Provider(#[from] ProviderError),
    #[error("bad input: {0}")]
    Input(String),
}

/// Which reference memory system runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum System {
    /// Fact extraction, ADD / UPDATE / NONE decision, deletion check (Mem0).
    #[default]
    Mem0,
    /// Raw message chunks stored as they are, top-k similarity retrieval (MemBase's NaiveRAG).
    NaiveRag,
    /// Episodes segmented from messages, a user profile updated over time, hybrid retrieval
    /// with a reranker (EverMemOS).
    EverMemOs,
    /// Agentic memory (A-Mem): LLM-constructed notes, links to the nearest notes, memory
    /// evolution of neighbours, consolidation; retrieval with linked neighbours.
    AMem,
}

impl System {
    /// All systems.
    pub const ALL: [System; 4] = [
        System::Mem0,
        System::NaiveRag,
        System::EverMemOs,
        System::AMem,
    ];

    /// The CLI name: `mem0`, `naiverag`, `evermemos`, `amem`.
    pub fn name(self) -> &'static str {
        match self {
            System::Mem0 => "mem0",
            System::NaiveRag => "naiverag",
            System::EverMemOs => "evermemos",
            System::AMem => "amem",
        }
    }

    /// MemBase's `layer_type` (the graph's `project_id`).
    pub fn layer_type(self) -> &'static str {
        match self {
            System::Mem0 => "Mem0",
            System::NaiveRag => "NaiveRAG",
            System::EverMemOs => "EverMemOS",
            System::AMem => "A-Mem",
        }
    }

    /// The system named `name` (case-insensitive; `rag`, `naive_rag`, `a-mem` are accepted too).
    pub fn parse(name: &str) -> Option<System> {
        match name.to_ascii_lowercase().replace(['-', '_'], "").as_str() {
            "mem0" => Some(System::Mem0),
            "naiverag" | "rag" => Some(System::NaiveRag),
            "evermemos" => Some(System::EverMemOs),
            "amem" | "agenticmemory" => Some(System::AMem),
            _ => None,
        }
    }

    /// The error types this system can have: NaiveRAG never updates or deletes a memory
    /// unit; EverMemOS updates its profile but never deletes.
    pub fn error_types(self) -> Vec<ErrorType> {
        use ErrorType::{ExtractionError, ResponseError, RetrievalError, UpdateError};
        match self {
            System::Mem0 | System::AMem => ErrorType::MEMORY.to_vec(),
            System::NaiveRag => vec![ExtractionError, RetrievalError, ResponseError],
            System::EverMemOs => vec![ExtractionError, UpdateError, RetrievalError, ResponseError],
        }
    }
}

/// Settings of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Config {
    /// Which system runs.
    #[serde(default)]
    pub system: System,
    /// NaiveRAG: a chunk is emitted when adding the next message would pass this many tokens
    /// (MemBase's deferred buffer; a token is counted as 4 characters).
    #[serde(default = "default_chunk_tokens")]
    pub chunk_tokens: usize,
    /// Also record the run as OTLP spans ([`Run::spans`]).
    #[serde(default)]
    pub record_spans: bool,
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

fn default_chunk_tokens() -> usize {
    160
}

impl Default for Config {
    fn default() -> Self {
        Self {
            system: System::Mem0,
            chunk_tokens: default_chunk_tokens(),
            record_spans: false,
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
    /// A retrieved unit states the whole gold answer ([`fault::holds_whole`]).
    #[serde(default)]
    pub context_holds_answer: bool,
    /// The answering LLM span (empty unless spans are recorded).
    #[serde(default)]
    pub answer_span: String,
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
    /// The run as OTLP spans (empty unless [`Config::record_spans`]).
    pub spans: otlp::SpanLog,
    /// A-Mem: each note's links (note id → linked note ids).
    pub links: std::collections::BTreeMap<String, Vec<String>>,
}

impl Run {
    /// One LLM call of the run, its usage counted.
    async fn chat<L: Llm>(
        &mut self,
        llm: &L,
        req: &ChatRequest,
    ) -> Result<ChatResponse, MemsysError> {
        let resp = llm.chat(req).await?;
        self.usage += resp.usage;
        Ok(resp)
    }

    /// The 1-based rank, in the similarity ranking top-k retrieval cuts (Mem0, NaiveRAG,
    /// A-Mem's first hop), of the best-ranked live unit holding `answer`; `None` when no unit
    /// holds it, or for EverMemOS, whose hybrid retrieval with a reranker ranks otherwise.
    ///
    /// # Complexity
    /// O(search + n) for n units.
    pub fn answer_rank(&self, system: System, question: &str, answer: &str) -> Option<usize> {
        if system == System::EverMemOs {
            return None;
        }
        let units = self.store.units();
        self.store
            .nearest(question, units.len())
            .iter()
            .position(|&(i, _)| units.get(i).is_some_and(|u| fault::holds(&u.text, answer)))
            .map(|p| p + 1)
    }

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
    let layer = cfg.system.layer_type();
    let mut info = GraphInfo::new(&conv.user_id(), layer);
    info.metadata.insert("layer_type".into(), json!(layer));
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
        spans: otlp::SpanLog::new(
            cfg.record_spans && rec.is_enabled(),
            cfg.seed,
            &cfg.start_time,
        ),
        ..Run::default()
    };
    let job = Job {
        llm,
        conv,
        prompts,
        cfg,
        faults,
        rec,
    };
    match cfg.system {
        System::Mem0 => pipeline::construct(&job, &mut run).await?,
        System::NaiveRag => naiverag::construct(conv, cfg, faults, rec, &mut run),
        System::EverMemOs => evermemos::construct(&job, &mut run).await?,
        System::AMem => amem::construct(&job, &mut run).await?,
    }
    evaluate::evaluate(&job, questions, &mut run).await?;
    Ok(run)
}

/// What every stage of a run reads: the model, the conversation, the prompts, the settings, the
/// faults to inject and the recorder.
struct Job<'a, L> {
    llm: &'a L,
    conv: &'a Conversation,
    prompts: &'a Prompts,
    cfg: &'a Config,
    faults: &'a [Fault],
    rec: &'a Recorder,
}

/// A MemTraceBench annotation for a failed question.
pub fn annotation(
    result: &QuestionResult,
    query: &str,
    gold: &str,
    fault: &Fault,
    op_id: &str,
) -> Value {
    annotation_of(
        (
            &result.query_id,
            query,
            gold,
            &result.golden_answers_id,
            &result.prediction,
            &result.prediction_id,
        ),
        &result.evidence_ids,
        fault.error_type(),
        op_id,
    )
}

/// A MemTraceBench annotation from `(query id, query, gold, gold id, prediction, prediction
/// id)`, the evidence message ids, the error type and the op.
pub fn annotation_of(
    (query_id, query, gold, gold_id, prediction, prediction_id): (
        &str,
        &str,
        &str,
        &str,
        &str,
        &str,
    ),
    evidence: &[String],
    kind: ErrorType,
    op_id: &str,
) -> Value {
    json!({
        "query_id": query_id,
        "query": query,
        "golden_answers": [gold],
        "golden_answers_id": gold_id,
        "prediction": prediction,
        "prediction_id": prediction_id,
        "source_evidence_ids": evidence,
        "final_error_type": kind.as_str(),
        "final_op_id": op_id,
    })
}
