//! Counterfactual replay of the reference memory system (this crate) from its trace: the
//! blamed memory op (extraction, update decision or deletion) is re-run through an [`Llm`] on
//! its recorded inputs, and the pipeline downstream of it is replayed up to the answer.
//!
//! Two memory stores are rebuilt side by side, op by op: the **recorded** one (every op's
//! recorded effects) and the **replayed** one. An op downstream of the correction is re-run
//! through the [`Llm`] only when what it reads differs between the two (its facts, the similar
//! memories it would look up, the memories retrieval would return); otherwise its recorded
//! effects are applied, faults included. So correcting an op that was right changes nothing
//! and the answer stays wrong, while correcting the faulty op lets its fix flow to the answer.
//!
//! The layout read is the reference system's: extraction ops read `message` variables and a
//! prompt and write a list of facts; update ops read those facts and write a `prompt` task
//! (`Old memory:` / `New facts:`), the similar memories listed with their `memory_id`, and
//! memory-unit versions (`{id, memory, timestamp}`); deletion ops read the facts and write
//! tombstone versions (`memory: null`). Op roles come from [`Roles`]. Retrieval's
//! `top_k` is read from its op's metadata; the similar-memory lookup uses the reference
//! system's default `similar_k` (the trace does not record it).

mod ddmin;
mod layout;
mod set;

pub use self::set::{decisive_set, DecisiveSet, SetOutcome, SetReplay};

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};

use self::layout::{
    extraction_request_of, facts_time, layout, recorded_addition, recorded_facts, recorded_update,
    str_list, unit_version, Layout, MemOp,
};
use crate::prompts::{
    build_context, delete_request, strip_code_block, update_request, update_task,
};
use crate::store::{Store, Unit};
use crate::Config;
use memtrace::attribution::roles::{OpRole, Roles};
use memtrace::model::{FailureCase, OpIx, Trace, VarIx};
use memtrace::provider::{Llm, ProviderError, Usage};

/// What an upstream replay found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replayed {
    /// The replayed answer was judged correct.
    pub rescued: bool,
    /// The replayed answer (the recorded prediction when nothing reached the question).
    pub answer: Option<String>,
    /// Why, in one sentence.
    pub detail: String,
    pub usage: Usage,
}

fn unit(id: &str, text: &str, timestamp: &str) -> Unit {
    Unit {
        id: id.to_owned(),
        text: text.to_owned(),
        timestamp: timestamp.to_owned(),
        deleted: false,
        var: memtrace_record::Var::default(),
    }
}

/// Applies an op's recorded memory-unit versions to a store.
fn apply_recorded(trace: &Trace, op: OpIx, store: &mut Store) {
    // In recorded order, so units enter the store (and break search ties) as they did.
    let mut produced: Vec<VarIx> = trace.flow.op_produced(op).collect();
    produced.sort_by(|a, b| {
        trace
            .var(*a)
            .created_at
            .cmp(&trace.var(*b).created_at)
            .then(a.cmp(b))
    });
    for v in produced {
        let Some((id, text, time)) = unit_version(trace, v) else {
            continue;
        };
        let var = memtrace_record::Var::default();
        match text {
            None => {
                store.delete(&id, var);
            }
            Some(t) if store.get(&id).is_some() => {
                store.update(&id, &t, var);
            }
            Some(t) => store.add(unit(&id, &t, &time)),
        }
    }
}

/// The state of one unit, for comparing the two stores.
fn state(store: &Store, id: &str) -> Option<(bool, String)> {
    store.get(id).map(|u| (u.deleted, u.text.clone()))
}

/// The recorded and the replayed memory, rebuilt side by side.
#[derive(Default)]
struct Stores {
    recorded: Store,
    replayed: Store,
    /// Replayed facts that differ from the recorded ones, by facts variable.
    facts: BTreeMap<VarIx, Vec<String>>,
    added: usize,
    usage: Usage,
}

impl Stores {
    fn dirty(&self, id: &str) -> bool {
        state(&self.recorded, id) != state(&self.replayed, id)
    }

