//! Browser I/O: files (read with progress, download), network (LLM providers, key storage) and
//! storage (IndexedDB).

pub mod files;
pub mod http;
pub mod runner;
pub mod storage;
