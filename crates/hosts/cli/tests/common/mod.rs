//! Shared by the provider integration tests: starts the scripted LLM server on a free port.

#![allow(dead_code)] // each test file uses a part
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers fail by panicking

pub mod conversation;

use std::io::{BufRead, BufReader, Write as _};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};

use memtrace::provider::{ApiKey, ApiKind, ProviderConfig, RetryPolicy};
use serde_json::Value;

/// The repository root.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

/// Runs the `memtrace` binary with `args`; panics with its stderr unless it succeeds. Its stdout.
pub fn memtrace_ok<I, S>(args: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let out = succeeded(Command::new(env!("CARGO_BIN_EXE_memtrace")).args(args));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// What `cmd` wrote, run to its end; panics with its stderr unless it succeeded.
pub fn succeeded(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `memtrace ARGS` run in the crate's folder (fixture paths are relative to it), to its end.
pub fn memtrace(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_memtrace"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap()
}

/// `memtrace ARGS` with `stdin` on its standard input, to its end.
pub fn memtrace_with_stdin(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_memtrace"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    // A command refusing its input may exit before reading all of it.
    let _ = input.write_all(stdin);
    drop(input);
    child.wait_with_output().unwrap()
}

/// The optimize split of the CLI tests: train on conversation 0, hold out 1, two rounds.
pub const SPLIT: [&str; 6] = ["--train", "0", "--heldout", "1", "--rounds", "2"];

/// A bench generated from `tests/data/locomo/` into a fresh temp folder named after `name`
/// (`bench gen --per-type N --seed S`), failing loudly when the data is absent.
pub fn gen_bench(name: &str, per_type: u32, seed: u64) -> PathBuf {
    let locomo = repo_root().join("tests/data/locomo");
    assert!(
        locomo.is_dir(),
        "this test needs the LoCoMo conversations at {} (read at run time)",
        locomo.display()
    );
    let bench = std::env::temp_dir().join(format!("memtrace-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&bench);
    let (per_type, seed) = (per_type.to_string(), seed.to_string());
    memtrace_ok([
        "bench".as_ref(),
        "gen".as_ref(),
        "--per-type".as_ref(),
        per_type.as_ref(),
        "--seed".as_ref(),
        seed.as_ref(),
        "--conversations".as_ref(),
        locomo.as_os_str(),
        "--out".as_ref(),
        bench.as_os_str(),
    ] as [&std::ffi::OsStr; 10]);
    bench
}

/// The scripted server, killed on drop.
pub struct Server {
    child: Child,
    pub port: u16,
}

impl Server {
    /// Spawns `python3 tests/llm_server/server.py --port 0` and reads the port it prints.
    pub fn start() -> Self {
        let script = repo_root().join("tests/llm_server/server.py");
        let mut child = Command::new("python3")
            .arg(&script)
            .args(["--port", "0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 must be on PATH to run the provider tests");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("server prints its port");
        let port = line
            .trim()
            .strip_prefix("LISTENING ")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("unexpected first line from the server: {line:?}"));
        Self { child, port }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// Every request the server received.
    pub fn log(&self) -> Vec<Value> {
        let body = ureq::get(&self.url("/_log"))
            .call()
            .unwrap()
            .body_mut()
            .read_to_string()
            .unwrap();
        serde_json::from_str::<Vec<Value>>(&body).unwrap()
    }

    /// `POST /_control`.
    pub fn control(&self, settings: &Value) {
        ureq::post(&self.url("/_control"))
            .send(settings.to_string().as_bytes())
            .unwrap();
    }

    /// A provider configuration pointed at this server (`/v1` base).
    pub fn config(&self, api: ApiKind, model: &str, key: &str) -> ProviderConfig {
        let mut cfg = ProviderConfig::new(api, model, Some(ApiKey::new(key)));
        cfg.base_url = self.url("/v1");
        cfg.timeout_ms = 5_000;
        cfg.retry = RetryPolicy {
            max_retries: 6,
            base_delay_ms: 20,
            max_delay_ms: 400,
            seed: 9,
            ..RetryPolicy::default()
        };
        cfg
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
