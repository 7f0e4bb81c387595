//! The closed loop on real LoCoMo conversations (`tests/data/locomo/`, read at run time,
//! the test fails when absent): temporal questions, the simulated provider running the memory system and
//! the committed optimizer script (`tests/llm_server/scripts/optimize_loop.json`) rewriting the
//! prompts. One round of optimization must lift accuracy on the training and the held-out
//! conversations.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed expectation should panic

mod common {
    include!("common/locomo.rs");
}

use memtrace::provider::{Script, ScriptedLlm};
use memtrace_memsys::closed_loop::{run_to_end, LoopConfig, LoopState};
use memtrace_memsys::simulated::SimulatedLlm;
use memtrace_memsys::Prompts;

#[test]
fn one_round_lifts_temporal_accuracy_on_locomo() {
    let dir = common::locomo_dir();
    let convs: Vec<_> = common::conversations(&dir).into_iter().take(3).collect();
    let script = Script::from_json(include_str!("llm_server/scripts/optimize_loop.json")).unwrap();
    let optimizer = ScriptedLlm::new(script);
    let cfg = LoopConfig {
        rounds: 1,
        train: vec![0],
        heldout: vec![1, 2],
        categories: vec![2],
        ..LoopConfig::default()
    };
    let mut state = LoopState::new(cfg, Prompts::default()).unwrap();
    futures_executor::block_on(run_to_end(&mut state, &convs, &SimulatedLlm, &optimizer)).unwrap();
    println!("{}", state.chart_text());
    println!("series {}", state.series_json());
    let r0 = &state.rounds[0];
    println!(
        "round 0 failures by type {:?}, not optimizable {}, optimizer calls {}",
        r0.by_type, r0.not_optimizable, r0.meter.calls
    );
    let s = state.series();
    assert!(s[1].1 > s[0].1 + 0.2, "train: {s:?}");
    assert!(s[1].2.unwrap() > s[0].2.unwrap() + 0.2, "held-out: {s:?}");
}
