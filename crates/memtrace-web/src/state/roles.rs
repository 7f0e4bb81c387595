//! The roles panel's rows: each op name's inferred role (from `Roles::by_name`) and the user's
//! overrides (op name → role, saved per trace with the project); setting one gives the
//! info-flow verdicts again (`session::reattribute`). Pure, tested natively.

use std::collections::BTreeMap;

use memtrace::attribution::{Basis, OpRole, RoleConfig, Roles};
use memtrace::model::FailureCase;
use memtrace::session;
use memtrace::Trace;

use super::{LoadedTrace, Verdict};

/// One row of the roles panel: an op name, its role in force and what inference said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoleRow {
    pub op_name: String,
    /// How many ops have this name.
    pub count: usize,
    /// The role in force (the override when there is one).
    pub role: OpRole,
    /// The role inference gives without the user's override, and why.
    pub inferred: OpRole,
    pub basis: Basis,
    pub reason: String,
    /// The user set this name's role.
    pub overridden: bool,
    /// Ops of this name that inference put in another role: (role, count).
    pub other_roles: Vec<(OpRole, usize)>,
}

/// The rows of the roles panel, in order of each op name's first appearance.
pub fn rows(t: &Trace, overrides: &BTreeMap<String, OpRole>) -> Vec<RoleRow> {
    let inferred = Roles::infer(t, &RoleConfig::default());
    inferred
        .by_name(t)
        .into_iter()
        .map(|n| {
            let over = overrides.get(&n.op_name).copied();
            RoleRow {
                count: n.count,
                role: over.unwrap_or(n.role),
                inferred: n.role,
                basis: n.basis,
                reason: n.reason,
                overridden: over.is_some(),
                other_roles: n.other_roles,
                op_name: n.op_name,
            }
        })
        .collect()
}

/// A few words for where a role came from.
pub fn basis_label(b: Basis) -> &'static str {
    match b {
        Basis::User => "your override",
        Basis::Structure => "structure",
        Basis::Name => "same-name ops",
        Basis::Hint => "name hint",
        Basis::Default => "nothing matched",
    }
}

/// The role of the op `op_id` (and where it came from), if the trace has that op.
pub fn op_role(t: &Trace, roles: &Roles, op_id: &str) -> Option<(OpRole, Basis)> {
    let a = roles.get(t.op_by_id(op_id)?)?;
    Some((a.role, a.basis))
}

/// Runs info-flow on one case with the trace's roles: the verdict, or why it could not.
///
/// # Errors
/// The attribution error as a sentence.
pub fn infoflow_verdict(t: &Trace, roles: &Roles, c: &FailureCase) -> Result<Verdict, String> {
    session::infoflow_verdict(t, roles, c).map_err(|e| e.to_string())
}

/// Sets (`Some`) or resets (`None`) the role of every op named `op_name` in `t`, then
/// recomputes its info-flow verdicts with the new roles. Returns, per verdict that can no
/// longer be given (it is dropped: it was made under roles no longer in force), why.
pub fn set_role(t: &mut LoadedTrace, op_name: &str, role: Option<OpRole>) -> Vec<String> {
    if session::set_override(&mut t.role_overrides, op_name, role) {
        recompute_infoflow(t)
    } else {
        Vec::new()
    }
}

/// Recomputes every info-flow verdict of `t` with its roles in force; returns why any could
/// not be (those verdicts are dropped).
pub fn recompute_infoflow(t: &mut LoadedTrace) -> Vec<String> {
    session::reattribute(&t.trace, &t.role_overrides, &mut t.verdicts)
}

#[cfg(test)]
mod tests;
