//! The lab corpus (`tests/data/lab/<library>/<format>/<conversation>.*`, see its README): traces
//! REAL memory libraries wrote (mem0ai; LangMem on a LangGraph store; graphiti-core on Kuzu;
//! mem0ai 1.0.x and Agno's MemoryManager, whose model decides add / update / delete),
//! traced by the real OpenInference instrumentations (OpenAI; LangChain; OpenAI plus graphiti's
//! own spans) and, for mem0ai, also by the OTel GenAI instrumentation (spans plus log records)
//! and OpenLLMetry's, exported by the OTel SDK,
//! with faults injected in LLM replies and ground truth in `<trace>.annotations.json`. Every file
//! must load with its ground truth; detection without a user rule and the info-flow accuracy per
//! library × format × split are measured (the split was fixed before any result was looked at:
//! tuning = LoCoMo 26, 30, 41; held-out = 42, 43, 47, 49 — never tune on held-out misses).
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed expectation should panic

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use memtrace::format::{load, sidecar, LoadOptions};
use memtrace::model::Trace;

#[path = "common/textless.rs"]
mod textless;

const TUNING: [&str; 3] = ["26", "30", "41"];
const HELD_OUT: [&str; 4] = ["42", "43", "47", "49"];
/// Every library the lab runs (`lab/libs/`), each with the seven conversations.
const LIBRARIES: [&str; 5] = ["agno", "graphiti", "langmem", "mem0ai", "mem0v1"];
/// The libraries whose model decides what happens to memory (mem0ai 1.0.x's update-memory reply,
/// Agno's add / update / delete_memory tool calls) and the cases of each decision fault they hold
/// over the seven conversations: (library/format, UpdateError, DeletionError).
const DECIDING: [(&str, usize, usize); 2] =
    [("agno/openinference", 9, 7), ("mem0v1/openinference", 7, 2)];
/// The held-out op-id floor per `library/format` as (right, of): today's measured figures, kept so
/// they cannot fall unnoticed (mem0ai 16 of 18 with each tracer, langmem 9 of 10: below the
/// issue's 0.90 or at it; graphiti 10 of 10; agno 15 of 18, mem0v1 14 of 16).
const HELD_OUT_FLOOR: [(&str, usize, usize); 7] = [
    ("agno/openinference", 15, 18),
    ("mem0v1/openinference", 14, 16),
    ("mem0ai/openinference", 16, 18),
    ("mem0ai/genai", 16, 18),
    ("mem0ai/openllmetry", 16, 18),
    ("langmem/openinference", 9, 10),
    ("graphiti/openinference", 10, 10),
];

/// The same floor without the annotations' evidence ids (what a user has): the turns are found
/// in the prompts and state spans ([`memtrace::attribution::InfoFlow::case_turns`]).
/// Agno and mem0ai 1.0.x: update and deletion faults read from the edits their model wrote.
const HELD_OUT_FLOOR_WITHOUT_IDS: [(&str, usize, usize); 7] = [
    ("agno/openinference", 15, 18),
    ("mem0v1/openinference", 14, 16),
    ("mem0ai/openinference", 14, 18),
    ("mem0ai/genai", 14, 18),
    ("mem0ai/openllmetry", 14, 18),
    ("langmem/openinference", 9, 10),
    ("graphiti/openinference", 10, 10),
];

/// `(library/format, conversation, trace path)` for every trace in the corpus.
fn corpus() -> Vec<(String, String, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/lab");
    let mut out = Vec::new();
    for lib in sorted_dirs(&root) {
        if lib.ends_with("voices") {
            continue; // the voices' corpus: tests/lab_voices.rs
        }
        for fmt in sorted_dirs(&lib) {
            let group = format!(
                "{}/{}",
                lib.file_name().unwrap().to_string_lossy(),
                fmt.file_name().unwrap().to_string_lossy()
            );
            for f in std::fs::read_dir(&fmt).unwrap() {
                let p = f.unwrap().path();
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                // `<c>.jsonl.gz` (the protobuf `<c>.pb.gz` beside it is not read here).
                let ext = sidecar::trace_extension(&name);
                let is_trace = matches!(ext.as_deref(), Some("json" | "jsonl"));
                if is_trace && !sidecar::is_sidecar(&name) {
                    let conv = name.split('.').next().unwrap().to_owned();
                    out.push((group.clone(), conv, p));
                }
            }
        }
    }
    out.sort();
    assert!(
        !out.is_empty(),
        "no lab corpus under {} (scripts/lab)",
        root.display()
    );
    out
}

