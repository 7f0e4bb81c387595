//! The decisive set of a failure: the minimal set of ops whose repair rescues the answer, found
//! by delta debugging ([`super::ddmin`]) over counterfactual replays of the reference memory
//! system (issue #17).
//!
//! Candidates: the ops of the failure's replay path (extraction, update decision, deletion
//! check in pipeline order, then retrieval and the answer step) whose re-run on their
//! *recorded* inputs gives another output than recorded — a repair of any other op changes
//! nothing. Repairs per role: extraction → re-run (the dropped or garbled fact comes back),
//! update → re-run (the previous version kept when the overwrite was the fault), deletion →
//! re-run (the deletion undone), retrieval → re-run on the replayed memory (the unit
//! supplied), answer → regenerated from its context. An op **not** repaired keeps its fault:
//! when what it reads changed it is re-run and its recorded deviations are applied again
//! (overwrites, deletions, units left out of retrieval; a faulty answer step stays wrong).
//! Each ddmin test is one replay: "does repairing this subset rescue the answer?".

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::ddmin::Ddmin;
use super::layout::{
    extraction_request_of, layout, recorded_facts, recorded_update, str_list, unit_version, Layout,
};
use super::{parse_events, rebuild, top_k, Stores};
use crate::answer_step::{answer_and_judge, rerun_answer};
use crate::fault::holds;
use crate::prompts::{build_context, delete_request, strip_code_block, update_request};
use crate::store::Store;
use memtrace::attribution::roles::{OpRole, Roles};
use memtrace::model::{FailureCase, OpIx, Trace, VarIx};
use memtrace::provider::{Llm, ProviderError, Usage};

/// How the search ended.
#[cfg_attr(feature = "ts", derive(tsify_next::Tsify))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SetOutcome {
    /// A 1-minimal set: repairing it rescues the answer, repairing it less any one op does not.
    Found,
    /// The replay budget ran out: the set rescues the answer but may not be minimal.
    Budget,
    /// Repairing every candidate does not rescue the answer (or no op deviates): no set.
    NotRescued,
    /// The trace is not in a layout that can be replayed: no set, the single-op verdict stands.
    NotReplayable,
}

/// One replay: the ops repaired and what came of it.
#[cfg_attr(feature = "ts", derive(tsify_next::Tsify))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SetReplay {
    pub repaired: Vec<String>,
    pub rescued: bool,
    /// The replayed answer, when the answer step ran again.
    pub answer: Option<String>,
}

/// What [`decisive_set`] found.
#[cfg_attr(feature = "ts", derive(tsify_next::Tsify))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DecisiveSet {
    pub outcome: SetOutcome,
    /// The op ids of the set, in candidate order (empty unless found or at the budget).
    pub ops: Vec<String>,
    /// The candidates ddmin searched: the writers of units that held the gold answer first,
    /// then the rest, each group in pipeline order.
    pub candidates: Vec<String>,
    /// Every replay, in the order run.
    pub replays: Vec<SetReplay>,
    /// Why, in one sentence.
    pub detail: String,
    pub usage: Usage,
}

impl DecisiveSet {
    fn none(outcome: SetOutcome, detail: &str) -> Self {
        DecisiveSet {
            outcome,
            ops: Vec::new(),
            candidates: Vec::new(),
            replays: Vec::new(),
            detail: detail.to_owned(),
            usage: Usage::default(),
        }
    }
}

/// The recorded faults of the candidates, applied again when they are not repaired.
#[derive(Debug, Default)]
pub(super) struct Kept {
    /// Update ops: `(unit id, text)` overwrites a re-run does not make.
    updates: BTreeMap<OpIx, Vec<(String, String)>>,
    /// Deletion ops: unit ids deleted that a re-run does not delete.
    deletions: BTreeMap<OpIx, Vec<String>>,
    /// Unit ids retrieval left out that a re-run on the recorded memory returns.
    hidden: Vec<String>,
    /// The answer step re-run on its recorded context is right: it is at fault itself.
    answer_faulty: bool,
}

