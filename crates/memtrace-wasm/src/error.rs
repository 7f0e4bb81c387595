//! Errors thrown to JavaScript: an `Error` named `MemtraceError` with `kind`, where it happened
//! (`path`, or `line` and `column`), and a `hint` saying what to do.

use memtrace::algo::AlgoError;
use memtrace::format::{FormatError, LoadOption};
use memtrace::model::{GraphError, RuleError};
use wasm_bindgen::JsValue;

/// An error of the module, before it becomes a JavaScript `MemtraceError`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemtraceError {
    /// What went wrong, one word: `json`, `field`, `unknown_format`, `dangling`, `duplicate_id`,
    /// `cycle`, `bad_timestamp`, `too_large`, `argument`, `not_found`, `rule`, `regex`,
    /// `attribution`, `provider`, `optimize`, `cancelled`.
    pub kind: &'static str,
    pub message: String,
    /// A JSON path into the file, when the error has one.
    pub path: Option<String>,
    /// 1-based line and column of bad JSON.
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub hint: String,
}

impl MemtraceError {
    /// An error of `kind` with `message` and `hint`, at no particular place.
    pub fn new(kind: &'static str, message: impl Into<String>, hint: impl Into<String>) -> Self {
        MemtraceError {
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
            "check the argument against the TypeScript types in memtrace_wasm.d.ts",
        )
    }

    /// An id the trace lacks.
    pub fn not_found(what: &str, id: &str) -> Self {
        Self::new(
            "not_found",
            format!("no {what} {id:?} in this trace"),
            "ids are a variable's `full_node_id`, an op's `op_id` or a case's `query_id`; \
             `cases()` and `search()` list them",
        )
    }

    fn at(mut self, path: &str) -> Self {
        if !path.is_empty() {
            self.path = Some(path.to_owned());
        }
        self
    }
}

impl From<FormatError> for MemtraceError {
    fn from(e: FormatError) -> Self {
        let hint = e.hint(|option| match option {
            LoadOption::Lenient => "{lenient: true}".to_owned(),
            LoadOption::Format => "{format: \"smartcomment\" | \"otlp\" | \"langfuse\"}".to_owned(),
        });
        let (line, column) = e.line_column().unzip();
        MemtraceError {
            kind: e.kind().as_str(),
            message: e.to_string(),
            path: e.path().map(str::to_owned),
            line,
            column,
            hint,
        }
    }
}

impl From<GraphError> for MemtraceError {
    fn from(e: GraphError) -> Self {
        FormatError::from(e).into()
    }
}

impl From<memtrace::Error> for MemtraceError {
    fn from(e: memtrace::Error) -> Self {
        match e {
            memtrace::Error::Format(f) => f.into(),
            memtrace::Error::Graph(g) => g.into(),
        }
    }
}

impl From<RuleError> for MemtraceError {
    fn from(e: RuleError) -> Self {
        Self::new(
            "rule",
            e.to_string(),
            "a rule reads `span=NAME output~REGEX` (or `op=NAME output~REGEX`, or `output~REGEX`)",
        )
        .at(&format!("failedIf[{:?}]@{}", e.rule, e.at + 1))
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
