//! Shared body of the importer fuzz targets: load strict and lenient; what loads must write as
//! smartcomment and load back with the same counts.

use memtrace::format::{load, smartcomment, Format, LoadOptions};

/// Panics (a fuzz crash) if an importer panics or a loaded trace does not round-trip.
pub fn exercise(data: &[u8], format: Option<Format>) {
    for lenient in [false, true] {
        let Ok(l) = load(data, LoadOptions { format, lenient, ..LoadOptions::default() }) else {
            continue;
        };
        let Ok(out) = smartcomment::write(&l.trace) else {
            continue;
        };
        let back = load(
            &out,
            LoadOptions {
                format: None,
                lenient,
                ..LoadOptions::default()
            },
        )
        .unwrap_or_else(|e| panic!("written trace does not load back: {e}"));
        assert_eq!(
            back.trace.vars.len(),
            l.trace.vars.len(),
            "round trip changed the nodes"
        );
        assert_eq!(
            back.trace.edges.len(),
            l.trace.edges.len(),
            "round trip changed the edges"
        );
    }
}
