//! Browser I/O: files now; network and storage later.

pub mod files;
