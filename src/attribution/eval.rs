//! Scoring attributions against annotations, in MemTrace's run-file shape (formats.md §5).

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::Attribution;
use crate::model::{ErrorType, FailureCase};

/// One scored case: the annotation, what the method said, and whether it matched.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scored {
    pub file: String,
    pub case: FailureCase,
    /// `None` when the method could not attribute the case (counted as wrong).
    pub result: Option<Attribution>,
    pub error: Option<String>,
}

impl Scored {
    fn truth(&self) -> Option<(&str, ErrorType)> {
        self.case
            .annotation
            .as_ref()
            .map(|a| (a.op_id.as_str(), a.error_type))
    }

    /// The method named the annotated op.
    pub fn op_correct(&self) -> bool {
        matches!((self.truth(), &self.result), (Some((op, _)), Some(r)) if r.op_id == op)
    }

    /// The method named the annotated error type.
    pub fn type_correct(&self) -> bool {
        matches!((self.truth(), &self.result), (Some((_, ty)), Some(r)) if r.error_type == ty)
    }
}

/// Accuracy of one group of cases.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Tally {
    pub cases: usize,
    pub op_correct: usize,
    pub type_correct: usize,
}

impl Tally {
    fn add(&mut self, s: &Scored) {
        self.cases += 1;
        self.op_correct += usize::from(s.op_correct());
        self.type_correct += usize::from(s.type_correct());
    }

    /// Fraction 0..=1 (0 for no cases).
    pub fn op_accuracy(&self) -> f64 {
        ratio(self.op_correct, self.cases)
    }

    /// Fraction 0..=1 (0 for no cases).
    pub fn type_accuracy(&self) -> f64 {
        ratio(self.type_correct, self.cases)
    }
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// All the numbers of an evaluation run.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Report {
    pub method: String,
    pub overall: Tally,
    pub by_type: BTreeMap<String, Tally>,
    pub by_file: BTreeMap<String, Tally>,
    /// The cases whose verdict is confident ([`Attribution::is_confident`]).
    pub confident: Tally,
    pub average_input_tokens: f64,
    pub average_output_tokens: f64,
    pub average_llm_calls: f64,
    pub average_minutes: f64,
}

/// Scores memory-error cases (annotations labelled `AnnotationError` / `LLMAsAJudgeError` and
/// unannotated cases are left out, as MemTrace's evaluation does).
pub fn score(method: &str, scored: &[Scored]) -> Report {
    let mut r = Report {
        method: method.to_owned(),
        ..Report::default()
    };
    let kept: Vec<&Scored> = scored
        .iter()
        .filter(|s| s.truth().is_some_and(|(_, t)| t.is_memory_error()))
        .collect();
    let (mut tin, mut tout, mut calls, mut ms) = (0u64, 0u64, 0u64, 0u64);
    for s in &kept {
        r.overall.add(s);
        if let Some((_, ty)) = s.truth() {
            r.by_type.entry(ty.as_str().to_owned()).or_default().add(s);
        }
        r.by_file.entry(s.file.clone()).or_default().add(s);
        if s.result.as_ref().is_some_and(Attribution::is_confident) {
            r.confident.add(s);
        }
        if let Some(a) = &s.result {
            tin += a.cost.input_tokens;
            tout += a.cost.output_tokens;
            calls += u64::from(a.cost.llm_calls);
            ms += a.cost.wall_ms;
        }
    }
    let n = kept.len().max(1) as f64;
    r.average_input_tokens = tin as f64 / n;
    r.average_output_tokens = tout as f64 / n;
    r.average_llm_calls = calls as f64 / n;
    r.average_minutes = ms as f64 / n / 60_000.0;
    r
}

