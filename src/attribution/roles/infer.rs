//! Roles from structure. The [`Anchors`] come from the failed cases (the query, the response,
//! the judges, the retrieval, the memory kinds). Then each op, in time order, by what it reads
//! and writes:
//!
//! - reads another question's query, with the name of a failed question's answer op → response;
//! - reads a query → retrieval (what it writes is not memory);
//! - writes memory-unit versions: all tombstones → deletion; a later version of a unit that
//!   held messages verbatim (a raw unit) → extraction; a later version of another unit →
//!   update; only first versions → extraction when it read messages (directly or through a
//!   buffer), else update (it stores what another op derived from the messages);
//! - reads messages and passes them on verbatim (a buffer, a chunker) → other, and what it
//!   writes counts as messages; reads messages and writes something else → extraction;
//! - reads a response's output → judge.
//!
//! Ops that structure says nothing about take the role other ops of their name got by
//! structure, else the [`RoleHints`] match, else other. The user's overrides win over all.

use std::collections::{BTreeMap, HashMap};

use super::anchors::{Anchors, Asked};
use super::verbatim::{edits, message_texts, passes_on_verbatim, verbatim_copies, LeafCache};
use super::{Assigned, Basis, OpRole, RoleConfig, RoleHints};
use crate::algo::first_producer;
use crate::attribution::infoflow::graph::{drafts_for, is_tombstone};
use crate::model::{OpIx, Trace, VarIx};

/// A structural role, `weak` when a conflicting hint should win.
struct Found {
    role: OpRole,
    reason: String,
    weak: bool,
}

#[allow(clippy::unnecessary_wraps)] // every structural rule returns `Option<Found>`
fn found(role: OpRole, reason: String) -> Option<Found> {
    Some(Found {
        role,
        reason,
        weak: false,
    })
}

/// What the walk learned so far; the trace is given to each call (a host that owns the trace
/// keeps the walk beside it).
struct Walk {
    a: Anchors,
    message_like: Vec<bool>,
    /// Per variable: a memory unit (of a memory kind, no query).
    memory: Vec<bool>,
    responses: Vec<bool>,
    leaves: LeafCache,
}

impl Walk {
    fn is_memory(&self, v: VarIx) -> bool {
        self.memory[v.get()]
    }

    fn reads_query(&self, t: &Trace, o: OpIx) -> bool {
        t.flow.op_inputs[o.get()]
            .iter()
            .any(|v| self.a.query_like.contains(v))
    }

    /// True when an answer op revised a draft `o` wrote ([`drafts_for`]).
    fn drafts_answer(&self, t: &Trace, o: OpIx) -> bool {
        let is_query = |v: VarIx| self.a.query_like.contains(&v);
        // Only an answer that reads something `o` wrote can revise it.
        t.flow
            .op_produced(o)
            .flat_map(|w| t.flow.consumers[w.get()].iter().copied())
            .filter(|a| self.a.answers.contains(a))
            .any(|a| drafts_for(t, o, a, &is_query))
    }

