//! The failure story: a failed case's decisive path as a short chain of cards a person reads
//! at a glance — evidence message(s) → the ops and memory-unit versions the information went
//! through → the decisive op → retrieval → answer → judge — each with its role, a few lines of
//! its value with the answer's words marked, and a word diff for a changed version. The rest of
//! the case's failure slice is folded into labelled groups hung on the chain.
//!
//! Without evidence ids, the evidence cards are the turns found for the case (its words, where
//! they entered), not the whole prompts that embed them.
//!
//! Pure: built from a trace, a case, an optional verdict and the roles in force.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::algo::first_producer;
use crate::algo::{answer_op, failure_slice, text::var_text, GraphIndex};
use crate::attribution::infoflow::graph::find_retrieval;
use crate::attribution::infoflow::turns::Turn;
use crate::attribution::text::terms;
use crate::attribution::InfoFlow;
use crate::attribution::{Attribution, OpRole, Roles};
use crate::model::{pyrepr, ErrorType, FailureCase, OpIx, Trace, VarIx};
use crate::text::diff::{word_diff, DiffPart};

/// Chars of a value a card shows.
const SNIPPET: usize = 320;
/// Evidence messages shown as cards; the rest join a group.
const EVIDENCE_CARDS: usize = 2;

/// What a card stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CardKind {
    /// A message the gold evidence names (or the path starts from).
    Evidence,
    /// An operation; its text is what it produced.
    Op,
    /// A variable version on the path (a memory unit, a fact).
    Value,
}

/// A run of text, `mark`ed when it holds a word of the gold answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Span {
    pub text: String,
    pub mark: bool,
}

/// Why the chain stops being right here.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Decisive {
    pub error_type: ErrorType,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Card {
    /// The op id or variable `full_node_id` (to select it in the graph or inspector).
    pub id: String,
    pub kind: CardKind,
    /// The op's role; for values, the role of the op that wrote them.
    pub role: Option<OpRole>,
    /// Op name, or the variable's category and name.
    pub title: String,
    pub time: String,
    /// A window of the value (for ops: of what they produced) around the answer's words.
    pub text: Vec<Span>,
    /// Against the previous version of the same variable.
    pub diff: Option<Vec<DiffPart>>,
    pub decisive: Option<Decisive>,
}

/// Nodes of the failure slice not on the chain, folded; shown after card `after`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Group {
    pub after: usize,
    pub label: String,
    pub ids: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Story {
    pub case_id: String,
    pub question: String,
    pub golden_answers: Vec<String>,
    pub prediction: String,
    pub cards: Vec<Card>,
    pub groups: Vec<Group>,
}

/// The story of `case`. With a verdict the chain follows its evidence path and marks its op;
/// without one it runs from the evidence to the answer.
pub fn story(t: &Trace, case: &FailureCase, verdict: Option<&Attribution>, roles: &Roles) -> Story {
    story_in(t, GraphIndex::build(t).ok().as_ref(), case, verdict, roles)
}

