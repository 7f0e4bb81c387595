//! The native side of memtrace: the HTTP transport and the LLM options shared by every command
//! that calls an LLM. The `memtrace` binary (`main.rs`) uses these; so do the integration tests.

pub mod http;
pub mod llm;
