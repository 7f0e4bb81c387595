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
//! answer op when the gold answer reached it, else the earliest loss — except that when the gold
//! answer reached it by no evidence and the answer repeats what an op corrupted, that op.
//!
//! "Holds" is [`Key::carry`] ≥ the threshold (over stemmed terms). Which variables are memory is read from the graph:
//! the kinds (categories) of the variables retrieval reads or returns that some other op wrote.

mod edits;
mod follow;
pub(crate) mod graph;
mod pipeline;
mod quoted;
mod stage;
pub mod turns;

use std::collections::{BTreeMap, BTreeSet};

use super::roles::{Basis, OpRole, RoleConfig, Roles};
use super::text::{parse_day, parts, terms, tokens, var_anchor, var_text, var_texts, Key};
use super::transcript::flat;
use super::{Attribution, AttributionError, Cost};
use crate::model::{ErrorType, FailureCase, OpIx, Trace, VarIx};
use crate::text::shorten;

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
    /// The answer repeats what `op` corrupted ([`misled`]).
    repeated: bool,
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
    /// The ops that answer a question of the trace, this one's and the others' (sorted): what
    /// they read is a question's context, not a turn, and what they drop is not memory's loss.
    answers: Vec<OpIx>,
}

impl Stage {
    /// True when `op` answers a question of the trace ([`Stage::answers`]).
    fn is_answer(&self, op: OpIx) -> bool {
        self.answers.binary_search(&op).is_ok()
    }
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
        let stage = Self::stage(t, roles, case)?;
        if let Some(f) = pipeline::judge_erred(t, roles, &stage, case) {
            return Ok(Self::verdict(t, roles, case, &f, Vec::new(), f.confidence));
        }
        let (starts, from_start_points) = self.starts(t, roles, case, &stage);
        let from_turns =
            from_start_points && starts.iter().any(|(e, x)| *x != var_text(t.var(e[0])));
        let mut evidence: Vec<VarIx> = starts.iter().flat_map(|(e, _)| e.clone()).collect();
        // Follow each piece of evidence on its own: its key is what it alone contributes.
        let follow_one = |e: &[VarIx], text: &str| -> Result<_, AttributionError> {
            let key = Key::new(&case.golden_answers, &case.query, &[text.to_owned()])
                .timed(e.first().and_then(|&v| var_anchor(t.var(v))));
            Ok((
                key.gold_is_literal.then_some(key.gold.clone()),
                self.follow(t, roles, &stage, case, e, &key)?,
            ))
        };
        let mut followed: Vec<_> = starts.iter().map(|(e, x)| follow_one(e, x)).collect();
        // The messages holding the gold answer's words, unless what the evidence became holds
        // them already: an evidence message saying "last month" that memory stored as
        // "December 2022" needs no other source.
        let gold = Key::new(&case.golden_answers, &case.query, &[]);
        // The event a date answer is of, as the evidence told it ("the Pride fest").
        let told = |x: &str| Key::new(&case.golden_answers, &case.query, &[x.to_owned()]);
        let became_gold = (starts.iter().zip(&followed)).any(|((_, x), r)| {
            let key = told(x);
            r.as_ref().is_ok_and(|(_, f)| {
                f.role != OpRole::Extraction
                    && f.path.iter().any(|&v| {
                        gold.gold_carry(&var_text(t.var(v))) >= self.threshold
                            || (!key.event.is_empty()
                                && key.carry_var(t.var(v)) >= key.bar(self.threshold))
                    })
            })
        });
        // Turns were ranked by the gold answer's words already.
        if !became_gold && !from_turns {
            let sources = self.gold_sources(t, case, &stage, &evidence);
            followed.extend(
                sources
                    .iter()
                    .map(|&e| follow_one(&[e], &var_text(t.var(e)))),
            );
            evidence.extend(sources);
        }
        // A message no op read tells nothing; the case fails only when none can be followed.
        let (findings, unread): (Vec<_>, Vec<_>) = followed.into_iter().partition(Result::is_ok);
        let findings: Vec<_> = findings.into_iter().flatten().collect();
        if let (true, Some(Err(err))) = (findings.is_empty(), unread.into_iter().next()) {
            return Err(err);
        }
        let mut ev_ids: Vec<String> = Vec::new();
        for &e in &evidence {
            let id = &t.var(e).full_node_id;
            if !ev_ids.contains(id) {
                ev_ids.push(id.clone());
            }
        }
        // Gold words that reached the answer op through some evidence message.
        let reached_gold: BTreeSet<&String> = findings
            .iter()
            .filter(|(_, f)| f.role == OpRole::Response)
            .filter_map(|(gold, _)| gold.as_ref())
            .flatten()
            .collect();
        let losses = findings.iter().filter(|(_, f)| f.role != OpRole::Response);
        // Findings from named evidence: the earliest loss decided. From turns found for the
        // question, the best-ranked turn's: a turn ranked lower may be about something else,
        // and its "loss" was never the answer's.
        let rank = |x: &(Option<BTreeSet<String>>, Finding)| {
            findings.iter().position(|y| std::ptr::eq(x, y))
        };
        let earliest = |a: &&(Option<BTreeSet<String>>, Finding),
                        b: &&(Option<BTreeSet<String>>, Finding)| {
            if from_start_points {
                return rank(a).cmp(&rank(b));
            }
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
        // When no evidence brought the gold answer to the answer op, an op whose corruption
        // the answer repeats decided the failure, whatever other evidence (a message holding
        // the gold's words) lost on its way.
        let repeated = findings
            .iter()
            .filter(|(_, f)| f.repeated)
            .min_by(earliest)
            .filter(|_| reached_with_gold.is_none());
        let chosen = repeated
            .or(part_lost)
            .or(reached_with_gold)
            .or_else(|| losses.min_by(earliest))
            .or_else(|| findings.first());
        let Some((_, f)) = chosen else {
            return Err(AttributionError::Unresolvable {
                case_id: case.query_id.clone(),
                reason: "the case has no evidence messages and none match its question".into(),
            });
        };
        let same = findings.iter().filter(|(_, g)| g.op == f.op).count();
        Ok(Self::verdict(
            t,
            roles,
            case,
            f,
            ev_ids,
            agreement(same, findings.len(), from_start_points),
        ))
    }

