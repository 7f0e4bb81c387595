//! The recorder: scopes, versions, async, threads, disabled mode, and that its files load with
//! memtrace's smartcomment importer in strict mode.

use std::sync::Arc;

use memtrace::format::{load, LoadOptions};
use memtrace_record::{
    content_id, GraphInfo, Instrument, OpSpec, Recorder, Render, SessionSpec, SteppingClock,
    VarSpec,
};
use serde_json::{json, Value};

fn recorder(seed: u64) -> Recorder {
    Recorder::new(
        GraphInfo::new("u", "p"),
        Arc::new(SteppingClock::starting_at("2026-01-02 03:04:05.000", 1)),
        seed,
    )
}

fn loads(rec: &Recorder) -> memtrace::Trace {
    let bytes = rec.to_json();
    match load(&bytes, LoadOptions::default()) {
        Ok(l) => l.trace,
        Err(e) => panic!(
            "the recorder's file does not load: {e}\n{}",
            String::from_utf8_lossy(&bytes)
        ),
    }
}

#[test]
fn content_id_matches_smartcomment_example() {
    assert_eq!(
        content_id(&json!("The user likes graph visualization.")),
        "str:a49c76c7ab6fc8aad410da8adf158826a62ffe1b"
    );
    let rec = recorder(1);
    let s = rec.session(SessionSpec::new("c"));
    let v = s.var(VarSpec::content(
        "fact",
        json!("The user likes graph visualization."),
    ));
    assert_eq!(
        v.full_node_id(),
        "fact:str:a49c76c7ab6fc8aad410da8adf158826a62ffe1b@1"
    );
}

#[test]
fn nested_scopes_follow_the_innermost() {
    let rec = recorder(2);
    let outer = rec.session(SessionSpec::new("construction").id("s-outer"));
    let _g = outer.enter();
    assert_eq!(
        rec.current().map(|c| c.id().to_owned()),
        Some("s-outer".into())
    );
    let op = rec.op(OpSpec::new("extract", "extraction"));
    assert_eq!(op.session_id(), "s-outer");
    op.in_scope(|| {
        let cur = rec.current().map(|c| c.id().to_owned());
        assert_eq!(cur.as_deref(), Some(op.id()));
        let a = rec.var(VarSpec::named("msg", json!("hello")));
        let b = rec.var(VarSpec::named("fact", json!("hi")));
        rec.link(&a, &b, "made inside the op");
    });
    assert_eq!(
        rec.current().map(|c| c.id().to_owned()),
        Some("s-outer".into())
    );
    let t = loads(&rec);
    assert_eq!(t.edges.len(), 1);
    assert_eq!(t.edges[0].op_id, op.id());
    assert!(t.vars.iter().all(|v| v.session_id == "s-outer"));
}

#[test]
fn entered_guard_leaves_on_drop() {
    let rec = recorder(6);
    let session = rec.session(SessionSpec::new("c").id("s-1")).entered();
    {
        let op = session.op(OpSpec::new("extract", "extraction")).entered();
        assert_eq!(
            rec.current().map(|c| c.id().to_owned()).as_deref(),
            Some(op.id())
        );
        let a = op.var(VarSpec::named("a", json!(1)));
        let b = op.var(VarSpec::named("b", json!(2)));
        op.link(&a, &b, "through the guard");
    }
    assert_eq!(
        rec.current().map(|c| c.id().to_owned()).as_deref(),
        Some("s-1")
    );
    drop(session);
    assert!(rec.current().is_none());
    assert_eq!(loads(&rec).edges.len(), 1);
}

#[test]
fn new_value_and_mutation_make_versions() {
    let rec = recorder(3);
    let s = rec.session(SessionSpec::new("c"));
    let unit = s.var(
        VarSpec::named("memory-unit-1", json!({"memory": "Mom drinks hot cocoa."}))
            .render(Render::Json),
    );
    let same = s.var(
        VarSpec::named("memory-unit-1", json!({"memory": "Mom drinks hot cocoa."}))
            .render(Render::Json),
    );
    assert_eq!(unit, same);
    let op = s.op(OpSpec::new(
        "memory_system.update_memory_decision",
        "update",
    ));
    let action = op.var(VarSpec::content(
        "update_action",
        json!({"event": "UPDATE"}),
    ));
    let v2 = op.mutate(
        &unit,
        &json!({"memory": "Mom drinks chamomile tea."}),
        Render::Json,
        &[&action],
        "updated",
    );
    assert_eq!(v2.full_node_id(), "memory-unit-1@2");
    let v3 =
        s.var(VarSpec::named("memory-unit-1", json!({"memory": "other"})).render(Render::Json));
    assert_eq!(v3.version(), 3);
    let t = loads(&rec);
    let into_v2: Vec<&str> = t
        .edges
        .iter()
        .filter(|e| e.target_full_node_id == "memory-unit-1@2")
        .map(|e| e.source_full_node_id.as_str())
        .collect();
    assert_eq!(
        into_v2,
        vec!["memory-unit-1@1", action.full_node_id().as_str()]
    );
    let v2_value = t
        .vars
        .iter()
        .find(|v| v.full_node_id == "memory-unit-1@2")
        .map(|v| v.value.clone());
    assert_eq!(
        v2_value.as_deref(),
        Some("{\n    \"memory\": \"Mom drinks chamomile tea.\"\n}")
    );
}

