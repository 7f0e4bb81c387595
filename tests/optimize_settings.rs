//! The closed loop tunes the memory system's settings, not only its prompts, and keeps a round
//! only when held-out accuracy does not drop.
//!
//! - On the built-in settings conversations (tests/optimize_data/settings.json: each holds
//!   questions whose evidence is a long memory the similarity ranking puts third, under short
//!   ones sharing the question's names), a Mem0 loop starting at `top_k` 2 attributes those
//!   failures as RetrievalErrors, the integer operator raises `top_k` to cover the missed
//!   ranks, and held-out accuracy rises; the same loop tuning prompts only does not rise.
//! - A prompt edit that raises train accuracy but lowers held-out accuracy is rejected: the
//!   round says why and the prompts go back.
//!
//! The optimizer is the scripted one the page's e2e test uses (tests/llm_server/scripts/optimize_loop.json)
//! or a script written here; the memory system is the simulated provider.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed expectation should panic

use memtrace::optimize::settings::TOP_K;
use memtrace::provider::{Script, ScriptedLlm};
use memtrace_memsys::closed_loop::keep::settings_text;
use memtrace_memsys::closed_loop::{advance, LoopConfig, LoopState, Phase};
use memtrace_memsys::locomo::parse_conversations;
use memtrace_memsys::simulated::SimulatedLlm;
use memtrace_memsys::{demo, Conversation, Prompts};
use serde_json::json;

fn parse(text: &str) -> Vec<Conversation> {
    parse_conversations(text.as_bytes()).unwrap()
}

fn page_script() -> ScriptedLlm {
    ScriptedLlm::new(
        Script::from_json(include_str!("llm_server/scripts/optimize_loop.json")).unwrap(),
    )
}

fn run(convs: &[Conversation], cfg: LoopConfig, optimizer: &ScriptedLlm) -> LoopState {
    let mut state = LoopState::new(cfg, Prompts::default()).unwrap();
    let mut steps = 0;
    while state.phase != Phase::Done {
        let saved = serde_json::to_string(&state).unwrap();
        state = serde_json::from_str(&saved).unwrap();
        futures_executor::block_on(advance(
            &mut state,
            convs,
            &SimulatedLlm,
            optimizer,
            &mut |_| {},
        ))
        .unwrap();
        steps += 1;
        assert!(steps < 30, "the loop does not finish");
    }
    state
}

fn print(label: &str, state: &LoopState) {
    println!("== {label}\n{}", state.chart_text());
    println!("series {}", state.series_json());
    print!("{}", settings_text(state));
    for r in &state.rounds {
        println!(
            "round {} top_k {:?}: train {}/{} held-out {}/{}, by type {:?}, prompt edits {}, setting edits {:?}, rejected {:?}",
            r.round,
            r.settings.get(TOP_K),
            r.train.right,
            r.train.total,
            r.heldout.right,
            r.heldout.total,
            r.by_type,
            r.edits.iter().filter(|e| e.accepted && e.new_value != e.old_value).count(),
            r.setting_edits.iter().map(|e| (e.old_value, e.new_value)).collect::<Vec<_>>(),
            r.rejected
        );
    }
}

fn starved(settings: Vec<String>) -> LoopConfig {
    let mut cfg = LoopConfig {
        rounds: 2,
        train: vec![0],
        heldout: vec![1],
        settings,
        ..LoopConfig::default()
    };
    cfg.memsys.top_k = 2;
    cfg
}