    /// The turns a case's answer may have come from, best first ([`turns`]): where the
    /// attributor starts when the case names no evidence.
    ///
    /// # Errors
    /// As [`InfoFlow::attribute`].
    pub fn case_turns(
        &self,
        t: &Trace,
        roles: &Roles,
        case: &FailureCase,
    ) -> Result<Vec<turns::Turn>, AttributionError> {
        let stage = Self::stage(t, roles, case)?;
        Ok(turns::ranked(t, roles, &stage, case))
    }

    /// The attribution of a finding: the evidence ids, then the finding's path and op.
    fn verdict(
        t: &Trace,
        roles: &Roles,
        case: &FailureCase,
        f: &Finding,
        mut evidence_path: Vec<String>,
        confidence: f64,
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
            confidence,
            cost: Cost::default(),
            method: "infoflow".into(),
        }
    }
}

/// How sure a verdict is, from how many of the evidence's findings blame its op (`same` of
/// `all`) and whether the evidence was found (`found`: turns ranked for the case, no ids).
/// Evidence followed to one op is a verdict the flow settles; but when several turns found for
/// the case ranked alike, they entered the same calls, so their agreement says little about
/// which of them held the answer, and the verdict stays below
/// [`CONFIDENT`](crate::attribution::CONFIDENT). A verdict other evidence contradicts is a
/// guess among them (right about half the time). Measured on the tuning conversations and
/// voices without evidence ids: the verdicts this lowers were right 21 of 25; those still
/// confident, 56 of 57 (docs/benchmarks.md, "Confidence").
fn agreement(same: usize, all: usize, found: bool) -> f64 {
    if same >= all {
        return if found && all > 1 { 0.75 } else { 0.9 };
    }
    #[allow(clippy::cast_precision_loss)]
    let share = same as f64 / all.max(1) as f64;
    0.3 + 0.5 * share
}

/// Why a variable that keeps the answer's words does not hold it (" It changed the date …"),
/// for the first of `vars` that changed a discriminating part; empty when none did.
fn changed(t: &Trace, key: &Key, vars: impl IntoIterator<Item = VarIx>) -> String {
    vars.into_iter()
        .find_map(|v| key.change(t.var(v)))
        .map_or(String::new(), |c| format!(" It {c}."))
}

/// The op that made a corrupted copy of the evidence the prediction repeats
/// ([`quoted::repeated_corruption`], [`quoted::added_negation`]),
/// among the `read` versions (derived from the evidence, read by the answer): walking up from
/// the version, the first op none of whose inputs holds the repeated stretch. Only an
/// extraction, update or deletion.
fn misled(
    t: &Trace,
    roles: &Roles,
    stage: &Stage,
    case: &FailureCase,
    evidence: &[VarIx],
    key: &Key,
    read: impl Iterator<Item = VarIx>,
) -> Option<Finding> {
    let raw: Vec<String> = evidence.iter().map(|&e| var_text(t.var(e))).collect();
    let texts: Vec<Vec<String>> = raw.iter().map(|e| tokens(e).collect()).collect();
    let said: Vec<String> = tokens(&case.prediction).collect();
    // The gold answer is a date (a day, when it names one).
    let dated = case
        .golden_answers
        .iter()
        .find(|g| parts::has_date(g))
        .map(|g| quoted::GoldDate { day: parse_day(g) });
    let found = read.filter_map(|v| {
        let copy = var_text(t.var(v));
        let stretch = texts.iter().find_map(|e| {
            quoted::repeated_corruption(e, &copy, &said, &key.gold, dated)
                .or_else(|| quoted::added_negation(e, &copy, &said))
        })?;
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
        shown(t, v),
        t.op(op).op_name,
        stretch.join(" ")
    );
    // An op that wrote memory from the turns themselves extracted it, whatever its name's role.
    let role = match roles.role(op) {
        OpRole::Update
            if t.flow.op_inputs[op.get()]
                .iter()
                .any(|u| evidence.contains(u)) =>
        {
            OpRole::Extraction
        }
        r => r,
    };
    Some(Finding {
        op,
        role,
        path: vec![v],
        reason,
        confidence: 0.75,
        repeated: true,
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

/// A value as a verdict's reason names it: its text, quoted and cut to a line (the evidence
/// path keeps its id); its id when it has no text.
fn shown(t: &Trace, v: VarIx) -> String {
    let mut text = var_text(t.var(v));
    if text.starts_with(['{', '[']) {
        // A structured value (`{"facts": […]}`): its strings, not its wrapper.
        let leaves = var_texts(t.var(v));
        if !leaves.is_empty() {
            text = leaves.join("; ");
        }
    }
    if text.trim().is_empty() {
        return t.var(v).full_node_id.clone();
    }
    format!("“{}”", shorten(&flat(&text), 70))
}
