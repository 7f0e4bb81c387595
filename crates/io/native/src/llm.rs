//! LLM options shared by every command that calls an LLM, and the hidden `llm-ping` command.
//!
//! The API key comes only from the environment variable `MEMTRACE_API_KEY` (never a flag, so
//! it stays out of shell history) and is sent only to `--base-url`.

use std::cell::RefCell;
use std::fs::File;
use std::io::Write as _;
use std::path::PathBuf;

use anyhow::{bail, Context as _};
use clap::ValueEnum;
use memtrace::attribution::counterfactual::{Check, Outcome};
use memtrace::attribution::Roles;
use memtrace::model::FailureCase;
use memtrace::provider::{
    chat_batch, CallStats, ChatMessage, ChatRequest, ChatResponse, ChatRole, HttpLlm, Llm,
    PriceTable, ProviderConfig, ProviderError, Script, ScriptedLlm,
};
use memtrace::session::ProviderOptions;
use memtrace::Trace;
use memtrace_memsys::counterfactual::check_with;
use memtrace_memsys::simulated::SimulatedLlm;
use serde_json::json;

use crate::http::{NativeTransport, ThreadSleep};

/// The environment variable holding the API key.
pub const KEY_ENV: &str = "MEMTRACE_API_KEY";

/// Which provider answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProviderChoice {
    /// `OpenAI` Chat Completions and every compatible server (Gemini, `OpenRouter`, Groq, Ollama).
    Openai,
    /// Anthropic Messages.
    Anthropic,
    /// No network: the rule-based stand-in that runs the reference memory system (`bench gen`,
    /// `demo`, `optimize`); it cannot play an attribution agent, so the LLM methods refuse it.
    Simulated,
}

/// `--provider`, `--base-url`, `--model`, `--concurrency` and friends.
#[derive(Debug, Clone, clap::Args)]
pub struct ProviderArgs {
    /// Which API to talk to.
    #[arg(long, value_enum, default_value = "simulated")]
    pub provider: ProviderChoice,
    /// Base URL up to the version path, e.g. `http://localhost:11434/v1` (Ollama) or
    /// `https://generativelanguage.googleapis.com/v1beta/openai` (Gemini). Default: the
    /// provider's public API.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Model name. Default: gpt-4o-mini (openai), claude-3-5-haiku-latest (anthropic).
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,
    /// At most this many requests in flight.
    #[arg(long, value_name = "K", default_value_t = 4)]
    pub concurrency: usize,
    /// Per-attempt timeout in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 60_000)]
    pub timeout_ms: u64,
    /// Retries on 429, 5xx, timeouts and network errors.
    #[arg(long, value_name = "N", default_value_t = 6)]
    pub max_retries: u32,
    /// First backoff in milliseconds (doubles per retry, jittered; `Retry-After` wins if longer).
    #[arg(long, value_name = "MS", default_value_t = 500)]
    pub retry_base_ms: u64,
    /// A JSON price table `{model: {input_usd_per_mtok, output_usd_per_mtok}}`; default: built in.
    #[arg(long, value_name = "FILE")]
    pub prices: Option<PathBuf>,
    /// Output tokens per reply at most, for requests that set no limit (a small local model may
    /// otherwise write until its context is full).
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<u32>,
    /// Append every reply as one JSON line to FILE (purpose, the request's last message, the
    /// raw text and tool calls, usage): the raw steps of a run, answered or not.
    #[arg(long, value_name = "FILE")]
    pub replies_out: Option<PathBuf>,
}

impl ProviderArgs {
    /// The session's provider options for these flags, or `None` for the simulated provider.
    pub fn options(&self) -> Option<ProviderOptions> {
        let kind = match self.provider {
            ProviderChoice::Openai => "openai",
            ProviderChoice::Anthropic => "anthropic",
            ProviderChoice::Simulated => return None,
        };
        Some(ProviderOptions {
            kind: kind.to_owned(),
            base_url: self.base_url.clone(),
            model: self.model.clone(),
            timeout_ms: self.timeout_ms,
            max_retries: self.max_retries,
            retry_base_ms: self.retry_base_ms,
            max_tokens: self.max_tokens,
        })
    }

