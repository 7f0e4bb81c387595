//! The report view's numbers: how many failed questions each error type and each op name got,
//! and which cases stand behind each count. Pure, tested natively.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use memtrace::model::ErrorType;
use memtrace::Trace;

use crate::state::{Label, Verdict};

/// Which judgement of a case is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The attributors' verdicts.
    #[default]
    Verdicts,
    /// The labels people set (confirmed or corrected verdicts).
    Labels,
    /// A case's label where it has one, else its verdict.
    LabelsOverVerdicts,
}

impl Source {
    pub const ALL: [Source; 3] = [Source::Verdicts, Source::Labels, Source::LabelsOverVerdicts];

    pub fn as_str(self) -> &'static str {
        match self {
            Source::Verdicts => "verdicts",
            Source::Labels => "labels",
            Source::LabelsOverVerdicts => "labels_over_verdicts",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Source::Verdicts => "verdicts",
            Source::Labels => "labels",
            Source::LabelsOverVerdicts => "labels, else verdicts",
        }
    }

    pub fn parse(s: &str) -> Option<Source> {
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// One bar: a key (error type or op name), and the cases (indices into `trace.cases`) it counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bar {
    pub key: String,
    pub cases: Vec<usize>,
}

impl Bar {
    pub fn count(&self) -> usize {
        self.cases.len()
    }
}

/// The two charts and how many cases they cover.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tally {
    /// The five memory error types in pipeline order (zero bars included), then any other type.
    pub by_type: Vec<Bar>,
    /// Op names, most cases first, then by name.
    pub by_op: Vec<Bar>,
    /// Cases with a judgement counted.
    pub judged: usize,
    /// All failed cases of the trace.
    pub cases: usize,
}

impl Tally {
    /// The bar of `chart` (`"type"` or `"op"`) with this key.
    pub fn bar(&self, chart: &str, key: &str) -> Option<&Bar> {
        let bars = if chart == "op" {
            &self.by_op
        } else {
            &self.by_type
        };
        bars.iter().find(|b| b.key == key)
    }
}

