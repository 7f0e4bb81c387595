//! The user's role overrides (op name → role, as [`RoleConfig`] reads them, saved per trace
//! with a project) and the info-flow verdicts given again under them.

use std::collections::BTreeMap;

use super::Verdict;
use crate::attribution::{AttributionError, Basis, InfoFlow, OpRole, RoleConfig, Roles};
use crate::model::FailureCase;
use crate::Trace;

/// The name info-flow verdicts carry in [`Verdict::method`].
pub const INFOFLOW: &str = "infoflow";

/// The role config of a trace: the default hints and the user's overrides (op name → role).
pub fn role_config(overrides: &BTreeMap<String, OpRole>) -> RoleConfig {
    RoleConfig {
        overrides: overrides.clone(),
        ..RoleConfig::default()
    }
}

/// Sets (`Some`) or clears (`None`) the override of op name `op_name`; true when that changed
/// the overrides.
pub fn set_override(
    overrides: &mut BTreeMap<String, OpRole>,
    op_name: &str,
    role: Option<OpRole>,
) -> bool {
    match role {
        Some(r) => overrides.insert(op_name.to_owned(), r) != Some(r),
        None => overrides.remove(op_name).is_some(),
    }
}

/// Info-flow's verdict on case `c` of `t` with `roles`.
///
/// # Errors
/// Why info-flow could not attribute the case.
pub fn infoflow_verdict(
    t: &Trace,
    roles: &Roles,
    c: &FailureCase,
) -> Result<Verdict, AttributionError> {
    InfoFlow::default()
        .attribute_with(t, roles, c)
        .map(|a| Verdict::from(&a))
}

/// Gives each info-flow verdict in `verdicts` (by `query_id`) again with `t`'s roles under
/// `overrides`; other methods' verdicts are kept. A verdict info-flow can no longer give is
/// removed (it was made under roles no longer in force): one sentence each says why.
pub fn reattribute(
    t: &Trace,
    overrides: &BTreeMap<String, OpRole>,
    verdicts: &mut BTreeMap<String, Verdict>,
) -> Vec<String> {
    let mut problems = Vec::new();
    if !verdicts.values().any(|v| v.method == INFOFLOW) {
        return problems;
    }
    let roles = Roles::infer(t, &role_config(overrides));
    for c in &t.cases {
        if verdicts
            .get(&c.query_id)
            .is_none_or(|v| v.method != INFOFLOW)
        {
            continue;
        }
        match infoflow_verdict(t, &roles, c) {
            Ok(v) => {
                verdicts.insert(c.query_id.clone(), v);
            }
            Err(e) => {
                verdicts.remove(&c.query_id);
                problems.push(format!(
                    "info-flow could not attribute {} with these roles: {e}; its verdict was removed",
                    c.query_id
                ));
            }
        }
    }
    problems
}

/// One op name of a trace with its role in force and what inference says of it: a row of a
/// host's roles table.
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

/// Each op name of `t` once, in order of first appearance: its inferred role and the user's
/// override of it, if any.
pub fn role_rows(t: &Trace, overrides: &BTreeMap<String, OpRole>) -> Vec<RoleRow> {
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

/// The role of the op `op_id` (and where it came from), if the trace has that op.
pub fn op_role(t: &Trace, roles: &Roles, op_id: &str) -> Option<(OpRole, Basis)> {
    let a = roles.get(t.op_by_id(op_id)?)?;
    Some((a.role, a.basis))
}
