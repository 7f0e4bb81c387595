//! `memtrace story FILE` on the demo trace (ours, in www/): each failed case as numbered steps
//! from its evidence to its judge, the info-flow verdict marked once, the gold answer's words in
//! «», a changed version as [-old-]{+new+}; `--json` gives the same story as the page reads.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

mod common;

use common::{memtrace_ok, repo_root};
use serde_json::Value;

#[test]
fn story_prints_each_case_and_marks_its_verdict() {
    let demo = repo_root().join("www/demo.json");
    let text = memtrace_ok(["story".as_ref(), demo.as_os_str()]);
    let verdicts = memtrace_ok(["attribute".as_ref(), demo.as_os_str(), "--json".as_ref()]);
    let verdicts: Vec<Value> = verdicts
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(verdicts.len() >= 5);
    for v in &verdicts {
        let want = format!(
            "✗ {}: {}",
            v["error_type"].as_str().unwrap(),
            v["reason"].as_str().unwrap()
        );
        assert_eq!(text.matches(&want).count(), 1, "{want}");
    }
    assert!(text.contains('«'), "gold words marked");
    assert!(text.contains("[-") && text.contains("{+"), "a version diff");
    assert!(text
        .lines()
        .any(|l| l.trim_start().starts_with("1. [evidence]")));

    let one = verdicts[1]["case_id"].as_str().unwrap();
    let json = memtrace_ok([
        "story".as_ref(),
        demo.as_os_str(),
        "--json".as_ref(),
        "--case".as_ref(),
        one.as_ref(),
    ]);
    let s: Value = serde_json::from_str(json.trim()).unwrap();
    assert_eq!(s["case_id"], one);
    let decisive: Vec<&Value> = s["cards"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| !c["decisive"].is_null())
        .collect();
    assert_eq!(decisive.len(), 1);
    assert_eq!(decisive[0]["id"], verdicts[1]["op_id"]);
}

/// `memtrace story FILE | head`: the reader goes away after a few lines; memtrace stops quietly
/// (exit 0, no panic) instead of panicking on the closed pipe.
#[test]
fn a_reader_that_stops_reading_ends_the_output_quietly() {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let dir = std::env::temp_dir().join(format!("memtrace-story-pipe-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("gen.json");
    // About 140 kB of stories: more than a pipe holds.
    memtrace_ok([
        "gen".as_ref(),
        "--nodes".as_ref(),
        "10000".as_ref(),
        "--seed".as_ref(),
        "4".as_ref(),
        "-o".as_ref(),
        trace.as_os_str(),
    ]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_memtrace"))
        .args(["story".as_ref(), trace.as_os_str()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut head = [0u8; 256];
    child.stdout.take().unwrap().read_exact(&mut head).unwrap();
    // The read end is closed here; the story goes on far past a pipe's buffer.
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}: {stderr}", out.status);
    assert!(!stderr.contains("panicked"), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}
