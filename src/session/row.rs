//! One verdict row for every host: a line of `memtrace attribute --json`, an object of the
//! JavaScript module's `Trace.attribute()`, Python's `Verdict.to_dict()`. The verdict's fields
//! (or the case and why it has none), where its question is, and its counterfactual check.

use serde::Serialize;

use crate::attribution::counterfactual::Check;
use crate::attribution::Attribution;
use crate::model::{question_ref, FailureCase, QuestionRef, Trace};

/// One case's outcome as every host gives it. (Its TypeScript type is written by the
/// JavaScript module: a flattened union is an intersection there.)
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VerdictRow {
    /// The verdict's fields, or `case_id` and `error`.
    #[serde(flatten)]
    pub outcome: RowVerdict,
    /// Where the question is in the trace.
    pub question: QuestionRef,
    /// The counterfactual check, when one ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counterfactual: Option<Check>,
}

/// A row's verdict, or why the case has none.
#[cfg_attr(feature = "ts", derive(tsify_next::Tsify))]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum RowVerdict {
    Verdict(Attribution),
    Failed { case_id: String, error: String },
}

impl VerdictRow {
    /// The row of `case` of `trace`: its verdict or why none, and its check if one ran.
    pub fn new(
        trace: &Trace,
        case: &FailureCase,
        result: Result<Attribution, String>,
        counterfactual: Option<Check>,
    ) -> Self {
        let outcome = match result {
            Ok(a) => RowVerdict::Verdict(a),
            Err(error) => RowVerdict::Failed {
                case_id: case.query_id.clone(),
                error,
            },
        };
        VerdictRow {
            outcome,
            question: question_ref(trace, case),
            counterfactual,
        }
    }

    /// The case's id (`query_id`).
    pub fn case_id(&self) -> &str {
        match &self.outcome {
            RowVerdict::Verdict(a) => &a.case_id,
            RowVerdict::Failed { case_id, .. } => case_id,
        }
    }

    /// The verdict.
    ///
    /// # Errors
    /// Why the case has none.
    pub fn result(&self) -> Result<&Attribution, &str> {
        match &self.outcome {
            RowVerdict::Verdict(a) => Ok(a),
            RowVerdict::Failed { error, .. } => Err(error),
        }
    }

    /// The row as one line of JSON (what `memtrace attribute --json` prints).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{load, LoadOptions};

    #[test]
    fn a_row_is_the_verdict_with_its_question_or_the_case_and_its_error() {
        let bytes = include_bytes!("../../tests/fixtures/smartcomment/mem0_commented.json");
        let trace = load(bytes, LoadOptions::default()).unwrap().trace;
        let case = &trace.cases[0];
        let a = crate::attribution::InfoFlow::default()
            .attribute(&trace, case)
            .unwrap();
        let row = VerdictRow::new(&trace, case, Ok(a.clone()), None);
        let v: serde_json::Value = serde_json::from_str(&row.to_json()).unwrap();
        let mut want = serde_json::to_value(&a).unwrap();
        want["question"] = serde_json::to_value(question_ref(&trace, case)).unwrap();
        assert_eq!(v, want);
        assert_eq!(row.case_id(), case.query_id);
        let failed = VerdictRow::new(&trace, case, Err("no answer".into()), None);
        let v: serde_json::Value = serde_json::from_str(&failed.to_json()).unwrap();
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["case_id", "error", "question"]);
        assert_eq!(failed.result(), Err("no answer"));
    }
}
