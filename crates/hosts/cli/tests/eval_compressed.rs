//! `memtrace eval DIR` on a folder of compressed traces: `<c>.jsonl.gz` is read (decompressed),
//! its ground truth found in `<c>.annotations.json` beside it, and the protobuf `<c>.pb.gz` next
//! to them is not taken for a trace. Reads the lab corpus (`tests/data/lab/`; fails when absent).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use std::path::Path;
use std::process::Command;

#[test]
fn eval_reads_a_compressed_trace_with_its_plain_sidecar() {
    let lab =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../tests/data/lab/langmem/openinference");
    let dir = std::env::temp_dir().join(format!("memtrace-eval-gz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["26.jsonl.gz", "26.pb.gz", "26.annotations.json"] {
        std::fs::copy(lab.join(name), dir.join(name))
            .unwrap_or_else(|e| panic!("{}: {e}", lab.join(name).display()));
    }
    let sidecar: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("26.annotations.json")).unwrap()).unwrap();
    let annotated = sidecar["annotations"].as_array().unwrap().len();
    let out = Command::new(env!("CARGO_BIN_EXE_memtrace"))
        .arg("eval")
        .arg(&dir)
        .args(["--method", "infoflow", "--json"])
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(annotated > 0);
    assert_eq!(report["metrics"]["cases"], annotated, "{report}");
}
