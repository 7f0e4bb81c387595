//! Reading the reference memory system's pipeline from its trace: the memory ops in recorded
//! order, the prompts, the memory-unit versions, and the requests the ops sent.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::prompts::{extraction_request, Prompts};
use memtrace::algo::answer_op;
use memtrace::attribution::roles::{OpRole, Roles};
use memtrace::attribution::text::var_text;
use memtrace::model::{pyrepr, FailureCase, OpIx, Trace, VarIx};
use memtrace::provider::ChatRequest;
use memtrace::util::calendar::Date;

/// One memory op of the recorded pipeline.
pub(super) struct MemOp {
    pub op: OpIx,
    pub role: OpRole,
    /// The facts variable it writes (extraction) or reads (update, deletion).
    pub facts: VarIx,
}

/// The reference system's pipeline as recorded.
pub(super) struct Layout {
    pub steps: Vec<MemOp>,
    pub prompts: Prompts,
    pub speakers: Vec<String>,
    pub retrieval: OpIx,
}

pub(super) fn json_of(trace: &Trace, v: VarIx) -> Value {
    pyrepr::to_json(&trace.var(v).value)
}

pub(super) fn str_list(v: &Value) -> Option<Vec<String>> {
    v.as_array()?
        .iter()
        .map(|x| x.as_str().map(str::to_owned))
        .collect()
}