#[test]
fn a_starved_top_k_is_raised_and_held_out_accuracy_rises() {
    let convs = parse(include_str!("optimize_data/settings.json"));
    let tuned = run(&convs, starved(vec![TOP_K.into()]), &page_script());
    print("prompts and top_k", &tuned);
    let prompts_only = run(&convs, starved(Vec::new()), &page_script());
    print("prompts only", &prompts_only);

    let held = |s: &LoopState| -> Vec<f64> { s.series().iter().map(|x| x.2.unwrap()).collect() };
    let (h, p) = (held(&tuned), held(&prompts_only));
    assert_eq!(h.len(), 3);
    assert!(
        h[1] > h[0],
        "held-out accuracy rises after the top_k change: {h:?}"
    );
    assert!(
        h[2] > p[2],
        "tuning top_k beats prompt edits alone: {h:?} vs {p:?}"
    );
    assert!(p[2] <= p[0], "prompt edits alone do not raise it: {p:?}");
    // The failures were retrieval errors, the setting moved and carries its lineage.
    let r0 = &tuned.rounds[0];
    assert!(
        r0.by_type.get("RetrievalError").copied().unwrap_or(0) > 0,
        "{:?}",
        r0.by_type
    );
    assert_eq!(r0.settings.get(TOP_K), Some(&2));
    let edit = &r0.setting_edits[0];
    assert_eq!(edit.name, TOP_K);
    assert!(edit.new_value > 2 && !edit.cases.is_empty(), "{edit:?}");
    assert!(
        edit.reason.contains("just below the cut"),
        "{}",
        edit.reason
    );
    assert_eq!(tuned.rounds[1].settings.get(TOP_K), Some(&edit.new_value));
    let v2 = tuned
        .setting_versions
        .iter()
        .find(|v| v.name == TOP_K && v.version == 2)
        .unwrap();
    assert_eq!(
        (v2.parent, v2.value, v2.round),
        (Some(1), edit.new_value, Some(0))
    );
    assert_eq!(v2.score, Some(h[1]));
    assert!(tuned.rounds.iter().all(|r| r.rejected.is_none()));
    assert!(settings_text(&tuned).contains("top_k@2 ="));
    assert!(tuned
        .chart_text()
        .contains(&format!("top_k {}", edit.new_value)));
    // Every question is kept with its verdict, both splits.
    assert_eq!(r0.verdicts.len(), r0.train.total + r0.heldout.total);
    assert!(r0
        .verdicts
        .iter()
        .any(|v| !v.correct && v.error_type.as_deref() == Some("RetrievalError")));
}

/// Conversations 0 and 1 of conversations.json and the household-robot demo, as the page
/// lists them.
fn with_robot() -> Vec<Conversation> {
    let mut convs = parse(include_str!("optimize_data/conversations.json"));
    let mut robot = demo::conversation();
    robot.index = convs.len() + 1;
    convs.push(robot);
    convs
}

#[test]
fn a_round_that_lowers_held_out_accuracy_is_rejected() {
    let convs = with_robot();
    let base = Prompts::default();
    // Dates help the training conversation; turning questions into facts hurts the held-out one.
    let worse = format!(
        "{} Keep every date. Include questions.",
        base.fact_extraction
    );
    let steps = json!([
        {"match_last": "TASK: feedback", "repeat": true, "reply": {"text": "{\"rationale\": \"dates\", \"feedback\": \"Keep dates and questions.\"}"}},
        {"match_last": "TASK: aggregate", "repeat": true, "reply": {"text": "{\"summary\": \"Keep dates and questions.\"}"}},
        {"match_last": "TASK: update prompt `fact-extraction-system-prompt`", "repeat": true, "reply": {"text": json!({"rationale": "dates", "improved_value": worse}).to_string()}},
        {"match_last": "TASK: update prompt", "repeat": true, "reply": {"text": json!({"rationale": "keep", "improved_value": "unused"}).to_string()}}
    ]);
    let optimizer = ScriptedLlm::new(
        serde_json::from_value(json!({"steps": steps, "fallback": "error"})).unwrap(),
    );
    let cfg = LoopConfig {
        rounds: 1,
        train: vec![0],
        heldout: vec![2],
        ..LoopConfig::default()
    };
    let state = run(&convs, cfg, &optimizer);
    print("a worse prompt", &state);
    let s = state.series();
    assert!(s[1].1 > s[0].1, "train accuracy rose: {s:?}");
    assert!(s[1].2 < s[0].2, "held-out accuracy fell: {s:?}");
    let why = state.rounds[1]
        .rejected
        .as_deref()
        .expect("round 1 is rejected");
    assert!(
        why.contains("held-out accuracy") && why.contains("round 0"),
        "{why}"
    );
    assert!(state.chart_text().contains("rejected"));
    assert_eq!(state.prompts, base, "the prompts went back to round 0's");
    let v2 = state
        .versions
        .iter()
        .find(|v| v.version == 2)
        .expect("the edit is kept as a rejected version");
    assert_eq!(v2.rejected.as_deref(), Some(why));
    assert_eq!(state.current_versions().get(&v2.name), Some(&1));
    assert_eq!(state.kept.as_ref().map(|k| k.round), Some(0));
}
