//! Text helpers for roles: string leaves of a value, verbatim copies of messages, edits.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::rc::Rc;

use serde_json::Value;

use crate::model::{pyrepr, OpIx, Trace, VarIx};

/// Every string in a value, whitespace-collapsed and lowercased.
pub(super) fn leaves(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(normalized(s)),
        Value::Array(xs) => xs.iter().for_each(|x| leaves(x, out)),
        Value::Object(m) => m.values().for_each(|x| leaves(x, out)),
        _ => {}
    }
}

/// `s` whitespace-collapsed and lowercased, in one pass for ASCII words.
pub(crate) fn normalized(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for w in s.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        if w.is_ascii() {
            out.extend(w.bytes().map(|b| char::from(b.to_ascii_lowercase())));
        } else {
            out.push_str(&w.to_lowercase());
        }
    }
    out
}

/// Every string in `v`'s value, whitespace-collapsed and lowercased, appended to `out`.
pub(crate) fn string_leaves(t: &Trace, v: VarIx, out: &mut Vec<String>) {
    leaves(&pyrepr::to_json(&t.var(v).value), out);
}

pub(super) fn var_leaves(t: &Trace, v: VarIx) -> Vec<String> {
    let mut out = Vec::new();
    leaves(&pyrepr::to_json(&t.var(v).value), &mut out);
    out
}

/// The text of a message-like variable that a verbatim copy keeps: its longest string (the
/// content, not its speaker or timestamp), normalized; `None` when shorter than 20 chars.
pub(crate) fn verbatim_text(t: &Trace, v: VarIx) -> Option<String> {
    var_leaves(t, v)
        .into_iter()
        .max_by_key(String::len)
        .filter(|s| s.len() >= 20)
}

/// True when `text` (from [`verbatim_text`]) appears verbatim in one of `v`'s strings.
pub(crate) fn holds_verbatim(t: &Trace, text: &str, v: VarIx) -> bool {
    var_leaves(t, v).iter().any(|l| l.contains(text))
}

/// True when every string of `w` long enough to say anything appears verbatim in one of
/// `op`'s inputs: `w` is a cut of what `op` read (a segment, a buffer keeping its newest
/// message), nothing derived.
pub(crate) fn is_verbatim_cut(t: &Trace, op: OpIx, w: VarIx) -> bool {
    let long: Vec<String> = var_leaves(t, w)
        .into_iter()
        .filter(|s| s.len() >= 20)
        .collect();
    let read: Vec<String> = t.flow.op_inputs[op.get()]
        .iter()
        .flat_map(|&v| var_leaves(t, v))
        .collect();
    !long.is_empty()
        && long
            .iter()
            .all(|l| read.iter().any(|x| x.contains(l.as_str())))
}

/// True when `v`'s strings of 20 chars or more, put together, make up most (80 %) of `next`'s
/// text: a store that joined the items of a decision (a profile saved as one text).
pub(crate) fn spells_out(t: &Trace, next: VarIx, v: VarIx) -> bool {
    let whole = var_leaves(t, next).join(" ");
    let covered: usize = var_leaves(t, v)
        .iter()
        .filter(|l| l.len() >= 20 && whole.contains(l.as_str()))
        .map(String::len)
        .sum();
    !whole.is_empty() && covered * 5 >= whole.len() * 4
}

/// Each variable's string leaves ([`var_leaves`]), parsed once per walk.
pub(super) struct LeafCache(RefCell<Vec<Option<Rc<[String]>>>>);

impl LeafCache {
    pub(super) fn new(t: &Trace) -> Self {
        LeafCache(RefCell::new(vec![None; t.vars.len()]))
    }

    fn of(&self, t: &Trace, v: VarIx) -> Rc<[String]> {
        if let Some(Some(l)) = self.0.borrow().get(v.get()) {
            return l.clone();
        }
        let l: Rc<[String]> = var_leaves(t, v).into();
        if let Some(slot) = self.0.borrow_mut().get_mut(v.get()) {
            *slot = Some(l.clone());
        }
        l
    }
}

