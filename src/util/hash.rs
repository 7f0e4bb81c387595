//! FNV-1a, 64 bits: a stable hash for short content-addressed names and per-name seeds (the same
//! on every platform and build, unlike `std`'s hasher).

/// FNV-1a (64 bits) of `bytes`.
///
/// # Example
/// ```
/// assert_eq!(memtrace::util::hash::fnv1a(b""), 0xcbf2_9ce4_8422_2325);
/// assert_ne!(memtrace::util::hash::fnv1a(b"a"), memtrace::util::hash::fnv1a(b"b"));
/// ```
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