impl Stores {
    /// Applies `op`'s kept faults to the replayed memory (its live units only).
    pub(super) fn keep_faults(&mut self, kept: Option<&Kept>, op: OpIx) {
        let Some(k) = kept else { return };
        for (id, text) in k.updates.get(&op).into_iter().flatten() {
            if self.replayed.get(id).is_some_and(|u| !u.deleted) {
                self.replayed
                    .update(id, text, memtrace_record::Var::default());
            }
        }
        for id in k.deletions.get(&op).into_iter().flatten() {
            self.replayed.delete(id, memtrace_record::Var::default());
        }
    }
}

/// The ids `events` (an update or deletion reply over `listing`) name with `event`.
fn named(events: &[Value], listing: &[String], event: &str) -> Vec<(String, String)> {
    events
        .iter()
        .filter(|e| e["event"].as_str() == Some(event))
        .filter_map(|e| {
            let k = e["id"].as_str()?.parse::<usize>().ok()?;
            Some((
                listing.get(k)?.clone(),
                e["text"].as_str().unwrap_or_default().to_owned(),
            ))
        })
        .collect()
}

/// Scans the layout's ops: which deviate from a re-run on their recorded inputs (the
/// candidates, in pipeline order) and what each keeps when not repaired.
async fn scan<L: Llm>(
    llm: &L,
    trace: &Trace,
    lay: &Layout,
    case: &FailureCase,
    usage: &mut Usage,
) -> Result<(Vec<OpIx>, Kept), ProviderError> {
    let mut cands = Vec::new();
    let mut kept = Kept::default();
    let mut seen = BTreeSet::new();
    let tasks: BTreeMap<VarIx, (Vec<String>, Option<String>)> = lay
        .steps
        .iter()
        .filter(|s| s.role == OpRole::Update)
        .map(|s| (s.facts, recorded_update(trace, s.op)))
        .collect();
    for step in &lay.steps {
        let produced: Vec<(String, Option<String>)> = trace
            .flow
            .op_produced(step.op)
            .filter_map(|v| unit_version(trace, v).map(|(id, text, _)| (id, text)))
            .collect();
        let (listing, task) = tasks.get(&step.facts).cloned().unwrap_or_default();
        match step.role {
            OpRole::Extraction => {
                let req = extraction_request_of(trace, lay, step.op, &seen);
                let reply = llm.chat(&req).await?;
                *usage += reply.usage;
                let facts = serde_json::from_str::<Value>(&strip_code_block(&reply.content))
                    .ok()
                    .and_then(|v| v.get("facts").and_then(str_list))
                    .unwrap_or_default();
                if facts != recorded_facts(trace, step.facts) {
                    cands.push(step.op);
                }
                if let Some(ins) = trace.flow.op_inputs.get(step.op.get()) {
                    seen.extend(ins.iter().filter(|&&v| trace.var(v).category == "message"));
                }
            }
            OpRole::Update => {
                let Some(task) = task else { continue };
                let reply = llm.chat(&update_request(&lay.prompts, &task)).await?;
                *usage += reply.usage;
                let clean = named(&parse_events(&reply.content), &listing, "UPDATE");
                let wrong: Vec<(String, String)> = produced
                    .iter()
                    .filter(|(id, _)| listing.contains(id))
                    .filter_map(|(id, t)| Some((id.clone(), t.clone()?)))
                    .filter(|x| !clean.contains(x))
                    .collect();
                let missed = clean
                    .iter()
                    .any(|(id, t)| !produced.contains(&(id.clone(), Some(t.clone()))));
                if !wrong.is_empty() || missed {
                    cands.push(step.op);
                    kept.updates.insert(step.op, wrong);
                }
            }
            OpRole::Deletion => {
                let Some(task) = task else { continue };
                let reply = llm.chat(&delete_request(&lay.prompts, &task)).await?;
                *usage += reply.usage;
                let clean: Vec<String> = named(&parse_events(&reply.content), &listing, "DELETE")
                    .into_iter()
                    .map(|x| x.0)
                    .collect();
                let deleted: Vec<String> = produced
                    .iter()
                    .filter(|(_, t)| t.is_none())
                    .map(|(id, _)| id.clone())
                    .collect();
                let wrong: Vec<String> = deleted
                    .iter()
                    .filter(|id| !clean.contains(id))
                    .cloned()
                    .collect();
                if !wrong.is_empty() || clean.iter().any(|id| !deleted.contains(id)) {
                    cands.push(step.op);
                    kept.deletions.insert(step.op, wrong);
                }
            }
            _ => {}
        }
    }
    // Retrieval: what a re-run on the recorded memory returns that the op left out.
    if let Some(s) = rebuild(llm, trace, lay, &BTreeSet::new(), None).await? {
        let read = read_ids(trace, lay);
        kept.hidden = nearest(&s.recorded, &case.query, top_k(trace, lay))
            .into_iter()
            .filter(|id| !read.contains(id))
            .collect();
        if !kept.hidden.is_empty() {
            cands.push(lay.retrieval);
        }
    }
    if let Some((right, _, u)) = rerun_answer(llm, trace, case).await? {
        *usage += u;
        if right {
            kept.answer_faulty = true;
            if let Some(a) = memtrace::algo::answer_op(trace, case) {
                cands.push(a);
            }
        }
    }
    Ok((cands, kept))
}