    /// The structural role of `o`, if structure says one.
    fn structure(&mut self, t: &Trace, o: OpIx) -> Option<Found> {
        let name = &t.op(o).op_name;
        if self.a.judges.contains(&o) {
            return found(
                OpRole::Judge,
                "reads a question's prediction and scores it".into(),
            );
        }
        if self.a.answers.contains(&o) {
            self.responses[o.get()] = true;
            return found(OpRole::Response, "writes a question's prediction".into());
        }
        if self.a.retrievals.contains(&o) {
            return found(
                OpRole::Retrieval,
                "reads the question's query and returns the memory units the answer reads".into(),
            );
        }
        let inputs = &t.flow.op_inputs[o.get()];
        if inputs.iter().any(|&v| {
            t.flow.producers[v.get()]
                .iter()
                .any(|p| self.responses[p.get()])
        }) {
            return found(OpRole::Judge, "reads what a response op wrote".into());
        }
        let reads_query = self.reads_query(t, o);
        if reads_query && self.a.answer_names.contains(name) {
            // Another question's answer (it reads that question, as the failed questions'
            // answer ops of its name do); its judge reads what it wrote. An op of the same name
            // that reads no question (one LLM client making the extraction, answer and judge
            // calls alike) is judged by what it reads below.
            self.responses[o.get()] = true;
            return found(
                OpRole::Response,
                format!("answers another question: reads its query, as the answer ops of the failed ones ({name}) do"),
            );
        }
        if reads_query && self.a.judge_names.contains(name) {
            // Another question's judge: its name's anchored ops decide.
            return None;
        }
        if reads_query && self.drafts_answer(t, o) {
            self.responses[o.get()] = true;
            return found(
                OpRole::Response,
                "drafts an answer: the answer op reads what it wrote and the context it read"
                    .into(),
            );
        }
        if reads_query {
            // Before memory writes: what a retrieval stage writes (candidates, reranked lists)
            // is not memory.
            let returns = t.flow.op_produced(o).next().is_some();
            return returns.then(|| Found {
                role: OpRole::Retrieval,
                reason: "reads a query and hands on what it found".into(),
                weak: false,
            });
        }
        let written: Vec<VarIx> = t
            .flow
            .op_produced(o)
            .filter(|&v| self.is_memory(v) && first_producer(t, v) == Some(o))
            .collect();
        let reads_messages = inputs.iter().any(|&v| self.message_like[v.get()]);
        let texts = if reads_messages {
            message_texts(t, o, &self.message_like, &self.leaves)
        } else {
            Vec::new()
        };
        if reads_messages {
            // A segment cut from a buffer is still the messages: what reads it reads messages.
            for w in verbatim_copies(t, o, &texts, &self.leaves) {
                if !self.is_memory(w) {
                    self.message_like[w.get()] = true;
                }
            }
        }
        if !written.is_empty() {
            return self.memory_write(t, o, &written, reads_messages, &texts);
        }
        if reads_messages {
            if passes_on_verbatim(t, o, &texts, &self.leaves) {
                for v in t.flow.op_produced(o) {
                    self.message_like[v.get()] = true;
                }
                return found(
                    OpRole::Other,
                    "passes messages on verbatim (a buffer or chunker); decides nothing".into(),
                );
            }
            return Some(Found {
                role: OpRole::Extraction,
                reason: format!("reads messages and hands on what it derived from them ({name} writes no memory unit itself)"),
                weak: true,
            });
        }
        None
    }

    /// The role of `o`, which wrote the first version of `written` memory units' versions
    /// (tombstones, a raw unit turned into memory, an edit, new units).
    fn memory_write(
        &mut self,
        t: &Trace,
        o: OpIx,
        written: &[VarIx],
        reads_messages: bool,
        texts: &[String],
    ) -> Option<Found> {
        let later = |v: &&VarIx| t.var(**v).version > 1;
        let tombs = written
            .iter()
            .filter(later)
            .filter(|v| is_tombstone(t, **v))
            .count();
        let changed = written.iter().filter(later).count() - tombs;
        if tombs == written.len() {
            return found(
                OpRole::Deletion,
                format!(
                    "tombstones {tombs} memory unit(s) ({})",
                    t.var(written[0]).full_name
                ),
            );
        }
        // A raw unit restated (not an edit of its text: a revision keeping most of its
        // words is an update).
        let raw_before = |v: &VarIx| {
            let name = &t.var(*v).full_name;
            t.flow.versions.get(name).is_some_and(|vs| {
                vs.iter()
                    .take_while(|&&x| x != *v)
                    .last()
                    .is_some_and(|&p| self.message_like[p.get()] && !edits(t, p, *v))
            })
        };
        if let Some(&v) = written.iter().filter(later).find(|v| raw_before(v)) {
            return found(
                OpRole::Extraction,
                format!(
                    "turns a memory unit that held messages verbatim into extracted memory ({})",
                    t.var(v).full_node_id
                ),
            );
        }
        if changed > 0 {
            let v = written.iter().find(later).copied().unwrap_or(written[0]);
            return found(
                OpRole::Update,
                format!(
                    "writes a new version of an existing memory unit ({})",
                    t.var(v).full_node_id
                ),
            );
        }
        let kind = &t.var(written[0]).category;
        if reads_messages && passes_on_verbatim(t, o, texts, &self.leaves) {
            // A raw unit: the op that later rewrites it decides what is kept.
            for &v in written {
                self.message_like[v.get()] = true;
            }
        }
        if reads_messages {
            found(
                OpRole::Extraction,
                format!("creates the first version of memory units ({kind}) from messages"),
            )
        } else {
            found(
                OpRole::Update,
                format!("creates memory units ({kind}) from content another op derived, not from messages"),
            )
        }
    }
}