/// Counts the judgements of `trace`'s cases by error type and by the name of the op they blame.
/// Verdicts and labels are keyed by `query_id`; an op id the trace lacks counts under the id.
///
/// # Complexity
/// O(c log c) for c cases.
pub fn tally(
    trace: &Trace,
    verdicts: &BTreeMap<String, Verdict>,
    labels: &BTreeMap<String, Label>,
    source: Source,
) -> Tally {
    let mut by_type: BTreeMap<String, Vec<usize>> = ErrorType::MEMORY
        .iter()
        .map(|t| (t.as_str().to_owned(), Vec::new()))
        .collect();
    let mut by_op: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    let mut judged = 0;
    for (i, c) in trace.cases.iter().enumerate() {
        let label = labels.get(&c.query_id).map(|l| (&l.error_type, &l.op_id));
        let verdict = verdicts.get(&c.query_id).map(|v| (&v.error_type, &v.op_id));
        let pick = match source {
            Source::Verdicts => verdict,
            Source::Labels => label,
            Source::LabelsOverVerdicts => label.or(verdict),
        };
        let Some((error_type, op_id)) = pick else {
            continue;
        };
        judged += 1;
        by_type.entry(error_type.clone()).or_default().push(i);
        let name = trace
            .op_by_id(op_id)
            .map_or_else(|| op_id.clone(), |o| trace.op(o).op_name.clone());
        by_op.entry(name).or_default().push(i);
    }
    let rank = |k: &str| {
        ErrorType::MEMORY
            .iter()
            .position(|t| t.as_str() == k)
            .unwrap_or(ErrorType::MEMORY.len())
    };
    let mut by_type: Vec<Bar> = by_type
        .into_iter()
        .map(|(key, cases)| Bar { key, cases })
        .collect();
    by_type.sort_by(|a, b| rank(&a.key).cmp(&rank(&b.key)).then(a.key.cmp(&b.key)));
    let mut by_op: Vec<Bar> = by_op
        .into_iter()
        .map(|(key, cases)| Bar { key, cases })
        .collect();
    by_op.sort_by(|a, b| b.count().cmp(&a.count()).then(a.key.cmp(&b.key)));
    Tally {
        by_type,
        by_op,
        judged,
        cases: trace.cases.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::failures::tests::fixture;

    /// Verdicts copied from the cases' annotations, as an attributor that agrees would give.
    fn verdicts_from_annotations(t: &Trace) -> BTreeMap<String, Verdict> {
        t.cases
            .iter()
            .filter_map(|c| {
                let a = c.annotation.as_ref()?;
                Some((
                    c.query_id.clone(),
                    Verdict {
                        error_type: a.error_type.as_str().to_owned(),
                        op_id: a.op_id.clone(),
                        reason: String::new(),
                        confidence: 1.0,
                        method: "test".into(),
                        cost: None,
                        transcript: Vec::new(),
                        counterfactual: None,
                    },
                ))
            })
            .collect()
    }

    #[test]
    fn counts_match_a_brute_force_count_per_type_and_op() {
        let t = fixture();
        let v = verdicts_from_annotations(&t);
        assert!(v.len() >= 5);
        let r = tally(&t, &v, &BTreeMap::new(), Source::Verdicts);
        assert_eq!(r.judged, v.len());
        assert_eq!(r.cases, t.cases.len());
        assert_eq!(r.by_type.iter().map(Bar::count).sum::<usize>(), v.len());
        assert_eq!(r.by_op.iter().map(Bar::count).sum::<usize>(), v.len());
        for bar in &r.by_type {
            let want = v.values().filter(|x| x.error_type == bar.key).count();
            assert_eq!(bar.count(), want, "{}", bar.key);
            for &i in &bar.cases {
                assert_eq!(v[&t.cases[i].query_id].error_type, bar.key);
            }
        }
        for bar in &r.by_op {
            for &i in &bar.cases {
                let op = t.op_by_id(&v[&t.cases[i].query_id].op_id).unwrap();
                assert_eq!(t.op(op).op_name, bar.key);
            }
        }
        // Pipeline order first; op bars most cases first.
        let keys: Vec<&str> = r.by_type.iter().map(|b| b.key.as_str()).collect();
        assert_eq!(&keys[..5], &ErrorType::MEMORY.map(ErrorType::as_str)[..]);
        assert!(r.by_op.windows(2).all(|w| w[0].count() >= w[1].count()));
    }

    #[test]
    fn labels_override_verdicts_only_when_asked() {
        let t = fixture();
        let v = verdicts_from_annotations(&t);
        let q = t.cases[0].query_id.clone();
        let other = if v[&q].error_type == "ResponseError" {
            "ExtractionError"
        } else {
            "ResponseError"
        };
        let labels: BTreeMap<String, Label> = [(
            q.clone(),
            Label {
                error_type: other.into(),
                op_id: "no-such-op".into(),
            },
        )]
        .into();
        let plain = tally(&t, &v, &labels, Source::Verdicts);
        let mixed = tally(&t, &v, &labels, Source::LabelsOverVerdicts);
        let only = tally(&t, &v, &labels, Source::Labels);
        let count = |r: &Tally, k: &str| r.bar("type", k).map_or(0, Bar::count);
        assert_eq!(count(&mixed, other), count(&plain, other) + 1);
        assert_eq!(only.judged, 1);
        assert_eq!(only.bar("type", other).unwrap().cases, vec![0]);
        // An op the trace lacks is counted under its id.
        assert_eq!(only.bar("op", "no-such-op").unwrap().cases, vec![0]);
        assert_eq!(mixed.judged, plain.judged);
    }

    #[test]
    fn no_judgements_give_empty_bars() {
        let t = fixture();
        let r = tally(&t, &BTreeMap::new(), &BTreeMap::new(), Source::Verdicts);
        assert_eq!(r.judged, 0);
        assert!(r.by_op.is_empty());
        assert_eq!(r.by_type.len(), 5);
        assert!(r.by_type.iter().all(|b| b.count() == 0));
        assert_eq!(Source::parse("labels"), Some(Source::Labels));
        assert_eq!(Source::parse("x"), None);
    }
}
