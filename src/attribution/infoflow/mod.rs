//! The information-flow attributor: no LLM, milliseconds per case.
//!
//! It follows the answer-bearing information forward from the gold evidence — messages →
//! extracted facts → memory-unit versions → retrieved context → answer — and returns the first
//! operation where it is lost or corrupted, typed by that operation's role:
//!
//! 0. the first op to read the evidence kept none of the gold answer → that op
//!    (ExtractionError), whatever later ops made of the evidence;
//! 1. the answer op's inputs hold the information → the answer op is at fault (ResponseError),
//!    unless a memory it read had lost the information (the op that lost it), or it repeated a
//!    corrupted copy of the evidence it read (the op that corrupted it: [`quoted`]);
//! 2. a memory version current at retrieval time holds it, but it did not reach the answer op →
//!    the retrieval op (RetrievalError), unless the answer op's inputs hold the gold answer's
//!    words anyway (ResponseError);
//! 3. a memory version held it once, a later version does not → the op that wrote that version
//!    (UpdateError, or DeletionError for a tombstone / deletion op);
//! 4. an extracted fact held it but no memory ever did → the op that consumed that fact
//!    (UpdateError: the decision dropped it);
//! 5. nothing after the evidence held it → the op that read the evidence (ExtractionError).
//!
//! Each evidence message is followed on its own, plus the messages holding the gold answer when
//! no evidence message does (those said nearest the evidence); a memory's versions older than
//! the evidence are not followed (they cannot hold what it says). The verdict is the earliest
//! loss of a part of the gold answer that reached the answer by no other message, else the
//! answer op when the gold answer reached it, else the earliest loss.
//!
//! "Holds" is [`Key::carry`] ≥ the threshold (over stemmed terms). Which variables are memory is read from the graph:
//! the kinds (categories) of the variables retrieval reads or returns that some other op wrote.

pub(crate) mod graph;
mod pipeline;
mod quoted;

use std::collections::{BTreeMap, BTreeSet};

use graph::{decider, find_retrieval, is_tombstone, lineage, memory_kinds_near, question_pipeline};

use super::roles::{
    holds_verbatim, is_verbatim_cut, verbatim_text, Basis, OpRole, RoleConfig, Roles,
};
use super::text::{
    content_tokens, parse_day, parts, terms, tokens, var_anchor, var_text, var_texts, Key,
};
use super::{Attribution, AttributionError, Cost};
use crate::model::{ErrorType, FailureCase, OpIx, Trace, VarIx};

/// The finding's error type and reason; the user's role for the blamed op, when they set one
/// that can be at fault, gives the type (a fault at an op they call an update is an
/// `UpdateError`).
fn user_typed(t: &Trace, roles: &Roles, f: &Finding) -> (ErrorType, String) {
    let found = match f.role {
        OpRole::Judge => ErrorType::LlmAsAJudgeError,
        r => r.error_type().unwrap_or(ErrorType::ResponseError),
    };
    let user = roles
        .get(f.op)
        .filter(|a| a.basis == Basis::User)
        .and_then(|a| a.role.error_type().map(|e| (a.role, e)));
    match user {
        Some((role, e)) if e != found => (
            e,
            format!(
                "{} Typed {} by your role for {}: {role} (the trace alone says {}).",
                f.reason,
                e.as_str(),
                t.op(f.op).op_name,
                found.as_str()
            ),
        ),
        _ => (found, f.reason.clone()),
    }
}

/// Settings of the information-flow attributor.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct InfoFlow {
    /// Share of the key a variable must hold to count as carrying the information.
    pub threshold: f64,
    /// Messages taken as evidence when a case names none.
    pub start_points: usize,
}

impl Default for InfoFlow {
    fn default() -> Self {
        InfoFlow {
            threshold: 0.6,
            start_points: 3,
        }
    }
}

/// Where one piece of evidence was lost (or reached the answer op: role `Response`).
struct Finding {
    op: OpIx,
    role: OpRole,
    path: Vec<VarIx>,
    reason: String,
    confidence: f64,
}

/// Where a memory unit lost the information: when, the op, its role, the versions, why.
type Loss = (String, OpIx, OpRole, Vec<VarIx>, String);

