//! Lifelines and def-use chains.
//!
//! A variable identity (`full_name`, e.g. one memory unit) has a chain of versions: its birth,
//! its updates and possibly its deletion. The lifeline lists the versions with the ops that made
//! each one (the ops between the previous version and this one) and the ops that read it.

use serde::{Deserialize, Serialize};

use super::AlgoError;
use crate::model::{pyrepr, OpIx, Trace, VarIx};

/// What a version is in the life of its identity.
#[cfg_attr(feature = "ts", derive(tsify_next::Tsify))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VersionKind {
    /// The first version.
    Birth,
    /// A later version with content.
    Update,
    /// A tombstone: the identity was deleted here.
    Delete,
}

/// The definitions (producing ops) and uses (reading ops) of one variable version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DefUse {
    pub var: VarIx,
    /// Ops that produced this version, by (`created_at`, `op_id`).
    pub defs: Vec<OpIx>,
    /// Ops that read this version as an input, by (`created_at`, `op_id`).
    pub uses: Vec<OpIx>,
}

/// One version on a lifeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LifelineVersion {
    pub var: VarIx,
    pub version: u32,
    pub kind: VersionKind,
    pub created_at: String,
    /// The ops that made this version: for an update, the ops between the previous version and
    /// this one.
    pub made_by: Vec<OpIx>,
    /// The ops that read this version.
    pub read_by: Vec<OpIx>,
}

/// The version chain of one variable identity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lifeline {
    /// The identity (`full_name`).
    pub identity: String,
    /// Versions in ascending version number.
    pub versions: Vec<LifelineVersion>,
    /// The op that ended the identity: the maker of a tombstone version, or a deletion-like op
    /// that read the last version and made no newer one (real Mem0 records a deletion as a link
    /// to a marker, without a new version).
    pub ended_by: Option<OpIx>,
}

impl Lifeline {
    /// True when the identity was deleted.
    pub fn is_deleted(&self) -> bool {
        self.ended_by.is_some()
    }
}

/// Returns the def-use pair of one variable version.
///
/// # Errors
/// [`AlgoError::Stale`] when the trace's index does not cover `var`.
///
/// # Complexity
/// O(d log d) for its d defs and uses.
pub fn def_use(trace: &Trace, var: VarIx) -> Result<DefUse, AlgoError> {
    let (Some(defs), Some(uses)) = (
        trace.flow.producers.get(var.get()),
        trace.flow.consumers.get(var.get()),
    ) else {
        return Err(AlgoError::Stale {
            what: format!("variable index {} is not in the flow index", var.0),
        });
    };
    Ok(DefUse {
        var,
        defs: by_time(trace, defs),
        uses: by_time(trace, uses),
    })
}

/// Returns the lifeline of the identity `full_name`.
///
/// A version is a tombstone when its value reads as deleted (`{'deleted': True, …}`, empty,
/// `None`) or its maker's name or category says deletion. Without a tombstone, the identity
/// still ended when an edge leads from its last version, inside an op that made no newer
/// version, to a deletion marker (a variable, or an op, whose name or category says deletion).
/// Names are hints; the edges decide which unit an op deleted.
///
/// # Errors
/// [`AlgoError::UnknownVar`] when no variable has this `full_name`.
///
/// # Complexity
/// O(k + d log d + E) for k versions, d defs and uses, and E edges (scanned once for markers).
pub fn lifeline(trace: &Trace, full_name: &str) -> Result<Lifeline, AlgoError> {
    let Some(chain) = trace.flow.versions.get(full_name) else {
        return Err(AlgoError::UnknownVar {
            id: full_name.to_owned(),
        });
    };
    let mut versions = Vec::with_capacity(chain.len());
    let mut ended_by = None;
    for (i, &v) in chain.iter().enumerate() {
        let du = def_use(trace, v)?;
        let rec = trace.var(v);
        let tombstone = i > 0
            && (reads_as_deleted(&rec.value) || du.defs.iter().any(|&o| deletion_like(trace, o)));
        if tombstone && ended_by.is_none() {
            ended_by = du.defs.first().copied();
        }
        let kind = match (i, tombstone) {
            (0, _) => VersionKind::Birth,
            (_, true) => VersionKind::Delete,
            (_, false) => VersionKind::Update,
        };
        versions.push(LifelineVersion {
            var: v,
            version: rec.version,
            kind,
            created_at: rec.created_at.clone(),
            made_by: du.defs,
            read_by: du.uses,
        });
    }
    if ended_by.is_none() {
        if let Some(last) = versions.last() {
            ended_by = marker_deletion(trace, last.var, full_name);
        }
    }
    Ok(Lifeline {
        identity: full_name.to_owned(),
        versions,
        ended_by,
    })
}

/// The op that linked `last` (the last version of `identity`) to a deletion marker, if any.
fn marker_deletion(trace: &Trace, last: VarIx, identity: &str) -> Option<OpIx> {
    let mut found: Option<OpIx> = None;
    for &(src, dst, op) in &trace.flow.edge_ends {
        if src != last || trace.var(dst).full_name == identity {
            continue;
        }
        let makes_newer = trace
            .flow
            .op_produced(op)
            .any(|p| trace.var(p).full_name == identity);
        let marker = deletion_like(trace, op)
            || says_deletion(&trace.var(dst).full_name)
            || says_deletion(&trace.var(dst).category);
        if marker && !makes_newer {
            let earlier = found.is_none_or(|f| {
                (&trace.op(op).created_at, &trace.op(op).op_id)
                    < (&trace.op(f).created_at, &trace.op(f).op_id)
            });
            if earlier {
                found = Some(op);
            }
        }
    }
    found
}

fn says_deletion(s: &str) -> bool {
    let s = s.to_ascii_lowercase();
    s.contains("delet") || s.contains("remov")
}

/// Ops sorted by (`created_at`, `op_id`).
fn by_time(trace: &Trace, ops: &[OpIx]) -> Vec<OpIx> {
    let mut v = ops.to_vec();
    v.sort_by(|&a, &b| {
        let (x, y) = (trace.op(a), trace.op(b));
        (&x.created_at, &x.op_id).cmp(&(&y.created_at, &y.op_id))
    });
    v.dedup();
    v
}

/// A name hint: the op's category or name mentions deletion.
fn deletion_like(trace: &Trace, op: OpIx) -> bool {
    let r = trace.op(op);
    says_deletion(&r.category) || says_deletion(&r.op_name)
}

/// A value that says the unit is gone: a mapping with a true `deleted` flag, or nothing at all.
fn reads_as_deleted(value: &str) -> bool {
    let t = value.trim();
    if t.is_empty() || t == "None" || t == "null" {
        return true;
    }
    if !t.starts_with('{') {
        return false;
    }
    let json = pyrepr::to_json(t);
    json.get("deleted").and_then(serde_json::Value::as_bool) == Some(true)
}

#[cfg(test)]
mod tests {
    use super::reads_as_deleted;

    #[test]
    fn tombstone_values() {
        assert!(reads_as_deleted(
            "{'id': 'x', 'memory': None, 'deleted': True}"
        ));
        assert!(reads_as_deleted("{\"deleted\": true}"));
        assert!(reads_as_deleted("None"));
        assert!(!reads_as_deleted(
            "{'memory': 'likes tea', 'deleted': False}"
        ));
        assert!(!reads_as_deleted("'deleted'"));
    }
}
