//! The rule-based run of a random [`Shape`]: messages through its stages into its stores,
//! consolidation, one- or two-stage retrieval, answer (with reflection), judge; with at most
//! one fault injected, and the file with its verified annotation.

use std::collections::BTreeMap;

use memtrace_record::{OpSpec, Recorder, Scope, SessionSpec, Var, VarSpec};
use serde_json::{json, Value};

use super::{Delete, Judge, Second, Shape, Stage};
use crate::fault::{garble, holds, holds_whole};
use crate::locomo::Conversation;
use crate::text::{judge_rule, overlap, term_set};

use memtrace::model::ErrorType;

/// One fault to inject: its type, its target question and a number choosing among places.
#[derive(Debug, Clone)]
pub struct Plan {
    pub kind: ErrorType,
    pub target: usize,
    pub pick: u64,
}

struct Unit {
    id: String,
    store: usize,
    /// Unit stores: the unit's variable; list stores: the slot in the list.
    var: Option<Var>,
    slot: usize,
    text: String,
    live: bool,
}

pub(super) struct Res {
    pub(super) qi: usize,
    pub(super) prediction: String,
    pub(super) correct: bool,
    pub(super) context_holds: bool,
    pub(super) query_id: String,
    pub(super) prediction_id: String,
    pub(super) gold_id: String,
}

#[derive(Default)]
pub(super) struct Outcome {
    pub(super) results: Vec<Res>,
    /// The op that carried the fault (empty id when not recording).
    pub(super) fault_op: Option<String>,
    pub(super) evidence: BTreeMap<String, String>,
}

struct Sim<'a> {
    shape: &'a Shape,
    plan: Option<&'a Plan>,
    answer: String,
    units: Vec<Unit>,
    lists: BTreeMap<usize, (Var, Vec<Option<String>>)>,
    out: Outcome,
    /// Flush number at which a unit holding the target answer was first written.
    written_at: Option<usize>,
}

impl Sim<'_> {
    fn fault(&self, kind: ErrorType) -> bool {
        self.out.fault_op.is_none() && self.plan.is_some_and(|p| p.kind == kind)
    }

    fn pick(&self, n: usize) -> usize {
        self.plan.map_or(0, |p| {
            usize::try_from(p.pick % n.max(1) as u64).unwrap_or(0)
        })
    }

    fn n(&self, kind: &str) -> &str {
        self.shape.names.token(kind)
    }

    fn c(&self, kind: &str) -> &str {
        self.shape.names.cat(kind)
    }

    fn var(&self, scope: &Scope, kind: &str, suffix: &str, cat: &str, value: Value) -> Var {
        scope.var(VarSpec::named(&format!("{}{suffix}", self.n(kind)), value).category(self.c(cat)))
    }

    fn op(&self, scope: &Scope, kind: &str, cat: &str) -> Scope {
        scope.op(OpSpec::new(
            &format!("{}.{}", self.n("project"), self.n(kind)),
            self.c(cat),
        ))
    }

    fn text_of(&self, u: &Unit) -> Option<String> {
        if !u.live {
            return None;
        }
        match &u.var {
            Some(_) => Some(u.text.clone()),
            None => self.lists.get(&u.store)?.1.get(u.slot)?.clone(),
        }
    }

    fn var_of(&self, u: &Unit) -> Option<Var> {
        u.var
            .clone()
            .or_else(|| self.lists.get(&u.store).map(|(v, _)| v.clone()))
    }

    /// Drops the items holding the answer when this op carries the `kind` fault.
    fn drop_at(&mut self, kind: ErrorType, here: bool, op: &Scope, items: &mut Vec<String>) {
        if here && self.fault(kind) && items.iter().any(|t| holds(t, &self.answer)) {
            items.retain(|t| !holds(t, &self.answer));
            self.out.fault_op = Some(op.id().to_owned());
        }
    }
}

fn unit_value(sim: &Sim, id: &str, text: Option<&str>, deleted: bool) -> Value {
    let key = sim.n("text");
    if !deleted {
        return json!({ key: text, "id": id });
    }
    match sim.n("mem").len() % 3 {
        0 => json!({ key: Value::Null, "id": id, "deleted": true }),
        1 => json!({ key: "", "id": id, "status": "removed" }),
        _ => json!({ key: Value::Null, "id": id, "active": false }),
    }
}

