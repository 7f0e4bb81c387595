//! Recording helpers the reference systems share: message pairs, MemBase's message, prompt,
//! LLM-response and message-buffer variables, construction sessions, memory-unit ids.

use serde_json::{json, Value};

use memtrace_record::{sha1_hex, OpSpec, Recorder, Render, Scope, SessionSpec, Var, VarSpec};

use super::locomo::{Conversation, Session, Turn};
use super::Run;
use memtrace::provider::{ChatRequest, ChatResponse};

/// The message pairs of a conversation: `(session index, first turn, last turn exclusive)`,
/// numbered from 0 in order. Faults name their pair by this number.
pub fn pairs(conv: &Conversation) -> Vec<(usize, usize, usize)> {
    let mut out = Vec::new();
    for (si, s) in conv.sessions.iter().enumerate() {
        let mut i = 0;
        while i < s.turns.len() {
            let end = (i + 2).min(s.turns.len());
            out.push((si, i, end));
            i = end;
        }
    }
    out
}

/// The pair holding message `dia_id`.
pub fn pair_of(conv: &Conversation, dia_id: &str) -> Option<usize> {
    pairs(conv).iter().position(|&(si, a, b)| {
        conv.sessions
            .get(si)
            .is_some_and(|s| s.turns[a..b].iter().any(|t| t.dia_id == dia_id))
    })
}

pub(super) fn unit_id(seed: u64, pair: usize, text: &str) -> String {
    let h = sha1_hex(format!("{seed}:{pair}:{text}").as_bytes());
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// MemBase's role of a speaker: the first speaker is the `user`.
pub(super) fn role_of(conv: &Conversation, t: &Turn) -> &'static str {
    if t.speaker == conv.speaker_a {
        "user"
    } else {
        "assistant"
    }
}

/// A recorded input message whose `content` is `content` (each system formats it its way).
pub(super) fn message_var_as(
    scope: &Scope,
    conv: &Conversation,
    t: &Turn,
    timestamp: &str,
    content: &str,
    comment: &str,
) -> Var {
    let role = role_of(conv, t);
    let tag = if role == "user" {
        "speaker_a"
    } else {
        "speaker_b"
    };
    scope.var(
        VarSpec::named(
            &conv.message_name(&t.dia_id),
            json!({"content": content, "name": t.speaker, "role": role, "timestamp": timestamp}),
        )
        .render(Render::Json)
        .category("message")
        .comment(comment)
        .meta("speaker_tag", json!(tag))
        .meta("dia_id", json!(t.dia_id))
        .meta("timestamp", json!(timestamp))
        .meta("speakers", json!(t.speaker)),
    )
}

pub(super) fn prompt_var(
    scope: &Scope,
    name: &str,
    text: &str,
    op_type: &str,
    comment: &str,
) -> Var {
    scope.var(
        VarSpec::named(name, json!(text))
            .category("prompt")
            .comment(comment)
            .meta("op_type", json!(op_type)),
    )
}

pub(super) fn llm_var(op: &Scope, class: &str, value: Value, comment: &str) -> Var {
    op.var(
        VarSpec::content(class, value)
            .category("llm_response")
            .comment(comment),
    )
}

pub(super) fn parse_list(text: &str, key: &str) -> Vec<Value> {
    serde_json::from_str::<Value>(text)
        .ok()
        .and_then(|v| v.get(key).and_then(Value::as_array).cloned())
        .unwrap_or_default()
}

/// Records a deletion decision's LLM call as span `name`: with the model's reply, or, when
/// faults forced deletions (`faulted`), the reply it would have given (`said`). When anything
/// is deleted (`deletes`), opens the op of `spec`, tied to the span and carrying the faults.
#[track_caller]
pub(super) fn deletion_op(
    run: &mut Run,
    scope: &Scope,
    (name, req, resp): (&str, &ChatRequest, &ChatResponse),
    said: &[Value],
    faulted: Vec<usize>,
    deletes: bool,
    spec: OpSpec,
) -> Option<Scope> {
    let reply = if faulted.is_empty() {
        resp.content.clone()
    } else {
        // The fault is the LLM's: its reply is what it would have said.
        json!({ "memory": said }).to_string()
    };
    let span = run.spans.llm(name, req, &reply, &resp.model, resp.usage);
    if !deletes {
        return None;
    }
    let op = scope.op(spec);
    run.spans.tie(op.id(), &span);
    for k in faulted {
        run.applied[k] = Some(op.id().to_owned());
    }
    Some(op)
}

/// The `memory_construction` session of a LoCoMo session, as MemBase opens it.
pub(super) fn construction_session(
    rec: &Recorder,
    conv: &Conversation,
    session: &Session,
) -> Scope {
    rec.session(
        SessionSpec::new("memory_construction")
            .id(&format!("{}-session-{}", conv.user_id(), session.number))
            .comment(&format!(
                "It is the {}th conversational session.",
                session.number
            ))
            .meta("session_date_time", json!(session.date_time)),
    )
}

/// MemBase's finalization session of memory construction (the layer's `flush`).
pub(super) fn finalization_session(rec: &Recorder) -> Scope {
    rec.session(SessionSpec::new("memory_construction").comment(
        "It is the finalization stage of memory construction. This stage ensures all messages have been fully ingested into the memory layer and the internal memory state is consistent.",
    ))
}

/// The `message-buffer` variable holding `value` (a new version only when the value changed).
pub(super) fn buffer_var(scope: &Scope, value: Value) -> Var {
    scope.var(
        VarSpec::named("message-buffer", value)
            .render(Render::Json)
            .category("message_buffer")
            .comment("A message buffer that stores messages not yet processed by the memory system. Its data structure is a list."),
    )
}

/// The message pair of every turn, per session (pairs numbered as [`pairs`] numbers them).
pub(super) fn turn_pairs(conv: &Conversation) -> Vec<Vec<usize>> {
    let mut base = 0;
    conv.sessions
        .iter()
        .map(|s| {
            let v = (0..s.turns.len()).map(|i| base + i / 2).collect();
            base += s.turns.len().div_ceil(2);
            v
        })
        .collect()
}
