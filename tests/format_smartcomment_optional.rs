//! Every field smartcomment's pydantic models (`smartcomment/schema/*.py`, `runtime/network.py`)
//! let be `null` or left out loads on every record kind and is written back as read: one test
//! per kind and field, each with the field `null` (when the schema allows it) and absent.
//! Fields smartcomment requires are still refused, with their location (except the records'
//! `graph_id` and `session_id`, which memtrace has always let hand-made traces leave out).
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed expectation should panic

use memtrace::format::{load, smartcomment, FormatError, LoadOptions};
use memtrace::model::Trace;
use serde::Serialize;
use serde_json::{json, Value};

/// Written by the real smartcomment package (see tests/fixtures/smartcomment/README.md).
const BASE: &[u8] = include_bytes!("fixtures/smartcomment/mem0_commented.json");

/// JSON as smartcomment writes it: `json.dump(…, indent=4, ensure_ascii=False)`.
fn pretty4(v: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    v.serialize(&mut serde_json::Serializer::with_formatter(&mut out, fmt))
        .unwrap();
    out
}

fn base() -> Value {
    serde_json::from_slice(BASE).unwrap()
}

/// The record a case edits: the top level for "graph", else `data.<kind>[i]`.
fn record<'a>(v: &'a mut Value, kind: &str, i: usize) -> &'a mut serde_json::Map<String, Value> {
    let r = if kind == "graph" {
        v
    } else {
        &mut v["data"][kind][i]
    };
    r.as_object_mut().unwrap()
}

/// (null, absent) as the loaded model remembers them for the edited record.
fn flags(t: &Trace, kind: &str, i: usize, field: &str) -> (bool, bool) {
    match kind {
        "graph" => (t.meta.is_null(field), t.meta.is_absent(field)),
        "nodes" => (t.vars[i].is_null(field), t.vars[i].is_absent(field)),
        "operations" => (t.ops[i].is_null(field), t.ops[i].is_absent(field)),
        "edges" => (t.edges[i].is_null(field), t.edges[i].is_absent(field)),
        "sessions" => (t.sessions[i].is_null(field), t.sessions[i].is_absent(field)),
        other => panic!("unknown record kind {other}"),
    }
}

/// Picks the record to edit (one where the field holds a value) and prepares the file so that
/// changing the field keeps every reference valid; returns the index.
fn prepare(v: &mut Value, kind: &str, field: &str) -> usize {
    if kind == "graph" {
        return 0;
    }
    // An op or session without an id gets a fresh one from smartcomment, so nothing can refer
    // to it: add an unreferenced copy of the first record.
    if matches!(
        (kind, field),
        ("operations", "op_id") | ("sessions", "session_id")
    ) {
        let list = v["data"][kind].as_array_mut().unwrap();
        list.push(list[0].clone());
        return list.len() - 1;
    }
    let list = v["data"][kind].as_array().unwrap();
    // Dropping a class name renames the variable to its bare `node_id`: pick one whose bare
    // id is free, and follow the rename everywhere.
    let free =
        |r: &Value| field != "class_name" || list.iter().all(|o| o["full_node_id"] != r["node_id"]);
    let i = list
        .iter()
        .position(|r| !r[field].is_null() && free(r))
        .unwrap_or_else(|| panic!("no {kind} record to edit for {field}"));
    if field == "class_name" {
        let old = list[i]["full_node_id"].as_str().unwrap().to_owned();
        let new = list[i]["node_id"].as_str().unwrap().to_owned();
        let name = list[i]["name"].clone();
        let text = serde_json::to_string(v).unwrap();
        *v = serde_json::from_str(&text.replace(&format!("\"{old}\""), &format!("\"{new}\"")))
            .unwrap();
        v["data"]["nodes"][i]["full_name"] = name;
    }
    i
}