/// Ids of the memory units one version of which held a gold answer.
fn gold_units(trace: &Trace, case: &FailureCase) -> BTreeSet<String> {
    (0..trace.vars.len())
        .filter_map(|i| unit_version(trace, VarIx(i as u32)))
        .filter(|(_, text, _)| {
            text.as_deref()
                .is_some_and(|t| case.golden_answers.iter().any(|g| holds(t, g)))
        })
        .map(|(id, _, _)| id)
        .collect()
}

fn nearest(st: &Store, question: &str, k: usize) -> Vec<String> {
    st.nearest(question, k)
        .into_iter()
        .filter_map(|(i, _)| st.units().get(i).map(|u| u.id.clone()))
        .collect()
}

fn read_ids(trace: &Trace, lay: &Layout) -> Vec<String> {
    trace
        .flow
        .op_produced(lay.retrieval)
        .filter_map(|v| unit_version(trace, v).map(|u| u.0))
        .collect()
}

/// One replay with `repaired` repaired and every other candidate keeping its fault:
/// (rescued, the replayed answer).
async fn replay_set<L: Llm>(
    llm: &L,
    trace: &Trace,
    lay: &Layout,
    case: &FailureCase,
    repaired: &BTreeSet<OpIx>,
    kept: &Kept,
    usage: &mut Usage,
) -> Result<(bool, Option<String>), ProviderError> {
    let Some(mut s) = rebuild(llm, trace, lay, repaired, Some(kept)).await? else {
        return Ok((false, None));
    };
    *usage += std::mem::take(&mut s.usage);
    let k = top_k(trace, lay);
    let skip: &[String] = if repaired.contains(&lay.retrieval) {
        &[]
    } else {
        &kept.hidden
    };
    let now: Vec<String> = nearest(&s.replayed, &case.query, k + skip.len())
        .into_iter()
        .filter(|id| !skip.contains(id))
        .take(k)
        .collect();
    let answer_fixed =
        memtrace::algo::answer_op(trace, case).is_some_and(|a| repaired.contains(&a));
    let changed = now != read_ids(trace, lay) || now.iter().any(|id| s.dirty(id));
    if !answer_fixed && (!changed || kept.answer_faulty) {
        // The recorded wrong answer stands: nothing it reads changed, or it keeps its fault.
        return Ok((false, None));
    }
    let memories: Vec<(String, String)> = now
        .iter()
        .filter_map(|id| s.replayed.get(id))
        .map(|u| (u.text.clone(), u.timestamp.clone()))
        .collect();
    let (rescued, answer, u) =
        answer_and_judge(llm, &lay.prompts, case, &build_context(&memories)).await?;
    *usage += u;
    Ok((rescued, Some(answer)))
}

