//! Files written by the real smartcomment 0.1.2 package (`tests/fixtures/smartcomment/`, made by
//! its `make.py`): each loads, writes back byte for byte, and info-flow finds its annotated ops.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed expectation should panic

use std::path::PathBuf;

use memtrace::attribution::InfoFlow;
use memtrace::format::{load, smartcomment, LoadOptions};

fn fixtures() -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/smartcomment");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 2,
        "expected the fixtures in {}, found {files:?}",
        dir.display()
    );
    files
        .into_iter()
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect()
}

#[test]
fn every_real_smartcomment_file_round_trips_byte_for_byte() {
    for (name, bytes) in fixtures() {
        let t = load(&bytes, LoadOptions::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .trace;
        let out = smartcomment::write(&t).unwrap();
        if out != bytes {
            let (a, b) = (
                String::from_utf8_lossy(&bytes),
                String::from_utf8_lossy(&out),
            );
            let line = a.lines().zip(b.lines()).position(|(x, y)| x != y);
            panic!("{name}: bytes differ after a round trip, first at line {line:?}");
        }
        let again = load(&out, LoadOptions::default()).unwrap().trace;
        assert_eq!(again, t, "{name}: parse → write → parse changed the model");
    }
}

#[test]
fn real_files_hold_the_nulls_smartcomment_writes() {
    // The point of these fixtures: records written without a comment, class name, op name, ...
    for (name, bytes) in fixtures() {
        let t = load(&bytes, LoadOptions::default()).unwrap().trace;
        let null_comments = t.vars.iter().filter(|r| r.is_null("comment")).count()
            + t.ops.iter().filter(|r| r.is_null("comment")).count()
            + t.edges.iter().filter(|r| r.is_null("comment")).count()
            + t.sessions.iter().filter(|r| r.is_null("comment")).count();
        assert!(null_comments > 0, "{name}: no null comment");
        assert!(
            t.vars.iter().any(|r| r.class_name.is_none()),
            "{name}: no null class_name"
        );
        assert!(
            t.sessions.iter().any(|r| r.is_null("session_name")),
            "{name}: no null session_name"
        );
    }
}

#[test]
fn infoflow_finds_the_annotated_op_and_type_in_real_files() {
    let attributor = InfoFlow::default();
    for (name, bytes) in fixtures() {
        let t = load(&bytes, LoadOptions::default()).unwrap().trace;
        let annotated: Vec<_> = t.cases.iter().filter(|c| c.annotation.is_some()).collect();
        assert!(!annotated.is_empty(), "{name}: no annotated failure");
        for case in annotated {
            let want = case.annotation.clone().unwrap();
            let got = attributor
                .attribute(&t, case)
                .unwrap_or_else(|e| panic!("{name} {}: {e}", case.query_id));
            println!(
                "{name} {}: want {} {}, got {} {} ({})",
                case.query_id,
                want.error_type.as_str(),
                want.op_id,
                got.error_type.as_str(),
                got.op_id,
                got.reason
            );
            assert_eq!(
                (got.op_id.as_str(), got.error_type),
                (want.op_id.as_str(), want.error_type),
                "{name} {}: {}",
                case.query_id,
                got.reason
            );
        }
    }
}
