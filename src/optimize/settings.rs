//! The memory system's settings as optimizable variables, next to its prompts: each declares
//! its kind (an integer in a range: `top_k`, `similar_k`), and one update operator per kind
//! turns the attributed failures' evidence into a proposal. Integers move on
//! [`Miss`]es: a `RetrievalError` whose evidence unit the similarity ranking put just below the
//! cut raises `top_k` to cover it. Every change is a [`SettingVersion`] with its lineage (the
//! numeric history, as [`super::PromptVersion`] is the prompts' one). Reading and applying them
//! on the reference memory system's configuration is `memtrace_memsys::settings`.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

/// What values a setting takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SettingKind {
    /// An integer in `min..=max`.
    Integer { min: i64, max: i64 },
}

/// One optimizable setting of the reference memory system.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SettingSpec {
    pub name: &'static str,
    pub kind: SettingKind,
    pub doc: &'static str,
}

/// Units retrieved per question.
pub const TOP_K: &str = "top_k";
/// Similar units an update decision looks at.
pub const SIMILAR_K: &str = "similar_k";

/// The settings of the reference memory systems, by name.
pub const SPECS: [SettingSpec; 2] = [
    SettingSpec {
        name: TOP_K,
        kind: SettingKind::Integer { min: 1, max: 50 },
        doc: "units retrieved per question",
    },
    SettingSpec {
        name: SIMILAR_K,
        kind: SettingKind::Integer { min: 1, max: 20 },
        doc: "similar units an update decision looks at",
    },
];

/// The spec named `name`.
pub fn spec(name: &str) -> Option<&'static SettingSpec> {
    SPECS.iter().find(|s| s.name == name)
}

/// Evidence for a setting: a failed training question attributed to the op the setting
/// drives, with the rank its evidence had in the ranking the setting cuts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Miss {
    pub setting: String,
    pub case_id: String,
    pub question: String,
    /// 1-based rank of the best unit holding the gold answer (`None`: no unit holds it).
    pub rank: Option<usize>,
    /// The setting's value in the run.
    pub value: i64,
}

/// A proposed change of one setting, from the misses that drove it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SettingEdit {
    pub name: String,
    pub old_value: i64,
    pub new_value: i64,
    pub reason: String,
    pub cases: Vec<String>,
}

/// One version of a setting, with its lineage.
// Kept twin (duplicates): its lineage fields and `original` repeat `PromptVersion`'s; the two
// differ in value type and in what a step records (diff, feedback, cost vs a reason), and both
// are saved shapes (project bundles, the JS API), so they stay two plain structs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SettingVersion {
    pub name: String,
    pub version: u32,
    pub parent: Option<u32>,
    pub value: i64,
    /// The round it was proposed in (`None`: the starting value).
    pub round: Option<usize>,
    /// Held-out (else train) accuracy of the first round that used it.
    pub score: Option<f64>,
    pub reason: String,
    pub cases: Vec<String>,
    /// Why the acceptance check threw it out (`None`: kept, or not checked yet).
    #[serde(default)]
    pub rejected: Option<String>,
}

impl SettingVersion {
    /// Version 1: the value a loop started with.
    pub fn original(name: String, value: i64) -> Self {
        Self {
            name,
            version: 1,
            parent: None,
            value,
            round: None,
            score: None,
            reason: String::new(),
            cases: Vec::new(),
            rejected: None,
        }
    }
}

/// How far below the cut a missed rank still counts as "just below" it: the cut again, at
/// least 3. Evidence ranked further down is a ranking problem a larger k would only paper over.
fn reach(value: i64) -> i64 {
    value.max(3)
}

/// The integer operator: proposes a new value of `name` (now `value`) from `misses`. For
/// `top_k`, misses ranked just below the cut (within [`reach`]) raise it to cover them
/// all; values in `refused` (rejected before) are not proposed again.
pub fn propose(name: &str, value: i64, misses: &[Miss], refused: &[i64]) -> Option<SettingEdit> {
    let spec = spec(name)?;
    let SettingKind::Integer { min, max } = spec.kind;
    if name != TOP_K {
        return None;
    }
    let mine: Vec<&Miss> = misses.iter().filter(|m| m.setting == name).collect();
    let near: Vec<(&Miss, i64)> = mine
        .iter()
        .filter_map(|m| {
            let r = i64::try_from(m.rank?).ok()?;
            (r > value && r <= value + reach(value)).then_some((*m, r))
        })
        .collect();
    let highest = near.iter().map(|(_, r)| *r).max()?;
    let new_value = highest.clamp(min, max);
    if new_value == value || refused.contains(&new_value) {
        return None;
    }
    let mut ranks: Vec<i64> = near.iter().map(|(_, r)| *r).collect();
    ranks.sort_unstable();
    let mut reason = format!(
        "{} of {} retrieval failures missed their evidence just below the cut (rank{} {} under {name} {value})",
        near.len(),
        mine.len(),
        if ranks.len() == 1 { "" } else { "s" },
        ranks
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    );
    let _ = write!(reason, ": {name} {value} → {new_value}");
    if new_value < highest {
        let _ = write!(reason, " (the most {name} allows)");
    }
    let mut cases: Vec<String> = near.iter().map(|(m, _)| m.case_id.clone()).collect();
    cases.sort();
    cases.dedup();
    Some(SettingEdit {
        name: name.to_owned(),
        old_value: value,
        new_value,
        reason,
        cases,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn miss(rank: Option<usize>) -> Miss {
        Miss {
            setting: TOP_K.into(),
            case_id: format!("q{rank:?}"),
            question: String::new(),
            rank,
            value: 2,
        }
    }

    #[test]
    fn top_k_rises_to_cover_misses_just_below_the_cut() {
        let e = propose(
            TOP_K,
            2,
            &[miss(Some(3)), miss(Some(5)), miss(Some(40)), miss(None)],
            &[],
        )
        .unwrap();
        assert_eq!((e.old_value, e.new_value), (2, 5));
        assert!(e.reason.contains("2 of 4"), "{}", e.reason);
        assert_eq!(e.cases.len(), 2);
        assert_eq!(
            propose(TOP_K, 2, &[miss(Some(3))], &[3]),
            None,
            "refused before"
        );
        assert_eq!(
            propose(TOP_K, 2, &[miss(Some(1)), miss(Some(40))], &[]),
            None
        );
        assert_eq!(propose(SIMILAR_K, 2, &[miss(Some(3))], &[]), None);
    }
}
