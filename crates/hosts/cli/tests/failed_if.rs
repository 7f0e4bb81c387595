//! `--failed-if`: a trace whose judge memtrace does not recognize (neither its name nor its
//! shape: `mem0_blind_judge.jsonl`, the answer cut from the judge's prompt) reports no
//! failure and says what it looked for and which rule to add; the rule turns its WRONG answer
//! into a case, on `info` and on `attribute`; a bad rule is refused with where and how to fix it.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

mod common;

use common::memtrace;
use serde_json::Value;

const UNNAMED: &str = "../../../tests/fixtures/otlp/mem0_unnamed_judge.jsonl";
/// The same with the answers cut from the judge's prompts: no judge by name or shape.
const BLIND: &str = "../../../tests/fixtures/otlp/mem0_blind_judge.jsonl";
const JUDGED: &str = "../../../tests/fixtures/otlp/mem0_llm_judge.jsonl";
const RULE: &str = "span=check_answer output~WRONG";

fn json_info(args: &[&str]) -> Value {
    let out = memtrace(&[&["info", "--json"], args].concat());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn no_failure_says_what_was_looked_for_and_the_rule_to_add() {
    let out = memtrace(&["info", BLIND]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("failures    0"), "{text}");
    assert!(text.contains("Looked for, in this order"), "{text}");
    assert!(text.contains("3. llm-judge"), "{text}");
    assert!(
        text.contains("check_answer") && text.contains("neither its name nor its metadata"),
        "why the labelled op did not count: {text}"
    );
    assert!(
        text.contains(&format!("add a rule: --failed-if '{RULE}'")),
        "{text}"
    );
    let v = json_info(&[BLIND]);
    assert_eq!(v["failures"], 0);
    assert_eq!(v["questions"], 2);
    assert_eq!(v["looked_for"]["rules"].as_array().unwrap().len(), 6);
    assert_eq!(
        v["looked_for"]["suggestion"],
        format!("--failed-if '{RULE}'")
    );
}

#[test]
fn the_rule_turns_wrong_answers_into_cases() {
    let v = json_info(&["--failed-if", RULE, BLIND]);
    assert_eq!(v["failures"], 1);
    assert_eq!(v["found_by"][0]["rule"], "user-rule");
    assert!(v.get("looked_for").is_none());
    // The unnamed judge is a judge by its shape: found without a rule.
    let v = json_info(&[UNNAMED]);
    assert_eq!(v["failures"], 1);
    assert_eq!(v["found_by"][0]["index"], "llm-judge");
    // The LLM-judge trace: found without a rule, and the rule changes nothing there.
    for args in [
        vec![JUDGED],
        vec![
            "--failed-if",
            "span=evaluate_llm_judge output~WRONG",
            JUDGED,
        ],
    ] {
        let v = json_info(&args);
        assert_eq!(v["failures"], 1, "{args:?}");
        assert_eq!(v["found_by"][0]["rule"], "built-in", "{args:?}");
        assert_eq!(v["found_by"][0]["index"], "llm-judge", "{args:?}");
    }
    // attribute reads the same case and finds the faulty op.
    let out = memtrace(&["attribute", "--json", "--failed-if", RULE, UNNAMED]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1, "{text}");
    // The run's injected fault: the update decision kept "Lives in Berlin" (NONE for the move).
    assert_eq!(lines[0]["op_name"], "memory_update_decision", "{text}");
    assert_eq!(lines[0]["error_type"], "UpdateError", "{text}");
    let plain = memtrace(&["attribute", BLIND]);
    assert!(String::from_utf8_lossy(&plain.stdout).contains("no failed cases"));
}

#[test]
fn a_bad_rule_is_refused_with_where_and_how() {
    let out = memtrace(&[
        "info",
        "--failed-if",
        "span=check_answer output~(WRONG",
        UNNAMED,
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("at character 26"), "{err}");
    assert!(err.contains("is not a regex"), "{err}");
    assert!(err.contains("span=NAME output~REGEX"), "{err}");
}
