//! What every host shows of a loop: its progress in steps, two rounds compared, each prompt's
//! versions, and the export files (the page's Optimize view, the CLI's `optimize`).

use std::collections::BTreeMap;

use memtrace::optimize::compare::{compare, Comparison};
use memtrace::optimize::export;
use memtrace::optimize::PromptVersion;

use super::{LoopConfig, LoopState, Phase};

impl LoopConfig {
    /// Steps of a whole loop: each round runs every chosen conversation, every round but the
    /// last also optimizes.
    pub fn steps_total(&self) -> usize {
        let per_round = self.train.len() + self.heldout.len();
        (self.rounds + 1) * per_round + self.rounds
    }
}

/// The export files of a loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportKind {
    /// `update_results.json`: every prompt version and setting version.
    UpdateResults,
    /// `mem0_config.json`: the prompts as mem0's configuration reads them.
    Mem0,
    /// `prompts.txt`: each prompt's text under its name.
    Text,
    /// `optimize.html`: the loop as a page of its own.
    Html,
}

impl LoopState {
    /// Steps done so far (of [`LoopConfig::steps_total`]).
    pub fn steps_done(&self) -> usize {
        let per_round = self.config.train.len() + self.config.heldout.len();
        match self.phase {
            Phase::Run { round, pos } => round * (per_round + 1) + pos,
            Phase::Optimize { round } => round * (per_round + 1) + per_round,
            Phase::Done => self.config.steps_total(),
        }
    }

    /// Round `a` against round `b`: each question's verdict before and after.
    pub fn compare_rounds(&self, a: usize, b: usize) -> Option<Comparison> {
        let of = |r: usize| self.rounds.iter().find(|x| x.round == r);
        Some(compare(&of(a)?.verdicts, &of(b)?.verdicts))
    }

    /// Each prompt's versions, oldest first.
    pub fn versions_by_prompt(&self) -> BTreeMap<String, Vec<PromptVersion>> {
        let mut out: BTreeMap<String, Vec<PromptVersion>> = BTreeMap::new();
        for v in &self.versions {
            out.entry(v.name.clone()).or_default().push(v.clone());
        }
        for list in out.values_mut() {
            list.sort_by_key(|v| v.version);
        }
        out
    }

    /// The value of `v`'s parent version, empty for a starting prompt.
    pub fn parent_value(&self, v: &PromptVersion) -> &str {
        self.versions
            .iter()
            .find(|p| p.name == v.name && Some(p.version) == v.parent)
            .map_or("", |p| p.value.as_str())
    }

    /// An export as `(file name, MIME type, contents)`.
    pub fn export(&self, kind: ExportKind) -> (String, &'static str, String) {
        let pretty = |v: &serde_json::Value| serde_json::to_string_pretty(v).unwrap_or_default();
        match kind {
            ExportKind::UpdateResults => (
                "update_results.json".into(),
                "application/json",
                pretty(&export::with_settings(
                    export::update_results(&self.versions),
                    &self.setting_versions,
                )),
            ),
            ExportKind::Mem0 => (
                "mem0_config.json".into(),
                "application/json",
                pretty(&export::mem0_config(&self.versions)),
            ),
            ExportKind::Text => {
                let text = export::text_files(&self.versions)
                    .into_iter()
                    .map(|(name, body)| format!("===== {name} =====\n{body}\n"))
                    .collect::<Vec<_>>()
                    .join("\n");
                ("prompts.txt".into(), "text/plain", text)
            }
            ExportKind::Html => (
                "optimize.html".into(),
                "text/html",
                super::page::loop_html(self),
            ),
        }
    }
}
