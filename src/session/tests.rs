//! Each session operation over the demo trace, and bad input giving a clear error.

use super::*;
use crate::attribution::roles::OpRole;
use crate::attribution::InfoFlow;
use crate::format::{bundle, LoadOptions};
use crate::model::{AnnotationRecord, ErrorType, Mark};
use std::collections::BTreeMap;

const DEMO: &[u8] = include_bytes!("../../www/demo.json");

fn demo() -> Project {
    let mut p = Project::default();
    let added = p.open("demo.json", DEMO).unwrap();
    assert_eq!(
        added,
        Added::Traces {
            added: vec![0],
            errors: vec![],
            settings: serde_json::Value::Null,
        }
    );
    p
}

#[test]
fn a_trace_a_bundle_and_annotations_are_each_sorted() {
    assert!(matches!(
        open("demo.json", DEMO, LoadOptions::default()).unwrap(),
        Opened::Trace(_)
    ));
    let settings = serde_json::json!({"rules": ["output~never-matches-xyz"], "zoom": 2});
    let ann = br#"[{"query_id": "q", "final_error_type": "UpdateError", "op_id": "o"}]"#;
    let b = bundle::export(
        &[
            ("a.json".to_owned(), DEMO),
            ("a.annotations.json".to_owned(), &ann[..]),
        ],
        &settings,
    );
    let Opened::Bundle {
        traces,
        annotations,
        settings: s,
        raw_settings,
    } = open("p.memtrace", &b, LoadOptions::default()).unwrap()
    else {
        panic!("a bundle")
    };
    assert_eq!((traces.len(), traces[0].name.as_str()), (1, "a.json"));
    assert!(traces[0].loaded.is_ok());
    // The page saves annotation files next to their trace: sorted apart, not read as traces.
    assert_eq!(annotations.len(), 1);
    assert_eq!(annotations[0].name, "a.annotations.json");
    assert_eq!(annotations[0].records.as_ref().map(Vec::len), Ok(1));
    assert_eq!(s.rules, vec!["output~never-matches-xyz".to_owned()]);
    assert_eq!(raw_settings["zoom"], 2);
    assert!(matches!(
        open("a.annotations.json", ann, LoadOptions::default()).unwrap(),
        Opened::Annotations(r) if r.len() == 1
    ));
}

#[test]
fn bad_files_give_errors_that_name_the_file() {
    let e = open("x.json", b"{not json", LoadOptions::default()).unwrap_err();
    assert!(matches!(e, SessionError::Format { .. }));
    assert!(e.to_string().starts_with("x.json: "), "{e}");
    let b = bundle::export(
        &[("a.json".to_owned(), DEMO)],
        &serde_json::json!({"rules": ["bogus=1"]}),
    );
    // A bad saved rule loses nothing: the bundle opens, its trace loads, the rule is named.
    assert!(open("p.memtrace", &b, LoadOptions::default()).is_ok());
    let mut p = Project::default();
    let Added::Traces { added, errors, .. } = p.open("p.memtrace", &b).unwrap() else {
        panic!("traces")
    };
    assert_eq!(added, vec![0]);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].0, "p.memtrace");
    assert!(
        errors[0].1.starts_with("p.memtrace: settings.rules[0]"),
        "{errors:?}"
    );
    assert!(p.rules.is_empty());
    let mut p = demo();
    let first_query = p.traces[0].trace.cases[0].query_id.clone();
    let ann = format!(
        r#"[{{"query_id": "{first_query}x", "final_error_type": "UpdateError", "op_id": "o"}}]"#
    );
    let e = p.open("a.annotations.json", ann.as_bytes()).unwrap_err();
    assert!(matches!(e, SessionError::Unfitting { .. }), "{e}");
}

