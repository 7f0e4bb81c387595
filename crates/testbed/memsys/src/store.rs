//! The memory store: memory units with their recorded versions, and a lexical BM25 index
//! kept up to date on every add, update and delete.

use std::collections::{BTreeMap, HashMap};

use memtrace_record::Var;

use super::text::content_terms;

/// One memory unit.
#[derive(Debug, Clone, PartialEq)]
pub struct Unit {
    pub id: String,
    pub text: String,
    pub timestamp: String,
    pub deleted: bool,
    /// Its latest recorded version.
    pub var: Var,
}

/// Units plus an inverted index over their live text.
#[derive(Debug, Default, Clone)]
pub struct Store {
    units: Vec<Unit>,
    by_id: HashMap<String, usize>,
    postings: HashMap<String, BTreeMap<usize, u32>>,
    lengths: Vec<u32>,
    live: usize,
    total_len: u64,
}

const K1: f64 = 1.2;
const B: f64 = 0.75;

impl Store {
    /// The unit with this id.
    pub fn get(&self, id: &str) -> Option<&Unit> {
        self.by_id.get(id).and_then(|&i| self.units.get(i))
    }

    /// All units, deleted ones included, in creation order.
    pub fn units(&self) -> &[Unit] {
        &self.units
    }

    /// Number of live units.
    pub fn live(&self) -> usize {
        self.live
    }

    fn index(&mut self, i: usize, text: &str, sign: i64) {
        let terms = content_terms(text);
        let len = terms.len() as u32;
        for t in terms {
            let e = self.postings.entry(t).or_default();
            let c = e.entry(i).or_insert(0);
            *c = u32::try_from((i64::from(*c) + sign).max(0)).unwrap_or(0);
            if *c == 0 {
                e.remove(&i);
            }
        }
        if let Some(l) = self.lengths.get_mut(i) {
            if sign > 0 {
                *l = len;
                self.total_len += u64::from(len);
            } else {
                self.total_len = self.total_len.saturating_sub(u64::from(*l));
                *l = 0;
            }
        }
    }

    /// Takes the live unit `id`'s text out of the index; its position, or `None` when there is
    /// no such live unit.
    fn unindex_live(&mut self, id: &str) -> Option<usize> {
        let i = *self.by_id.get(id)?;
        let old = self
            .units
            .get(i)
            .filter(|u| !u.deleted)
            .map(|u| u.text.clone())?;
        self.index(i, &old, -1);
        Some(i)
    }

    /// Adds a unit.
    pub fn add(&mut self, unit: Unit) {
        let i = self.units.len();
        self.by_id.insert(unit.id.clone(), i);
        self.lengths.push(0);
        let text = unit.text.clone();
        self.units.push(unit);
        self.index(i, &text, 1);
        self.live += 1;
    }

    /// Replaces a live unit's text; returns false when there is no such live unit.
    pub fn update(&mut self, id: &str, text: &str, var: Var) -> bool {
        let Some(i) = self.unindex_live(id) else {
            return false;
        };
        self.index(i, text, 1);
        if let Some(u) = self.units.get_mut(i) {
            text.clone_into(&mut u.text);
            u.var = var;
        }
        true
    }

    /// Marks a unit deleted; returns false when there is no such live unit.
    pub fn delete(&mut self, id: &str, var: Var) -> bool {
        let Some(i) = self.unindex_live(id) else {
            return false;
        };
        if let Some(u) = self.units.get_mut(i) {
            u.deleted = true;
            u.var = var;
        }
        self.live -= 1;
        true
    }

    /// The `k` live units scoring highest for `query` by BM25 (k1 = 1.2, b = 0.75), best
    /// first; ties by creation order. Units with score 0 are left out.
    ///
    /// # Complexity
    /// O(Σ postings of the query terms + m log m) for m matching units.
    pub fn search(&self, query: &str, k: usize) -> Vec<(usize, f64)> {
        let n = self.live.max(1) as f64;
        let avg = (self.total_len as f64 / n).max(1.0);
        let mut scores: BTreeMap<usize, f64> = BTreeMap::new();
        let mut terms = content_terms(query);
        terms.sort();
        terms.dedup();
        for t in &terms {
            let Some(post) = self.postings.get(t) else {
                continue;
            };
            let df = post.len() as f64;
            let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
            for (&i, &tf) in post {
                let len = f64::from(self.lengths.get(i).copied().unwrap_or(0));
                let tf = f64::from(tf);
                *scores.entry(i).or_insert(0.0) +=
                    idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * len / avg));
            }
        }
        let mut list: Vec<(usize, f64)> = scores.into_iter().filter(|(_, s)| *s > 0.0).collect();
        list.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        list.truncate(k);
        list
    }
    /// Like [`Store::search`], but always `k` units when there are that many live ones: a
    /// vector store returns its nearest `k` whatever their score, so units no query term
    /// matches fill the list, newest first, with score 0.
    ///
    /// # Complexity
    /// O(search + n) for n units.
    pub fn nearest(&self, query: &str, k: usize) -> Vec<(usize, f64)> {
        let mut list = self.search(query, k);
        if list.len() < k {
            let have: std::collections::BTreeSet<usize> = list.iter().map(|x| x.0).collect();
            let rest = self
                .units
                .iter()
                .enumerate()
                .rev()
                .filter(|(i, u)| !u.deleted && !have.contains(i));
            list.extend(rest.take(k - list.len()).map(|(i, _)| (i, 0.0)));
        }
        list
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(id: &str, text: &str) -> Unit {
        Unit {
            id: id.into(),
            text: text.into(),
            timestamp: String::new(),
            deleted: false,
            var: Var::default(),
        }
    }

    #[test]
    fn search_follows_updates_and_deletes() {
        let mut s = Store::default();
        s.add(unit("a", "Mom drinks hot cocoa"));
        s.add(unit("b", "Dad plays jazz records"));
        assert_eq!(
            s.search("what does mom drink", 10).first().map(|x| x.0),
            Some(0)
        );
        assert!(s.update("a", "Mom drinks chamomile tea", Var::default()));
        assert!(s.search("cocoa", 10).is_empty());
        assert!(s.delete("b", Var::default()));
        assert!(s.search("jazz", 10).is_empty());
        assert_eq!(s.live(), 1);
        assert!(!s.delete("b", Var::default()));
        s.add(unit("c", "Grandma reads novels"));
        let near: Vec<usize> = s.nearest("jazz", 5).into_iter().map(|x| x.0).collect();
        assert_eq!(
            near,
            vec![2, 0],
            "nothing matches: the live units, newest first"
        );
    }
}
