//! The shapes JavaScript passes in (options, camelCase) and the ones the module builds for it
//! (ids instead of the core's indexes). Everything else returned is a core type as serde writes it.

use memtrace::session::MethodOptions;
use serde::{Deserialize, Serialize};
use wasm_bindgen::JsValue;

use crate::error::{JsResult, MemtraceError};

/// `Trace.load` options.
#[derive(tsify_next::Tsify, Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct LoadOptions {
    /// `smartcomment`, `otlp` or `langfuse`; detected from the content when left out.
    pub format: Option<String>,
    /// Keep what is valid and list the rest in `problems()`.
    pub lenient: bool,
    /// User failure rules (`span=NAME output~REGEX`), see docs/failures.md.
    pub failed_if: Vec<String>,
    /// The name exports give the trace (`sampled_graph_paths`, report sources).
    pub name: Option<String>,
    /// Op-name role overrides, `NAME=ROLE`.
    pub roles: Vec<String>,
    /// A graded judge score below this fails the question (default 0.5).
    pub judge_threshold: Option<f64>,
    /// The largest file read, in bytes once decompressed (default 512 MiB: a load takes about
    /// three times the file in wasm32's 4 GiB); a larger one throws kind `too_large`.
    pub max_bytes: Option<u64>,
}

/// `search` options.
#[derive(tsify_next::Tsify, Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct SearchOptions {
    /// Treat the query as a regular expression instead of BM25 terms.
    pub regex: bool,
    /// Regex only: match without regard to case.
    pub ignore_case: bool,
    /// At most this many hits (default 20).
    pub k: Option<usize>,
}

/// `renderFlatLog` range: chars `[start, start + maxChars)` of the flat log.
#[derive(tsify_next::Tsify, Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct LogRange {
    pub start: usize,
    /// Default 20 000.
    pub max_chars: Option<usize>,
}

/// A window of the flat log.
#[derive(tsify_next::Tsify, Debug, Clone, PartialEq, Serialize)]
pub struct LogWindow {
    pub text: String,
    pub start: usize,
    /// The log's length in chars.
    pub total_chars: usize,
}

// The row of `memtrace attribute --json` (the session's `VerdictRow`): the verdict's fields, or
// the case and why it has none, with where its question is and its counterfactual check.
#[wasm_bindgen::prelude::wasm_bindgen(typescript_custom_section)]
const VERDICT_ROW: &str = r#"
/** One case's outcome: a line of `memtrace attribute --json`, Python's `Verdict.to_dict()`. */
export type VerdictRow = RowVerdict & { question: QuestionRef; counterfactual?: Check };
"#;

/// `attribute` options.
#[derive(tsify_next::Tsify, Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct AttributeOptions {
    /// Only `infoflow` runs synchronously; the LLM methods go through `attributeWith`.
    pub method: Option<String>,
}

impl AttributeOptions {
    /// The session's method options (the defaults but the method).
    pub fn method_options(&self) -> MethodOptions {
        method_options(self.method.as_deref())
    }
}

/// The session's method options for `method` (`infoflow` when left out), the rest the defaults.
pub fn method_options(method: Option<&str>) -> MethodOptions {
    let mut o = MethodOptions::default();
    if let Some(m) = method {
        m.clone_into(&mut o.method);
    }
    o
}

/// A set of graph nodes by id: a slice or an impact set, each list in topological order.
#[derive(tsify_next::Tsify, Debug, Clone, PartialEq, Serialize)]
pub struct NodeSet {
    pub variables: Vec<String>,
    pub operations: Vec<String>,
}

/// One node: a variable version or an operation, with its record as the file has it.
#[derive(tsify_next::Tsify, Debug, Clone, PartialEq, Serialize)]
pub struct Node {
    /// `variable` or `operation`.
    #[tsify(type = "\"variable\" | \"operation\"")]
    pub kind: &'static str,
    pub id: String,
    #[tsify(type = "Record<string, unknown>")]
    pub record: serde_json::Value,
    /// Variable: the ops that produced it; operation: the variables it read.
    pub inputs: Vec<String>,
    /// Variable: the ops that read it; operation: the variables it wrote.
    pub outputs: Vec<String>,
}

/// One version on a lifeline, by id.
#[derive(tsify_next::Tsify, Debug, Clone, PartialEq, Serialize)]
pub struct VersionEntry {
    pub id: String,
    pub version: u32,
    /// `birth`, `update` or `delete`.
    pub kind: memtrace::algo::VersionKind,
    pub created_at: String,
    pub made_by: Vec<String>,
    pub read_by: Vec<String>,
}

/// The versions of one variable identity.
#[derive(tsify_next::Tsify, Debug, Clone, PartialEq, Serialize)]
pub struct Lifeline {
    pub identity: String,
    pub versions: Vec<VersionEntry>,
    pub ended_by: Option<String>,
}

/// A ranked start message.
#[derive(tsify_next::Tsify, Debug, Clone, PartialEq, Serialize)]
pub struct StartPoint {
    pub id: String,
    pub score: f64,
}

/// Serializes `v` for JavaScript: maps as plain objects, 64-bit numbers as numbers.
pub fn to_js<T: Serialize + ?Sized>(v: &T) -> JsResult<JsValue> {
    v.serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| MemtraceError::argument(e.to_string()).into())
}

/// Reads an options object; `undefined` and `null` give the defaults.
pub fn options<T: Default + for<'de> Deserialize<'de>>(v: JsValue, what: &str) -> JsResult<T> {
    if v.is_undefined() || v.is_null() {
        return Ok(T::default());
    }
    // Through JSON, so that an unknown (misspelt) option is refused rather than ignored.
    let json: serde_json::Value = serde_wasm_bindgen::from_value(v)
        .map_err(|e| MemtraceError::argument(format!("{what}: {e}")))?;
    serde_json::from_value(json).map_err(|e| MemtraceError::argument(format!("{what}: {e}")).into())
}
