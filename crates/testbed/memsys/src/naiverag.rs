//! NaiveRAG, recorded as MemBase records its `NaiveRAGLayer` (deferred message buffer): every
//! message enters the `message-buffer` through a `memory_system.message_buffer_update` op
//! (category `update`); when the next message would pass the token budget, the buffered
//! messages are joined into a document (`temporary_variable`) and a `memory_system.add` op
//! (category `update`) stores it as a memory unit `memory-unit-<id>` with `{content, id}`. No
//! LLM reads the messages: there is no extraction op, and units are never updated or deleted.
//! Per question, `memory_system.retrieve` returns the top-k units by similarity.
//!
//! Faults: an [`Fault::Extraction`] corrupts (garble) or omits the answer's messages in the
//! unit the `memory_system.add` op stores — the information never enters memory correctly, an
//! ExtractionError although the op's category is `update`. Retrieval and response faults work
//! as for every system. Update and deletion faults cannot happen: no op rewrites a unit.

use serde_json::{json, Value};

use memtrace_record::{OpSpec, Recorder, Render, Scope, Var, VarSpec};

use super::fault::{garble, holds, holds_whole, Fault};
use super::locomo::{Conversation, Turn};
use super::record::{
    buffer_var, construction_session, finalization_session, message_var_as, role_of, turn_pairs,
    unit_id,
};
use super::search::Search;
use super::store::Unit;
use super::{Config, Run};

/// Tokens of a text, counted as MemBase's tokenizer would roughly: 4 characters a token.
fn tokens(text: &str) -> usize {
    text.len().div_ceil(4)
}

/// One buffered message: its formatted text and its message pair.
#[derive(Debug, Clone)]
struct Buffered {
    text: String,
    pair: usize,
    timestamp: String,
}

struct Builder<'a> {
    conv: &'a Conversation,
    cfg: &'a Config,
    faults: &'a [Fault],
    buffer: Vec<Buffered>,
    chunks: usize,
    /// Per fault: its label is on a chunk that held the whole answer.
    whole: Vec<bool>,
}

fn buffer_value(buffer: &[Buffered]) -> Value {
    let msgs: Vec<&str> = buffer.iter().map(|b| b.text.as_str()).collect();
    let total: usize = buffer.iter().map(|b| tokens(&b.text)).sum();
    json!({"message_buffer": msgs, "buffer_total_tokens": total})
}

