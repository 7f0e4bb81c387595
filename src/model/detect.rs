//! Failure detection: one ordered list of rules (`docs/failures.md`). A question counts as
//! failed when the first rule that judges it says so; user rules judge what the built-in ones
//! left; questions the user marks as failed are failures whatever the rules say.

use serde::Serialize;
use serde_json::Value;

use super::fail_rule::{FailRule, Mark};
use super::judged::{self, answer_op_of, judged, Judged};
use super::judgement::{self, Judgement};
use super::structure;
use super::structure::output_verdict;
use super::suggest;
use super::GraphError;
use super::{case, pyrepr, FailureCase, OpIx, Trace, VarIx};

/// The built-in rules, in order: (name, what it looks for).
pub const RULES: [(&str, &str); 6] = [
    (
        "annotation",
        "MemTraceBench annotations (data.annotations): each names a failed question",
    ),
    (
        "evaluator",
        "an evaluator op (category `evaluation`, or a judge by shape or name) writing a score variable; a score below the threshold (0.5) = failed",
    ),
    (
        "llm-judge",
        "a judge by shape (reads a question and another op's answer to it) or by name / metadata (judge / eval / grade), with an output carrying a verdict: CORRECT / WRONG, {\"label\": …}, correct: false, a score below the threshold",
    ),
    (
        "question-output",
        "an op (or question span) that reads the question and writes JSON with a label, correct or score key",
    ),
    (
        "genai-evaluation",
        "OpenTelemetry GenAI `gen_ai.evaluation.result` events (gen_ai.evaluation.score.label / .score.value)",
    ),
    (
        "langfuse-score",
        "Langfuse scores: numeric 0, boolean false, categorical WRONG / incorrect / fail",
    ),
];

/// Which rule found a case.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "rule", content = "index")]
pub enum FoundBy {
    /// One of [`RULES`], by name.
    BuiltIn(&'static str),
    /// The user rule at this index of the list passed in.
    UserRule(usize),
    /// Marked failed by the user.
    Marked,
}

/// What one rule saw.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RuleReport {
    pub rule: String,
    pub looks_for: String,
    /// Questions it judged (first judgement of each), and how many of those failed.
    pub judged: usize,
    pub failed: usize,
}

/// A judge-like op that judged nothing, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unused {
    pub op_id: String,
    pub op_name: String,
    pub why: String,
}

/// The failure cases of a trace, which rule found each, and what was looked at.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Detection {
    pub cases: Vec<FailureCase>,
    /// Parallel to `cases`.
    pub found_by: Vec<FoundBy>,
    /// Questions (query variables) in the trace.
    pub questions: usize,
    pub rules: Vec<RuleReport>,
    /// Judge-like ops that judged no question, and why.
    pub unused_judges: Vec<Unused>,
    /// Marks whose question id names no variable of this trace.
    pub unknown_marks: Vec<String>,
    /// A `--failed-if` rule to try, built from an op of this trace (only when no case was found).
    pub suggestion: String,
}

struct Found {
    judged: Vec<Judged>,
    unused: Vec<Unused>,
}

/// Runs the rules over a trace; see the module doc.
///
/// # Errors
/// A MemTraceBench annotation with an unknown error type or a dangling id.
pub fn detect(t: &Trace, user: &[FailRule], marks: &[Mark]) -> Result<Detection, GraphError> {
    DetectSteps::default().finish(t, user, marks)
}

/// The built-in rules after the annotations, in the order of [`RULES`].
const BUILT_IN: [fn(&Trace, &Seen) -> Found; 5] = [
    evaluators,
    llm_judges,
    question_outputs,
    genai_events,
    langfuse_scores,
];

/// What every rule looks at: which variables are questions, and each op's judge hint.
struct Seen {
    questions: Vec<bool>,
    judges: Vec<Option<String>>,
}

/// Bytes of written values a step of the question scan reads.
const SCAN_BYTES: usize = 8 << 20;

