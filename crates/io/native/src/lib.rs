//! The native side of memtrace, shared by the hosts that run outside a browser (the `memtrace`
//! command and the Python package): the HTTP transport, the LLM provider options and the
//! default largest file (a share of the machine's memory).

pub mod http;
pub mod llm;
pub mod memory;
