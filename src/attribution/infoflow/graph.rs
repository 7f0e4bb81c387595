//! The graph walks behind the information-flow attributor: the retrieval op of a question, the
//! memory kinds of a system, the evidence's lineage, and plain up- and downstream reachability
//! (every producer and consumer: unlike [`crate::algo::backward_slice`], a version re-emitted by
//! a retrieval leads to that retrieval too, which is how the question's retrieval is found).

use std::collections::{BTreeSet, VecDeque};

use crate::attribution::roles::{holds_verbatim, spells_out, verbatim_text};
use crate::model::{OpIx, Trace, VarIx};
use crate::text::lexicon::{says_verb, EditVerb};

/// The retrieval op of a question: the latest op before the answer that read the query, preferring
/// ops upstream of the answer (a retrieval that returned nothing is not upstream of it).
pub(crate) fn find_retrieval(t: &Trace, query: VarIx, answer_op: OpIx) -> Option<OpIx> {
    let (_, upstream) = ancestors(t, answer_op);
    let downstream: BTreeSet<VarIx> =
        descendants(t, &t.flow.op_produced(answer_op).collect::<Vec<_>>())
            .into_iter()
            .collect();
    let readers = || {
        t.flow.consumers[query.get()].iter().copied().filter(|&o| {
            o != answer_op
                && t.op(o).created_at <= t.op(answer_op).created_at
                && !t.flow.op_produced(o).any(|v| downstream.contains(&v))
                && !drafts_for(t, o, answer_op, &|v| v == query)
        })
    };
    let latest = |a: &OpIx, b: &OpIx| t.op(*a).created_at.cmp(&t.op(*b).created_at).then(a.cmp(b));
    readers()
        .filter(|o| upstream.contains(o))
        .max_by(latest)
        .or_else(|| readers().max_by(latest))
}

/// True when `answer` reads what `o` wrote together with a produced input of `o`'s that is no
/// query (the retrieved context): `o` wrote a draft answer that `answer` revised.
pub(crate) fn drafts_for(
    t: &Trace,
    o: OpIx,
    answer: OpIx,
    is_query: &dyn Fn(VarIx) -> bool,
) -> bool {
    let read = &t.flow.op_inputs[answer.get()];
    answer != o
        && t.flow.op_produced(o).any(|w| read.contains(&w))
        && t.flow.op_inputs[o.get()]
            .iter()
            .any(|&v| read.contains(&v) && !is_query(v) && !t.flow.producers[v.get()].is_empty())
}

/// Categories of the variables `retrieval` reads or returns (or, with no retrieval, the ops
/// between the query and the answer read) that some op outside the question's pipeline wrote:
/// what memory looks like in this system. The question's pipeline is the ops upstream of the
/// answer that read what the query led to: a first search stage's hits, read by a reranker, are
/// the question's own data, not memory.
pub(crate) fn memory_kinds_near(
    t: &Trace,
    query: VarIx,
    answer_op: OpIx,
    retrieval: Option<OpIx>,
) -> BTreeSet<String> {
    // Sorted for the lookups below; its order is used nowhere else.
    let mut pipeline = question_pipeline(t, query, answer_op);
    pipeline.sort_unstable();
    let written_elsewhere = |v: VarIx| {
        t.flow.producers[v.get()]
            .iter()
            .any(|&o| o != answer_op && Some(o) != retrieval && pipeline.binary_search(&o).is_err())
    };
    let kinds = |near: Vec<VarIx>| -> BTreeSet<String> {
        near.into_iter()
            .filter(|&v| v != query && !t.is_prompt(v) && t.var(v).category != "sentinel")
            .filter(|&v| written_elsewhere(v))
            .map(|v| t.var(v).category.clone())
            .collect()
    };
    let near = retrieval.map(|r| kinds(t.flow.op_vars(r).map(|(v, _)| v).collect()));
    // A retrieval whose search is not traced (it embeds the query; the store's lookup is
    // untraced) shows no memory, nor does a reranker reading the first stage's hits: what the
    // pipeline's ops read from other ops is.
    near.filter(|k| !k.is_empty()).unwrap_or_else(|| {
        kinds(
            pipeline
                .iter()
                .chain([&answer_op])
                .flat_map(|&o| t.flow.op_inputs[o.get()].iter().copied())
                .collect(),
        )
    })
}

