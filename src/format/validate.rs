//! Checks the records of a file before they are indexed: timestamps, unique ids, references.
//! Strict mode stops at the first problem; lenient mode drops the offending record and goes on.

use std::hash::BuildHasher;

use super::error::Problems;
use super::parts::Parts;
use super::FormatError;
use crate::model::{EdgeRecord, OpRecord, SessionRecord};
use crate::util::hash::{id_map, id_set, IdMap, IdSet};
use crate::util::strings::{decimal, set_joined};

/// Fills computed fields and checks ids, references and timestamps.
///
/// # Errors
/// The first problem, in strict mode. In lenient mode the problems are returned as a list and
/// offending records are removed (duplicates, dangling edges and annotations); a bad timestamp
/// is only reported.
pub fn validate(p: &mut Parts, lenient: bool) -> Result<Vec<FormatError>, FormatError> {
    let mut problems = Problems::new(lenient, Vec::new());

    let mut buf = [0; 20];
    for n in &mut p.nodes {
        n.fill_computed();
    }
    for (i, o) in p.ops.iter_mut().enumerate() {
        fill_op(i, o, &mut buf);
    }
    for (i, e) in p.edges.iter_mut().enumerate() {
        fill_edge(i, e, &mut buf);
    }
    for (i, s) in p.sessions.iter_mut().enumerate() {
        fill_session(i, s, &mut buf);
    }

    // An absent `created_at` is allowed (smartcomment stamps the import time); it sorts first.
    let stamps = p
        .sessions
        .iter()
        .enumerate()
        .map(|(i, r)| ("sessions", i, &r.created_at, r.is_absent("created_at")));
    let stamps = stamps
        .chain(
            p.nodes
                .iter()
                .enumerate()
                .map(|(i, r)| ("nodes", i, &r.created_at, r.is_absent("created_at"))),
        )
        .chain(
            p.ops
                .iter()
                .enumerate()
                .map(|(i, r)| ("operations", i, &r.created_at, r.is_absent("created_at"))),
        )
        .chain(
            p.edges
                .iter()
                .enumerate()
                .map(|(i, r)| ("edges", i, &r.created_at, r.is_absent("created_at"))),
        );
    for (list, i, value, absent) in stamps {
        if !stamp_ok(value, absent) {
            problems.report(FormatError::BadTimestamp {
                path: format!("data.{list}[{i}].created_at"),
                value: value.clone(),
            })?;
        }
    }

    let mut seen: IdMap<&str, usize> = id_map(p.nodes.len());
    let mut drop_nodes = Vec::new();
    for (i, n) in p.nodes.iter().enumerate() {
        if let Some(&first) = seen.get(n.full_node_id.as_str()) {
            problems.report(FormatError::DuplicateId {
                path: format!("data.nodes[{i}].full_node_id"),
                id: n.full_node_id.clone(),
                first: format!("data.nodes[{first}]"),
            })?;
            drop_nodes.push(i);
        } else {
            seen.insert(&n.full_node_id, i);
        }
    }
    let mut seen_ops: IdMap<&str, usize> = id_map(p.ops.len());
    let mut drop_ops = Vec::new();
    for (i, o) in p.ops.iter().enumerate() {
        if let Some(&first) = seen_ops.get(o.op_id.as_str()) {
            problems.report(FormatError::DuplicateId {
                path: format!("data.operations[{i}].op_id"),
                id: o.op_id.clone(),
                first: format!("data.operations[{first}]"),
            })?;
            drop_ops.push(i);
        } else {
            seen_ops.insert(&o.op_id, i);
        }
    }

    // smartcomment refuses a record whose session is not in the file; lenient mode keeps it.
    let sessions: IdSet<&str> = p.sessions.iter().map(|s| s.session_id.as_str()).collect();
    let session_refs = p
        .nodes
        .iter()
        .enumerate()
        .map(|(i, r)| ("nodes", i, r.session_id.as_str(), r.is_absent("session_id")))
        .chain(p.ops.iter().enumerate().map(|(i, r)| {
            (
                "operations",
                i,
                r.session_id.as_str(),
                r.is_absent("session_id"),
            )
        }))
        .chain(
            p.edges
                .iter()
                .enumerate()
                .map(|(i, r)| ("edges", i, r.session_id.as_str(), r.is_absent("session_id"))),
        );
    for (list, i, id, absent) in session_refs {
        if !absent && !sessions.contains(id) {
            problems.report(FormatError::Dangling {
                path: format!("data.{list}[{i}].session_id"),
                id: id.to_owned(),
                kind: "session".into(),
            })?;
        }
    }

    let mut drop_edges = Vec::new();
    let mut seen_edges: IdMap<&str, usize> = id_map(p.edges.len());
    for (i, e) in p.edges.iter().enumerate() {
        let mut bad = None;
        if let Some(&first) = seen_edges.get(e.edge_id.as_str()) {
            bad = Some(FormatError::DuplicateId {
                path: format!("data.edges[{i}].edge_id"),
                id: e.edge_id.clone(),
                first: format!("data.edges[{first}]"),
            });
        } else {
            seen_edges.insert(&e.edge_id, i);
        }
        for (field, id) in [
            ("source_full_node_id", &e.source_full_node_id),
            ("target_full_node_id", &e.target_full_node_id),
        ] {
            if bad.is_none() && !seen.contains_key(id.as_str()) {
                bad = Some(FormatError::Dangling {
                    path: format!("data.edges[{i}].{field}"),
                    id: id.clone(),
                    kind: "node".into(),
                });
            }
        }
        if bad.is_none() && !seen_ops.contains_key(e.op_id.as_str()) {
            bad = Some(FormatError::Dangling {
                path: format!("data.edges[{i}].op_id"),
                id: e.op_id.clone(),
                kind: "operation".into(),
            });
        }
        if let Some(b) = bad {
            problems.report(b)?;
            drop_edges.push(i);
        }
    }

    let mut drop_ann = Vec::new();
    for (i, a) in p.annotations.iter().flatten().enumerate() {
        let bad = if !seen.contains_key(a.query_id.as_str()) {
            Some(FormatError::Dangling {
                path: format!("data.annotations[{i}].query_id"),
                id: a.query_id.clone(),
                kind: "node".into(),
            })
        } else if !a.final_op_id.is_empty() && !seen_ops.contains_key(a.final_op_id.as_str()) {
            Some(FormatError::Dangling {
                path: format!("data.annotations[{i}].final_op_id"),
                id: a.final_op_id.clone(),
                kind: "operation".into(),
            })
        } else if let Err(message) = a.final_error_type.parse::<crate::model::ErrorType>() {
            Some(FormatError::Field {
                path: format!("data.annotations[{i}].final_error_type"),
                message,
            })
        } else {
            None
        };
        if let Some(b) = bad {
            problems.report(b)?;
            drop_ann.push(i);
        }
    }

    remove_indices(&mut p.nodes, &drop_nodes);
    remove_indices(&mut p.ops, &drop_ops);
    remove_indices(&mut p.edges, &drop_edges);
    if let Some(a) = p.annotations.as_mut() {
        remove_indices(a, &drop_ann);
    }
    Ok(problems.into_list())
}