/// The places of one case's pipeline, found from the graph.
#[derive(Clone)]
struct Stage {
    query: VarIx,
    answer_op: OpIx,
    retrieval_op: Option<OpIx>,
    /// Categories of memory variables.
    memory_kinds: BTreeSet<String>,
    /// Memory versions created after this time are not visible to the question.
    cutoff: String,
    /// The question's own ops ([`question_pipeline`]).
    pipeline: Vec<OpIx>,
}

impl InfoFlow {
    /// Attributes one failed case with the roles inferred from the default [`RoleConfig`]
    /// (no overrides). Computes the roles each call: use [`InfoFlow::attribute_with`] for many
    /// cases of one trace.
    ///
    /// # Errors
    /// [`AttributionError::Unresolvable`] when the case's query or prediction cannot be found
    /// in the graph.
    pub fn attribute(
        &self,
        t: &Trace,
        case: &FailureCase,
    ) -> Result<Attribution, AttributionError> {
        self.attribute_with(t, &Roles::infer(t, &RoleConfig::default()), case)
    }

    /// Attributes one failed case; the error type is the blamed op's role in `roles`.
    ///
    /// # Errors
    /// As [`InfoFlow::attribute`].
    pub fn attribute_with(
        &self,
        t: &Trace,
        roles: &Roles,
        case: &FailureCase,
    ) -> Result<Attribution, AttributionError> {
        let stage = Self::stage(t, case)?;
        if let Some(f) = pipeline::judge_erred(t, roles, &stage, case) {
            return Ok(Self::verdict(t, roles, case, &f, Vec::new(), 1.0));
        }
        let (mut evidence, from_start_points) = self.evidence(t, case, &stage);
        evidence.extend(self.gold_sources(t, case, &stage, &evidence));
        let ev_ids: Vec<String> = evidence
            .iter()
            .map(|&e| t.var(e).full_node_id.clone())
            .collect();
        // Follow each evidence message on its own: its key is what it alone contributes.
        let mut findings = Vec::new();
        for &e in &evidence {
            let key = Key::new(&case.golden_answers, &case.query, &[var_text(t.var(e))])
                .timed(var_anchor(t.var(e)));
            findings.push((
                key.gold_is_literal.then_some(key.gold.clone()),
                self.follow(t, roles, &stage, case, &[e], &key)?,
            ));
        }
        // Gold words that reached the answer op through some evidence message.
        let reached_gold: BTreeSet<&String> = findings
            .iter()
            .filter(|(_, f)| f.role == OpRole::Response)
            .filter_map(|(gold, _)| gold.as_ref())
            .flatten()
            .collect();
        let losses = findings.iter().filter(|(_, f)| f.role != OpRole::Response);
        let earliest = |a: &&(Option<BTreeSet<String>>, Finding),
                        b: &&(Option<BTreeSet<String>>, Finding)| {
            t.op(a.1.op)
                .created_at
                .cmp(&t.op(b.1.op).created_at)
                .then(a.1.op.cmp(&b.1.op))
        };
        // A part of the gold answer that was lost and reached the answer by no other message
        // ("poetry, creative writing" from two messages, one of them deleted).
        let part_lost = losses
            .clone()
            .filter(|(gold, _)| {
                gold.as_ref()
                    .is_some_and(|g| g.iter().any(|w| !reached_gold.contains(w)))
            })
            .min_by(earliest);
        // Unless the answer ignored what it had: none of the gold words that reached it is in
        // the prediction. A lenient judge (LoCoMo's) passes a partial answer, so the part lost
        // upstream did not decide the failure; the answer op did.
        let said = terms(&case.prediction);
        let ignored = !reached_gold.is_empty() && reached_gold.iter().all(|w| !said.contains(*w));
        let part_lost = part_lost.filter(|_| !ignored);
        // Else, when all reached the answer or one holding the gold answer did, the answer op
        // is at fault; otherwise the earliest place where a piece of evidence was lost.
        let reached_with_gold = findings
            .iter()
            .find(|(gold, f)| f.role == OpRole::Response && gold.is_some());
        let chosen = part_lost
            .or(reached_with_gold)
            .or_else(|| losses.min_by(earliest))
            .or_else(|| findings.first());
        let Some((_, f)) = chosen else {
            return Err(AttributionError::Unresolvable {
                case_id: case.query_id.clone(),
                reason: "the case has no evidence messages and none match its question".into(),
            });
        };
        let scale = if from_start_points { 0.7 } else { 1.0 };
        Ok(Self::verdict(t, roles, case, f, ev_ids, scale))
    }