/// The MemTrace run file: `{split, sampled_graph_paths, results, metrics}`.
pub fn run_file(split: &str, files: &[String], scored: &[Scored], report: &Report) -> Value {
    let results: Vec<Value> = scored
        .iter()
        .map(|s| {
            let ann = s.case.annotation.as_ref();
            json!({
                "graph_path": s.file,
                "query_id": s.case.query_id,
                "query": s.case.query,
                "golden_answers": s.case.golden_answers,
                "prediction": s.case.prediction,
                "prediction_id": s.case.prediction_id,
                "source_evidence_ids": s.case.evidence_ids,
                "final_error_type": ann.map(|a| a.error_type.as_str()),
                "final_op_id": ann.map(|a| a.op_id.as_str()),
                "error_attribution_result": s.result.as_ref().map(|a| json!({
                    "error_type": a.error_type.as_str(), "op_id": a.op_id, "reason": a.reason,
                    "evidence_path": a.evidence_path, "confidence": a.confidence, "method": a.method,
                    "cost": a.cost,
                })),
                "error_attribution_error": s.error,
                "is_error_type_correct": s.type_correct(),
                "is_operation_identifier_correct": s.op_correct(),
            })
        })
        .collect();
    json!({
        "split": split,
        "method": report.method,
        "sampled_graph_paths": files,
        "results": results,
        "metrics": {
            "error_type_prediction_accuracy": report.overall.type_accuracy(),
            "operation_identifier_prediction_accuracy": report.overall.op_accuracy(),
            "cases": report.overall.cases,
            "confident": {
                "cases": report.confident.cases,
                "error_type_prediction_accuracy": report.confident.type_accuracy(),
                "operation_identifier_prediction_accuracy": report.confident.op_accuracy(),
            },
            "by_error_type": report.by_type.iter().map(|(k, t)| (k.clone(), json!({
                "cases": t.cases, "error_type_prediction_accuracy": t.type_accuracy(),
                "operation_identifier_prediction_accuracy": t.op_accuracy(),
            }))).collect::<serde_json::Map<_, _>>(),
            "error_attribution_cost": {
                "average_input_tokens": report.average_input_tokens,
                "average_output_tokens": report.average_output_tokens,
                "average_llm_calls": report.average_llm_calls,
                "average_minutes": report.average_minutes,
            },
        },
    })
}

/// Input-token totals of two methods over the cases both attributed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TokenRatio {
    pub method: String,
    pub baseline: String,
    pub input_tokens: u64,
    pub baseline_input_tokens: u64,
    pub cases: usize,
    /// `input_tokens / baseline_input_tokens` (`None` when the baseline sent none).
    pub ratio: Option<f64>,
}

/// Tokens and calls per case for several methods run on the same cases (`runs`: method and its
/// scored cases, in the same order), as a Markdown table, and each method's input-token total
/// against the last method's, over the cases every method attributed.
///
/// # Complexity
/// O(methods × cases).
pub fn token_table(runs: &[(&str, &[Scored])]) -> (String, Vec<TokenRatio>) {
    let mut out = String::from("| file | case |");
    for (m, _) in runs {
        let _ = write!(out, " {m} input | output | calls |");
    }
    out.push_str("\n|---|---|");
    out.push_str(&"---|---|---|".repeat(runs.len()));
    out.push('\n');
    let Some((_, first)) = runs.first() else {
        return (out, Vec::new());
    };
    let mut totals = vec![0u64; runs.len()];
    let mut compared = 0usize;
    for (i, s) in first.iter().enumerate() {
        let costs: Vec<Option<super::Cost>> = runs
            .iter()
            .map(|(_, r)| r.get(i).and_then(|x| x.result.as_ref()).map(|a| a.cost))
            .collect();
        let _ = write!(out, "| {} | {} |", s.file, s.case.query_id);
        for c in &costs {
            match c {
                Some(c) => {
                    let _ = write!(
                        out,
                        " {} | {} | {} |",
                        c.input_tokens, c.output_tokens, c.llm_calls
                    );
                }
                None => out.push_str(" — | — | — |"),
            }
        }
        out.push('\n');
        if costs.iter().all(Option::is_some) {
            compared += 1;
            for (t, c) in totals.iter_mut().zip(costs.iter().flatten()) {
                *t += c.input_tokens;
            }
        }
    }
    let _ = write!(out, "| total ({compared} cases) | |");
    for t in &totals {
        let _ = write!(out, " {t} | | |");
    }
    out.push('\n');
    let (Some((baseline, _)), Some(&base)) = (runs.last(), totals.last()) else {
        return (out, Vec::new());
    };
    let ratios = runs
        .iter()
        .zip(&totals)
        .take(runs.len() - 1)
        .map(|((m, _), &t)| TokenRatio {
            method: (*m).to_owned(),
            baseline: (*baseline).to_owned(),
            input_tokens: t,
            baseline_input_tokens: base,
            cases: compared,
            ratio: (base > 0).then(|| t as f64 / base as f64),
        })
        .collect();
    (out, ratios)
}

