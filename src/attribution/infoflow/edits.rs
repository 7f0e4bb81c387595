//! Edits an op made to memory, read from what it wrote: each JSON object of its output — a tool
//! call (`{"tool_call": name, "arguments": {..}}`), a decision record (`{"id", "text",
//! "event"}`) — with its verb ([`crate::text::lexicon`]: from the call's name or a short field),
//! the id it names and the texts it carries. A memory value an op read is *retired* by that op
//! when one of its edits names it, by its text or by the id the op's input lists it under, and
//! deletes it or replaces it with a text that no longer holds the information.

use serde_json::Value;

use super::Stage;
use crate::attribution::roles::OpRole;
use crate::attribution::text::{var_text, var_texts};
use crate::model::{pyrepr, OpIx, Trace, VarIx};
use crate::text::lexicon::{edit_verb, name_verb, EditVerb};
use crate::text::one_line;

/// One edit: its verb, the id it names, the texts it carries.
#[derive(Debug, PartialEq)]
struct Edit {
    verb: Option<EditVerb>,
    id: Option<String>,
    texts: Vec<String>,
}

impl Edit {
    /// The edit a call's arguments or a record's fields make: the id field's value, the texts
    /// of the others.
    fn of(verb: Option<EditVerb>, fields: &serde_json::Map<String, Value>) -> Edit {
        Edit {
            verb,
            id: fields
                .iter()
                .find(|(k, _)| is_id_key(k))
                .and_then(|(_, v)| scalar(v)),
            texts: fields
                .iter()
                .filter(|(k, _)| !is_id_key(k))
                .filter_map(|(_, v)| v.as_str().filter(|s| is_text(s)).map(str::to_owned))
                .collect(),
        }
    }
}

/// A field naming an id: `id`, `memory_id`, `docId`.
fn is_id_key(k: &str) -> bool {
    let k = k.to_ascii_lowercase();
    k == "id" || k.ends_with("_id") || k.ends_with("id") && k.len() <= 8
}

/// A text worth matching: two words at least.
fn is_text(s: &str) -> bool {
    s.split_whitespace().nth(1).is_some()
}

fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The edits of a JSON value, depth first.
fn edits_in(v: &Value, out: &mut Vec<Edit>, depth: usize) {
    if depth > 12 {
        return;
    }
    match v {
        Value::Array(xs) => xs.iter().for_each(|x| edits_in(x, out, depth + 1)),
        Value::Object(o) => {
            if let (Some(name), Some(Value::Object(args))) = (
                o.get("tool_call").and_then(Value::as_str),
                o.get("arguments"),
            ) {
                out.push(Edit::of(name_verb(name), args));
                return;
            }
            let verb = o
                .values()
                .filter_map(Value::as_str)
                .find_map(|s| edit_verb(s.trim()));
            let record = Edit::of(verb, o);
            if record.verb.is_some() && record.id.is_some() {
                out.push(record);
                return;
            }
            o.values().for_each(|x| edits_in(x, out, depth + 1));
        }
        _ => {}
    }
}

/// The same text, give or take spacing and a few characters around it.
fn same(a: &str, b: &str) -> bool {
    let (a, b) = (one_line(a), one_line(b));
    let (short, long) = if a.len() <= b.len() {
        (&a, &b)
    } else {
        (&b, &a)
    };
    !short.is_empty() && long.contains(short.as_str()) && short.len() * 10 >= long.len() * 9
}

