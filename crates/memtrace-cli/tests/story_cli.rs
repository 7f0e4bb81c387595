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
