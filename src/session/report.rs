//! An error as every host shows it: a one-word kind, the message, where it happened and what
//! to do. The JS module and the Python package raise it with their own spelling of options.

use super::SessionError;
use crate::format::{FormatError, LoadOption};
use crate::model::RuleError;

/// How a host's caller writes what an error's hint names: its load options, its failure-rule
/// argument, and its hints for a bad argument, an unknown id, provider settings and an LLM
/// method without a provider.
#[derive(Debug, Clone, Copy)]
pub struct Spelling {
    /// The lenient option set (`lenient=True`, `{lenient: true}`).
    pub lenient: &'static str,
    /// The format option, with its values.
    pub format: &'static str,
    /// The largest-file option set to a size in bytes.
    pub max_bytes: fn(u64) -> String,
    /// The argument that takes failure rules (`failed_if`, `failedIf`).
    pub rules: &'static str,
    pub argument_hint: &'static str,
    pub not_found_hint: &'static str,
    pub provider_hint: &'static str,
    pub needs_llm_hint: &'static str,
}

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

    /// A session error as the host of `spelling` raises it.
    pub fn session(e: &SessionError, spelling: &Spelling) -> Self {
        match e {
            SessionError::Format { error, .. } | SessionError::Bundle { error, .. } => {
                Self::spelt(error, spelling)
            }
            SessionError::Detect { error, .. } => {
                Self::spelt(&FormatError::from(error.clone()), spelling)
            }
            SessionError::Rule { error, .. } => Self::rule(error, spelling.rules),
            SessionError::NoTrace(_)
            | SessionError::NoOp { .. }
            | SessionError::NoQuestion { .. }
            | SessionError::NoCase { .. } => {
                Self::new("not_found", e.to_string(), spelling.not_found_hint)
            }
            SessionError::Argument(_) | SessionError::Unfitting { .. } => {
                Self::new("argument", e.to_string(), spelling.argument_hint)
            }
            SessionError::NeedsLlm(_) => {
                Self::new("argument", e.to_string(), spelling.needs_llm_hint)
            }
            SessionError::Provider(_) => {
                Self::new("provider", e.to_string(), spelling.provider_hint)
            }
        }
    }

    /// A file of `size_bytes` refused before it is read: over the largest file, `limit_bytes`.
    pub fn too_large(size_bytes: u64, limit_bytes: u64, s: &Spelling) -> Self {
        Self::spelt(
            &FormatError::TooLarge {
                size_bytes,
                limit_bytes,
            },
            s,
        )
    }

    /// A file that does not load, its hint in the host's spelling.
    pub fn spelt(e: &FormatError, s: &Spelling) -> Self {
        Self::format(e, |option| match option {
            LoadOption::Lenient => s.lenient.to_owned(),
            LoadOption::Format => s.format.to_owned(),
            LoadOption::MaxBytes(n) => (s.max_bytes)(n),
        })
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
