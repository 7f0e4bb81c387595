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

/// Distinct ids numbered in the order first added, found by their text. The texts live in one
/// buffer and the table holds numbers only: no allocation per id (a trace has 10⁵ of them).
#[derive(Clone, Default)]
pub struct IdIndex {
    text: String,
    /// End of each id in `text`.
    ends: Vec<u32>,
    table: hashbrown::HashTable<u32>,
}

/// Id `n` of the buffer `text` whose ids end at `ends` ("" past the end).
fn nth<'a>(text: &'a str, ends: &[u32], n: u32) -> &'a str {
    let i = n as usize;
    let start = i
        .checked_sub(1)
        .and_then(|p| ends.get(p))
        .map_or(0, |&e| e as usize);
    let end = ends.get(i).map_or(start, |&e| e as usize);
    text.get(start..end).unwrap_or_default()
}

fn id_hash(id: &str) -> u64 {
    std::hash::BuildHasher::hash_one(&std::hash::BuildHasherDefault::<IdHasher>::default(), id)
}

impl IdIndex {
    /// An empty index with room for `n` ids.
    pub fn with_capacity(n: usize) -> IdIndex {
        IdIndex {
            text: String::new(),
            ends: Vec::with_capacity(n),
            table: hashbrown::HashTable::with_capacity(n),
        }
    }

    /// How many ids it holds.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// True when it holds none.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The id numbered `n` ("" past the end).
    pub fn id(&self, n: u32) -> &str {
        nth(&self.text, &self.ends, n)
    }

    /// The number of `id`, if it holds it.
    pub fn get(&self, id: &str) -> Option<u32> {
        self.table.find(id_hash(id), |&n| self.id(n) == id).copied()
    }

    /// Adds `id` unless it holds it: its number, and whether it was new.
    pub fn insert(&mut self, id: &str) -> (u32, bool) {
        let IdIndex { text, ends, table } = self;
        let entry = table.entry(
            id_hash(id),
            |&n| nth(text, ends, n) == id,
            |&n| id_hash(nth(text, ends, n)),
        );
        match entry {
            hashbrown::hash_table::Entry::Occupied(e) => (*e.get(), false),
            hashbrown::hash_table::Entry::Vacant(e) => {
                let n = u32::try_from(ends.len()).unwrap_or(u32::MAX);
                text.push_str(id);
                ends.push(u32::try_from(text.len()).unwrap_or(u32::MAX));
                e.insert(n);
                (n, true)
            }
        }
    }

    /// Every id with its number, in number order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &str)> + '_ {
        (0..self.ends.len()).map(|i| (i as u32, self.id(i as u32)))
    }
}

impl PartialEq for IdIndex {
    fn eq(&self, other: &IdIndex) -> bool {
        self.text == other.text && self.ends == other.ends
    }
}

impl std::fmt::Debug for IdIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.iter().map(|(_, id)| id))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::{IdIndex, IdMap};

    #[test]
    fn an_id_index_numbers_ids_in_order_and_finds_them_by_text() {
        let ids: Vec<String> = (0..5_000).map(|i| format!("memory-unit-{i}@1")).collect();
        let mut x = IdIndex::with_capacity(2);
        for (i, id) in ids.iter().enumerate() {
            assert_eq!(x.insert(id), (i as u32, true));
        }
        assert_eq!(x.insert("memory-unit-7@1"), (7, false));
        assert_eq!(x.insert(""), (5_000, true));
        assert_eq!(x.len(), 5_001);
        assert!(ids
            .iter()
            .enumerate()
            .all(|(i, id)| x.get(id) == Some(i as u32)));
        assert_eq!(x.get("memory-unit-5000@1"), None);
        assert_eq!(x.id(3), "memory-unit-3@1");
        assert_eq!(x.id(9_999), "");
        assert_eq!(x.iter().nth(2), Some((2, "memory-unit-2@1")));
        assert_eq!(x.clone(), x);
    }

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
