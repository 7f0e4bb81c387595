//! One conversation's run in the closed loop: the reference memory system with the loop's
//! prompts and settings, every question's verdict, and for a training conversation its
//! failures attributed (info-flow), mapped to prompts and, for RetrievalErrors, to the settings
//! evidence ([`Miss`]: the rank the answer's unit had).

use std::collections::BTreeMap;

use super::{LoopError, LoopState, Tally};
use crate::Conversation;
use memtrace::format::{load, LoadOptions};
use memtrace::model::ErrorType;
use memtrace::optimize::compare::AnsweredQuestion;
use memtrace::optimize::settings::{self, Miss};
use memtrace::optimize::targets::{map_failure, Failure, Mapped};
use memtrace::provider::{Llm, Usage};

/// What one conversation's run gave.
#[derive(Default)]
pub(super) struct RunOutcome {
    pub(super) tally: Tally,
    pub(super) failures: Vec<Failure>,
    pub(super) misses: Vec<Miss>,
    pub(super) verdicts: Vec<AnsweredQuestion>,
    pub(super) by_type: BTreeMap<String, usize>,
    pub(super) not_optimizable: usize,
    pub(super) unattributed: usize,
    pub(super) usage: Usage,
}

pub(super) async fn run_conversation<S: Llm>(
    state: &LoopState,
    conv: &Conversation,
    conv_ix: usize,
    is_train: bool,
    system: &S,
) -> Result<RunOutcome, LoopError> {
    let cfg = &state.config;
    let sys_err = |message: String| LoopError::System {
        conversation: conv_ix,
        message,
    };
    let memsys_cfg =
        crate::settings::apply(&cfg.memsys, &state.settings).map_err(LoopError::Config)?;
    let questions: Vec<usize> = conv
        .questions
        .iter()
        .enumerate()
        .filter(|(_, q)| cfg.categories.is_empty() || cfg.categories.contains(&q.category))
        .map(|(i, _)| i)
        .collect();
    let rec = crate::recorder_for(conv, &memsys_cfg, is_train);
    let run = crate::run(
        system,
        conv,
        &state.prompts,
        &memsys_cfg,
        &[],
        &questions,
        &rec,
    )
    .await
    .map_err(|e| sys_err(e.to_string()))?;
    let (right, total) = run.accuracy(|_| true);
    let mut out = RunOutcome {
        tally: Tally { right, total },
        usage: run.usage,
        ..RunOutcome::default()
    };
    let split = if is_train { "train" } else { "heldout" };
    out.verdicts = run
        .results
        .iter()
        .filter_map(|r| {
            let q = conv.questions.get(r.index)?;
            Some(AnsweredQuestion {
                question_id: r.question.clone(),
                conversation: conv.user_id(),
                split: split.into(),
                question: q.text.clone(),
                gold: q.answer.clone(),
                prediction: r.prediction.clone(),
                correct: r.correct,
                error_type: None,
                op_name: None,
            })
        })
        .collect();
    if !is_train || right == total {
        return Ok(out);
    }
    let trace = load(&rec.to_json(), LoadOptions::default())
        .map_err(|e| sys_err(format!("its recorded trace does not load: {e}")))?
        .trace;
    for case in &trace.cases {
        let Ok(a) = cfg.infoflow.attribute(&trace, case) else {
            out.unattributed += 1;
            continue;
        };
        *out.by_type
            .entry(a.error_type.as_str().to_owned())
            .or_default() += 1;
        let result = run.results.iter().find(|r| r.query_id == a.case_id);
        if let Some(r) = result {
            if let Some(v) = out
                .verdicts
                .iter_mut()
                .find(|v| v.question_id == r.question)
            {
                v.error_type = Some(a.error_type.as_str().to_owned());
                v.op_name = Some(a.op_name.clone());
            }
        }
        let question = result.and_then(|r| conv.questions.get(r.index));
        if let (ErrorType::RetrievalError, Some(q)) = (a.error_type, question) {
            if let Some(&value) = state.settings.get(settings::TOP_K) {
                out.misses.push(Miss {
                    setting: settings::TOP_K.to_owned(),
                    case_id: a.case_id.clone(),
                    question: q.text.clone(),
                    rank: run.answer_rank(memsys_cfg.system, &q.text, &q.answer),
                    value,
                });
            }
        }
        match map_failure(&trace, &a, &cfg.selection, cfg.optimize.render_chars) {
            Mapped::Targets(f) => out.failures.extend(f),
            Mapped::NotOptimizable { .. } => out.not_optimizable += 1,
        }
    }
    Ok(out)
}
