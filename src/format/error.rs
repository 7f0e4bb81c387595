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

    /// A file (once decompressed) over the largest a host takes. What to do is in
    /// [`FormatError::hint`], where each host names its own setting.
    #[error("the file is {} ({size_bytes} bytes); the limit is {}.", super::size::size_text(*size_bytes), super::size::size_text(*limit_bytes))]
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

/// What went wrong in one word, the same for every host (`MemtraceError.kind` in JavaScript and
/// Python). [`FormatErrorKind::as_str`] is the stable name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FormatErrorKind {
    Json,
    Field,
    UnknownFormat,
    Dangling,
    DuplicateId,
    Cycle,
    BadTimestamp,
    TooLarge,
}

impl FormatErrorKind {
    /// The stable name: `json`, `field`, `unknown_format`, `dangling`, `duplicate_id`, `cycle`,
    /// `bad_timestamp`, `too_large`.
    pub fn as_str(self) -> &'static str {
        match self {
            FormatErrorKind::Json => "json",
            FormatErrorKind::Field => "field",
            FormatErrorKind::UnknownFormat => "unknown_format",
            FormatErrorKind::Dangling => "dangling",
            FormatErrorKind::DuplicateId => "duplicate_id",
            FormatErrorKind::Cycle => "cycle",
            FormatErrorKind::BadTimestamp => "bad_timestamp",
            FormatErrorKind::TooLarge => "too_large",
        }
    }
}

/// A load option a hint may suggest; each host spells it its own way (`{lenient: true}` in
/// JavaScript, `lenient=True` in Python, `--max-bytes 700M` on the command line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadOption {
    /// Keep what is valid and list the problems.
    Lenient,
    /// Name the format instead of detecting it (smartcomment, otlp or langfuse).
    Format,
    /// The largest file, raised to this many bytes (a round size that holds the file:
    /// [`super::limits::limit_for`]).
    MaxBytes(u64),
}

impl FormatError {
    /// The error's kind.
    pub fn kind(&self) -> FormatErrorKind {
        match self {
            FormatError::Json { .. } => FormatErrorKind::Json,
            FormatError::Field { .. } => FormatErrorKind::Field,
            FormatError::Unknown { .. } => FormatErrorKind::UnknownFormat,
            FormatError::Dangling { .. } => FormatErrorKind::Dangling,
            FormatError::DuplicateId { .. } => FormatErrorKind::DuplicateId,
            FormatError::Cycle { .. } => FormatErrorKind::Cycle,
            FormatError::BadTimestamp { .. } => FormatErrorKind::BadTimestamp,
            FormatError::TooLarge { .. } => FormatErrorKind::TooLarge,
        }
    }

    /// The JSON path into the file, when the error has a non-empty one.
    pub fn path(&self) -> Option<&str> {
        match self {
            FormatError::Field { path, .. }
            | FormatError::Dangling { path, .. }
            | FormatError::DuplicateId { path, .. }
            | FormatError::Cycle { path, .. }
            | FormatError::BadTimestamp { path, .. } => {
                Some(path.as_str()).filter(|p| !p.is_empty())
            }
            FormatError::Json { .. }
            | FormatError::Unknown { .. }
            | FormatError::TooLarge { .. } => None,
        }
    }

    /// 1-based line and column of bad JSON.
    pub fn line_column(&self) -> Option<(usize, usize)> {
        match self {
            FormatError::Json { line, column, .. } => Some((*line, *column)),
            _ => None,
        }
    }

    /// What to do about it, one sentence; `spell` writes a load option as the host takes it.
    pub fn hint(&self, spell: impl Fn(LoadOption) -> String) -> String {
        match self.kind() {
            FormatErrorKind::Json => "the file may be truncated or not JSON; export it again".into(),
            FormatErrorKind::Field => format!(
                "fix the field at this path, or load with {} to keep what is valid",
                spell(LoadOption::Lenient)
            ),
            FormatErrorKind::UnknownFormat => format!(
                "pass {} if the detection is wrong",
                spell(LoadOption::Format)
            ),
            FormatErrorKind::Dangling => format!(
                "every reference must name a record of the same file; load with {} to drop it",
                spell(LoadOption::Lenient)
            ),
            FormatErrorKind::DuplicateId => {
                "ids must be unique: were two traces concatenated?".into()
            }
            FormatErrorKind::Cycle => format!(
                "an execution graph flows one way; load with {} to cut the cycle",
                spell(LoadOption::Lenient)
            ),
            FormatErrorKind::BadTimestamp => "write `YYYY-MM-DD HH:MM:SS.mmm` (smartcomment), unix nanoseconds (OTLP) or ISO 8601 (Langfuse)".into(),
            FormatErrorKind::TooLarge => {
                let size = match self {
                    FormatError::TooLarge { size_bytes, .. } => *size_bytes,
                    _ => 0,
                };
                // The same words in every host but its setting's name.
                format!(
                    "raise the limit with {}, or split the trace into one file per conversation",
                    spell(LoadOption::MaxBytes(super::size::limit_for(size)))
                )
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_path_and_hint_come_from_the_error() {
        let e = FormatError::Dangling {
            path: "data.edges[3]".into(),
            id: "n9".into(),
            kind: "node".into(),
        };
        assert_eq!(e.kind().as_str(), "dangling");
        assert_eq!(e.path(), Some("data.edges[3]"));
        let hint = e.hint(|o| format!("<{o:?}>"));
        assert!(hint.contains("<Lenient>"), "{hint}");
        let json = FormatError::Json {
            line: 2,
            column: 5,
            message: "eof".into(),
        };
        assert_eq!((json.path(), json.line_column()), (None, Some((2, 5))));
        let unknown = FormatError::Unknown { reason: "x".into() };
        assert_eq!(unknown.kind().as_str(), "unknown_format");
        assert!(unknown.hint(|o| format!("<{o:?}>")).contains("<Format>"));
    }

    #[test]
    fn too_large_says_both_sizes_and_suggests_a_limit_that_holds_the_file() {
        let e = FormatError::TooLarge {
            size_bytes: 684_000_000,
            limit_bytes: 512 * 1024 * 1024,
        };
        assert_eq!(
            e.to_string(),
            "the file is 652.3 MiB (684000000 bytes); the limit is 512 MiB."
        );
        assert_eq!(e.kind().as_str(), "too_large");
        let hint = e.hint(|o| format!("<{o:?}>"));
        assert_eq!(
            hint,
            format!(
                "raise the limit with <MaxBytes({})>, or split the trace into one file per conversation",
                700 * 1024 * 1024
            )
        );
    }
}
