//! Unit tests of [`HttpLlm`] over a canned transport and a recording sleeper (no real time).

use std::cell::RefCell;
use std::collections::VecDeque;

use serde_json::{json, Value};

use super::*;
use crate::provider::config::ApiKey;
use crate::provider::http::RecordingSleep;
use crate::provider::retry::RetryPolicy;
use crate::provider::{chat_batch, ChatMessage, ChatRole, Usage};

type Reply = Result<HttpResponse, TransportError>;
type ReplyFn = Box<dyn Fn(&HttpRequest, usize) -> Reply>;

/// Replies from a queue, or from a function of the request when the queue is empty.
struct Fake {
    queue: RefCell<VecDeque<Reply>>,
    on_empty: ReplyFn,
    seen: RefCell<Vec<HttpRequest>>,
}

impl Fake {
    fn queued(replies: Vec<Reply>) -> Self {
        Self {
            queue: RefCell::new(replies.into()),
            on_empty: Box::new(|_, _| Err(TransportError::Network("queue empty".into()))),
            seen: RefCell::default(),
        }
    }
}

impl Transport for Fake {
    async fn send(&self, req: &HttpRequest) -> Result<HttpResponse, TransportError> {
        self.seen.borrow_mut().push(req.clone());
        let n = self.seen.borrow().len() - 1;
        let next = self.queue.borrow_mut().pop_front();
        next.unwrap_or_else(|| (self.on_empty)(req, n))
    }
}

#[allow(clippy::unnecessary_wraps)] // a transport reply, as the fake returns it
fn resp(status: u16, body: &str, headers: &[(&str, &str)]) -> Reply {
    Ok(HttpResponse {
        status,
        headers: headers
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
        body: body.to_owned(),
    })
}

fn openai_text(text: &str) -> String {
    json!({"model": "m", "choices": [{"message": {"role": "assistant", "content": text}}],
           "usage": {"prompt_tokens": 3, "completion_tokens": 2}})
    .to_string()
}

fn cfg(api: ApiKind) -> ProviderConfig {
    let mut c = ProviderConfig::new(api, "m", Some(ApiKey::new("sk-test-KEY")));
    c.base_url = "http://127.0.0.1:1/v1".into();
    c.retry = RetryPolicy {
        max_retries: 3,
        base_delay_ms: 100,
        max_delay_ms: 1000,
        seed: 3,
        ..RetryPolicy::default()
    };
    c
}

fn user(text: &str) -> ChatRequest {
    ChatRequest {
        messages: vec![ChatMessage::text(ChatRole::User, text)],
        ..ChatRequest::default()
    }
}

fn run<F: std::future::Future>(f: F) -> F::Output {
    futures_executor::block_on(f)
}

#[test]
fn retries_429_and_honours_retry_after() {
    let fake = Fake::queued(vec![
        resp(429, "{}", &[("retry-after", "3")]),
        resp(503, "busy", &[]),
        resp(200, &openai_text("fine"), &[]),
    ]);
    let llm = HttpLlm::new(cfg(ApiKind::OpenAi), fake, RecordingSleep::default()).unwrap();
    let r = run(llm.chat(&user("hi"))).unwrap();
    assert_eq!(r.content, "fine");
    let s = llm.stats();
    assert_eq!((s.calls, s.attempts, s.retries, s.failures), (1, 3, 2, 0));
    let slept = llm.sleep.slept_ms();
    assert_eq!(slept.len(), 2);
    assert!(slept[0] >= 3000, "waited {slept:?}, Retry-After was 3 s");
    assert!((100..=200).contains(&slept[1]), "backoff {slept:?}");
    assert_eq!(
        s.usage.total(),
        Usage {
            input_tokens: 3,
            output_tokens: 2
        }
    );
}

#[test]
fn a_very_long_retry_after_ends_the_call() {
    let fake = Fake::queued(vec![resp(429, "{}", &[("retry-after", "86400")])]);
    let llm = HttpLlm::new(cfg(ApiKind::OpenAi), fake, RecordingSleep::default()).unwrap();
    let shown = run(llm.chat(&user("hi"))).unwrap_err().to_string();
    assert!(
        shown.contains("wait 86400 s") && shown.contains("120 s limit"),
        "{shown}"
    );
    assert!(llm.sleep.slept_ms().is_empty());
}