#[allow(clippy::too_many_lines)] // the construction reads best top to bottom
fn construct(sim: &mut Sim, conv: &Conversation, rec: &Recorder) {
    let s = rec.session(SessionSpec::new(sim.c("ingest")));
    let batch = if sim.shape.stages.contains(&Stage::Batch) {
        2
    } else {
        1
    };
    let (mut buffer, mut buffer_var): (Vec<String>, Option<Var>) = (Vec::new(), None);
    let ext_ops: Vec<Stage> = sim
        .shape
        .stages
        .iter()
        .copied()
        .filter(|s| *s != Stage::Boundary)
        .collect();
    let ext_at = sim.pick(ext_ops.len() + 1); // == ext_ops.len(): the writer
    let mut flush = 0usize;
    let mut msg_no = 0usize;
    for session in &conv.sessions {
        let turns = &session.turns;
        let mut i = 0;
        while i < turns.len() {
            let end = (i + batch).min(turns.len());
            let last_group = end == turns.len();
            let mut cur: Vec<Var> = Vec::new();
            let mut items: Vec<String> = Vec::new();
            for t in &turns[i..end] {
                msg_no += 1;
                let v = sim.var(&s, "msg", &msg_no.to_string(), "message",
                    json!({ sim.n("text"): t.text, "speaker": t.speaker, "time": session.timestamp }));
                sim.out.evidence.insert(t.dia_id.clone(), v.full_node_id());
                items.push(format!("{}: {}", t.speaker, t.text));
                cur.push(v);
            }
            i = end;
            let mut waiting = false;
            for (k, stage) in sim.shape.stages.clone().iter().enumerate() {
                let here = ext_ops.iter().position(|x| x == stage) == Some(ext_at) && k < 9;
                match stage {
                    Stage::Buffer => {
                        let op = sim.op(&s, "buffer", "ingest");
                        sim.drop_at(ErrorType::ExtractionError, here, &op, &mut items);
                        buffer.append(&mut items);
                        let v = sim.var(&s, "buffer", "", "data", json!(buffer));
                        let mut ins: Vec<&Var> = cur.iter().collect();
                        if let Some(p) = &buffer_var {
                            ins.push(p);
                        }
                        op.io(&ins, &[&v], "append");
                        buffer_var = Some(v.clone());
                        cur = vec![v];
                        items = buffer.clone();
                    }
                    Stage::Boundary => {
                        let op = sim.op(&s, "boundary", "ingest");
                        let cut = last_group || buffer.len() >= 3;
                        let d = sim.var(&s, "decision", "", "data", json!({ "boundary": cut }));
                        op.io(&cur.iter().collect::<Vec<_>>(), &[&d], "decide");
                        if !cut {
                            waiting = true;
                            break;
                        }
                    }
                    Stage::Batch => {
                        let op = sim.op(&s, "batch", "ingest");
                        sim.drop_at(ErrorType::ExtractionError, here, &op, &mut items);
                        let v = sim.var(&s, "batch", "", "data", json!({ "items": items }));
                        op.io(&cur.iter().collect::<Vec<_>>(), &[&v], "batch");
                        cur = vec![v];
                    }
                    Stage::Summarize => {
                        let op = sim.op(&s, "summary", "ingest");
                        sim.drop_at(ErrorType::ExtractionError, here, &op, &mut items);
                        let p = sim.var(
                            &s,
                            "prompt",
                            "",
                            "prompt",
                            json!("Summarize the conversation turns, keeping every detail."),
                        );
                        let v = sim.var(&s, "summary", "", "data", json!(items.join(" ")));
                        let mut ins: Vec<&Var> = cur.iter().collect();
                        ins.push(&p);
                        op.io(&ins, &[&v], "summarize");
                        cur = vec![v];
                    }
                }
            }
            if waiting {
                continue;
            }
            buffer.clear();
            flush += 1;
            // The writer.
            let op = sim.op(&s, "writer", "write");
            let here = ext_at == ext_ops.len();
            sim.drop_at(ErrorType::ExtractionError, here, &op, &mut items);
            let mut written: Vec<Var> = Vec::new();
            for &store in &sim.shape.stores.clone() {
                let texts: Vec<String> = if store == 1 {
                    vec![items.join(" ")]
                } else {
                    items.clone()
                };
                let kind = ["facts", "episodes", "profile"][store];
                for text in texts.into_iter().filter(|t| !t.is_empty()) {
                    if holds(&text, &sim.answer) && sim.written_at.is_none() {
                        sim.written_at = Some(flush);
                    }
                    let id = format!("{}-{}", sim.n(kind), sim.units.len() + 1);
                    if sim.shape.lists {
                        let entry = sim
                            .lists
                            .entry(store)
                            .or_insert_with(|| (Var::default(), Vec::new()));
                        entry.1.push(Some(text.clone()));
                        let slot = entry.1.len() - 1;
                        sim.units.push(Unit {
                            id,
                            store,
                            var: None,
                            slot,
                            text,
                            live: true,
                        });
                    } else {
                        let v = sim.var(
                            &s,
                            kind,
                            &format!("_{}", sim.units.len() + 1),
                            "memory",
                            unit_value(sim, &id, Some(&text), false),
                        );
                        written.push(v.clone());
                        sim.units.push(Unit {
                            id,
                            store,
                            var: Some(v),
                            slot: 0,
                            text,
                            live: true,
                        });
                    }
                }
                if sim.shape.lists {
                    let kind = ["facts", "episodes", "profile"][store];
                    let list: Vec<Value> = sim
                        .lists
                        .get(&store)
                        .map(|l| l.1.iter().flatten().map(|t| json!(t)).collect())
                        .unwrap_or_default();
                    let prev = sim
                        .lists
                        .get(&store)
                        .map(|l| l.0.clone())
                        .filter(|v| !v.full_name().is_empty());
                    let v = sim.var(&s, kind, "", "memory", json!(list));
                    if let Some(p) = prev {
                        op.link(&p, &v, "extend");
                    }
                    if let Some(l) = sim.lists.get_mut(&store) {
                        l.0 = v.clone();
                    }
                    written.push(v);
                }
            }
            op.io(
                &cur.iter().collect::<Vec<_>>(),
                &written.iter().collect::<Vec<_>>(),
                "write",
            );
            if sim.shape.consolidates {
                consolidate(sim, &s, &written, flush);
            }
        }
    }
}