/// [`detect`] in steps, for a caller that must stay responsive: the questions, then each rule,
/// one a step; [`DetectSteps::finish`] runs what is left and gives what [`detect`] gives.
#[derive(Default)]
pub struct DetectSteps {
    verdict_ops: Option<Vec<bool>>,
    questions: Option<judged::QuestionScan>,
    seen: Option<Seen>,
    /// (found by, rule, what it looks for, what it found), in rule order.
    lists: Vec<(FoundBy, String, String, Found)>,
}

impl DetectSteps {
    /// Runs the next part; true when all have run. `user` must be the same in every call.
    pub fn step(&mut self, t: &Trace, user: &[FailRule]) -> bool {
        let Some(seen) = &self.seen else {
            // The ops writing a verdict, the questions (a few steps), each op's judge hint.
            let Some(verdict_ops) = &self.verdict_ops else {
                self.verdict_ops = Some(structure::verdict_ops(t));
                return false;
            };
            let Some(scan) = &mut self.questions else {
                self.questions = Some(judged::QuestionScan::new(t, verdict_ops));
                return false;
            };
            if !scan.step(t, SCAN_BYTES) {
                return false;
            }
            let Some(questions) = self.questions.take().map(judged::QuestionScan::finish) else {
                return false;
            };
            let judges = all_ops(t)
                .map(|o| {
                    judged::judge_hint(t, o)
                        .or_else(|| structure::structural_judge(t, o, &questions, verdict_ops))
                })
                .collect();
            self.seen = Some(Seen { questions, judges });
            return false;
        };
        let k = self.lists.len();
        if let Some((f, (name, what))) = BUILT_IN.iter().zip(&RULES[1..]).nth(k) {
            let found = f(t, seen);
            self.lists.push((
                FoundBy::BuiltIn(name),
                (*name).to_owned(),
                (*what).to_owned(),
                found,
            ));
            return false;
        }
        if let Some((i, r)) = user.iter().enumerate().nth(k - BUILT_IN.len()) {
            let found = user_rule(t, r, &seen.questions);
            self.lists.push((
                FoundBy::UserRule(i),
                format!("--failed-if '{}'", r.text),
                "a rule you gave".into(),
                found,
            ));
            return false;
        }
        true
    }

    /// The detection, as [`detect`] gives it, after the parts not yet run.
    ///
    /// # Errors
    /// As [`detect`].
    pub fn finish(
        mut self,
        t: &Trace,
        user: &[FailRule],
        marks: &[Mark],
    ) -> Result<Detection, GraphError> {
        while !self.step(t, user) {}
        let threshold = t
            .judge_threshold
            .unwrap_or(judgement::DEFAULT_JUDGE_THRESHOLD);
        let questions = self.seen.map(|s| s.questions).unwrap_or_default();
        let lists = self.lists;
        let mut cases = case::annotated(t)?;
        let mut found_by = vec![FoundBy::BuiltIn("annotation"); cases.len()];
        let mut seen: Vec<bool> = vec![false; t.vars.len()];
        for c in &cases {
            if let Some(q) = t.var_by_id(&c.query_id) {
                seen[q.get()] = true;
            }
        }
        let mut rules = vec![RuleReport {
            rule: RULES[0].0.into(),
            looks_for: RULES[0].1.into(),
            judged: cases.len(),
            failed: cases.len(),
        }];
        let mut unused = Vec::new();
        let mut first_judge: Vec<Option<Judged>> = vec![None; t.vars.len()];
        for (by, rule, looks_for, found) in lists {
            let mut report = RuleReport {
                rule,
                looks_for,
                judged: 0,
                failed: 0,
            };
            for mut j in found.judged {
                j.verdict = j.verdict.at(threshold);
                let q = j.query.get();
                if first_judge[q].is_none() {
                    first_judge[q] = Some(j.clone());
                }
                if seen[q] {
                    continue;
                }
                seen[q] = true;
                report.judged += 1;
                if j.verdict.failed {
                    report.failed += 1;
                    cases.push(case_of(t, &j));
                    found_by.push(by.clone());
                }
            }
            unused.extend(found.unused);
            rules.push(report);
        }
        // Annotated cases take the judge's score and op from the first judgement of their question.
        for c in cases.iter_mut().filter(|c| c.annotation.is_some()) {
            let Some(j) = t
                .var_by_id(&c.query_id)
                .and_then(|q| first_judge[q.get()].as_ref())
            else {
                continue;
            };
            c.judge_score = j.verdict.score;
            c.judge_op = Some(t.op(j.op).op_id.clone());
            if c.answer_op.is_none() {
                c.answer_op = j.answer_op.map(|o| t.op(o).op_id.clone());
            }
        }
        let mut unknown_marks = Vec::new();
        for m in marks {
            let Some(q) = t.var_by_id(&m.query_id) else {
                unknown_marks.push(m.query_id.clone());
                continue;
            };
            if let Some(c) = cases.iter_mut().find(|c| c.query_id == m.query_id) {
                if let (Some(g), true) = (&m.gold, c.golden_answers.is_empty()) {
                    c.golden_answers = vec![g.clone()];
                }
                continue;
            }
            let mut c = marked_case(t, q, first_judge[q.get()].as_ref());
            if let Some(g) = &m.gold {
                c.golden_answers = vec![g.clone()];
            }
            cases.push(c);
            found_by.push(FoundBy::Marked);
        }
        let suggestion = if cases.is_empty() {
            suggest::suggest(t, &questions)
        } else {
            String::new()
        };
        Ok(Detection {
            cases,
            found_by,
            questions: questions.iter().filter(|&&q| q).count(),
            rules,
            unused_judges: unused,
            unknown_marks,
            suggestion,
        })
    }
}

