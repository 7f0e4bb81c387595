//! The user's role overrides in the page state (op name → role, saved per trace with the
//! project; the rows come from `session::role_rows`): setting one gives the info-flow verdicts
//! again (`session::reattribute`). Pure, tested natively.

use memtrace::attribution::{Basis, OpRole};

use super::PageState;

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

/// `Action::SetRole`: sets (`Some`) or resets (`None`) the role of every op named `op_name` in
/// the trace on screen, which gives its info-flow verdicts again ([`memtrace::session::Project::set_role`]);
/// a verdict that can no longer be given is dropped, and why is shown.
pub fn set_role(s: &mut PageState, op_name: &str, role: Option<OpRole>) {
    let Some(name) = s.current_trace().map(|t| t.name.clone()) else {
        return;
    };
    match s.project.set_role(&name, op_name, role) {
        Ok(dropped) => {
            for message in dropped {
                s.failed(name.clone(), message);
            }
        }
        Err(e) => s.failed(name, e.unnamed()),
    }
}

#[cfg(test)]
mod tests;