fn sorted_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    v.sort();
    v
}

fn sidecar_of(path: &Path) -> Vec<u8> {
    let name = sidecar::sidecar_name(&path.file_name().unwrap().to_string_lossy());
    std::fs::read(path.with_file_name(&name))
        .unwrap_or_else(|e| panic!("{}: no ground truth {name}: {e}", path.display()))
}

fn annotated(path: &Path) -> BTreeSet<String> {
    annotated_field(path, "query_id")
}

/// One field of every annotation of the trace at `path`.
fn annotated_field(path: &Path, field: &str) -> BTreeSet<String> {
    let v: serde_json::Value = serde_json::from_slice(&sidecar_of(path)).unwrap();
    v["annotations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a[field].as_str().unwrap().to_owned())
        .collect()
}

/// Compressed traces are stored (`<c>.jsonl.gz`) with their sidecar named from the uncompressed
/// name (`<c>.annotations.json`), which `memtrace eval` and the sidecar lookup find.
#[test]
fn lab_traces_are_compressed_with_plain_sidecars() {
    for (group, conv, path) in corpus() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(name, format!("{conv}.jsonl.gz"), "{group}");
        assert_eq!(
            sidecar::sidecar_name(&name),
            format!("{conv}.annotations.json")
        );
        assert!(path
            .with_file_name(format!("{conv}.annotations.json"))
            .is_file());
    }
}

fn load_trace(path: &Path) -> Trace {
    let bytes = std::fs::read(path).unwrap();
    load(&bytes, LoadOptions::default())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .trace
}

#[test]
fn every_lab_trace_loads_with_its_ground_truth() {
    let files = corpus();
    let groups: BTreeSet<&str> = files.iter().map(|(g, _, _)| g.as_str()).collect();
    for lib in LIBRARIES {
        assert!(
            groups.iter().any(|g| g.split('/').next() == Some(lib)),
            "{lib}: missing from the corpus"
        );
    }
    for (group, _, _) in HELD_OUT_FLOOR {
        assert!(groups.contains(group), "{group}: missing from the corpus");
    }
    for group in groups {
        let convs: BTreeSet<&str> = files
            .iter()
            .filter(|(g, _, _)| g == group)
            .map(|(_, c, _)| c.as_str())
            .collect();
        for c in TUNING.iter().chain(HELD_OUT.iter()) {
            assert!(
                convs.contains(c),
                "{group}: conversation {c} missing from the corpus"
            );
        }
    }
    let mut total = 0;
    for (group, conv, path) in &files {
        let mut t = load_trace(path);
        let n = sidecar::attach(&mut t, &sidecar_of(path))
            .unwrap_or_else(|e| panic!("{group} {conv}: ground truth does not fit: {e}"));
        assert_eq!(
            t.cases.len(),
            n,
            "{group} {conv}: every annotation is a case"
        );
        assert!(t.ops.len() > 20, "{group} {conv}: only {} ops", t.ops.len());
        total += n;
    }
    assert!(total >= 20, "only {total} injected failures in the corpus");
}

/// Every injected failure is found with no user rule, and nothing else: the question is a
/// user's CHAIN span with its own name, the judge an unnamed `ChatCompletion`, both recognized by
/// their data flow, for every library (mem0ai 30 of 30, langmem 18 of 18, graphiti 19 of 19;
/// none before structural detection).
#[test]
fn every_injected_failure_is_found_without_a_rule() {
    for (group, conv, path) in corpus() {
        let found: BTreeSet<String> = load_trace(&path)
            .detect(&[], &[])
            .unwrap()
            .cases
            .iter()
            .map(|c| c.query_id.clone())
            .collect();
        assert_eq!(found, annotated(&path), "{group} {conv}: detected failures");
    }
}

