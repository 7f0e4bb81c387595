//! The native side of memtrace, shared by the hosts that run outside a browser (the `memtrace`
//! command and the Python package): the HTTP transport and the LLM provider options.

pub mod http;
pub mod llm;
