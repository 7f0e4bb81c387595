//! What a judging op judged: the question, the answer and the gold answers around it, found
//! from the graph's structure (what it reads, who produced that), with names as hints.

use aho_corasick::AhoCorasick;
use serde_json::Value;

use super::judgement::{self, Judgement};
use super::structure;
use super::{pyrepr, OpIx, Trace, VarIx};
use crate::text::text_of;

/// One judgement: an op said the answer to `query` passed or failed.
#[derive(Debug, Clone)]
pub(super) struct Judged {
    pub op: OpIx,
    pub verdict: Judgement,
    pub query: VarIx,
    pub prediction: Option<VarIx>,
    pub gold: Vec<String>,
    pub answer_op: Option<OpIx>,
}

/// `class_name`, else `name`, lower case.
pub(super) fn class_or_name(t: &Trace, v: VarIx) -> String {
    let r = t.var(v);
    r.class_name
        .clone()
        .unwrap_or_else(|| r.name.clone())
        .to_ascii_lowercase()
}

/// True when `class_or_name` holds `needle` (ASCII lower case), without building it.
pub(super) fn class_or_name_has(t: &Trace, v: VarIx, needle: &str) -> bool {
    let r = t.var(v);
    let c = r.class_name.as_deref().unwrap_or(&r.name);
    crate::util::strings::contains_ignore_ascii_case(c, needle)
}

fn hinted(t: &Trace, v: VarIx, needles: &[&str]) -> bool {
    needles.iter().any(|n| class_or_name_has(t, v, n))
}

/// Which variables are questions (`structure`): a value no op wrote that a search op searched
/// with and another op answered, or that an op judged another op's answer to; names are a hint
/// on top (class or name holds `query` / `question`, or the category is `query`) unless only
/// embedding calls read the value. A value some op wrote earlier in the same session, inside a
/// longer output (a search for a fact an extraction just wrote), is not a question; a question
/// whose words an earlier session happened to store (a fact quoting the dialogue turn it was
/// asked in) still is.
pub(super) fn question_set(t: &Trace) -> Vec<bool> {
    question_set_with(t, &structure::verdict_ops(t))
}

/// [`question_set`], given [`structure::verdict_ops`].
pub(super) fn question_set_with(t: &Trace, verdict_ops: &[bool]) -> Vec<bool> {
    let mut s = QuestionScan::new(t, verdict_ops);
    while !s.step(t, usize::MAX) {}
    s.out
}

/// [`question_set_with`] in steps: the candidates (some thousands of variables a step), then the
/// written values that may hold one (a pass over every written value, megabytes a step).
pub(super) struct QuestionScan {
    /// Questions judged by a verdict op.
    judged: Vec<bool>,
    out: Vec<bool>,
    /// The next variable to look at as a candidate, then to scan.
    next: usize,
    /// Candidates of 8 bytes or more, in the matcher's pattern order, once all are found.
    long: Vec<VarIx>,
    matcher: Option<AhoCorasick>,
}

impl QuestionScan {
    pub(super) fn new(t: &Trace, verdict_ops: &[bool]) -> Self {
        QuestionScan {
            judged: structure::judged_questions(t, verdict_ops),
            out: vec![false; t.vars.len()],
            next: 0,
            long: Vec::new(),
            matcher: None,
        }
    }

    /// Looks at more variables, about `budget` bytes' worth; true when all are done.
    pub(super) fn step(&mut self, t: &Trace, budget: usize) -> bool {
        let n = t.vars.len();
        if self.matcher.is_none() && self.next < n {
            let end = self.next.saturating_add((budget / 1024).max(1)).min(n);
            for i in self.next..end {
                self.out[i] = self.candidate(t, VarIx(i as u32));
            }
            self.next = end;
            return false;
        }
        if self.matcher.is_none() {
            self.long = (0..n)
                .filter(|&i| self.out[i] && t.vars[i].value.len() >= 8)
                .map(|i| VarIx(i as u32))
                .collect();
            match AhoCorasick::new(self.long.iter().map(|&v| t.var(v).value.as_str())) {
                Ok(m) => self.matcher = Some(m),
                Err(_) => return true,
            }
            self.next = 0;
            return false;
        }
        self.scan(t, budget)
    }