    /// The attribution of a finding: the evidence ids, then the finding's path and op.
    fn verdict(
        t: &Trace,
        roles: &Roles,
        case: &FailureCase,
        f: &Finding,
        mut evidence_path: Vec<String>,
        scale: f64,
    ) -> Attribution {
        evidence_path.extend(f.path.iter().map(|&v| t.var(v).full_node_id.clone()));
        evidence_path.push(t.op(f.op).op_id.clone());
        let (error_type, reason) = user_typed(t, roles, f);
        Attribution {
            case_id: case.query_id.clone(),
            op_id: t.op(f.op).op_id.clone(),
            op_name: t.op(f.op).op_name.clone(),
            error_type,
            reason,
            evidence_path,
            confidence: f.confidence * scale,
            cost: Cost::default(),
            method: "infoflow".into(),
        }
    }

    /// Follows one piece of evidence to the first op that loses its key (or to the answer op,
    /// when the answer op read it).
    fn follow(
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
            .filter(|&o| o != stage.answer_op && Some(o) != stage.retrieval_op)
            .filter(|&o| roles.role(o) != OpRole::Judge)
            .collect();
        let earliest =
            |a: &OpIx, b: &OpIx| t.op(*a).created_at.cmp(&t.op(*b).created_at).then(a.cmp(b));

        // 0. The first op to read the evidence handed none of the answer on: whatever later ops
        //    made of the evidence (a re-read, a memory holding the same words) comes after the
        //    first loss. Only with the gold answer's words to go by: evidence words alone are
        //    too loose to call a reader's output a loss.
        if key.gold_is_literal {
            if let Some(&first) = readers.iter().min_by(|a, b| earliest(a, b)) {
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
                t.var(visible[last_good]).full_node_id,
                t.op(writer).op_name,
                t.var(next).full_node_id,
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

        // 1. The answer op had the information.
        let holding: Vec<VarIx> = t.flow.op_inputs[stage.answer_op.get()]
            .iter()
            .copied()
            .filter(|&v| v != stage.query && !t.is_prompt(v))
            .filter(|&v| carries(v) && from_evidence(v))
            .collect();
        let held = holding.first().copied();
        let answered_anyway = |v: VarIx, what: &str, confidence: f64| {
            let reason = format!(
                "The answer op read {} which holds {what}, yet answered {:?}.",
                t.var(v).full_node_id,
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
        if let Some(v) = held {
            // Unless a memory unit the answer read had lost the information before the
            // question (a profile overwritten): the answer trusted the corrupted memory.
            let read = |v: VarIx| {
                let inputs = &t.flow.op_inputs[stage.answer_op.get()];
                inputs.contains(&v)
                    || t.flow.consumers[v.get()].iter().any(|&o| {
                        Some(o) == stage.retrieval_op
                            && t.flow.op_produced(o).any(|w| inputs.contains(&w))
                    })
            };
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
            let copies_read = lineage
                .iter()
                .copied()
                .filter(|&w| w != stage.query && !t.is_prompt(w))
                .filter(|&w| read(w));
            if let Some(found) = misled(t, roles, &stage, case, evidence, key, copies_read) {
                return Ok(found);
            }
            if let Some(d) = pipeline::lossy_draft(t, roles, &stage, key, v, bar) {
                let reason = format!(
                    "{} read {} which holds the answer-bearing information, yet its draft lost it.",
                    t.op(d).op_name,
                    t.var(v).full_node_id
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
                        t.var(current).full_node_id,
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
                    if let Some(d) = pipeline::lossy_draft(t, roles, &stage, key, v, bar) {
                        let reason = format!(
                            "{} read {} which holds the gold answer, yet its draft lost it.",
                            t.op(d).op_name,
                            t.var(v).full_node_id
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
                    t.var(current).full_node_id,
                    t.op(op).op_name
                );
                return Ok(result(op, OpRole::Retrieval, vec![current], reason, 0.8));
            }
        }
        if let Some((_, op, role, path, reason)) = losses.into_iter().min_by(|a, b| a.0.cmp(&b.0)) {
            return Ok(result(op, role, path, reason, 0.8));
        }

        // 4 and 5: what did the ops that read the evidence make of it?
        let Some(&reader) = readers.iter().min_by(|a, b| earliest(a, b)) else {
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
                t.var(fact).full_node_id,
                t.op(op).op_name
            );
            return Ok(result(op, role, vec![fact], reason, 0.75));
        }
        let reason = format!(
            "{} read the evidence, but none of what it produced holds the answer-bearing information.{}",
            t.op(reader).op_name,
            changed(t, key, readers.iter().flat_map(|&x| t.flow.op_produced(x)))
        );
        Ok(result(reader, OpRole::Extraction, Vec::new(), reason, 0.8))
    }

    /// Finds the query, the answer op, the retrieval op and the memory kinds of a case.
    fn stage(t: &Trace, case: &FailureCase) -> Result<Stage, AttributionError> {
        let unresolvable = |reason: &str| AttributionError::Unresolvable {
            case_id: case.query_id.clone(),
            reason: reason.to_owned(),
        };
        let query = t
            .var_by_id(&case.query_id)
            .ok_or_else(|| unresolvable("the query variable is not in the graph"))?;
        let prediction = case.prediction_id.as_deref().and_then(|p| t.var_by_id(p));
        // The prediction's producer that read this query: identical answers to two questions
        // are one variable with two producers.
        let producers = prediction
            .map(|p| t.flow.producers[p.get()].clone())
            .unwrap_or_default();
        let answer_op = producers
            .iter()
            .copied()
            .find(|&o| t.flow.op_inputs[o.get()].contains(&query))
            .or_else(|| case.answer_op.as_deref().and_then(|a| t.op_by_id(a)))
            .or_else(|| producers.first().copied())
            .ok_or_else(|| unresolvable("no operation produced the prediction"))?;
        let retrieval_op = find_retrieval(t, query, answer_op);
        let mut memory_kinds = memory_kinds_near(t, query, answer_op, retrieval_op);
        if memory_kinds.is_empty() {
            // Retrieval returned nothing this time: learn the kinds from its other calls.
            if let Some(r) = retrieval_op {
                let name = &t.op(r).op_name;
                for (o, op) in t.ops.iter().enumerate() {
                    let o = OpIx(o as u32);
                    if o != r && &op.op_name == name {
                        let q = t.flow.op_inputs[o.get()].first().copied().unwrap_or(query);
                        memory_kinds.extend(memory_kinds_near(t, q, answer_op, Some(o)));
                    }
                }
            }
        }
        let cutoff_op = retrieval_op.unwrap_or(answer_op);
        Ok(Stage {
            query,
            answer_op,
            retrieval_op,
            memory_kinds,
            cutoff: t.op(cutoff_op).created_at.clone(),
            pipeline: question_pipeline(t, query, answer_op),
        })
    }

    /// The case's evidence messages, or the best-matching messages when it names none.
    fn evidence(&self, t: &Trace, case: &FailureCase, stage: &Stage) -> (Vec<VarIx>, bool) {
        let query = stage.query;
        let named: Vec<VarIx> = case
            .evidence_ids
            .iter()
            .filter_map(|id| t.var_by_id(id))
            .collect();
        if !named.is_empty() {
            return (named, false);
        }
        let want = content_tokens(&format!("{} {}", case.query, case.golden_answers.join(" ")));
        let kinds = pipeline::message_kinds(t, stage);
        let mut scored: Vec<(usize, VarIx)> = (0..t.vars.len() as u32)
            .map(VarIx)
            .filter(|&v| v != query && kinds.contains(&t.var(v).category))
            // Said before the question, and not only the question's own input.
            .filter(|&v| t.var(v).created_at <= stage.cutoff)
            .filter(|&v| {
                let readers = &t.flow.consumers[v.get()];
                readers.is_empty() || readers.iter().any(|o| !stage.pipeline.contains(o))
            })
            .map(|v| {
                (
                    content_tokens(&var_text(t.var(v)))
                        .intersection(&want)
                        .count(),
                    v,
                )
            })
            .filter(|(s, _)| *s > 0)
            .collect();
        scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        (
            scored
                .into_iter()
                .take(self.start_points)
                .map(|(_, v)| v)
                .collect(),
            true,
        )
    }

    /// Annotated evidence often names the message that set up a fact but not the one holding
    /// the answer. When no evidence message holds the gold answer's words, the messages (of
    /// the evidence's kind, before the question) that hold them best are followed too.
    fn gold_sources(
        &self,
        t: &Trace,
        case: &FailureCase,
        stage: &Stage,
        evidence: &[VarIx],
    ) -> Vec<VarIx> {
        let literal = |e: &VarIx| {
            Key::new(&case.golden_answers, &case.query, &[var_text(t.var(*e))]).gold_is_literal
        };
        if evidence.is_empty() || evidence.iter().any(literal) {
            return Vec::new();
        }
        let kinds: BTreeSet<&str> = evidence
            .iter()
            .map(|&e| t.var(e).category.as_str())
            .collect();
        let gold = Key::new(&case.golden_answers, &case.query, &[]);
        let mut scored: Vec<(f64, VarIx)> = (0..t.vars.len() as u32)
            .map(VarIx)
            .filter(|&v| v != stage.query && !evidence.contains(&v))
            .filter(|&v| kinds.contains(t.var(v).category.as_str()))
            .filter(|&v| t.var(v).created_at <= stage.cutoff)
            .map(|v| (gold.gold_carry(&var_text(t.var(v))), v))
            .filter(|&(s, _)| s >= self.threshold)
            .collect();
        // Of equal ones, those said nearest the annotated evidence, and none twice as far as
        // the nearest ("I won't quit" four turns before "I'm not giving up", not a "don't quit"
        // of an earlier session).
        let distance = |v: VarIx| {
            evidence
                .iter()
                .map(|e| e.0.abs_diff(v.0))
                .min()
                .unwrap_or(u32::MAX)
        };
        scored.sort_by(|a, b| {
            b.0.total_cmp(&a.0)
                .then(distance(a.1).cmp(&distance(b.1)))
                .then(a.1.cmp(&b.1))
        });
        let (best, nearest) = scored.first().map_or((0.0, 0), |s| (s.0, distance(s.1)));
        scored
            .into_iter()
            .take_while(|s| s.0 >= best && distance(s.1) <= nearest.saturating_mul(2))
            .take(2)
            .map(|(_, v)| v)
            .collect()
    }

    /// An op that read `v` and produced a deletion marker without writing a newer version.
    fn deleted_by_link(t: &Trace, stage: &Stage, v: VarIx) -> Option<OpIx> {
        t.flow.consumers[v.get()].iter().copied().find(|&o| {
            o != stage.answer_op
                && Some(o) != stage.retrieval_op
                && t.op(o).created_at <= stage.cutoff
                && t.flow.op_produced(o).any(|out| {
                    let r = t.var(out);
                    let hay = format!("{} {}", r.full_name, r.category).to_ascii_lowercase();
                    r.full_name != t.var(v).full_name
                        && (hay.contains("delete")
                            || r.category == "marker"
                            || graph::marks_deleted(t, out, v))
                })
                && !t
                    .flow
                    .op_produced(o)
                    .any(|out| t.var(out).full_name == t.var(v).full_name)
        })
    }

    /// An input of the answer op holding the gold answer's words, alone or together with other
    /// inputs that each hold at least half of them.
    fn answer_holds_gold(&self, t: &Trace, stage: &Stage, key: &Key) -> Option<VarIx> {
        let inputs: Vec<VarIx> = t.flow.op_inputs[stage.answer_op.get()]
            .iter()
            .copied()
            .filter(|&v| v != stage.query && !t.is_prompt(v))
            .collect();
        // A structured input (a profile) is judged item by item: the best item counts.
        let texts: Vec<Vec<String>> = inputs.iter().map(|&v| var_texts(t.var(v))).collect();
        let best = |items: &Vec<String>| {
            items
                .iter()
                .map(|x| key.gold_found(x))
                .max_by_key(BTreeSet::len)
                .unwrap_or_default()
        };
        let bar = key.bar(self.threshold);
        if let Some(i) = texts.iter().position(|x| {
            !key.gold.is_empty() && best(x).len() as f64 / key.gold.len() as f64 >= bar
        }) {
            return inputs.get(i).copied();
        }
        let mut found = BTreeSet::new();
        let mut first = None;
        for (i, x) in texts.iter().enumerate() {
            let part = best(x);
            if !part.is_empty() && part.len() * 2 >= key.gold.len() {
                first = first.or(inputs.get(i).copied());
                found.extend(part);
            }
        }
        (!key.gold.is_empty() && found.len() == key.gold.len())
            .then_some(first)
            .flatten()
    }
}

/// Why a variable that keeps the answer's words does not hold it (" It changed the date …"),
/// for the first of `vars` that changed a discriminating part; empty when none did.
fn changed(t: &Trace, key: &Key, vars: impl IntoIterator<Item = VarIx>) -> String {
    vars.into_iter()
        .find_map(|v| key.change(t.var(v)))
        .map_or(String::new(), |c| format!(" It {c}."))
}

/// The op that made a corrupted copy of the evidence the prediction repeats
/// ([`quoted::repeated_corruption`]), among the `read` versions (derived from the evidence, read
/// by the answer): walking up from the version, the first op none of whose inputs holds the
/// repeated stretch. Only an extraction, update or deletion.
fn misled(
    t: &Trace,
    roles: &Roles,
    stage: &Stage,
    case: &FailureCase,
    evidence: &[VarIx],
    key: &Key,
    read: impl Iterator<Item = VarIx>,
) -> Option<Finding> {
    let texts: Vec<Vec<String>> = evidence
        .iter()
        .map(|&e| tokens(&var_text(t.var(e))).collect())
        .collect();
    let said: Vec<String> = tokens(&case.prediction).collect();
    // The gold answer is a date (a day, when it names one).
    let dated = case
        .golden_answers
        .iter()
        .find(|g| parts::has_date(g))
        .map(|g| quoted::GoldDate { day: parse_day(g) });
    let found = read.filter_map(|v| {
        let copy = var_text(t.var(v));
        let stretch = texts
            .iter()
            .find_map(|e| quoted::repeated_corruption(e, &copy, &said, &key.gold, dated))?;
        let mut cur = v;
        for _ in 0..16 {
            let o = t.flow.producers[cur.get()]
                .iter()
                .copied()
                .find(|&o| o != stage.answer_op && Some(o) != stage.retrieval_op)?;
            let from = t.flow.op_inputs[o.get()]
                .iter()
                .copied()
                .find(|&u| u != cur && quoted::holds_run(&var_text(t.var(u)), &stretch));
            match from {
                Some(u) => cur = u,
                None => return Some((o, v, stretch)),
            }
        }
        None
    });
    let (op, v, stretch) = found
        .filter(|(o, _, _)| {
            matches!(
                roles.role(*o),
                OpRole::Extraction | OpRole::Update | OpRole::Deletion
            )
        })
        .min_by(|a, b| {
            t.op(a.0)
                .created_at
                .cmp(&t.op(b.0).created_at)
                .then(a.0.cmp(&b.0))
        })?;
    let reason = format!(
        "The answer op read {}, a copy of the evidence that {} corrupted, and repeated it (\"{}\").",
        t.var(v).full_node_id,
        t.op(op).op_name,
        stretch.join(" ")
    );
    Some(Finding {
        op,
        role: roles.role(op),
        path: vec![v],
        reason,
        confidence: 0.75,
    })
}

/// Attributes every case of a trace, keyed by case id.
pub fn attribute_all(
    t: &Trace,
    attributor: &InfoFlow,
    roles: &Roles,
) -> BTreeMap<String, Result<Attribution, AttributionError>> {
    t.cases
        .iter()
        .map(|c| (c.query_id.clone(), attributor.attribute_with(t, roles, c)))
        .collect()
}
