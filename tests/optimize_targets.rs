//! Targets come from the graph: prompt variables no op produces; each attributed failure maps to
//! the targets inside its decisive op's subgraph, else it is not optimizable. Checked on the demo
//! trace, which holds one failure of each error type.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed expectation should panic

use memtrace::attribution::InfoFlow;
use memtrace::format::{load, LoadOptions};
use memtrace::model::ErrorType;
use memtrace::optimize::{map_failure, targets, Mapped, Selection};

#[test]
fn each_error_type_maps_to_the_prompt_its_op_reads() {
    let t = load(include_bytes!("../www/demo.json"), LoadOptions::default())
        .unwrap()
        .trace;
    let sel = Selection::default();
    let names: Vec<String> = targets(&t, &sel).into_keys().collect();
    // Per-call task instructions (category prompt, produced by an op) are not targets.
    assert_eq!(
        names,
        [
            "fact-extraction-system-prompt",
            "judge_prompt:locomo-judge",
            "memory-update-decision-prompt",
            "question-answering-prompt"
        ]
    );
    let values = targets(&t, &sel);
    assert!(
        values["question-answering-prompt"]
            .value
            .contains("$context"),
        "the value is the text, not its repr"
    );

    let infoflow = InfoFlow::default();
    let mut seen = Vec::new();
    for case in &t.cases {
        let a = infoflow.attribute(&t, case).unwrap();
        let mapped = map_failure(&t, &a, &sel, 4000);
        let got: Vec<String> = match &mapped {
            Mapped::Targets(f) => {
                assert!(f.iter().all(|x| x.rendering.starts_with("<operation")
                    && x.op_id == a.op_id
                    && x.error_type == a.error_type));
                f.iter().map(|x| x.target.clone()).collect()
            }
            Mapped::NotOptimizable { why, .. } => {
                assert!(why.contains("no configurable variable"));
                Vec::new()
            }
        };
        let want: &[&str] = match a.error_type {
            ErrorType::ExtractionError => &["fact-extraction-system-prompt"],
            ErrorType::UpdateError | ErrorType::DeletionError => &["memory-update-decision-prompt"],
            ErrorType::ResponseError => &["question-answering-prompt"],
            _ => &[],
        };
        assert_eq!(got, want, "{} at {}", a.error_type, a.op_name);
        seen.push(a.error_type);
    }
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 5, "the demo holds every error type");

    // A user-chosen exclusion removes a target.
    let sel = Selection {
        exclude: vec!["question-answering-prompt".into()],
        ..Selection::default()
    };
    assert!(!targets(&t, &sel).contains_key("question-answering-prompt"));
}
