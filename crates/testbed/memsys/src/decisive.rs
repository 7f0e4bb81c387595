//! Scoring decisive sets ([`crate::replay::decisive_set`]) against annotated sets: a
//! multi-fault annotation lists its ops in `decisive_op_ids` (an extension single-op readers
//! ignore, see `docs/multi-fault.md`); any other annotation is the set of its `final_op_id`.

use serde::Serialize;

use crate::replay::{DecisiveSet, SetOutcome};
use memtrace::model::{FailureCase, Trace};

/// The annotated set of `case`: its annotation's `decisive_op_ids`, else its `final_op_id`.
/// `None` when the case is not annotated.
pub fn annotated_set(trace: &Trace, case: &FailureCase) -> Option<Vec<String>> {
    let ann = trace
        .annotations
        .iter()
        .flatten()
        .find(|a| a.query_id == case.query_id)?;
    let listed: Vec<String> = ann
        .extra
        .get("decisive_op_ids")
        .and_then(|v| v.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    if !listed.is_empty() {
        return Some(listed);
    }
    (!ann.final_op_id.is_empty()).then(|| vec![ann.final_op_id.clone()])
}

/// Set scores over cases.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SetScores {
    pub cases: usize,
    /// Share of cases whose found set equals the annotated set.
    pub exact: f64,
    /// Mean share of the found ops that are annotated (an empty set counts 0).
    pub precision: f64,
    /// Mean share of the annotated ops found.
    pub recall: f64,
    /// Median replays per case.
    pub median_replays: f64,
    /// Cases whose trace could not be replayed.
    pub not_replayable: usize,
}

/// Scores `(annotated set, found)` pairs.
pub fn score_sets(pairs: &[(Vec<String>, DecisiveSet)]) -> SetScores {
    let n = pairs.len();
    if n == 0 {
        return SetScores::default();
    }
    let share = |num: usize, den: usize| {
        if den == 0 {
            0.0
        } else {
            num as f64 / den as f64
        }
    };
    let (mut exact, mut precision, mut recall) = (0usize, 0.0, 0.0);
    for (want, got) in pairs {
        let hits = got.ops.iter().filter(|o| want.contains(o)).count();
        let mut a = want.clone();
        let mut b = got.ops.clone();
        a.sort();
        b.sort();
        exact += usize::from(a == b);
        precision += share(hits, got.ops.len());
        recall += share(hits, want.len());
    }
    let mut replays: Vec<usize> = pairs.iter().map(|(_, g)| g.replays.len()).collect();
    replays.sort_unstable();
    let median = match (replays.get((n - 1) / 2), replays.get(n / 2)) {
        (Some(&a), Some(&b)) => (a + b) as f64 / 2.0,
        _ => 0.0,
    };
    SetScores {
        cases: n,
        exact: share(exact, n),
        precision: precision / n as f64,
        recall: recall / n as f64,
        median_replays: median,
        not_replayable: pairs
            .iter()
            .filter(|(_, g)| g.outcome == SetOutcome::NotReplayable)
            .count(),
    }
}
