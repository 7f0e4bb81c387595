//! Spans → smartcomment records: the bipartite graph of the span-based formats.
//!
//! - every leaf span (and every evaluator) that writes something, or failed, is an **operation**;
//!   spans with children are scopes: a root span becomes a **session**, and the inputs of a
//!   scope become variables its children can read;
//! - every input / output value is a **variable**; an output is always a new version, so each
//!   variable has one producer;
//! - **data flow** is inferred, in time order (a span sees what ended before it started):
//!   an input equal to an earlier value *is* that variable; an input containing an earlier
//!   value (or one of its JSON string leaves, or a memory / document id), at least
//!   `MIN_LINK_CHARS` (8 bytes) long, reads it too; a retrieved document reads the memory unit with its
//!   id; a memory write reads the unit's previous version.
//!
//! Because every edge runs from a variable that existed before the span started to one the span
//! made, the graph is acyclic by construction.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::error::Problems;
use super::inference::Builder;
use super::parts::Parts;
use super::spans::{Imported, Kind, Port, Span, TOOL_RESULT};
use super::time::format_nanos;
use super::FormatError;
use crate::model::{judgement, GraphMeta, SessionRecord, Unset};

/// Builds the records of a trace from its spans; `imported.problems` are passed on.
///
/// # Errors
/// In strict mode: [`FormatError::DuplicateId`] for a span id seen twice,
/// [`FormatError::Dangling`] for a parent id that names no span, [`FormatError::Cycle`] for
/// spans that are each other's ancestors. In lenient mode these are returned as problems:
/// the duplicate is dropped, the dangling or cyclic parent link is cut (the span becomes a root).
///
/// # Complexity
/// O(S log S + T + M) for S spans, T bytes of values and M content matches (Aho-Corasick over
/// all values at least `MIN_LINK_CHARS` (8 bytes) long), plus one edge per (input, output) pair of a span.
pub fn build(imported: Imported, lenient: bool) -> Result<(Parts, Vec<FormatError>), FormatError> {
    let Imported {
        spans,
        meta,
        problems,
    } = imported;
    let mut problems = Problems::new(lenient, problems);
    let (spans, index) = unique(spans, &mut problems)?;
    let mut parent = parents(&spans, &index, &mut problems)?;
    let (root, depth) = tree(&spans, &mut parent, &mut problems)?;
    let mut has_children = vec![false; spans.len()];
    for p in parent.iter().flatten() {
        has_children[*p] = true;
    }
    let is_op: Vec<bool> = spans
        .iter()
        .enumerate()
        .map(|(i, s)| {
            // A chain span that read something but wrote nothing and did not fail (a message
            // buffered for a later chunk) is where values come in,
            // not an op: making its status an output would make it the first reader of them.
            let writes =
                !(s.outputs.is_empty() && s.documents.is_empty() && s.memory_writes.is_empty());
            // A retriever, model or tool call that returned nothing did return: still an op.
            let call = !matches!(s.kind, Kind::Chain | Kind::Agent | Kind::Unknown);
            let failed = s.status.starts_with("ERROR");
            // A model call whose content was not captured (the OTel GenAI instrumentation
            // records no embedding input or vector) still happened: an op with no values, so
            // a verdict can still name it.
            let model = matches!(s.kind, Kind::Llm | Kind::Embedding);
            (writes || ((call || failed) && !s.inputs.is_empty()) || model)
                && (!has_children[i] || s.kind == Kind::Evaluator)
        })
        .collect();

    // A scope that reports a verdict, or a tool call with a result (its children are how the
    // tool did it), is also an op, at its end: what it was called with in, its result out.
    let verdict_scope: Vec<Option<Span>> = spans
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let tool = s.kind == Kind::Tool
                && (!s.outputs.is_empty() || s.metadata.contains_key(TOOL_RESULT));
            (has_children[i] && !is_op[i] && (tool || reports_verdict(s))).then(|| scope_op(s))
        })
        .collect();

    let mut b = Builder::new(&spans, &meta);
    // (time, depth, index, at end): such a scope is an op at its end.
    let mut order: Vec<(u64, u32, usize, bool)> = (0..spans.len())
        .filter(|&i| is_op[i] || !spans[i].inputs.is_empty())
        .map(|i| (spans[i].start_ns, depth[i], i, false))
        .collect();
    order.extend(
        (0..spans.len())
            .filter(|&i| verdict_scope[i].is_some())
            .map(|i| (spans[i].end_ns, depth[i], i, true)),
    );
    order.sort_unstable();
    for (time, _, i, at_end) in order {
        let session = format!("session-{}", spans[root[i]].id);
        b.commit_until(time);
        if let (true, Some(s)) = (at_end, &verdict_scope[i]) {
            // A tool's result holds what its children found; a question scope's result only
            // reports its answer (reading it would make the scope a judge of that answer).
            if s.kind == Kind::Tool {
                b.scope_op(s, &session);
            } else {
                b.op(s, &session);
            }
        } else if is_op[i] {
            b.op(&spans[i], &session);
        } else {
            for port in &spans[i].inputs {
                b.take_in(port, &spans[i], &session);
            }
        }
    }
    let mut parts = b.finish();
    super::turns::mark(&mut parts);
    parts.sessions = sessions(&spans, &root, &parts, &meta);
    parts.meta = meta;
    Ok((parts, problems.into_list()))
}

