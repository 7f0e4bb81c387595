//! Tests of the roles panel's logic and of role overrides in the page state.

use std::collections::BTreeMap;

use super::*;
use crate::state::{Action, PageState};
use memtrace::attribution::RoleConfig;
use memtrace::attribution::Roles;
use memtrace::session::{infoflow_verdict, op_role, role_rows, Verdict};

fn demo() -> PageState {
    PageState::default().reduce(Action::whole("demo.json", crate::DEMO_TRACE))
}

/// Attributes every case of the trace on screen with info-flow, as "Attribute all" does.
fn attribute_all(mut s: PageState) -> PageState {
    let v = s.current_trace().expect("a trace on screen");
    let (trace, overrides) = (v.trace.clone(), v.roles.clone());
    let roles = Roles::infer(&trace, &memtrace::session::role_config(&overrides));
    for c in &trace.cases {
        let v = infoflow_verdict(&trace, &roles, c).expect("info-flow attributes the case");
        s = s.reduce(Action::SetVerdict {
            query_id: c.query_id.clone(),
            verdict: Some(v),
        });
    }
    s
}

/// The op name of the verdict on the first case.
fn first_verdict(s: &PageState) -> (String, Verdict) {
    let t = s.current_trace().expect("a trace on screen");
    let q = &t.trace.cases[0].query_id;
    let v = t.verdicts.get(q).expect("a verdict on case 0").clone();
    let name = memtrace::attribution::results::op_name(&t.trace, &v.op_id).clone();
    (name, v)
}

#[test]
fn rows_list_every_op_name_once_with_its_inferred_role() {
    let s = demo();
    let t = &s.current_trace().unwrap().trace;
    let rows = role_rows(t, &BTreeMap::new());
    assert_eq!(rows.iter().map(|r| r.count).sum::<usize>(), t.ops.len());
    let mut names: Vec<&str> = rows.iter().map(|r| r.op_name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), rows.len(), "one row per op name");
    let by_name = Roles::infer(t, &RoleConfig::default()).by_name(t);
    for (r, n) in rows.iter().zip(&by_name) {
        assert_eq!((r.role, r.inferred, r.overridden), (n.role, n.role, false));
        assert!(!r.reason.is_empty(), "{} has a reason", r.op_name);
    }
    // The demo is a Mem0-style pipeline: extraction, update, retrieval and response all appear.
    for want in [
        OpRole::Extraction,
        OpRole::Update,
        OpRole::Retrieval,
        OpRole::Response,
    ] {
        assert!(
            rows.iter().any(|r| r.role == want),
            "no {want} op: {rows:?}"
        );
    }
}

#[test]
fn an_override_shows_as_such_and_keeps_the_inferred_role() {
    let s = demo();
    let t = &s.current_trace().unwrap().trace;
    let plain = role_rows(t, &BTreeMap::new());
    let target = plain
        .iter()
        .find(|r| r.role == OpRole::Extraction)
        .expect("an extraction op");
    let overrides = BTreeMap::from([(target.op_name.clone(), OpRole::Update)]);
    let over = role_rows(t, &overrides);
    let row = over.iter().find(|r| r.op_name == target.op_name).unwrap();
    assert_eq!(
        (row.role, row.inferred, row.overridden),
        (OpRole::Update, OpRole::Extraction, true)
    );
    assert_eq!(
        over.iter().filter(|r| r.overridden).count(),
        1,
        "only the overridden name changes"
    );
}

