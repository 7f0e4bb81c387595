//! Browser I/O: files (read with progress, download), network (LLM providers, key storage) and
//! storage (IndexedDB), `?url=` (open a trace by address).

pub mod files;
pub mod http;
pub mod runner;
pub mod storage;
pub mod url;
