//! Tests of the page reducer.

use super::*;
use crate::view::failures::SortKey;
use memtrace::model::ErrorType;

const FIXTURE: &[u8] =
    include_bytes!("../../../../../tests/fixtures/smartcomment/locomo/locomo_locomo-1.json");

fn loaded(name: &str, bytes: &[u8]) -> PageState {
    PageState::default().reduce(Action::whole(name, bytes))
}

#[test]
fn demo_loads_and_becomes_current() {
    let s = loaded("demo", crate::DEMO_TRACE);
    assert!(s.errors.is_empty(), "{:?}", s.errors);
    let t = s.current_trace().expect("current");
    assert!(t.summary.operations > 0);
    assert!(t.summary.failures > 0);
    assert_eq!(s.selection.case, Some(0));
}

#[test]
fn bad_file_keeps_loaded_traces() {
    let s = loaded("demo", crate::DEMO_TRACE).reduce(Action::whole(
        "bad.json",
        b"{\"graph_id\":\"x\",\"data\":{".as_slice(),
    ));
    assert_eq!(s.project.traces.len(), 1);
    assert_eq!(s.errors.len(), 1);
    assert_eq!(s.errors[0].name, "bad.json");
    assert!(
        s.errors[0].location.starts_with("line 1"),
        "{:?}",
        s.errors[0]
    );
}

#[test]
fn j_and_k_walk_the_filtered_list_and_stop_at_the_ends() {
    let mut s = loaded("f.json", FIXTURE);
    assert_eq!(s.selection.case, Some(0));
    s = s.reduce(Action::MoveCase(1)).reduce(Action::MoveCase(1));
    assert_eq!(s.selection.case, Some(2));
    s = s.reduce(Action::MoveCase(-10));
    assert_eq!(s.selection.case, Some(0));
    s = s.reduce(Action::FilterType(Some("ResponseError".into())));
    s = s.reduce(Action::MoveCase(1));
    let c = s.selection.case.unwrap();
    assert_eq!(
        crate::view::failures::label_of(&s.current_trace().unwrap().trace.cases[c]),
        "ResponseError"
    );
}

#[test]
fn selecting_a_case_resets_the_node_and_asks_for_a_fit() {
    let s = loaded("f.json", FIXTURE);
    let fits = s.fit_requests;
    let s = s
        .reduce(Action::SelectNode(Some(NodeRef::Var(VarIx(0)))))
        .reduce(Action::Expand(NodeRef::Var(VarIx(0))))
        .reduce(Action::SelectCase(3));
    assert_eq!(s.selection.case, Some(3));
    assert_eq!(s.selection.node, None);
    assert!(s.selection.expanded.is_empty());
    assert!(s.fit_requests > fits);
    let s = s.reduce(Action::SelectCase(99));
    assert_eq!(s.selection.case, Some(3));
}

#[test]
fn escape_closes_help_then_diff_then_selection() {
    let node = NodeRef::Var(VarIx(1));
    let s = loaded("f.json", FIXTURE)
        .reduce(Action::SelectNode(Some(node)))
        .reduce(Action::Compare(Some((VarIx(1), VarIx(2)))))
        .reduce(Action::ToggleHelp);
    let s = s.reduce(Action::Escape);
    assert!(!s.help_open);
    assert!(s.selection.compare.is_some());
    let s = s.reduce(Action::Escape);
    assert!(s.selection.compare.is_none());
    assert_eq!(s.selection.node, Some(node));
    let s = s.reduce(Action::Escape);
    assert_eq!(s.selection.node, None);
}

#[test]
fn whole_trace_toggles_and_a_case_click_returns_to_its_slice() {
    let s = loaded("f.json", FIXTURE).reduce(Action::ToggleWhole);
    assert!(s.whole_trace);
    let fits = s.fit_requests;
    let s = s.reduce(Action::SelectCase(2));
    assert!(!s.whole_trace);
    assert!(s.fit_requests > fits);
}

#[test]
fn g_switches_story_and_graph_and_leads_back_to_the_story_from_the_whole_trace() {
    let s = loaded("demo", crate::DEMO_TRACE);
    assert!(!s.graph_view, "a failure opens as its story");
    let s = s.reduce(Action::ToggleGraph);
    assert!(s.graph_view);
    let s = s.reduce(Action::SelectCase(1));
    assert!(s.graph_view, "the graph stays chosen for the next failure");
    let s = s.reduce(Action::ToggleGraph);
    assert!(!s.graph_view);
    let s = s.reduce(Action::ToggleWhole).reduce(Action::ToggleGraph);
    assert!(
        !s.graph_view && !s.whole_trace,
        "g from the whole trace: the story"
    );
}

#[test]
fn sort_twice_flips_direction() {
    let s = PageState::default().reduce(Action::Sort(SortKey::Query));
    assert!(!s.list.descending);
    let s = s.reduce(Action::Sort(SortKey::Query));
    assert!(s.list.descending);
    let s = s.reduce(Action::Sort(SortKey::Score));
    assert!(!s.list.descending);
}