/// The questions of a trace (query variables), in file order.
pub fn questions(t: &Trace) -> Vec<VarIx> {
    judged::question_set(t)
        .iter()
        .enumerate()
        .filter(|(_, &q)| q)
        .map(|(i, _)| VarIx(i as u32))
        .collect()
}

fn case_of(t: &Trace, j: &Judged) -> FailureCase {
    let text = |v: Option<VarIx>| {
        v.map(|v| pyrepr::display(&t.var(v).value))
            .unwrap_or_default()
    };
    FailureCase {
        query_id: t.var(j.query).full_node_id.clone(),
        query: text(Some(j.query)),
        golden_answers: j.gold.clone(),
        prediction: text(j.prediction),
        prediction_id: j.prediction.map(|p| t.var(p).full_node_id.clone()),
        evidence_ids: case::evidence_of(t, j.query),
        judge_score: j.verdict.score.or(Some(0.0)),
        annotation: None,
        answer_op: j.answer_op.map(|o| t.op(o).op_id.clone()),
        judge_op: Some(t.op(j.op).op_id.clone()),
    }
}

/// A case for a marked question: its judgement if any, else the latest answer-like output of an
/// op that read it.
fn marked_case(t: &Trace, q: VarIx, j: Option<&Judged>) -> FailureCase {
    if let Some(j) = j {
        let mut c = case_of(t, j);
        c.judge_score = j.verdict.score;
        return c;
    }
    let prediction = t.flow.consumers[q.get()].iter().rev().find_map(|&o| {
        t.flow.op_outputs[o.get()].iter().copied().find(|&v| {
            let r = t.var(v);
            r.category.contains("output") && judgement::verdict_in(&r.value).is_none()
        })
    });
    FailureCase {
        query_id: t.var(q).full_node_id.clone(),
        query: pyrepr::display(&t.var(q).value),
        golden_answers: Vec::new(),
        prediction: prediction
            .map(|p| pyrepr::display(&t.var(p).value))
            .unwrap_or_default(),
        prediction_id: prediction.map(|p| t.var(p).full_node_id.clone()),
        evidence_ids: case::evidence_of(t, q),
        judge_score: None,
        annotation: None,
        answer_op: prediction
            .and_then(|p| answer_op_of(t, p, Some(q)))
            .map(|o| t.op(o).op_id.clone()),
        judge_op: None,
    }
}

