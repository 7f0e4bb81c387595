//! The benchmark generator: MemTraceBench-format files with injected, verified faults.
//!
//! For each window of a conversation (a few sessions), the clean pipeline answers the
//! questions whose evidence lies in the window. Faults are planned for questions it answered
//! right, one question each; a fault is kept only when (a) the run with all kept faults answers
//! its question wrong, (b) the same run without that one fault answers it right, and (c) the
//! fault touched an operation. The injected op is then the earliest decisive faulty op by
//! construction: every op upstream of it is the clean run's. Other questions are kept in the
//! file only when the faulty run still answers them right, so every failure is annotated.

mod multi;

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};

use super::bench_otlp::{self, Picked};
use super::fault::{holds_whole, Fault};
use super::locomo::Conversation;
use super::record::pair_of;
use super::{
    annotation, recorder_for, run, Config, MemsysError, Prompts, QuestionResult, Run, System,
};
use memtrace::model::ErrorType;
use memtrace::provider::Llm;
use memtrace::util::rng::SplitMix64;

/// `decisive_set_kind` of a multi-fault annotation: each fault alone breaks the answer, so
/// repairing any proper subset of the set does not rescue it.
pub const EACH_BREAKS_ALONE: &str = "each-breaks-alone";

/// Settings of a generation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BenchOptions {
    /// Cases wanted per error type.
    pub per_type: usize,
    pub seed: u64,
    /// Sessions per file (a window of the conversation).
    pub sessions_per_file: usize,
    /// At most this many faults of one type in one file.
    pub per_type_per_file: usize,
    /// LoCoMo question categories used as targets and kept questions.
    pub categories: Vec<u8>,
    /// Where the files say they came from.
    pub source: String,
    /// Which memory system runs.
    pub system: System,
    /// What the files hold.
    pub format: BenchFormat,
    /// Faults per annotated case: 1, or 2–3 for multi-fault cases (reference memory system,
    /// smartcomment only; see [`multi`]); then `per_type` is the cases wanted
    /// in all.
    pub faults: usize,
}

impl Default for BenchOptions {
    fn default() -> Self {
        Self {
            per_type: 20,
            seed: 0,
            sessions_per_file: 3,
            per_type_per_file: 2,
            categories: vec![1, 2, 3, 4],
            source: "memtrace bench gen".into(),
            system: System::Mem0,
            format: BenchFormat::Smartcomment,
            faults: 1,
        }
    }
}

/// One generated file.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchFile {
    /// File name, e.g. `locomo_locomo-1-s1-3.json` (`.jsonl` for OTLP).
    pub name: String,
    /// smartcomment JSON with `data.annotations`, or OTLP JSON Lines.
    pub bytes: Vec<u8>,
    /// `(error type, op id, query id)` of each annotation.
    pub cases: Vec<(ErrorType, String, String)>,
    /// OTLP only: the annotations sidecar (`<stem>.annotations.json`).
    pub sidecar: Option<Vec<u8>>,
}

/// What a generated file holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum BenchFormat {
    /// MemTraceBench smartcomment JSON with `data.annotations`.
    #[default]
    Smartcomment,
    /// OTLP JSON Lines as an instrumented app emits them, plus an annotations sidecar.
    Otlp,
}

/// What a generation produced.
#[derive(Debug, Clone, Default)]
pub struct BenchReport {
    pub files: Vec<BenchFile>,
    /// Annotated cases per error type.
    pub per_type: BTreeMap<ErrorType, usize>,
    /// Faults planned, and kept after verification.
    pub planned: usize,
    pub kept: usize,
}

impl BenchReport {
    /// Counts a written file's cases and keeps it.
    pub(crate) fn add(&mut self, file: BenchFile) {
        for (t, _, _) in &file.cases {
            *self.per_type.entry(*t).or_insert(0) += 1;
        }
        self.kept += file.cases.len();
        self.files.push(file);
    }
}

