//! One optimization step over attributed traces (`memtrace optimize FILES…`, the module's
//! `optimizeStep`): the demo's info-flow verdicts map onto its prompts, the judge's prompt is
//! left out, and an accepted edit becomes version 2 with its parent, diff and cases; the export
//! files are named as the CLI writes them.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed expectation should panic

use memtrace::attribution::InfoFlow;
use memtrace::format::{load, LoadOptions};
use memtrace::optimize::export::{files, ExportFormat};
use memtrace::optimize::gather::{versions, Gathered};
use memtrace::optimize::targets::{default_selection, JUDGE_PROMPT};
use memtrace::optimize::{Edit, StepOutcome};

#[test]
fn demo_verdicts_map_onto_prompts_and_an_edit_becomes_version_two() {
    let trace = load(include_bytes!("../www/demo.json"), LoadOptions::default())
        .unwrap()
        .trace;
    let verdicts: Vec<_> = trace
        .cases
        .iter()
        .filter_map(|c| InfoFlow::default().attribute(&trace, c).ok())
        .collect();
    assert!(!verdicts.is_empty());
    let mut g = Gathered::default();
    g.add(&trace, &verdicts, &default_selection(), 2000);
    assert!(!g.values.is_empty() && !g.values.contains_key(JUDGE_PROMPT));
    assert!(!g.failures.is_empty(), "{:?}", g.not_optimizable);
    assert!(
        g.failures.len() + g.not_optimizable.len() >= verdicts.len(),
        "every verdict is mapped or reported"
    );
    for f in &g.failures {
        assert!(g.values.contains_key(&f.target), "{}", f.target);
        assert!(verdicts
            .iter()
            .any(|v| v.case_id == f.case_id && v.op_id == f.op_id));
    }

    let target = g.failures[0].target.clone();
    let old = g.values[&target].clone();
    let out = StepOutcome {
        edits: vec![Edit {
            target: target.clone(),
            old_value: old.clone(),
            new_value: format!("{old}\nKeep every date."),
            accepted: true,
            rationale: "dates".into(),
            feedback: "Keep every date.".into(),
            cases: vec![g.failures[0].case_id.clone()],
            rejected: Vec::new(),
        }],
        ..StepOutcome::default()
    };
    let vs = versions(&g.values, &out, Some(0.5));
    assert_eq!(vs.iter().filter(|v| v.version == 1).count(), g.values.len());
    let v2 = vs.iter().find(|v| v.version == 2).unwrap();
    assert_eq!(
        (v2.name.as_str(), v2.parent, v2.cost_usd),
        (target.as_str(), Some(1), Some(0.5))
    );
    assert!(v2.diff.contains("+Keep every date."), "{}", v2.diff);

    let text = files(&vs, ExportFormat::Text);
    assert!(text.iter().all(|(p, _)| p.starts_with("prompts/")));
    assert!(text
        .iter()
        .any(|(p, t)| *p == format!("prompts/{target}@2.txt") && t.ends_with("Keep every date.")));
    let [(path, json)] = files(&vs, ExportFormat::UpdateResults).try_into().unwrap();
    assert_eq!(path, "update_results.json");
    let keyed: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        keyed[format!("{target}@2")]["parent"],
        format!("{target}@1")
    );
}
