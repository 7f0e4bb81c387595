//! The three export formats of optimized prompts: `update_results.json` (keys
//! `<name>@<version>`), Mem0 config keys, and plain text files; each with version, parent,
//! score, cost and the diff.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed expectation should panic

use memtrace::optimize::export::{mem0_config, text_files, update_results};
use memtrace::optimize::PromptVersion;
use memtrace::text::diff::unified;
use memtrace_memsys::prompts::{FACT_EXTRACTION, QUESTION_ANSWERING, UPDATE_DECISION};

fn version(name: &str, version: u32, value: &str, parent_value: Option<&str>) -> PromptVersion {
    PromptVersion {
        name: name.into(),
        version,
        parent: (version > 1).then(|| version - 1),
        value: value.into(),
        round: (version > 1).then_some(0),
        score: Some(0.25 * f64::from(version)),
        cost_usd: Some(0.001 * f64::from(version)),
        diff: parent_value
            .map(|p| unified(name, p, value))
            .unwrap_or_default(),
        cases: vec!["query:q-1@1".into()],
        feedback: "keep dates".into(),
        rationale: "dates".into(),
        rejected: None,
    }
}

fn versions() -> Vec<PromptVersion> {
    vec![
        version(FACT_EXTRACTION, 1, "Extract facts.", None),
        version(UPDATE_DECISION, 1, "Decide ADD/UPDATE.", None),
        version(QUESTION_ANSWERING, 1, "Q: $question\n$context", None),
        version(
            FACT_EXTRACTION,
            2,
            "Extract facts.\nKeep every date.",
            Some("Extract facts."),
        ),
    ]
}

#[test]
fn update_results_keys_every_version() {
    let v = update_results(&versions());
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "fact-extraction-system-prompt@1",
            "fact-extraction-system-prompt@2",
            "memory-update-decision-prompt@1",
            "question-answering-prompt@1",
        ]
    );
    let two = &v["fact-extraction-system-prompt@2"];
    assert_eq!(two["value"], "Extract facts.\nKeep every date.");
    assert_eq!(two["version"], 2);
    assert_eq!(two["parent"], "fact-extraction-system-prompt@1");
    assert_eq!(two["score"], 0.5);
    assert_eq!(two["cost_usd"], 0.002);
    assert!(two["diff"].as_str().unwrap().contains("+Keep every date."));
    assert!(v["fact-extraction-system-prompt@1"]["parent"].is_null());
}

#[test]
fn mem0_config_has_the_latest_prompts_under_mem0_keys() {
    let v = mem0_config(&versions());
    assert_eq!(
        v["custom_fact_extraction_prompt"],
        "Extract facts.\nKeep every date."
    );
    assert_eq!(v["custom_update_memory_prompt"], "Decide ADD/UPDATE.");
    assert!(
        v.get("question-answering-prompt").is_none(),
        "Mem0 has no key for it"
    );
    let info = &v["memtrace"]["custom_fact_extraction_prompt"];
    assert_eq!(info["version"], 2);
    assert_eq!(info["parent"], "fact-extraction-system-prompt@1");
    assert!(
        info["diff"].as_str().unwrap().contains("-Extract facts.")
            || info["diff"].as_str().unwrap().contains("+Extract facts.")
    );
    assert_eq!(info["cost_usd"], 0.002);
    assert_eq!(info["score"], 0.5);
}

#[test]
fn text_files_hold_prompts_diffs_and_an_index() {
    let files = text_files(&versions());
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "fact-extraction-system-prompt@1.txt",
            "fact-extraction-system-prompt@2.txt",
            "fact-extraction-system-prompt@2.diff",
            "memory-update-decision-prompt@1.txt",
            "question-answering-prompt@1.txt",
            "versions.json",
        ]
    );
    assert_eq!(files[1].1, "Extract facts.\nKeep every date.");
    assert!(files[2]
        .1
        .starts_with("--- fact-extraction-system-prompt (old)"));
    let index: serde_json::Value = serde_json::from_str(&files[5].1).unwrap();
    assert_eq!(
        index["fact-extraction-system-prompt@2"]["parent"],
        "fact-extraction-system-prompt@1"
    );
    assert_eq!(index["question-answering-prompt@1"]["score"], 0.25);
}
