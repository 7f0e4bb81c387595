//! A project bundle: every loaded trace file plus the page settings, in one JSON file the user
//! can export, keep and drop again (the file format is the core's `format::bundle`).

use crate::state::Settings;

pub use memtrace::format::bundle::{is_bundle, BundleFile, MARK, VERSION};

/// A bundle with the page's settings.
pub type Bundle = memtrace::format::bundle::Bundle<Settings>;

/// Serializes traces (name, bytes) and settings into a bundle file.
pub fn export(traces: &[(String, &[u8])], settings: &Settings) -> Vec<u8> {
    memtrace::format::bundle::export(traces, settings)
}

/// Reads a bundle.
///
/// # Errors
/// A sentence with the JSON line and column, or the unsupported version.
pub fn parse(bytes: &[u8]) -> Result<Bundle, String> {
    memtrace::format::bundle::parse(bytes)
        .map_err(|e| format!("not a readable memtrace bundle: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_keeps_files_and_settings() {
        let mut settings = Settings::default();
        settings.list.text = "tea".into();
        settings.project.current = Some("b.json".into());
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