    /// A question by shape (searched with and answered, or judged) or by name, and no prompt.
    fn candidate(&self, t: &Trace, v: VarIx) -> bool {
        let rec = t.var(v);
        let named = || {
            (hinted(t, v, &["query", "question"])
                || rec.category.split([' ', '&']).any(|w| w == "query"))
                && !structure::only_embedded(t, v)
        };
        let shaped = || structure::searched_and_answered(t, v) || self.judged[v.get()];
        // A prompt about questions ("question-answering-prompt") is not one.
        let prompt = || {
            rec.category.contains("prompt")
                || (hinted(t, v, &["prompt", "template"])
                    && super::judgement::words(&class_or_name(t, v))
                        .iter()
                        .any(|w| w == "prompt" || w == "template"))
        };
        rec.category != "sentinel" && !rec.value.is_empty() && (shaped() || named()) && !prompt()
    }

    /// Scans written values, about `budget` bytes of them: a value some op wrote earlier in the
    /// same session that holds a candidate makes it no question.
    fn scan(&mut self, t: &Trace, budget: usize) -> bool {
        let Some(matcher) = &self.matcher else {
            return true;
        };
        let mut scanned = 0usize;
        while scanned < budget {
            let Some(rec) = t.vars.get(self.next) else {
                return true;
            };
            let x = self.next;
            self.next += 1;
            if t.flow.producers[x].is_empty() {
                continue;
            }
            scanned = scanned.saturating_add(rec.value.len().max(1));
            for hit in matcher.find_overlapping_iter(&rec.value) {
                let v = self.long[hit.pattern().as_usize()];
                let q = t.var(v);
                if v.get() != x && rec.created_at < q.created_at && rec.session_id == q.session_id {
                    self.out[v.get()] = false;
                }
            }
        }
        self.next >= t.vars.len()
    }

    /// Which variables are questions, once every step has run.
    pub(super) fn finish(self) -> Vec<bool> {
        self.out
    }
}

/// The question an op judged: an input named like a question, else an input that is one.
pub(super) fn query_of(t: &Trace, op: OpIx, questions: &[bool]) -> Option<VarIx> {
    let inputs = &t.flow.op_inputs[op.get()];
    let named = inputs
        .iter()
        .copied()
        .find(|&v| questions[v.get()] && hinted(t, v, &["query", "question"]));
    named.or_else(|| inputs.iter().copied().find(|&v| questions[v.get()]))
}

/// Keys of a JSON output that hold the system's answer.
const ANSWER_KEYS: [&str; 5] = [
    "answer",
    "prediction",
    "response",
    "generated_answer",
    "output",
];
/// Keys of a JSON output (or prefixes of a prompt line) that hold the gold answer.
const GOLD_KEYS: [&str; 7] = [
    "golden_answers",
    "golden_answer",
    "gold_answer",
    "gold",
    "expected",
    "expected_output",
    "reference",
];

/// The answer that was judged: an input named `prediction` / `answer`; else the value of an
/// answer key in the op's JSON output that some op wrote; else the latest input written by an
/// op that read the question.
pub(super) fn prediction_of(
    t: &Trace,
    op: OpIx,
    query: VarIx,
    json: Option<&Value>,
) -> Option<VarIx> {
    let inputs = &t.flow.op_inputs[op.get()];
    let named = inputs
        .iter()
        .copied()
        .find(|&v| hinted(t, v, &["prediction", "answer"]) && !hinted(t, v, &["golden", "judge"]));
    let from_json = || {
        let o = json?.as_object()?;
        let text = ANSWER_KEYS
            .iter()
            .find_map(|k| o.get(*k).and_then(Value::as_str))?;
        let found = t.vars.iter().enumerate().rev().find(|(i, r)| {
            r.value == text && !t.flow.producers[*i].is_empty() && *i != query.get()
        });
        found.map(|(i, _)| VarIx(i as u32))
    };
    let answered = || {
        inputs.iter().copied().rev().find(|&v| {
            t.flow.producers[v.get()]
                .iter()
                .any(|&p| p != op && t.flow.op_inputs[p.get()].contains(&query))
        })
    };
    named.or_else(from_json).or_else(answered)
}