impl Builder<'_> {
    /// The `message-buffer` variable holding the current buffer (a new version only when the
    /// value changed).
    fn snapshot(&self, scope: &Scope) -> Var {
        buffer_var(scope, buffer_value(&self.buffer))
    }

    /// Stores `chunk` as a new memory unit, made from `doc_var` by a `memory_system.add` op,
    /// with any extraction fault on it applied.
    fn add(&mut self, scope: &Scope, chunk: &[Buffered], doc_var: &Var, run: &mut Run) {
        let op = scope.op(
            OpSpec::new("memory_system.add", "update")
                .comment("The buffered document is embedded into a memory unit. The memory unit is added into the memory store.")
                .meta("embedding_model", json!("bm25-lexical")),
        );
        let mut texts: Vec<String> = chunk.iter().map(|b| b.text.clone()).collect();
        let pairs: Vec<usize> = chunk.iter().map(|b| b.pair).collect();
        for (k, f) in self.faults.iter().enumerate() {
            let Some((pair, answer, garbled)) = f.extraction_at() else {
                continue;
            };
            let joined = texts.join("\n");
            if !pairs.contains(&pair) || !holds(&joined, answer) {
                continue;
            }
            let whole = holds_whole(&joined, answer);
            let kept: Vec<String> = texts
                .iter()
                .filter(|t| !holds(t, answer))
                .cloned()
                .collect();
            texts = if garbled || kept.len() == texts.len() || kept.is_empty() {
                texts.iter().map(|t| garble(t, answer)).collect()
            } else {
                kept
            };
            // A pair split over two chunks is corrupted in both: the first that held the whole
            // answer is the decisive fault (one that only shares a word with it, "a great
            // alternative" for "The Great Gatsby", is not), else the first.
            let had_whole = self.whole.get(k).copied().unwrap_or(false);
            if run.applied[k].is_none() || (whole && !had_whole) {
                run.applied[k] = Some(op.id().to_owned());
                if let Some(w) = self.whole.get_mut(k) {
                    *w = whole;
                }
            }
        }
        let content = texts.join("\n");
        let id = unit_id(self.cfg.seed, self.chunks, &content);
        self.chunks += 1;
        let var = op.var(
            VarSpec::named(
                &format!("memory-unit-{id}"),
                json!({"content": content, "id": id}),
            )
            .render(Render::Json)
            .category("memory_entry")
            .comment("A memory unit in the memory system."),
        );
        let doc_text: Vec<&str> = chunk.iter().map(|b| b.text.as_str()).collect();
        run.spans
            .embedding("embed_documents", "bm25-lexical", &doc_text.join("\n"));
        let span = run.spans.write(
            "InMemoryStore.put",
            &json!({"namespace": ["memories", self.conv.user_id()], "key": id, "value": {"content": content}}),
            &[json!({"id": id, "memory": content, "event": "ADD"})],
        );
        run.spans.tie(op.id(), &span);
        op.io(
            &[doc_var],
            &[&var],
            "The buffered document is embedded into a memory unit and added into the memory store.",
        );
        let timestamp = chunk
            .last()
            .map(|b| b.timestamp.clone())
            .unwrap_or_default();
        run.store.add(Unit {
            id,
            text: content,
            timestamp,
            deleted: false,
            var,
        });
    }

    /// One message through the deferred buffer.
    fn message(&mut self, scope: &Scope, t: &Turn, pair: usize, timestamp: &str, run: &mut Run) {
        let role = role_of(self.conv, t);
        let text = format!(
            "Speaker {} (role: {role}) says: {}\nTimestamp: {timestamp}",
            t.speaker, t.text
        );
        let raw = message_var_as(
            scope,
            self.conv,
            t,
            timestamp,
            &text,
            "An input message fed into the memory pipeline. It is buffered and stored as part of a document.",
        );
        let before = self.snapshot(scope);
        let op = scope.op(
            OpSpec::new("memory_system.message_buffer_update", "update")
                .comment("Merge a new input message into the current message buffer and, when the buffer is ready, emit a memory unit that aggregates recent messages for the memory system to store.")
                .meta("deferred", json!(true))
                .meta("max_tokens", json!(self.cfg.chunk_tokens))
                .meta("num_overlap_msgs", json!(0)),
        );
        let total: usize = self.buffer.iter().map(|b| tokens(&b.text)).sum();
        let chunk = if !self.buffer.is_empty() && total + tokens(&text) > self.cfg.chunk_tokens {
            std::mem::take(&mut self.buffer)
        } else {
            Vec::new()
        };
        self.buffer.push(Buffered {
            text,
            pair,
            timestamp: timestamp.to_owned(),
        });
        op.mutate(
            &before,
            &buffer_value(&self.buffer),
            Render::Json,
            &[&raw],
            "Add a new input message into the current message buffer; a full buffer is emitted as a document first.",
        );
        if chunk.is_empty() {
            return;
        }
        let doc = Self::document(&op, &chunk, &[&raw, &before]);
        self.add(scope, &chunk, &doc, run);
    }

    /// The buffered document of `chunk`, made in `op` from `inputs`.
    fn document(op: &Scope, chunk: &[Buffered], inputs: &[&Var]) -> Var {
        let doc_text = chunk
            .iter()
            .map(|b| b.text.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        let doc = op.var(
            VarSpec::content("temporary_variable", json!(doc_text))
                .category("temporary_variable")
                .comment("A temporary variable that holds the buffered document emitted from the message buffer. It will serve as the content of a memory unit."),
        );
        for i in inputs {
            op.link_as(
                i,
                &doc,
                "extraction",
                "The buffered messages are joined into a buffered document.",
            );
        }
        doc
    }

    /// MemBase's `flush`: the remaining buffer becomes a last unit, then the buffer is cleared.
    fn flush(&mut self, scope: &Scope, run: &mut Run) {
        if self.buffer.is_empty() {
            return;
        }
        let before = self.snapshot(scope);
        let op = scope.op(
            OpSpec::new("memory_system.message_buffer_update", "update")
                .comment("Finalize the current message buffer at the end of the conversation: the remaining messages form a last memory unit and the buffer is cleared."),
        );
        let chunk = std::mem::take(&mut self.buffer);
        let doc = Self::document(&op, &chunk, &[&before]);
        self.add(scope, &chunk, &doc, run);
        op.mutate(&before, &buffer_value(&self.buffer), Render::Json, &[], "After the remaining messages are flushed into a buffered document, the message buffer is cleared.");
    }
}

/// Builds NaiveRAG's memory of `conv` with `faults` injected.
pub fn construct(
    conv: &Conversation,
    cfg: &Config,
    faults: &[Fault],
    rec: &Recorder,
    run: &mut Run,
) {
    let mut b = Builder {
        conv,
        cfg,
        faults,
        buffer: Vec::new(),
        chunks: 0,
        whole: vec![false; faults.len()],
    };
    for (session, pairs) in conv.sessions.iter().zip(turn_pairs(conv)) {
        let scope = construction_session(rec, conv, session);
        for (t, pair) in session.turns.iter().zip(pairs) {
            let msg = json!({"role": role_of(conv, t), "name": t.speaker, "content": t.text, "timestamp": session.timestamp});
            run.spans.open(
                "NaiveRAGLayer.add_message",
                &json!({ "messages": [msg] }),
                &Value::Null,
            );
            b.message(&scope, t, pair, &session.timestamp, run);
        }
    }
    let fin = finalization_session(rec);
    run.spans
        .open("NaiveRAGLayer.flush", &Value::Null, &Value::Null);
    b.flush(&fin, run);
    run.spans.close(None);
}

/// NaiveRAG's `memory_system.retrieve`: the top-k units by similarity to the question.
pub(super) fn retrieve(s: &Search, run: &mut Run) -> Vec<Unit> {
    let op = s
        .scope
        .op(OpSpec::new("memory_system.retrieve", "retrieval")
            .comment(&format!(
                "A task query searches the memory store for top-{} relevant memories.",
                s.cfg.top_k
            ))
            .meta("top_k", json!(s.cfg.top_k))
            .meta("embedding_model", json!("bm25-lexical")));
    let hits = s.nearest_top_k(run, op.id());
    s.link_hits(run, &op, "InMemoryStore.search", hits)
}