#[test]
fn auth_and_not_found_are_not_retried() {
    let fake = Fake::queued(vec![resp(401, "{}", &[]), resp(404, "{}", &[])]);
    let llm = HttpLlm::new(cfg(ApiKind::OpenAi), fake, RecordingSleep::default()).unwrap();
    assert_eq!(run(llm.chat(&user("a"))), Err(ProviderError::Unauthorized));
    let err = run(llm.chat(&user("b"))).unwrap_err();
    assert_eq!(
        err,
        ProviderError::NotFound {
            url: "http://127.0.0.1:1/v1/chat/completions".into()
        }
    );
    assert!(err.to_string().contains("model name"));
    let s = llm.stats();
    assert_eq!((s.attempts, s.retries, s.failures), (2, 0, 2));
}

#[test]
fn gives_up_after_max_retries_with_the_server_message() {
    let body = r#"{"error": {"message": "overloaded, key sk-test-KEY"}}"#;
    let fake = Fake::queued((0..4).map(|_| resp(500, body, &[])).collect());
    let llm = HttpLlm::new(cfg(ApiKind::OpenAi), fake, RecordingSleep::default()).unwrap();
    let err = run(llm.chat(&user("a"))).unwrap_err();
    let shown = err.to_string();
    assert!(
        shown.contains("HTTP 500") && shown.contains("overloaded"),
        "{shown}"
    );
    assert!(
        !shown.contains("sk-test-KEY"),
        "key leaked into an error: {shown}"
    );
    assert_eq!(llm.stats().retries, 3);
}

#[test]
fn timeouts_and_network_errors_are_retried() {
    let fake = Fake::queued(vec![
        Err(TransportError::Timeout { after_ms: 50 }),
        Err(TransportError::Network("connection reset".into())),
        resp(200, &openai_text("ok"), &[]),
    ]);
    let llm = HttpLlm::new(cfg(ApiKind::OpenAi), fake, RecordingSleep::default()).unwrap();
    assert_eq!(run(llm.chat(&user("a"))).unwrap().content, "ok");
    assert_eq!(llm.stats().retries, 2);
}

#[test]
fn blocked_fetch_names_the_setting_to_change() {
    let mut c = cfg(ApiKind::OpenAi);
    c.base_url = "http://localhost:11434/v1".into();
    let blocked = || Err(TransportError::Blocked("TypeError: Failed to fetch".into()));
    let fake = Fake::queued(vec![blocked(), blocked(), blocked(), blocked()]);
    let llm = HttpLlm::new(c, fake, RecordingSleep::default()).unwrap();
    let shown = run(llm.chat(&user("a"))).unwrap_err().to_string();
    assert!(
        shown.contains("OLLAMA_ORIGINS") && shown.contains("cross-origin"),
        "{shown}"
    );
    assert_eq!(llm.stats().retries, u64::from(BLOCKED_RETRIES));
    assert!(cors_hint("http://127.0.0.1:1234/v1").contains("Enable CORS"));
}

#[test]
fn cancelled_token_stops_before_sending() {
    let token = CancelToken::new();
    let fake = Fake::queued(vec![resp(200, &openai_text("x"), &[])]);
    let llm = HttpLlm::new(cfg(ApiKind::OpenAi), fake, RecordingSleep::default())
        .unwrap()
        .with_cancel(token.clone());
    token.cancel();
    assert_eq!(run(llm.chat(&user("a"))), Err(ProviderError::Cancelled));
    assert_eq!(llm.stats().attempts, 0);
}

#[test]
fn bad_config_is_refused() {
    let mut c = cfg(ApiKind::OpenAi);
    c.base_url = "localhost:11434".into();
    let err = HttpLlm::new(c, Fake::queued(vec![]), RecordingSleep::default())
        .err()
        .unwrap();
    assert!(matches!(err, ProviderError::Config(m) if m.contains("http://")));
}

#[test]
fn anthropic_round_trip() {
    let body = json!({"model": "claude", "content": [{"type": "text", "text": "hello"}],
                      "usage": {"input_tokens": 7, "output_tokens": 1}})
    .to_string();
    let fake = Fake::queued(vec![resp(200, &body, &[])]);
    let llm = HttpLlm::new(cfg(ApiKind::Anthropic), fake, RecordingSleep::default()).unwrap();
    let r = run(llm.chat(&user("hi"))).unwrap();
    assert_eq!((r.content.as_str(), r.usage.input_tokens), ("hello", 7));
    let seen = llm.transport().seen.borrow();
    assert_eq!(seen[0].url, "http://127.0.0.1:1/v1/messages");
    assert_eq!(seen[0].header("x-api-key"), Some("sk-test-KEY"));
    assert_eq!(
        llm.stats().usage.by_model.keys().collect::<Vec<_>>(),
        ["claude"]
    );
    let err = run(llm.embed(&["x".to_owned()])).unwrap_err();
    assert!(matches!(err, ProviderError::Config(m) if m.contains("embeddings")));
}

