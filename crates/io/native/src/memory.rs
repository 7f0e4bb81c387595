//! The largest trace file a native host reads by default: a share of the memory this process
//! may use, since loading a trace takes about three times the file (the index, the text, the
//! failure cases). The CLI's `--max-bytes` and Python's `max_bytes=` set it instead.

use memtrace::format::limits::MAX_FILE_BYTES;

/// The share of memory a file may take: loading needs about three times the file, so a
/// quarter leaves room for the rest of the machine.
const SHARE: u64 = 4;

/// The default largest file: a quarter of the memory this process may use (the machine's
/// memory, or a smaller container limit), never under the core's default of 512 MiB (what the
/// page and the JavaScript module keep). The core's default where the memory cannot be read.
pub fn default_max_bytes() -> u64 {
    usable_memory_bytes().map_or(MAX_FILE_BYTES, |m| (m / SHARE).max(MAX_FILE_BYTES))
}

/// The memory this process may use: the machine's (`MemTotal` of `/proc/meminfo`), or the
/// cgroup's limit when it is lower (`memory.max`, cgroup v2). `None` where neither can be read
/// (not Linux).
pub fn usable_memory_bytes() -> Option<u64> {
    let total = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| meminfo_total(&m));
    let cgroup = std::fs::read_to_string("/sys/fs/cgroup/memory.max")
        .ok()
        .and_then(|m| m.trim().parse::<u64>().ok());
    match (total, cgroup) {
        (Some(t), Some(c)) => Some(t.min(c)),
        (t, c) => t.or(c),
    }
}

/// `MemTotal` of `/proc/meminfo`'s text, in bytes.
fn meminfo_total(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_total_is_read_in_bytes() {
        let text = "MemTotal:       24576000 kB\nMemFree:        1000 kB\n";
        assert_eq!(meminfo_total(text), Some(24_576_000 * 1024));
        assert_eq!(meminfo_total("MemFree: 1 kB\n"), None);
    }

    #[test]
    fn the_default_is_at_least_the_cores() {
        assert!(default_max_bytes() >= MAX_FILE_BYTES);
    }
}
