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

/// A map keyed by ids (10–60 bytes each), hashed by [`IdHasher`].
pub type IdMap<K, V> = std::collections::HashMap<K, V, std::hash::BuildHasherDefault<IdHasher>>;
/// A set of ids, hashed by [`IdHasher`].
pub type IdSet<K> = std::collections::HashSet<K, std::hash::BuildHasherDefault<IdHasher>>;

/// An empty [`IdMap`] with room for `n` entries.
pub fn id_map<K, V>(n: usize) -> IdMap<K, V> {
    IdMap::with_capacity_and_hasher(n, std::hash::BuildHasherDefault::default())
}

/// An empty [`IdSet`] with room for `n` entries.
pub fn id_set<K>(n: usize) -> IdSet<K> {
    IdSet::with_capacity_and_hasher(n, std::hash::BuildHasherDefault::default())
}

/// The hasher of the load path's id maps: eight bytes a step, each folded in with one 64-bit
/// multiply (FxHash's step), then mixed whole (MurmurHash3's finalizer). `foldhash` needs a
/// 64×64→128-bit multiply that WebAssembly emulates, which made hashing ids a fifth of a load
/// in the browser. Unseeded: ids crafted to collide slow a load down, nothing worse.
#[derive(Debug, Default, Clone, Copy)]
pub struct IdHasher(u64);

const FX: u64 = 0x517c_c1b7_2722_0a95;

impl IdHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(FX);
    }
}

impl std::hash::Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            self.add(u64::from_le_bytes(w.try_into().unwrap_or([0; 8])));
        }
        let rest = words.remainder();
        let tail = rest
            .iter()
            .rev()
            .fold(0u64, |w, &b| (w << 8) | u64::from(b));
        self.add(tail ^ ((bytes.len() as u64) << 56));
    }

    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }

    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    fn finish(&self) -> u64 {
        let mut h = self.0;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^ (h >> 33)
    }
}

#[cfg(test)]
mod tests {
    use super::IdMap;

    #[test]
    fn id_maps_find_what_they_hold_and_spread_near_ids() {
        let ids: Vec<String> = (0..20_000).map(|i| format!("op-{i:032x}@1")).collect();
        let mut m: IdMap<&str, usize> = IdMap::default();
        for (i, id) in ids.iter().enumerate() {
            assert_eq!(m.insert(id.as_str(), i), None);
        }
        assert!(ids
            .iter()
            .enumerate()
            .all(|(i, id)| m.get(id.as_str()) == Some(&i)));
        assert_eq!(m.get("op-missing"), None);
        // Ids that differ in one byte land in different low bits (what the table indexes by).
        let low: std::collections::BTreeSet<u64> = ids
            .iter()
            .map(|id| std::hash::BuildHasher::hash_one(m.hasher(), id.as_str()) & 0xffff)
            .collect();
        assert!(
            low.len() > 10_000,
            "{} distinct low 16-bit values",
            low.len()
        );
    }
}