/// True when a span's output JSON carries a verdict (label, correct or score key), or it has
/// GenAI evaluation results: a question span reporting how its answer was judged.
fn reports_verdict(s: &Span) -> bool {
    s.metadata.contains_key("gen_ai.evaluation.results")
        || s.outputs.iter().any(|p| {
            judgement::json_object_in(&p.text)
                .is_some_and(|j| judgement::verdict_in_json(&j, 0).is_some())
        })
}

/// The op made of a verdict-reporting scope: its inputs and outputs, no memory writes or
/// documents (those repeat its children's), dated at its end: it reports what its children
/// did, after them (dated at its start, it would pass for the first step of the question).
fn scope_op(s: &Span) -> Span {
    let mut op = s.clone();
    op.memory_writes.clear();
    op.documents.clear();
    // A tool's result read as records: its children found them; the caller reads the result.
    if let (true, Some(text)) = (op.outputs.is_empty(), op.metadata.get(TOOL_RESULT)) {
        op.outputs
            .push(Port::new("output", "output", crate::text::text_of(text)));
    }
    op.start_ns = s.end_ns;
    op
}

/// Drops spans whose id was seen before; returns the rest and an index by id.
fn unique(
    spans: Vec<Span>,
    problems: &mut Problems,
) -> Result<(Vec<Span>, HashMap<String, usize>), FormatError> {
    let mut kept: Vec<Span> = Vec::with_capacity(spans.len());
    let mut index: HashMap<String, usize> = HashMap::new();
    for s in spans {
        if let Some(&first) = index.get(&s.id) {
            problems.report(FormatError::DuplicateId {
                path: format!("{}.{}", s.path, s.id_field),
                id: s.id.clone(),
                first: kept[first].path.clone(),
            })?;
            continue;
        }
        index.insert(s.id.clone(), kept.len());
        kept.push(s);
    }
    Ok((kept, index))
}

/// The parent index of each span; a parent id that names no span is reported (and cut).
fn parents(
    spans: &[Span],
    index: &HashMap<String, usize>,
    problems: &mut Problems,
) -> Result<Vec<Option<usize>>, FormatError> {
    let mut parent = Vec::with_capacity(spans.len());
    for s in spans {
        let Some(pid) = &s.parent else {
            parent.push(None);
            continue;
        };
        let p = index.get(pid).copied();
        if p.is_none() {
            problems.report(FormatError::Dangling {
                path: format!("{}.{}", s.path, s.parent_field),
                id: pid.clone(),
                kind: "parent span".into(),
            })?;
        }
        parent.push(p);
    }
    Ok(parent)
}

/// One session per root span that holds records, plus `__none__` when the sentinel is used.
fn sessions(spans: &[Span], root: &[usize], parts: &Parts, meta: &GraphMeta) -> Vec<SessionRecord> {
    let mut used: HashSet<&str> = parts.nodes.iter().map(|v| v.session_id.as_str()).collect();
    used.extend(parts.ops.iter().map(|o| o.session_id.as_str()));
    let record =
        |id: String, name: Option<String>, created_at: String, filename: String| SessionRecord {
            created_at,
            filename,
            lineno: 0,
            session_id: id,
            session_name: name,
            graph_id: meta.graph_id.clone(),
            user_id: meta.user_id.clone(),
            project_id: meta.project_id.clone(),
            comment: String::new(),
            category: String::new(),
            metadata: Value::Object(Map::new()),
            trigger_point: String::new(),
            extra: Map::new(),
            unset: Unset::default(),
        };
    let mut out = Vec::new();
    for (i, s) in spans.iter().enumerate() {
        let id = format!("session-{}", s.id);
        if root[i] == i && used.contains(id.as_str()) {
            let mut r = record(
                id,
                Some(s.name.clone()),
                format_nanos(s.start_ns),
                s.filename.clone(),
            );
            s.kind.category().clone_into(&mut r.category);
            r.metadata = Value::Object(s.metadata.clone());
            out.push(r);
        }
    }
    if used.contains("__none__") {
        let first = parts
            .nodes
            .first()
            .map(|v| v.created_at.clone())
            .unwrap_or_default();
        let mut r = record("__none__".into(), None, first, "<sentinel>".into());
        r.category = "sentinel".into();
        out.push(r);
    }
    out
}

