//! What every host asks of the open traces' questions: which there are ([`questions`]), how the
//! failure cases are found again, which cases still want a verdict, which open trace an
//! annotation file belongs to, and in which order files are opened.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use super::open::{kind_of, FileKind};
use super::verdict::Verdict;
use super::SessionError;
use crate::format::sidecar;
use crate::model::{AnnotationRecord, Detection, FailRule, GraphError, Mark, Trace};

/// The failure cases of `trace` (indices into its `cases`, in order) still to attribute: those
/// with no verdict in `verdicts` (by `query_id`), or with `method` none of that method — so a
/// resumed batch pays for nothing twice.
pub fn pending(
    trace: &Trace,
    verdicts: &BTreeMap<String, Verdict>,
    method: Option<&str>,
) -> Vec<usize> {
    let done = |v: &Verdict| method.is_none_or(|m| v.method == m);
    trace
        .cases
        .iter()
        .enumerate()
        .filter(|(_, c)| !verdicts.get(&c.query_id).is_some_and(done))
        .map(|(i, _)| i)
        .collect()
}

/// Finds `trace`'s failure cases again with the user's `rules`, `marks` and judge threshold
/// (`trace.cases` replaced), and says what was looked for; `None`, nothing run, when none is
/// given: the cases loading found stand.
///
/// # Errors
/// As [`Trace::apply_rules`].
pub fn find_cases(
    trace: &mut Trace,
    rules: &[FailRule],
    marks: &[Mark],
    judge_threshold: Option<f64>,
) -> Result<Option<Detection>, GraphError> {
    if let Some(t) = judge_threshold {
        trace.judge_threshold = Some(t);
    }
    if rules.is_empty() && marks.is_empty() && judge_threshold.is_none() {
        return Ok(None);
    }
    trace.apply_rules(rules, marks).map(Some)
}

/// The open trace (index into `traces`) whose questions every record of annotation file `file`
/// names: the `current` one when it fits, else the first that does.
///
/// # Errors
/// [`SessionError::Unfitting`] when no open trace has those questions.
pub fn annotation_target<'a>(
    traces: impl IntoIterator<Item = &'a Trace>,
    current: Option<usize>,
    file: &str,
    records: &[AnnotationRecord],
) -> Result<usize, SessionError> {
    let traces: Vec<&Trace> = traces.into_iter().collect();
    let fits = |i: &usize| traces.get(*i).is_some_and(|t| sidecar::fits(t, records));
    current
        .filter(fits)
        .or_else(|| (0..traces.len()).find(fits))
        .ok_or_else(|| SessionError::Unfitting {
            file: file.to_owned(),
            first: records
                .first()
                .map_or(String::new(), |r| r.query_id.clone()),
        })
}

/// Sorts files (name, decompressed bytes) into the order they open in: traces and bundles
/// before the annotation files that merge into them; otherwise as given.
pub fn opening_order<B: AsRef<[u8]>>(files: &mut [(String, B)]) {
    files.sort_by_cached_key(|(_, b)| kind_of(b.as_ref()) == FileKind::Annotations);
}

/// Files given together (name, bytes), as they open: the OTLP log records of a logs file joined
/// to the traces file whose spans they name ([`crate::format::otlp_join`]), then traces and
/// bundles before the annotation files that merge into them ([`opening_order`]).
pub fn arrange(files: Vec<(String, Arc<[u8]>)>) -> Vec<(String, Arc<[u8]>)> {
    let mut files = if files.len() < 2 {
        files
    } else {
        let owned = files.into_iter().map(|(n, b)| (n, b.to_vec())).collect();
        crate::format::otlp_join::join_logs_to_traces(owned)
            .into_iter()
            .map(|(n, b)| (n, Arc::from(b)))
            .collect()
    };
    opening_order(&mut files);
    files
}

/// A question of a trace, failed or not, as a host lists them to mark one failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    pub query_id: String,
    pub text: String,
    /// Its index in `trace.cases` when it failed.
    pub case: Option<usize>,
    /// The user marked it failed.
    pub marked: bool,
}

/// Every question (query variable) of `trace`, in file order, then the failed questions the
/// question finder did not list (annotated ones named otherwise).
pub fn questions(trace: &Trace, marks: &[Mark]) -> Vec<Question> {
    // Looked up by id: a large trace has thousands of questions and cases.
    let mut case_of: HashMap<&str, usize> = HashMap::new();
    for (i, c) in trace.cases.iter().enumerate() {
        case_of.entry(c.query_id.as_str()).or_insert(i);
    }
    let marked: HashSet<&str> = marks.iter().map(|m| m.query_id.as_str()).collect();
    let row = |query_id: String, text: String| Question {
        case: case_of.get(query_id.as_str()).copied(),
        marked: marked.contains(query_id.as_str()),
        query_id,
        text,
    };
    let mut rows: Vec<Question> = trace
        .questions()
        .into_iter()
        .map(|q| {
            let v = trace.var(q);
            row(
                v.full_node_id.clone(),
                crate::model::pyrepr::display(&v.value),
            )
        })
        .collect();
    let mut listed: HashSet<String> = rows.iter().map(|r| r.query_id.clone()).collect();
    for c in &trace.cases {
        if listed.insert(c.query_id.clone()) {
            rows.push(row(c.query_id.clone(), c.query.clone()));
        }
    }
    rows
}