/// An op's computed fields: its trigger point, and an id when the file gave none.
/// smartcomment gives a record without an id a fresh one; ours are stable, and a write leaves
/// them out again (nothing in the file can refer to them).
fn fill_op(i: usize, o: &mut OpRecord, buf: &mut [u8; 20]) {
    set_joined(
        &mut o.trigger_point,
        &[&o.filename, ":", decimal(o.lineno, buf)],
    );
    if o.is_absent("op_id") {
        o.op_id = format!("op-unnamed-{i}");
    }
}

/// As [`fill_op`] for an edge.
fn fill_edge(i: usize, e: &mut EdgeRecord, buf: &mut [u8; 20]) {
    set_joined(
        &mut e.trigger_point,
        &[&e.filename, ":", decimal(e.lineno, buf)],
    );
    if e.is_absent("edge_id") {
        e.edge_id = format!("edge-unnamed-{i}");
    }
}

/// As [`fill_op`] for a session.
fn fill_session(i: usize, s: &mut SessionRecord, buf: &mut [u8; 20]) {
    set_joined(
        &mut s.trigger_point,
        &[&s.filename, ":", decimal(s.lineno, buf)],
    );
    if s.is_absent("session_id") {
        s.session_id = format!("session-unnamed-{i}");
    }
}

/// A record's `created_at` is acceptable: absent (it sorts first) or a timestamp.
fn stamp_ok(value: &str, absent: bool) -> bool {
    absent || is_timestamp(value)
}

/// A record's `session_id` is acceptable: absent, the previous record's (already checked), or
/// one of `sessions`.
fn session_ok(sessions: &IdSet<String>, id: &str, absent: bool, as_previous: bool) -> bool {
    absent || as_previous || sessions.contains(id)
}

/// True when record `i` names the same session as record `i - 1`, which was checked (a
/// session id that is not empty was in the file): records come in runs of one session, so
/// most need no lookup.
fn same_session<T>(list: &[T], i: usize, session: impl Fn(&T) -> &String) -> bool {
    let (Some(prev), Some(this)) = (i.checked_sub(1).and_then(|p| list.get(p)), list.get(i)) else {
        return false;
    };
    let (a, b) = (session(prev), session(this));
    !a.is_empty() && a == b
}