    /// Ids of the units similar to `facts` in `store` (Mem0: top-k per fact, merged).
    fn similar(store: &Store, facts: &[String]) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for f in facts {
            for (i, _) in store.search(f, Config::default().similar_k) {
                if let Some(u) = store.units().get(i) {
                    if !out.contains(&u.id) {
                        out.push(u.id.clone());
                    }
                }
            }
        }
        out
    }
}

fn parse_events(reply: &str) -> Vec<Value> {
    serde_json::from_str::<Value>(&strip_code_block(reply))
        .ok()
        .and_then(|v| v.get("memory").and_then(Value::as_array).cloned())
        .unwrap_or_default()
}

impl Stores {
    /// Re-runs an update decision on the replayed memory; returns the listed ids and the task.
    async fn rerun_update<L: Llm>(
        &mut self,
        llm: &L,
        trace: &Trace,
        lay: &Layout,
        step: &MemOp,
        facts: &[String],
    ) -> Result<(Vec<String>, String), ProviderError> {
        let old = Self::similar(&self.replayed, facts);
        let task = self.task_of(&old, facts);
        let reply = llm.chat(&update_request(&lay.prompts, &task)).await?;
        self.usage += reply.usage;
        let time = facts_time(trace, step.facts);
        for e in parse_events(&reply.content) {
            let text = e["text"].as_str().unwrap_or_default();
            let target = e["id"]
                .as_str()
                .and_then(|k| k.parse::<usize>().ok())
                .and_then(|k| old.get(k));
            match e["event"].as_str().unwrap_or_default() {
                "ADD" if !text.is_empty() => {
                    let id = recorded_addition(trace, step.op, text).unwrap_or_else(|| {
                        self.added += 1;
                        format!("memory-unit-replayed-{}", self.added)
                    });
                    if self.replayed.get(&id).is_none() {
                        self.replayed.add(unit(&id, text, &time));
                    }
                }
                "UPDATE" if !text.is_empty() => {
                    if let Some(id) = target {
                        let live = self
                            .replayed
                            .get(id)
                            .is_some_and(|u| !u.deleted && u.text != text);
                        if live {
                            self.replayed
                                .update(id, text, memtrace_record::Var::default());
                        }
                    }
                }
                _ => {}
            }
        }
        Ok((old, task))
    }

    /// The update task over units `old` (their replayed text) and `facts`.
    fn task_of(&self, old: &[String], facts: &[String]) -> String {
        let old_json: Vec<Value> = old
            .iter()
            .enumerate()
            .map(|(k, id)| {
                let text = self
                    .replayed
                    .get(id)
                    .map(|u| u.text.clone())
                    .unwrap_or_default();
                json!({"id": k.to_string(), "text": text})
            })
            .collect();
        update_task(&Value::from(old_json), facts)
    }

    /// Re-runs a deletion check on the replayed memory.
    async fn rerun_delete<L: Llm>(
        &mut self,
        llm: &L,
        lay: &Layout,
        old: &[String],
        task: &str,
    ) -> Result<(), ProviderError> {
        let reply = llm.chat(&delete_request(&lay.prompts, task)).await?;
        self.usage += reply.usage;
        for e in parse_events(&reply.content) {
            let target = e["id"]
                .as_str()
                .and_then(|k| k.parse::<usize>().ok())
                .and_then(|k| old.get(k));
            if let (Some(id), Some("DELETE")) = (target, e["event"].as_str()) {
                self.replayed.delete(id, memtrace_record::Var::default());
            }
        }
        Ok(())
    }
}

/// Replays the reference memory system's pipeline with `blamed` (an extraction, update or
/// deletion op) re-run through `llm`, then retrieval, answer and judge for `case`. `None` when
/// the trace is not in the reference system's layout or `blamed` is not one of its memory ops.
///
/// # Errors
/// The provider's error during a replay.
///
/// # Complexity
/// O(ops × units) plus one LLM call per re-run op (and two for the answer and judge).
pub async fn upstream<L: Llm>(
    llm: &L,
    trace: &Trace,
    roles: &Roles,
    case: &FailureCase,
    blamed: OpIx,
) -> Result<Option<Replayed>, ProviderError> {
    let Some(lay) = layout(trace, roles, case) else {
        return Ok(None);
    };
    if !lay.steps.iter().any(|s| s.op == blamed) {
        return Ok(None);
    }
    let Some(s) = rebuild(llm, trace, &lay, &BTreeSet::from([blamed]), None).await? else {
        return Ok(None);
    };
    s.finish(llm, trace, &lay, case).await.map(Some)
}