/// The lab is deterministic: mem0ai's three tracers, each in a process of its own, hold the same
/// failures (same questions) in every conversation; only the tracing differs.
#[test]
fn mem0ai_s_three_tracers_hold_the_same_failures() {
    let files = corpus();
    let of = |group: &str, conv: &str| {
        let (_, _, path) = (files.iter())
            .find(|(g, c, _)| g == group && c == conv)
            .unwrap_or_else(|| panic!("{group} {conv}: missing"));
        annotated_field(path, "query")
    };
    for conv in TUNING.iter().chain(HELD_OUT.iter()) {
        let oi = of("mem0ai/openinference", conv);
        for group in ["mem0ai/genai", "mem0ai/openllmetry"] {
            assert_eq!(
                of(group, conv),
                oi,
                "{group} {conv}: other failures than OpenInference's"
            );
        }
    }
}

/// The libraries whose model decides add / update / delete hold the expected update and deletion
/// failures (the lab's `update` and `deletion` faults: an UPDATE writing a wrong value or another
/// fact over a memory, a DELETE of a memory still true), each annotated on a model call of its
/// library that listed that memory as existing.
#[test]
fn the_deciding_libraries_hold_update_and_deletion_cases() {
    let files = corpus();
    for (group, updates, deletions) in DECIDING {
        let mut by: BTreeMap<String, usize> = BTreeMap::new();
        for (_, _, path) in files.iter().filter(|(g, _, _)| g == group) {
            let v: serde_json::Value = serde_json::from_slice(&sidecar_of(path)).unwrap();
            for a in v["annotations"].as_array().unwrap() {
                *by.entry(a["final_error_type"].as_str().unwrap().to_owned())
                    .or_default() += 1;
            }
        }
        println!("{group}: cases by error type {by:?}");
        assert_eq!(
            by.get("UpdateError").copied().unwrap_or(0),
            updates,
            "{group}: UpdateError cases"
        );
        assert_eq!(
            by.get("DeletionError").copied().unwrap_or(0),
            deletions,
            "{group}: DeletionError cases"
        );
        assert!(updates > 0 && deletions > 0, "{group}: no decision faults");
    }
}

/// `group/split → (cases, op-id right, type right)` of info-flow given the ground truth cases,
/// with or without the annotations' evidence ids (a user's trace has none).
/// Per `library/tracer split`: cases, op-id right, type right, confident verdicts, of them right.
type Counts = (usize, usize, usize, usize, usize);

fn infoflow_by_split(with_evidence: bool) -> BTreeMap<String, Counts> {
    let method = memtrace::attribution::InfoFlow::default();
    let mut out: BTreeMap<String, Counts> = BTreeMap::new();
    // The deciding libraries' figures per annotated error type too (printed only).
    let mut by_type: BTreeMap<String, (usize, usize, usize)> = BTreeMap::new();
    for (group, conv, path) in corpus() {
        let split = if TUNING.contains(&conv.as_str()) {
            "tuning"
        } else {
            assert!(HELD_OUT.contains(&conv.as_str()), "{conv}: in no split");
            "held-out"
        };
        let mut t = load_trace(&path);
        sidecar::attach(&mut t, &sidecar_of(&path)).unwrap();
        if !with_evidence {
            for c in &mut t.cases {
                c.evidence_ids.clear();
            }
        }
        let e = out.entry(format!("{group} {split}")).or_default();
        for c in &t.cases {
            let a = c.annotation.as_ref().expect("annotated");
            let got = method.attribute(&t, c).ok();
            let op = got.as_ref().is_some_and(|g| g.op_id == a.op_id);
            let ty = got.as_ref().is_some_and(|g| g.error_type == a.error_type);
            e.0 += 1;
            let sure = got
                .as_ref()
                .is_some_and(memtrace::attribution::Attribution::is_confident);
            if let Some(g) = &got {
                textless::not_blamed(&t, g, &format!("{group} {conv}"));
            }
            e.1 += usize::from(op);
            e.2 += usize::from(ty);
            e.3 += usize::from(sure);
            e.4 += usize::from(sure && op);
            if DECIDING.iter().any(|(g, _, _)| *g == group) {
                let k = format!("{group} {split} {:?}", a.error_type);
                let d = by_type.entry(k).or_default();
                d.0 += 1;
                d.1 += usize::from(op);
                d.2 += usize::from(ty);
            }
        }
    }
    let ids = if with_evidence {
        "with evidence ids"
    } else {
        "without evidence ids"
    };
    for (k, (n, op, ty, sure, sure_op)) in &out {
        println!(
            "{k} ({ids}): {n} cases, op-id {:.3}, type {:.3}; confident {sure}, op-id right {sure_op}",
            *op as f64 / *n as f64,
            *ty as f64 / *n as f64
        );
    }
    for (k, (n, op, ty)) in &by_type {
        println!("{k} ({ids}): {n} cases, op-id right {op}, type right {ty}");
    }
    out
}