#[test]
fn a_bundle_adds_its_traces_with_their_saved_analysis() {
    let mut p = Project::default();
    let b = bundle::export(
        &[("a.json".to_owned(), DEMO), ("bad.json".to_owned(), b"{")],
        &serde_json::json!({"current": "a.json"}),
    );
    let Added::Traces { added, errors, .. } = p.open("p.memtrace", &b).unwrap() else {
        panic!("traces")
    };
    assert_eq!(added, vec![0]);
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].0, "bad.json");
    assert_eq!(p.current.as_deref(), Some("a.json"));
    assert_eq!(p.settings().current.as_deref(), Some("a.json"));
}

#[test]
fn verdicts_fill_pending_and_the_tally() {
    let mut p = demo();
    let t = p.traces[0].trace.clone();
    let n = t.cases.len();
    assert!(n > 0);
    assert_eq!(
        p.pending("demo.json", None).unwrap(),
        (0..n).collect::<Vec<_>>()
    );
    let a = InfoFlow::default().attribute(&t, &t.cases[0]).unwrap();
    p.set_verdict("demo.json", &t.cases[0].query_id, Verdict::from(&a))
        .unwrap();
    assert_eq!(
        p.pending("demo.json", None).unwrap(),
        (1..n).collect::<Vec<_>>()
    );
    let tally = p.tally("demo.json", Source::Verdicts).unwrap();
    assert_eq!((tally.judged, tally.cases), (1, n));
    assert_eq!(tally.by_type.len(), ErrorType::MEMORY.len());
    assert_eq!(
        tally.bar("type", a.error_type.as_str()).unwrap().cases,
        vec![0]
    );
    assert_eq!(tally.by_op[0].key, a.op_name);
    p.labels.entry("demo.json".into()).or_default().insert(
        t.cases[0].query_id.clone(),
        Label {
            error_type: ErrorType::AnnotationError,
            op_id: "nowhere".into(),
        },
    );
    let l = p.tally("demo.json", Source::LabelsOverVerdicts).unwrap();
    assert_eq!(l.by_type.last().unwrap().key, "AnnotationError");
    assert_eq!(l.bar("op", "nowhere").unwrap().cases, vec![0]);
    assert!(matches!(
        p.pending("nope", None),
        Err(SessionError::NoTrace(_))
    ));
}

#[test]
fn a_role_change_gives_the_infoflow_verdicts_again_under_the_new_roles() {
    let mut p = demo();
    let t = p.traces[0].trace.clone();
    let q = t.cases[0].query_id.clone();
    let a = InfoFlow::default().attribute(&t, &t.cases[0]).unwrap();
    let blamed = t.op_by_id(&a.op_id).unwrap();
    let role = crate::attribution::Roles::infer(&t, &crate::attribution::RoleConfig::default())
        .role(blamed);
    let name = t.op(blamed).op_name.clone();
    // A stale info-flow verdict is given again; another method's verdict is kept.
    let stale = Verdict {
        op_id: "stale".into(),
        ..Verdict::from(&a)
    };
    p.set_verdict("demo.json", &q, stale).unwrap();
    let other = Verdict {
        method: "graphtrace".into(),
        op_id: "kept".into(),
        ..Verdict::from(&a)
    };
    p.set_verdict("demo.json", "another question", other.clone())
        .unwrap();
    let problems = p.set_role("demo.json", &name, Some(role)).unwrap();
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(p.roles["demo.json"][&name], role);
    assert_eq!(p.verdicts["demo.json"][&q], Verdict::from(&a));
    assert_eq!(p.verdicts["demo.json"]["another question"], other);
    // The blamed op's name taken for a judge: info-flow blames another op, or says why not.
    let problems = p.set_role("demo.json", &name, Some(OpRole::Judge)).unwrap();
    let now = p.verdicts["demo.json"].get(&q);
    assert!(now.is_none_or(|v| v.op_id != a.op_id), "{now:?}");
    assert_eq!(now.is_none(), problems.len() == 1, "{problems:?}");
    p.set_role("demo.json", &name, None).unwrap();
    assert!(p.roles["demo.json"].is_empty());
    let e = p.set_role("demo.json", "no-such-op", None).unwrap_err();
    assert!(e.to_string().contains("no-such-op"), "{e}");
}