/// The recorded and the replayed memory at question time, with the ops in `repaired` re-run
/// and the pipeline after them replayed. With `kept`, an op not repaired that is re-run (as
/// what it reads changed) keeps its recorded faults. `None` when not the reference layout.
async fn rebuild<L: Llm>(
    llm: &L,
    trace: &Trace,
    lay: &Layout,
    repaired: &BTreeSet<OpIx>,
    kept: Option<&set::Kept>,
) -> Result<Option<Stores>, ProviderError> {
    let deletions: BTreeMap<VarIx, OpIx> = lay
        .steps
        .iter()
        .filter(|s| s.role == OpRole::Deletion)
        .map(|s| (s.facts, s.op))
        .collect();
    let updated: BTreeSet<VarIx> = lay
        .steps
        .iter()
        .filter(|s| s.role == OpRole::Update)
        .map(|s| s.facts)
        .collect();
    let mut s = Stores::default();
    let mut seen = BTreeSet::new();
    for step in &lay.steps {
        match step.role {
            OpRole::Extraction => {
                if repaired.contains(&step.op) {
                    let req = extraction_request_of(trace, lay, step.op, &seen);
                    let reply = llm.chat(&req).await?;
                    s.usage += reply.usage;
                    let facts = serde_json::from_str::<Value>(&strip_code_block(&reply.content))
                        .ok()
                        .and_then(|v| v.get("facts").and_then(str_list))
                        .unwrap_or_default();
                    if facts != recorded_facts(trace, step.facts) {
                        s.facts.insert(step.facts, facts);
                    }
                }
                seen.extend(
                    trace.flow.op_inputs[step.op.get()]
                        .iter()
                        .filter(|&&v| trace.var(v).category == "message"),
                );
            }
            OpRole::Update => {
                let deletion = deletions.get(&step.facts).copied();
                s.replay_pair(llm, trace, lay, step, deletion, (repaired, kept))
                    .await?;
            }
            OpRole::Deletion if !updated.contains(&step.facts) => {
                // A deletion with no update decision before it: not the reference layout.
                return Ok(None);
            }
            _ => {}
        }
    }
    Ok(Some(s))
}