/// A fault of `kind` for the question at `qi`, placed after its evidence; `None` when the
/// conversation gives no place for it (e.g. no later pair with facts).
pub fn plan_fault(
    kind: ErrorType,
    conv: &Conversation,
    qi: usize,
    clean: &Run,
    rng: &mut SplitMix64,
) -> Option<Fault> {
    let q = conv.questions.get(qi)?;
    let answer = q.answer.clone();
    let evidence_pair = q.evidence.iter().filter_map(|e| pair_of(conv, e)).max()?;
    let later: Vec<usize> = clean
        .pairs_with_facts
        .range(evidence_pair + 1..)
        .copied()
        .collect();
    match kind {
        ErrorType::ExtractionError => Some(Fault::Extraction {
            pair: evidence_pair,
            answer,
            garble: rng.below(2) == 1,
        }),
        ErrorType::UpdateError => later
            .get(rng.below(later.len()))
            .map(|&pair| Fault::Update {
                pair,
                answer,
                unit: None,
            }),
        ErrorType::DeletionError => {
            later
                .get(rng.below(later.len()))
                .map(|&pair| Fault::Deletion {
                    pair,
                    answer,
                    unit: None,
                })
        }
        ErrorType::RetrievalError => Some(Fault::Retrieval {
            question: q.id.clone(),
            answer,
        }),
        ErrorType::ResponseError => Some(Fault::Response {
            question: q.id.clone(),
            answer,
        }),
        ErrorType::AnnotationError | ErrorType::LlmAsAJudgeError => None,
    }
}

pub(super) fn wrong_in(run: &Run, question: &str) -> bool {
    run.results
        .iter()
        .any(|r| r.question == question && !r.correct)
}

/// True when a unit retrieved for `question` still states its whole answer.
fn still_held(run: &Run, question: &str) -> bool {
    run.results
        .iter()
        .any(|r| r.question == question && r.context_holds_answer)
}

pub(super) fn right_in(run: &Run, question: &str) -> bool {
    run.results
        .iter()
        .any(|r| r.question == question && r.correct)
}

/// Verifies planned faults (`(fault, target question index)`) on `conv` and records the
/// file. Returns `None` when no fault survives verification.
///
/// # Errors
/// The provider's error, or [`MemsysError::Input`] if the recorded file does not load.
pub async fn build_file<L: Llm>(
    llm: &L,
    conv: &Conversation,
    prompts: &Prompts,
    cfg: &Config,
    plan: Vec<(Fault, usize)>,
    questions: &[usize],
    name: &str,
) -> Result<Option<BenchFile>, MemsysError> {
    let off = recorder_for(conv, cfg, false);
    let mut kept: Vec<(Fault, usize)> = plan;
    // Shrink the set until every kept fault is decisive for its own question alone.
    for _round in 0..4 {
        if kept.is_empty() {
            return Ok(None);
        }
        let faults: Vec<Fault> = kept.iter().map(|(f, _)| f.clone()).collect();
        let all = run(llm, conv, prompts, cfg, &faults, questions, &off).await?;
        let mut survivors = Vec::new();
        for (k, (f, qi)) in kept.iter().enumerate() {
            let Some(q) = conv.questions.get(*qi) else {
                continue;
            };
            if all.applied.get(k).is_none_or(Option::is_none) || !wrong_in(&all, &q.id) {
                continue;
            }
            // A memory fault must take the answer out of what the answer op reads: when a
            // retrieved memory still states it all, the answer op failed, not the memory.
            let memory_fault = !matches!(f, Fault::Response { .. });
            if memory_fault && still_held(&all, &q.id) {
                continue;
            }
            let rest: Vec<Fault> = faults
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != k)
                .map(|(_, f)| f.clone())
                .collect();
            let without = run(llm, conv, prompts, cfg, &rest, &[*qi], &off).await?;
            if right_in(&without, &q.id) {
                survivors.push((f.clone(), *qi));
            }
        }
        if survivors.len() == kept.len() {
            break;
        }
        kept = survivors;
    }
    let groups: Vec<(Vec<Fault>, usize)> = kept.into_iter().map(|(f, qi)| (vec![f], qi)).collect();
    write_file(llm, conv, prompts, cfg, &groups, questions, name).await
}