#[test]
fn rules_and_marks_find_the_cases_again() {
    let mut p = demo();
    let before = p.traces[0].trace.cases.len();
    let e = p.set_rules(&["bogus=1".into()]).unwrap_err();
    assert!(e.to_string().starts_with("rules[0]: "), "{e}");
    assert!(p.rules.is_empty(), "a bad rule changes nothing");
    p.set_rules(&["output~.".into()]).unwrap();
    assert!(p.traces[0].trace.cases.len() >= before);
    assert_eq!(p.settings().rules, vec!["output~.".to_owned()]);
    let e = p
        .mark(
            "demo.json",
            Mark {
                query_id: "nope".into(),
                gold: None,
            },
        )
        .unwrap_err();
    assert!(matches!(e, SessionError::NoQuestion { .. }), "{e}");
    p.set_rules(&[]).unwrap();
    let t = &p.traces[0].trace;
    let q = t.questions();
    let unfailed = q
        .iter()
        .map(|&v| t.var(v).full_node_id.clone())
        .find(|id| t.cases.iter().all(|c| &c.query_id != id))
        .expect("the demo has a question that did not fail");
    p.mark(
        "demo.json",
        Mark {
            query_id: unfailed.clone(),
            gold: Some("x".into()),
        },
    )
    .unwrap();
    assert!(p.traces[0]
        .trace
        .cases
        .iter()
        .any(|c| c.query_id == unfailed));
}

#[test]
fn pending_skips_only_the_cases_with_a_verdict_of_the_method() {
    let mut p = demo();
    let t = p.traces[0].trace.clone();
    let n = t.cases.len();
    assert!(n >= 2);
    let a = InfoFlow::default().attribute(&t, &t.cases[1]).unwrap();
    p.set_verdict("demo.json", &t.cases[1].query_id, Verdict::from(&a))
        .unwrap();
    let todo = p.pending("demo.json", Some("graphtrace")).unwrap();
    assert_eq!(
        todo,
        (0..n).collect::<Vec<_>>(),
        "an infoflow verdict leaves graphtrace to do"
    );
    let todo = p.pending("demo.json", Some(a.method.as_str())).unwrap();
    assert!(!todo.contains(&1) && todo.contains(&0));
    assert_eq!(p.pending("demo.json", None).unwrap(), todo);
}

#[test]
fn annotations_go_to_the_trace_that_has_their_questions_and_open_after_it() {
    let p = demo();
    let t: &crate::model::Trace = &p.traces[0].trace;
    let record = |q: &str| -> AnnotationRecord {
        serde_json::from_value(serde_json::json!({ "query_id": q })).unwrap()
    };
    let mine = [record(&t.cases[0].query_id)];
    let traces = [t, t];
    assert_eq!(annotation_target(traces, None, "a.json", &mine).unwrap(), 0);
    assert_eq!(
        annotation_target(traces, Some(1), "a.json", &mine).unwrap(),
        1
    );
    let e = annotation_target(traces, Some(0), "a.json", &[record("q:nowhere")]).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("a.json: these annotations name questions"),
        "{e}"
    );
    assert!(e.to_string().contains("q:nowhere"), "{e}");

    let ann = br#"[{"query_id": "q", "final_error_type": "UpdateError", "op_id": "o"}]"#;
    // Compressed files sort by what they hold.
    let mut files = vec![
        ("a.annotations.json".to_owned(), ann.to_vec()),
        ("a.json".to_owned(), DEMO.to_vec()),
        ("b.annotations.json.gz".to_owned(), gzip(ann)),
        ("b.json.gz".to_owned(), gzip(DEMO)),
    ];
    opening_order(&mut files);
    let names: Vec<&str> = files.iter().map(|f| f.0.as_str()).collect();
    assert_eq!(
        names,
        [
            "a.json",
            "b.json.gz",
            "a.annotations.json",
            "b.annotations.json.gz"
        ]
    );
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    z.write_all(bytes).unwrap();
    z.finish().unwrap()
}

