//! Random pipeline shapes (`bench gen --system random --seed N`): each seed draws a memory
//! system's topology, random op / variable names and categories, then injects one verified
//! fault per file for every error type the shape can have, over LoCoMo conversations.
//!
//! A shape has 1–4 stages between messages and memory (buffer, boundary decision, batch,
//! summarizer, then the store writer), one to three stores (facts, episodes, profile) kept as
//! separate units or as lists, deletes as tombstones, link-only markers or removal from a list,
//! retrieval in one or two stages (similarity, then rerank or filter), an answer with or
//! without a reflection step, and a judge that is an evaluator op, an LLM call with a prompt, a
//! graded score with threshold 0.5, or a label inside the question's output object.
//! The run itself ([`run`]) is rule-based: no LLM.

mod run;

use std::collections::BTreeSet;

use memtrace::model::ErrorType;
use memtrace::util::rng::SplitMix64;

use super::bench::{finish_file, windows, BenchFile, BenchReport};
use super::fault::holds_whole;
use super::locomo::Conversation;
use super::{annotation_of, MemsysError};
use run::{simulate, Plan};

use std::sync::Arc;

use memtrace_record::{GraphInfo, Recorder, SteppingClock};
use serde_json::json;

/// A stage between the messages and memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Messages accumulate in a buffer variable (one version per step).
    Buffer,
    /// Reads the buffer and writes only a decision (flush or wait).
    Boundary,
    /// Groups messages into one batch value.
    Batch,
    /// Writes a summary (an episode) restating the messages.
    Summarize,
}

/// How a deleted memory shows in the trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delete {
    /// A new version of the unit, its text gone and a deleted flag set.
    Tombstone,
    /// Only a marker naming the unit; the unit itself never changes.
    LinkOnly,
    /// A new version of the store's list without the item.
    ListRemoval,
}

/// A retrieval stage after the first (similarity) one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Second {
    Rerank,
    Filter,
}

/// How the judge is recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Judge {
    /// An evaluator op writing a label.
    Evaluator,
    /// An LLM call reading a judge prompt, writing a sentence with the label.
    Llm,
    /// A score in 0..1; below 0.5 fails.
    Graded,
    /// The label sits in an object holding the question, the prediction and the label.
    Label,
}

/// A drawn memory-system topology with its names.
#[derive(Debug, Clone)]
pub struct Shape {
    /// Stages before the writer (the writer is always last).
    pub stages: Vec<Stage>,
    /// Stores written: 0 facts (one item per message), 1 episodes (one per flush), 2 profile.
    pub stores: Vec<usize>,
    /// Stores are list variables (else one variable per unit).
    pub lists: bool,
    /// Updates and deletes happen (a consolidation step after each flush).
    pub consolidates: bool,
    pub delete: Delete,
    pub second: Option<Second>,
    pub reflect: bool,
    pub judge: Judge,
    /// Per-seed names of ops, variables and categories.
    pub names: Names,
}

/// Random names: `token(kind)` is stable for a seed.
#[derive(Debug, Clone)]
pub struct Names {
    tokens: std::collections::BTreeMap<&'static str, String>,
    cats: std::collections::BTreeMap<&'static str, String>,
}

const SYL: [&str; 16] = [
    "ka", "ro", "mi", "tev", "lu", "zan", "po", "ish", "dra", "ne", "vo", "qui", "sel", "bor",
    "fa", "gim",
];

fn word(rng: &mut SplitMix64) -> String {
    let n = 2 + rng.below(2);
    (0..n).map(|_| SYL[rng.below(SYL.len())]).collect()
}

/// Category pools per role; search-like ops keep a category that says so (a span kind).
const CATS: [(&str, &[&str]); 14] = [
    ("message", &["message", "input", "chat_turn", "event"]),
    ("query", &["message & query", "query", "request", "input"]),
    (
        "gold",
        &["golden_answers", "reference", "expected", "label_data"],
    ),
    ("prompt", &["prompt", "template", "instruction", "config"]),
    ("memory", &["memory", "record", "state", "document"]),
    ("data", &["variable", "data", "value", "intermediate"]),
    (
        "output",
        &["llm_response", "output", "completion", "result"],
    ),
    (
        "ingest",
        &["construction", "ingest", "pipeline", "processing"],
    ),
    ("write", &["memory_write", "store", "upsert", "add"]),
    (
        "maintain",
        &["update", "maintenance", "consolidation", "curation"],
    ),
    (
        "search",
        &["retrieval", "search", "memory_search", "retriever"],
    ),
    (
        "second",
        &["rerank", "reranking", "retrieval_filter", "search_filter"],
    ),
    ("answer", &["generation", "llm", "chat", "evaluation"]),
    ("judge", &["evaluation", "eval", "scoring", "grader"]),
];