    /// The HTTP configuration, or `None` for the simulated provider.
    ///
    /// # Errors
    /// When the base URL or model is unusable (the message says which flag to fix).
    pub fn config(&self, api_key: Option<&str>) -> anyhow::Result<Option<ProviderConfig>> {
        self.options()
            .map(|o| o.config(api_key))
            .transpose()
            .map_err(|e| anyhow::anyhow!("{e} (see --base-url / --model)"))
    }

    /// Builds the provider, reading the key from `MEMTRACE_API_KEY`.
    ///
    /// # Errors
    /// As [`config`](Self::config).
    pub fn build(&self) -> anyhow::Result<CliLlm> {
        let log = match &self.replies_out {
            Some(path) => Some(RefCell::new(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .with_context(|| format!("cannot open {}", path.display()))?,
            )),
            None => None,
        };
        match self.config(env_key().as_deref())? {
            None => Ok(CliLlm::simulated()),
            Some(cfg) => Ok(CliLlm::http(cfg, log)?),
        }
    }

    /// The price table: `--prices FILE`, else the built-in one.
    ///
    /// # Errors
    /// When the file cannot be read or is not a price table.
    pub fn price_table(&self) -> anyhow::Result<PriceTable> {
        let Some(path) = &self.prices else {
            return Ok(PriceTable::builtin());
        };
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading the price table {}", path.display()))?;
        PriceTable::from_json(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
    }
}

/// The provider a command uses; an HTTP one may log its replies (`--replies-out`).
pub enum CliLlm {
    Http(
        Box<HttpLlm<NativeTransport, ThreadSleep>>,
        Option<RefCell<File>>,
    ),
    Simulated(ScriptedLlm),
}

/// The key in `MEMTRACE_API_KEY`, when set and not blank.
pub fn env_key() -> Option<String> {
    std::env::var(KEY_ENV).ok().filter(|k| !k.trim().is_empty())
}

impl CliLlm {
    /// The rule-based stand-in: no network (only info-flow and the reference memory system's
    /// own requests run on it).
    pub fn simulated() -> Self {
        Self::Simulated(ScriptedLlm::new(Script::default()))
    }

    /// The HTTP provider of `cfg` over the native transport, its replies logged to `log`.
    ///
    /// # Errors
    /// A configuration the client refuses.
    pub fn http(cfg: ProviderConfig, log: Option<RefCell<File>>) -> anyhow::Result<Self> {
        let llm = HttpLlm::new(cfg, NativeTransport::default(), ThreadSleep)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        Ok(Self::Http(Box::new(llm), log))
    }

    /// The provider of the session's `options` with `api_key` (else `MEMTRACE_API_KEY`); the
    /// simulated one for `None`.
    ///
    /// # Errors
    /// Settings the session or the client refuse, as a sentence.
    pub fn of(options: Option<&ProviderOptions>, api_key: Option<&str>) -> Result<Self, String> {
        let Some(options) = options else {
            return Ok(Self::simulated());
        };
        let key = api_key.map(str::to_owned).or_else(env_key);
        let cfg = options.config(key.as_deref()).map_err(|e| e.to_string())?;
        Self::http(cfg, None).map_err(|e| e.to_string())
    }

    /// The counterfactual check of the verdict on `case` blaming `op_id`, as `attribute
    /// --verify` runs it: the simulated memory-system model replays when no LLM is configured
    /// (the echo stand-in cannot answer), else the LLM; a replay that fails is "not
    /// replayable", with why.
    pub async fn verify(
        &self,
        trace: &Trace,
        roles: &Roles,
        case: &FailureCase,
        op_id: &str,
    ) -> Check {
        match self {
            Self::Simulated(_) => check_with(&SimulatedLlm, trace, roles, case, op_id).await,
            llm @ Self::Http(..) => check_with(llm, trace, roles, case, op_id).await,
        }
        .unwrap_or_else(|e| Check::new(Outcome::NotReplayable, format!("the replay failed: {e}")))
    }