fn all_ops(t: &Trace) -> impl Iterator<Item = OpIx> {
    (0..t.ops.len()).map(|o| OpIx(o as u32))
}

fn unused(t: &Trace, op: OpIx, why: String) -> Unused {
    Unused {
        op_id: t.op(op).op_id.clone(),
        op_name: t.op(op).op_name.clone(),
        why,
    }
}

fn is_langfuse_score(t: &Trace, op: OpIx) -> bool {
    t.op(op).metadata.get("langfuse_score").is_some()
}

/// The score variable an op writes (class or name holds `score`).
fn score_output(t: &Trace, op: OpIx) -> Option<VarIx> {
    t.flow.op_outputs[op.get()]
        .iter()
        .copied()
        .find(|&v| judged::class_or_name_has(t, v, "score"))
}

fn evaluators(t: &Trace, seen: &Seen) -> Found {
    let questions = &seen.questions[..];
    let mut f = Found {
        judged: Vec::new(),
        unused: Vec::new(),
    };
    for op in all_ops(t).filter(|&o| !is_langfuse_score(t, o)) {
        let judge_like = t.op(op).category == "evaluation" || seen.judges[op.get()].is_some();
        let Some(s) = judge_like.then(|| score_output(t, op)).flatten() else {
            continue;
        };
        let text = pyrepr::shown(&t.var(s).value);
        let Some(v) = judgement::verdict_in(&text) else {
            f.unused.push(unused(
                t,
                op,
                format!("its score {text:?} is neither a number nor a label"),
            ));
            continue;
        };
        match judged(t, op, v, questions, None) {
            Some(j) => f.judged.push(j),
            None => f.unused.push(unused(t, op, NO_QUESTION.into())),
        }
    }
    f
}

const NO_QUESTION: &str =
    "it reads no question (no input named query / question, and none a retrieval op searched for)";

fn llm_judges(t: &Trace, seen: &Seen) -> Found {
    let questions = &seen.questions[..];
    let mut f = Found {
        judged: Vec::new(),
        unused: Vec::new(),
    };
    for op in all_ops(t).filter(|&o| !is_langfuse_score(t, o)) {
        let Some(why) = &seen.judges[op.get()] else {
            let reads_question = t.flow.op_inputs[op.get()]
                .iter()
                .any(|v| questions[v.get()]);
            if let (true, Some((v, None))) = (reads_question, output_verdict(t, op)) {
                // A label without a judge name: the user's rule can count it.
                let label = v.label.unwrap_or_default();
                f.unused.push(unused(
                    t,
                    op,
                    format!("its output carries the label {label:?}, but it reads no other op's answer to the question, and neither its name nor its metadata says judge / eval / grade"),
                ));
            }
            continue;
        };
        if score_output(t, op).is_some() {
            continue; // the evaluator rule's
        }
        let Some((v, json)) = output_verdict(t, op) else {
            f.unused.push(unused(
                t,
                op,
                format!("{why} says judge, but no output carries a verdict (CORRECT / WRONG, label, correct, score)"),
            ));
            continue;
        };
        match judged(t, op, v, questions, json.as_ref()) {
            Some(j) => f.judged.push(j),
            None => f.unused.push(unused(t, op, NO_QUESTION.into())),
        }
    }
    f
}

fn question_outputs(t: &Trace, seen: &Seen) -> Found {
    let questions = &seen.questions[..];
    let mut judged_list = Vec::new();
    for op in all_ops(t) {
        if seen.judges[op.get()].is_some() || t.op(op).category == "evaluation" {
            continue;
        }
        if !t.flow.op_inputs[op.get()]
            .iter()
            .any(|v| questions[v.get()])
        {
            continue;
        }
        let found = t.flow.op_outputs[op.get()].iter().find_map(|&v| {
            let json = judgement::json_object_in(&t.var(v).value)?;
            judgement::verdict_in_json(&json, 0).map(|vd| (vd, json))
        });
        if let Some(j) = found.and_then(|(vd, json)| judged(t, op, vd, questions, Some(&json))) {
            judged_list.push(j);
        }
    }
    Found {
        judged: judged_list,
        unused: Vec::new(),
    }
}

