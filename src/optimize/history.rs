//! The gradient history: per target, the last N (old value, aggregated feedback) pairs, shown
//! to the next feedback step as momentum so the optimizer does not repeat a failed edit.

use std::collections::{BTreeMap, VecDeque};

use serde::{Deserialize, Serialize};

/// One past step of a target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryEntry {
    /// The value before the step's update.
    pub old_value: String,
    /// The aggregated feedback that drove the update.
    pub feedback: String,
}

/// Past steps per target, at most `capacity` each (oldest dropped first).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct History {
    pub capacity: usize,
    pub entries: BTreeMap<String, VecDeque<HistoryEntry>>,
}

impl History {
    /// An empty history keeping `capacity` steps per target.
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity,
            entries: BTreeMap::new(),
        }
    }

    /// Records a step of `target`.
    pub fn push(&mut self, target: &str, entry: HistoryEntry) {
        if self.capacity == 0 {
            return;
        }
        let q = self.entries.entry(target.to_owned()).or_default();
        q.push_back(entry);
        while q.len() > self.capacity {
            q.pop_front();
        }
    }

    /// The steps of `target`, oldest first.
    pub fn of(&self, target: &str) -> Vec<&HistoryEntry> {
        self.entries
            .get(target)
            .map(|q| q.iter().collect())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_last_n() {
        let mut h = History::new(2);
        for i in 0..3 {
            h.push(
                "p",
                HistoryEntry {
                    old_value: format!("v{i}"),
                    feedback: format!("f{i}"),
                },
            );
        }
        let got: Vec<&str> = h.of("p").iter().map(|e| e.old_value.as_str()).collect();
        assert_eq!(got, ["v1", "v2"]);
        assert!(h.of("q").is_empty());
    }
}