    /// Calls, attempts, retries, waits and tokens so far (zero for the simulated provider).
    pub fn stats(&self) -> CallStats {
        match self {
            Self::Http(h, _) => h.stats(),
            Self::Simulated(_) => CallStats::default(),
        }
    }
}

impl Llm for CliLlm {
    async fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, ProviderError> {
        match self {
            Self::Http(h, log) => {
                let result = h.chat(req).await;
                if let Some(log) = log {
                    log_reply(&mut log.borrow_mut(), req, &result);
                }
                result
            }
            Self::Simulated(s) => s.chat(req).await,
        }
    }
}

/// One JSON line per reply; a failed write is reported once per line on stderr, never fatal.
fn log_reply(file: &mut File, req: &ChatRequest, result: &Result<ChatResponse, ProviderError>) {
    let last = req.messages.last().map_or("", |m| m.content.as_str());
    let asked: String = last.chars().take(400).collect();
    let line = match result {
        Ok(r) => json!({
            "purpose": req.purpose, "messages": req.messages.len(), "asked": asked,
            "content": r.content, "tool_calls": r.tool_calls, "usage": r.usage,
            "usage_estimated": r.usage_estimated, "model": r.model,
        }),
        Err(e) => json!({
            "purpose": req.purpose, "messages": req.messages.len(), "asked": asked,
            "error": e.to_string(),
        }),
    };
    if let Err(e) = writeln!(file, "{line}") {
        eprintln!("cannot log the reply: {e}");
    }
}

/// Prints the provider's call statistics on stderr (tokens marked when estimated) and writes
/// them as JSON to `path` when given.
///
/// # Errors
/// When the file cannot be written.
pub fn report_stats(
    llm: &CliLlm,
    prices: &PriceTable,
    path: Option<&std::path::Path>,
) -> anyhow::Result<()> {
    let stats = llm.stats();
    let (cost_usd, unpriced) = stats.usage.cost_usd(prices);
    let total = stats.usage.total();
    let estimated = if stats.estimated_calls > 0 {
        format!(
            " (estimated for {} of {} replies: no usage sent)",
            stats.estimated_calls, stats.calls
        )
    } else {
        String::new()
    };
    eprintln!(
        "calls {} · attempts {} · retries {} · waited {} ms · tokens in {} out {}{estimated} · cost ${cost_usd:.6}{}",
        stats.calls,
        stats.attempts,
        stats.retries,
        stats.waited_ms,
        total.input_tokens,
        total.output_tokens,
        if unpriced.is_empty() { String::new() } else { format!(" (no price: {})", unpriced.join(", ")) }
    );
    if let Some(path) = path {
        let out = json!({
            "calls": stats.calls, "attempts": stats.attempts, "retries": stats.retries,
            "waited_ms": stats.waited_ms, "failures": stats.failures,
            "estimated_calls": stats.estimated_calls,
            "input_tokens": total.input_tokens, "output_tokens": total.output_tokens,
            "usage_by_model": stats.usage.by_model, "cost_usd": cost_usd, "unpriced": unpriced,
        });
        std::fs::write(path, serde_json::to_string_pretty(&out)?)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

/// `memtrace llm-ping`: sends prompts and prints the replies (a check of the provider settings).
#[derive(Debug, clap::Args)]
pub struct PingArgs {
    #[command(flatten)]
    pub provider: ProviderArgs,
    /// The user message; sent `--count` times as `PROMPT #i` when count > 1.
    #[arg(long, default_value = "ping")]
    pub prompt: String,
    /// How many requests to send (through the bounded-concurrency batch).
    #[arg(long, default_value_t = 1)]
    pub count: usize,
    /// Write call statistics, usage and cost as JSON here.
    #[arg(long, value_name = "FILE")]
    pub stats_out: Option<PathBuf>,
}

/// Runs `llm-ping`.
///
/// # Errors
/// The first failed request, or a bad option.
pub fn ping(args: &PingArgs) -> anyhow::Result<()> {
    let llm = args.provider.build()?;
    let prices = args.provider.price_table()?;
    let requests: Vec<ChatRequest> = (0..args.count.max(1))
        .map(|i| {
            let text = if args.count > 1 {
                format!("{} #{i}", args.prompt)
            } else {
                args.prompt.clone()
            };
            ChatRequest {
                messages: vec![ChatMessage::text(ChatRole::User, text)],
                purpose: "ping".to_owned(),
                ..ChatRequest::default()
            }
        })
        .collect();
    let replies =
        futures_executor::block_on(chat_batch(&llm, &requests, args.provider.concurrency));
    report_stats(&llm, &prices, args.stats_out.as_deref())?;
    let mut first_error = None;
    for (i, r) in replies.into_iter().enumerate() {
        match r {
            Ok(reply) => println!("{}", reply.content),
            Err(e) => {
                eprintln!("request {i}: {e}");
                first_error.get_or_insert(e);
            }
        }
    }
    if let Some(e) = first_error {
        bail!("{e}");
    }
    Ok(())
}
