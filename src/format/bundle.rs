//! A project bundle: the trace files the page had loaded and its settings, in one JSON file
//! (`{"memtrace_bundle": 1, "traces": [{"name", "content"}], "settings": {…}}`). The page writes
//! and reads it with its own settings type; the CLI reads the same file with the part of the
//! settings it uses (role overrides, failure rules, marked questions).

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::error::from_json;
use super::FormatError;

/// The key that marks a bundle.
pub const MARK: &str = "memtrace_bundle";
/// The newest bundle version this build reads and the one it writes.
pub const VERSION: u32 = 1;

/// One trace file inside a bundle, as text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BundleFile {
    pub name: String,
    pub content: String,
}

/// A bundle with settings of type `S` (the page's, or a reader's subset of them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bundle<S> {
    pub memtrace_bundle: u32,
    pub traces: Vec<BundleFile>,
    #[serde(default)]
    pub settings: S,
}

/// True when `bytes` look like a bundle (checked on the first 4 KiB only).
pub fn is_bundle(bytes: &[u8]) -> bool {
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(4096)]);
    head.trim_start_matches('\u{feff}')
        .trim_start()
        .starts_with('{')
        && head.contains(&format!("\"{MARK}\""))
}

/// Serializes traces (name, bytes) and settings into a bundle file.
pub fn export<S: Serialize>(traces: &[(String, &[u8])], settings: &S) -> Vec<u8> {
    let files: Vec<BundleFile> = traces
        .iter()
        .map(|(name, bytes)| BundleFile {
            name: name.clone(),
            content: String::from_utf8_lossy(bytes).into_owned(),
        })
        .collect();
    let b = Bundle {
        memtrace_bundle: VERSION,
        traces: files,
        settings,
    };
    serde_json::to_vec(&b).unwrap_or_default()
}

/// Reads a bundle; settings fields `S` does not know are ignored, missing ones default.
///
/// # Errors
/// [`FormatError::Json`] with line and column for text that is not a bundle,
/// [`FormatError::Field`] for a version newer than this build reads.
pub fn parse<S: DeserializeOwned + Default>(bytes: &[u8]) -> Result<Bundle<S>, FormatError> {
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    let b: Bundle<S> = serde_json::from_slice(bytes).map_err(|e| from_json(&e))?;
    if b.memtrace_bundle > VERSION {
        return Err(FormatError::Field {
            path: MARK.into(),
            message: format!(
                "bundle version {} is newer than this build reads ({VERSION}); update memtrace",
                b.memtrace_bundle
            ),
        });
    }
    Ok(b)
}
