//! Two runs side by side: each question's verdict before (run A) and after (run B), aligned by
//! question id, counted as fixed (wrong → right), broken (right → wrong), still failing and
//! still right, with the attributed error types per side.
//!
//! A run on disk is a [`RunFile`]:
//! `{"kind": "memtrace-run", "name", "verdicts": [AnsweredQuestion]}`; the closed loop writes one
//! per round (`rounds/round-<r>.json` in the CLI's output folder).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One answered question of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnsweredQuestion {
    /// The question's id (`locomo-qa-<n>-<i>`): what aligns two runs.
    pub question_id: String,
    /// The conversation's user id.
    pub conversation: String,
    /// `train` or `heldout`.
    pub split: String,
    pub question: String,
    pub gold: String,
    pub prediction: String,
    pub correct: bool,
    /// The attributed error type of a wrong answer (train questions only).
    #[serde(default)]
    pub error_type: Option<String>,
    /// The decisive op's name.
    #[serde(default)]
    pub op_name: Option<String>,
}

/// A run as a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunFile {
    /// Always `memtrace-run`.
    pub kind: String,
    pub name: String,
    pub verdicts: Vec<AnsweredQuestion>,
}

/// The `kind` of a [`RunFile`].
pub const RUN_KIND: &str = "memtrace-run";

impl RunFile {
    pub fn new(name: String, verdicts: Vec<AnsweredQuestion>) -> Self {
        Self {
            kind: RUN_KIND.into(),
            name,
            verdicts,
        }
    }

    /// Reads a run file.
    ///
    /// # Errors
    /// Not JSON, not a run file (`kind`), or a malformed verdict, with where it is.
    pub fn parse(bytes: &[u8]) -> Result<Self, String> {
        let v: serde_json::Value = serde_json::from_slice(bytes)
            .map_err(|e| format!("not JSON at line {} column {}: {e}", e.line(), e.column()))?;
        if v.get("kind").and_then(serde_json::Value::as_str) != Some(RUN_KIND) {
            return Err(format!(
                "not a run file: `kind` is not \"{RUN_KIND}\"; give a round's verdicts (rounds/round-<r>.json of `memtrace optimize`)"
            ));
        }
        serde_json::from_value(v).map_err(|e| format!("a malformed run file: {e}"))
    }
}

/// What became of a question from run A to run B.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// Wrong in A, right in B.
    Fixed,
    /// Right in A, wrong in B.
    Broken,
    StillFailing,
    StillRight,
    /// In one run only.
    OnlyA,
    OnlyB,
}

impl Change {
    pub fn label(self) -> &'static str {
        match self {
            Change::Fixed => "fixed",
            Change::Broken => "broken",
            Change::StillFailing => "still failing",
            Change::StillRight => "still right",
            Change::OnlyA => "only in A",
            Change::OnlyB => "only in B",
        }
    }
}

/// One question in both runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Row {
    pub question_id: String,
    pub change: Change,
    pub a: Option<AnsweredQuestion>,
    pub b: Option<AnsweredQuestion>,
}

/// Two runs compared.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Comparison {
    pub rows: Vec<Row>,
    /// Questions per [`Change`] label.
    pub counts: BTreeMap<String, usize>,
    /// Wrong answers per attributed error type: `(in A, in B)`.
    pub by_type: BTreeMap<String, (usize, usize)>,
}

impl Comparison {
    /// The count of one change.
    pub fn count(&self, change: Change) -> usize {
        self.counts.get(change.label()).copied().unwrap_or(0)
    }

    /// `fixed F · broken B · still failing S · still right R` (and the one-sided counts when
    /// there are any).
    pub fn summary(&self) -> String {
        let mut parts: Vec<String> = [
            Change::Fixed,
            Change::Broken,
            Change::StillFailing,
            Change::StillRight,
        ]
        .iter()
        .map(|c| format!("{} {}", c.label(), self.count(*c)))
        .collect();
        for c in [Change::OnlyA, Change::OnlyB] {
            if self.count(c) > 0 {
                parts.push(format!("{} {}", c.label(), self.count(c)));
            }
        }
        parts.join(" · ")
    }
}

/// Aligns `a` and `b` by question id (a question listed twice in one run keeps its first
/// verdict) and counts the changes; rows in question-id order.
///
/// # Complexity
/// O((|a| + |b|) log(|a| + |b|)).
pub fn compare(a: &[AnsweredQuestion], b: &[AnsweredQuestion]) -> Comparison {
    let index = |vs: &[AnsweredQuestion]| {
        let mut m: BTreeMap<String, AnsweredQuestion> = BTreeMap::new();
        for v in vs {
            m.entry(v.question_id.clone()).or_insert_with(|| v.clone());
        }
        m
    };
    let (mut ia, mut ib) = (index(a), index(b));
    let ids: std::collections::BTreeSet<String> = ia.keys().chain(ib.keys()).cloned().collect();
    let mut out = Comparison::default();
    for id in ids {
        let (va, vb) = (ia.remove(&id), ib.remove(&id));
        let change = match (&va, &vb) {
            (Some(x), Some(y)) => match (x.correct, y.correct) {
                (false, true) => Change::Fixed,
                (true, false) => Change::Broken,
                (false, false) => Change::StillFailing,
                (true, true) => Change::StillRight,
            },
            (Some(_), None) => Change::OnlyA,
            _ => Change::OnlyB,
        };
        *out.counts.entry(change.label().to_owned()).or_default() += 1;
        for (v, side) in [(&va, 0), (&vb, 1)] {
            if let Some(t) = v.as_ref().filter(|v| !v.correct) {
                let key = t.error_type.clone().unwrap_or_else(|| {
                    if t.split == "heldout" {
                        "held-out (not attributed)".into()
                    } else {
                        "not attributed".into()
                    }
                });
                let e = out.by_type.entry(key).or_default();
                if side == 0 {
                    e.0 += 1;
                } else {
                    e.1 += 1;
                }
            }
        }
        out.rows.push(Row {
            question_id: id,
            change,
            a: va,
            b: vb,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(id: &str, correct: bool) -> AnsweredQuestion {
        AnsweredQuestion {
            question_id: id.into(),
            conversation: "c".into(),
            split: "train".into(),
            question: String::new(),
            gold: String::new(),
            prediction: String::new(),
            correct,
            error_type: (!correct).then(|| "RetrievalError".into()),
            op_name: None,
        }
    }

    #[test]
    fn counts_each_change() {
        let a = [
            v("1", false),
            v("2", true),
            v("3", false),
            v("4", true),
            v("5", true),
        ];
        let b = [
            v("1", true),
            v("2", false),
            v("3", false),
            v("4", true),
            v("6", true),
        ];
        let c = compare(&a, &b);
        assert_eq!(
            [
                Change::Fixed,
                Change::Broken,
                Change::StillFailing,
                Change::StillRight,
                Change::OnlyA,
                Change::OnlyB
            ]
            .map(|x| c.count(x)),
            [1, 1, 1, 1, 1, 1]
        );
        assert_eq!(c.by_type.get("RetrievalError"), Some(&(2, 2)));
        assert!(c
            .summary()
            .starts_with("fixed 1 · broken 1 · still failing 1"));
        let f = RunFile::new("r".into(), a.to_vec());
        let back = RunFile::parse(serde_json::to_string(&f).unwrap().as_bytes()).unwrap();
        assert_eq!(back, f);
        assert!(RunFile::parse(b"{}")
            .unwrap_err()
            .contains("not a run file"));
    }
}