/// Records the file of verified fault groups (`(faults, target question index)`; a group of
/// several faults is one multi-fault case): the target questions and the `questions` the
/// faulty run still answers right. Each group's annotation names its first fault's op; a group
/// of several also lists every fault's op (`decisive_op_ids`, see `docs/multi-fault.md`).
/// `None` when a group's fault touched no op or another question fails.
///
/// # Errors
/// The provider's error, or [`MemsysError::Input`] if the recorded file does not load or
/// multi-fault groups are asked for as OTLP.
pub(super) async fn write_file<L: Llm>(
    llm: &L,
    conv: &Conversation,
    prompts: &Prompts,
    cfg: &Config,
    groups: &[(Vec<Fault>, usize)],
    questions: &[usize],
    name: &str,
) -> Result<Option<BenchFile>, MemsysError> {
    if groups.is_empty() {
        return Ok(None);
    }
    let multi = groups.iter().any(|(g, _)| g.len() > 1);
    if multi && cfg.record_spans {
        return Err(MemsysError::Input(
            "multi-fault cases are written as smartcomment files only; drop --format otlp".into(),
        ));
    }
    let faults: Vec<Fault> = groups.iter().flat_map(|(g, _)| g.iter().cloned()).collect();
    let target_set: BTreeSet<usize> = groups.iter().map(|(_, qi)| *qi).collect();
    let off = recorder_for(conv, cfg, false);
    let probe = run(llm, conv, prompts, cfg, &faults, questions, &off).await?;
    let mut final_qs: Vec<usize> = questions
        .iter()
        .copied()
        .filter(|qi| {
            target_set.contains(qi)
                || conv
                    .questions
                    .get(*qi)
                    .is_some_and(|q| right_in(&probe, &q.id))
        })
        .collect();
    final_qs.sort_unstable();
    let rec = recorder_for(conv, cfg, true);
    let result = run(llm, conv, prompts, cfg, &faults, &final_qs, &rec).await?;
    // Per group: its faults' ops (in fault order), its question and result.
    let mut picked = Vec::new();
    let mut sets: Vec<Vec<&str>> = Vec::new();
    let mut k0 = 0;
    for (g, qi) in groups {
        let ops: Vec<&str> = (k0..k0 + g.len())
            .filter_map(|k| result.applied.get(k).and_then(Option::as_deref))
            .collect();
        k0 += g.len();
        let Some(q) = conv.questions.get(*qi) else {
            continue;
        };
        let (Some(fault), Some(&op_id)) = (g.first(), ops.first()) else {
            continue;
        };
        let Some(r) = result
            .results
            .iter()
            .find(|r| r.question == q.id && !r.correct)
        else {
            continue;
        };
        if ops.len() != g.len() {
            continue;
        }
        picked.push(Picked {
            fault,
            op_id,
            question: q,
            result: r,
        });
        sets.push(ops);
    }
    let failures = result.results.iter().filter(|r| !r.correct).count();
    if failures != picked.len() || picked.is_empty() {
        return Ok(None);
    }
    if cfg.record_spans {
        let name = name.replace(".json", ".jsonl");
        let (bytes, sidecar, ids) =
            bench_otlp::export(conv, &result, &picked, cfg.system.name(), &name)?;
        let cases = picked
            .iter()
            .zip(ids)
            .map(|(p, (op, q))| (p.fault.error_type(), op, q))
            .collect();
        return Ok(Some(BenchFile {
            name,
            bytes,
            cases,
            sidecar: Some(sidecar),
        }));
    }
    let annotations: Vec<Value> = picked
        .iter()
        .zip(&sets)
        .map(|(p, set)| {
            let mut a = annotation(
                p.result,
                &p.question.text,
                &p.question.answer,
                p.fault,
                p.op_id,
            );
            if set.len() > 1 {
                if let Some(o) = a.as_object_mut() {
                    o.insert("decisive_op_ids".into(), json!(set));
                    o.insert("decisive_set_kind".into(), json!(EACH_BREAKS_ALONE));
                }
            }
            a
        })
        .collect();
    let cases = picked
        .iter()
        .map(|p| {
            (
                p.fault.error_type(),
                p.op_id.to_owned(),
                p.result.query_id.clone(),
            )
        })
        .collect();
    let Some(mut graph) = rec.export() else {
        return Ok(None);
    };
    if let Some(meta) = graph.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.insert("memtracebench_graph_filename".into(), json!(name));
        meta.insert("memtracebench_dataset_source".into(), json!(conv.dataset));
    }
    finish_file(graph, annotations, name, cases).map(Some)
}

/// The smartcomment file of a recorded `graph` with its `annotations`, checked to load.
///
/// # Errors
/// [`MemsysError::Input`] if the file does not load.
pub(crate) fn finish_file(
    mut graph: Value,
    annotations: Vec<Value>,
    name: &str,
    cases: Vec<(ErrorType, String, String)>,
) -> Result<BenchFile, MemsysError> {
    if let Some(data) = graph.get_mut("data").and_then(Value::as_object_mut) {
        data.insert("annotations".into(), Value::from(annotations));
    }
    let bytes = memtrace_record::to_json_bytes(&graph);
    memtrace::format::load(&bytes, memtrace::format::LoadOptions::default())
        .map_err(|e| MemsysError::Input(format!("the generated file {name} does not load: {e}")))?;
    Ok(BenchFile {
        name: name.to_owned(),
        bytes,
        cases,
        sidecar: None,
    })
}