pub(super) fn infer(t: &Trace, cfg: &RoleConfig) -> Vec<Assigned> {
    let mut s = Steps::new(t);
    while !s.step(t, usize::MAX) {}
    s.finish(t, cfg)
}

/// [`infer`] in pieces, each short: the failed cases one at a time, the variables a slice at a
/// time, the ops' order, then the structural walk over the ops, a few at a step. Every call
/// is given the trace `new` was given.
pub(super) struct Steps {
    walk: Walk,
    phase: Phase,
    /// Position in the phase: the next case, variable or op.
    next: usize,
    order: Vec<OpIx>,
    by_op: Vec<Option<Found>>,
}

enum Phase {
    Cases,
    Settle,
    Vars(Asked),
    Order,
    Walk,
}

/// Variables looked at per unit of a step's budget: most need a lookup or two.
const VARS_PER_OP: usize = 16;

impl Steps {
    pub(super) fn new(t: &Trace) -> Self {
        let walk = Walk {
            a: Anchors::default(),
            message_like: vec![false; t.vars.len()],
            memory: vec![false; t.vars.len()],
            responses: vec![false; t.ops.len()],
            leaves: LeafCache::new(t),
        };
        Steps {
            walk,
            phase: Phase::Cases,
            next: 0,
            order: Vec::new(),
            by_op: (0..t.ops.len()).map(|_| None).collect(),
        }
    }

    /// Takes one more step of up to `budget` ops' worth of work (at least one case, variable
    /// slice or op); true when every op is walked.
    pub(super) fn step(&mut self, t: &Trace, budget: usize) -> bool {
        let budget = budget.max(1);
        match &self.phase {
            Phase::Cases => {
                if let Some(case) = t.cases.get(self.next) {
                    self.walk.a.add_case(t, case);
                    self.next += 1;
                }
                if self.next >= t.cases.len() {
                    self.phase = Phase::Settle;
                }
            }
            Phase::Settle => {
                self.walk.a.settle(t);
                self.phase = Phase::Vars(Asked::new(t, &self.walk.a));
                self.next = 0;
            }
            Phase::Vars(asked) => {
                let end = self
                    .next
                    .saturating_add(budget.saturating_mul(VARS_PER_OP))
                    .min(t.vars.len());
                let mut kinds: HashMap<&str, (bool, bool)> = HashMap::new();
                for i in self.next..end {
                    let v = VarIx(i as u32);
                    let w = &mut self.walk;
                    if asked.query_like(t, &w.a, v) {
                        w.a.query_like.insert(v);
                    }
                    if w.a.queries.contains(&v) {
                        continue;
                    }
                    // Per category, not per variable: a trace has few categories and many
                    // variables.
                    let category = t.var(v).category.as_str();
                    let (message, mem) = *kinds.entry(category).or_insert_with(|| {
                        (
                            w.a.message_kinds.contains(&category.to_ascii_lowercase()),
                            w.a.memory_kinds.contains(category),
                        )
                    });
                    w.message_like[i] =
                        (message || w.a.evidence.contains(&v)) && t.flow.producers[i].is_empty();
                    w.memory[i] = mem;
                }
                self.next = end;
                if end >= t.vars.len() {
                    self.phase = Phase::Order;
                }
            }
            Phase::Order => {
                let mut order: Vec<OpIx> = (0..t.ops.len() as u32).map(OpIx).collect();
                order.sort_by(|x, y| t.op(*x).created_at.cmp(&t.op(*y).created_at).then(x.cmp(y)));
                self.order = order;
                self.phase = Phase::Walk;
                self.next = 0;
            }
            Phase::Walk => {
                let end = self.next.saturating_add(budget).min(self.order.len());
                for &o in self.order.get(self.next..end).unwrap_or_default() {
                    self.by_op[o.get()] = self.walk.structure(t, o);
                }
                self.next = end;
            }
        }
        matches!(self.phase, Phase::Walk) && self.next >= self.order.len()
    }

