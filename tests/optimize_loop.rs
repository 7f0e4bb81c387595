//! The closed loop feeds prompts back into the system: the reference memory system runs with the
//! simulated provider (whose extractor drops relative dates unless its prompt asks for dates),
//! failures are attributed (info-flow) and mapped to prompts, and a scripted optimizer answers
//! every update with the prompt plus a date rule. Accuracy rises in the next round, on the
//! training and the held-out conversation; the chart and the JSON series are printed.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed expectation should panic

use memtrace::provider::{Script, ScriptedLlm};
use memtrace_memsys::closed_loop::{advance, run_to_end, LoopConfig, LoopState, Phase};
use memtrace_memsys::locomo::parse_conversations;
use memtrace_memsys::simulated::SimulatedLlm;
use memtrace_memsys::{Conversation, Prompts};
use serde_json::json;

pub fn conversations() -> Vec<Conversation> {
    parse_conversations(include_bytes!("optimize_data/conversations.json")).unwrap()
}

/// Feedback and aggregation replies for any target; the update of the extraction prompt adds the
/// rules the simulated extractor follows (keep short facts, keep dates); other updates keep the
/// prompt as it is, so the extraction edit alone explains the change.
fn optimizer_script(p: &Prompts) -> Script {
    let add = |old: &str, rule: &str| {
        json!({"rationale": "the failures lost or ignored dates", "improved_value": format!("{old} {rule}")}).to_string()
    };
    let steps = json!([
        {"match_last": "TASK: feedback", "repeat": true, "reply": {"text": "{\"rationale\": \"the relative date was dropped\", \"feedback\": \"Keep every date: resolve relative dates such as yesterday.\"}"}},
        {"match_last": "TASK: aggregate", "repeat": true, "reply": {"text": "{\"summary\": \"Keep every date and resolve relative dates.\"}"}},
        {"match_last": "TASK: update prompt `fact-extraction-system-prompt`", "repeat": true, "reply": {"text": add(&p.fact_extraction, "Extract every detail, even short sentences. Keep every date: resolve relative dates.")}},
        {"match_last": "TASK: update prompt `question-answering-prompt`", "repeat": true, "reply": {"text": json!({"rationale": "the answer used what it was given", "improved_value": p.question_answering}).to_string()}},
        {"match_last": "TASK: update prompt `memory-update-decision-prompt`", "repeat": true, "reply": {"text": json!({"rationale": "no change needed", "improved_value": p.update_decision}).to_string()}}
    ]);
    serde_json::from_value(json!({"steps": steps, "fallback": "error"})).unwrap()
}