impl Names {
    fn draw(rng: &mut SplitMix64) -> Names {
        let mut tokens = std::collections::BTreeMap::new();
        let mut used = BTreeSet::new();
        for kind in [
            "msg", "buffer", "boundary", "batch", "summary", "writer", "facts", "episodes",
            "profile", "maintain", "decision", "marker", "query", "gold", "search", "hits",
            "second", "top", "answer", "pred", "draft", "reflect", "judge", "verdict", "prompt",
            "jprompt", "text", "mem", "project", "session",
        ] {
            let mut w = word(rng);
            while !used.insert(w.clone()) {
                w.push_str(SYL[rng.below(SYL.len())]);
            }
            tokens.insert(kind, w);
        }
        let cats = CATS
            .iter()
            .map(|(k, pool)| (*k, pool[rng.below(pool.len())].to_owned()))
            .collect();
        Names { tokens, cats }
    }

    /// The seed's token for `kind`.
    pub fn token(&self, kind: &str) -> &str {
        self.tokens.get(kind).map_or("x", String::as_str)
    }

    /// The seed's category for the role `kind`.
    pub fn cat(&self, kind: &str) -> &str {
        self.cats.get(kind).map_or("variable", String::as_str)
    }
}

impl Shape {
    /// The shape of `seed`.
    pub fn draw(seed: u64) -> Shape {
        let mut rng = SplitMix64::new(seed ^ 0x5a4e_5348_4150_4553);
        let n = rng.below(4);
        let mut stages = Vec::new();
        for _ in 0..n {
            let s = match rng.below(4) {
                0 => Stage::Buffer,
                1 => Stage::Boundary,
                2 => Stage::Batch,
                _ => Stage::Summarize,
            };
            if s == Stage::Boundary && !stages.contains(&Stage::Buffer) {
                stages.push(Stage::Buffer);
            }
            if !stages.contains(&s) {
                stages.push(s);
            }
        }
        stages.truncate(3);
        let mut stores: Vec<usize> = (0..3).filter(|_| rng.chance(50)).collect();
        if stores.is_empty() {
            stores.push(rng.below(3));
        }
        let lists = rng.chance(35);
        let consolidates = rng.chance(75);
        let delete = if lists {
            Delete::ListRemoval
        } else if rng.chance(50) {
            Delete::Tombstone
        } else {
            Delete::LinkOnly
        };
        let second = match rng.below(3) {
            0 => Some(Second::Rerank),
            1 => Some(Second::Filter),
            _ => None,
        };
        let reflect = rng.chance(40);
        let judge = match rng.below(4) {
            0 => Judge::Evaluator,
            1 => Judge::Llm,
            2 => Judge::Graded,
            _ => Judge::Label,
        };
        let names = Names::draw(&mut rng);
        Shape {
            stages,
            stores,
            lists,
            consolidates,
            delete,
            second,
            reflect,
            judge,
            names,
        }
    }

    /// The error types this shape can have: updates and deletes only with a consolidation step.
    pub fn error_types(&self) -> Vec<ErrorType> {
        let mut out = vec![ErrorType::ExtractionError];
        if self.consolidates {
            out.push(ErrorType::UpdateError);
            out.push(ErrorType::DeletionError);
        }
        out.extend([
            ErrorType::RetrievalError,
            ErrorType::ResponseError,
            ErrorType::LlmAsAJudgeError,
        ]);
        out
    }

    /// One line saying what was drawn.
    pub fn describe(&self) -> String {
        format!(
            "stages {:?} + writer, stores {:?}{}, consolidates {}, delete {:?}, second {:?}, reflect {}, judge {:?}",
            self.stages,
            self.stores,
            if self.lists { " as lists" } else { "" },
            self.consolidates,
            self.delete,
            self.second,
            self.reflect,
            self.judge
        )
    }
}

/// Question indices of `conv` whose answer one evidence message states whole.
fn answerable(conv: &Conversation) -> Vec<usize> {
    let text_of = |dia: &str| {
        conv.sessions
            .iter()
            .flat_map(|s| &s.turns)
            .find(|t| t.dia_id == dia)
            .map(|t| t.text.clone())
    };
    conv.questions
        .iter()
        .enumerate()
        .filter(|(_, q)| matches!(q.category, 1 | 2 | 4))
        .filter(|(_, q)| {
            q.evidence
                .iter()
                .any(|e| text_of(e).is_some_and(|t| holds_whole(&t, &q.answer)))
        })
        .map(|(i, _)| i)
        .collect()
}