#[test]
fn bundle_restores_traces_and_settings() {
    let s = loaded("demo.json", crate::DEMO_TRACE)
        .reduce(Action::whole("f.json", FIXTURE))
        .reduce(Action::SelectCase(4))
        .reduce(Action::FilterText("caroline".into()))
        .reduce(Action::SetVerdict {
            query_id: "query:locomo-qa-1-1@1".into(),
            verdict: Some(Verdict {
                error_type: ErrorType::DeletionError,
                op_id: "op-x".into(),
                reason: "deleted".into(),
                confidence: 0.5,
                method: "infoflow".into(),
                evidence_path: Vec::new(),
                cost: None,
                transcript: Vec::new(),
                counterfactual: None,
            }),
        })
        .reduce(Action::SetLabel {
            query_id: "query:locomo-qa-1-1@1".into(),
            label: Some(Label {
                error_type: ErrorType::UpdateError,
                op_id: "op-y".into(),
            }),
        });
    let files: Vec<(String, std::sync::Arc<[u8]>)> = s
        .project
        .traces
        .iter()
        .flat_map(session::Entry::files)
        .collect();
    let refs: Vec<(String, &[u8])> = files.iter().map(|(n, b)| (n.clone(), &**b)).collect();
    let b = crate::state::bundle::export(&refs, &s.settings());
    let r = loaded("project.memtrace.json", &b);
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    assert_eq!(r.project.traces.len(), 2);
    assert_eq!(r.current_trace().unwrap().name, "f.json");
    assert_eq!(r.list.text, "caroline");
    assert_eq!(r.selection.case, Some(4));
    let v = &r.current_trace().unwrap().verdicts["query:locomo-qa-1-1@1"];
    assert_eq!(v.error_type, ErrorType::DeletionError);
    assert!((v.confidence - 0.5).abs() < 1e-9);
    let l = &r.current_trace().unwrap().labels["query:locomo-qa-1-1@1"];
    assert_eq!(l.op_id, "op-y");
    // Clearing the label removes it.
    let cleared = r.reduce(Action::SetLabel {
        query_id: "query:locomo-qa-1-1@1".into(),
        label: None,
    });
    assert!(cleared.current_trace().unwrap().labels.is_empty());
}

#[test]
fn a_separate_annotation_file_adds_cases_to_its_trace() {
    let mut v: serde_json::Value = serde_json::from_slice(FIXTURE).unwrap();
    let anns = serde_json::to_vec(&v["data"]["annotations"].take()).unwrap();
    v["data"].as_object_mut().unwrap().remove("annotations");
    let bare = serde_json::to_vec(&v).unwrap();
    // Annotations before their trace: a clear error, nothing breaks.
    let s = loaded("anns.json", &anns);
    assert_eq!(s.errors.len(), 1);
    assert!(
        s.errors[0]
            .message
            .starts_with("these annotations name questions"),
        "{:?}",
        s.errors
    );
    let s = s
        .reduce(Action::whole("bare.json", bare.as_slice()))
        .reduce(Action::whole("anns.json", anns.as_slice()));
    let t = s.current_trace().unwrap();
    assert_eq!(t.summary.annotations, 6);
    assert_eq!(t.files().len(), 2);
    assert_eq!(s.selection.case, Some(0));
}

#[test]
fn closing_the_current_trace_shows_another() {
    let s = loaded("a.json", crate::DEMO_TRACE).reduce(Action::whole("b.json", FIXTURE));
    assert_eq!(s.current, Some(1));
    let s = s.reduce(Action::Close(1));
    assert_eq!(s.project.traces.len(), 1);
    assert_eq!(s.current_trace().unwrap().name, "a.json");
    let s = s.reduce(Action::Close(0));
    assert!(s.current.is_none());
    // Loading the same name twice replaces it.
    let s = s
        .reduce(Action::whole("a.json", crate::DEMO_TRACE))
        .reduce(Action::whole("a.json", crate::DEMO_TRACE));
    assert_eq!(s.project.traces.len(), 1);
}

#[test]
fn provider_settings_persist_and_highlight_clears_on_a_new_case() {
    let p = ProviderSettings {
        base_url: "http://127.0.0.1:8771/v1".into(),
        remember_key: true,
        ..ProviderSettings::default()
    };
    let s = loaded("f.json", FIXTURE)
        .reduce(Action::SetProvider(p.clone()))
        .reduce(Action::Highlight(vec!["op-1".into()]));
    assert_eq!(s.highlight, vec!["op-1".to_owned()]);
    let json = serde_json::to_string(&s.settings()).unwrap();
    let back: Settings = serde_json::from_str(&json).unwrap();
    let r = loaded("f.json", FIXTURE).reduce(Action::Restore(back));
    assert_eq!(r.provider, p);
    let moved = s.reduce(Action::SelectCase(1));
    assert!(moved.highlight.is_empty());
}