/// Runs info-flow on every ground-truth case (it must not panic) and prints the figures
/// (`cargo test --test lab_corpus -- --nocapture`).
#[test]
fn infoflow_runs_on_every_lab_case() {
    let without = infoflow_by_split(false);
    for (group, floor, of) in HELD_OUT_FLOOR_WITHOUT_IDS {
        let (n, op, ..) = without
            .get(&format!("{group} held-out"))
            .unwrap_or_else(|| panic!("{group}: no held-out cases"));
        assert!(
            *op * of >= floor * *n,
            "{group} held-out without evidence ids: op-id {op} of {n}, below the {floor}/{of} floor"
        );
    }
    // Confident verdicts (confidence ≥ 0.8) are right ≥ 90 % of the time, held out.
    let (sure, right) = without
        .iter()
        .filter(|(k, _)| k.ends_with("held-out"))
        .fold((0, 0), |(s, r), (_, c)| (s + c.3, r + c.4));
    println!("held-out without evidence ids: {right} of {sure} confident verdicts right");
    assert!(
        sure >= 30 && right * 10 >= sure * 9,
        "{right} of {sure} confident verdicts right"
    );
    let by = infoflow_by_split(true);
    for (k, (n, ..)) in &by {
        assert!(*n > 0, "{k}: no cases");
    }
    assert!(by.keys().any(|k| k.ends_with("held-out")));
    assert!(by.keys().any(|k| k.ends_with("tuning")));
    for (group, floor, of) in HELD_OUT_FLOOR {
        let (n, op, ..) = by
            .get(&format!("{group} held-out"))
            .unwrap_or_else(|| panic!("{group}: no held-out cases"));
        assert!(
            *op * of >= floor * *n,
            "{group} held-out: op-id {op} of {n}, below the {floor}/{of} floor"
        );
    }
}

/// The target on the held-out half (op-id ≥ 0.90, type ≥ 0.95). Measured on first run
/// (given the ground-truth cases) — see tests/data/lab/README.md: mem0ai/openinference tuning 14
/// cases op-id 0.000 / type 0.000, held-out 19 cases 0.158 / 0.158; langmem/openinference tuning
/// 10 cases 0.200 / 0.400, held-out 12 cases 0.333 / 0.333.
#[test]
#[ignore = "not met yet: mem0ai held-out op-id 0.889, type 0.944 (each tracer); langmem 0.900, 0.900 (graphiti 1.000) — #38"]
fn infoflow_meets_the_target_on_held_out() {
    for (k, (n, op, ty, ..)) in infoflow_by_split(false) {
        if k.ends_with("held-out") {
            let (op, ty) = (op as f64 / n as f64, ty as f64 / n as f64);
            assert!(op >= 0.90 && ty >= 0.95, "{k}: op-id {op:.3}, type {ty:.3}");
        }
    }
}

