//! The closed loop's acceptance check and setting updates: a round is kept when its held-out
//! accuracy (train accuracy when there is no held-out split) is not below the last kept
//! round's; otherwise the prompt and setting versions the round ran with are marked rejected,
//! and the loop goes back to the kept round's prompts, settings and failures.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::{LoopState, RoundRecord};
use crate::Prompts;
use memtrace::optimize::settings::{self, Miss, SettingEdit, SettingVersion};
use memtrace::optimize::targets::Failure;

/// The last round the acceptance check kept, and what the loop goes back to after a rejection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Kept {
    pub round: usize,
    /// The accuracy a later round must reach.
    pub score: f64,
    /// `held-out` or `train`: which accuracy `score` is.
    pub split: String,
    pub prompts: Prompts,
    pub settings: BTreeMap<String, i64>,
    pub pending: Vec<Failure>,
    pub misses: Vec<Miss>,
}

/// The accuracy the acceptance check reads: held-out, else train; and its split's name.
pub fn score(rec: &RoundRecord) -> (f64, &'static str) {
    if rec.heldout.total > 0 {
        (rec.heldout.accuracy(), "held-out")
    } else {
        (rec.train.accuracy(), "train")
    }
}

/// Judges the round just run (the last record): keeps it, or rejects it and goes back to the
/// kept round. Scores the versions it used first.
pub fn judge_round(state: &mut LoopState) {
    let Some(rec) = state.rounds.last() else {
        return;
    };
    let (now, split) = score(rec);
    let train = rec.train.accuracy();
    let (round, used) = (rec.round, rec.versions.clone());
    for v in &mut state.versions {
        if v.score.is_none() && used.get(&v.name) == Some(&v.version) {
            v.score = Some(train);
        }
    }
    let used_settings = state.current_setting_versions();
    for v in &mut state.setting_versions {
        if v.score.is_none() && used_settings.get(&v.name) == Some(&v.version) {
            v.score = Some(now);
        }
    }
    let refused = state
        .kept
        .as_ref()
        .filter(|k| now < k.score && k.split == split);
    let Some(kept) = refused.cloned() else {
        state.kept = Some(Kept {
            round,
            score: now,
            split: split.to_owned(),
            prompts: state.prompts.clone(),
            settings: state.settings.clone(),
            pending: state.pending.clone(),
            misses: state.misses.clone(),
        });
        return;
    };
    let why = format!(
        "{split} accuracy {:.1}% is below {:.1}% of round {}: its prompts and settings go back to round {}'s",
        now * 100.0,
        kept.score * 100.0,
        kept.round,
        kept.round
    );
    let made_after = |r: Option<usize>| r.is_some_and(|r| r >= kept.round);
    for v in &mut state.versions {
        if v.rejected.is_none() && made_after(v.round) {
            v.rejected = Some(why.clone());
        }
    }
    for v in &mut state.setting_versions {
        if v.rejected.is_none() && made_after(v.round) {
            v.rejected = Some(why.clone());
        }
    }
    if let Some(rec) = state.rounds.last_mut() {
        rec.rejected = Some(why);
    }
    state.prompts = kept.prompts;
    state.settings = kept.settings;
    state.pending = kept.pending;
    state.misses = kept.misses;
}

/// The next version number of `name`: one past the highest, rejected ones included.
pub fn next_version<'a>(versions: impl Iterator<Item = (&'a String, u32)>, name: &str) -> u32 {
    versions
        .filter(|(n, _)| n.as_str() == name)
        .map(|(_, v)| v)
        .max()
        .unwrap_or(0)
        + 1
}

/// Runs each tuned setting's operator on the pending misses; applies and versions the
/// proposals made in `round`.
pub fn tune_settings(state: &mut LoopState, round: usize) -> Vec<SettingEdit> {
    let current = state.current_setting_versions();
    let mut edits = Vec::new();
    for name in state.config.settings.clone() {
        let Some(&value) = state.settings.get(&name) else {
            continue;
        };
        let refused: Vec<i64> = state
            .setting_versions
            .iter()
            .filter(|v| v.name == name && v.rejected.is_some())
            .map(|v| v.value)
            .collect();
        let Some(edit) = settings::propose(&name, value, &state.misses, &refused) else {
            continue;
        };
        state.settings.insert(name.clone(), edit.new_value);
        let version = next_version(
            state.setting_versions.iter().map(|v| (&v.name, v.version)),
            &name,
        );
        state.setting_versions.push(SettingVersion {
            name: name.clone(),
            version,
            parent: current.get(&name).copied(),
            value: edit.new_value,
            round: Some(round),
            score: None,
            reason: edit.reason.clone(),
            cases: edit.cases.clone(),
            rejected: None,
        });
        edits.push(edit);
    }
    edits
}

/// ` · top_k 3 · similar_k 5`: the settings a round ran with, for labels.
pub fn settings_label(settings: &BTreeMap<String, i64>) -> String {
    let mut out = String::new();
    for (k, v) in settings {
        let _ = write!(out, " · {k} {v}");
    }
    out
}

/// Each setting's history as text, one line per version:
/// `top_k@2 = 3 (from @1, round 0, held-out 100.0%): <reason>` (+ `REJECTED: why`).
pub fn settings_text(state: &LoopState) -> String {
    let mut sorted: Vec<&SettingVersion> = state.setting_versions.iter().collect();
    sorted.sort_by(|a, b| (&a.name, a.version).cmp(&(&b.name, b.version)));
    let mut out = String::new();
    for v in sorted {
        let _ = write!(out, "{}@{} = {}", v.name, v.version, v.value);
        match (v.parent, v.round) {
            (Some(p), Some(r)) => {
                let _ = write!(out, " (from @{p}, round {r}");
            }
            _ => out.push_str(" (start"),
        }
        if let Some(s) = v.score {
            let _ = write!(out, ", scored {:.1}%", s * 100.0);
        }
        out.push(')');
        if !v.reason.is_empty() {
            let _ = write!(out, ": {}", v.reason);
        }
        if let Some(why) = &v.rejected {
            let _ = write!(out, " REJECTED: {why}");
        }
        out.push('\n');
    }
    out
}
