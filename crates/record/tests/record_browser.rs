#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed expectation should panic
//! The recorder in headless Chromium: scopes, instrumented futures and export work without
//! threads or a system clock.

use std::sync::Arc;

use memtrace::format::{load, LoadOptions};
use memtrace_record::{
    GraphInfo, Instrument, OpSpec, Recorder, SessionSpec, SteppingClock, VarSpec,
};
use serde_json::json;
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
async fn records_in_the_browser() {
    let rec = Recorder::new(
        GraphInfo::new("u", "p"),
        Arc::new(SteppingClock::starting_at("2026-01-01 00:00:00", 1)),
        1,
    );
    let s = rec.session(SessionSpec::new("c"));
    let op = s.op(OpSpec::new("answer", "evaluation"));
    let r2 = rec.clone();
    let seen = async move {
        let q = r2.var(VarSpec::named("q", json!("why?")));
        let a = r2.var(VarSpec::named("a", json!("because")));
        r2.link(&q, &a, "answered");
        r2.current().map(|c| c.id().to_owned())
    }
    .instrument(op.clone())
    .await;
    assert_eq!(seen.as_deref(), Some(op.id()));
    let trace = load(&rec.to_json(), LoadOptions::default())
        .expect("loads")
        .trace;
    assert_eq!(trace.edges.len(), 1);
}
