//! Where a failed question sits in the trace, for joining verdicts to a user's own tables: its
//! id and text, its session and, for span-based traces, the trace and span that hold it.

use serde::Serialize;
use serde_json::Value;

use super::{FailureCase, Trace};

/// A case's question as a user finds it again: the variable id (the case id), the text, the
/// session, and the OTLP / Langfuse trace and span ids when the trace came from spans.
#[cfg_attr(feature = "ts", derive(tsify_next::Tsify))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QuestionRef {
    pub id: String,
    pub text: String,
    pub session_id: String,
    /// The span the question is an output of or, for a scope's input (a span per question),
    /// the parent span of its first reader.
    pub span_id: Option<String>,
    pub trace_id: Option<String>,
}

/// The [`QuestionRef`] of `case` in `t` (`None` fields where the trace does not say).
pub fn question_ref(t: &Trace, case: &FailureCase) -> QuestionRef {
    let var = t.var_by_id(&case.query_id);
    let meta = |op: super::OpIx, key: &str| match t.op(op).metadata.get(key) {
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        _ => None,
    };
    let (span_id, trace_id) = var
        .and_then(|v| {
            let flow = &t.flow;
            if let Some(&p) = flow.producers[v.get()].first() {
                return Some((meta(p, "span_id"), meta(p, "trace_id")));
            }
            let &reader = flow.consumers[v.get()].first()?;
            Some((meta(reader, "parent_span_id"), meta(reader, "trace_id")))
        })
        .unwrap_or_default();
    QuestionRef {
        id: case.query_id.clone(),
        text: case.query.clone(),
        session_id: var.map(|v| t.var(v).session_id.clone()).unwrap_or_default(),
        span_id,
        trace_id,
    }
}
