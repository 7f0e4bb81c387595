//! The report's numbers: how many failed questions each error type and each op name got, and
//! which cases stand behind each count.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::verdict::{Label, Verdict};
use crate::model::{ErrorType, Trace};

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
    /// Every source, in menu order.
    pub const ALL: [Source; 3] = [Source::Verdicts, Source::Labels, Source::LabelsOverVerdicts];

    /// The name saved and exported.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Verdicts => "verdicts",
            Source::Labels => "labels",
            Source::LabelsOverVerdicts => "labels_over_verdicts",
        }
    }

    /// The name shown.
    pub fn label(self) -> &'static str {
        match self {
            Source::Verdicts => "verdicts",
            Source::Labels => "labels",
            Source::LabelsOverVerdicts => "labels, else verdicts",
        }
    }

    /// The source named `s` by [`Source::as_str`].
    pub fn parse(s: &str) -> Option<Source> {
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// One bar: a key (error type or op name), and the cases (indices into `trace.cases`) it counts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Bar {
    pub key: String,
    pub cases: Vec<usize>,
}

impl Bar {
    /// How many cases the bar counts.
    pub fn count(&self) -> usize {
        self.cases.len()
    }
}

/// The two charts and how many cases they cover.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
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
    // `ErrorType` orders the memory types first, in pipeline order.
    let mut by_type: BTreeMap<ErrorType, Vec<usize>> =
        ErrorType::MEMORY.iter().map(|&t| (t, Vec::new())).collect();
    let mut by_op: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    let mut judged = 0;
    for (i, c) in trace.cases.iter().enumerate() {
        let label = labels.get(&c.query_id).map(|l| (l.error_type, &l.op_id));
        let verdict = verdicts.get(&c.query_id).map(|v| (v.error_type, &v.op_id));
        let pick = match source {
            Source::Verdicts => verdict,
            Source::Labels => label,
            Source::LabelsOverVerdicts => label.or(verdict),
        };
        let Some((error_type, op_id)) = pick else {
            continue;
        };
        judged += 1;
        by_type.entry(error_type).or_default().push(i);
        let name = trace
            .op_by_id(op_id)
            .map_or_else(|| op_id.clone(), |o| trace.op(o).op_name.clone());
        by_op.entry(name).or_default().push(i);
    }
    let by_type = by_type
        .into_iter()
        .map(|(t, cases)| Bar {
            key: t.as_str().to_owned(),
            cases,
        })
        .collect();
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
