//! Errors thrown to JavaScript: an `Error` named `MemtraceError` with `kind`, where it happened
//! (`path`, or `line` and `column`), and a `hint` saying what to do.

use memtrace::algo::AlgoError;
use memtrace::format::FormatError;
use memtrace::model::GraphError;
use memtrace::session::{ErrorReport, SessionError, Spelling};
use wasm_bindgen::JsValue;

/// An error of the module, before it becomes a JavaScript `MemtraceError`: the core's
/// [`ErrorReport`] (kind, message, path or line and column, hint).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemtraceError(pub ErrorReport);

impl std::ops::Deref for MemtraceError {
    type Target = ErrorReport;
    fn deref(&self) -> &ErrorReport {
        &self.0
    }
}

impl MemtraceError {
    /// An error of `kind` with `message` and `hint`, at no particular place.
    pub fn new(kind: &'static str, message: impl Into<String>, hint: impl Into<String>) -> Self {
        MemtraceError(ErrorReport::new(kind, message, hint))
    }

    /// A bad argument from the caller.
    pub fn argument(message: impl Into<String>) -> Self {
        Self::new("argument", message, ARGUMENT_HINT)
    }

    /// An id the trace lacks.
    pub fn not_found(what: &str, id: &str) -> Self {
        Self::new(
            "not_found",
            format!("no {what} {id:?} in this trace"),
            NOT_FOUND_HINT,
        )
    }
}

/// How JavaScript's caller writes what the hints name.
const SPELLING: Spelling = Spelling {
    lenient: "{lenient: true}",
    format: "{format: \"smartcomment\" | \"otlp\" | \"langfuse\"}",
    max_bytes: max_bytes_option,
    rules: "failedIf",
    argument_hint: ARGUMENT_HINT,
    not_found_hint: NOT_FOUND_HINT,
    provider_hint: "fix provider.baseUrl / provider.model",
    needs_llm_hint: "pass options.provider {kind, baseUrl, model, apiKey}, or use the method \
                     infoflow (no LLM)",
};

const ARGUMENT_HINT: &str = "check the argument against the TypeScript types in memtrace_wasm.d.ts";
const NOT_FOUND_HINT: &str = "ids are a variable's `full_node_id`, an op's `op_id` or a case's \
                              `query_id`; `cases()` and `search()` list them";

fn max_bytes_option(n: u64) -> String {
    format!("{{maxBytes: {}}}", bytes_expression(n))
}

impl From<SessionError> for MemtraceError {
    fn from(e: SessionError) -> Self {
        MemtraceError(ErrorReport::session(&e, &SPELLING))
    }
}

impl From<FormatError> for MemtraceError {
    fn from(e: FormatError) -> Self {
        MemtraceError(ErrorReport::spelt(&e, &SPELLING))
    }
}

/// `n` bytes as a JavaScript expression a reader takes in at a glance: `700 * 2 ** 20`,
/// `2 * 2 ** 30`, else the number.
fn bytes_expression(n: u64) -> String {
    const MIB: u64 = 1 << 20;
    match n {
        n if n >= 1 << 30 && n % (1 << 30) == 0 => format!("{} * 2 ** 30", n >> 30),
        n if n % MIB == 0 => format!("{} * 2 ** 20", n / MIB),
        n => n.to_string(),
    }
}

impl From<GraphError> for MemtraceError {
    fn from(e: GraphError) -> Self {
        FormatError::from(e).into()
    }
}

impl From<AlgoError> for MemtraceError {
    fn from(e: AlgoError) -> Self {
        let message = e.to_string();
        match e {
            AlgoError::UnknownVar { id } => Self::not_found("variable", &id),
            AlgoError::UnknownOp { id } => Self::not_found("operation", &id),
            AlgoError::Regex { .. } => Self::new(
                "regex",
                message,
                "fix the pattern (Rust regex syntax), or search without {regex: true}",
            ),
            _ => Self::new("argument", message, "check the ids and ranges passed in"),
        }
    }
}

impl From<serde_wasm_bindgen::Error> for MemtraceError {
    fn from(e: serde_wasm_bindgen::Error) -> Self {
        Self::argument(e.to_string())
    }
}

fn set(obj: &JsValue, key: &str, value: &JsValue) {
    // Setting a property on a fresh Error object cannot fail; nothing to report if it did.
    let _ = js_sys::Reflect::set(obj, &JsValue::from_str(key), value);
}

impl From<MemtraceError> for JsValue {
    fn from(e: MemtraceError) -> JsValue {
        let err = js_sys::Error::new(&e.message);
        err.set_name("MemtraceError");
        let v = JsValue::from(err);
        set(&v, "kind", &JsValue::from_str(e.kind));
        set(&v, "hint", &JsValue::from_str(&e.hint));
        if let Some(p) = &e.path {
            set(&v, "path", &JsValue::from_str(p));
        }
        if let (Some(l), Some(c)) = (e.line, e.column) {
            set(&v, "line", &JsValue::from(l as f64));
            set(&v, "column", &JsValue::from(c as f64));
        }
        v
    }
}

/// A result thrown to JavaScript as a `MemtraceError`.
pub type JsResult<T> = Result<T, JsValue>;
