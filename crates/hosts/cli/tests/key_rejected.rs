//! A 401 from the provider ends a case at once: one request per case (no retry of the call,
//! no second attempt of the case), reported as "key rejected". Native HTTP against the local
//! scripted server; the browser side is `crates/hosts/web/tests/key_rejected.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

mod common;

use std::process::Command;

use common::{repo_root, Server};
use serde_json::Value;

#[test]
fn a_rejected_key_ends_each_case_at_once() {
    let server = Server::start();
    let fixture = repo_root().join("tests/fixtures/smartcomment/locomo/locomo_locomo-2.json");
    assert!(fixture.is_file(), "needs {}", fixture.display());
    let model = format!("agent:3@key-{}", std::process::id());
    let out = common::succeeded(
        Command::new(env!("CARGO_BIN_EXE_memtrace"))
            .arg("attribute")
            .arg(&fixture)
            .args(["--json", "--method", "graphtrace", "--provider", "openai"])
            .args([
                "--base-url",
                &server.url("/_fault/401/v1"),
                "--model",
                &model,
            ])
            .args(["--retry-base-ms", "20"])
            .env("MEMTRACE_API_KEY", "sk-wrong"),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(!rows.is_empty());
    for r in &rows {
        let e = r["error"]
            .as_str()
            .unwrap_or_else(|| panic!("a verdict despite a 401: {r}"));
        assert!(e.contains("key rejected"), "{e}");
    }
    let requests = server
        .log()
        .into_iter()
        .filter(|r| r["body"]["model"] == model.as_str())
        .count();
    assert_eq!(requests, rows.len(), "one request per case");
}