/// 50 requests, 30 % of attempts fail (429 with Retry-After, 500, reset), seeded.
#[test]
fn batch_survives_thirty_percent_faults() {
    let mut fake = Fake::queued(vec![]);
    let state = RefCell::new(crate::util::rng::SplitMix64::new(42));
    let faults = std::rc::Rc::new(RefCell::new(Vec::<&'static str>::new()));
    let faults_in = faults.clone();
    fake.on_empty = Box::new(move |req, _| {
        let roll = state.borrow_mut().next_u64() % 100;
        let last = serde_json::from_str::<Value>(&req.body).unwrap()["messages"][0]["content"]
            .as_str()
            .unwrap()
            .to_owned();
        match roll {
            0..=9 => {
                faults_in.borrow_mut().push("429");
                resp(429, "{}", &[("retry-after", "2")])
            }
            10..=19 => {
                faults_in.borrow_mut().push("500");
                resp(500, "{}", &[])
            }
            20..=29 => {
                faults_in.borrow_mut().push("reset");
                Err(TransportError::Network("reset".into()))
            }
            _ => resp(200, &openai_text(&format!("echo: {last}")), &[]),
        }
    });
    let mut c = cfg(ApiKind::OpenAi);
    c.retry.max_retries = 8;
    let llm = HttpLlm::new(c, fake, RecordingSleep::default()).unwrap();
    let reqs: Vec<ChatRequest> = (0..50).map(|i| user(&format!("n={i}"))).collect();
    let out = run(chat_batch(&llm, &reqs, 4));
    for (i, r) in out.iter().enumerate() {
        assert_eq!(r.as_ref().unwrap().content, format!("echo: n={i}"));
    }
    let s = llm.stats();
    let faults = faults.borrow();
    assert_eq!(s.retries as usize, faults.len());
    assert_eq!(s.attempts, 50 + s.retries);
    let n429 = faults.iter().filter(|f| **f == "429").count();
    let long_waits = llm.sleep.slept_ms().iter().filter(|w| **w >= 2000).count();
    assert!(
        n429 > 0 && long_waits >= n429,
        "{n429} 429s but {long_waits} waits >= 2 s"
    );
    println!(
        "unit fault batch: 50 calls, {} attempts, {} retries ({n429} x 429)",
        s.attempts, s.retries
    );
}

#[test]
fn a_server_refusing_json_schema_gets_json_object_from_then_on() {
    // llama-cpp-python's reply to `response_format: json_schema` (HTTP 500, its words).
    let refused = r#"{"error": {"message": "1 validation error: {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\"}"}}"#;
    let fake = Fake {
        queue: RefCell::default(),
        on_empty: Box::new(move |req, _| {
            let body: Value = serde_json::from_str(&req.body).unwrap();
            match body["response_format"]["type"].as_str() {
                Some("json_schema") => resp(500, refused, &[]),
                _ => resp(200, &openai_text("{\"ok\": true}"), &[]),
            }
        }),
        seen: RefCell::default(),
    };
    let mut c = cfg(ApiKind::OpenAi);
    c.retry.max_retries = 0;
    let llm = HttpLlm::new(c, fake, RecordingSleep::default()).unwrap();
    let mut req = user("give JSON");
    req.json_schema = Some(json!({"type": "object"}));
    for _ in 0..2 {
        let r = futures_executor::block_on(llm.chat(&req)).unwrap();
        assert_eq!(r.content, "{\"ok\": true}");
    }
    let kinds: Vec<String> = llm
        .transport()
        .seen
        .borrow()
        .iter()
        .map(|h| {
            let body: Value = serde_json::from_str(&h.body).unwrap();
            body["response_format"]["type"].as_str().unwrap().to_owned()
        })
        .collect();
    assert_eq!(kinds, ["json_schema", "json_object", "json_object"]);
    let body: Value = serde_json::from_str(&llm.transport().seen.borrow()[1].body).unwrap();
    assert_eq!(body["response_format"]["schema"], json!({"type": "object"}));
}
