#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed expectation should panic
//! The Trace handle's queries on the LoCoMo fixtures, in a real browser: summary, problems,
//! cases, roles, node, versions, slice, impact, search, startPoints, renderFlatLog.

mod common;

use common::{fixtures, json, load, opts, FIXTURE_1};
use serde_json::json;
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
fn summary_and_cases_match_the_file() {
    for (name, bytes) in fixtures() {
        let t = load(bytes);
        let s = json(t.summary().unwrap());
        let expect = memtrace::summarize(bytes).unwrap();
        assert_eq!(s["format"], "smartcomment", "{name}");
        assert_eq!(s["operations"], expect.operations, "{name}");
        assert_eq!(s["failures"], expect.failures, "{name}");
        let cases = json(t.cases().unwrap());
        let cases = cases.as_array().unwrap();
        assert_eq!(cases.len(), expect.failures, "{name}");
        assert!(cases.iter().all(|c| c["query_id"].is_string()), "{name}");
        assert_eq!(json(t.problems().unwrap()), json!([]), "{name}");
    }
}

#[wasm_bindgen_test]
fn roles_name_every_op_name_once() {
    let t = load(FIXTURE_1);
    let roles = json(t.roles().unwrap());
    let roles = roles.as_array().unwrap();
    assert!(!roles.is_empty());
    let total: u64 = roles.iter().map(|r| r["count"].as_u64().unwrap()).sum();
    assert_eq!(total, json(t.summary().unwrap())["operations"]);
    assert!(roles.iter().any(|r| r["role"] == "retrieval"), "{roles:?}");
}

#[wasm_bindgen_test]
fn node_lists_neighbours_both_ways() {
    let t = load(FIXTURE_1);
    let case = json(t.cases().unwrap())[0].clone();
    let answer_op = case["answer_op"].as_str().expect("the answer op is found");
    let op = json(t.node(answer_op).unwrap());
    assert_eq!(op["kind"], "operation");
    assert_eq!(op["record"]["op_id"], answer_op);
    let out = op["outputs"][0].as_str().unwrap();
    let var = json(t.node(out).unwrap());
    assert_eq!(var["kind"], "variable");
    assert!(var["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .any(|o| o == answer_op));
    let err = common::thrown(t.node("no-such-id").unwrap_err());
    assert_eq!(err["kind"], "not_found");
}

#[wasm_bindgen_test]
fn versions_follow_a_memory_unit() {
    let t = load(FIXTURE_1);
    let trace = memtrace::load(FIXTURE_1, memtrace::LoadOptions::default())
        .unwrap()
        .trace;
    let (identity, chain) = trace
        .flow
        .versions
        .iter()
        .max_by_key(|(k, v)| (v.len(), *k))
        .unwrap();
    let l = json(t.versions(identity).unwrap());
    assert_eq!(l["identity"], identity);
    let versions = l["versions"].as_array().unwrap();
    assert_eq!(versions.len(), chain.len());
    assert_eq!(versions[0]["kind"], "birth");
    assert!(chain.len() > 1 && versions[1]["made_by"].as_array().is_some());
    assert_eq!(
        common::thrown(t.versions("nobody").unwrap_err())["kind"],
        "not_found"
    );
}

#[wasm_bindgen_test]
fn slice_of_a_case_holds_its_answer_and_impact_reaches_it() {
    let t = load(FIXTURE_1);
    let case = json(t.cases().unwrap())[0].clone();
    let id = case["query_id"].as_str().unwrap();
    let s = json(t.slice(id).unwrap());
    let ops = s["operations"].as_array().unwrap();
    assert!(ops.iter().any(|o| o == &case["answer_op"]), "{s}");
    // Every op of the slice reaches the answer: its impact set holds the answer op.
    let first = ops[0].as_str().unwrap();
    let imp = json(t.impact(first).unwrap());
    assert!(imp["operations"]
        .as_array()
        .unwrap()
        .iter()
        .any(|o| o == &case["answer_op"]));
    // Slicing a node works too, and contains the node.
    let node = json(t.slice(first).unwrap());
    assert!(node["operations"]
        .as_array()
        .unwrap()
        .iter()
        .any(|o| o == first));
}

#[wasm_bindgen_test]
fn search_ranks_and_matches() {
    let t = load(FIXTURE_1);
    let case = json(t.cases().unwrap())[0].clone();
    let word = case["golden_answers"][0]
        .as_str()
        .unwrap()
        .split_whitespace()
        .max_by_key(|w| w.len())
        .unwrap()
        .to_owned();
    let hits = json(t.search(&word, opts(&json!({"k": 5}))).unwrap());
    let hits = hits.as_array().unwrap();
    assert!(!hits.is_empty() && hits.len() <= 5, "{word}: {hits:?}");
    let re = json(
        t.search(
            &word.to_lowercase(),
            opts(&json!({"regex": true, "ignoreCase": true, "k": 3})),
        )
        .unwrap(),
    );
    assert!(re.as_array().unwrap().iter().all(|h| h["score"] == 1.0));
    assert!(!re.as_array().unwrap().is_empty());
    let err = common::thrown(t.search("(", opts(&json!({"regex": true}))).unwrap_err());
    assert_eq!(err["kind"], "regex");
    let err = common::thrown(t.search("x", opts(&json!({"top": 3}))).unwrap_err());
    assert_eq!(
        err["kind"], "argument",
        "unknown options are refused: {err}"
    );
}

#[wasm_bindgen_test]
fn start_points_find_the_gold_evidence() {
    let t = load(FIXTURE_1);
    let cases = json(t.cases().unwrap());
    let mut found = 0;
    let mut with_gold = 0;
    for c in cases.as_array().unwrap() {
        let sp = json(t.start_points(c["query_id"].as_str().unwrap(), 8).unwrap());
        let ids: Vec<&str> = sp
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["id"].as_str().unwrap())
            .collect();
        assert!(ids.len() <= 8);
        let gold = c["evidence_ids"].as_array().unwrap();
        if !gold.is_empty() {
            with_gold += 1;
            found += usize::from(gold.iter().any(|g| ids.contains(&g.as_str().unwrap())));
        }
    }
    assert!(with_gold > 0);
    assert_eq!(found, with_gold, "a gold message in every case's top 8");
}

#[wasm_bindgen_test]
fn flat_log_pages_through_the_whole_log() {
    let t = load(FIXTURE_1);
    let first = json(
        t.render_flat_log(opts(&json!({"start": 0, "maxChars": 1000})))
            .unwrap(),
    );
    let total = first["total_chars"].as_u64().unwrap();
    assert!(total > 1000);
    assert_eq!(first["text"].as_str().unwrap().chars().count(), 1000);
    let last = json(
        t.render_flat_log(opts(&json!({"start": total - 10, "maxChars": 1000})))
            .unwrap(),
    );
    assert_eq!(last["text"].as_str().unwrap().chars().count(), 10);
}
