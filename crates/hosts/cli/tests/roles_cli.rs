//! `memtrace roles FILE` on a real smartcomment fixture lists each op name's role, count and
//! reason; `--role NAME=ROLE` overrides it there and in `attribute`. Reads
//! `tests/fixtures/smartcomment/locomo/` (fails when absent).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

mod common;

use common::{memtrace_ok, repo_root};
use serde_json::Value;

fn fixture() -> std::path::PathBuf {
    let f = repo_root().join("tests/fixtures/smartcomment/locomo/locomo_locomo-1.json");
    assert!(f.is_file(), "needs {}", f.display());
    f
}

fn lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn roles_lists_and_overrides() {
    let f = fixture();
    let text = memtrace_ok(["roles".as_ref(), f.as_os_str()]);
    println!("{text}");
    let extract = text
        .lines()
        .find(|l| l.starts_with("memory_system.extract_facts"))
        .expect("the extraction op is listed");
    assert!(
        extract.contains("extraction") && extract.contains("reads messages"),
        "{extract}"
    );
    let json = lines(&memtrace_ok([
        "roles".as_ref(),
        f.as_os_str(),
        "--json".as_ref(),
        "--role".as_ref(),
        "memory_system.extract_facts=other".as_ref(),
    ]));
    let row = json
        .iter()
        .find(|r| r["op_name"] == "memory_system.extract_facts")
        .unwrap();
    assert_eq!(
        (&row["role"], &row["basis"]),
        (&Value::from("other"), &Value::from("user"))
    );
    assert!(row["count"].as_u64().unwrap() > 1);
}

#[test]
fn attribute_follows_a_role_override() {
    let f = fixture();
    let types = |extra: &[&str]| -> Vec<String> {
        let mut args = vec!["attribute", f.to_str().unwrap(), "--json"];
        args.extend_from_slice(extra);
        lines(&memtrace_ok(args))
            .iter()
            .map(|v| v["error_type"].as_str().unwrap().to_owned())
            .collect()
    };
    let plain = types(&[]);
    let overridden = types(&["--role", "memory_system.update_memory_decision=deletion"]);
    println!("{plain:?}\n{overridden:?}");
    let count = |v: &[String], t: &str| v.iter().filter(|x| *x == t).count();
    assert!(count(&plain, "UpdateError") > 0);
    assert_eq!(count(&overridden, "UpdateError"), 0);
    assert_eq!(
        count(&overridden, "DeletionError"),
        count(&plain, "DeletionError") + count(&plain, "UpdateError")
    );
}
