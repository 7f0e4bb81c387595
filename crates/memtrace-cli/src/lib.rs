//! The native side of memtrace: the HTTP transport and the LLM options shared by every command
//! that calls an LLM. The `memtrace` binary (`main.rs`) uses these; so do the integration tests.

pub mod http;
pub mod llm;

/// The `memtrace` command's exit status for a usage or input error (clap's own, too). A command
/// that ran exits 0, or 1 when `--fail-on-failures` was given and failed cases were found.
pub const EXIT_ERROR: u8 = 2;