/// The minimal set of ops whose repair rescues `case`'s answer (see the module doc), with at
/// most `budget` replays. Traces not in the reference memory system's layout get
/// [`SetOutcome::NotReplayable`] and no set.
///
/// # Errors
/// The provider's error during a replay.
///
/// # Complexity
/// One LLM call per memory op of the layout (the scan), then per replay O(ops × units) plus
/// the re-run ops' calls; ddmin makes O(k log n) replays for a set of k among n candidates.
pub async fn decisive_set<L: Llm>(
    llm: &L,
    trace: &Trace,
    roles: &Roles,
    case: &FailureCase,
    budget: usize,
) -> Result<DecisiveSet, ProviderError> {
    let Some(lay) = layout(trace, roles, case) else {
        return Ok(DecisiveSet::none(
            SetOutcome::NotReplayable,
            "the trace is not in the reference memory system's layout (extraction → facts → update task → memory units → retrieval → answer), so sets of ops cannot be replayed: the single-op verdict stands",
        ));
    };
    let mut usage = Usage::default();
    let (mut cands, kept) = scan(llm, trace, &lay, case, &mut usage).await?;
    // The ops that wrote a unit some version of which held the gold answer go first: ddmin
    // tries the first half first, so a set among them is found before an equally rescuing
    // one elsewhere.
    let gold = gold_units(trace, case);
    cands.sort_by_key(|&o| {
        !trace
            .flow
            .op_produced(o)
            .filter_map(|v| unit_version(trace, v))
            .any(|(id, _, _)| gold.contains(&id))
    });
    let id = |o: &OpIx| trace.op(*o).op_id.clone();
    let mut out = DecisiveSet::none(SetOutcome::NotRescued, "");
    out.candidates = cands.iter().map(id).collect();
    if cands.is_empty() {
        out.detail = "no op's re-run on its recorded inputs differs from what it recorded: no repair changes the answer".into();
        out.usage = usage;
        return Ok(out);
    }
    let test = |set: &[OpIx]| set.iter().copied().collect::<BTreeSet<OpIx>>();
    let all = test(&cands);
    let (rescued, answer) = replay_set(llm, trace, &lay, case, &all, &kept, &mut usage).await?;
    out.replays.push(SetReplay {
        repaired: out.candidates.clone(),
        rescued,
        answer,
    });
    if !rescued {
        out.detail = "repairing every candidate together does not rescue the answer: no set of them is decisive".into();
        out.usage = usage;
        return Ok(out);
    }
    let mut dd = Ddmin::new(cands.clone());
    let mut at_budget = false;
    while let Some(sub) = dd.next_test() {
        if out.replays.len() >= budget {
            at_budget = true;
            break;
        }
        let (rescued, answer) =
            replay_set(llm, trace, &lay, case, &test(&sub), &kept, &mut usage).await?;
        let mut names: Vec<OpIx> = sub.clone();
        names.sort_by_key(|o| cands.iter().position(|c| c == o));
        out.replays.push(SetReplay {
            repaired: names.iter().map(id).collect(),
            rescued,
            answer,
        });
        dd.report(rescued);
    }
    let mut set = dd.current().to_vec();
    set.sort_by_key(|o| cands.iter().position(|c| c == o));
    out.ops = set.iter().map(id).collect();
    out.usage = usage;
    let n = out.ops.len();
    let these = if n == 1 {
        "this op".to_owned()
    } else {
        format!("these {n} ops")
    };
    (out.outcome, out.detail) = if at_budget {
        (SetOutcome::Budget, format!("stopped at the budget of {budget} replays: repairing {these} rescues the answer, a smaller set may too"))
    } else if n == 1 {
        (
            SetOutcome::Found,
            "repairing this op alone rescues the answer".to_owned(),
        )
    } else {
        (
            SetOutcome::Found,
            format!("repairing {these} rescues the answer; repairing any one fewer does not"),
        )
    };
    Ok(out)
}
