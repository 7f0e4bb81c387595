//! Errors of reading a trace: each says what is wrong, where, and what to do.

use serde::{Deserialize, Serialize};

use crate::model::{self, GraphError};

/// A problem with a trace file. `Display` gives a sentence a user can act on.
#[cfg_attr(feature = "ts", derive(tsify_next::Tsify))]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "error", rename_all = "snake_case")]
pub enum FormatError {
    #[error("invalid JSON at line {line}, column {column}: {message}. The file may be truncated or not JSON; export it again.")]
    Json {
        line: usize,
        column: usize,
        message: String,
    },

    #[error("{path}: {message}")]
    Field { path: String, message: String },

    #[error("not a trace memtrace can read ({reason}). memtrace reads smartcomment / MemTraceBench JSON (a `data` object with `nodes`, `edges`, `operations`), OTLP JSON or JSON Lines (`resourceSpans`), and Langfuse exports (a trace with `observations`).")]
    Unknown { reason: String },

    // Dangling, DuplicateId and Cycle repeat GraphError's variants (and share its texts) so
    // FormatError keeps one flat JSON/TS shape (`{"error": "dangling", …}`) for the page and the
    // JS API; `From<GraphError>` maps them one to one.
    #[error("{}", model::dangling(path, kind, id))]
    Dangling {
        path: String,
        id: String,
        kind: String,
    },

    #[error("{}", model::duplicate_id(path, id, first))]
    DuplicateId {
        path: String,
        id: String,
        first: String,
    },

    #[error("{}", model::cycle(path, id))]
    Cycle { path: String, id: String },

    #[error("{path}: bad timestamp {value:?}; expected `YYYY-MM-DD HH:MM:SS.mmm` (smartcomment), unix nanoseconds as a decimal string (OTLP) or ISO 8601 (Langfuse), with the end not before the start.")]
    BadTimestamp { path: String, value: String },

    #[error("the file is {size_bytes} bytes; the limit is {limit_bytes}. Split the trace (one file per conversation) or raise the limit.")]
    TooLarge { size_bytes: u64, limit_bytes: u64 },
}

impl FormatError {
    /// Where the problem is: a JSON path, or `line L, column C`.
    pub fn location(&self) -> String {
        match self {
            FormatError::Json { line, column, .. } => format!("line {line}, column {column}"),
            FormatError::Field { path, .. }
            | FormatError::Dangling { path, .. }
            | FormatError::DuplicateId { path, .. }
            | FormatError::Cycle { path, .. }
            | FormatError::BadTimestamp { path, .. } => path.clone(),
            FormatError::Unknown { .. } | FormatError::TooLarge { .. } => String::new(),
        }
    }
}

/// The graph's own errors, as the reader reports them (same variants, same JSON shape).
impl From<GraphError> for FormatError {
    fn from(e: GraphError) -> FormatError {
        match e {
            GraphError::Field { path, message } => FormatError::Field { path, message },
            GraphError::Dangling { path, id, kind } => FormatError::Dangling { path, id, kind },
            GraphError::DuplicateId { path, id, first } => {
                FormatError::DuplicateId { path, id, first }
            }
            GraphError::Cycle { path, id } => FormatError::Cycle { path, id },
        }
    }
}

/// Where a reader's problems go: in lenient mode kept in a list, in strict mode the first one
/// is returned (and stops the read).
pub(crate) struct Problems {
    lenient: bool,
    list: Vec<FormatError>,
}

impl Problems {
    /// Starts from `list` (problems found earlier).
    pub(crate) fn new(lenient: bool, list: Vec<FormatError>) -> Self {
        Problems { lenient, list }
    }

    /// Keeps `e` (lenient) or returns it (strict).
    ///
    /// # Errors
    /// `e`, in strict mode.
    pub(crate) fn report(&mut self, e: FormatError) -> Result<(), FormatError> {
        if self.lenient {
            self.list.push(e);
            Ok(())
        } else {
            Err(e)
        }
    }

    pub(crate) fn into_list(self) -> Vec<FormatError> {
        self.list
    }
}

/// Converts a serde_json error into a located [`FormatError`].
pub(crate) fn from_json(e: &serde_json::Error) -> FormatError {
    let message = e.to_string();
    // serde_json appends " at line L column C"; keep the sentence without it.
    let message = message
        .rsplit_once(" at line ")
        .map_or(message.as_str(), |(m, _)| m)
        .to_owned();
    let message = if message.contains("recursion limit exceeded") {
        "the JSON nests deeper than 128 levels of arrays/objects (the parser's limit); a trace never needs this, so the file is probably not a trace or is malicious".to_owned()
    } else {
        message
    };
    FormatError::Json {
        line: e.line(),
        column: e.column(),
        message,
    }
}