/// The consolidation step after a flush: a no-op decision, or the update / delete fault.
fn consolidate(sim: &mut Sim, s: &Scope, written: &[Var], flush: usize) {
    let op = sim.op(s, "maintain", "maintain");
    let due = sim.written_at.is_some_and(|w| flush > w);
    let kind = if due && sim.fault(ErrorType::UpdateError) {
        Some(ErrorType::UpdateError)
    } else if due && sim.fault(ErrorType::DeletionError) {
        Some(ErrorType::DeletionError)
    } else {
        None
    };
    let targets: Vec<usize> = (0..sim.units.len())
        .filter(|&i| {
            sim.text_of(&sim.units[i])
                .is_some_and(|t| holds(&t, &sim.answer))
        })
        .collect();
    let written_refs: Vec<&Var> = written.iter().collect();
    let Some(kind) = kind.filter(|_| !targets.is_empty()) else {
        let d = sim.var(s, "decision", "", "data", json!({ "action": "NONE" }));
        op.io(&written_refs, &[&d], "nothing to change");
        return;
    };
    sim.out.fault_op = Some(op.id().to_owned());
    let answer = sim.answer.clone();
    let mut touched_lists = Vec::new();
    for i in targets {
        let old = sim.text_of(&sim.units[i]).unwrap_or_default();
        let new_text = garble(&old, &answer);
        let (id, store, slot) = (
            sim.units[i].id.clone(),
            sim.units[i].store,
            sim.units[i].slot,
        );
        if sim.shape.lists {
            if let Some(l) = sim.lists.get_mut(&store) {
                if let Some(e) = l.1.get_mut(slot) {
                    *e = (kind == ErrorType::UpdateError).then(|| new_text.clone());
                }
            }
            if kind == ErrorType::DeletionError {
                sim.units[i].live = false;
            }
            touched_lists.push(store);
            continue;
        }
        let Some(prev) = sim.units[i].var.clone() else {
            continue;
        };
        let mut ins = written_refs.clone();
        ins.push(&prev);
        if kind == ErrorType::UpdateError {
            let v = s.var(
                VarSpec::named(
                    prev.full_name(),
                    unit_value(sim, &id, Some(&new_text), false),
                )
                .category(sim.c("memory")),
            );
            op.io(&ins, &[&v], "update");
            sim.units[i].var = Some(v);
            sim.units[i].text = new_text;
        } else if sim.shape.delete == Delete::Tombstone {
            let v = s.var(
                VarSpec::named(prev.full_name(), unit_value(sim, &id, None, true))
                    .category(sim.c("memory")),
            );
            op.io(&ins, &[&v], "delete");
            sim.units[i].live = false;
        } else {
            let m = sim.var(
                s,
                "marker",
                &format!("_{id}"),
                "data",
                json!({ "event": "DELETE", "target": id }),
            );
            op.io(&ins, &[&m], "delete");
            sim.units[i].live = false;
        }
    }
    touched_lists.dedup();
    for store in touched_lists {
        let kind_name = ["facts", "episodes", "profile"][store];
        let Some((prev, entries)) = sim.lists.get(&store).cloned() else {
            continue;
        };
        let list: Vec<Value> = entries.iter().flatten().map(|t| json!(t)).collect();
        let v = sim.var(s, kind_name, "", "memory", json!(list));
        let mut ins = written_refs.clone();
        ins.push(&prev);
        op.io(&ins, &[&v], "revise");
        if let Some(l) = sim.lists.get_mut(&store) {
            l.0 = v;
        }
    }
}

