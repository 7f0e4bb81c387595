//! An error as every host shows it: a one-word kind, the message, where it happened and what
//! to do. The JS module and the Python package raise it with their own spelling of options.

use crate::format::{FormatError, LoadOption};
use crate::model::RuleError;

/// What a host raises: `kind` (`json`, `field`, `unknown_format`, `dangling`, `duplicate_id`,
/// `cycle`, `bad_timestamp`, `too_large`, `rule`, or a host's own: `argument`, `not_found`,
/// `regex`, `attribution`, `provider`, `optimize`, `cancelled`), the message, a JSON path or
/// a 1-based line and column, and a hint saying what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorReport {
    pub kind: &'static str,
    pub message: String,
    pub path: Option<String>,
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub hint: String,
}

impl ErrorReport {
    /// An error of `kind` with `message` and `hint`, at no particular place.
    pub fn new(kind: &'static str, message: impl Into<String>, hint: impl Into<String>) -> Self {
        ErrorReport {
            kind,
            message: message.into(),
            path: None,
            line: None,
            column: None,
            hint: hint.into(),
        }
    }

    /// The same error at `path` (ignored when empty).
    #[must_use]
    pub fn at(mut self, path: &str) -> Self {
        if !path.is_empty() {
            self.path = Some(path.to_owned());
        }
        self
    }

    /// A file that does not load; `spell` writes a load option as the host's caller types it.
    pub fn format(e: &FormatError, spell: impl Fn(LoadOption) -> String) -> Self {
        let (line, column) = e.line_column().unzip();
        ErrorReport {
            kind: e.kind().as_str(),
            message: e.to_string(),
            path: e.path().map(str::to_owned),
            line,
            column,
            hint: e.hint(spell),
        }
    }

    /// A failure rule that does not parse, given in the host's argument `arg`.
    pub fn rule(e: &RuleError, arg: &str) -> Self {
        Self::new(
            "rule",
            e.to_string(),
            "a rule reads `span=NAME output~REGEX` (or `op=NAME output~REGEX`, or `output~REGEX`)",
        )
        .at(&format!("{arg}[{:?}]@{}", e.rule, e.at + 1))
    }
}
