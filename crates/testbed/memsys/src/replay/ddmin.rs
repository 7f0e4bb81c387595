//! Zeller's delta debugging (ddmin) as a state machine the caller drives: it asks for a test
//! of a subset ([`Ddmin::next_test`]), the caller runs it and reports the outcome
//! ([`Ddmin::report`]). Here a test "passes" when repairing the subset rescues the answer; the
//! result is a 1-minimal passing subset (removing any one element makes it fail). Outcomes are
//! cached, so a subset is never tested twice.

use std::collections::BTreeMap;

/// ddmin over `T`s, starting from a set known to pass.
#[derive(Debug, Clone)]
pub struct Ddmin<T> {
    current: Vec<T>,
    /// Number of parts the current set is split into.
    parts: usize,
    /// Next test: `0..parts` the parts, `parts..2*parts` their complements.
    next: usize,
    tested: BTreeMap<Vec<T>, bool>,
    asked: Option<Vec<T>>,
}

impl<T: Clone + Ord> Ddmin<T> {
    /// Starts from `passing`, a set whose test passes.
    pub fn new(passing: Vec<T>) -> Self {
        let mut tested = BTreeMap::new();
        tested.insert(sorted(passing.clone()), true);
        Ddmin {
            current: passing,
            parts: 2,
            next: 0,
            tested,
            asked: None,
        }
    }

    /// The smallest passing set found so far (1-minimal once [`Ddmin::next_test`] is `None`).
    pub fn current(&self) -> &[T] {
        &self.current
    }

    fn subset(&self, k: usize) -> Vec<T> {
        let n = self.current.len();
        let part = |i: usize| (i * n / self.parts)..((i + 1) * n / self.parts);
        if k < self.parts {
            self.current
                .get(part(k))
                .map(<[T]>::to_vec)
                .unwrap_or_default()
        } else {
            let skip = part(k - self.parts);
            self.current
                .iter()
                .enumerate()
                .filter(|(i, _)| !skip.contains(i))
                .map(|(_, x)| x.clone())
                .collect()
        }
    }

    /// The next subset to test; `None` when done.
    pub fn next_test(&mut self) -> Option<Vec<T>> {
        loop {
            let n = self.current.len();
            if n <= 1 {
                return None;
            }
            if self.next >= 2 * self.parts {
                if self.parts >= n {
                    return None;
                }
                self.parts = (2 * self.parts).min(n);
                self.next = 0;
                continue;
            }
            let s = self.subset(self.next);
            // Complements of two parts are parts themselves: already tried.
            let trivial =
                s.is_empty() || s.len() == n || (self.next >= self.parts && self.parts == 2);
            if trivial {
                self.next += 1;
                continue;
            }
            if let Some(&passed) = self.tested.get(&sorted(s.clone())) {
                self.advance(s, passed);
                continue;
            }
            self.asked = Some(s.clone());
            return Some(s);
        }
    }

    /// The outcome of the subset last returned by [`Ddmin::next_test`].
    pub fn report(&mut self, passed: bool) {
        if let Some(s) = self.asked.take() {
            self.tested.insert(sorted(s.clone()), passed);
            self.advance(s, passed);
        }
    }

    fn advance(&mut self, s: Vec<T>, passed: bool) {
        if passed {
            let was_part = self.next < self.parts;
            self.current = s;
            self.parts = if was_part { 2 } else { (self.parts - 1).max(2) };
            self.next = 0;
        } else {
            self.next += 1;
        }
    }
}

fn sorted<T: Ord>(mut v: Vec<T>) -> Vec<T> {
    v.sort();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs ddmin over `0..n` with `passes`; returns the set and the tests made.
    fn run(n: u32, passes: impl Fn(&[u32]) -> bool) -> (Vec<u32>, usize) {
        let mut d = Ddmin::new((0..n).collect());
        let mut tests = 0;
        while let Some(s) = d.next_test() {
            tests += 1;
            d.report(passes(&s));
        }
        (sorted(d.current().to_vec()), tests)
    }

    #[test]
    fn finds_the_set_every_member_of_which_is_needed() {
        let need = |s: &[u32], want: &[u32]| want.iter().all(|w| s.contains(w));
        assert_eq!(run(8, |s| need(s, &[2, 5])).0, vec![2, 5]);
        assert_eq!(run(9, |s| need(s, &[0, 4, 8])).0, vec![0, 4, 8]);
        assert_eq!(run(2, |s| need(s, &[0, 1])), (vec![0, 1], 2));
        assert_eq!(run(5, |s| need(s, &[3])).0, vec![3]);
    }

    #[test]
    fn any_one_of_several_rescuers_is_enough() {
        let (set, _) = run(6, |s| s.contains(&1) || s.contains(&4));
        assert_eq!(set.len(), 1);
        assert!(set == vec![1] || set == vec![4]);
    }

    #[test]
    fn a_single_candidate_needs_no_test() {
        assert_eq!(run(1, |_| true), (vec![0], 0));
    }
}