/// Whether `hay` lists `text` under `id`: the id, standing alone, within a few characters
/// before or after it in the same record (`ID: x\nMemory: text`, `{"id": "x", "text": "text"}`).
fn lists_under(hay: &str, text: &str, id: &str) -> bool {
    const NEAR: usize = 40;
    let bounded = |at: usize| {
        let before = hay[..at].chars().next_back();
        let after = hay[at + id.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    };
    let ids: Vec<usize> = hay
        .match_indices(id)
        .map(|(i, _)| i)
        .filter(|&i| bounded(i))
        .collect();
    hay.match_indices(text).any(|(at, _)| {
        let end = at + text.len();
        // Nothing between them that ends a record: a brace, a blank line (an id after the
        // text: any line break).
        let apart = |gap: &str, after: bool| {
            gap.len() > NEAR
                || gap.contains(['{', '}'])
                || gap.contains(if after { "\n" } else { "\n\n" })
        };
        ids.iter().any(|&i| {
            (i + id.len() <= at && !apart(&hay[i + id.len()..at], false))
                || (i >= end && !apart(&hay[end..i], true))
        })
    })
}

/// Copies of a memory value followed at most (a fact every later prompt quotes).
const MAX_COPIES: usize = 64;

/// The op that retired `current` (a memory value holding the information) before the question,
/// its role and why: the first op that read it and wrote an edit naming it that deletes it
/// (`Deletion`) or replaces it with texts none of which `carries` the information (`Update`).
pub(super) fn retired(
    t: &Trace,
    stage: &Stage,
    current: VarIx,
    carries: &dyn Fn(&str) -> bool,
) -> Option<(OpIx, OpRole, String)> {
    let mut held: Vec<String> = var_texts(t.var(current))
        .into_iter()
        .filter(|x| carries(x))
        .collect();
    if held.is_empty() {
        held.push(var_text(t.var(current)));
    }
    // The ops that read it, or a copy of it an op handed on (a decision listing the fact it
    // added), before the question.
    let early = |o: OpIx| {
        o != stage.answer_op
            && Some(o) != stage.retrieval_op
            && !stage.pipeline.contains(&o)
            && t.op(o).created_at <= stage.cutoff
    };
    let holds = |w: VarIx| {
        var_texts(t.var(w))
            .iter()
            .any(|s| held.iter().any(|x| same(s, x)))
    };
    let mut copies = vec![current];
    let mut readers: Vec<OpIx> = Vec::new();
    let mut i = 0;
    while let Some(&v) = copies.get(i) {
        i += 1;
        for &o in t.flow.consumers[v.get()].iter().filter(|&&o| early(o)) {
            readers.push(o);
            for w in t.flow.op_produced(o) {
                if copies.len() < MAX_COPIES && !copies.contains(&w) && holds(w) {
                    copies.push(w);
                }
            }
        }
    }
    readers.sort_by(|a, b| t.op(*a).created_at.cmp(&t.op(*b).created_at).then(a.cmp(b)));
    readers.dedup();
    for o in readers {
        let inputs: Vec<&str> = t.flow.op_inputs[o.get()]
            .iter()
            .map(|&v| t.var(v).value.as_str())
            .collect();
        for w in t.flow.op_produced(o) {
            let mut edits = Vec::new();
            edits_in(&pyrepr::to_json(&t.var(w).value), &mut edits, 0);
            for e in edits {
                let Some(x) = held.iter().find(|x| {
                    e.texts.iter().any(|s| same(s, x))
                        || e.id
                            .as_ref()
                            .is_some_and(|id| inputs.iter().any(|hay| lists_under(hay, x, id)))
                }) else {
                    continue;
                };
                let new: Vec<&String> = e.texts.iter().filter(|s| !same(s, x)).collect();
                let shown = crate::text::shorten(x, 70);
                match e.verb {
                    Some(EditVerb::Delete) => {
                        let reason = format!(
                            "“{shown}” held the information; {} deleted it before the question was asked.",
                            t.op(o).op_name
                        );
                        return Some((o, OpRole::Deletion, reason));
                    }
                    Some(EditVerb::Update) | None
                        if !new.is_empty() && !new.iter().any(|s| carries(s)) =>
                    {
                        let reason = format!(
                            "“{shown}” held the information; {} replaced it with “{}”, which no longer holds it.",
                            t.op(o).op_name,
                            crate::text::shorten(new[0], 70)
                        );
                        return Some((o, OpRole::Update, reason));
                    }
                    _ => {}
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tool_calls_and_decision_records_are_edits() {
        let mut out = Vec::new();
        let call = json!({"tool_call": "update_memory", "arguments": {"memory_id": "ab-12", "memory": "Went to the group on 16 May", "topics": null}});
        edits_in(&call, &mut out, 0);
        let list = json!({"memory": [{"id": "0", "text": "Likes tea a lot", "event": "DELETE"}, {"note": "no edit here"}]});
        edits_in(&list, &mut out, 0);
        assert_eq!(out.len(), 2, "{out:?}");
        assert_eq!(out[0].verb, Some(EditVerb::Update));
        assert_eq!(out[0].id.as_deref(), Some("ab-12"));
        assert_eq!(out[0].texts, vec!["Went to the group on 16 May".to_owned()]);
        assert_eq!(out[1].verb, Some(EditVerb::Delete));
    }

    #[test]
    fn an_id_lists_a_text_only_next_to_it() {
        let hay = "ID: ab-12\nMemory: Went to the group on 7 May\n\nID: cd-34\nMemory: Likes tea";
        assert!(lists_under(hay, "Went to the group on 7 May", "ab-12"));
        assert!(!lists_under(hay, "Went to the group on 7 May", "cd-34"));
        assert!(!lists_under(hay, "Likes tea", "ab-1"));
        assert!(same("Likes  tea a lot", "Likes tea a lot."));
        assert!(!same("Likes tea", "Likes tea a lot and coffee"));
    }
}