/// Generates the files of one random shape: one file per error type the shape can have
/// (fewer when a window gives no place for one), each with one verified fault and the other
/// questions the faulty run still answers right.
///
/// # Errors
/// A generated file that does not load.
pub fn generate(conversations: &[Conversation], seed: u64) -> Result<BenchReport, MemsysError> {
    if conversations.is_empty() {
        return Err(MemsysError::Input("no conversations given".into()));
    }
    let shape = Shape::draw(seed);
    let mut rng = SplitMix64::new(seed);
    let mut wins = windows(conversations, 2);
    rng.shuffle(&mut wins);
    let mut report = BenchReport::default();
    let mut todo = shape.error_types();
    for (ci, from, to) in wins {
        if todo.is_empty() {
            break;
        }
        let Some(full) = conversations.get(ci) else {
            continue;
        };
        let conv = full.window(from, to);
        let mut qs = answerable(&conv);
        if qs.len() < 2 {
            continue;
        }
        rng.shuffle(&mut qs);
        qs.truncate(6);
        let mut left = Vec::new();
        for kind in todo {
            report.planned += 1;
            let plan = Plan {
                kind,
                target: qs[rng.below(qs.len())],
                pick: rng.next_u64(),
            };
            let name = format!(
                "random_s{seed}_{}_{}-s{from}.json",
                kind.as_str(),
                conv.user
            );
            match run_file(&shape, &conv, &plan, &qs, seed, &name)? {
                Some(f) => report.add(f),
                None => left.push(kind),
            }
        }
        todo = left;
    }
    Ok(report)
}

fn recorder(shape: &Shape, seed: u64, on: bool) -> Recorder {
    if !on {
        return Recorder::disabled();
    }
    let mut info = GraphInfo::new(shape.names.token("session"), shape.names.token("project"));
    info.metadata.insert(
        "trace_source".into(),
        json!("memtrace bench gen --system random (rule-based, not an LLM)"),
    );
    info.metadata
        .insert("shape".into(), json!(shape.describe()));
    Recorder::new(
        info,
        Arc::new(SteppingClock::starting_at("2026-01-01 00:00:00.000", 1)),
        seed,
    )
}

/// Runs `plan` on `conv` over the questions `qs` and writes the file when the fault is
/// verified: the target was right without it and is wrong with it, the fault touched an op,
/// a memory fault left no retrieved memory holding the answer, and every other kept question
/// stays right. `None` otherwise.
///
/// # Errors
/// The recorded file does not load.
pub fn run_file(
    shape: &Shape,
    conv: &Conversation,
    plan: &Plan,
    qs: &[usize],
    seed: u64,
    name: &str,
) -> Result<Option<BenchFile>, MemsysError> {
    let off = recorder(shape, seed, false);
    let clean = simulate(shape, conv, None, qs, &off);
    let right: Vec<usize> = clean
        .results
        .iter()
        .filter(|r| r.correct)
        .map(|r| r.qi)
        .collect();
    if !right.contains(&plan.target) {
        return Ok(None);
    }
    let faulty = simulate(shape, conv, Some(plan), &right, &off);
    let Some(t) = faulty.results.iter().find(|r| r.qi == plan.target) else {
        return Ok(None);
    };
    let memory = !matches!(
        plan.kind,
        ErrorType::ResponseError | ErrorType::LlmAsAJudgeError
    );
    if faulty.fault_op.is_none() || t.correct || (memory && t.context_holds) {
        return Ok(None);
    }
    let keep: Vec<usize> = faulty
        .results
        .iter()
        .filter(|r| r.qi == plan.target || r.correct)
        .map(|r| r.qi)
        .collect();
    let rec = recorder(shape, seed, true);
    let out = simulate(shape, conv, Some(plan), &keep, &rec);
    let (Some(op_id), Some(r)) = (
        out.fault_op.clone(),
        out.results.iter().find(|r| r.qi == plan.target),
    ) else {
        return Ok(None);
    };
    if r.correct || out.results.iter().filter(|r| !r.correct).count() != 1 {
        return Ok(None);
    }
    let Some(q) = conv.questions.get(plan.target) else {
        return Ok(None);
    };
    let evidence: Vec<String> = q
        .evidence
        .iter()
        .filter_map(|e| out.evidence.get(e).cloned())
        .collect();
    let ann = annotation_of(
        (
            &r.query_id,
            &q.text,
            &q.answer,
            &r.gold_id,
            &r.prediction,
            &r.prediction_id,
        ),
        &evidence,
        plan.kind,
        &op_id,
    );
    let Some(graph) = rec.export() else {
        return Ok(None);
    };
    let cases = vec![(plan.kind, op_id, r.query_id.clone())];
    finish_file(graph, vec![ann], name, cases).map(Some)
}
