//! A project bundle: every loaded trace file plus the page settings, in one JSON file the user
//! can export, keep and drop again. Pure, tested natively.

use serde::{Deserialize, Serialize};

use crate::state::Settings;

/// The key that marks a bundle, and its version.
pub const MARK: &str = "memtrace_bundle";
pub const VERSION: u32 = 1;

/// One trace file inside a bundle, as text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BundleFile {
    pub name: String,
    pub content: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bundle {
    pub memtrace_bundle: u32,
    pub traces: Vec<BundleFile>,
    #[serde(default)]
    pub settings: Settings,
}

/// True when `bytes` look like a bundle (checked on the first 4 KiB only).
pub fn is_bundle(bytes: &[u8]) -> bool {
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(4096)]);
    head.trim_start().starts_with('{') && head.contains(&format!("\"{MARK}\""))
}

/// Serializes traces (name, bytes) and settings into a bundle file.
pub fn export(traces: &[(String, &[u8])], settings: &Settings) -> Vec<u8> {
    let b = Bundle {
        memtrace_bundle: VERSION,
        traces: traces
            .iter()
            .map(|(name, bytes)| BundleFile {
                name: name.clone(),
                content: String::from_utf8_lossy(bytes).into_owned(),
            })
            .collect(),
        settings: settings.clone(),
    };
    serde_json::to_vec(&b).unwrap_or_default()
}

/// Reads a bundle.
///
/// # Errors
/// A sentence with the JSON line and column, or the unsupported version.
pub fn parse(bytes: &[u8]) -> Result<Bundle, String> {
    let b: Bundle = serde_json::from_slice(bytes).map_err(|e| {
        format!(
            "not a readable memtrace bundle at line {}, column {}: {e}. Export the project again.",
            e.line(),
            e.column()
        )
    })?;
    if b.memtrace_bundle > VERSION {
        return Err(format!(
            "bundle version {} is newer than this page reads ({VERSION}); update memtrace",
            b.memtrace_bundle
        ));
    }
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_keeps_files_and_settings() {
        let mut settings = Settings::default();
        settings.list.text = "tea".into();
        settings.current = Some("b.json".into());
        let bytes = export(
            &[("a.json".into(), b"{\"x\":1}"), ("b.json".into(), b"{}")],
            &settings,
        );
        assert!(is_bundle(&bytes));
        let b = parse(&bytes).unwrap();
        assert_eq!(b.traces.len(), 2);
        assert_eq!(b.traces[0].content, "{\"x\":1}");
        assert_eq!(b.settings, settings);
        assert!(!is_bundle(b"{\"graph_id\": \"g\"}"));
    }

    #[test]
    fn broken_bundle_says_where() {
        let err = parse(b"{\"memtrace_bundle\": 1, \"traces\": [").unwrap_err();
        assert!(err.contains("line 1, column"), "{err}");
        let err = parse(b"{\"memtrace_bundle\": 99, \"traces\": []}").unwrap_err();
        assert!(err.contains("newer"), "{err}");
    }
}