/// As [`story`] over a [`GraphIndex`] of `t` built once for many stories (building it is most
/// of a story's time on a large trace); with `None` the story has no groups.
pub fn story_in(
    t: &Trace,
    g: Option<&GraphIndex>,
    case: &FailureCase,
    verdict: Option<&Attribution>,
    roles: &Roles,
) -> Story {
    let gold = terms(&case.golden_answers.join(" "));
    let mut b = Builder {
        t,
        roles,
        gold,
        cards: Vec::new(),
        ops: BTreeSet::new(),
        vars: BTreeSet::new(),
        answer: answer_op(t, case),
        prediction: case.prediction.clone(),
    };
    let path = verdict
        .map(|v| v.evidence_path.as_slice())
        .unwrap_or_default();
    // Without evidence ids the path starts at the turns found for the case, each inside the
    // values it entered (a prompt embedding several turns, and its later copies): a card shows
    // the turn itself, once.
    // (Ranked again here: the verdict names the values, not where in them the turns sit.)
    let found = if case.evidence_ids.is_empty() && !path.is_empty() {
        InfoFlow::default()
            .case_turns(t, roles, case)
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    let turn_of = |v: VarIx| found.iter().find(|x| x.var == v || x.also.contains(&v));
    let start = path
        .first()
        .and_then(|id| t.var_by_id(id))
        .filter(|&v| turn_of(v).is_none());
    let evidence: Vec<VarIx> = case
        .evidence_ids
        .iter()
        .filter_map(|id| t.var_by_id(id))
        .chain(start.filter(|v| t.flow.producers[v.get()].is_empty()))
        .collect();
    let mut folded_evidence = Vec::new();
    let mut copies = Vec::new();
    for (i, &v) in evidence.iter().enumerate() {
        if i < EVIDENCE_CARDS {
            b.var(v, CardKind::Evidence);
        } else if !b.vars.contains(&v) {
            folded_evidence.push(v);
        }
    }
    let mut turns_shown = 0;
    for id in path {
        let Some(v) = t.var_by_id(id) else {
            if let Some(o) = t.op_by_id(id) {
                b.op(o);
            }
            continue;
        };
        if let Some(turn) = turn_of(v) {
            if !b.vars.contains(&turn.var) && turns_shown < EVIDENCE_CARDS {
                b.turn(turn);
                turns_shown += 1;
            } else if !b.vars.contains(&v) {
                copies.push(v);
            }
            continue;
        }
        if let Some(p) = first_producer(t, v) {
            b.op(p);
        }
        b.var(v, CardKind::Value);
    }
    if let Some(o) = verdict.and_then(|v| t.op_by_id(&v.op_id)) {
        b.op(o);
        let d = Decisive {
            error_type: verdict.map_or(ErrorType::ResponseError, |v| v.error_type),
            reason: verdict.map(|v| v.reason.clone()).unwrap_or_default(),
        };
        if let Some(c) = b.cards.iter_mut().find(|c| c.id == t.op(o).op_id) {
            // The role the op played in this case (a memory manager that adds and updates
            // memories made this one: extraction), so the card and its verdict agree.
            c.role = OpRole::of_error(d.error_type).or(c.role);
            c.decisive = Some(d);
        }
    }
    let query = t.var_by_id(&case.query_id);
    let answer = b.answer;
    let retrieval = query.zip(answer).and_then(|(q, a)| find_retrieval(t, q, a));
    for o in retrieval.into_iter().chain(answer) {
        b.op(o);
    }
    let prediction = case.prediction_id.as_deref().and_then(|p| t.var_by_id(p));
    let judges: Vec<OpIx> = case
        .judge_op
        .as_deref()
        .and_then(|j| t.op_by_id(j))
        .into_iter()
        .chain(prediction.into_iter().flat_map(|p| {
            t.flow.consumers[p.get()]
                .iter()
                .copied()
                .filter(|&o| Some(o) != answer)
        }))
        .collect();
    if let Some(&j) = judges.first() {
        b.op(j);
    }
    let groups = g.map_or_else(Vec::new, |g| groups(&b, g, case, &folded_evidence, &copies));
    Story {
        case_id: case.query_id.clone(),
        question: case.query.clone(),
        golden_answers: case.golden_answers.clone(),
        prediction: case.prediction.clone(),
        cards: b.cards,
        groups,
    }
}

struct Builder<'a> {
    t: &'a Trace,
    roles: &'a Roles,
    gold: BTreeSet<String>,
    cards: Vec<Card>,
    ops: BTreeSet<OpIx>,
    vars: BTreeSet<VarIx>,
    answer: Option<OpIx>,
    prediction: String,
}

impl Builder<'_> {
    fn op(&mut self, o: OpIx) {
        if !self.ops.insert(o) {
            return;
        }
        let t = self.t;
        let op = t.op(o);
        let produced: Vec<VarIx> = t.flow.op_produced(o).collect();
        // What it produced that the chain does not show on its own card.
        let mut texts: Vec<String> = Vec::new();
        // Not the prompts it built, unless that is all it wrote.
        let prompt = |v: &&VarIx| t.var(**v).category.to_ascii_lowercase().contains("prompt");
        let shown: Vec<VarIx> = match produced.iter().filter(|v| !prompt(v)).count() {
            0 => produced.clone(),
            _ => produced.iter().filter(|v| !prompt(v)).copied().collect(),
        };
        for &v in shown.iter().filter(|v| !self.vars.contains(v)) {
            let x = readable(t, v);
            if !texts.contains(&x) {
                texts.push(x);
            }
        }
        let text = match self.answer.filter(|&a| a == o) {
            // The answer op: the prediction, not the prompt it also wrote.
            Some(_) if !self.prediction.is_empty() => self.prediction.clone(),
            _ => texts.join(" · "),
        };
        self.cards.push(Card {
            id: op.op_id.clone(),
            kind: CardKind::Op,
            role: Some(self.roles.role(o)),
            title: op.op_name.clone(),
            time: op.created_at.clone(),
            text: marked(&text, &self.gold),
            diff: None,
            decisive: None,
        });
    }

    /// A turn found for the case: its own words, in the value it first entered.
    fn turn(&mut self, turn: &Turn) {
        self.vars.insert(turn.var);
        let rec = self.t.var(turn.var);
        self.cards.push(Card {
            id: rec.full_node_id.clone(),
            kind: CardKind::Evidence,
            role: None,
            title: format!(
                "turn in {} {} v{} (bytes {}–{})",
                rec.category, rec.name, rec.version, turn.range.start, turn.range.end
            ),
            time: rec.created_at.clone(),
            text: marked(&turn.text, &self.gold),
            diff: None,
            decisive: None,
        });
    }

    fn var(&mut self, v: VarIx, kind: CardKind) {
        if !self.vars.insert(v) {
            return;
        }
        let t = self.t;
        let rec = t.var(v);
        let text = readable(t, v);
        let before = t.flow.versions.get(&rec.full_name).and_then(|vs| {
            let at = vs.iter().position(|&x| x == v)?;
            at.checked_sub(1).and_then(|i| vs.get(i)).copied()
        });
        self.cards.push(Card {
            id: rec.full_node_id.clone(),
            kind,
            role: first_producer(t, v).map(|p| self.roles.role(p)),
            title: format!("{} {} v{}", rec.category, rec.name, rec.version),
            time: rec.created_at.clone(),
            text: marked(&text, &self.gold),
            diff: before.map(|p| word_diff(&readable(t, p), &text)),
            decisive: None,
        });
    }
}

