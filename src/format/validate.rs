//! Checks the records of a file before they are indexed: timestamps, unique ids, references.
//! Strict mode stops at the first problem; lenient mode drops the offending record and goes on.

use crate::util::hash::{id_map, IdMap, IdSet};

use super::error::Problems;
use super::smartcomment::Parts;
use super::FormatError;
use crate::util::strings::{decimal, set_joined};

/// Fills computed fields and checks ids, references and timestamps.
///
/// # Errors
/// The first problem, in strict mode. In lenient mode the problems are returned as a list and
/// offending records are removed (duplicates, dangling edges and annotations); a bad timestamp
/// is only reported.
pub fn validate(p: &mut Parts, lenient: bool) -> Result<Vec<FormatError>, FormatError> {
    let mut problems = Problems::new(lenient, Vec::new());

    for n in &mut p.nodes {
        n.fill_computed();
    }
    let mut buf = [0; 20];
    // smartcomment gives a record without an id a fresh one; ours are stable, and a write
    // leaves them out again (nothing in the file can refer to them).
    for (i, o) in p.ops.iter_mut().enumerate() {
        set_joined(
            &mut o.trigger_point,
            &[&o.filename, ":", decimal(o.lineno, &mut buf)],
        );
        if o.is_absent("op_id") {
            o.op_id = format!("op-unnamed-{i}");
        }
    }
    for (i, e) in p.edges.iter_mut().enumerate() {
        set_joined(
            &mut e.trigger_point,
            &[&e.filename, ":", decimal(e.lineno, &mut buf)],
        );
        if e.is_absent("edge_id") {
            e.edge_id = format!("edge-unnamed-{i}");
        }
    }
    for (i, s) in p.sessions.iter_mut().enumerate() {
        set_joined(
            &mut s.trigger_point,
            &[&s.filename, ":", decimal(s.lineno, &mut buf)],
        );
        if s.is_absent("session_id") {
            s.session_id = format!("session-unnamed-{i}");
        }
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
        if !absent && !is_timestamp(value) {
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