/// The session windows of `step` sessions each, as `(conversation index, first session, end)`,
/// the first window of every conversation, then the second of each, and so on.
pub(crate) fn windows(conversations: &[Conversation], step: usize) -> Vec<(usize, usize, usize)> {
    let step = step.max(1);
    let longest = conversations
        .iter()
        .map(|c| c.sessions.len())
        .max()
        .unwrap_or(0);
    let mut out = Vec::new();
    for w in 0..longest.div_ceil(step) {
        for (ci, c) in conversations.iter().enumerate() {
            let from = 1 + w * step;
            if from <= c.sessions.iter().map(|s| s.number).max().unwrap_or(0) {
                out.push((ci, from, from + step));
            }
        }
    }
    out
}

/// A window ready for faults: its conversation, its config, the clean run and the questions
/// that run answered right (shuffled).
pub(super) struct Window {
    pub conv: Conversation,
    pub cfg: Config,
    pub clean: Run,
    pub right: Vec<usize>,
}

/// Runs the window `(conversation index, first session, end)` without faults; `None` when it
/// has no question of the chosen categories.
pub(super) async fn clean_window<L: Llm>(
    llm: &L,
    prompts: &Prompts,
    conversations: &[Conversation],
    (ci, from, to): (usize, usize, usize),
    opts: &BenchOptions,
    rng: &mut SplitMix64,
) -> Result<Option<Window>, MemsysError> {
    let Some(full) = conversations.get(ci) else {
        return Ok(None);
    };
    let conv = full.window(from, to);
    let questions: Vec<usize> = conv
        .questions
        .iter()
        .enumerate()
        .filter(|(_, q)| opts.categories.contains(&q.category))
        .map(|(i, _)| i)
        .collect();
    if questions.is_empty() {
        return Ok(None);
    }
    let cfg = Config {
        system: opts.system,
        record_spans: opts.format == BenchFormat::Otlp,
        seed: opts.seed ^ ((ci as u64) << 32) ^ from as u64,
        source: opts.source.clone(),
        ..Config::default()
    };
    let off = recorder_for(&conv, &cfg, false);
    let clean = run(llm, &conv, prompts, &cfg, &[], &questions, &off).await?;
    // A fault must turn a right answer wrong: one the judge passes although it holds only part
    // of the gold answer ("grace" for "They look graceful") is right by luck, not a target.
    let whole = |r: &QuestionResult| {
        conv.questions
            .get(r.index)
            .is_some_and(|q| holds_whole(&r.prediction, &q.answer))
    };
    let mut right: Vec<usize> = clean
        .results
        .iter()
        .filter(|r| r.correct && whole(r))
        .map(|r| r.index)
        .collect();
    rng.shuffle(&mut right);
    Ok(Some(Window {
        conv,
        cfg,
        clean,
        right,
    }))
}

/// Generates files until every error type has `per_type` verified cases (or the windows run
/// out).
///
/// # Errors
/// The provider's error, or a generated file that does not load.
pub async fn generate<L: Llm>(
    llm: &L,
    conversations: &[Conversation],
    opts: &BenchOptions,
) -> Result<BenchReport, MemsysError> {
    if opts.faults > 1 {
        return multi::generate(llm, conversations, opts).await;
    }
    let prompts = Prompts::default();
    let mut rng = SplitMix64::new(opts.seed);
    let mut report = BenchReport::default();
    let kinds = opts.system.error_types();
    for (ci, from, to) in windows(conversations, opts.sessions_per_file) {
        if kinds
            .iter()
            .all(|t| report.per_type.get(t).copied().unwrap_or(0) >= opts.per_type)
        {
            break;
        }
        let Some(w) =
            clean_window(llm, &prompts, conversations, (ci, from, to), opts, &mut rng).await?
        else {
            continue;
        };
        let Window {
            conv,
            cfg,
            clean,
            right,
        } = w;
        let mut plan = Vec::new();
        let mut used = BTreeSet::new();
        for &kind in &kinds {
            let need = opts
                .per_type
                .saturating_sub(report.per_type.get(&kind).copied().unwrap_or(0))
                .min(opts.per_type_per_file);
            let mut placed = 0;
            for &qi in &right {
                if placed == need {
                    break;
                }
                if used.contains(&qi) {
                    continue;
                }
                if let Some(f) = plan_fault(kind, &conv, qi, &clean, &mut rng) {
                    plan.push((f, qi));
                    used.insert(qi);
                    placed += 1;
                }
            }
        }
        report.planned += plan.len();
        let kept: Vec<usize> = right.clone();
        let name = format!("locomo_{}-s{from}-{}.json", conv.user_id(), to - 1);
        if let Some(file) = build_file(llm, &conv, &prompts, &cfg, plan, &kept, &name).await? {
            report.add(file);
        }
    }
    Ok(report)
}
