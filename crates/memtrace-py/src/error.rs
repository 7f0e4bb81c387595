//! Errors raised to Python: `memtrace.MemtraceError` with `kind` (the JavaScript module's
//! `MemtraceError` kinds: `json`, `field`, `unknown_format`, `dangling`, `duplicate_id`, `cycle`,
//! `bad_timestamp`, `too_large`, `argument`, `not_found`, `rule`, `regex`, `attribution`,
//! `provider`, `optimize`, `cancelled`), where it happened (`path`, or `line` and `column`) and
//! a `hint` saying what to do.

use memtrace::format::{FormatError, LoadOption};
use memtrace::model::{GraphError, RuleError};
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

/// An error of the module, before it becomes a Python exception.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub kind: &'static str,
    pub message: String,
    pub path: Option<String>,
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub hint: String,
}

impl Error {
    pub fn new(kind: &'static str, message: impl Into<String>, hint: impl Into<String>) -> Self {
        Error {
            kind,
            message: message.into(),
            path: None,
            line: None,
            column: None,
            hint: hint.into(),
        }
    }

    /// A bad argument from the caller.
    pub fn argument(message: impl Into<String>) -> Self {
        Self::new(
            "argument",
            message,
            "check the argument against help(memtrace.Trace) and the stubs",
        )
    }

    /// An id the trace lacks.
    pub fn not_found(what: &str, id: &str) -> Self {
        Self::new(
            "not_found",
            format!("no {what} {id:?} in this trace"),
            "a case's id is its `query_id`; Trace.cases() lists them",
        )
    }

    fn at(mut self, path: &str) -> Self {
        if !path.is_empty() {
            self.path = Some(path.to_owned());
        }
        self
    }
}

impl From<FormatError> for Error {
    fn from(e: FormatError) -> Self {
        let hint = e.hint(|option| match option {
            LoadOption::Lenient => "lenient=True".to_owned(),
            LoadOption::Format => "format=\"smartcomment\" | \"otlp\" | \"langfuse\"".to_owned(),
        });
        let (line, column) = e.line_column().unzip();
        Error {
            kind: e.kind().as_str(),
            message: e.to_string(),
            path: e.path().map(str::to_owned),
            line,
            column,
            hint,
        }
    }
}

impl From<GraphError> for Error {
    fn from(e: GraphError) -> Self {
        FormatError::from(e).into()
    }
}

impl From<RuleError> for Error {
    fn from(e: RuleError) -> Self {
        Self::new(
            "rule",
            e.to_string(),
            "a rule reads `span=NAME output~REGEX` (or `op=NAME output~REGEX`, or `output~REGEX`)",
        )
        .at(&format!("failed_if[{:?}]@{}", e.rule, e.at + 1))
    }
}

impl From<serde_json::Error> for Error {
    fn from(e: serde_json::Error) -> Self {
        Self::new("argument", e.to_string(), "report this as a bug")
    }
}

impl From<Error> for PyErr {
    /// A `memtrace.MemtraceError` (defined in `memtrace/_errors.py`) with the error's fields.
    fn from(e: Error) -> PyErr {
        Python::with_gil(|py| {
            let args = (e.kind, e.message.clone(), e.hint, e.path, e.line, e.column);
            let made = py
                .import("memtrace._errors")
                .and_then(|m| m.getattr("MemtraceError"))
                .and_then(|class| class.call1(args));
            match made {
                Ok(err) => PyErr::from_value(err),
                Err(_) => PyException::new_err(e.message),
            }
        })
    }
}