/// One LLM client makes mem0ai's extraction, answer and judge calls, so they share one op name
/// (`ChatCompletion`). The extraction call whose reply was faulted (tuning conversation 26) is
/// still an extraction: it reads no question, so what it reads and writes decides its role, not
/// the role of the judge calls of its name.
#[test]
fn an_extraction_call_sharing_its_name_with_the_judge_stays_an_extraction() {
    use memtrace::attribution::{OpRole, RoleConfig, Roles};
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/lab/mem0ai/openinference/26.jsonl.gz");
    let mut t = load_trace(&path);
    sidecar::attach(&mut t, &sidecar_of(&path)).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&sidecar_of(&path)).unwrap();
    let faulted: Vec<&str> = v["annotations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["final_error_type"] == "ExtractionError")
        .map(|a| a["final_op_id"].as_str().unwrap())
        .collect();
    assert!(!faulted.is_empty(), "26 has extraction faults");
    let roles = Roles::infer(&t, &RoleConfig::default());
    let judges = (0..t.ops.len() as u32)
        .map(memtrace::model::OpIx)
        .filter(|&o| roles.role(o) == OpRole::Judge)
        .collect::<Vec<_>>();
    for id in faulted {
        let op = t.op_by_id(id).unwrap();
        assert!(
            judges.iter().any(|&j| t.op(j).op_name == t.op(op).op_name),
            "the judge calls share the name {}",
            t.op(op).op_name
        );
        assert_eq!(roles.role(op), OpRole::Extraction, "{id}");
    }
}

/// The LoCoMo turns each injected failure's question rests on (`lab_faults[].evidence`, dia ids),
/// as `question → turn texts`.
fn evidence_turns(path: &Path, conv: &str) -> BTreeMap<String, Vec<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/locomo");
    let locomo: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root.join(format!("{conv}.json"))).unwrap()).unwrap();
    let mut by_id = BTreeMap::new();
    for (k, v) in locomo.as_object().unwrap() {
        if k.starts_with("session_") && v.is_array() {
            for turn in v.as_array().unwrap() {
                by_id.insert(
                    turn["dia_id"].as_str().unwrap().to_owned(),
                    turn["text"].as_str().unwrap().to_owned(),
                );
            }
        }
    }
    let side: serde_json::Value = serde_json::from_slice(&sidecar_of(path)).unwrap();
    side["lab_faults"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let turns = f["evidence"].as_array().unwrap().iter();
            let texts = turns.filter_map(|d| by_id.get(d.as_str().unwrap()).cloned());
            (f["question"].as_str().unwrap().to_owned(), texts.collect())
        })
        .collect()
}

fn words(text: &str) -> String {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Start-point recall@8 over turns, without evidence ids: the share of the questions' evidence
/// turns (LoCoMo's dia ids) among the eight turns `case_turns` ranks first, found inside the
/// prompts and state spans the libraries wrote (a turn matches when its first twelve words are
/// there). Printed per library × tracer; the held-out recall must stay at its floor.
#[test]
fn evidence_turns_are_found_without_evidence_ids() {
    use memtrace::attribution::{InfoFlow, RoleConfig, Roles};
    let mut by: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for (group, conv, path) in corpus() {
        let split = if TUNING.contains(&conv.as_str()) {
            "tuning"
        } else {
            "held-out"
        };
        let mut t = load_trace(&path);
        sidecar::attach(&mut t, &sidecar_of(&path)).unwrap();
        let gold = evidence_turns(&path, &conv);
        let roles = Roles::infer(&t, &RoleConfig::default());
        let e = by.entry(format!("{group} {split}")).or_default();
        for c in &mut t.cases.clone() {
            c.evidence_ids.clear();
            let turns = InfoFlow::default().case_turns(&t, &roles, c).unwrap();
            let top: Vec<String> = turns.iter().take(8).map(|x| words(&x.text)).collect();
            for g in gold
                .get(&c.query)
                .unwrap_or_else(|| panic!("{group} {conv}: {}", c.query))
            {
                let g = words(g);
                let head = g.split(' ').take(12).collect::<Vec<_>>().join(" ");
                e.0 += 1;
                e.1 += usize::from(top.iter().any(|x| x.contains(&head)));
            }
        }
    }
    for (k, (n, hit)) in &by {
        println!(
            "{k} (without evidence ids): turn recall@8 {:.3} ({hit} of {n})",
            *hit as f64 / *n as f64
        );
    }
    for (k, (n, hit)) in &by {
        if k.ends_with("held-out") {
            assert!(
                *hit * 10 >= *n * TURN_RECALL_FLOOR_TENTHS,
                "{k}: turn recall@8 {hit} of {n}"
            );
        }
    }
}

/// Held-out turn recall@8 floor, in tenths.
const TURN_RECALL_FLOOR_TENTHS: usize = 9;