/// The question's pipeline: the ops upstream of the answer op (itself included) that read what
/// the query led to (its search, reranking, drafts of the answer).
pub(crate) fn question_pipeline(t: &Trace, query: VarIx, answer_op: OpIx) -> Vec<OpIx> {
    let (_, upstream) = ancestors(t, answer_op);
    // What the query led to: what its readers created, not memory a search re-emitted (a
    // profile update reading that memory is not the question's).
    let mut from_query = vec![false; t.vars.len()];
    from_query[query.get()] = true;
    let mut queue = vec![query];
    while let Some(v) = queue.pop() {
        for &o in &t.flow.consumers[v.get()] {
            for w in t.flow.op_produced(o) {
                let created = crate::algo::first_producer(t, w) == Some(o);
                if created && !std::mem::replace(&mut from_query[w.get()], true) {
                    queue.push(w);
                }
            }
        }
    }
    upstream
        .into_iter()
        .filter(|&o| {
            t.flow.op_inputs[o.get()]
                .iter()
                .any(|v| from_query[v.get()])
        })
        .collect()
}

/// A memory version that says it is deleted or is empty.
pub(crate) fn is_tombstone(t: &Trace, v: VarIx) -> bool {
    use serde_json::Value;
    if marked_deleted(t, v) {
        return true;
    }
    let Value::Object(m) = crate::model::pyrepr::to_json(&t.var(v).value) else {
        return false;
    };
    let Some(Value::Object(before)) =
        previous_version(t, v).map(|p| crate::model::pyrepr::to_json(&t.var(p).value))
    else {
        return false;
    };
    // A field that held text blanked, and nothing but one-word fields (an id, a status) left.
    let blanked = m.iter().any(|(k, x)| {
        (x.is_null() || x.as_str() == Some(""))
            && before
                .get(k)
                .and_then(Value::as_str)
                .is_some_and(|s| s.trim().contains(' '))
    });
    blanked
        && m.values()
            .filter_map(Value::as_str)
            .all(|s| !s.trim().contains(' '))
}

/// The version of `v`'s unit just before `v`.
fn previous_version(t: &Trace, v: VarIx) -> Option<VarIx> {
    let versions = t.flow.versions.get(&t.var(v).full_name)?;
    versions.iter().copied().take_while(|&x| x != v).last()
}

/// A memory version that says outright it is deleted (`"deleted": true`, a null memory) or is
/// nothing at all.
pub(crate) fn marked_deleted(t: &Trace, v: VarIx) -> bool {
    match crate::model::pyrepr::to_json(&t.var(v).value) {
        serde_json::Value::Object(m) => {
            m.get("deleted").and_then(serde_json::Value::as_bool) == Some(true)
                || m.get("memory").is_some_and(serde_json::Value::is_null)
        }
        serde_json::Value::Null => true,
        serde_json::Value::String(s) => s.trim().is_empty(),
        _ => false,
    }
}

/// The evidence's lineage: variables reachable forward from `from`, sorted; from a variable `v`
/// through an op `o` for which `versions_only(v, o)` holds (a memory the op merely read) only
/// `v`'s own later versions are followed (what an op derives from a memory it merely read — a
/// list of similar memories, a decision about another fact — is not the evidence), and only
/// what `keep` accepts of what an op produced.
///
/// # Complexity
/// O(V + E) over the reachable part.
pub(crate) fn lineage(
    t: &Trace,
    from: &[VarIx],
    versions_only: &dyn Fn(VarIx, OpIx) -> bool,
    keep: &dyn Fn(OpIx, VarIx) -> bool,
) -> Vec<VarIx> {
    let mut seen = vec![false; t.vars.len()];
    let mut queue: VecDeque<(VarIx, Option<OpIx>)> = from.iter().map(|&v| (v, None)).collect();
    for &v in from {
        seen[v.get()] = true;
    }
    let mut out = Vec::new();
    while let Some((v, via)) = queue.pop_front() {
        out.push(v);
        for &o in &t.flow.consumers[v.get()] {
            if via.is_some_and(|p| !reads_what_wrote(t, v, p, o)) {
                continue;
            }
            let memory = versions_only(v, o);
            for w in t.flow.op_produced(o) {
                let follow = (!memory || t.var(w).full_name == t.var(v).full_name) && keep(o, w);
                if follow && !std::mem::replace(&mut seen[w.get()], true) {
                    queue.push_back((w, Some(o)));
                }
            }
        }
    }
    out.sort_unstable();
    out
}

/// Whether `reader` reads what `writer` wrote to `v`. A value several ops wrote (identical
/// values recorded as one node, such as a `{"should_end": true}` decision) is, at each moment,
/// what its latest writer wrote: `reader` is `writer` itself, or runs after it and before any
/// other writer of `v`.
fn reads_what_wrote(t: &Trace, v: VarIx, writer: OpIx, reader: OpIx) -> bool {
    let writers = &t.flow.producers[v.get()];
    if writers.len() < 2 || reader == writer {
        return true;
    }
    let at = |o: OpIx| (&t.op(o).created_at, o);
    at(reader) > at(writer)
        && !writers
            .iter()
            .any(|&p| p != writer && at(p) > at(writer) && at(p) < at(reader))
}