#[test]
fn the_largest_file_is_a_setting_that_persists_and_refuses_larger_files() {
    let size = FIXTURE.len() as u64;
    let s = PageState::default().reduce(Action::SetMaxBytes(Some(size - 1)));
    assert_eq!(s.max_file_bytes(), size - 1);
    assert_eq!(s.load_options().limits.max_file_bytes, size - 1);
    let refused = s.clone().reduce(Action::whole("f.json", FIXTURE));
    assert!(refused.project.traces.is_empty());
    let message = &refused.errors[0].message;
    assert!(message.contains(&format!("({size} bytes)")), "{message}");
    assert!(
        message.contains("“Largest file” in the settings"),
        "{message}"
    );
    // Saved and restored with the other settings; the next file loads once it is raised.
    let json = serde_json::to_string(&s.settings()).unwrap();
    let back: Settings = serde_json::from_str(&json).unwrap();
    let r = PageState::default().reduce(Action::Restore(back));
    assert_eq!(r.max_file_bytes(), size - 1);
    let raised = r
        .reduce(Action::SetMaxBytes(Some(size)))
        .reduce(Action::whole("f.json", FIXTURE));
    assert_eq!(raised.project.traces.len(), 1);
    // Empty field: back to the default.
    let reset = raised.reduce(Action::SetMaxBytes(None));
    assert_eq!(reset.max_file_bytes(), MAX_FILE_BYTES);
    assert_eq!(reset.settings().max_bytes, None);
}

#[test]
fn the_largest_file_field_reads_whole_mib() {
    assert_eq!(typed_max_bytes(" 700 ", 5), Some(700 * 1024 * 1024));
    assert_eq!(typed_max_bytes("", 5), None);
    assert_eq!(typed_max_bytes("0", 5), Some(5));
    assert_eq!(typed_max_bytes("1.5", 5), Some(5));
}

#[test]
fn r_toggles_the_report_view() {
    let s = loaded("f.json", FIXTURE);
    assert!(!s.report_open);
    let s = s.reduce(Action::ToggleReport);
    assert!(s.report_open);
    assert!(!s.reduce(Action::ToggleReport).report_open);
}

#[test]
fn o_toggles_the_optimize_view_without_touching_the_traces() {
    let s = loaded("f.json", FIXTURE);
    assert!(!s.optimize_open);
    let open = s.clone().reduce(Action::ToggleOptimize);
    assert!(open.optimize_open && !open.report_open);
    assert_eq!(open.project.traces.len(), s.project.traces.len());
    assert!(!open.reduce(Action::ToggleOptimize).optimize_open);
}

/// The same page: the same traces (by content: each holds its own copy), errors, selection.
fn same(a: &PageState, b: &PageState) -> bool {
    let traces = |s: &PageState| {
        let t = &s.project.traces;
        t.iter()
            .map(|e| {
                (
                    e.name.clone(),
                    (*e.trace).clone(),
                    e.summary.clone(),
                    e.bytes.to_vec(),
                )
            })
            .collect::<Vec<_>>()
    };
    traces(a) == traces(b)
        && a.errors == b.errors
        && a.current == b.current
        && a.selection == b.selection
        && a.settings() == b.settings()
}

#[test]
fn a_trace_parsed_in_steps_shows_as_when_loaded_whole() {
    let is_trace = |b: &[u8]| session::kind_of(b) == session::FileKind::Trace;
    let bad: &[u8] = b"{\"graph_id\":\"x\",\"data\":{";
    for (name, bytes) in [
        ("locomo-1", FIXTURE),
        ("demo", crate::DEMO_TRACE),
        ("bad.json", bad),
    ] {
        assert!(is_trace(bytes), "{name}");
        let ready = opened_in_steps(name, bytes);
        assert!(matches!(ready, session::Ready::Trace { .. }), "{name}");
        let stepped = loaded("demo", crate::DEMO_TRACE).reduce(Action::Opened(Box::new(ready)));
        let whole = loaded("demo", crate::DEMO_TRACE).reduce(Action::whole(name, bytes));
        assert!(same(&stepped, &whole), "{name}: the states differ");
    }
    let project =
        crate::state::bundle::export(&[("demo".into(), crate::DEMO_TRACE)], &Settings::default());
    assert!(
        !is_trace(&project),
        "a project bundle is not parsed as a trace"
    );
    assert!(matches!(
        opened_in_steps("p.json", &project),
        session::Ready::Whole { .. }
    ));
}

/// File `name` opened by `session::Opening` step by step, as `services::files` does.
fn opened_in_steps(name: &str, bytes: &[u8]) -> session::Ready {
    let options = memtrace::format::LoadOptions::default();
    let mut o = session::Opening::new(name, bytes.into(), options);
    loop {
        if let Some(r) = o.step() {
            break r;
        }
    }
}

#[test]
fn the_first_verdict_the_story_shows_is_stored_in_the_project() {
    let s = PageState::default().reduce(Action::whole("f.json", FIXTURE));
    let t = s.current_trace().unwrap();
    let shown = &t.trace.cases[s.selection.case.unwrap()];
    assert_eq!(t.verdicts[&shown.query_id].method, "infoflow");
    assert_eq!(t.verdicts.len(), 1, "only the case on screen");
    let s = s.reduce(Action::MoveCase(1));
    let t = s.current_trace().unwrap();
    assert_eq!(t.verdicts.len(), 2, "the next one once it is shown");
}