/// A Markdown table of the report: overall, per error type, per file.
pub fn markdown(report: &Report) -> String {
    let mut out = format!(
        "| {} | cases | op-id accuracy | type accuracy |\n|---|---|---|---|\n",
        report.method
    );
    let mut line = |name: &str, t: &Tally| {
        // Writing to a String cannot fail.
        let _ = writeln!(
            out,
            "| {name} | {} | {:.1}% | {:.1}% |",
            t.cases,
            100.0 * t.op_accuracy(),
            100.0 * t.type_accuracy()
        );
    };
    line("all", &report.overall);
    line(
        &format!("confidence ≥ {}", super::CONFIDENT),
        &report.confident,
    );
    for (k, t) in &report.by_type {
        line(k, t);
    }
    for (k, t) in &report.by_file {
        line(k, t);
    }
    let _ = writeln!(
        out,
        "\naverage per case: {:.0} input tokens, {:.0} output tokens, {:.1} LLM calls, {:.3} minutes",
        report.average_input_tokens, report.average_output_tokens, report.average_llm_calls, report.average_minutes
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attribution::Cost;

    fn scored(id: &str, input_tokens: Option<u64>) -> Scored {
        Scored {
            file: "f.json".into(),
            case: FailureCase {
                query_id: id.into(),
                query: String::new(),
                golden_answers: Vec::new(),
                prediction: String::new(),
                prediction_id: None,
                evidence_ids: Vec::new(),
                judge_score: None,
                annotation: None,
                answer_op: None,
                judge_op: None,
            },
            result: input_tokens.map(|t| Attribution {
                case_id: id.into(),
                op_id: "op-1".into(),
                op_name: String::new(),
                error_type: ErrorType::RetrievalError,
                reason: String::new(),
                evidence_path: Vec::new(),
                confidence: 0.5,
                cost: Cost {
                    llm_calls: 2,
                    input_tokens: t,
                    output_tokens: 1,
                    wall_ms: 0,
                    tokens_estimated: false,
                },
                method: "m".into(),
            }),
            error: None,
        }
    }

    #[test]
    fn token_table_compares_cases_both_methods_attributed() {
        let a = vec![
            scored("q1", Some(10)),
            scored("q2", Some(30)),
            scored("q3", Some(5)),
        ];
        let b = vec![
            scored("q1", Some(100)),
            scored("q2", Some(100)),
            scored("q3", None),
        ];
        let (table, ratios) = token_table(&[("graphtrace", &a), ("all-at-once", &b)]);
        assert!(
            table.contains("| f.json | q1 | 10 | 1 | 2 | 100 | 1 | 2 |"),
            "{table}"
        );
        assert!(
            table.contains("| f.json | q3 | 5 | 1 | 2 | — | — | — |"),
            "{table}"
        );
        assert_eq!(ratios.len(), 1);
        let r = &ratios[0];
        assert_eq!(
            (r.input_tokens, r.baseline_input_tokens, r.cases),
            (40, 200, 2)
        );
        assert_eq!(r.ratio, Some(0.2));
    }
}
