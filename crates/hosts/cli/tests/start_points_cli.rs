//! `memtrace start-points`: beside the ranked messages, the turns info-flow starts from when a
//! trace names no evidence, each located in the value it entered (node, byte range, words), and
//! their recall against the evidence the trace does name. Reads
//! `tests/fixtures/smartcomment/locomo/` and `tests/data/lab/` (fails when absent).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use serde_json::Value;

#[test]
fn turns_are_located_and_scored_against_the_named_evidence() {
    let path = common::repo_root().join("tests/fixtures/smartcomment/locomo/locomo_locomo-1.json");
    let out = common::memtrace_ok(["start-points", "--json", path.to_str().unwrap()]);
    let v: Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    let cases = v["cases"].as_array().unwrap();
    assert!(!cases.is_empty());
    for c in cases {
        let turns = c["turns"].as_array().unwrap();
        assert!(!turns.is_empty() && turns.len() <= 8, "{c}");
        for t in turns {
            assert!(t["start"].as_u64() < t["end"].as_u64(), "{t}");
            assert!(!t["text"].as_str().unwrap().is_empty(), "{t}");
        }
        // The named evidence is among the turns found without it.
        let evidence: Vec<&str> = c["evidence_ids"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let found = turns
            .iter()
            .any(|t| evidence.contains(&t["node"].as_str().unwrap()));
        assert_eq!(c["turn_recall"].as_f64().unwrap() > 0.0, found, "{c}");
    }
    let text = common::memtrace_ok(["start-points", path.to_str().unwrap()]);
    assert!(
        text.contains("turns found without evidence ids")
            && text.contains("mean turn recall@8 (without evidence ids)"),
        "{text}"
    );
}

#[test]
fn a_prompt_holding_many_turns_gives_each_turn_its_own_range() {
    let path = common::repo_root().join("tests/data/lab/mem0ai/openinference/26.jsonl.gz");
    let out = common::memtrace_ok(["start-points", "--json", path.to_str().unwrap()]);
    let v: Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    let turns: Vec<&Value> = v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["turns"].as_array().unwrap())
        .collect();
    assert!(!turns.is_empty());
    // Turns inside a longer value: not the whole prompt, a stretch of it.
    assert!(
        turns.iter().any(|t| t["start"].as_u64().unwrap() > 0),
        "every turn starts its value: {turns:?}"
    );
}
