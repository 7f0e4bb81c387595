//! Separate annotation (case) files: a JSON list of MemTraceBench annotations, or an object with
//! an `annotations` list, merged into the loaded trace whose query nodes they name. Pure.

use memtrace::format::sidecar;
use memtrace::model::AnnotationRecord;
use memtrace::Trace;

pub use memtrace::format::sidecar::is_annotation_file;

/// Reads the annotations of an annotation file.
///
/// # Errors
/// A sentence with the line and column of bad JSON, or what shape was expected.
pub fn parse(bytes: &[u8]) -> Result<Vec<AnnotationRecord>, String> {
    sidecar::parse(bytes).map_err(|e| e.to_string())
}

/// The index of the trace every annotation's `query_id` names, preferring `current`.
pub fn target<'a>(
    traces: impl Iterator<Item = &'a Trace> + Clone,
    current: Option<usize>,
    anns: &[AnnotationRecord],
) -> Option<usize> {
    let fits = |t: &Trace| sidecar::fits(t, anns);
    if let Some(c) = current {
        if traces.clone().nth(c).is_some_and(fits) {
            return Some(c);
        }
    }
    traces.enumerate().find(|(_, t)| fits(t)).map(|(i, _)| i)
}

/// A copy of `trace` with `anns` merged in (an annotation for the same query replaces the old
/// one) and its failure cases recomputed.
///
/// # Errors
/// The located reason an annotation does not fit the trace (unknown op id, unknown error type).
pub fn merge(trace: &Trace, anns: Vec<AnnotationRecord>) -> Result<Trace, String> {
    sidecar::merged(trace, anns).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &[u8] =
        include_bytes!("../../../tests/fixtures/smartcomment/locomo/locomo_locomo-1.json");

    /// The fixture without its annotations, and its annotations as a separate file.
    fn split() -> (Trace, Vec<u8>) {
        let mut v: serde_json::Value = serde_json::from_slice(FIXTURE).unwrap();
        let anns = v["data"]["annotations"].take();
        v["data"].as_object_mut().unwrap().remove("annotations");
        let bare = memtrace::load(
            &serde_json::to_vec(&v).unwrap(),
            memtrace::LoadOptions::default(),
        )
        .unwrap()
        .trace;
        (bare, serde_json::to_vec_pretty(&anns).unwrap())
    }

    #[test]
    fn an_annotation_file_merges_into_its_trace() {
        let (bare, file) = split();
        assert!(is_annotation_file(&file));
        assert!(!is_annotation_file(FIXTURE));
        let anns = parse(&file).unwrap();
        assert_eq!(anns.len(), 6);
        assert_eq!(target([&bare].into_iter(), None, &anns), Some(0));
        let merged = merge(&bare, anns).unwrap();
        assert_eq!(
            merged
                .cases
                .iter()
                .filter(|c| c.annotation.is_some())
                .count(),
            6
        );
    }

    #[test]
    fn wrapped_form_and_errors() {
        let (bare, file) = split();
        let list: serde_json::Value = serde_json::from_slice(&file).unwrap();
        let wrapped = serde_json::to_vec(&serde_json::json!({ "annotations": list })).unwrap();
        assert_eq!(parse(&wrapped).unwrap().len(), 6);
        let err = parse(b"[{\"query_id\": ").unwrap_err();
        assert!(err.contains("line 1, column"), "{err}");
        assert!(parse(b"{\"x\": 1}")
            .unwrap_err()
            .contains("expected a list"));
        // An annotation naming an op the trace lacks is refused with its location.
        let mut anns = parse(&file).unwrap();
        anns[0].final_op_id = "op-missing".into();
        let err = merge(&bare, anns).unwrap_err();
        assert!(err.contains("annotations[0]"), "{err}");
        // No loaded trace has this query.
        let mut anns = parse(&file).unwrap();
        anns[0].query_id = "query:nowhere@1".into();
        assert_eq!(target([&bare].into_iter(), Some(0), &anns), None);
    }
}
