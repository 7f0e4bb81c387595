//! What the `memtrace` binary and its integration tests share. The HTTP transport and the LLM
//! options live in `memtrace-native` (the Python package uses them too).

/// The `memtrace` command's exit status for a usage or input error (clap's own, too). A command
/// that ran exits 0, or 1 when `--fail-on-failures` was given and failed cases were found.
pub const EXIT_ERROR: u8 = 2;

/// A size as `--max-bytes` takes it: whole GiB as `2G`, else whole MiB as `700M`, else bytes.
pub fn size_flag(bytes: u64) -> String {
    const MIB: u64 = 1024 * 1024;
    match bytes {
        b if b >= 1024 * MIB && b % (1024 * MIB) == 0 => format!("{}G", b / (1024 * MIB)),
        b if b % MIB == 0 => format!("{}M", b / MIB),
        b => b.to_string(),
    }
}
