//! The counterfactual check of a verdict: correct the blamed op's output, replay what lies
//! downstream of it up to the answer, and see whether the answer is rescued. Shown beside the
//! verdict as "verified / refuted / not replayable" (the core's [`Check`] and [`Outcome`]).
//!
//! Generic replay (any trace whose answer op's inputs are recorded):
//! - verdict on the **answer op**: it is re-run correctly (through the [`Llm`]) on its recorded
//!   inputs; verified when that rescues the answer (the inputs were sufficient);
//! - verdict on an op whose outputs feed the answer op (retrieval): when its recorded output
//!   already suffices for a correct answer step, the fault is downstream (refuted); else its
//!   output is corrected by
//!   adding the memory versions alive at question time that carry the evidence, and the answer
//!   call is replayed through an [`Llm`] with the recorded prompt and question (the reference
//!   memory system's request layout, so the simulated provider answers it), then judged by the
//!   same [`Llm`];
//! - ops further upstream (extraction, update, deletion): when the answer step re-run on its
//!   recorded inputs already rescues the answer, the fault is downstream (refuted); else, for
//!   traces of the reference memory system, the op is re-run and the memory pipeline after it
//!   replayed ([`crate::replay`]); other systems' memory ops are not replayable.

use std::collections::BTreeMap;

use memtrace::algo::answer_op;
use memtrace::attribution::counterfactual::{Check, Outcome};
use memtrace::attribution::roles::{RoleConfig, Roles};
use memtrace::attribution::text::{var_text, Key};
use memtrace::model::{FailureCase, OpIx, Trace, VarIx};
use memtrace::provider::{Llm, ProviderError, Usage};

use crate::answer_step::{answer_inputs, Replay};

/// Share of the evidence key a text must hold to count as carrying it.
const CARRY: f64 = 0.6;
/// Least share of the key a memory must hold to be offered to the replay at all.
const CANDIDATE: f64 = 0.3;
/// Weak candidates offered when no memory carries the key fully.
const MAX_WEAK: usize = 3;

/// Checks a verdict naming `op_id` for `case`; `llm` stands in for the memory system's
/// answering model during the replay.
///
/// # Errors
/// The provider's error during a replay.
///
/// # Complexity
/// O(V + E) plus one LLM call when a replay runs.
pub async fn check<L: Llm>(
    llm: &L,
    trace: &Trace,
    case: &FailureCase,
    op_id: &str,
) -> Result<Check, ProviderError> {
    let roles = Roles::infer(trace, &RoleConfig::default());
    check_with(llm, trace, &roles, case, op_id).await
}

/// As [`check`], with the ops' roles (the user's overrides applied) for the replay.
///
/// # Errors
/// The provider's error during a replay.
pub async fn check_with<L: Llm>(
    llm: &L,
    trace: &Trace,
    roles: &Roles,
    case: &FailureCase,
    op_id: &str,
) -> Result<Check, ProviderError> {
    let Some(op) = trace.op_by_id(op_id) else {
        return Ok(Check::new(
            Outcome::NotReplayable,
            format!("no operation {op_id} in the trace"),
        ));
    };
    let Some(answer) = answer_op(trace, case) else {
        return Ok(Check::new(
            Outcome::NotReplayable,
            "the case has no answer operation",
        ));
    };
    let key = evidence_key(trace, case);
    let query = trace.var_by_id(&case.query_id);
    let (prompts_used, context) = answer_inputs(trace, case, answer);
    let replay = Replay {
        llm,
        trace,
        case,
        prompts: &prompts_used,
    };
    // The answer step re-run correctly on its recorded inputs.
    let (as_recorded, answer0, mut usage) = replay.run(&context).await?;
    if op == answer {
        let mut c = if as_recorded {
            Check::new(Outcome::Verified, "re-run on its recorded inputs, the answer step gives the gold answer: the inputs were sufficient")
        } else {
            Check::new(Outcome::Refuted, "re-run on its recorded inputs, the answer step still fails: the inputs lacked the evidence")
        };
        c.replayed_answer = Some(answer0);
        c.usage = usage;
        return Ok(c);
    }
    let outputs: Vec<VarIx> = trace.flow.op_produced(op).collect();
    // A retrieval step: it reads the question and its outputs are the answer step's context.
    let feeds_answer = outputs.iter().any(|v| context.contains(v))
        && trace
            .flow
            .op_inputs
            .get(op.get())
            .is_some_and(|ins| ins.iter().any(|v| Some(*v) == query));
    if !feeds_answer {
        return upstream(llm, trace, roles, case, op, as_recorded, usage).await;
    }
    if as_recorded {
        let mut c = Check::new(
            Outcome::Refuted,
            "the op's output already sufficed (a correct answer step rescues the answer from it): the fault is downstream",
        );
        c.usage = usage;
        return Ok(c);
    }
    let cutoff = trace.op(answer).created_at.clone();
    let corrected_extra = alive_carriers(trace, &context, &key, &cutoff);
    if corrected_extra.is_empty() {
        let mut c = Check::new(
            Outcome::Refuted,
            "no memory held the evidence at question time: no output of this op could rescue the answer",
        );
        c.usage = usage;
        return Ok(c);
    }
    let mut units: Vec<VarIx> = context.clone();
    units.extend(corrected_extra);
    let (rescued, replayed, more) = replay.run(&units).await?;
    usage += more;
    Ok(Check {
        outcome: if rescued {
            Outcome::Verified
        } else {
            Outcome::Refuted
        },
        detail: if rescued {
            "with the op's output corrected, the replayed answer matches the gold answer".into()
        } else {
            "with the op's output corrected, the replayed answer is still wrong".into()
        },
        replayed_answer: Some(replayed),
        usage,
    })
}

