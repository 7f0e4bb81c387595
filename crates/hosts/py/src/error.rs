//! Errors raised to Python: `memtrace.MemtraceError` with `kind` (the JavaScript module's
//! `MemtraceError` kinds: `json`, `field`, `unknown_format`, `dangling`, `duplicate_id`, `cycle`,
//! `bad_timestamp`, `too_large`, `argument`, `not_found`, `rule`, `regex`, `attribution`,
//! `provider`, `optimize`, `cancelled`), where it happened (`path`, or `line` and `column`) and
//! a `hint` saying what to do.

use memtrace::session::{ErrorReport, SessionError, Spelling};
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

/// An error of the module, before it becomes a Python exception: the core's [`ErrorReport`]
/// (kind, message, path or line and column, hint).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(pub ErrorReport);

impl std::ops::Deref for Error {
    type Target = ErrorReport;
    fn deref(&self) -> &ErrorReport {
        &self.0
    }
}

impl Error {
    pub fn new(kind: &'static str, message: impl Into<String>, hint: impl Into<String>) -> Self {
        Error(ErrorReport::new(kind, message, hint))
    }

    /// A bad argument from the caller.
    pub fn argument(message: impl Into<String>) -> Self {
        Self::new("argument", message, ARGUMENT_HINT)
    }

    /// A session error, its hint in Python's spelling.
    #[allow(clippy::needless_pass_by_value)] // used as `map_err(Error::session)`
    pub fn session(e: SessionError) -> Self {
        Error(ErrorReport::session(&e, &SPELLING))
    }

    /// A file of `size_bytes` over the largest file.
    pub fn too_large(size_bytes: u64, limit_bytes: u64) -> Self {
        Error(ErrorReport::too_large(size_bytes, limit_bytes, &SPELLING))
    }
}

/// How Python's caller writes what the hints name.
const SPELLING: Spelling = Spelling {
    lenient: "lenient=True",
    format: "format=\"smartcomment\" | \"otlp\" | \"langfuse\"",
    max_bytes: max_bytes_keyword,
    rules: "failed_if",
    argument_hint: ARGUMENT_HINT,
    not_found_hint: "a case's id is its `query_id`; Trace.cases() lists them",
    provider_hint: "check base_url and model",
    needs_llm_hint: "pass provider=memtrace.Provider(base_url=..., model=..., api_key=...) (any \
                     OpenAI-compatible server), or use method=\"infoflow\" (no LLM)",
};

const ARGUMENT_HINT: &str = "check the argument against help(memtrace.Trace) and the stubs";

fn max_bytes_keyword(n: u64) -> String {
    format!("max_bytes={}", bytes_expression(n))
}

/// `n` bytes as a Python expression a reader takes in at a glance: `700 * 2**20`, `2 * 2**30`,
/// else the number.
fn bytes_expression(n: u64) -> String {
    const MIB: u64 = 1 << 20;
    match n {
        n if n >= 1 << 30 && n % (1 << 30) == 0 => format!("{} * 2**30", n >> 30),
        n if n % MIB == 0 => format!("{} * 2**20", n / MIB),
        n => n.to_string(),
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
            let e = e.0;
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