#[test]
fn a_compressed_file_is_read_under_its_plain_name() {
    let packed = gzip(DEMO);
    let (name, bytes) = readable("b.json.gz", &packed, &LoadOptions::default()).unwrap();
    assert_eq!((name.as_str(), &*bytes), ("b.json", DEMO));
    let (name, bytes) = readable("b.json", DEMO, &LoadOptions::default()).unwrap();
    assert_eq!((name.as_str(), &*bytes), ("b.json", DEMO));
    // A gzip start that does not decompress: the file is named in the error.
    let e = readable("c.json.gz", &[0x1f, 0x8b, 0, 1, 2], &LoadOptions::default()).unwrap_err();
    assert!(e.to_string().starts_with("c.json.gz: "), "{e}");
    // A host showing the name beside it gets the rest of the sentence.
    assert!(e.to_string().ends_with(&e.unnamed()) && !e.unnamed().contains("c.json"));
    assert_eq!(kind_of(&gzip(DEMO)), FileKind::Trace);
}

#[test]
fn rules_taken_away_take_their_cases_with_them() {
    // A judge memtrace does not recognize (the answer cut from its prompt): only a rule finds it.
    let file = include_bytes!("../../tests/fixtures/otlp/mem0_blind_judge.jsonl");
    let mut p = Project::default();
    p.open("judged.jsonl", file).unwrap();
    assert!(p.traces[0].trace.cases.is_empty());
    p.set_rules(&["span=check_answer output~WRONG".into()])
        .unwrap();
    assert_eq!(p.traces[0].trace.cases.len(), 1);
    p.set_rules(&[]).unwrap();
    assert!(
        p.traces[0].trace.cases.is_empty(),
        "the rule's case is gone with it"
    );
}

const LOCOMO: &[u8] =
    include_bytes!("../../tests/fixtures/smartcomment/locomo/locomo_locomo-1.json");

/// The LoCoMo fixture without its annotations, and its annotations as a separate file.
fn split_annotations() -> (crate::Trace, Vec<u8>) {
    let mut v: serde_json::Value = serde_json::from_slice(LOCOMO).unwrap();
    let anns = v["data"]["annotations"].take();
    v["data"].as_object_mut().unwrap().remove("annotations");
    let bare = crate::load(&serde_json::to_vec(&v).unwrap(), LoadOptions::default())
        .unwrap()
        .trace;
    (bare, serde_json::to_vec_pretty(&anns).unwrap())
}

#[test]
fn an_annotation_file_merges_into_its_trace() {
    use crate::format::sidecar;
    let (bare, file) = split_annotations();
    assert_eq!(kind_of(&file), FileKind::Annotations);
    assert_eq!(kind_of(LOCOMO), FileKind::Trace);
    let anns = sidecar::parse(&file).unwrap();
    assert_eq!(anns.len(), 6);
    assert_eq!(
        annotation_target([&bare], None, "a.json", &anns).unwrap(),
        0
    );
    let merged = sidecar::merged(&bare, anns).unwrap();
    let annotated = merged.cases.iter().filter(|c| c.annotation.is_some());
    assert_eq!(annotated.count(), 6);
}

#[test]
fn annotation_files_wrapped_or_broken() {
    use crate::format::sidecar;
    let (bare, file) = split_annotations();
    let list: serde_json::Value = serde_json::from_slice(&file).unwrap();
    let wrapped = serde_json::to_vec(&serde_json::json!({ "annotations": list })).unwrap();
    assert_eq!(sidecar::parse(&wrapped).unwrap().len(), 6);
    let err = sidecar::parse(b"[{\"query_id\": ").unwrap_err().to_string();
    assert!(err.contains("line 1, column"), "{err}");
    let err = sidecar::parse(b"{\"x\": 1}").unwrap_err().to_string();
    assert!(err.contains("expected a list"), "{err}");
    // An annotation naming an op the trace lacks is refused with its location.
    let mut anns = sidecar::parse(&file).unwrap();
    anns[0].final_op_id = "op-missing".into();
    let err = sidecar::merged(&bare, anns).unwrap_err().to_string();
    assert!(err.contains("annotations[0]"), "{err}");
}