/// Strict validation in bounded steps, for [`super::stepwise`]: fills the computed fields and
/// checks timestamps, session references and edge ids record by record, the work of
/// [`validate`] with no problem found. Duplicate node and operation ids, dangling edge ends and
/// annotations are left to the index ([`crate::model::Flow::build`]) and the failure detection,
/// which refuse them as well; at any problem the caller runs the plain load, whose error names it.
pub(super) struct Steps {
    /// 0 sessions, 1 nodes, 2 operations, 3 edges, 4 done.
    list: usize,
    /// The next record of `list`.
    at: usize,
    sessions: IdSet<String>,
    /// Edge id hashes seen (a hash met twice is a duplicate or, rarely, a collision: a problem
    /// either way, for the plain load to judge).
    edge_ids: IdSet<u64>,
}

/// A problem the stepwise validation does not name (the plain load does).
pub(super) struct Refused;

impl Steps {
    pub(super) fn new(p: &Parts) -> Steps {
        Steps {
            list: 0,
            at: 0,
            sessions: IdSet::default(),
            edge_ids: id_set(p.edges.len()),
        }
    }

    /// Validates up to `records` records; true when every record is done.
    pub(super) fn step(&mut self, p: &mut Parts, records: usize) -> Result<bool, Refused> {
        let mut buf = [0; 20];
        let mut left = records.max(1);
        while left > 0 {
            let len = match self.list {
                0 => p.sessions.len(),
                1 => p.nodes.len(),
                2 => p.ops.len(),
                3 => p.edges.len(),
                _ => return Ok(true),
            };
            if self.at >= len {
                if self.list == 0 {
                    self.sessions = p.sessions.iter().map(|s| s.session_id.clone()).collect();
                }
                self.list += 1;
                self.at = 0;
                continue;
            }
            let end = len.min(self.at.saturating_add(left));
            for i in self.at..end {
                let ok = match self.list {
                    0 => {
                        let s = &mut p.sessions[i];
                        fill_session(i, s, &mut buf);
                        stamp_ok(&s.created_at, s.is_absent("created_at"))
                    }
                    1 => {
                        let known = same_session(&p.nodes, i, |r| &r.session_id);
                        let n = &mut p.nodes[i];
                        n.fill_computed();
                        stamp_ok(&n.created_at, n.is_absent("created_at"))
                            && session_ok(
                                &self.sessions,
                                &n.session_id,
                                n.is_absent("session_id"),
                                known,
                            )
                    }
                    2 => {
                        let known = same_session(&p.ops, i, |r| &r.session_id);
                        let o = &mut p.ops[i];
                        fill_op(i, o, &mut buf);
                        stamp_ok(&o.created_at, o.is_absent("created_at"))
                            && session_ok(
                                &self.sessions,
                                &o.session_id,
                                o.is_absent("session_id"),
                                known,
                            )
                    }
                    _ => {
                        let known = same_session(&p.edges, i, |r| &r.session_id);
                        let e = &mut p.edges[i];
                        fill_edge(i, e, &mut buf);
                        let hash = self.edge_ids.hasher().hash_one(e.edge_id.as_str());
                        stamp_ok(&e.created_at, e.is_absent("created_at"))
                            && session_ok(
                                &self.sessions,
                                &e.session_id,
                                e.is_absent("session_id"),
                                known,
                            )
                            && self.edge_ids.insert(hash)
                    }
                };
                if !ok {
                    return Err(Refused);
                }
            }
            left -= end - self.at;
            self.at = end;
        }
        Ok(self.list > 3)
    }
}

/// `YYYY-MM-DD HH:MM:SS` with an optional fraction; `T` is accepted for the space.
pub(crate) fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 19 {
        return false;
    }
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    let shape = digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && (b[10] == b' ' || b[10] == b'T')
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19);
    let rest = &b[19..];
    let fraction = rest.is_empty()
        || (rest[0] == b'.' && rest.len() > 1 && rest[1..].iter().all(u8::is_ascii_digit));
    shape && fraction
}

fn remove_indices<T>(v: &mut Vec<T>, sorted: &[usize]) {
    if sorted.is_empty() {
        return;
    }
    let mut k = 0;
    let mut i = 0;
    v.retain(|_| {
        let drop = sorted.get(k) == Some(&i);
        if drop {
            k += 1;
        }
        i += 1;
        !drop
    });
}

#[cfg(test)]
mod tests {
    use super::is_timestamp;

    #[test]
    fn timestamps() {
        assert!(is_timestamp("2026-11-29 09:18:34.597"));
        assert!(is_timestamp("2026-11-29T09:18:34"));
        assert!(!is_timestamp("yesterday"));
        assert!(!is_timestamp("2026-11-29 09:18:34."));
    }
}