impl Stores {
    /// One pair's update decision and deletion check.
    async fn replay_pair<L: Llm>(
        &mut self,
        llm: &L,
        trace: &Trace,
        lay: &Layout,
        step: &MemOp,
        deletion: Option<OpIx>,
        (repaired, kept): (&BTreeSet<OpIx>, Option<&set::Kept>),
    ) -> Result<(), ProviderError> {
        let recorded = recorded_facts(trace, step.facts);
        let changed = self.facts.contains_key(&step.facts);
        let facts = self
            .facts
            .get(&step.facts)
            .cloned()
            .unwrap_or_else(|| recorded.clone());
        let (listing, task) = recorded_update(trace, step.op);
        let near = Self::similar(&self.replayed, &facts);
        let rerun = repaired.contains(&step.op)
            || changed
            || near != Self::similar(&self.recorded, &recorded)
            || near.iter().chain(&listing).any(|id| self.dirty(id));
        // A deletion whose recorded victims now differ read other memories than recorded.
        let doomed_moved = deletion.is_some_and(|d| {
            trace
                .flow
                .op_produced(d)
                .filter_map(|v| unit_version(trace, v))
                .any(|(id, _, _)| self.dirty(&id))
        });
        apply_recorded(trace, step.op, &mut self.recorded);
        if rerun && facts.is_empty() {
            // No facts: the pipeline skips the update decision and the deletion check.
            if let Some(d) = deletion {
                apply_recorded(trace, d, &mut self.recorded);
            }
            return Ok(());
        }
        let (old, now_task) = if rerun {
            let out = self.rerun_update(llm, trace, lay, step, &facts).await?;
            if !repaired.contains(&step.op) {
                self.keep_faults(kept, step.op);
            }
            out
        } else {
            apply_recorded(trace, step.op, &mut self.replayed);
            let task = if doomed_moved {
                self.task_of(&listing, &facts)
            } else {
                task.clone().unwrap_or_default()
            };
            (listing.clone(), task)
        };
        // The deletion check reads the facts and the old units (after the update): when those
        // are as recorded, so is its decision.
        let as_listed = |ids: &[String]| ids.iter().cloned().collect::<BTreeSet<String>>();
        let moved = changed
            || as_listed(&old) != as_listed(&listing)
            || old.iter().any(|id| self.dirty(id));
        if let Some(d) = deletion {
            apply_recorded(trace, d, &mut self.recorded);
        }
        let fixed = deletion.is_some_and(|d| repaired.contains(&d));
        if fixed || (rerun && moved) || doomed_moved {
            self.rerun_delete(llm, lay, &old, &now_task).await?;
            if let Some(d) = deletion.filter(|_| !fixed) {
                self.keep_faults(kept, d);
            }
        } else if let Some(d) = deletion {
            apply_recorded(trace, d, &mut self.replayed);
        }
        Ok(())
    }

    /// Retrieval, answer and judge for the case on the replayed memory.
    async fn finish<L: Llm>(
        mut self,
        llm: &L,
        trace: &Trace,
        lay: &Layout,
        case: &FailureCase,
    ) -> Result<Replayed, ProviderError> {
        let top_k = top_k(trace, lay);
        let question = case.query.as_str();
        let nearest = |st: &Store| -> Vec<String> {
            st.nearest(question, top_k)
                .into_iter()
                .filter_map(|(i, _)| st.units().get(i).map(|u| u.id.clone()))
                .collect()
        };
        let (now, then) = (nearest(&self.replayed), nearest(&self.recorded));
        let read: Vec<String> = trace
            .flow
            .op_produced(lay.retrieval)
            .filter_map(|v| unit_version(trace, v).map(|u| u.0))
            .collect();
        let diverged = self.recorded.units().iter().any(|u| self.dirty(&u.id))
            || self.replayed.units().iter().any(|u| self.dirty(&u.id));
        if now == then && !now.iter().chain(&read).any(|id| self.dirty(id)) {
            let detail = if diverged {
                "the corrected op changed the memory, but nothing the question's retrieval returns: the recorded wrong answer stands"
            } else {
                "re-run, the op gives its recorded output (nothing downstream changes): the recorded wrong answer stands"
            };
            return Ok(Replayed {
                rescued: false,
                answer: None,
                detail: detail.to_owned(),
                usage: self.usage,
            });
        }
        let memories: Vec<(String, String)> = now
            .iter()
            .filter_map(|id| self.replayed.get(id))
            .map(|u| (u.text.clone(), u.timestamp.clone()))
            .collect();
        let (rescued, answer, usage) = crate::answer_step::answer_and_judge(
            llm,
            &lay.prompts,
            case,
            &build_context(&memories),
        )
        .await?;
        self.usage += usage;
        Ok(Replayed {
            rescued,
            answer: Some(answer),
            detail: if rescued {
                "with the op re-run and the memory pipeline replayed after it, the answer matches the gold answer".to_owned()
            } else {
                "with the op re-run and the memory pipeline replayed after it, the answer is still wrong".to_owned()
            },
            usage: self.usage,
        })
    }
}

/// Retrieval's `top_k` from its op's metadata (else the reference system's default).
fn top_k(trace: &Trace, lay: &Layout) -> usize {
    trace
        .op(lay.retrieval)
        .metadata
        .get("top_k")
        .and_then(Value::as_u64)
        .map_or(Config::default().top_k, |k| {
            usize::try_from(k).unwrap_or(usize::MAX)
        })
}