#[test]
fn every_question_and_op_name_is_listed_once() {
    // A judge memtrace does not recognize: two questions, neither failed until one is marked.
    let file = include_bytes!("../../tests/fixtures/otlp/mem0_blind_judge.jsonl");
    let mut t = crate::load(file, LoadOptions::default()).unwrap().trace;
    let listed = questions(&t, &[]);
    assert_eq!(listed.len(), 2);
    assert!(listed.iter().all(|q| q.case.is_none() && !q.marked));
    let mark = Mark {
        query_id: listed[0].query_id.clone(),
        gold: None,
    };
    t.apply_rules(&[], std::slice::from_ref(&mark)).unwrap();
    let listed = questions(&t, &[mark]);
    assert!(listed[0].marked && listed[0].case == Some(0), "{listed:?}");

    let rows = role_rows(
        &t,
        &std::collections::BTreeMap::from([("x".to_owned(), OpRole::Update)]),
    );
    assert_eq!(rows.iter().map(|r| r.count).sum::<usize>(), t.ops.len());
    assert!(rows.iter().all(|r| !r.overridden), "no op is named x");
    let name = rows[0].op_name.clone();
    let rows = role_rows(
        &t,
        &std::collections::BTreeMap::from([(name, OpRole::Deletion)]),
    );
    assert!(rows[0].overridden && rows[0].role == OpRole::Deletion);
}

#[test]
fn a_file_opened_in_steps_is_the_file_opened_whole() {
    let mut stepped = Project::default();
    let mut o = Opening::new("demo.json", DEMO.into(), LoadOptions::default());
    let (mut steps, mut last) = (0, 0.0);
    let ready = loop {
        assert!(o.progress() >= last, "progress goes forward");
        last = o.progress();
        if let Some(r) = o.step() {
            break r;
        }
        steps += 1;
    };
    assert!(steps > 1, "a trace takes more than one step");
    assert!(o.step().is_none(), "a file is given back once");
    let Ready::Trace { roles, .. } = &ready else {
        panic!("a trace")
    };
    let roles = roles.clone().expect("the roles inferred on the way");
    stepped.take(ready).unwrap();
    let whole = demo();
    let (a, b) = (&stepped.traces[0], &whole.traces[0]);
    assert_eq!(*a.trace, *b.trace);
    assert_eq!(a.summary, b.summary);
    assert_eq!(
        *roles,
        crate::attribution::Roles::infer(&b.trace, &role_config(&BTreeMap::new()))
    );
    // A compressed bundle: decompressed, named without `.gz`, opened whole.
    let b = bundle::export(&[("a.json".to_owned(), DEMO)], &serde_json::json!({}));
    let gz = {
        use std::io::Write;
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(&b).unwrap();
        e.finish().unwrap()
    };
    let mut o = Opening::new("p.json.gz", gz.into(), LoadOptions::default());
    let ready = o.step().expect("a bundle is one step");
    assert!(matches!(&ready, Ready::Whole { name, .. } if name == "p.json"));
    let mut p = Project::default();
    assert!(matches!(p.take(ready), Ok(Added::Traces { added, .. }) if added == vec![0]));
    // Bytes that do not decompress: the error names the file.
    let mut o = Opening::new(
        "x.json.gz",
        (&[0x1f, 0x8b, 1, 2][..]).into(),
        LoadOptions::default(),
    );
    let ready = o.step().unwrap();
    assert_eq!(ready.name(), "x.json.gz");
    assert!(matches!(p.take(ready), Err(SessionError::Format { .. })));
}

