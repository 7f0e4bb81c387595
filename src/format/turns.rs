//! The user's conversation turns of a span trace, found by structure.
//!
//! A span trace names no "message" variables: the text a user said arrives as some span's
//! input. What marks it is where it sits in the data flow: no op produced it, and every op
//! that reads it is a *source* op (one whose inputs no op produced) whose output feeds a later
//! op, and that leads to a memory write when the trace has any. The question fails this test
//! (the answering op, which also reads retrieved records, reads it too), and so do prompts,
//! memory units and retrieved documents (kept by their category).

use std::collections::{HashMap, HashSet};

use super::parts::Parts;

/// Categories that are never a conversation turn.
const NOT_TURNS: [&str; 4] = ["prompt", "memory_entry", "retrieved_document", "message"];

/// Marks the conversation turns of `parts` as category `message` — only when it has no
/// message variable already (a format that names its messages is trusted).
pub(super) fn mark(parts: &mut Parts) {
    if parts.nodes.iter().any(|n| n.category == "message") {
        return;
    }
    let key = |class: Option<&str>, name: &str, version: u32| match class {
        Some(c) => format!("{c}:{name}@{version}"),
        None => format!("{name}@{version}"),
    };
    let ids: Vec<String> = parts
        .nodes
        .iter()
        .map(|n| key(n.class_name.as_deref(), &n.name, n.version))
        .collect();
    // Per op: what it read (edge sources it did not make) and what it made (edge targets).
    let mut made: HashMap<&str, HashSet<&str>> = HashMap::new();
    let mut read: HashMap<&str, HashSet<&str>> = HashMap::new();
    for e in &parts.edges {
        made.entry(&e.op_id)
            .or_default()
            .insert(&e.target_full_node_id);
        read.entry(&e.op_id)
            .or_default()
            .insert(&e.source_full_node_id);
    }
    for (op, m) in &made {
        if let Some(r) = read.get_mut(op) {
            r.retain(|v| !m.contains(v));
        }
    }
    let producer: HashMap<&str, &str> = made
        .iter()
        .flat_map(|(op, m)| m.iter().map(move |v| (*v, *op)))
        .collect();
    let category: HashMap<&str, &str> = ids
        .iter()
        .zip(&parts.nodes)
        .map(|(id, n)| (id.as_str(), n.category.as_str()))
        .collect();
    // Ops that write memory, and every op whose output flows into one of them.
    let mut to_memory: HashSet<&str> = made
        .iter()
        .filter(|(_, m)| m.iter().any(|v| category.get(v) == Some(&"memory_entry")))
        .map(|(op, _)| *op)
        .collect();
    let any_write = !to_memory.is_empty();
    let mut stack: Vec<&str> = to_memory.iter().copied().collect();
    while let Some(op) = stack.pop() {
        for v in read.get(op).into_iter().flatten() {
            if let Some(&p) = producer.get(v) {
                if to_memory.insert(p) {
                    stack.push(p);
                }
            }
        }
    }
    let is_source = |op: &str| {
        read.get(op)
            .is_some_and(|r| r.iter().all(|v| !producer.contains_key(v)))
    };
    let feeds = |op: &str| {
        made.get(op).is_some_and(|m| {
            m.iter()
                .any(|v| read.iter().any(|(o, r)| *o != op && r.contains(v)))
        })
    };
    let mut readers: HashMap<&str, Vec<&str>> = HashMap::new();
    for (op, r) in &read {
        for v in r {
            readers.entry(v).or_default().push(op);
        }
    }
    let turns: HashSet<String> = readers
        .iter()
        .filter(|(v, _)| !producer.contains_key(*v))
        .filter(|(v, _)| !category.get(*v).is_some_and(|c| NOT_TURNS.contains(c)))
        .filter(|(_, ops)| {
            ops.iter()
                .all(|&op| is_source(op) && feeds(op) && (!any_write || to_memory.contains(op)))
        })
        .map(|(v, _)| (*v).to_owned())
        .collect();
    for (n, id) in parts.nodes.iter_mut().zip(&ids) {
        if turns.contains(id) {
            "message".clone_into(&mut n.category);
        }
    }
}