/// Loads the edited file, checks the model remembers the field's state, and that writing it
/// gives the same bytes back.
fn round_trip(case: &str, v: &Value, kind: &str, i: usize, field: &str, want: (bool, bool)) {
    let bytes = pretty4(v);
    let t = load(&bytes, LoadOptions::default())
        .unwrap_or_else(|e| panic!("{case}: refused: {e}"))
        .trace;
    assert_eq!(
        flags(&t, kind, i, field),
        want,
        "{case}: (null, absent) as remembered"
    );
    let out = smartcomment::write(&t).unwrap();
    if out != bytes {
        let (a, b) = (
            String::from_utf8_lossy(&bytes),
            String::from_utf8_lossy(&out),
        );
        let at = a
            .lines()
            .zip(b.lines())
            .position(|(x, y)| x != y)
            .unwrap_or(0);
        let show = |s: &str| {
            s.lines()
                .skip(at.saturating_sub(2))
                .take(5)
                .collect::<Vec<_>>()
                .join("\n")
        };
        panic!(
            "{case}: not written back as read, line {at}:\nread:\n{}\nwritten:\n{}",
            show(&a),
            show(&b)
        );
    }
    let again = load(&out, LoadOptions::default()).unwrap().trace;
    assert_eq!(again, t, "{case}: parse → write → parse changed the model");
}

fn check(kind: &str, field: &str, nullable: bool) {
    if nullable {
        let mut v = base();
        let i = prepare(&mut v, kind, field);
        record(&mut v, kind, i).insert(field.to_owned(), Value::Null);
        round_trip(
            &format!("{kind}.{field} = null"),
            &v,
            kind,
            i,
            field,
            (true, false),
        );
    }
    let mut v = base();
    let i = prepare(&mut v, kind, field);
    assert!(
        record(&mut v, kind, i).shift_remove(field).is_some(),
        "{kind}[{i}] has no {field}"
    );
    round_trip(
        &format!("{kind}.{field} absent"),
        &v,
        kind,
        i,
        field,
        (false, true),
    );
}

macro_rules! optional_fields {
    ($($test:ident: $kind:literal $field:literal $nullable:literal;)*) => {
        $(
            #[test]
            fn $test() {
                check($kind, $field, $nullable);
            }
        )*
    };
}

// kind, field, may it be null (else only absent)?
optional_fields! {
    graph_graph_id: "graph" "graph_id" false;
    graph_user_id: "graph" "user_id" true;
    graph_project_id: "graph" "project_id" true;
    graph_storage_path: "graph" "storage_path" true;
    graph_strict: "graph" "strict" false;
    graph_driver_type: "graph" "driver_type" false;
    graph_created_at: "graph" "created_at" false;
    graph_metadata: "graph" "metadata" true;

    // smartcomment requires these ids; memtrace has always read files without them (hand-made
    // and test traces), so they stay optional, and absent stays absent.
    node_graph_id: "nodes" "graph_id" false;
    node_session_id: "nodes" "session_id" false;
    op_graph_id: "operations" "graph_id" false;
    op_session_id: "operations" "session_id" false;
    edge_graph_id: "edges" "graph_id" false;
    edge_session_id: "edges" "session_id" false;
    session_graph_id: "sessions" "graph_id" false;

    node_created_at: "nodes" "created_at" false;
    node_version: "nodes" "version" false;
    node_comment: "nodes" "comment" true;
    node_category: "nodes" "category" false;
    node_user_id: "nodes" "user_id" true;
    node_class_name: "nodes" "class_name" true;
    node_project_id: "nodes" "project_id" true;
    node_metadata: "nodes" "metadata" true;
    node_trigger_point: "nodes" "trigger_point" false;
    node_full_name: "nodes" "full_name" false;
    node_node_id: "nodes" "node_id" false;
    node_full_node_id: "nodes" "full_node_id" false;

    op_created_at: "operations" "created_at" false;
    op_op_id: "operations" "op_id" false;
    op_op_name: "operations" "op_name" true;
    op_comment: "operations" "comment" true;
    op_category: "operations" "category" false;
    op_user_id: "operations" "user_id" true;
    op_project_id: "operations" "project_id" true;
    op_metadata: "operations" "metadata" true;
    op_trigger_point: "operations" "trigger_point" false;

    edge_created_at: "edges" "created_at" false;
    edge_edge_id: "edges" "edge_id" false;
    edge_user_id: "edges" "user_id" true;
    edge_project_id: "edges" "project_id" true;
    edge_category: "edges" "category" false;
    edge_comment: "edges" "comment" true;
    edge_metadata: "edges" "metadata" true;
    edge_trigger_point: "edges" "trigger_point" false;

    session_created_at: "sessions" "created_at" false;
    session_session_id: "sessions" "session_id" false;
    session_session_name: "sessions" "session_name" true;
    session_user_id: "sessions" "user_id" true;
    session_project_id: "sessions" "project_id" true;
    session_comment: "sessions" "comment" true;
    session_category: "sessions" "category" false;
    session_metadata: "sessions" "metadata" true;
    session_trigger_point: "sessions" "trigger_point" false;
}

