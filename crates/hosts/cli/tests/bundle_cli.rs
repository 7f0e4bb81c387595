//! The CLI reads what the page saves: a project bundle (traces + settings, written by the page's
//! own `bundle::export`) with a role override and a question marked failed, and an annotation
//! file written by the page's own export (`exports::labels_json`). Reads
//! `tests/fixtures/smartcomment/locomo/` (fails when absent).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{memtrace_ok, repo_root};
use memtrace::attribution::OpRole;
use memtrace::format::{load, LoadOptions};
use memtrace::model::Mark;
use memtrace_web::state::{Label, Settings};
use serde_json::Value;

const NAME: &str = "locomo_locomo-1.json";

fn fixture() -> Vec<u8> {
    let f = repo_root()
        .join("tests/fixtures/smartcomment/locomo")
        .join(NAME);
    std::fs::read(&f).unwrap_or_else(|e| panic!("needs {} ({e})", f.display()))
}

fn temp(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("memtrace-bundle-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

fn lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn error_types(file: &Path, extra: &[&str]) -> Vec<String> {
    let mut args = vec!["attribute", file.to_str().unwrap(), "--json"];
    args.extend_from_slice(extra);
    lines(&memtrace_ok(args))
        .iter()
        .map(|v| v["error_type"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_bundle_saved_by_the_page_keeps_its_roles_and_marks() {
    let bytes = fixture();
    let trace = load(&bytes, LoadOptions::default()).unwrap().trace;
    let failed: Vec<&str> = trace.cases.iter().map(|c| c.query_id.as_str()).collect();
    let unmarked = trace
        .questions()
        .into_iter()
        .map(|v| trace.var(v).full_node_id.clone())
        .find(|id| !failed.contains(&id.as_str()))
        .expect("a question that was answered right");
    let mut settings = Settings::default();
    settings.project.current = Some(NAME.into());
    settings.project.roles.insert(
        NAME.into(),
        BTreeMap::from([(
            "memory_system.update_memory_decision".to_owned(),
            OpRole::Deletion,
        )]),
    );
    settings.project.marks.insert(
        NAME.into(),
        vec![Mark {
            query_id: unmarked.clone(),
            gold: None,
        }],
    );
    let bundle = memtrace_web::state::bundle::export(&[(NAME.into(), &bytes[..])], &settings);
    let file = temp("project.memtrace.json", &bundle);

    let info = lines(&memtrace_ok(["info", file.to_str().unwrap(), "--json"]));
    assert_eq!(info.len(), 1);
    assert_eq!(info[0]["failures"], failed.len() + 1, "{}", info[0]);
    assert!(info[0]["file"].as_str().unwrap().ends_with(NAME));

    let roles = lines(&memtrace_ok(["roles", file.to_str().unwrap(), "--json"]));
    let row = roles
        .iter()
        .find(|r| r["op_name"] == "memory_system.update_memory_decision")
        .unwrap();
    assert_eq!(
        (&row["role"], &row["basis"]),
        (&Value::from("deletion"), &Value::from("user"))
    );

    // The saved override reaches attribution the way `--role` does; a `--role` flag wins over it.
    let plain = error_types(&temp(NAME, &bytes), &[]);
    let saved = error_types(&file, &[]);
    let count = |v: &[String], t: &str| v.iter().filter(|x| *x == t).count();
    assert!(count(&plain, "UpdateError") > 0, "{plain:?}");
    assert_eq!(count(&saved, "UpdateError"), 0, "{saved:?}");
    let flag = error_types(
        &file,
        &["--role", "memory_system.update_memory_decision=update"],
    );
    assert!(count(&flag, "UpdateError") > 0, "{flag:?}");
}

#[test]
fn an_annotation_file_exported_by_the_page_is_merged() {
    let bytes = fixture();
    let full = load(&bytes, LoadOptions::default()).unwrap().trace;
    // The page's export of the user's labels: here, the fixture's own annotations.
    let labels: BTreeMap<String, Label> = full
        .cases
        .iter()
        .filter_map(|c| {
            let a = c.annotation.as_ref()?;
            Some((
                c.query_id.clone(),
                Label {
                    error_type: a.error_type,
                    op_id: a.op_id.clone(),
                },
            ))
        })
        .collect();
    assert!(!labels.is_empty());
    let export = memtrace::session::labels_json(&full, &labels);
    let ann = temp(
        "labels.annotations.json",
        &serde_json::to_vec_pretty(&export).unwrap(),
    );

    let mut v: Value = serde_json::from_slice(&bytes).unwrap();
    v["data"].as_object_mut().unwrap().remove("annotations");
    let bare = temp("bare.json", &serde_json::to_vec(&v).unwrap());
    let before = lines(&memtrace_ok(["info", bare.to_str().unwrap(), "--json"]));
    assert_eq!(before[0]["annotations"], 0);

    let (b, a) = (bare.to_str().unwrap(), ann.to_str().unwrap());
    let after = lines(&memtrace_ok(["info", b, "--annotations", a, "--json"]));
    assert_eq!(after[0]["annotations"], labels.len(), "{}", after[0]);
    let text = memtrace_ok(["attribute", b, "--annotations", a]);
    assert_eq!(
        text.matches("— agrees").count() + text.matches("— DIFFERS").count(),
        labels.len(),
        "{text}"
    );

    // An annotation file for another trace is refused, saying what to do.
    let other = temp("other.json", include_bytes!("../../../../www/demo.json"));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_memtrace"))
        .args(["info", other.to_str().unwrap(), "--annotations", a])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("open the trace they were exported from with them"),
        "{err}"
    );
}
