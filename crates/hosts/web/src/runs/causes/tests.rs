//! Tests of the "find all causes" state: a search runs, reports progress, ends with the core's
//! set; its replays list the set's ops as causes; a trace loaded again hides old searches.

use super::*;
use futures_executor::block_on;
use memtrace::attribution::{RoleConfig, Roles};
use memtrace_memsys::replay::decisive_set;
use memtrace_memsys::simulated::SimulatedLlm;

fn demo() -> Arc<Trace> {
    Arc::new(
        memtrace::load(crate::DEMO_TRACE, memtrace::LoadOptions::default())
            .unwrap()
            .trace,
    )
}

fn start(t: &Arc<Trace>, q: &str) -> CausesAction {
    CausesAction::Start {
        name: "demo".into(),
        trace: t.clone(),
        query_id: q.into(),
    }
}

#[test]
fn a_search_runs_reports_progress_and_ends_with_the_cores_set() {
    let t = demo();
    let case = &t.cases[0];
    let q = case.query_id.clone();
    let s = Causes::default()
        .reduce(start(&t, &q))
        .reduce(CausesAction::Progress {
            name: "demo".into(),
            query_id: q.clone(),
            calls: 7,
        });
    assert_eq!(s.get("demo", &t, &q), Some(&Search::Running { calls: 7 }));
    let roles = Roles::infer(&t, &RoleConfig::default());
    let set = block_on(decisive_set(&SimulatedLlm, &t, &roles, case, BUDGET)).unwrap();
    assert_eq!(set.outcome, SetOutcome::Found, "{set:?}");
    let s = s.reduce(CausesAction::Finish {
        name: "demo".into(),
        query_id: q.clone(),
        result: Ok(set.clone()),
    });
    let got = s.get("demo", &t, &q).unwrap();
    assert_eq!(got.causes(), set.ops.as_slice());
    assert!(!got.causes().is_empty());
    // Another case has no search; a late progress report does not reopen a finished one.
    assert_eq!(s.get("demo", &t, &t.cases[1].query_id), None);
    let s = s.reduce(CausesAction::Progress {
        name: "demo".into(),
        query_id: q.clone(),
        calls: 99,
    });
    assert!(matches!(s.get("demo", &t, &q), Some(Search::Done(_))));
}

#[test]
fn replays_name_the_sets_ops_as_causes_and_the_others_by_name() {
    let t = demo();
    let roles = Roles::infer(&t, &RoleConfig::default());
    let set = block_on(decisive_set(&SimulatedLlm, &t, &roles, &t.cases[0], BUDGET)).unwrap();
    let rows = replay_rows(&t, &set);
    assert_eq!(rows.len(), set.replays.len());
    assert!(!rows.is_empty());
    // The first replay repairs every candidate: each op of the set is tagged with its place.
    let first = &rows[0];
    assert_eq!(first.n, 1);
    assert!(first.rescued);
    for (i, op) in set.ops.iter().enumerate() {
        let tag = first.repaired.iter().find(|g| g.op_id == *op).unwrap();
        assert_eq!(tag.cause, Some(i + 1));
        assert_eq!(tag.label, format!("cause {}", i + 1));
    }
    for g in first.repaired.iter().filter(|g| g.cause.is_none()) {
        assert!(!g.label.starts_with("cause"), "{g:?}");
        assert!(!g.label.contains('.'), "{g:?}");
    }
    assert_eq!(outcome_label(SetOutcome::NotReplayable), "not replayable");
}

#[test]
fn a_failed_search_stops_and_a_reloaded_trace_hides_old_searches() {
    let t = demo();
    let q = t.cases[0].query_id.clone();
    let s = Causes::default()
        .reduce(start(&t, &q))
        .reduce(CausesAction::Finish {
            name: "demo".into(),
            query_id: q.clone(),
            result: Err("cancelled".into()),
        });
    assert_eq!(
        s.get("demo", &t, &q),
        Some(&Search::Stopped("cancelled".into()))
    );
    let again = demo();
    assert_eq!(s.get("demo", &again, &q), None);
}
