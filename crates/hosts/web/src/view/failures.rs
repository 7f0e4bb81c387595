//! The failures list: which failed questions to show, in which order. Pure, tested natively.

use serde::{Deserialize, Serialize};

use memtrace::model::FailureCase;
use memtrace::Trace;

/// Column to sort the failures list by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SortKey {
    /// As found in the file (annotated first).
    #[default]
    File,
    Query,
    /// Annotated error type, then verdict.
    ErrorType,
    Score,
}

impl SortKey {
    pub const ALL: [SortKey; 4] = [
        SortKey::File,
        SortKey::Query,
        SortKey::ErrorType,
        SortKey::Score,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            SortKey::File => "file",
            SortKey::Query => "query",
            SortKey::ErrorType => "error_type",
            SortKey::Score => "score",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            SortKey::File => "file order",
            SortKey::Query => "query",
            SortKey::ErrorType => "error type",
            SortKey::Score => "judge score",
        }
    }

    pub fn parse(s: &str) -> Option<SortKey> {
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// Filter and sort of the failures list; kept across reloads.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ListSettings {
    /// Case-insensitive text that the query, gold answers or prediction must contain.
    pub text: String,
    /// Only cases with this annotated error type (`"none"`: only unannotated ones).
    pub error_type: Option<String>,
    pub sort: SortKey,
    pub descending: bool,
}

/// The error type a case is labelled with, for filtering and display.
pub fn label_of(case: &FailureCase) -> &'static str {
    case.annotation
        .as_ref()
        .map_or("none", |a| a.error_type.as_str())
}

/// Indices into `trace.cases` of the cases to show, in display order.
///
/// # Complexity
/// O(n log n) for n cases (plus the text match).
pub fn failure_rows(trace: &Trace, s: &ListSettings) -> Vec<usize> {
    let needle = s.text.to_lowercase();
    let mut rows: Vec<usize> = trace
        .cases
        .iter()
        .enumerate()
        .filter(|(_, c)| s.error_type.as_deref().is_none_or(|t| label_of(c) == t))
        .filter(|(_, c)| {
            needle.is_empty()
                || c.query.to_lowercase().contains(&needle)
                || c.prediction.to_lowercase().contains(&needle)
                || c.golden_answers
                    .iter()
                    .any(|g| g.to_lowercase().contains(&needle))
        })
        .map(|(i, _)| i)
        .collect();
    let cases = &trace.cases;
    match s.sort {
        SortKey::File => {}
        SortKey::Query => rows.sort_by(|&a, &b| cases[a].query.cmp(&cases[b].query)),
        SortKey::ErrorType => rows.sort_by_key(|&i| label_of(&cases[i])),
        SortKey::Score => rows.sort_by(|&a, &b| {
            let (x, y) = (cases[a].judge_score, cases[b].judge_score);
            x.unwrap_or(f64::NAN).total_cmp(&y.unwrap_or(f64::NAN))
        }),
    }
    if s.descending {
        rows.reverse();
    }
    rows
}

/// The error types present, for the filter menu, sorted.
pub fn labels_present(trace: &Trace) -> Vec<&'static str> {
    let mut v: Vec<&'static str> = trace.cases.iter().map(label_of).collect();
    v.sort_unstable();
    v.dedup();
    v
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The LoCoMo smartcomment fixture 1 (6 annotated failures); other modules' tests use it too.
    pub(crate) fn fixture() -> Trace {
        let bytes = include_bytes!(
            "../../../../../tests/fixtures/smartcomment/locomo/locomo_locomo-1.json"
        );
        memtrace::load(bytes, memtrace::LoadOptions::default())
            .unwrap()
            .trace
    }

    #[test]
    fn default_settings_show_every_case_in_file_order() {
        let t = fixture();
        let rows = failure_rows(&t, &ListSettings::default());
        assert_eq!(rows, (0..t.cases.len()).collect::<Vec<_>>());
        assert_eq!(rows.len(), 6);
    }

    #[test]
    fn filter_by_type_and_text() {
        let t = fixture();
        let s = ListSettings {
            error_type: Some("ResponseError".into()),
            ..ListSettings::default()
        };
        let rows = failure_rows(&t, &s);
        assert_eq!(rows.len(), 2);
        assert!(rows
            .iter()
            .all(|&i| label_of(&t.cases[i]) == "ResponseError"));
        let word = t.cases[3]
            .query
            .split_whitespace()
            .last()
            .unwrap()
            .to_uppercase();
        let s = ListSettings {
            text: word.clone(),
            ..ListSettings::default()
        };
        let rows = failure_rows(&t, &s);
        assert!(rows.contains(&3), "{word}");
        assert!(rows.len() < t.cases.len());
    }

    #[test]
    fn sort_by_query_both_ways() {
        let t = fixture();
        let mut s = ListSettings {
            sort: SortKey::Query,
            ..ListSettings::default()
        };
        let up = failure_rows(&t, &s);
        let queries: Vec<&str> = up.iter().map(|&i| t.cases[i].query.as_str()).collect();
        let mut sorted = queries.clone();
        sorted.sort_unstable();
        assert_eq!(queries, sorted);
        s.descending = true;
        let down = failure_rows(&t, &s);
        assert_eq!(down, up.into_iter().rev().collect::<Vec<_>>());
        assert_eq!(labels_present(&t).len(), 5);
    }
}