#[allow(clippy::too_many_lines)] // retrieval, answer and judge of one question
fn ask(sim: &mut Sim, conv: &Conversation, qi: usize, rec: &Recorder) {
    let Some(q) = conv.questions.get(qi) else {
        return;
    };
    let target = sim.plan.is_some_and(|p| p.target == qi);
    let s = rec.session(SessionSpec::new(sim.c("search")));
    let query = sim.var(&s, "query", &format!("_{qi}"), "query", json!(q.text));
    let qt = term_set(&q.text);
    let stages = 1 + usize::from(sim.shape.second.is_some());
    let ret_at = sim.pick(stages);
    // Stage 1: similarity over the live units.
    let op = sim.op(&s, "search", "search");
    let mut ranked: Vec<(f64, usize, String)> = (0..sim.units.len())
        .filter_map(|i| {
            sim.text_of(&sim.units[i])
                .map(|t| (overlap(&qt, &term_set(&t)), i, t))
        })
        .collect();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    if target
        && ret_at == 0
        && sim.fault(ErrorType::RetrievalError)
        && ranked.iter().take(5).any(|r| holds(&r.2, &sim.answer))
    {
        ranked.retain(|r| !holds(&r.2, &sim.answer));
        sim.out.fault_op = Some(op.id().to_owned());
    }
    ranked.truncate(5);
    let mut read: Vec<Var> = Vec::new();
    for r in &ranked {
        if let Some(v) = sim.units.get(r.1).and_then(|u| sim.var_of(u)) {
            if !read.iter().any(|x| x.full_node_id() == v.full_node_id()) {
                read.push(v);
            }
        }
    }
    let mut hits: Vec<String> = ranked.iter().map(|r| r.2.clone()).collect();
    let hv = sim.var(&s, "hits", &format!("_{qi}"), "data", json!(hits));
    let mut ins: Vec<&Var> = vec![&query];
    ins.extend(read.iter());
    op.io(&ins, &[&hv], "search");
    let mut ctx = hv;
    if let Some(second) = sim.shape.second {
        let op = sim.op(&s, "second", "second");
        match second {
            Second::Rerank => hits.truncate(3),
            Second::Filter => hits.retain(|h| overlap(&qt, &term_set(h)) > 0.0),
        }
        if target && ret_at == 1 {
            sim.drop_at(ErrorType::RetrievalError, true, &op, &mut hits);
        }
        let tv = sim.var(&s, "top", &format!("_{qi}"), "data", json!(hits));
        op.io(&[&query, &ctx], &[&tv], "narrow");
        ctx = tv;
    }
    let context_holds = hits.iter().any(|h| holds_whole(h, &q.answer));
    // Answer, then reflection.
    let e = rec.session(SessionSpec::new(sim.c("answer")));
    let p = sim.var(
        &e,
        "prompt",
        "_qa",
        "prompt",
        json!("Answer the question from the memories."),
    );
    let op = sim.op(&e, "answer", "answer");
    let mut prediction = if context_holds {
        q.answer.clone()
    } else {
        "The memories do not say.".to_owned()
    };
    let resp_at = sim.pick(1 + usize::from(sim.shape.reflect));
    let respond = |sim: &mut Sim, op: &Scope, at: usize, prediction: &mut String| {
        if target
            && resp_at == at
            && sim.fault(ErrorType::ResponseError)
            && judge_rule(prediction, &q.answer)
        {
            *prediction = garble(prediction, &q.answer);
            sim.out.fault_op = Some(op.id().to_owned());
        }
    };
    respond(sim, &op, 0, &mut prediction);
    let kind = if sim.shape.reflect { "draft" } else { "pred" };
    let mut pred = sim.var(&e, kind, &format!("_{qi}"), "output", json!(prediction));
    op.io(&[&query, &ctx, &p], &[&pred], "answer");
    if sim.shape.reflect {
        let op = sim.op(&e, "reflect", "answer");
        respond(sim, &op, 1, &mut prediction);
        let v = sim.var(&e, "pred", &format!("_{qi}"), "output", json!(prediction));
        op.io(&[&query, &ctx, &pred], &[&v], "reflect");
        pred = v;
    }
    // Judge.
    let mut correct = judge_rule(&prediction, &q.answer);
    let op = sim.op(&e, "judge", "judge");
    if target && correct && sim.fault(ErrorType::LlmAsAJudgeError) {
        correct = false;
        sim.out.fault_op = Some(op.id().to_owned());
    }
    let gold = sim.var(&e, "gold", &format!("_{qi}"), "gold", json!([q.answer]));
    let label = if correct { "CORRECT" } else { "WRONG" };
    let mut ins = vec![&query, &gold, &pred];
    let value = match sim.shape.judge {
        Judge::Evaluator => json!(label),
        Judge::Llm => json!(format!("Comparing the answer with the reference: {label}")),
        Judge::Graded => json!(if correct { 0.9 } else { 0.3 }),
        Judge::Label => json!({ "question": q.text, "prediction": prediction, "label": label }),
    };
    let jp;
    if sim.shape.judge == Judge::Llm {
        jp = sim.var(
            &e,
            "jprompt",
            "",
            "prompt",
            json!("Is the answer right given the reference? Say CORRECT or WRONG."),
        );
        ins.push(&jp);
    }
    let verdict = sim.var(&e, "verdict", &format!("_{qi}"), "output", value);
    op.io(&ins, &[&verdict], "judge");
    sim.out.results.push(Res {
        qi,
        prediction,
        correct,
        context_holds,
        query_id: query.full_node_id(),
        prediction_id: pred.full_node_id(),
        gold_id: gold.full_node_id(),
    });
}

pub(super) fn simulate(
    shape: &Shape,
    conv: &Conversation,
    plan: Option<&Plan>,
    qs: &[usize],
    rec: &Recorder,
) -> Outcome {
    let answer = plan
        .and_then(|p| conv.questions.get(p.target))
        .map(|q| q.answer.clone())
        .unwrap_or_default();
    let mut sim = Sim {
        shape,
        plan,
        answer,
        units: Vec::new(),
        lists: BTreeMap::new(),
        out: Outcome::default(),
        written_at: None,
    };
    construct(&mut sim, conv, rec);
    for &qi in qs {
        ask(&mut sim, conv, qi, rec);
    }
    sim.out
}
