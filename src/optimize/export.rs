//! Exports of optimized prompts, each version with its version, parent, score, cost and diff:
//! - `update_results.json`: keys `<name>@<version>` (MemTrace's format);
//! - Mem0 config keys: `custom_fact_extraction_prompt`, `custom_update_memory_prompt`;
//! - plain text files: `<name>@<version>.txt`, plus `.diff` and a `versions.json` index;
//! - the memory system's settings, as a `settings` block of `update_results.json` ([`with_settings`]).

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::prompt_names as names;
use super::settings::SettingVersion;
use super::version::PromptVersion;

/// The export formats, by the names the CLI and the page use.
#[cfg_attr(feature = "ts", derive(tsify_next::Tsify))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExportFormat {
    /// `update_results.json`, keys `<name>@<version>`.
    UpdateResults,
    /// Mem0 config: `custom_fact_extraction_prompt`, `custom_update_memory_prompt`.
    Mem0,
    /// One text file per prompt version.
    Text,
}

/// Mem0's config key for a prompt name, if Mem0 has one.
pub fn mem0_key(name: &str) -> Option<&'static str> {
    match name {
        names::FACT_EXTRACTION => Some("custom_fact_extraction_prompt"),
        names::UPDATE_DECISION => Some("custom_update_memory_prompt"),
        _ => None,
    }
}

fn meta(v: &PromptVersion) -> Value {
    json!({
        "version": v.version,
        "parent": v.parent.map(|p| format!("{}@{p}", v.name)),
        "score": v.score,
        "cost_usd": v.cost_usd,
        "diff": v.diff,
        "round": v.round,
        "cases": v.cases,
        "feedback": v.feedback,
    })
}

/// `update_results.json`: every version keyed `<name>@<version>`, each `{value, version,
/// parent, score, cost_usd, diff, round, cases, feedback}`.
pub fn update_results(versions: &[PromptVersion]) -> Value {
    let mut sorted: Vec<&PromptVersion> = versions.iter().collect();
    sorted.sort_by(|a, b| (&a.name, a.version).cmp(&(&b.name, b.version)));
    let mut out = Map::new();
    for v in sorted {
        let mut m = meta(v);
        if let Some(o) = m.as_object_mut() {
            o.insert("value".into(), json!(v.value));
        }
        out.insert(format!("{}@{}", v.name, v.version), m);
    }
    Value::Object(out)
}

fn latest(versions: &[PromptVersion]) -> BTreeMap<&str, &PromptVersion> {
    let mut out: BTreeMap<&str, &PromptVersion> = BTreeMap::new();
    for v in versions {
        if out
            .get(v.name.as_str())
            .is_none_or(|o| o.version < v.version)
        {
            out.insert(&v.name, v);
        }
    }
    out
}

/// A Mem0 config fragment with the latest prompts under Mem0's keys, and a `memtrace` object
/// with each one's version, parent, score, cost and diff. Prompts Mem0 has no key for are left out.
pub fn mem0_config(versions: &[PromptVersion]) -> Value {
    let mut out = Map::new();
    let mut info = Map::new();
    for (name, v) in latest(versions) {
        let Some(key) = mem0_key(name) else {
            continue;
        };
        out.insert(key.into(), json!(v.value));
        let mut m = meta(v);
        if let Some(o) = m.as_object_mut() {
            o.insert("name".into(), json!(name));
        }
        info.insert(key.into(), m);
    }
    out.insert("memtrace".into(), Value::Object(info));
    Value::Object(out)
}

/// Plain text files `(file name, contents)`: `<name>@<version>.txt` (the prompt only), a
/// `<name>@<version>.diff` for versions with a parent, and `versions.json` with the metadata.
pub fn text_files(versions: &[PromptVersion]) -> Vec<(String, String)> {
    let mut files = Vec::new();
    let mut index = Map::new();
    let mut sorted: Vec<&PromptVersion> = versions.iter().collect();
    sorted.sort_by(|a, b| (&a.name, a.version).cmp(&(&b.name, b.version)));
    for v in sorted {
        let stem = format!("{}@{}", v.name, v.version);
        files.push((format!("{stem}.txt"), v.value.clone()));
        if v.parent.is_some() {
            files.push((format!("{stem}.diff"), v.diff.clone()));
        }
        index.insert(stem, meta(v));
    }
    let text = serde_json::to_string_pretty(&Value::Object(index)).unwrap_or_default();
    files.push(("versions.json".into(), text));
    files
}

/// `results` (an [`update_results`] object) with a `settings` block: every setting version
/// keyed `<name>@<version>`, each `{value, version, parent, score, round, reason, cases,
/// rejected}`.
pub fn with_settings(mut results: Value, settings: &[SettingVersion]) -> Value {
    let mut sorted: Vec<&SettingVersion> = settings.iter().collect();
    sorted.sort_by(|a, b| (&a.name, a.version).cmp(&(&b.name, b.version)));
    let block: Map<String, Value> = sorted
        .into_iter()
        .map(|v| {
            (
                format!("{}@{}", v.name, v.version),
                json!({
                    "value": v.value,
                    "version": v.version,
                    "parent": v.parent.map(|p| format!("{}@{p}", v.name)),
                    "score": v.score,
                    "round": v.round,
                    "reason": v.reason,
                    "cases": v.cases,
                    "rejected": v.rejected,
                }),
            )
        })
        .collect();
    if let Some(o) = results.as_object_mut() {
        o.insert("settings".into(), Value::Object(block));
    }
    results
}

/// The files of one export format, `(path, contents)` with paths relative to an output folder:
/// `update_results.json`, `mem0_config.json`, or `prompts/…` ([`text_files`]).
pub fn files(versions: &[PromptVersion], format: ExportFormat) -> Vec<(String, String)> {
    let pretty = |v: &Value| serde_json::to_string_pretty(v).unwrap_or_default();
    match format {
        ExportFormat::UpdateResults => vec![(
            "update_results.json".into(),
            pretty(&update_results(versions)),
        )],
        ExportFormat::Mem0 => vec![("mem0_config.json".into(), pretty(&mem0_config(versions)))],
        ExportFormat::Text => text_files(versions)
            .into_iter()
            .map(|(name, text)| (format!("prompts/{name}"), text))
            .collect(),
    }
}
