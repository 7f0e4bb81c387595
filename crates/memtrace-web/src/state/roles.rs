//! The user's role overrides in the page state (op name → role, saved per trace with the
//! project; the rows come from `session::role_rows`): setting one gives the info-flow verdicts
//! again (`session::reattribute`). Pure, tested natively.

use memtrace::attribution::{Basis, OpRole, Roles};
use memtrace::model::FailureCase;
use memtrace::session;
use memtrace::Trace;

use super::{LoadedTrace, Verdict};

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