#[test]
fn closing_a_trace_forgets_what_was_added_to_it_and_a_reload_puts_it_back() {
    let mut p = demo();
    let t = p.traces[0].trace.clone();
    let q = t.questions()[0];
    let query_id = t.var(q).full_node_id.clone();
    let a = InfoFlow::default().attribute(&t, &t.cases[0]).unwrap();
    let case_query = t.cases[0].query_id.clone();
    p.set_verdict("demo.json", &case_query, Verdict::from(&a))
        .unwrap();
    let label = Label {
        error_type: ErrorType::UpdateError,
        op_id: "op-x".into(),
    };
    p.set_label("demo.json", &case_query, Some(label.clone()))
        .unwrap();
    p.mark(
        "demo.json",
        Mark {
            query_id: query_id.clone(),
            gold: Some("  ".into()),
        },
    )
    .unwrap();
    assert_eq!(p.view(0).marks[0].gold, None, "a blank gold answer is none");
    assert_eq!(p.view(0).labels[&case_query], label);
    let saved = p.settings();
    assert_eq!(saved.verdicts["demo.json"].len(), 1);
    assert_eq!(saved.labels["demo.json"].len(), 1);
    p.close(0);
    assert!(p.traces.is_empty() && p.verdicts.is_empty() && p.labels.is_empty());
    assert!(p.marks.is_empty() && p.get(0).is_none());
    assert!(p.settings().verdicts.is_empty());
    // Reopened and restored: all of it is back, and the mark finds its case again.
    let mut p = demo();
    let before = p.traces[0].trace.cases.len();
    assert!(p.restore(saved).is_empty());
    let v = p.view(0);
    assert_eq!((v.verdicts.len(), v.labels.len(), v.marks.len()), (1, 1, 1));
    assert!(v.trace.cases.iter().any(|c| c.query_id == query_id));
    p.unmark("demo.json", &query_id).unwrap();
    assert!(p.view(0).marks.is_empty());
    assert_eq!(p.traces[0].trace.cases.len(), before);
    // Settings of a trace that is not open are not taken.
    let mut other = Settings::default();
    other.marks.insert("gone.json".into(), vec![]);
    p.restore(other);
    assert!(!p.marks.contains_key("gone.json"));
}

#[test]
fn files_given_together_are_arranged_as_they_open() {
    let logs = include_bytes!("../../tests/fixtures/otel/genai_logs.json");
    let traces = include_bytes!("../../tests/fixtures/otel/genai_traces.json");
    let ann = br#"[{"query_id": "q", "final_error_type": "UpdateError", "op_id": "o"}]"#;
    let file = |n: &str, b: &[u8]| (n.to_owned(), std::sync::Arc::<[u8]>::from(b));
    let out = arrange(vec![
        file("a.annotations.json", ann),
        file("logs.json", logs),
        file("traces.json", traces),
    ]);
    let names: Vec<&str> = out.iter().map(|(n, _)| n.as_str()).collect();
    // The logs joined into their traces file, which opens before the annotations.
    assert_eq!(names, ["traces.json", "a.annotations.json"]);
    assert!(out[0].1.len() > traces.len());
    let one = arrange(vec![file("a.annotations.json", ann)]);
    assert_eq!(one.len(), 1);
}

#[test]
fn a_file_decompressed_past_the_largest_file_is_refused_and_opens_under_a_larger_one() {
    let file = DEMO;
    let size = file.len() as u64;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, file).unwrap();
    let gz = gz.finish().unwrap();
    let small = LoadOptions::with_max_file_bytes(size - 1);
    let e = open("t.json.gz", &gz, small).unwrap_err();
    assert!(
        matches!(
            &e,
            SessionError::Format {
                error: crate::format::FormatError::TooLarge { .. },
                ..
            }
        ),
        "{e}"
    );
    assert!(readable("t.json.gz", &gz, &small).is_err());
    let mut o = Opening::new("t.json.gz", gz.clone().into(), small);
    let refused = loop {
        if let Some(r) = o.step() {
            break r;
        }
    };
    assert!(matches!(refused, Ready::Failed(_)));
    let fits = LoadOptions::with_max_file_bytes(size);
    assert!(matches!(open("t.json.gz", &gz, fits), Ok(Opened::Trace(_))));
    // A plain project bundle over the limit is refused before it is parsed too.
    let b = bundle::export(&[("demo.json".to_owned(), file)], &serde_json::Value::Null);
    let e = open("p.memtrace", &b, LoadOptions::with_max_file_bytes(size)).unwrap_err();
    assert!(e.to_string().contains("the limit is"), "{e}");
}
