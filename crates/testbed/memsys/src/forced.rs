//! Forcing a fault into an LLM's decision, the same way in every system: the decision is what
//! the model would have said had it made the mistake (the recorded reply is rewritten to match).

use serde_json::{json, Value};

use super::fault::{garble, holds, Fault};
use super::store::Unit;

/// The faults `of` picks at message pair `pair`: `(index into faults, answer)`.
pub(super) fn at_pair(
    faults: &[Fault],
    pair: usize,
    of: fn(&Fault) -> Option<(usize, &str)>,
) -> Vec<(usize, &str)> {
    faults
        .iter()
        .enumerate()
        .filter_map(|(k, f)| match of(f) {
            Some((p, answer)) if p == pair => Some((k, answer)),
            _ => None,
        })
        .collect()
}

/// An extraction fault on extracted facts: the facts holding `answer` are dropped, or garbled
/// when `garbled`.
pub(super) fn drop_facts(facts: Vec<String>, answer: &str, garbled: bool) -> Vec<String> {
    drop_facts_where(facts, answer, garbled, holds)
}

/// [`drop_facts`] of the facts `hit` says hold `answer`.
pub(super) fn drop_facts_where(
    facts: Vec<String>,
    answer: &str,
    garbled: bool,
    hit: impl Fn(&str, &str) -> bool,
) -> Vec<String> {
    facts
        .into_iter()
        .filter_map(|x| {
            if !hit(&x, answer) {
                Some(x)
            } else if garbled {
                Some(garble(&x, answer))
            } else {
                None
            }
        })
        .collect()
}

/// An update fault on an update decision: `events` is MemBase's `{"id", "text", "event"}` list
/// over the `old` texts (ids are their positions). Each old text holding `answer` is
/// overwritten with the first `new` text not holding it (else a garbled copy). True when one
/// was.
pub(super) fn force_update<'a>(
    events: &mut Vec<Value>,
    old: impl IntoIterator<Item = &'a str>,
    new: &[String],
    answer: &str,
) -> bool {
    force_update_where(events, old, new, answer, |_, before| holds(before, answer))
}

/// [`force_update`] over the old texts `hit` picks (by position and text).
pub(super) fn force_update_where<'a>(
    events: &mut Vec<Value>,
    old: impl IntoIterator<Item = &'a str>,
    new: &[String],
    answer: &str,
    hit: impl Fn(usize, &str) -> bool,
) -> bool {
    let wrong = new.iter().find(|x| !holds(x, answer)).cloned();
    let mut forced = false;
    for (local, before) in old.into_iter().enumerate() {
        if !hit(local, before) {
            continue;
        }
        let text = wrong.clone().unwrap_or_else(|| garble(before, answer));
        let event =
            json!({"id": local.to_string(), "text": text, "event": "UPDATE", "old_memory": before});
        match events
            .iter_mut()
            .find(|e| e["id"].as_str() == Some(local.to_string().as_str()))
        {
            Some(e) => *e = event,
            None => events.push(event),
        }
        forced = true;
    }
    forced
}

/// Deletion faults on a deletion decision: every live unit of `pool` holding a fault's answer
/// joins `doomed` (once). Returns the faults' indices, one per such unit.
pub(super) fn force_deletions(
    forced: &[(usize, &str)],
    pool: &[Unit],
    doomed: &mut Vec<Unit>,
) -> Vec<usize> {
    let mut faulted = Vec::new();
    for &(k, answer) in forced {
        for u in pool.iter().filter(|u| !u.deleted && holds(&u.text, answer)) {
            if !doomed.iter().any(|d| d.id == u.id) {
                doomed.push(u.clone());
            }
            faulted.push(k);
        }
    }
    faulted
}

/// Deletion faults anchored on a unit (`(fault index, unit id)`): each live unit of `pool` so
/// named joins `doomed` (once). Returns the faults' indices that found their unit.
pub(super) fn force_unit_deletions(
    anchored: &[(usize, &str)],
    pool: &[Unit],
    doomed: &mut Vec<Unit>,
) -> Vec<usize> {
    let mut faulted = Vec::new();
    for &(k, id) in anchored {
        if let Some(u) = pool.iter().find(|u| !u.deleted && u.id == id) {
            if !doomed.iter().any(|d| d.id == u.id) {
                doomed.push(u.clone());
            }
            faulted.push(k);
        }
    }
    faulted
}
