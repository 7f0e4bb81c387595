//! Values that scopes took in and no op has read yet: messages an untraced buffer holds until a
//! memory write stores them as one chunk. A write that stores some of them flushed the buffer,
//! so it is where the others went too — dropped or garbled on the way.

use std::collections::{HashMap, HashSet};

use crate::text::{tokens, Word};

/// Why a waiting value is read by a memory write.
pub(super) const BUFFERED: &str = "inferred: buffered with values this memory write read";
pub(super) const GARBLED: &str = "inferred: this memory write stored a near copy of it";

/// Shortest value (in words) that can be recognised in a near copy.
const NEAR_COPY_WORDS: usize = 6;
/// Share of a value's word pairs a near copy keeps.
const NEAR_COPY_SHARE: f64 = 0.6;

#[derive(Default)]
pub(super) struct Buffer {
    /// Value → (arrival place, end of the scope that took it in).
    taken: HashMap<usize, (usize, u64)>,
    /// Taken-in values no op has read yet, in arrival order.
    waiting: Vec<usize>,
    /// Values some op read.
    read: HashSet<usize>,
}

impl Buffer {
    /// A value a scope ending at `scope_end` took in; it waits unless an op read it already.
    pub(super) fn take_in(&mut self, v: usize, scope_end: u64) {
        if !self.read.contains(&v) && !self.taken.contains_key(&v) {
            self.taken.insert(v, (self.taken.len(), scope_end));
            self.waiting.push(v);
        }
    }

    /// Values an op read: they wait no more.
    pub(super) fn read(&mut self, inputs: &[(usize, &'static str)]) {
        self.read.extend(inputs.iter().map(|&(v, _)| v));
        self.waiting
            .retain(|v| !inputs.iter().any(|&(x, _)| x == *v));
    }

    /// The waiting values a memory write starting at `start_ns` stored, given what it read
    /// (`inputs`, already passed to [`Buffer::read`]) and the texts it wrote (`stored`):
    /// - when it read some taken-in value, the buffer was flushed: every value taken in before
    ///   the last one it read, or by a scope that had ended when it started, was buffered with
    ///   them (a scope still open, the one whose message triggered the flush, keeps its own);
    /// - a value it stored a near copy of (most of its word pairs, in a longer text).
    pub(super) fn flushed<'t>(
        &mut self,
        inputs: &[(usize, &'static str)],
        start_ns: u64,
        stored: &[&str],
        text_of: impl Fn(usize) -> &'t str,
    ) -> Vec<(usize, &'static str)> {
        let last = inputs
            .iter()
            .filter_map(|(v, _)| self.taken.get(v).map(|&(place, _)| place))
            .max();
        let stored_pairs: HashSet<(String, String)> =
            stored.iter().flat_map(|t| pairs(t)).collect();
        let mut out = Vec::new();
        let taken = &self.taken;
        self.waiting.retain(|&v| {
            let Some(&(place, end)) = taken.get(&v) else {
                return true;
            };
            let why = if last.is_some_and(|l| place < l || end <= start_ns) {
                BUFFERED
            } else if near_copy(text_of(v), &stored_pairs) {
                GARBLED
            } else {
                return true;
            };
            out.push((v, why));
            false
        });
        self.read.extend(out.iter().map(|&(v, _)| v));
        out
    }
}

fn pairs(text: &str) -> Vec<(String, String)> {
    let words: Vec<String> = tokens(text, Word::Alnum).collect();
    words
        .windows(2)
        .filter_map(|w| Some((w.first()?.clone(), w.get(1)?.clone())))
        .collect()
}

/// True when `stored` keeps most word pairs of `text` (a copy with a few words changed).
fn near_copy(text: &str, stored: &HashSet<(String, String)>) -> bool {
    let own = pairs(text);
    if own.len() + 1 < NEAR_COPY_WORDS {
        return false;
    }
    let kept = own.iter().filter(|p| stored.contains(*p)).count();
    kept as f64 >= NEAR_COPY_SHARE * own.len() as f64
}
