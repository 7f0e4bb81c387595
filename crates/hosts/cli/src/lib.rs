//! What the `memtrace` binary and its integration tests share. The HTTP transport and the LLM
//! options live in `memtrace-native` (the Python package uses them too).

/// The `memtrace` command's exit status for a usage or input error (clap's own, too). A command
/// that ran exits 0, or 1 when `--fail-on-failures` was given and failed cases were found.
pub const EXIT_ERROR: u8 = 2;
