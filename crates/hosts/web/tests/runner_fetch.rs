#![cfg(target_arch = "wasm32")]
//! The page's batch runner over real `fetch` in headless Chromium against the local scripted
//! server (`MEMTRACE_TEST_LLM_URL`): the scripted graphtrace conversation yields the annotated
//! verdict with its transcript and cost (steps resolved live as results come back), and Cancel
//! stops a batch before it finishes.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

mod common;

use std::rc::Rc;

use memtrace::attribution::RoleConfig;
use memtrace::provider::ApiKey;
use memtrace::{load, LoadOptions};
use memtrace_web::runs::llm_run::ProviderSettings;
use memtrace_web::services::runner::{run_cases, RunEvent, Stopper};
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

use common::{graphtrace, recorder, BASE, FIXTURE};

wasm_bindgen_test_configure!(run_in_browser);

fn settings(model: &str) -> ProviderSettings {
    ProviderSettings {
        base_url: format!("{BASE}/v1"),
        model: model.to_owned(),
        input_usd_per_mtok: 1.0,
        output_usd_per_mtok: 4.0,
        timeout_ms: 20_000,
        ..ProviderSettings::default()
    }
}

#[wasm_bindgen_test]
async fn the_scripted_case_finishes_with_transcript_and_cost() {
    let trace = std::sync::Arc::new(load(FIXTURE, LoadOptions::default()).unwrap().trace);
    let ann = trace.cases[0].annotation.clone().unwrap();
    let model = format!("script:agent_graphtrace@runner-{:.0}", js_sys::Date::now());
    let (events, report) = recorder();
    run_cases(
        trace,
        graphtrace(),
        vec![0],
        settings(&model),
        RoleConfig::default(),
        Some(ApiKey::new("sk-runner")),
        Stopper::new().unwrap(),
        report,
    )
    .await;
    let events = events.borrow();
    let replies = events
        .iter()
        .filter(|e| matches!(e, RunEvent::Reply { .. }))
        .count();
    let verdict = events
        .iter()
        .find_map(|e| match e {
            RunEvent::Finished { verdict, .. } => Some(verdict.clone()),
            _ => None,
        })
        .expect("a verdict");
    assert_eq!(verdict.op_id, ann.op_id);
    assert_eq!(verdict.error_type, ann.error_type);
    let cost = verdict.cost.unwrap();
    assert_eq!(cost.llm_calls as usize, replies);
    assert!(cost.cost_usd > 0.0);
    assert!(verdict
        .transcript
        .iter()
        .any(|s| s.nodes.contains(&ann.op_id)));
    // Every turn but the last is resolved live, with its results, by the next request.
    let resolved: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::Resolved { steps, .. } => Some(steps),
            _ => None,
        })
        .collect();
    assert_eq!(resolved.len(), replies - 1);
    assert!(resolved
        .iter()
        .flat_map(|s| s.iter())
        .all(|s| !s.result.is_empty()));
    assert_eq!(events.last(), Some(&RunEvent::Ended { cancelled: false }));
}

#[wasm_bindgen_test]
async fn cancel_stops_the_batch() {
    let trace = std::sync::Arc::new(load(FIXTURE, LoadOptions::default()).unwrap().trace);
    let all: Vec<usize> = (0..trace.cases.len()).collect();
    let stopper = Stopper::new().unwrap();
    let (events, sink) = recorder();
    // Stop as soon as the first call is answered.
    let stop = stopper.clone();
    let report: Rc<dyn Fn(RunEvent)> = Rc::new(move |e: RunEvent| {
        if matches!(e, RunEvent::Reply { .. }) {
            stop.stop();
        }
        sink(e);
    });
    let model = format!("auto@cancel-{:.0}", js_sys::Date::now());
    run_cases(
        trace,
        graphtrace(),
        all,
        settings(&model),
        RoleConfig::default(),
        None,
        stopper,
        report,
    )
    .await;
    let events = events.borrow();
    assert!(!events
        .iter()
        .any(|e| matches!(e, RunEvent::Finished { .. } | RunEvent::Failed { .. })));
    assert_eq!(events.last(), Some(&RunEvent::Ended { cancelled: true }));
}
