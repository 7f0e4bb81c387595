//! Token accounting in `memtrace eval`: graphtrace and all-at-once on the same generated bench,
//! against the scripted LLM server with the same generic replies for both (`agent:6`: five
//! exploring calls then a verdict), so the input tokens compare what each method renders.
//! Uses `MEMTRACE_TEST_LLM_URL` when a server answers there, else starts one. Reads
//! `tests/data/locomo/` (fails when absent).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

mod common;

use std::process::Command;

use common::{gen_bench, Server};

/// The base URL of a running server, and the server this test started (if any).
fn server() -> (String, Option<Server>) {
    if let Ok(url) = std::env::var("MEMTRACE_TEST_LLM_URL") {
        let url = url.trim_end_matches('/').to_owned();
        if ureq::get(&format!("{url}/_health")).call().is_ok() {
            return (url, None);
        }
    }
    let s = Server::start();
    (s.url(""), Some(s))
}

/// The number after `label` in `text`.
fn number_after(text: &str, label: &str) -> Option<f64> {
    let rest = &text[text.find(label)? + label.len()..];
    rest.split_whitespace().next()?.parse().ok()
}

#[test]
fn graphtrace_sends_at_most_a_quarter_of_all_at_once_input_tokens() {
    let bench = gen_bench("eval-tokens", 3, 1);
    let (url, _server) = server();
    let out = common::succeeded(
        Command::new(env!("CARGO_BIN_EXE_memtrace"))
            .arg("eval")
            .arg(&bench)
            .args(["--method", "graphtrace,all-at-once"])
            .args(["--provider", "openai", "--base-url", &format!("{url}/v1")])
            .args(["--model", "agent:6", "--retry-base-ms", "20"])
            .env("MEMTRACE_API_KEY", "sk-eval-tokens-test"),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let _ = std::fs::remove_dir_all(&bench);
    let table = stdout
        .lines()
        .filter(|l| l.starts_with("| locomo_"))
        .count();
    let line = stdout
        .lines()
        .find(|l| l.starts_with("input-token ratio graphtrace / all-at-once:"))
        .unwrap_or_else(|| panic!("no ratio line in:\n{stdout}"));
    println!(
        "{}",
        stdout
            .lines()
            .skip_while(|l| !l.starts_with("tokens per case"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    let ratio = number_after(line, "all-at-once:").unwrap();
    let cases = number_after(line, "over").unwrap();
    assert!(
        table >= 10 && cases >= 10.0,
        "{table} rows, {cases} compared cases: {line}"
    );
    assert!(ratio > 0.0 && ratio <= 0.25, "{line}");
}
