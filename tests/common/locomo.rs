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

/// The single-hop (category 4) questions of `conv`, by index.
#[allow(dead_code)] // not every test that includes this file runs the reference system
pub fn single_hop(conv: &Conversation) -> Vec<usize> {
    (conv.questions.iter().enumerate())
        .filter(|(_, q)| q.category == 4)
        .map(|(i, _)| i)
        .collect()
}

/// A clean run (no fault) of the reference system `cfg` over `conv`'s questions `qs`, the
/// simulated provider answering.
#[allow(dead_code)]
pub fn clean_run(conv: &Conversation, cfg: &memtrace_memsys::Config, qs: &[usize]) -> memtrace_memsys::Run {
    let rec = memtrace_memsys::recorder_for(conv, cfg, false);
    let prompts = memtrace_memsys::Prompts::default();
    let llm = memtrace_memsys::simulated::SimulatedLlm;
    futures_executor::block_on(memtrace_memsys::run(&llm, conv, &prompts, cfg, &[], qs, &rec))
        .expect("run")
}

/// Asserts every failure case of trace `t` (file `name`) is annotated.
#[allow(dead_code)]
pub fn assert_every_failure_annotated(t: &memtrace::Trace, name: &str) {
    assert_eq!(
        t.cases.len(),
        t.annotations.as_ref().map_or(0, Vec::len),
        "{name}: every failure is annotated"
    );
}
