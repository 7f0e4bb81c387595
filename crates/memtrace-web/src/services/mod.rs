//! Browser I/O: files, network (LLM providers) and key storage.

pub mod files;
pub mod http;