#[test]
fn the_base_file_is_written_as_smartcomment_writes_it() {
    // The cases above re-serialize the base file; that alone must not change a byte.
    assert!(pretty4(&base()) == BASE);
}

#[test]
fn a_null_comment_reads_as_no_comment() {
    let mut v = base();
    v["data"]["operations"][0]["comment"] = Value::Null;
    v["data"]["operations"][0]["op_name"] = Value::Null;
    v["data"]["nodes"][0]["comment"] = Value::Null;
    let t = load(&pretty4(&v), LoadOptions::default()).unwrap().trace;
    assert_eq!(
        (t.ops[0].comment.as_str(), t.ops[0].op_name.as_str()),
        ("", "")
    );
    assert_eq!(t.vars[0].comment, "");
}

#[test]
fn a_data_object_without_some_lists_reads_them_as_empty() {
    let mut v = base();
    let data = v["data"].as_object_mut().unwrap();
    for list in ["edges", "operations", "annotations"] {
        data.shift_remove(list);
    }
    let t = load(&pretty4(&v), LoadOptions::default()).unwrap().trace;
    assert_eq!(
        (t.vars.len(), t.ops.len(), t.edges.len(), t.sessions.len()),
        (40, 0, 0, 3)
    );
}

/// Strict loading of the base file with one edit: the error, as text.
fn refused(edit: impl FnOnce(&mut Value)) -> (FormatError, String) {
    let mut v = base();
    edit(&mut v);
    let e =
        load(&pretty4(&v), LoadOptions::default()).expect_err("loaded a file smartcomment refuses");
    let msg = e.to_string();
    (e, msg)
}

#[test]
fn fields_smartcomment_requires_are_still_required() {
    let cases: [(&str, &str, &str); 8] = [
        ("nodes", "filename", "data.nodes[0]"),
        ("nodes", "lineno", "data.nodes[0]"),
        ("nodes", "name", "data.nodes[0]"),
        ("nodes", "value", "data.nodes[0]"),
        ("edges", "op_id", "data.edges[0]"),
        ("edges", "source_full_node_id", "data.edges[0]"),
        ("edges", "target_full_node_id", "data.edges[0]"),
        ("sessions", "filename", "data.sessions[0]"),
    ];
    for (kind, field, path) in cases {
        let (_, msg) = refused(|v| {
            v["data"][kind][0]
                .as_object_mut()
                .unwrap()
                .shift_remove(field);
        });
        assert!(
            msg.contains(path) && msg.contains(field),
            "{kind}.{field} missing: {msg}"
        );
    }
}

#[test]
fn null_where_smartcomment_wants_a_value_names_the_field() {
    for (kind, field) in [
        ("nodes", "category"),
        ("nodes", "version"),
        ("nodes", "created_at"),
        ("operations", "category"),
        ("edges", "edge_id"),
        ("sessions", "session_id"),
    ] {
        let (_, msg) = refused(|v| v["data"][kind][1][field] = json!(null));
        assert!(
            msg.contains(&format!("data.{kind}[1].{field}")),
            "{kind}.{field} = null: {msg}"
        );
    }
}

#[test]
fn a_record_in_a_session_not_in_the_file_is_refused_like_smartcomment_does() {
    for kind in ["nodes", "operations", "edges"] {
        let (e, msg) = refused(|v| v["data"][kind][1]["session_id"] = json!("session-ghost"));
        assert!(matches!(e, FormatError::Dangling { .. }), "{kind}: {e:?}");
        assert!(
            msg.contains(&format!("data.{kind}[1].session_id")) && msg.contains("session-ghost"),
            "{kind}: {msg}"
        );
    }
}
