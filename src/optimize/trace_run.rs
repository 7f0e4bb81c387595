//! Any trace as a run ([`RunFile`]), so `compare` sets two traces side by side, not only two
//! rounds of the closed loop: every question of the trace is a verdict, right unless it is a
//! failure case; a failure's verdict carries its info-flow attribution.

use std::collections::{BTreeMap, BTreeSet};

use crate::attribution::{InfoFlow, Roles};
use crate::model::Trace;

use super::compare::{AnsweredQuestion, RunFile};

/// The run of `trace` (named `name`): one verdict per question, in file order, identified by
/// the question variable's name (`full_name`), its failures attributed by info-flow with `roles`.
pub fn run_of_trace(name: &str, trace: &Trace, roles: &Roles) -> RunFile {
    let failed: BTreeMap<&str, _> = trace
        .cases
        .iter()
        .map(|c| (c.query_id.as_str(), c))
        .collect();
    let verdicts = trace
        .questions()
        .into_iter()
        .map(|q| {
            let var = trace.var(q);
            let case = failed.get(var.full_node_id.as_str());
            let attribution =
                case.and_then(|c| InfoFlow::default().attribute_with(trace, roles, c).ok());
            AnsweredQuestion {
                question_id: var.full_name.clone(),
                conversation: var.session_id.clone(),
                split: String::new(),
                question: crate::model::pyrepr::display(&var.value),
                gold: case
                    .map(|c| c.golden_answers.join("; "))
                    .unwrap_or_default(),
                prediction: case.map(|c| c.prediction.clone()).unwrap_or_default(),
                correct: case.is_none(),
                error_type: attribution
                    .as_ref()
                    .map(|a| a.error_type.as_str().to_owned()),
                op_name: attribution.map(|a| a.op_name),
            }
        })
        .collect();
    RunFile::new(name.to_owned(), verdicts)
}

/// Aligns two runs of other systems or tracers: when no question id is in both but some
/// question texts are, each verdict's id becomes its text (lower-cased, spaces collapsed), so
/// `compare` pairs questions by what they ask.
pub fn align_by_text(a: &mut RunFile, b: &mut RunFile) {
    let ids = |r: &RunFile| -> BTreeSet<String> {
        r.verdicts.iter().map(|v| v.question_id.clone()).collect()
    };
    if !ids(a).is_disjoint(&ids(b)) {
        return;
    }
    for v in a.verdicts.iter_mut().chain(b.verdicts.iter_mut()) {
        v.question_id = v
            .question
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(ids_texts: &[(&str, &str)]) -> RunFile {
        let verdicts = ids_texts
            .iter()
            .map(|(id, text)| AnsweredQuestion {
                question_id: (*id).into(),
                conversation: String::new(),
                split: String::new(),
                question: (*text).into(),
                gold: String::new(),
                prediction: String::new(),
                correct: true,
                error_type: None,
                op_name: None,
            })
            .collect();
        RunFile::new("r".into(), verdicts)
    }

    #[test]
    fn ids_align_first_then_texts() {
        let (mut a, mut b) = (run(&[("q1", "Where?")]), run(&[("q1", "Where  ?")]));
        align_by_text(&mut a, &mut b);
        assert_eq!(b.verdicts[0].question_id, "q1", "a shared id keeps ids");
        let (mut a, mut b) = (
            run(&[("query:1", "Where did  she go?")]),
            run(&[("x", "where did she go?")]),
        );
        align_by_text(&mut a, &mut b);
        assert_eq!(a.verdicts[0].question_id, b.verdicts[0].question_id);
    }
}
