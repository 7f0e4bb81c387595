//! A profile update that drops the item stating the answer, keeping a vaguer one with some of
//! its words, lost the information: info-flow blames the update (UpdateError), not the answer
//! op that read the vaguer item. Hand-built, EverMemOS-shaped (a profile of items).

#![allow(clippy::unwrap_used)]

mod common;

use common::{ask, assert_blames, case, extract_op, message, TraceBuilder};
use memtrace::attribution::InfoFlow;
use memtrace::model::ErrorType;

const SAID: &str = "2023-05-25T13:14:00";
const QUESTION: &str = "What are Rosa's plans for the summer?";
const STATED: &str = "Researching adoption agencies - it has been a dream to have a family.";
const VAGUE: &str = "Rosa is looking into one of the adoption agencies a friend named.";

fn profile(b: &mut TraceBuilder, version: u32, items: &[&str]) -> String {
    let value = serde_json::json!({ "profile": items });
    b.var("profile-Rosa", version, "memory_entry", &value.to_string())
}

/// The profile's versions: `items` each; the answer op reads the last and says `prediction`.
fn verdict(versions: &[&[&str]], prediction: &str) -> (String, ErrorType, String) {
    let mut b = TraceBuilder::new();
    let m = message(&mut b, "U1:D2:8", STATED, SAID);
    let p = b.var("extract-prompt", 1, "prompt", "Extract the facts.");
    let facts = b.var(
        "extracted_facts",
        1,
        "llm_response",
        &serde_json::json!([format!("Rosa mentioned: {STATED}")]).to_string(),
    );
    extract_op(&mut b, "memory.extract_facts", &[&m, &p], &[&facts]);
    let mut last = profile(&mut b, 1, &["Rosa loves hiking."]);
    for (i, items) in versions.iter().enumerate() {
        let next = profile(&mut b, i as u32 + 2, items);
        b.op(
            &format!("op-update-{i}"),
            "memory.update_profile",
            "update",
            &[&last, &facts],
            &[],
            &[&next],
        );
        last = next;
    }
    ask(
        &mut b,
        ("op-search", "memory.search"),
        QUESTION,
        &[&last],
        prediction,
        false,
    );
    let t = b.build();
    let c = case(QUESTION, "researching adoption agencies", prediction, &m);
    let a = InfoFlow::default().attribute(&t, &c).unwrap();
    (a.op_id, a.error_type, a.reason)
}

#[test]
fn an_update_that_kept_only_a_vaguer_item_is_blamed() {
    let stated = format!("Rosa mentioned: {STATED}");
    let reason = assert_blames(
        &verdict(
            &[
                &["Rosa loves hiking.", &stated, VAGUE],
                &["Rosa loves hiking.", VAGUE],
            ],
            "Rosa loves hiking.",
        ),
        "op-update-1",
        ErrorType::UpdateError,
    );
    assert!(reason.contains("keeps only a vaguer part"), "{reason}");
}

#[test]
fn the_answer_op_is_blamed_when_the_item_stating_the_answer_was_kept() {
    let stated = format!("Rosa mentioned: {STATED}");
    assert_blames(
        &verdict(
            &[
                &["Rosa loves hiking.", &stated, VAGUE],
                &["Rosa loves hiking.", &stated, VAGUE],
            ],
            "Rosa loves hiking.",
        ),
        "op-answer",
        ErrorType::ResponseError,
    );
}