#[test]
fn an_edit_that_adds_the_date_rule_raises_accuracy_next_round() {
    let convs = conversations();
    let base = Prompts::default();
    let optimizer = ScriptedLlm::new(optimizer_script(&base));
    let cfg = LoopConfig {
        rounds: 2,
        train: vec![0],
        heldout: vec![1],
        model: "gpt-4o-mini".into(),
        ..LoopConfig::default()
    };
    let mut state = LoopState::new(cfg, base.clone()).unwrap();
    let mut steps = 0;
    let mut progress_calls = 0;
    while state.phase != Phase::Done {
        // Resume from JSON every step, as the page and the CLI do.
        let saved = serde_json::to_string(&state).unwrap();
        state = serde_json::from_str(&saved).unwrap();
        futures_executor::block_on(advance(
            &mut state,
            &convs,
            &SimulatedLlm,
            &optimizer,
            &mut |_| progress_calls += 1,
        ))
        .unwrap();
        steps += 1;
        assert!(steps < 20, "the loop does not finish");
    }
    println!("{}", state.chart_text());
    println!("series {}", state.series_json());
    for r in &state.rounds {
        println!(
            "round {} by type {:?}, not optimizable {}, edits {:?}",
            r.round,
            r.by_type,
            r.not_optimizable,
            r.edits
                .iter()
                .map(|e| (&e.target, e.accepted, e.cases.len()))
                .collect::<Vec<_>>()
        );
    }
    let series = state.series();
    assert_eq!(series.len(), 3, "rounds 0, 1 and the final evaluation");
    let (_, train0, held0) = series[0];
    let (_, train1, held1) = series[1];
    assert!(
        train1 > train0,
        "train accuracy should rise after the edit: {train0} -> {train1}"
    );
    assert!(
        held1.unwrap() > held0.unwrap(),
        "held-out accuracy should rise: {held0:?} -> {held1:?}"
    );
    assert!(progress_calls > 0);
    // Resuming on other conversations is refused.
    let err = futures_executor::block_on(advance(
        &mut state,
        &convs[..1],
        &SimulatedLlm,
        &optimizer,
        &mut |_| {},
    ))
    .unwrap_err();
    assert!(
        err.to_string().contains("load the same conversations"),
        "{err}"
    );
    // The edit that raised it carries its lineage and is a new version with a diff.
    assert!(state.prompts.fact_extraction.contains("Keep every date"));
    assert_eq!(state.prompts.question_answering, base.question_answering);
    let changed: Vec<_> = state.versions.iter().filter(|v| v.version > 1).collect();
    assert!(!changed.is_empty());
    for v in &changed {
        assert_eq!(v.parent, Some(v.version - 1));
        assert!(v.diff.contains('+'), "{}", v.diff);
        assert!(!v.cases.is_empty() && !v.feedback.is_empty());
        assert_eq!(v.name, "fact-extraction-system-prompt");
    }
    // Every optimizer request fenced its trace text as data.
    for r in optimizer.requests() {
        let user = &r.messages[1].content;
        assert!(
            user.contains("<<<BEGIN") && user.contains("<<<END"),
            "{user}"
        );
    }
}

#[test]
fn the_loop_page_charts_each_round_and_shows_the_edit_lineage() {
    let convs = conversations();
    let base = Prompts::default();
    let optimizer = ScriptedLlm::new(optimizer_script(&base));
    let cfg = LoopConfig {
        rounds: 1,
        train: vec![0],
        heldout: vec![1],
        ..LoopConfig::default()
    };
    let mut state = LoopState::new(cfg, base).unwrap();
    futures_executor::block_on(run_to_end(&mut state, &convs, &SimulatedLlm, &optimizer)).unwrap();
    let page = memtrace_memsys::closed_loop::page::loop_html(&state);
    assert_eq!(page.matches("<rect class=\"train\"").count(), 2);
    assert_eq!(page.matches("<rect class=\"heldout\"").count(), 2);
    let heights: Vec<usize> = page
        .match_indices("<rect class=\"train\"")
        .map(|(i, _)| {
            let rest = &page[i..];
            let h = rest.split("height=\"").nth(1).unwrap();
            h[..h.find('"').unwrap()].parse().unwrap()
        })
        .collect();
    assert!(
        heights[1] > heights[0],
        "the chart shows the rise: {heights:?}"
    );
    assert!(page.contains("fact-extraction-system-prompt@2 (from @1, round 0)"));
    assert!(page.contains("<span class=\"add\">+"));
    assert!(page.contains("<ins>"), "the word diff shows the added rule");
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("optimize.html"), &page).unwrap();
}

#[test]
fn the_word_diff_marks_only_the_added_rule() {
    let html = memtrace_memsys::closed_loop::page::word_diff_html(
        "Extract facts. Return JSON.",
        "Extract facts. Keep every date. Return JSON.",
    );
    assert_eq!(
        html.matches("<ins>").count(),
        html.matches("</ins>").count()
    );
    let added: String = html
        .split("<ins>")
        .skip(1)
        .map(|s| s.split("</ins>").next().unwrap())
        .collect();
    assert_eq!(added.trim(), "Keep every date.", "{html}");
    assert!(!html.contains("<del>"), "{html}");
}