/// The message texts of `op`'s message-like inputs: a message's content; each message of a
/// buffer another op made.
pub(super) fn message_texts(
    t: &Trace,
    op: OpIx,
    message_like: &[bool],
    c: &LeafCache,
) -> Vec<String> {
    let mut out = Vec::new();
    for &v in &t.flow.op_inputs[op.get()] {
        if !message_like[v.get()] {
            continue;
        }
        let leaves = c.of(t, v);
        let long = leaves.iter().filter(|s| s.len() >= 20);
        if t.flow.producers[v.get()].is_empty() {
            // A message: its longest string (the content, not its speaker or timestamp).
            out.extend(long.max_by_key(|s| s.len()).cloned());
        } else {
            out.extend(long.cloned());
        }
    }
    out
}

/// True when every message text (from [`message_texts`]) reappears verbatim in what `op`
/// produced.
pub(super) fn passes_on_verbatim(t: &Trace, op: OpIx, texts: &[String], c: &LeafCache) -> bool {
    let produced: Vec<Rc<[String]>> = t.flow.op_produced(op).map(|p| c.of(t, p)).collect();
    !texts.is_empty()
        && texts.iter().all(|text| {
            produced
                .iter()
                .any(|p| p.iter().any(|l| l.contains(text.as_str())))
        })
}

/// What `op` produced that is a verbatim copy of some of its message `texts` (a segment cut
/// from a buffer): every string of it long enough to say anything is part of a message text.
pub(super) fn verbatim_copies(t: &Trace, op: OpIx, texts: &[String], c: &LeafCache) -> Vec<VarIx> {
    t.flow
        .op_produced(op)
        .filter(|&w| {
            let leaves = c.of(t, w);
            let mut long = leaves.iter().filter(|s| s.len() >= 20).peekable();
            long.peek().is_some() && long.all(|l| texts.iter().any(|x| x.contains(l.as_str())))
        })
        .collect()
}

/// True when `next` is an edit of `prev`: most (70 %) of its words, in its long strings, were
/// already in `prev`'s, it is about as long and has no more long strings (a detail changed, not
/// a restatement, nor a summary added beside the raw text).
pub(crate) fn edits(t: &Trace, prev: VarIx, next: VarIx) -> bool {
    let long = |v: VarIx| -> Vec<String> {
        var_leaves(t, v)
            .into_iter()
            .filter(|s| s.len() >= 20)
            .collect()
    };
    let (prev_long, next_long) = (long(prev), long(next));
    if next_long.len() > prev_long.len() {
        return false;
    }
    let words = |leaves: &[String]| -> Vec<String> {
        leaves
            .iter()
            .flat_map(|s| {
                s.split(|c: char| !c.is_alphanumeric())
                    .filter(|w| !w.is_empty())
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    let (old, new) = (words(&prev_long), words(&next_long));
    if old.is_empty() || new.is_empty() {
        return false;
    }
    let had: BTreeSet<&String> = old.iter().collect();
    let kept = new.iter().filter(|w| had.contains(w)).count();
    // A cut (every word kept, such as a unit dropping its raw messages) changes nothing.
    kept < new.len()
        && kept * 10 >= new.len() * 7
        && new.len() * 10 >= old.len() * 6
        && new.len() * 10 <= old.len() * 15
}

#[cfg(test)]
mod tests {
    use super::normalized;

    #[test]
    fn normalized_collapses_and_lowercases_like_the_whole_string() {
        for s in ["  Hello\n  WORLD\t", "ΟΔΟΣ Σας", "Straße  ÉTÉ x", "", "   "] {
            let whole = s
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .to_lowercase();
            assert_eq!(normalized(s), whole, "{s:?}");
        }
        assert_eq!(normalized(" A  b "), "a b");
    }
}