/// Reads the layout with the ops' `roles`; `None` when the trace is not the reference system's.
pub(super) fn layout(trace: &Trace, roles: &Roles, case: &FailureCase) -> Option<Layout> {
    let answer = answer_op(trace, case)?;
    let query = trace.var_by_id(&case.query_id)?;
    let answer_inputs = trace.flow.op_inputs.get(answer.get())?;
    let retrieval = trace
        .flow
        .consumers
        .get(query.get())?
        .iter()
        .copied()
        .find(|&o| {
            o != answer
                && trace
                    .flow
                    .op_produced(o)
                    .any(|v| answer_inputs.contains(&v))
        })?;
    let cutoff = &trace.op(answer).created_at;
    let mut order: Vec<OpIx> = (0..trace.ops.len() as u32)
        .map(OpIx)
        .filter(|&o| trace.op(o).created_at <= *cutoff)
        .collect();
    order.sort_by(|a, b| {
        trace
            .op(*a)
            .created_at
            .cmp(&trace.op(*b).created_at)
            .then(a.cmp(b))
    });
    let mut prompts = Prompts::default();
    let prompt_in = |o: OpIx| {
        trace.flow.op_inputs[o.get()]
            .iter()
            .find(|&&v| trace.var(v).category == "prompt")
            .map(|&v| var_text(trace.var(v)))
    };
    if let Some(p) = prompt_in(answer) {
        prompts.question_answering = p;
    }
    let mut steps = Vec::new();
    let mut facts_of_extraction = BTreeSet::new();
    for o in order {
        let role = roles.role(o);
        let facts = match role {
            OpRole::Extraction => {
                let f = trace.flow.op_outputs[o.get()]
                    .iter()
                    .copied()
                    .find(|&v| str_list(&json_of(trace, v)).is_some())?;
                if let Some(p) = prompt_in(o) {
                    prompts.fact_extraction = p;
                }
                facts_of_extraction.insert(f);
                f
            }
            OpRole::Update | OpRole::Deletion => {
                let f = trace.flow.op_inputs[o.get()]
                    .iter()
                    .copied()
                    .find(|v| facts_of_extraction.contains(v))?;
                if role == OpRole::Update {
                    if let Some(p) = prompt_in(o) {
                        prompts.update_decision = p;
                    }
                }
                f
            }
            _ => continue,
        };
        steps.push(MemOp { op: o, role, facts });
    }
    if !steps.iter().any(|s| s.role == OpRole::Extraction) {
        return None;
    }
    let speakers = trace
        .meta
        .metadata
        .get("traj_metadata")
        .map(|t| {
            ["speaker_a", "speaker_b"]
                .iter()
                .filter_map(|k| t.get(*k).and_then(Value::as_str).map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    Some(Layout {
        steps,
        prompts,
        speakers,
        retrieval,
    })
}

/// A memory unit's recorded version: `(identity, text or None when deleted, timestamp)`.
pub(super) fn unit_version(trace: &Trace, v: VarIx) -> Option<(String, Option<String>, String)> {
    let j = json_of(trace, v);
    let memory = j.as_object()?.get("memory")?;
    j.get("id")?.as_str()?;
    if !(memory.is_null() || memory.is_string()) {
        return None;
    }
    let deleted = memory.is_null() || j.get("deleted").and_then(Value::as_bool) == Some(true);
    let time = j.get("timestamp").and_then(Value::as_str).unwrap_or("");
    Some((
        trace.var(v).full_name.clone(),
        (!deleted).then(|| memory.as_str().unwrap_or_default().to_owned()),
        time.to_owned(),
    ))
}

pub(super) fn recorded_facts(trace: &Trace, f: VarIx) -> Vec<String> {
    str_list(&json_of(trace, f)).unwrap_or_default()
}

/// The first message's `timestamp` of the extraction that wrote `facts`.
pub(super) fn facts_time(trace: &Trace, facts: VarIx) -> String {
    trace
        .flow
        .producers
        .get(facts.get())
        .and_then(|p| p.first())
        .and_then(|&o| {
            trace.flow.op_inputs[o.get()].iter().find_map(|&v| {
                json_of(trace, v)
                    .get("timestamp")?
                    .as_str()
                    .map(str::to_owned)
            })
        })
        .unwrap_or_default()
}

/// The extraction request of `op` rebuilt from its recorded inputs; the first message is the
/// context-only "earlier" one when an earlier extraction read it too.
pub(super) fn extraction_request_of(
    trace: &Trace,
    lay: &Layout,
    op: OpIx,
    seen: &BTreeSet<VarIx>,
) -> ChatRequest {
    let msgs: Vec<VarIx> = trace.flow.op_inputs[op.get()]
        .iter()
        .copied()
        .filter(|&v| trace.var(v).category == "message")
        .collect();
    let said = |v: VarIx| {
        let j = json_of(trace, v);
        let content = j.get("content").and_then(Value::as_str).unwrap_or("");
        let text = content
            .split("\nBelow is this message's metadata:")
            .next()
            .unwrap_or("")
            .to_owned();
        let name = j
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        (name, text)
    };
    let (earlier, turns) = match msgs.split_first() {
        Some((first, rest)) if seen.contains(first) => (Some(said(*first)), rest.to_vec()),
        _ => (None, msgs.clone()),
    };
    let turns: Vec<(String, String)> = turns.into_iter().map(said).collect();
    let date = msgs
        .first()
        .and_then(|&v| {
            json_of(trace, v)
                .get("timestamp")?
                .as_str()
                .and_then(Date::parse)
        })
        .map(Date::long)
        .unwrap_or_default();
    let speakers: Vec<&str> = lay.speakers.iter().map(String::as_str).collect();
    let pairs: Vec<(&str, &str)> = turns
        .iter()
        .map(|(s, t)| (s.as_str(), t.as_str()))
        .collect();
    extraction_request(
        &lay.prompts,
        &date,
        &speakers,
        earlier.as_ref().map(|(s, t)| (s.as_str(), t.as_str())),
        &pairs,
    )
}

/// What an update op recorded: the similar units it listed (ids in listing order) and its task.
pub(super) fn recorded_update(trace: &Trace, op: OpIx) -> (Vec<String>, Option<String>) {
    let by_memory_id: BTreeMap<String, String> = trace.flow.op_inputs[op.get()]
        .iter()
        .filter_map(|&v| {
            let id = json_of(trace, v).get("id")?.as_str()?.to_owned();
            unit_version(trace, v).map(|(identity, _, _)| (id, identity))
        })
        .collect();
    let mut listing = Vec::new();
    let mut task = None;
    for v in trace.flow.op_produced(op) {
        if trace.var(v).category == "prompt" {
            task = Some(var_text(trace.var(v)));
        }
        let j = json_of(trace, v);
        let Some(items) = j.as_array() else { continue };
        let ids: Vec<String> = items
            .iter()
            .filter_map(|x| by_memory_id.get(x.get("memory_id")?.as_str()?).cloned())
            .collect();
        if !ids.is_empty() {
            listing = ids;
        }
    }
    (listing, task)
}

/// Identity of a unit the recorded op added with this text, if any.
pub(super) fn recorded_addition(trace: &Trace, op: OpIx, text: &str) -> Option<String> {
    trace.flow.op_produced(op).find_map(|v| {
        let (id, t, _) = unit_version(trace, v)?;
        (trace.var(v).version == 1 && t.as_deref() == Some(text)).then_some(id)
    })
}
