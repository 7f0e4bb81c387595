//! What a host shows of a trace, kept in the project: the op roles in force, inferred once per
//! set of overrides, and the first verdict on a case (info-flow's, stored like any other, so
//! what is on screen is what is saved, exported and tallied).

use std::sync::Arc;

use super::super::roles::{infoflow_verdict, role_config};
use super::super::verdict::Verdict;
use super::Project;
use crate::attribution::Roles;

impl Project {
    /// The op roles of trace `i` under its role overrides: those inferred while it loaded when
    /// it has none, else inferred here, once per set of overrides (kept in the entry until the
    /// overrides or the trace's cases change). `None` when there is no trace `i`.
    pub fn roles_in_force(&mut self, i: usize) -> Option<Arc<Roles>> {
        let overrides = self
            .roles
            .get(&self.traces.get(i)?.name)
            .cloned()
            .unwrap_or_default();
        let e = self.traces.get_mut(i)?;
        if let Some((o, r)) = &e.in_force {
            if *o == overrides {
                return Some(r.clone());
            }
        }
        let roles = match &e.inferred {
            Some(r) if overrides.is_empty() => r.clone(),
            _ => Arc::new(Roles::infer(&e.trace, &role_config(&overrides))),
        };
        e.in_force = Some((overrides, roles.clone()));
        Some(roles)
    }

    /// The verdict a host shows first on case `case` of trace `i`: the one stored, else
    /// info-flow's under the roles in force, stored now. `None` when there is no such case or
    /// info-flow cannot attribute it.
    pub fn first_verdict(&mut self, i: usize, case: usize) -> Option<&Verdict> {
        let e = self.traces.get(i)?;
        let (name, trace) = (e.name.clone(), e.trace.clone());
        let query_id = trace.cases.get(case)?.query_id.clone();
        let stored = self
            .verdicts
            .get(&name)
            .is_some_and(|v| v.contains_key(&query_id));
        if !stored {
            let roles = self.roles_in_force(i)?;
            let verdict = infoflow_verdict(&trace, &roles, trace.cases.get(case)?).ok()?;
            self.set_verdict(&name, &query_id, verdict).ok()?;
        }
        self.verdicts.get(&name)?.get(&query_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &[u8] =
        include_bytes!("../../../tests/fixtures/smartcomment/locomo/locomo_locomo-1.json");

    #[test]
    fn the_first_verdict_shown_is_stored_once_and_a_stored_one_is_kept() {
        let mut p = Project::default();
        p.open("f.json", FIXTURE).unwrap();
        let q = p.traces[0].trace.cases[0].query_id.clone();
        let first = p.first_verdict(0, 0).cloned().unwrap();
        assert_eq!(first.method, "infoflow");
        assert!(!first.evidence_path.is_empty());
        assert_eq!(p.verdicts["f.json"][&q], first);
        let llm = Verdict {
            method: "graphtrace".into(),
            ..first
        };
        p.set_verdict("f.json", &q, llm.clone()).unwrap();
        assert_eq!(p.first_verdict(0, 0), Some(&llm));
        assert!(p.first_verdict(0, 999).is_none() && p.first_verdict(9, 0).is_none());
        let roles = p.roles_in_force(0).unwrap();
        assert!(
            Arc::ptr_eq(&roles, &p.roles_in_force(0).unwrap()),
            "inferred once"
        );
    }
}