/// The op that answered `query` with `prediction`: its producer that read the query, else (two
/// questions answered alike) the one this question reached ([`answer_op_of`]'s comments), else
/// its first producer.
pub(crate) fn answer_op_of(t: &Trace, prediction: VarIx, query: Option<VarIx>) -> Option<OpIx> {
    // Identical answers to two questions are versions of one variable (or one version with
    // two producers): the producers of every version holding this value are candidates.
    let p = t.var(prediction);
    let mut producers = t.flow.producers[prediction.get()].clone();
    for &v in t.flow.versions.get(&p.full_name).into_iter().flatten() {
        if v != prediction && t.var(v).value == p.value {
            producers.extend(t.flow.producers[v.get()].iter().copied());
        }
    }
    let Some(q) = query else {
        return producers.first().copied();
    };
    if let Some(o) = producers
        .iter()
        .copied()
        .find(|&o| t.flow.op_inputs[o.get()].contains(&q))
    {
        return Some(o);
    }
    if producers.len() < 2 {
        return producers.first().copied();
    }
    // This question's answer is the first made after it whose inputs quote it (it reached the
    // op in a prompt), else the first made after it.
    let asked = &t.var(q).created_at;
    let question = pyrepr::display(&t.var(q).value);
    let question = question.trim();
    let quotes = |o: OpIx| {
        !question.is_empty()
            && t.flow.op_inputs[o.get()]
                .iter()
                .any(|&v| t.var(v).value.contains(question))
    };
    let first = |quoting: bool| {
        producers
            .iter()
            .copied()
            .filter(|&o| t.op(o).created_at >= *asked && (!quoting || quotes(o)))
            .min_by(|&a, &b| t.op(a).created_at.cmp(&t.op(b).created_at).then(a.cmp(&b)))
    };
    first(true)
        .or_else(|| first(false))
        .or_else(|| producers.first().copied())
}

/// The gold answers: an input named `golden` / `gold` / `expected`; else a gold key of the
/// JSON output; else the item of an input beside the question and the prediction (`gold`);
/// else a `Gold answer: …` line in an input (a judge prompt).
pub(super) fn gold_of(
    t: &Trace,
    op: OpIx,
    json: Option<&Value>,
    (query, prediction): (VarIx, Option<VarIx>),
) -> Vec<String> {
    let inputs = &t.flow.op_inputs[op.get()];
    if let Some(g) = inputs
        .iter()
        .copied()
        .find(|&v| hinted(t, v, &["golden", "gold_", "expected"]))
    {
        return answers_of(&pyrepr::to_json(&t.var(g).value));
    }
    if let Some(o) = json.and_then(Value::as_object) {
        if let Some(g) = GOLD_KEYS.iter().find_map(|k| o.get(*k)) {
            return answers_of(g);
        }
    }
    if let Some(p) = prediction {
        let (q, p) = (&t.var(query).value, &t.var(p).value);
        let third = inputs
            .iter()
            .filter(|&&v| !t.var(v).category.contains("prompt"))
            .find_map(|&v| super::gold::third_item(&t.var(v).value, q, p));
        if let Some(g) = third {
            return vec![g];
        }
    }
    for &v in inputs {
        for line in t.var(v).value.lines() {
            let Some((key, rest)) = line.split_once(':') else {
                continue;
            };
            let key = key.trim().to_ascii_lowercase().replace(' ', "_");
            if GOLD_KEYS.contains(&key.as_str()) && !rest.trim().is_empty() {
                return vec![rest.trim().to_owned()];
            }
        }
    }
    Vec::new()
}

/// A judgement of `op` with this verdict, when the question it judged is found.
pub(super) fn judged(
    t: &Trace,
    op: OpIx,
    verdict: Judgement,
    questions: &[bool],
    json: Option<&Value>,
) -> Option<Judged> {
    let query = query_of(t, op, questions)?;
    let prediction = prediction_of(t, op, query, json);
    Some(Judged {
        op,
        verdict,
        query,
        prediction,
        gold: gold_of(t, op, json, (query, prediction)),
        answer_op: prediction.and_then(|p| answer_op_of(t, p, Some(query))),
    })
}

/// Gold answers from a JSON value: a list of strings, or one string or number.
pub(super) fn answers_of(v: &Value) -> Vec<String> {
    match v {
        Value::Array(a) => a.iter().map(text_of).collect(),
        Value::Null => Vec::new(),
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(inner @ Value::Array(_)) => answers_of(&inner),
            _ => vec![s.clone()],
        },
        other => vec![text_of(other)],
    }
}

/// True when the op's name or metadata (keys, short string values) says it judges answers.
pub(super) fn judge_hint(t: &Trace, op: OpIx) -> Option<String> {
    let rec = t.op(op);
    if judgement::says_judge(&rec.op_name) {
        return Some(format!("its name {:?}", rec.op_name));
    }
    let meta = rec.metadata.as_object()?;
    meta.iter().find_map(|(k, v)| {
        let short = v.as_str().filter(|s| s.len() <= 64).unwrap_or_default();
        (judgement::says_judge(k) || judgement::says_judge(short))
            .then(|| format!("its metadata {k:?}"))
    })
}
