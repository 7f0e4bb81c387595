//! Browser I/O: files (read with progress, download) and storage (IndexedDB).

pub mod files;
pub mod storage;