/// Every variable reachable forward from `from` (including `from`).
///
/// # Complexity
/// O(V + E) over the reachable part.
pub(crate) fn descendants(t: &Trace, from: &[VarIx]) -> Vec<VarIx> {
    let mut seen_v = vec![false; t.vars.len()];
    let mut seen_o = vec![false; t.ops.len()];
    let mut queue: VecDeque<VarIx> = from.iter().copied().collect();
    for &v in from {
        seen_v[v.get()] = true;
    }
    let mut out = Vec::new();
    while let Some(v) = queue.pop_front() {
        out.push(v);
        for &o in &t.flow.consumers[v.get()] {
            if std::mem::replace(&mut seen_o[o.get()], true) {
                continue;
            }
            for w in t.flow.op_produced(o) {
                if !std::mem::replace(&mut seen_v[w.get()], true) {
                    queue.push_back(w);
                }
            }
        }
    }
    out
}

/// Every variable and op upstream of `op` (the op included).
///
/// # Complexity
/// O(V + E) over the reachable part.
pub(crate) fn ancestors(t: &Trace, op: OpIx) -> (Vec<VarIx>, Vec<OpIx>) {
    upstream_of(t, vec![op])
}

/// Every variable and op upstream of any of `tops` (they included), in the order one
/// breadth-first walk meets them.
///
/// # Complexity
/// O(V + E) over the reachable part.
pub(crate) fn upstream_of(t: &Trace, tops: Vec<OpIx>) -> (Vec<VarIx>, Vec<OpIx>) {
    let mut seen_v = vec![false; t.vars.len()];
    let mut seen_o = vec![false; t.ops.len()];
    for &o in &tops {
        seen_o[o.get()] = true;
    }
    let mut ops = tops;
    let mut vars = Vec::new();
    let mut i = 0;
    while let Some(&o) = ops.get(i) {
        i += 1;
        for &v in &t.flow.op_inputs[o.get()] {
            if std::mem::replace(&mut seen_v[v.get()], true) {
                continue;
            }
            vars.push(v);
            for &p in &t.flow.producers[v.get()] {
                if !std::mem::replace(&mut seen_o[p.get()], true) {
                    ops.push(p);
                }
            }
        }
    }
    (vars, ops)
}

/// True when `op` reads a prompt: a model call.
fn calls_model(t: &Trace, op: OpIx) -> bool {
    t.flow.op_inputs[op.get()].iter().any(|&v| t.is_prompt(v))
}

/// Whether `v`'s value speaks of a deletion (a decision such as `"event": "DELETE"`), not only
/// of new facts.
fn says_delete(t: &Trace, v: VarIx) -> bool {
    says_verb(&t.var(v).value, EditVerb::Delete)
}

/// Whether `next` is `prev`, a list, with items removed: a store deleting from a list.
pub(crate) fn shrank(t: &Trace, prev: VarIx, next: VarIx) -> bool {
    let len = |v: VarIx| match crate::model::pyrepr::to_json(&t.var(v).value) {
        serde_json::Value::Array(xs) => Some(xs.len()),
        _ => None,
    };
    matches!((len(prev), len(next)), (Some(a), Some(b)) if b < a)
}

/// Whether `marker` speaks of deleting `unit` by its id: one record of its value (an object, or
/// a string) speaks of a deletion and holds one of `unit`'s identifiers (a one-word string with
/// a digit, such as `fact-12`). A decision list deleting another unit does not mark this one.
pub(crate) fn marks_deleted(t: &Trace, marker: VarIx, unit: VarIx) -> bool {
    if !says_delete(t, marker) {
        return false;
    }
    let mut ids = Vec::new();
    crate::attribution::roles::string_leaves(t, unit, &mut ids);
    ids.retain(|s| is_identifier(s));
    let marker = crate::model::pyrepr::to_json(&t.var(marker).value);
    record_marks(&marker, &ids)
}

/// A one-word string with a digit and a letter outside a date's `t` and `z` (`fact-12`, a
/// uuid): not a timestamp, which many units share.
fn is_identifier(s: &str) -> bool {
    !s.contains(' ')
        && s.chars().any(|c| c.is_ascii_digit())
        && s.chars().any(|c| c.is_alphabetic() && c != 't' && c != 'z')
}