#[test]
fn overriding_the_blamed_op_recomputes_the_infoflow_verdict_and_reset_restores_it() {
    let s = attribute_all(demo());
    let before = s.current_trace().unwrap().verdicts.clone();
    let (name, v) = first_verdict(&s);
    let t = &s.current_trace().unwrap().trace;
    let (role, _) = op_role(t, &Roles::infer(t, &RoleConfig::default()), &v.op_id).unwrap();
    assert_eq!(
        role.error_type().map(memtrace::model::ErrorType::as_str),
        Some(v.error_type.as_str())
    );
    // Another role that can be at fault.
    let other = [OpRole::Update, OpRole::Extraction]
        .into_iter()
        .find(|&r| r != role)
        .unwrap();
    let s = s.reduce(Action::SetRole {
        op_name: name.clone(),
        role: Some(other),
    });
    let (_, after) = first_verdict(&s);
    assert_ne!(
        (&after.error_type, &after.op_id),
        (&v.error_type, &v.op_id),
        "the verdict follows the override"
    );
    // The new verdict agrees with the roles in force.
    let lt = s.current_trace().unwrap();
    let roles = Roles::infer(&lt.trace, &memtrace::session::role_config(lt.roles));
    let (now, basis) = op_role(&lt.trace, &roles, &after.op_id).unwrap();
    assert_eq!(
        now.error_type().map(memtrace::model::ErrorType::as_str),
        Some(after.error_type.as_str())
    );
    if after.op_id == v.op_id {
        assert_eq!(basis, Basis::User);
    }
    // Reset: the verdicts are the first ones again.
    let s = s.reduce(Action::SetRole {
        op_name: name,
        role: None,
    });
    assert_eq!(*s.current_trace().unwrap().verdicts, before);
    assert!(s.current_trace().unwrap().roles.is_empty());
}

#[test]
fn verdicts_of_other_methods_are_left_alone() {
    let s = demo();
    let t = s.current_trace().unwrap().trace.clone();
    let c = &t.cases[0];
    let llm = Verdict {
        error_type: memtrace::model::ErrorType::RetrievalError,
        op_id: t.ops[0].op_id.clone(),
        reason: "an LLM said so".into(),
        confidence: 0.0,
        method: "graphtrace".into(),
        evidence_path: Vec::new(),
        cost: None,
        transcript: Vec::new(),
        counterfactual: None,
    };
    let s = s
        .reduce(Action::SetVerdict {
            query_id: c.query_id.clone(),
            verdict: Some(llm.clone()),
        })
        .reduce(Action::SetRole {
            op_name: t.ops[0].op_name.clone(),
            role: Some(OpRole::Other),
        });
    assert_eq!(
        s.current_trace().unwrap().verdicts.get(&c.query_id),
        Some(&llm)
    );
}

#[test]
fn overrides_are_saved_per_trace_and_come_back_from_a_bundle() {
    let s = demo().reduce(Action::SetRole {
        op_name: "memory_system.extract_facts".into(),
        role: Some(OpRole::Update),
    });
    let settings = s.settings();
    assert_eq!(
        settings.project.roles.get("demo.json"),
        Some(&BTreeMap::from([(
            "memory_system.extract_facts".to_owned(),
            OpRole::Update
        )]))
    );
    let bytes = crate::state::bundle::export(&[("demo.json".into(), crate::DEMO_TRACE)], &settings);
    let back = PageState::default().reduce(Action::whole("memtrace-project.json", &bytes));
    assert_eq!(
        back.current_trace().unwrap().roles,
        s.current_trace().unwrap().roles
    );
    // Loading the same file again (a re-export of the run) keeps the user's roles.
    let again = back.reduce(Action::whole("demo.json", crate::DEMO_TRACE));
    assert_eq!(again.current_trace().unwrap().roles.len(), 1);
}

#[test]
fn a_verdict_that_cannot_be_given_any_more_is_dropped_and_said_why() {
    let s = attribute_all(demo());
    let (name, _) = first_verdict(&s);
    // The blamed extraction op made a judge: info-flow finds no reader of the evidence.
    let s = s.reduce(Action::SetRole {
        op_name: name,
        role: Some(OpRole::Judge),
    });
    let t = s.current_trace().unwrap();
    assert!(!t.verdicts.contains_key(&t.trace.cases[0].query_id));
    assert!(
        s.errors.iter().any(
            |e| e.message.contains(&t.trace.cases[0].query_id) && e.message.contains("removed")
        ),
        "{:?}",
        s.errors
    );
}
