//! Following one piece of evidence through memory to the first op that loses its key.

use std::collections::BTreeSet;

use super::graph::{self, decider, is_tombstone, lineage};
use super::{changed, edits, misled, pipeline, shown, stage, Finding, InfoFlow, Loss, Stage};
use crate::attribution::roles::{holds_verbatim, is_verbatim_cut, verbatim_text, OpRole, Roles};
use crate::attribution::text::{var_anchor, Key};
use crate::attribution::values::{hands_no_text, may_author};
use crate::attribution::AttributionError;
use crate::model::{FailureCase, OpIx, Trace, VarIx};

impl InfoFlow {
    /// Follows one piece of evidence to the first op that loses its key (or to the answer op,
    /// when the answer op read it).
    pub(super) fn follow(
        &self,
        t: &Trace,
        roles: &Roles,
        stage: &Stage,
        case: &FailureCase,
        evidence: &[VarIx],
        key: &Key,
    ) -> Result<Finding, AttributionError> {
        let bar = key.bar(self.threshold);
        // A verbatim copy of the evidence (a buffer, a stored chunk) carries what it carries.
        let texts: Vec<String> = evidence
            .iter()
            .filter_map(|&e| verbatim_text(t, e))
            .collect();
        let copies = |w: VarIx| !texts.is_empty() && texts.iter().all(|x| holds_verbatim(t, x, w));
        let carries = |v: VarIx| key.carry_var(t.var(v)) >= bar || copies(v);
        let result =
            |op: OpIx, role: OpRole, path: Vec<VarIx>, reason: String, confidence: f64| Finding {
                op,
                role,
                path,
                reason,
                confidence,
                repeated: false,
            };
        let stage = stage.clone();

        let is_memory =
            |v: VarIx| v != stage.query && stage.memory_kinds.contains(&t.var(v).category);
        // What a buffer or chunker (role other) produced is the evidence only where it copied
        // the evidence verbatim, when it copied it anywhere (a chunk emitted as the evidence
        // arrived holds the messages before it, not the evidence).
        // What an op cut verbatim from a copy of the evidence (a segment, a buffer keeping its
        // newest message) without the evidence holds other messages: it is not followed.
        let reads_copy = |o: OpIx| t.flow.op_inputs[o.get()].iter().any(|&v| copies(v));
        let keep = |o: OpIx, w: VarIx| {
            if texts.is_empty() || copies(w) {
                return true;
            }
            if reads_copy(o) && is_verbatim_cut(t, o, w) {
                return false;
            }
            roles.role(o) != OpRole::Other || !t.flow.op_produced(o).any(copies)
        };
        // From a memory unit that holds the evidence verbatim (a raw unit), what an extraction
        // op derives is the evidence too; from any other memory only its own versions.
        let versions_only =
            |v: VarIx, o: OpIx| is_memory(v) && !(roles.role(o) == OpRole::Extraction && copies(v));
        let lineage = lineage(t, evidence, &versions_only, &keep);
        let in_lineage = |v: VarIx| lineage.binary_search(&v).is_ok();
        // An answer input counts when it came from the evidence: it is in the lineage, or was
        // assembled (one op back) from something in it.
        let from_evidence = |v: VarIx| {
            in_lineage(v)
                || t.flow.producers[v.get()].iter().any(|&o| {
                    t.flow.op_inputs[o.get()]
                        .iter()
                        .any(|&w| in_lineage(w) && w != stage.query)
                })
        };
        let readers: BTreeSet<OpIx> = evidence
            .iter()
            .flat_map(|&e| t.flow.consumers[e.get()].iter().copied())
            .filter(|&o| !stage.is_answer(o) && Some(o) != stage.retrieval_op)
            .filter(|&o| roles.role(o) != OpRole::Judge)
            // An embedding call hands on no words: it cannot lose them.
            .filter(|&o| !hands_no_text(t, o))
            .collect();
        let earliest =
            |a: &OpIx, b: &OpIx| t.op(*a).created_at.cmp(&t.op(*b).created_at).then(a.cmp(b));

        // 0. The first op to read the evidence handed none of the answer on: whatever later ops
        //    made of the evidence (a re-read, a memory holding the same words) comes after the
        //    first loss. Only with the gold answer's words to go by: evidence words alone are
        //    too loose to call a reader's output a loss.
        if key.gold_is_literal {
            let authors = readers.iter().filter(|&&o| may_author(t, o));
            if let Some(&first) = authors.min_by(|a, b| earliest(a, b)) {
                // Clearly lost, not kept in part: a long answer is rarely restated whole.
                // A verbatim copy (a buffer) keeps all the evidence says.
                let kept = t
                    .flow
                    .op_produced(first)
                    .map(|v| {
                        if copies(v) {
                            1.0
                        } else {
                            key.carry_var(t.var(v))
                        }
                    })
                    .fold(0.0, f64::max);
                if kept < bar / 2.0 {
                    let reason = format!(
                        "{} was the first to read the evidence, but none of what it produced holds the answer.{}",
                        t.op(first).op_name,
                        changed(t, key, t.flow.op_produced(first))
                    );
                    return Ok(result(first, OpRole::Extraction, Vec::new(), reason, 0.8));
                }
            }
        }

        // Where a memory unit's visible versions lost the information: the writer of the
        // version after the last one that held it. Versions before the first one the evidence
        // reached (a profile item from an earlier session) cannot hold what it says.
        let visible_of = |name: &str| -> Vec<VarIx> {
            t.flow.versions.get(name).map_or_else(Vec::new, |versions| {
                versions
                    .iter()
                    .copied()
                    .skip_while(|&v| !in_lineage(v))
                    .filter(|&v| t.var(v).created_at <= stage.cutoff)
                    .collect()
            })
        };
        // The loss after `visible[last_good]`, the last version that held what was lost.
        let loss_at = |visible: &[VarIx], last_good: usize| -> Option<Loss> {
            let &next = visible.get(last_good + 1)?;
            let writer = t.flow.producers[next.get()]
                .iter()
                .copied()
                .find(|&o| Some(o) != stage.retrieval_op && o != stage.answer_op)?;
            // A raw unit's copy dropped when an extraction handed the information on elsewhere
            // (a reply, a profile) is not where it was lost: the other path is followed.
            let handed_on = copies(visible[last_good])
                && roles.role(writer) == OpRole::Extraction
                && t.flow.op_produced(writer).any(|w| {
                    t.var(w).full_name != t.var(next).full_name && !t.is_prompt(w) && carries(w)
                });
            if handed_on {
                return None;
            }
            // A store that applied a model's decision: the decision lost the information.
            let writer = decider(t, writer, visible[last_good], next).unwrap_or(writer);
            let role = match roles.role(writer) {
                // An extraction that left a raw unit empty extracted nothing; it deleted nothing.
                OpRole::Extraction if !graph::marked_deleted(t, next) => OpRole::Extraction,
                _ if is_tombstone(t, next) => OpRole::Deletion,
                _ if graph::shrank(t, visible[last_good], next) => OpRole::Deletion,
                r @ (OpRole::Deletion | OpRole::Extraction) => r,
                _ => OpRole::Update,
            };
            let verb = if role == OpRole::Deletion {
                "deleted"
            } else {
                "overwrote"
            };
            let left = if carries(next) {
                "which keeps only a vaguer part of it"
            } else {
                "which no longer holds it"
            };
            let reason = format!(
                "{} held the information; {} {verb} it as {}, {left}.{}",
                shown(t, visible[last_good]),
                t.op(writer).op_name,
                shown(t, next),
                changed(t, key, [next])
            );
            Some((
                t.op(writer).created_at.clone(),
                writer,
                role,
                vec![visible[last_good], next],
                reason,
            ))
        };
        let loss_of = |visible: &[VarIx]| {
            let last_good = visible.iter().rposition(|&v| carries(v))?;
            loss_at(visible, last_good)
        };
        // How much of the key a variable holds (a verbatim copy of the evidence: all of it).
        let strength = |v: VarIx| {
            if copies(v) {
                1.0
            } else {
                key.carry_var(t.var(v))
            }
        };
        let strengths =
            |visible: &[VarIx]| -> Vec<f64> { visible.iter().map(|&v| strength(v)).collect() };
        // Where a unit whose current version (`held[i]`: how much of the key version `i` holds)
        // still holds part of the key dropped a version that held more of it (a profile update
        // keeping only a vaguer item): the loss, and how much the lost version held.
        let weakened = |visible: &[VarIx], held: &[f64]| -> Option<(Loss, f64)> {
            let &now = held.last()?;
            let most = held.iter().copied().fold(now, f64::max);
            let last_good = held.iter().rposition(|&x| x >= most)?;
            (most > now)
                .then(|| loss_at(visible, last_good))
                .flatten()
                .map(|l| (l, most))
        };
        let memory: Vec<VarIx> = lineage.iter().copied().filter(|&v| is_memory(v)).collect();
        let identities: BTreeSet<&str> = memory
            .iter()
            .map(|&v| t.var(v).full_name.as_str())
            .collect();

        // 1. The answer op had the information: in what it read of each input (the items its
        //    prompt quotes of a structured one).
        let carries_read = |v: VarIx| {
            copies(v)
                || key.carry_items(
                    t.var(v),
                    &stage::read_texts(t, stage.answer_op, v, stage.query),
                ) >= bar
        };
        let holding: Vec<VarIx> = t.flow.op_inputs[stage.answer_op.get()]
            .iter()
            .copied()
            .filter(|&v| v != stage.query && !t.is_prompt(v))
            .filter(|&v| carries_read(v) && from_evidence(v))
            .collect();
        let held = holding.first().copied();
        let answered_anyway = |v: VarIx, what: &str, confidence: f64| {
            let reason = format!(
                "The answer op read {} which holds {what}, yet answered {:?}.",
                shown(t, v),
                case.prediction
            );
            result(
                stage.answer_op,
                OpRole::Response,
                vec![v],
                reason,
                confidence,
            )
        };
        // What the answer op read, itself or through the retrieval that fed it.
        let read = |v: VarIx| {
            let inputs = &t.flow.op_inputs[stage.answer_op.get()];
            inputs.contains(&v)
                || t.flow.consumers[v.get()].iter().any(|&o| {
                    Some(o) == stage.retrieval_op
                        && t.flow.op_produced(o).any(|w| inputs.contains(&w))
                })
        };
        // The copies of the evidence the answer read (not the question, not a prompt).
        let copies_read = || {
            lineage
                .iter()
                .copied()
                .filter(|&w| w != stage.query && !t.is_prompt(w))
                .filter(|&w| read(w))
        };
        if let Some(v) = held {
            // Unless a memory unit the answer read had lost the information before the
            // question (a profile overwritten): the answer trusted the corrupted memory.
            // Or kept only part of what it held, less than the answer op read anywhere.
            let held_most = holding.iter().map(|&w| strength(w)).fold(0.0, f64::max);
            let trusted_loss = identities
                .iter()
                .map(|name| visible_of(name))
                .filter(|vis| vis.last().is_some_and(|&cur| read(cur)))
                .filter_map(|vis| match vis.last() {
                    Some(&cur) if !carries(cur) => loss_of(&vis),
                    _ => weakened(&vis, &strengths(&vis))
                        .filter(|w| w.1 > held_most)
                        .map(|w| w.0),
                })
                .filter(|l| l.2 != OpRole::Extraction)
                .min_by(|a, b| a.0.cmp(&b.0));
            if let Some((_, op, role, path, reason)) = trusted_loss {
                return Ok(result(op, role, path, reason, 0.75));
            }
            // Unless the answer repeats a corrupted copy of the evidence it read (one that still
            // seems to carry the information, by a date elsewhere in it, or not): the op that
            // corrupted it misled the answer.
            let copies = copies_read().chain(std::iter::once(v));
            if let Some(found) = misled(t, roles, &stage, case, evidence, key, copies) {
                return Ok(found);
            }
            if let Some(d) = pipeline::lossy_draft(t, roles, &stage, key, v, bar) {
                let reason = format!(
                    "{} read {} which holds the answer-bearing information, yet its draft lost it.",
                    t.op(d).op_name,
                    shown(t, v)
                );
                return Ok(result(d, OpRole::Response, vec![v], reason, 0.8));
            }
            return Ok(answered_anyway(v, "the answer-bearing information", 0.85));
        }

        // 2 and 3: follow each memory identity's versions up to the question.
        let mut losses: Vec<Loss> = Vec::new();
        let mut holder = None;
        for name in identities {
            let visible = visible_of(name);
            let Some(&current) = visible.last() else {
                continue;
            };
            if carries(current) {
                if let Some(del) = Self::deleted_by_link(t, &stage, current) {
                    let reason = format!(
                        "{} held the information but {} marked it deleted.",
                        shown(t, current),
                        t.op(del).op_name
                    );
                    losses.push((
                        t.op(del).created_at.clone(),
                        del,
                        OpRole::Deletion,
                        vec![current],
                        reason,
                    ));
                    continue;
                }
                // A later op's edit deleted it, or replaced it with what no longer holds it.
                let anchor = var_anchor(t.var(current));
                let text_carries = |x: &str| key.carry_at(x, anchor) >= bar;
                if let Some((op, role, reason)) = edits::retired(t, &stage, current, &text_carries)
                {
                    losses.push((t.op(op).created_at.clone(), op, role, vec![current], reason));
                    continue;
                }
                let held = strengths(&visible);
                losses.extend(weakened(&visible, &held).map(|(l, _)| l));
                let now = held.last().copied().unwrap_or(0.0);
                if holder.is_none_or(|(_, best)| now > best) {
                    holder = Some((current, now));
                }
                continue;
            }
            losses.extend(loss_of(&visible));
        }
        if let Some((current, held)) = holder {
            // A memory that still holds part of the key does not answer for one that held
            // more of it and lost it: the loss decided.
            losses.retain(|l| l.3.first().is_some_and(|&v| strength(v) > held));
            if losses.is_empty() {
                // Retrieval is not at fault when the answer op had the answer all the same.
                if let Some(v) = self.answer_holds_gold(t, &stage, key) {
                    // The copies read, then any other copy of the evidence: a stretch the
                    // answer repeats word for word was read, even along a path not traced.
                    let copies = copies_read()
                        .chain(std::iter::once(v))
                        .chain(lineage.iter().copied().filter(|&w| !read(w)));
                    if let Some(found) = misled(t, roles, &stage, case, evidence, key, copies) {
                        return Ok(found);
                    }
                    if let Some(d) = pipeline::lossy_draft(t, roles, &stage, key, v, bar) {
                        let reason = format!(
                            "{} read {} which holds the gold answer, yet its draft lost it.",
                            t.op(d).op_name,
                            shown(t, v)
                        );
                        return Ok(result(d, OpRole::Response, vec![v], reason, 0.75));
                    }
                    return Ok(answered_anyway(v, "the gold answer", 0.75));
                }
                let op = pipeline::retrieval_loss(t, &stage, current, &carries)
                    .or(stage.retrieval_op)
                    .unwrap_or(stage.answer_op);
                let reason = format!(
                    "{} still held the information when the question was asked, but {} did not pass it on to the answer.",
                    shown(t, current),
                    t.op(op).op_name
                );
                return Ok(result(op, OpRole::Retrieval, vec![current], reason, 0.8));
            }
        }
        if let Some((_, op, role, path, reason)) = losses.into_iter().min_by(|a, b| a.0.cmp(&b.0)) {
            return Ok(result(op, role, path, reason, 0.8));
        }

        // 4 and 5: what did the ops that read the evidence make of it? The one that lost it
        // wrote prose (facts), when any reader did: not a step that wrote names or labels.
        let authors: Vec<OpIx> = readers
            .iter()
            .copied()
            .filter(|&o| may_author(t, o))
            .collect();
        let first_author = authors.iter().min_by(|a, b| earliest(a, b));
        let Some(&reader) = first_author.or_else(|| readers.iter().min_by(|a, b| earliest(a, b)))
        else {
            return Err(AttributionError::Unresolvable {
                case_id: case.query_id.clone(),
                reason: "no operation read the evidence messages".into(),
            });
        };
        // Facts: what an evidence reader handed on, holding the information.
        let mut facts: Vec<(OpIx, VarIx)> = readers
            .iter()
            .flat_map(|&x| t.flow.op_outputs[x.get()].iter().map(move |&f| (x, f)))
            .filter(|&(x, f)| !is_memory(f) && carries(f) && keep(x, f))
            .collect();
        let passes_on = |o: OpIx| {
            roles.role(o) == OpRole::Other && o != stage.answer_op && Some(o) != stage.retrieval_op
        };
        // What buffers and chunkers (role other) hand on is still the evidence.
        let mut i = 0;
        while let Some(&(_, f)) = facts.get(i) {
            i += 1;
            for &o in t.flow.consumers[f.get()].iter().filter(|&&o| passes_on(o)) {
                for w in t.flow.op_produced(o) {
                    let new = !facts.iter().any(|x| x.1 == w);
                    if new && !is_memory(w) && carries(w) && keep(o, w) {
                        facts.push((o, w));
                    }
                }
            }
        }
        // The op that should have stored a fact is one whose outputs flow into memory, not a
        // reader that only decides (a boundary step), when some reader's outputs do.
        let consumers: Vec<(OpIx, VarIx)> = facts
            .iter()
            .flat_map(|&(_, f)| t.flow.consumers[f.get()].iter().map(move |&o| (o, f)))
            .filter(|&(o, _)| o != stage.answer_op && Some(o) != stage.retrieval_op)
            // A step of no known role that handed none of it on did not pass it on: it
            // dropped it (a decision step whatever its name).
            .filter(|&(o, _)| !passes_on(o) || !t.flow.op_produced(o).any(&carries))
            .collect();
        // Another question's answer read a fact made before this question was asked: the fact
        // was there to be found (kept where the trace does not show), and this question's
        // retrieval did not bring it.
        let found_elsewhere = consumers.iter().find(|&&(o, f)| {
            roles.role(o) == OpRole::Response && t.var(f).created_at <= stage.cutoff
        });
        if let Some(&(other, fact)) = found_elsewhere {
            let op = stage.retrieval_op.unwrap_or(stage.answer_op);
            let reason = format!(
                "{} held the information before the question was asked ({} read it to answer another question), but {} did not pass it on to the answer.",
                shown(t, fact),
                t.op(other).op_name,
                t.op(op).op_name
            );
            return Ok(result(op, OpRole::Retrieval, vec![fact], reason, 0.75));
        }
        let stores = |o: OpIx| {
            graph::descendants(t, &t.flow.op_produced(o).collect::<Vec<_>>())
                .into_iter()
                .any(is_memory)
        };
        let storing: Vec<(OpIx, VarIx)> = consumers
            .iter()
            .copied()
            .filter(|&(o, _)| stores(o))
            .collect();
        let dropped_at = if storing.is_empty() {
            consumers
        } else {
            storing
        }
        .into_iter()
        .min_by(|a, b| earliest(&a.0, &b.0));
        if let Some((op, fact)) = dropped_at {
            let role = match roles.role(op) {
                r @ (OpRole::Deletion | OpRole::Extraction) => r,
                _ => OpRole::Update,
            };
            let reason = format!(
                "{} held the information, but {} did not store it in memory.",
                shown(t, fact),
                t.op(op).op_name
            );
            return Ok(result(op, role, vec![fact], reason, 0.75));
        }
        // What the evidence readers made of it did not decide when the answer op read the gold
        // answer all the same (an answer the evidence implies, stated by another message).
        if let Some(v) = self.answer_holds_gold(t, &stage, key) {
            return Ok(answered_anyway(v, "the gold answer", 0.7));
        }
        let reason = format!(
            "{} read the evidence, but none of what it produced holds the answer-bearing information.{}",
            t.op(reader).op_name,
            changed(t, key, readers.iter().flat_map(|&x| t.flow.op_produced(x)))
        );
        Ok(result(reader, OpRole::Extraction, Vec::new(), reason, 0.8))
    }
}