/// Root and depth of every span; a parent link that closes a cycle is reported and cut.
fn tree(
    spans: &[Span],
    parent: &mut [Option<usize>],
    problems: &mut Problems,
) -> Result<(Vec<usize>, Vec<u32>), FormatError> {
    let n = spans.len();
    let (mut root, mut depth, mut state) = (vec![0usize; n], vec![0u32; n], vec![0u8; n]);
    for i in 0..n {
        let mut chain = Vec::new();
        let mut cur = i;
        loop {
            match state[cur] {
                2 => break,
                1 => {
                    let s = &spans[cur];
                    problems.report(FormatError::Cycle {
                        path: format!("{}.{}", s.path, s.parent_field),
                        id: s.id.clone(),
                    })?;
                    parent[cur] = None;
                    (root[cur], depth[cur], state[cur]) = (cur, 0, 2);
                    break;
                }
                _ => {}
            }
            state[cur] = 1;
            chain.push(cur);
            match parent[cur] {
                Some(p) => cur = p,
                None => break,
            }
        }
        for &c in chain.iter().rev() {
            if state[c] == 2 {
                continue;
            }
            (root[c], depth[c]) = parent[c].map_or((c, 0), |p| (root[p], depth[p] + 1));
            state[c] = 2;
        }
    }
    Ok((root, depth))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::spans::Port;
    use crate::model::Trace;

    fn span(
        id: &str,
        parent: Option<&str>,
        (start_ns, end_ns): (u64, u64),
        input: &str,
        output: &str,
    ) -> Span {
        let port = |class: &str, text: &str| {
            (!text.is_empty()).then(|| Port::new(class, class, text.to_owned()))
        };
        Span {
            id: id.into(),
            trace_id: "t".into(),
            parent: parent.map(Into::into),
            name: id.into(),
            kind: Kind::Chain,
            start_ns,
            end_ns,
            inputs: port("input", input).into_iter().collect(),
            outputs: port("output", output).into_iter().collect(),
            documents: Vec::new(),
            memory_writes: Vec::new(),
            metadata: Map::new(),
            filename: "test".into(),
            path: format!("spans[{id}]"),
            id_field: "spanId",
            parent_field: "parentSpanId",
            status: "OK".into(),
        }
    }

    fn trace(spans: Vec<Span>) -> Trace {
        let (parts, problems) = build(
            Imported {
                spans,
                ..Imported::default()
            },
            false,
        )
        .unwrap();
        assert!(problems.is_empty());
        let mut t = Trace {
            vars: parts.nodes,
            ops: parts.ops,
            edges: parts.edges,
            sessions: parts.sessions,
            ..Trace::default()
        };
        for v in &mut t.vars {
            v.fill_computed();
        }
        t.reindex().unwrap();
        t
    }

    fn reads(t: &Trace, reader: &str, writer: &str) -> bool {
        let (r, w) = (
            t.op_by_id(&format!("op-{reader}")).unwrap(),
            t.op_by_id(&format!("op-{writer}")).unwrap(),
        );
        t.flow.op_inputs[r.get()]
            .iter()
            .any(|v| t.flow.producers[v.get()].contains(&w))
    }

    #[test]
    fn a_span_reads_only_what_ended_before_it_started() {
        let t = trace(vec![
            span("a", None, (0, 10), "question", "the answer is forty-two"),
            span("b", None, (5, 15), "the answer is forty-two", "b out"),
            span("c", None, (10, 20), "so: the answer is forty-two!", "c out"),
            span("d", None, (30, 30), "b out", "d out"),
            span("e", None, (30, 31), "see b out here", "e out"),
        ]);
        assert!(!reads(&t, "b", "a"), "b started before a ended");
        assert!(
            reads(&t, "c", "a"),
            "c contains a's output and started when a ended"
        );
        assert!(
            reads(&t, "d", "b"),
            "an equal value links whatever its length"
        );
        assert!(
            !reads(&t, "e", "b"),
            "a contained value links only from MIN_LINK_CHARS bytes on"
        );
    }

    #[test]
    fn equal_values_are_one_variable_and_parents_are_scopes() {
        let t = trace(vec![
            span(
                "root",
                None,
                (0, 100),
                "the user's question",
                "ignored: repeats a child",
            ),
            span(
                "x",
                Some("root"),
                (1, 10),
                "the user's question",
                "a long enough output",
            ),
            span(
                "y",
                Some("root"),
                (11, 20),
                "a long enough output",
                "final output text",
            ),
        ]);
        assert_eq!(t.ops.len(), 2, "the root is a scope, not an op");
        assert_eq!(t.sessions.len(), 1);
        assert!(reads(&t, "y", "x"));
        assert!(!t.vars.iter().any(|v| v.value.starts_with("ignored")));
        assert_eq!(
            t.vars
                .iter()
                .filter(|v| v.value == "the user's question")
                .count(),
            1
        );
    }

    #[test]
    fn json_leaves_link_when_they_are_data_not_vocabulary() {
        let out = r#"{"role": "assistant", "text": "Alice moved to Munich"}"#;
        let t = trace(vec![
            span("a", None, (0, 1), "q", out),
            span("b", None, (2, 3), "the assistant said hello", "b out"),
            span("c", None, (2, 3), "memory: Alice moved to Munich", "c out"),
        ]);
        assert!(!reads(&t, "b", "a"), "\"assistant\" is a single word");
        assert!(reads(&t, "c", "a"), "a sentence leaf links");
    }

    #[test]
    fn a_fact_is_read_from_the_reply_that_made_it_not_a_request_repeating_it() {
        let facts = r#"{"facts": ["Alice moved to Munich in May", "Bob likes tea"]}"#;
        let request = r#"{"input": ["Alice moved to Munich in May", "Bob likes tea"]}"#;
        let t = trace(vec![
            span("extract", None, (0, 1), "chat: Alice says she moved", facts),
            span("embed", None, (2, 3), request, "[0.1, 0.2]"),
            span(
                "answer",
                None,
                (4, 5),
                "Memories: Alice moved to Munich in May",
                "May",
            ),
        ]);
        assert!(
            reads(&t, "answer", "extract"),
            "the reply listing the fact is its source"
        );
    }

    #[test]
    fn a_one_word_leaf_recurring_in_many_values_links_nothing() {
        let call =
            |i: u32| format!(r#"{{"model": "embed-3-small", "input": ["text number {i}"]}}"#);
        let reply = r#"{"model": "embed-3-small", "data": [0.5]}"#;
        let t = trace(vec![
            span("e1", None, (0, 1), &call(1), reply),
            span("e2", None, (2, 3), &call(2), "[0.25]"),
            span("e3", None, (4, 5), &call(3), "[0.75]"),
        ]);
        assert!(
            !reads(&t, "e2", "e1"),
            "a model name says which API, not where data came from"
        );
        assert!(!reads(&t, "e3", "e1"));
    }

    #[test]
    fn a_question_span_reporting_a_verdict_is_dated_at_its_end() {
        // Milliseconds: op times are written at that resolution.
        const MS: u64 = 1_000_000;
        let verdict = r#"{"answer": "Paris", "label": "WRONG"}"#;
        let t = trace(vec![
            span(
                "question",
                None,
                (0, 100 * MS),
                "Where does Alice live?",
                verdict,
            ),
            span(
                "search",
                Some("question"),
                (MS, 10 * MS),
                "Where does Alice live?",
                "Alice lives in Rome",
            ),
            span(
                "answer",
                Some("question"),
                (11 * MS, 20 * MS),
                "Alice lives in Rome",
                "Paris",
            ),
        ]);
        let q = t
            .op_by_id("op-question")
            .expect("the question span is an op");
        let a = t.op_by_id("op-answer").unwrap();
        assert!(
            t.op(q).created_at > t.op(a).created_at,
            "it reports after its children"
        );
    }

    #[test]
    fn an_input_is_not_the_source_of_its_own_parts() {
        let t = trace(vec![
            span(
                "decide",
                None,
                (0, 10),
                "facts",
                r#"{"memory":[{"id":"0","text":"Alice moved to Paris in 2020","event":"ADD"}]}"#,
            ),
            span(
                "insert",
                None,
                (20, 30),
                r#"{"id":"u-1234567","data":"Alice moved to Paris in 2020"}"#,
                "stored",
            ),
        ]);
        assert!(
            reads(&t, "insert", "decide"),
            "the stored text came from the reply"
        );
    }

    #[test]
    fn a_model_call_without_captured_content_is_still_an_op() {
        let mut embed = span("embed", None, (0, 10), "", "");
        embed.kind = Kind::Embedding;
        let mut chain = span("scope", None, (20, 30), "", "");
        chain.kind = Kind::Chain;
        let t = trace(vec![embed, chain]);
        assert!(t.op_by_id("op-embed").is_some(), "the call happened");
        assert!(
            t.op_by_id("op-scope").is_none(),
            "a scope with nothing is not"
        );
    }

    #[test]
    fn a_chain_span_that_writes_nothing_is_not_an_op() {
        let t = trace(vec![
            span("buffer", None, (0, 10), "Alice moved to Paris in 2020", ""),
            span(
                "put",
                None,
                (20, 30),
                "chunk: Alice moved to Paris in 2020",
                "ok",
            ),
        ]);
        assert!(
            t.op_by_id("op-buffer").is_none(),
            "nothing written, nothing failed"
        );
        assert!(t.op_by_id("op-put").is_some());
    }
}
