//! One version of a prompt with its lineage: what a step or the closed loop
//! (`memtrace_memsys::closed_loop`) made, what [`super::export`] writes and [`super::gather`]
//! turns a step's edits into. Its twin for the memory system's settings is
//! [`super::settings::SettingVersion`].

use serde::{Deserialize, Serialize};

/// One version of a prompt, with its lineage.
#[cfg_attr(feature = "ts", derive(tsify_next::Tsify))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptVersion {
    pub name: String,
    pub version: u32,
    pub parent: Option<u32>,
    pub value: String,
    /// The round it was made in (`None`: the starting prompt).
    pub round: Option<usize>,
    /// Train accuracy of the first round that used it.
    pub score: Option<f64>,
    /// What the step that made it cost (`None`: no price for the model).
    pub cost_usd: Option<f64>,
    /// Unified diff from the parent.
    pub diff: String,
    pub cases: Vec<String>,
    pub feedback: String,
    pub rationale: String,
    /// Why the acceptance check threw it out (`None`: kept, or not checked yet).
    #[serde(default)]
    pub rejected: Option<String>,
}

impl PromptVersion {
    /// Version 1: the prompt a run started with.
    pub fn original(name: String, value: String) -> Self {
        PromptVersion {
            name,
            version: 1,
            parent: None,
            value,
            round: None,
            score: None,
            cost_usd: Some(0.0),
            diff: String::new(),
            cases: Vec::new(),
            feedback: String::new(),
            rationale: String::new(),
            rejected: None,
        }
    }
}