/// A value as a person reads it: a JSON object or list by its sentences (the content of a
/// message, the memory of a unit), not its ids and timestamps; anything else as displayed.
fn readable(t: &Trace, v: VarIx) -> String {
    let rec = t.var(v);
    let mut json = pyrepr::to_json(&rec.value);
    if let Some(inner) = json
        .as_str()
        .and_then(|s| serde_json::from_str::<serde_json::Value>(s.trim()).ok())
    {
        json = inner; // a string that holds JSON (an LLM's reply)
    }
    if !(json.is_object() || json.is_array()) {
        return var_text(rec);
    }
    let mut leaves = Vec::new();
    strings(&json, &mut leaves);
    let sentences: Vec<&str> = leaves
        .iter()
        .map(|s| s.trim())
        .filter(|s| s.contains(' '))
        .collect();
    if sentences.is_empty() {
        var_text(rec)
    } else {
        sentences.join(" · ")
    }
}

fn strings<'a>(v: &'a serde_json::Value, out: &mut Vec<&'a str>) {
    match v {
        serde_json::Value::String(s) => out.push(s),
        serde_json::Value::Array(xs) => xs.iter().for_each(|x| strings(x, out)),
        serde_json::Value::Object(m) => m.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}

/// A window of `text` (whitespace collapsed) starting shortly before the first gold word, split
/// into marked and unmarked runs.
fn marked(text: &str, gold: &BTreeSet<String>) -> Vec<Span> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let hit = |w: &str| {
        let ts = terms(w);
        !ts.is_empty() && ts.iter().all(|x| gold.contains(x))
    };
    let start = words
        .iter()
        .position(|w| hit(w))
        .unwrap_or(0)
        .saturating_sub(8);
    let mut spans = Vec::new();
    if start > 0 {
        push(&mut spans, "… ", false);
    }
    let mut len = 0;
    for (i, w) in words.iter().skip(start).enumerate() {
        if len + w.len() > SNIPPET {
            push(&mut spans, " …", false);
            break;
        }
        if i > 0 {
            push(&mut spans, " ", false);
        }
        push(&mut spans, w, hit(w));
        len += w.len() + 1;
    }
    spans
}

fn push(spans: &mut Vec<Span>, text: &str, mark: bool) {
    match spans.last_mut() {
        Some(s) if s.mark == mark => s.text.push_str(text),
        _ => spans.push(Span {
            text: text.to_owned(),
            mark,
        }),
    }
}

/// The failure slice's nodes off the chain, folded by kind: messages and the other values the
/// turns shown entered (hung on the first card),
/// other values by category (before the retrieval or answer), other ops by role (after the
/// decisive card).
fn groups(
    b: &Builder,
    g: &GraphIndex,
    case: &FailureCase,
    folded_evidence: &[VarIx],
    copies: &[VarIx],
) -> Vec<Group> {
    let t = b.t;
    let Ok(slice) = failure_slice(t, g, case) else {
        return Vec::new();
    };
    let last = b.cards.len().saturating_sub(1);
    let tail = b
        .cards
        .iter()
        .position(|c| matches!(c.role, Some(OpRole::Retrieval | OpRole::Response)))
        .map_or(last, |i| i.saturating_sub(1));
    let decisive = b
        .cards
        .iter()
        .position(|c| c.decisive.is_some())
        .unwrap_or(tail);
    let mut by: BTreeMap<(usize, String), Vec<String>> = BTreeMap::new();
    let mut add = |after: usize, label: String, id: &str| {
        by.entry((after, label)).or_default().push(id.to_owned());
    };
    for &v in folded_evidence {
        add(0, "evidence message".into(), &t.var(v).full_node_id);
    }
    for &v in copies {
        add(
            0,
            "value the turns entered too".into(),
            &t.var(v).full_node_id,
        );
    }
    for &v in &slice.vars {
        if b.vars.contains(&v) || folded_evidence.contains(&v) || copies.contains(&v) {
            continue;
        }
        let rec = t.var(v);
        if t.flow.producers[v.get()].is_empty() {
            add(0, rec.category.clone(), &rec.full_node_id);
        } else {
            add(tail, rec.category.clone(), &rec.full_node_id);
        }
    }
    for &o in &slice.ops {
        if !b.ops.contains(&o) {
            let role = b.roles.role(o);
            add(decisive, format!("{role} op"), &t.op(o).op_id);
        }
    }
    let mut out: Vec<Group> = by
        .into_iter()
        .map(|((after, what), ids)| Group {
            after,
            label: format!("+{} {what}", ids.len()),
            ids,
        })
        .collect();
    out.sort_by(|a, b| a.after.cmp(&b.after).then(b.ids.len().cmp(&a.ids.len())));
    out
}