/// Results recorded by the OTLP importer in op metadata `gen_ai.evaluation.results`.
fn genai_events(t: &Trace, seen: &Seen) -> Found {
    let questions = &seen.questions[..];
    let mut f = Found {
        judged: Vec::new(),
        unused: Vec::new(),
    };
    for op in all_ops(t) {
        let Some(results) = t
            .op(op)
            .metadata
            .get("gen_ai.evaluation.results")
            .and_then(Value::as_array)
        else {
            continue;
        };
        let Some(v) = results.iter().find_map(result_verdict) else {
            f.unused.push(unused(
                t,
                op,
                "its gen_ai.evaluation.result events have no label or score value".into(),
            ));
            continue;
        };
        let Some(mut j) = judged(t, op, v, questions, None) else {
            f.unused.push(unused(t, op, NO_QUESTION.into()));
            continue;
        };
        // The event sits on the evaluated op: its own answer is the prediction.
        if let Some(out) = t.flow.op_outputs[op.get()]
            .iter()
            .copied()
            .find(|&v| t.var(v).category.contains("output"))
        {
            j.prediction = Some(out);
            j.answer_op = Some(op);
        }
        f.judged.push(j);
    }
    f
}

fn result_verdict(r: &Value) -> Option<Judgement> {
    let label = r
        .get("gen_ai.evaluation.score.label")
        .and_then(Value::as_str);
    let score = r
        .get("gen_ai.evaluation.score.value")
        .and_then(|s| s.as_f64().or_else(|| s.as_str()?.trim().parse().ok()));
    let Some(failed) = label.and_then(judgement::label_failed) else {
        return score.map(|s| Judgement::of_score(s, judgement::DEFAULT_JUDGE_THRESHOLD));
    };
    Some(Judgement {
        failed,
        score,
        label: label.map(str::to_owned),
        graded: false,
    })
}

fn langfuse_scores(t: &Trace, seen: &Seen) -> Found {
    let questions = &seen.questions[..];
    let mut f = Found {
        judged: Vec::new(),
        unused: Vec::new(),
    };
    for op in all_ops(t).filter(|&o| is_langfuse_score(t, o)) {
        let Some(v) = score_output(t, op)
            .and_then(|s| judgement::verdict_in(&pyrepr::shown(&t.var(s).value)))
        else {
            f.unused.push(unused(
                t,
                op,
                "its value is neither a number nor a known label".into(),
            ));
            continue;
        };
        match judged(t, op, v, questions, None) {
            Some(j) => f.judged.push(j),
            None => f.unused.push(unused(t, op, NO_QUESTION.into())),
        }
    }
    f
}

fn user_rule(t: &Trace, r: &FailRule, questions: &[bool]) -> Found {
    let mut f = Found {
        judged: Vec::new(),
        unused: Vec::new(),
    };
    for op in all_ops(t) {
        if r.op.as_ref().is_some_and(|n| *n != t.op(op).op_name) {
            continue;
        }
        let hit = t.flow.op_outputs[op.get()]
            .iter()
            .find(|&&v| r.output.is_match(&pyrepr::shown(&t.var(v).value)));
        let Some(&hit) = hit else { continue };
        let text = pyrepr::shown(&t.var(hit).value);
        let v = Judgement {
            failed: true,
            score: Some(0.0),
            label: judgement::verdict_in(&text).and_then(|v| v.label),
            graded: false,
        };
        let json = judgement::json_object_in(&text);
        match judged(t, op, v, questions, json.as_ref()) {
            Some(j) => f.judged.push(j),
            None if r.op.is_some() => f.unused.push(unused(t, op, NO_QUESTION.into())),
            None => {}
        }
    }
    f
}