    /// Work done so far, and in all, counting a case, [`VARS_PER_OP`] variables, the order and
    /// an op as one unit each.
    pub(super) fn done(&self, t: &Trace) -> (usize, usize) {
        let cases = t.cases.len() + 1;
        let vars = t.vars.len() / VARS_PER_OP + 1;
        let at = match self.phase {
            Phase::Cases => self.next,
            Phase::Settle => t.cases.len(),
            Phase::Vars(_) => cases + self.next / VARS_PER_OP,
            Phase::Order => cases + vars - 1,
            Phase::Walk => cases + vars + self.next,
        };
        (at, cases + vars + t.ops.len())
    }

    /// The roles, once every op is walked: by structure, else by the name's majority, hints
    /// and the overrides of `cfg`.
    pub(super) fn finish(mut self, t: &Trace, cfg: &RoleConfig) -> Vec<Assigned> {
        while !self.step(t, usize::MAX) {}
        let by_op = self.by_op;
        // The role ops of a name got by structure, most frequent first.
        let mut per_name: BTreeMap<&str, BTreeMap<OpRole, usize>> = BTreeMap::new();
        for (op, f) in t.ops.iter().zip(&by_op) {
            if let Some(f) = f.as_ref().filter(|f| !f.weak) {
                *per_name
                    .entry(op.op_name.as_str())
                    .or_default()
                    .entry(f.role)
                    .or_default() += 1;
            }
        }
        // Hints by (category, name): a trace has few of them and many ops.
        let mut hints: BTreeMap<(&str, &str), Option<OpRole>> = BTreeMap::new();
        t.ops
            .iter()
            .zip(by_op)
            .map(|(op, f)| {
                let hint = *hints
                    .entry((op.category.as_str(), op.op_name.as_str()))
                    .or_insert_with(|| RoleHints::hint(&cfg.hints, op));
                assign(op, f, cfg, hint, &per_name)
            })
            .collect()
    }
}

fn assign(
    op: &crate::model::OpRecord,
    f: Option<Found>,
    cfg: &RoleConfig,
    hint: Option<OpRole>,
    per_name: &BTreeMap<&str, BTreeMap<OpRole, usize>>,
) -> Assigned {
    let make = |role, basis, reason: String| Assigned {
        role,
        basis,
        reason,
    };
    if let Some(&role) = cfg.overrides.get(&op.op_name) {
        return make(
            role,
            Basis::User,
            format!("set by the user for {}", op.op_name),
        );
    }
    match f {
        Some(f) if !f.weak || hint.is_none_or(|h| h == f.role || h == OpRole::Update) => {
            make(f.role, Basis::Structure, f.reason)
        }
        Some(f) => {
            let h = hint.unwrap_or(OpRole::Other);
            make(
                h,
                Basis::Hint,
                format!(
                    "name or category says {h}; structure only says it {}",
                    f.reason
                ),
            )
        }
        None => {
            let named = per_name.get(op.op_name.as_str()).and_then(|c| {
                c.iter()
                    .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
                    .map(|(r, n)| (*r, *n))
            });
            if let Some((role, n)) = named {
                return make(
                    role,
                    Basis::Name,
                    format!(
                        "{n} other {} op(s) are {role} by what they read and write",
                        op.op_name
                    ),
                );
            }
            match hint {
                Some(h) => make(
                    h,
                    Basis::Hint,
                    format!(
                        "its name or category ({} [{}]) suggests {h}",
                        op.op_name, op.category
                    ),
                ),
                None => make(
                    OpRole::Other,
                    Basis::Default,
                    "neither what it reads and writes nor its name says what it does".into(),
                ),
            }
        }
    }
}