/// Whether a record in `value` (an object with a short field such as `"event": "DELETE"`, or a
/// short string) speaks of a deletion and names one of `ids`.
fn record_marks(value: &serde_json::Value, ids: &[String]) -> bool {
    use serde_json::Value;
    let deletes = |s: &str| says_verb(s, EditVerb::Delete);
    let names = |s: &str| {
        let s = s.to_ascii_lowercase();
        s.split_whitespace()
            .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
            .any(|w| ids.iter().any(|id| w == id))
    };
    match value {
        // A reply holding JSON is read as JSON; a prose string marks only when short (a note
        // such as "deleted fact-12", not a prompt listing the units and the actions it allows).
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(inner @ (Value::Object(_) | Value::Array(_))) => record_marks(&inner, ids),
            _ => deletes(s) && names(s) && s.split_whitespace().count() <= 12,
        },
        Value::Array(xs) => xs.iter().any(|x| record_marks(x, ids)),
        Value::Object(m) => {
            let own: Vec<&str> = m
                .iter()
                .flat_map(|(k, v)| [Some(k.as_str()), v.as_str()])
                .flatten()
                .collect();
            let short = |s: &str| s.split_whitespace().count() <= 3;
            (own.iter().any(|s| short(s) && deletes(s)) && own.iter().any(|s| names(s)))
                || m.values().any(|x| record_marks(x, ids))
        }
        _ => false,
    }
}

/// The model call whose decision `writer` applied when it replaced `prev` by `next`: `writer`
/// calls no model (a store applying an LLM's update or delete decision) and reads the output of
/// one that ran before it, which says what `writer` wrote (that output holds `next`'s text or
/// the items it joins, or, when `next` is a tombstone, speaks of a deletion). Of several, one that read `prev` itself,
/// then the latest.
pub(crate) fn decider(t: &Trace, writer: OpIx, prev: VarIx, next: VarIx) -> Option<OpIx> {
    if calls_model(t, writer) {
        return None;
    }
    let name = &t.var(prev).full_name;
    let text = verbatim_text(t, next);
    let deleted = is_tombstone(t, next);
    let says = |v: VarIx| {
        if deleted {
            says_delete(t, v)
        } else {
            text.as_ref().is_some_and(|x| holds_verbatim(t, x, v)) || spells_out(t, next, v)
        }
    };
    t.flow.op_inputs[writer.get()]
        .iter()
        .filter(|&&v| &t.var(v).full_name != name && says(v))
        .flat_map(|&v| t.flow.producers[v.get()].iter().copied())
        .filter(|&o| o != writer && t.op(o).created_at <= t.op(writer).created_at)
        .filter(|&o| calls_model(t, o))
        .max_by(|a, b| {
            let read = |o: &OpIx| t.flow.op_inputs[o.get()].contains(&prev);
            read(a)
                .cmp(&read(b))
                .then(t.op(*a).created_at.cmp(&t.op(*b).created_at))
                .then(a.cmp(b))
        })
}

#[cfg(test)]
mod tests {
    use super::{is_identifier, record_marks};
    use serde_json::json;

    fn marks(value: &serde_json::Value) -> bool {
        record_marks(value, &["fact-12".to_owned()])
    }

    #[test]
    fn a_delete_record_naming_the_unit_marks_it() {
        assert!(marks(&json!({ "event": "DELETE", "target": "fact-12" })));
        assert!(marks(&json!("Deleted fact-12.")));
        assert!(marks(&json!(r#"[{"id": "fact-12", "event": "DELETE"}]"#)));
    }

    #[test]
    fn a_record_deleting_another_unit_or_prose_does_not() {
        // A decision list deleting fact-13 keeps fact-12.
        assert!(!marks(&json!([
            { "id": "fact-12", "event": "NONE" },
            { "id": "fact-13", "event": "DELETE" }
        ])));
        // A memory's text that speaks of forgetting is no deletion.
        assert!(!marks(
            &json!({ "id": "fact-12", "memory": "a day I will never forget" })
        ));
        // A prompt listing the units and the actions it allows marks nothing.
        assert!(!marks(&json!(
            "You may ADD, UPDATE or DELETE memories. Existing memories: fact-12 Rosa hikes, fact-13 Rosa paints."
        )));
    }

    #[test]
    fn a_timestamp_is_no_identifier() {
        assert!(is_identifier("fact-12"));
        assert!(is_identifier("1750f123-f760-7f8a-4d5e-1fdc9b255c64"));
        assert!(!is_identifier("2023-07-20t20:56:00"));
        assert!(!is_identifier("2023-07-20"));
        assert!(!is_identifier("fact twelve"));
    }
}
