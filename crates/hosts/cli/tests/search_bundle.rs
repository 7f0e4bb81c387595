//! `memtrace search` on a project bundle searches each of its traces: its hits are the hits of
//! the same search on each trace file alone, under the trace's name; the bundle gzip-compressed
//! gives the same. Reads `tests/fixtures/smartcomment/locomo/` (fails when absent).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::{memtrace_ok, repo_root};
use serde_json::Value;

const NAMES: [&str; 2] = ["locomo_locomo-1.json", "locomo_locomo-2.json"];

fn dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("memtrace-search-bundle-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn hits(args: &[&str]) -> Vec<Value> {
    let out = memtrace_ok(args);
    match serde_json::from_str(&out).unwrap() {
        Value::Array(a) => a,
        other => panic!("not a JSON array: {other}"),
    }
}

#[test]
fn search_on_a_bundle_gives_each_traces_own_hits_under_its_name() {
    let fixtures = repo_root().join("tests/fixtures/smartcomment/locomo");
    let d = dir();
    let mut files = Vec::new();
    for n in NAMES {
        let p = fixtures.join(n);
        let bytes = std::fs::read(&p).unwrap_or_else(|e| panic!("needs {} ({e})", p.display()));
        files.push((n.to_owned(), bytes));
    }
    let list: Vec<(String, &[u8])> = files.iter().map(|(n, b)| (n.clone(), &b[..])).collect();
    let bundle = d.join("project.json");
    std::fs::write(
        &bundle,
        memtrace::format::bundle::export(&list, &serde_json::json!({})),
    )
    .unwrap();
    let status = Command::new("gzip")
        .args(["-kf", bundle.to_str().unwrap()])
        .status()
        .expect("needs gzip");
    assert!(status.success());
    let gz = d.join("project.json.gz");

    for query in [
        &["Caroline|Melanie|Jon|Gina", "--regex"][..],
        &["support group"][..],
    ] {
        let mut want = Vec::new();
        for n in NAMES {
            let p = fixtures.join(n);
            let mut args = vec!["search", p.to_str().unwrap()];
            args.extend_from_slice(query);
            args.extend_from_slice(&["--json", "--limit", "5"]);
            for mut h in hits(&args) {
                h.as_object_mut()
                    .unwrap()
                    .insert("trace".into(), format!("{}:{n}", bundle.display()).into());
                want.push(h);
            }
        }
        assert!(
            !want.is_empty(),
            "{query:?} finds something in the fixtures"
        );
        let mut args = vec!["search", bundle.to_str().unwrap()];
        args.extend_from_slice(query);
        args.extend_from_slice(&["--json", "--limit", "5"]);
        assert_eq!(hits(&args), want, "{query:?} on the bundle");
        args[1] = gz.to_str().unwrap();
        let from_gz: Vec<Value> = hits(&args)
            .into_iter()
            .map(|mut h| {
                let t = h["trace"].as_str().unwrap().replace(".json.gz:", ".json:");
                h["trace"] = t.into();
                h
            })
            .collect();
        assert_eq!(from_gz, want, "{query:?} on the gzip-compressed bundle");
    }
    // The text output names each trace before its hits.
    let text = memtrace_ok(["search", bundle.to_str().unwrap(), "support group"]);
    for n in NAMES {
        assert!(
            text.contains(&format!("== {}:{n}", bundle.display())),
            "{text}"
        );
    }
}