#[test]
fn instrumented_future_records_in_its_scope() {
    let rec = recorder(4);
    let s = rec.session(SessionSpec::new("c").id("s-async"));
    let op = s.op(OpSpec::new("answer", "evaluation"));
    let r2 = rec.clone();
    let fut = async move {
        let cur = r2.current().map(|c| c.id().to_owned());
        let q = r2.var(VarSpec::named("q", json!("why?")));
        let a = r2.var(VarSpec::named("a", json!("because")));
        r2.link(&q, &a, "answered");
        cur
    };
    let seen = futures_executor::block_on(fut.instrument(op.clone()));
    assert_eq!(seen.as_deref(), Some(op.id()));
    assert!(
        rec.current().is_none(),
        "the scope is left after the future returns"
    );
    let t = loads(&rec);
    assert_eq!(t.edges[0].op_id, op.id());
}

#[test]
fn two_threads_record_at_once() {
    let rec = recorder(5);
    let handles: Vec<_> = (0..2)
        .map(|k| {
            let rec = rec.clone();
            std::thread::spawn(move || {
                let s = rec.session(SessionSpec::new("c").id(&format!("s-{k}")));
                let _g = s.enter();
                for i in 0..50 {
                    let op = rec.op(OpSpec::new("work", "extraction"));
                    let _o = op.enter();
                    let a = rec.var(VarSpec::named(&format!("in-{k}-{i}"), json!(i)));
                    let b = rec.var(VarSpec::content("out", json!(format!("{k}-{i}"))));
                    op.io(&[&a], &[&b], "done");
                    assert_eq!(
                        rec.current().map(|c| c.session_id().to_owned()),
                        Some(format!("s-{k}"))
                    );
                }
            })
        })
        .collect();
    for h in handles {
        h.join().expect("a recording thread panicked");
    }
    let t = loads(&rec);
    assert_eq!(
        (t.sessions.len(), t.ops.len(), t.vars.len(), t.edges.len()),
        (2, 100, 200, 100)
    );
    for e in &t.edges {
        let op = t
            .ops
            .iter()
            .find(|o| o.op_id == e.op_id)
            .map(|o| o.session_id.clone());
        assert_eq!(op.as_deref(), Some(e.session_id.as_str()));
    }
}

#[test]
fn disabled_recorder_records_nothing() {
    let rec = Recorder::disabled();
    let s = rec.session(SessionSpec::new("c"));
    let op = s.op(OpSpec::new("x", "y"));
    let v = op.var(VarSpec::named("v", json!(1)));
    op.io(&[&v], &[], "nothing");
    assert_eq!(rec.counts(), (0, 0, 0, 0));
    assert!(rec.export().is_none());
    assert!(rec.to_json().is_empty());
    assert_eq!(v.version(), 0);
}

#[test]
fn sentinels_and_same_seed_same_file() {
    let make = |seed| {
        let rec = recorder(seed);
        let s = rec.session(SessionSpec::new("c"));
        let op = s.op(OpSpec::new("retrieve", "retrieval"));
        let q = op.var(VarSpec::named("q", json!("q")));
        op.io(&[&q], &[], "nothing found");
        let a = rec.var(VarSpec::named("loose", json!("x")));
        rec.link(&q, &a, "outside any op");
        rec.to_json()
    };
    let (one, two) = (make(9), make(9));
    assert_eq!(one, two);
    assert_ne!(one, make(10), "another seed gives other ids");
    let v: Value = serde_json::from_slice(&one).expect("json");
    let text = v.to_string();
    assert!(text.contains("COMMENT:NONE@1") && text.contains("__none_op__"));
    let first_op = v["data"]["operations"][0]["op_id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        first_op.starts_with("op-") && first_op.len() == 35,
        "{first_op}"
    );
    assert!(load(&one, LoadOptions::default()).is_ok());
}
