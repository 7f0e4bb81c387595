//! The API key goes only into the credential header of requests to the configured base URL:
//! never into a body, a URL, another header, a redirect to another host, an error, a log line
//! or an exported file.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

mod common;

use std::process::Command;

use common::Server;
use memtrace::provider::{
    chat_batch, run_tool_loop, ApiKind, ChatMessage, ChatRequest, ChatRole, HttpLlm, ToolSpec,
};
use memtrace_native::http::{NativeTransport, ThreadSleep};
use serde_json::{json, Value};

const KEY: &str = "sk-memtrace-SECRET-7f3a9c";

fn ask(text: &str) -> ChatRequest {
    ChatRequest {
        messages: vec![ChatMessage::text(ChatRole::User, text)],
        tools: vec![ToolSpec {
            name: "get_weather".into(),
            description: "d".into(),
            parameters: json!({"type": "object"}),
        }],
        ..ChatRequest::default()
    }
}

/// Checks that the key appears in each logged request exactly in its credential header.
fn assert_key_only_in_credential_header(log: &[Value], api: ApiKind) {
    assert!(!log.is_empty());
    for rec in log {
        common::conversation::check_headers_and_key(rec, api, KEY);
    }
}

#[test]
fn key_only_in_the_credential_header_for_both_shapes() {
    for api in [ApiKind::OpenAi, ApiKind::Anthropic] {
        let server = Server::start();
        let cfg = server.config(api, "script:weather", KEY);
        assert!(!format!("{cfg:?}").contains(KEY));
        let llm = HttpLlm::new(cfg, NativeTransport::default(), ThreadSleep).unwrap();
        let req = ask("What is the weather in Paris and Oslo?");
        let out = futures_executor::block_on(run_tool_loop(&llm, req, 8, |_, args| {
            Ok(match args["city"].as_str() {
                Some("Paris") => "Paris: 18 C".to_owned(),
                _ => "Oslo: 4 C".to_owned(),
            })
        }))
        .unwrap();
        assert!(out.turns >= 3);
        let log = server.log();
        assert_eq!(log.len(), out.turns);
        assert_key_only_in_credential_header(&log, api);
        assert!(!format!("{out:?}").contains(KEY));
    }
}

#[test]
fn errors_never_carry_the_key() {
    let server = Server::start();
    let mut errors = Vec::new();
    for (base, timeout_ms) in [
        (server.url("/_fault/401/v1"), 2000),
        (server.url("/_fault/500/v1"), 2000),
        (server.url("/_fault/echo_key/v1"), 2000),
        (server.url("/_fault/slow/v1"), 100),
        ("http://127.0.0.1:9/v1".to_owned(), 2000),
    ] {
        for api in [ApiKind::OpenAi, ApiKind::Anthropic] {
            let mut cfg = server.config(api, "m", KEY);
            cfg.base_url.clone_from(&base);
            cfg.timeout_ms = timeout_ms;
            cfg.retry.max_retries = 1;
            let llm = HttpLlm::new(cfg, NativeTransport::default(), ThreadSleep).unwrap();
            let r = futures_executor::block_on(chat_batch(&llm, &[ask("hi")], 1));
            let e = r.into_iter().next().unwrap().unwrap_err();
            errors.push((base.clone(), e));
        }
    }
    for (base, e) in &errors {
        let shown = format!("{e} {e:?}");
        assert!(!shown.contains(KEY), "{base}: {shown}");
    }
    let echoed = errors.iter().find(|(b, _)| b.contains("echo_key")).unwrap();
    assert!(
        echoed.1.to_string().contains("<redacted>"),
        "the server's quote was redacted: {}",
        echoed.1
    );
}

#[test]
fn redirects_to_another_host_are_not_followed() {
    let server = Server::start();
    let other = Server::start();
    server.control(&json!({"redirect_to": other.url("")}));
    for api in [ApiKind::OpenAi, ApiKind::Anthropic] {
        let mut cfg = server.config(api, "m", KEY);
        cfg.base_url = server.url("/_fault/redirect/v1");
        let llm = HttpLlm::new(cfg, NativeTransport::default(), ThreadSleep).unwrap();
        let r = futures_executor::block_on(chat_batch(&llm, &[ask("hi")], 1));
        let e = r.into_iter().next().unwrap().unwrap_err();
        assert!(e.to_string().contains("HTTP 307"), "{e}");
    }
    assert!(
        other.log().is_empty(),
        "the other host received: {:?}",
        other.log()
    );
}

#[test]
fn cli_output_and_exported_stats_never_carry_the_key() {
    let server = Server::start();
    let dir = std::env::temp_dir().join(format!("memtrace-key-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let stats = dir.join("stats.json");
    let run = |provider: &str, base: &str| {
        Command::new(env!("CARGO_BIN_EXE_memtrace"))
            .args([
                "llm-ping",
                "--provider",
                provider,
                "--base-url",
                base,
                "--model",
                "echo-model",
            ])
            .args(["--count", "3", "--stats-out"])
            .arg(&stats)
            .env("MEMTRACE_API_KEY", KEY)
            .output()
            .unwrap()
    };
    for (provider, api) in [
        ("openai", ApiKind::OpenAi),
        ("anthropic", ApiKind::Anthropic),
    ] {
        let ok = run(provider, &server.url("/v1"));
        assert!(
            ok.status.success(),
            "{}",
            String::from_utf8_lossy(&ok.stderr)
        );
        let stdout = String::from_utf8_lossy(&ok.stdout);
        assert!(stdout.contains("echo: ping #2"), "{stdout}");
        let exported = std::fs::read_to_string(&stats).unwrap();
        assert!(exported.contains("\"calls\": 3"), "{exported}");
        let failed = run(provider, &server.url("/_fault/echo_key/v1"));
        assert!(!failed.status.success());
        for text in [
            stdout.to_string(),
            String::from_utf8_lossy(&ok.stderr).to_string(),
            String::from_utf8_lossy(&failed.stdout).to_string(),
            String::from_utf8_lossy(&failed.stderr).to_string(),
            std::fs::read_to_string(&stats).unwrap(),
        ] {
            assert!(!text.contains(KEY), "key leaked: {text}");
        }
        let log: Vec<Value> = server
            .log()
            .into_iter()
            .filter(|r| {
                let p = r["path"].as_str().unwrap_or_default();
                p.ends_with("/messages") == (api == ApiKind::Anthropic)
            })
            .collect();
        assert_eq!(log.len(), 6, "3 pings and 3 failed calls");
        assert_key_only_in_credential_header(&log, api);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