/// The check of a memory op upstream of retrieval.
async fn upstream<L: Llm>(
    llm: &L,
    trace: &Trace,
    roles: &Roles,
    case: &FailureCase,
    op: OpIx,
    as_recorded: bool,
    mut usage: Usage,
) -> Result<Check, ProviderError> {
    if as_recorded {
        let mut c = Check::new(
            Outcome::Refuted,
            "a correct answer step rescues the answer from the recorded retrieval: the fault is downstream of this op",
        );
        c.usage = usage;
        return Ok(c);
    }
    let Some(r) = crate::replay::upstream(llm, trace, roles, case, op).await? else {
        return Ok(Check::new(
            Outcome::NotReplayable,
            "the op lies upstream of retrieval and the trace is not in the reference memory system's layout (extraction → facts → update task → memory units), so the memory pipeline after it cannot be replayed",
        ));
    };
    usage += r.usage;
    Ok(Check {
        outcome: if r.rescued {
            Outcome::Verified
        } else {
            Outcome::Refuted
        },
        detail: r.detail,
        replayed_answer: r.answer,
        usage,
    })
}

/// The evidence key of a case: gold answers, question and the named evidence messages.
fn evidence_key(trace: &Trace, case: &FailureCase) -> Key {
    let texts: Vec<String> = case
        .evidence_ids
        .iter()
        .filter_map(|id| trace.var_by_id(id))
        .map(|v| var_text(trace.var(v)))
        .collect();
    Key::new(&case.golden_answers, &case.query, &texts)
}

/// Latest versions (as of `cutoff`) of identities in the categories of `context`, not in
/// `context`, carrying the key (else the best few carrying part of it).
fn alive_carriers(trace: &Trace, context: &[VarIx], key: &Key, cutoff: &str) -> Vec<VarIx> {
    let kinds: Vec<&str> = context
        .iter()
        .map(|&v| trace.var(v).category.as_str())
        .collect();
    let mut latest: BTreeMap<&str, VarIx> = BTreeMap::new();
    for (i, r) in trace.vars.iter().enumerate() {
        if !kinds.contains(&r.category.as_str()) || r.created_at.as_str() > cutoff {
            continue;
        }
        let v = VarIx(i as u32);
        let newer = latest
            .get(r.full_name.as_str())
            .is_none_or(|&old| trace.var(old).version < r.version);
        if newer {
            latest.insert(r.full_name.as_str(), v);
        }
    }
    let mut scored: Vec<(f64, VarIx)> = latest
        .into_values()
        .filter(|v| !context.contains(v))
        .map(|v| (key.carry(&var_text(trace.var(v))), v))
        .filter(|(c, _)| *c >= CANDIDATE)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let strong: Vec<VarIx> = scored
        .iter()
        .filter(|(c, _)| *c >= CARRY)
        .map(|x| x.1)
        .collect();
    if strong.is_empty() {
        // Paraphrased memories carry less of the key: offer the best few and let the replay decide.
        scored.into_iter().take(MAX_WEAK).map(|x| x.1).collect()
    } else {
        strong
    }
}
