//! Faults over real HTTP: under a 30 % injected fault rate (429 with Retry-After, 500,
//! connection resets, slow replies past the timeout) a batch of 50 requests completes with the
//! right answers; retries are counted, and the measured wait after each 429 is at least its
//! `Retry-After`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

mod common;

use std::time::Instant;

use common::Server;
use memtrace::provider::{
    chat_batch, ApiKind, ChatMessage, ChatRequest, ChatRole, HttpLlm, ProviderError,
};
use memtrace_native::http::{NativeTransport, ThreadSleep};
use serde_json::{json, Value};

fn batch(n: usize) -> Vec<ChatRequest> {
    (0..n)
        .map(|i| ChatRequest {
            messages: vec![ChatMessage::text(
                ChatRole::User,
                format!("request number {i}"),
            )],
            ..ChatRequest::default()
        })
        .collect()
}

fn last_text(rec: &Value) -> String {
    let m = &rec["body"]["messages"][0]["content"];
    m.as_str().map_or_else(
        || m[0]["text"].as_str().unwrap_or_default().to_owned(),
        str::to_owned,
    )
}

fn run_faulty_batch(api: ApiKind, seed: u64) {
    let server = Server::start();
    server.control(
        &json!({"fault_rate": 0.3, "seed": seed, "kinds": ["429", "500", "reset", "slow"],
                           "retry_after_s": 1, "slow_ms": 2500}),
    );
    let mut cfg = server.config(api, "echo-model", "sk-fault-test");
    cfg.timeout_ms = 1200; // shorter than the slow replies, so they time out and are retried
    cfg.retry.max_retries = 10;
    let llm = HttpLlm::new(cfg, NativeTransport::default(), ThreadSleep).unwrap();
    let started = Instant::now();
    let out = futures_executor::block_on(chat_batch(&llm, &batch(50), 8));
    let elapsed_ms = started.elapsed().as_millis();

    for (i, r) in out.iter().enumerate() {
        let reply = r
            .as_ref()
            .unwrap_or_else(|e| panic!("request {i} failed: {e}"));
        assert_eq!(reply.content, format!("echo: request number {i}"));
    }
    let log = server.log();
    let faulted: Vec<&Value> = log.iter().filter(|r| !r["fault"].is_null()).collect();
    let stats = llm.stats();
    assert_eq!(stats.calls, 50);
    assert_eq!(
        stats.attempts as usize,
        log.len(),
        "every attempt reached the server"
    );
    assert_eq!(
        stats.retries as usize,
        faulted.len(),
        "one retry per injected fault"
    );
    assert!(
        faulted.len() >= 5,
        "the fault rate was applied: {} faults",
        faulted.len()
    );

    // Server-side measurement: after a 429 with Retry-After 1, the same request comes back no
    // sooner than 1000 ms after the 429 was sent.
    let mut waits_ms = Vec::new();
    for rec in log.iter().filter(|r| r["fault"] == "429") {
        let seq = rec["seq"].as_u64().unwrap();
        let text = last_text(rec);
        let next = log
            .iter()
            .find(|r| r["seq"].as_u64().unwrap() > seq && last_text(r) == text)
            .expect("the rate-limited request was retried");
        let wait = next["t_ms"].as_f64().unwrap() - rec["t_done_ms"].as_f64().unwrap();
        assert!(
            wait >= 1000.0,
            "retried after {wait} ms, Retry-After was 1 s"
        );
        waits_ms.push(wait);
    }
    assert!(!waits_ms.is_empty(), "no 429 was injected: change the seed");
    let min_wait = waits_ms.iter().copied().fold(f64::INFINITY, f64::min);
    let kinds = |k: &str| faulted.iter().filter(|r| r["fault"] == k).count();
    println!(
        "{api:?}: 50 requests, {} attempts, {} retries (429: {}, 500: {}, reset: {}, slow: {}); \
         measured wait after 429: min {min_wait:.0} ms over {} (Retry-After 1000 ms); \
         client max backoff {} ms; batch took {elapsed_ms} ms",
        stats.attempts,
        stats.retries,
        kinds("429"),
        kinds("500"),
        kinds("reset"),
        kinds("slow"),
        waits_ms.len(),
        stats.max_wait_ms
    );
}

#[test]
fn openai_batch_under_thirty_percent_faults() {
    run_faulty_batch(ApiKind::OpenAi, 7);
}

#[test]
fn anthropic_batch_under_thirty_percent_faults() {
    run_faulty_batch(ApiKind::Anthropic, 11);
}

#[test]
fn clear_errors_for_401_404_and_exhausted_retries() {
    let server = Server::start();
    let call = |base: &str, model: &str, retries: u32| {
        let mut cfg = server.config(ApiKind::OpenAi, model, "sk-x");
        cfg.base_url = server.url(base);
        cfg.retry.max_retries = retries;
        let llm = HttpLlm::new(cfg, NativeTransport::default(), ThreadSleep).unwrap();
        let r = futures_executor::block_on(chat_batch(&llm, &batch(1), 1));
        (r.into_iter().next().unwrap().unwrap_err(), llm.stats())
    };
    let (e, s) = call("/_fault/401/v1", "m", 3);
    assert_eq!(e, ProviderError::Unauthorized);
    assert!(e.to_string().contains("API key"));
    assert_eq!(s.retries, 0);
    let (e, _) = call("/v1", "missing", 3);
    assert!(matches!(&e, ProviderError::NotFound { url } if url.ends_with("/v1/chat/completions")));
    let (e, s) = call("/_fault/500/v1", "m", 2);
    assert!(
        matches!(&e, ProviderError::Http { status: 500, message } if message.contains("injected"))
    );
    assert_eq!((s.attempts, s.retries), (3, 2));
    let (e, _) = call("/_fault/429/v1", "m", 0);
    assert_eq!(e, ProviderError::RateLimited);
}

#[test]
fn slow_reply_times_out() {
    let server = Server::start();
    let mut cfg = server.config(ApiKind::Anthropic, "m", "sk-x");
    cfg.base_url = server.url("/_fault/slow/v1");
    cfg.timeout_ms = 300;
    cfg.retry.max_retries = 0;
    server.control(&json!({"slow_ms": 1200}));
    let llm = HttpLlm::new(cfg, NativeTransport::default(), ThreadSleep).unwrap();
    let started = Instant::now();
    let r = futures_executor::block_on(chat_batch(&llm, &batch(1), 1));
    let took = started.elapsed().as_millis();
    assert_eq!(r[0], Err(ProviderError::Timeout { after_ms: 300 }));
    assert!((300..1200).contains(&took), "timed out after {took} ms");
}

#[test]
fn cancel_ends_a_request_in_flight() {
    let server = Server::start();
    server.control(&json!({"slow_ms": 3000}));
    let mut cfg = server.config(ApiKind::OpenAi, "m", "sk-x");
    cfg.base_url = server.url("/_fault/slow/v1");
    let token = memtrace::provider::CancelToken::new();
    let llm = HttpLlm::new(cfg, NativeTransport::default(), ThreadSleep)
        .unwrap()
        .with_cancel(token.clone());
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(200));
        token.cancel();
    });
    let started = Instant::now();
    let r = futures_executor::block_on(chat_batch(&llm, &batch(3), 3));
    let took = started.elapsed().as_millis();
    canceller.join().unwrap();
    assert!(
        r.iter().all(|x| *x == Err(ProviderError::Cancelled)),
        "{r:?}"
    );
    assert!(
        (200..2000).contains(&took),
        "cancelled after {took} ms (the replies take 3000)"
    );
    println!("cancel: 3 requests in flight ended after {took} ms");
}
