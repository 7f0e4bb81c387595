// Shared by the memsys tests: the LoCoMo conversations in `tests/data/locomo/` (committed,
// CC BY-NC 4.0: see its LICENSE.md), read at run time.

use std::path::PathBuf;

use memtrace_memsys::{locomo, Conversation};

/// The LoCoMo folder; a test that needs it fails loudly when it is not there (never a
/// silent pass).
pub fn locomo_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/locomo");
    assert!(
        dir.is_dir(),
        "this test needs the LoCoMo conversations at {} (committed with the repository)",
        dir.display()
    );
    dir
}

/// Every `*.json` conversation in `dir`, sorted by file name.
pub fn conversations(dir: &PathBuf) -> Vec<Conversation> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("read the LoCoMo folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let v: serde_json::Value = serde_json::from_slice(&std::fs::read(p).expect("read")).expect("json");
            let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or("");
            Conversation::from_json(&v, locomo::sample_index(stem, i + 1)).expect("a LoCoMo conversation")
        })
        .collect()
}
