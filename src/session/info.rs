//! One trace's `info`, for every host (`memtrace info`, Python's `Trace.info()`): its counts,
//! its questions, how each failure was found, what the instrumentation wrote, and, when no
//! question failed, what was looked for.

use serde::Serialize;

use super::SessionError;
use crate::format::{conventions, Conventions, Format};
use crate::model::{Detection, FoundBy, RuleReport, Summary, Trace, Unused};

/// A trace's info (the object `memtrace info --json` prints per trace).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Info {
    #[serde(flatten)]
    pub summary: Summary,
    /// The file (or `BUNDLE:NAME`).
    pub file: String,
    /// Questions in the trace, failed or not.
    pub questions: usize,
    /// Which rule found each failure case, in case order.
    pub found_by: Vec<FoundBy>,
    /// What the instrumentation wrote (not for smartcomment).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conventions: Option<Conventions>,
    /// When no question failed: what was looked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub looked_for: Option<LookedFor>,
}

/// What the rules looked for in a trace where none found a failure, and a rule to try.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LookedFor {
    pub rules: Vec<RuleReport>,
    pub unused_judges: Vec<Unused>,
    pub suggestion: String,
}

/// The info of `trace`, read as `format` from a file named `file`. `detection` is how its
/// cases were found when rules or marks were applied (`None`: found again here, by the ordered
/// rules alone). `raw`, the file's bytes as read (compressed or not), gives the conventions of
/// the formats that have them, read up to `max_bytes`.
///
/// # Errors
/// [`SessionError::Detect`] when the cases cannot be found (bad annotations).
pub fn info(
    file: &str,
    trace: &Trace,
    format: Format,
    detection: Option<&Detection>,
    raw: Option<&[u8]>,
    max_bytes: u64,
) -> Result<Info, SessionError> {
    let found;
    let d = if let Some(d) = detection {
        d
    } else {
        found = trace
            .detect(&[], &[])
            .map_err(|error| SessionError::Detect {
                trace: file.to_owned(),
                error,
            })?;
        &found
    };
    let looked_for = d.cases.is_empty().then(|| LookedFor {
        rules: d.rules.clone(),
        unused_judges: d.unused_judges.clone(),
        suggestion: d.suggestion.clone(),
    });
    Ok(Info {
        summary: trace.summary(format.as_str()),
        file: file.to_owned(),
        questions: d.questions,
        found_by: d.found_by.clone(),
        conventions: raw
            .filter(|_| format != Format::Smartcomment)
            .map(|b| conventions(b, max_bytes)),
        looked_for,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{load, LoadOptions};

    #[test]
    fn info_counts_and_says_what_was_looked_for_only_without_failures() {
        let bytes = include_bytes!("../../tests/fixtures/otel/openinference_traces.json");
        let loaded = load(bytes, LoadOptions::default()).unwrap();
        let i = info(
            "f.json",
            &loaded.trace,
            loaded.format,
            None,
            Some(bytes),
            1 << 30,
        )
        .unwrap();
        let v = serde_json::to_value(&i).unwrap();
        assert_eq!(v["file"], "f.json");
        assert_eq!(v["failures"], loaded.trace.cases.len());
        assert!(v.get("conventions").is_some());
        assert_eq!(v.get("looked_for").is_some(), loaded.trace.cases.is_empty());
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys[0], "format");
    }
}
