//! Info-flow on random pipeline shapes (`bench gen --system random`, issue 39).
//!
//! The split was fixed before any result was looked at:
//! - tuning: shape seeds 1000–1099 over LoCoMo conversations 26, 30, 41;
//! - held-out: shape seeds 2000–2099 over LoCoMo conversations 42, 43, 47, 49.
//!
//! Miss patterns may be read on tuning seeds only. Each case is also attributed with its
//! evidence ids dropped (the attributor finds the gold-bearing messages itself).
//! The big run is `cargo test --release --test random_shapes -- --ignored --nocapture`.
//! Reads `tests/data/locomo/` and fails when it is absent.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed expectation should panic

mod common {
    include!("common/locomo.rs");
}

use std::collections::BTreeMap;
use std::ops::Range;

use memtrace::attribution::{InfoFlow, RoleConfig, Roles};
use memtrace::format::obfuscate::obfuscate;
use memtrace::format::{load, LoadOptions};
use memtrace_memsys::random_shape::{generate, Shape};
use memtrace_memsys::Conversation;

const TUNING: Range<u64> = 1000..1100;
const HELD_OUT: Range<u64> = 2000..2100;
const TUNING_CONVERSATIONS: [usize; 3] = [26, 30, 41];
const HELD_OUT_CONVERSATIONS: [usize; 4] = [42, 43, 47, 49];

/// Held-out floors, at issue 39's targets. First measurement (before any attribution change):
/// held-out 546 cases, op-id 0.273 type 0.352, without evidence ids op-id 0.057. After the
/// structural rules (memory read by the question's pipeline, judge, retrieval stage, drafts,
/// deletions, storing ops, message kinds): tuning 562 cases op-id 0.920 type 0.956, without
/// evidence ids 0.845; held-out 546 cases op-id 0.945 type 0.969, without evidence ids 0.903.
const FLOOR_OP: f64 = 0.90;
const FLOOR_TYPE: f64 = 0.95;
const FLOOR_OP_NO_EVIDENCE: f64 = 0.85;
/// Renamed (`memtrace obfuscate`) traces score within 2 points of the named ones.
const OBFUSCATED_GAP: f64 = 0.02;
/// Verdicts this confident are right this often on held-out shapes.
const SURE: f64 = 0.8;
const SURE_RIGHT: f64 = 0.95;

fn conversations(which: &[usize]) -> Vec<Conversation> {
    let all = common::conversations(&common::locomo_dir());
    let number = |c: &Conversation| {
        memtrace_memsys::locomo::LOCOMO10
            .get(c.index.wrapping_sub(1))
            .copied()
    };
    let picked: Vec<Conversation> = all
        .into_iter()
        .filter(|c| number(c).is_some_and(|n| which.contains(&(n as usize))))
        .collect();
    assert_eq!(picked.len(), which.len(), "LoCoMo conversations {which:?}");
    picked
}

#[derive(Default)]
struct Tally {
    cases: usize,
    op: usize,
    ty: usize,
    op_no_ev: usize,
    ty_no_ev: usize,
    /// Cases of the five memory error types (what `memtrace eval` scores) and their op-id hits.
    memory: usize,
    memory_op: usize,
    /// (expected kind, type) → (blamed kind, type) → count, with evidence.
    misses: BTreeMap<String, BTreeMap<String, usize>>,
    /// Op-id hits on the file passed through `obfuscate` (names, categories, keys renamed).
    op_obfuscated: usize,
    /// Confidence bin (tenths) → (verdicts, right op and type).
    bins: BTreeMap<u32, (usize, usize)>,
}

/// The shape's op kind of an op name `<project>.<kind token>`.
fn kind_of(shape: &Shape, op_name: &str) -> String {
    let token = op_name.rsplit('.').next().unwrap_or(op_name);
    for kind in [
        "buffer", "boundary", "batch", "summary", "writer", "maintain", "search", "second",
        "answer", "reflect", "judge",
    ] {
        if shape.names.token(kind) == token {
            return kind.to_owned();
        }
    }
    format!("?{op_name}")
}

fn measure(seeds: Range<u64>, convs: &[Conversation]) -> Tally {
    let infoflow = InfoFlow::default();
    let mut t = Tally::default();
    for seed in seeds {
        let shape = Shape::draw(seed);
        let report = generate(convs, seed).expect("generate");
        for f in &report.files {
            let renamed = obfuscate(&f.bytes, seed).expect("obfuscate").bytes;
            let hidden = load(&renamed, LoadOptions::default()).unwrap().trace;
            let hidden_roles = Roles::infer(&hidden, &RoleConfig::default());
            for c in &hidden.cases {
                let want = c.annotation.as_ref().expect("annotated");
                if let Ok(a) = infoflow.attribute_with(&hidden, &hidden_roles, c) {
                    t.op_obfuscated += usize::from(a.op_id == want.op_id);
                }
            }
            let trace = load(&f.bytes, LoadOptions::default()).unwrap().trace;
            let roles = Roles::infer(&trace, &RoleConfig::default());
            for c in &trace.cases {
                let want = c.annotation.as_ref().expect("annotated");
                t.cases += 1;
                // A case info-flow cannot attribute counts as a miss ("none").
                let (got_op, got_ty) = match infoflow.attribute_with(&trace, &roles, c) {
                    Ok(a) => (a.op_id, a.error_type.to_string()),
                    Err(_) => (String::new(), "unattributed".to_owned()),
                };
                t.op += usize::from(got_op == want.op_id);
                t.ty += usize::from(got_ty == want.error_type.to_string());
                if let Ok(a) = infoflow.attribute_with(&trace, &roles, c) {
                    #[allow(clippy::cast_sign_loss, clippy::cast_possible_truncation)]
                    // clamped to 0..=10
                    let bin = (a.confidence * 10.0).floor().clamp(0.0, 10.0) as u32;
                    let e = t.bins.entry(bin).or_default();
                    e.0 += 1;
                    e.1 +=
                        usize::from(got_op == want.op_id && got_ty == want.error_type.to_string());
                }
                if want.error_type.is_memory_error() {
                    t.memory += 1;
                    t.memory_op += usize::from(got_op == want.op_id);
                }
                if got_op != want.op_id || got_ty != want.error_type.to_string() {
                    let name = |id: &str| {
                        trace
                            .op_by_id(id)
                            .map_or("none".to_owned(), |o| kind_of(&shape, &trace.op(o).op_name))
                    };
                    let key = format!("{} {}", name(&want.op_id), want.error_type);
                    let blamed = format!("{} {got_ty}", name(&got_op));
                    *t.misses.entry(key).or_default().entry(blamed).or_insert(0) += 1;
                }
                let mut bare = c.clone();
                bare.evidence_ids.clear();
                if let Ok(got) = infoflow.attribute_with(&trace, &roles, &bare) {
                    t.op_no_ev += usize::from(got.op_id == want.op_id);
                    t.ty_no_ev += usize::from(got.error_type == want.error_type);
                }
            }
        }
    }
    t
}

fn share(n: usize, d: usize) -> f64 {
    n as f64 / d.max(1) as f64
}

fn print(label: &str, t: &Tally) {
    println!(
        "{label}: {} cases; with evidence ids op-id {:.3} type {:.3}; without op-id {:.3} type {:.3}; \
         memory errors only ({} cases, judge errors out as in `memtrace eval`) op-id {:.3}",
        t.cases,
        share(t.op, t.cases),
        share(t.ty, t.cases),
        share(t.op_no_ev, t.cases),
        share(t.ty_no_ev, t.cases),
        t.memory,
        share(t.memory_op, t.memory)
    );
    println!(
        "  obfuscated (names, categories and keys renamed): op-id {:.3}",
        share(t.op_obfuscated, t.cases)
    );
    println!("  reliability (confidence bin: verdicts, right op and type):");
    for (bin, (n, right)) in &t.bins {
        println!(
            "    {:.1}-{:.1}: {n:>4}  {:.3}",
            f64::from(*bin) / 10.0,
            f64::from(*bin + 1) / 10.0,
            share(*right, *n)
        );
    }
}

/// Of the verdicts with confidence ≥ `SURE`: how many, and how many are right.
fn sure(t: &Tally) -> (usize, usize) {
    t.bins
        .iter()
        .filter(|(bin, _)| f64::from(**bin) / 10.0 >= SURE)
        .fold((0, 0), |acc, (_, (n, r))| (acc.0 + n, acc.1 + r))
}

/// A few tuning seeds: every file loads, its one failure is found with no user rule, and the
/// seeds together give every error type a shape can have.
#[test]
fn random_shapes_generate_valid_files_whose_failures_are_found_without_a_rule() {
    let convs = conversations(&TUNING_CONVERSATIONS);
    let mut kinds = std::collections::BTreeSet::new();
    for seed in TUNING.start..TUNING.start + 6 {
        let shape = Shape::draw(seed);
        let report = generate(&convs, seed).expect("generate");
        assert!(
            !report.files.is_empty(),
            "seed {seed} ({}) wrote no file",
            shape.describe()
        );
        for f in &report.files {
            let trace = load(&f.bytes, LoadOptions::default()).unwrap().trace;
            assert_eq!(trace.cases.len(), 1, "{}", f.name);
            let d = trace.detect(&[], &[]).unwrap();
            let found: Vec<&str> = d.cases.iter().map(|c| c.query_id.as_str()).collect();
            assert_eq!(
                found,
                vec![trace.cases[0].query_id.as_str()],
                "{} ({})",
                f.name,
                shape.describe()
            );
            kinds.insert(f.cases[0].0);
        }
    }
    assert!(kinds.len() >= 5, "error types drawn: {kinds:?}");
}

#[test]
#[ignore = "slow: run with --release -- --ignored --nocapture"]
fn random_shapes_accuracy_tuning_and_held_out() {
    let tuning = measure(TUNING, &conversations(&TUNING_CONVERSATIONS));
    print("tuning seeds 1000-1099", &tuning);
    println!("tuning misses (expected op kind, type -> blamed op kind, type: count):");
    let mut rows: Vec<(usize, String)> = tuning
        .misses
        .iter()
        .flat_map(|(k, m)| m.iter().map(move |(b, n)| (*n, format!("{k} -> {b}"))))
        .collect();
    rows.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    for (n, row) in rows.iter().take(15) {
        println!("  {n:>3}  {row}");
    }
    let held = measure(HELD_OUT, &conversations(&HELD_OUT_CONVERSATIONS));
    print("held-out seeds 2000-2099", &held);
    assert!(held.cases >= 300, "only {} held-out cases", held.cases);
    assert!(
        share(held.op, held.cases) >= FLOOR_OP,
        "held-out op-id below {FLOOR_OP}"
    );
    assert!(
        share(held.ty, held.cases) >= FLOOR_TYPE,
        "held-out type below {FLOOR_TYPE}"
    );
    assert!(
        share(held.op_no_ev, held.cases) >= FLOOR_OP_NO_EVIDENCE,
        "held-out op-id without evidence ids below {FLOOR_OP_NO_EVIDENCE}"
    );
    assert!(
        share(held.op, held.cases) - share(held.op_obfuscated, held.cases) <= OBFUSCATED_GAP,
        "renamed traces lose more than {OBFUSCATED_GAP}"
    );
    let (n, right) = sure(&held);
    println!(
        "held-out verdicts with confidence >= {SURE}: {n}, right {:.3}",
        share(right, n)
    );
    assert!(
        share(right, n) >= SURE_RIGHT,
        "confidence >= {SURE} right only {:.3}",
        share(right, n)
    );
}

/// One tuning case per structural rule of issue 39 (each needs its rule; found on tuning
/// seeds): the verdict names the annotated op and type.
#[test]
fn each_structural_rule_is_right_on_a_tuning_shape_that_needs_it() {
    let convs = conversations(&TUNING_CONVERSATIONS);
    let cases: [(u64, &str, &str); 9] = [
        (
            1000,
            "LLMAsAJudgeError",
            "the prediction states the gold: the judge erred",
        ),
        (
            1000,
            "ResponseError",
            "a draft a reflection step revised lost the answer",
        ),
        (
            1001,
            "RetrievalError",
            "the search stage never returned the unit",
        ),
        (
            1002,
            "ResponseError",
            "a reranker's input hits are not memory",
        ),
        (
            1001,
            "DeletionError",
            "a link-only marker names the unit's id",
        ),
        (1007, "DeletionError", "a list version without the item"),
        (1002, "UpdateError", "an edit of a raw unit is an update"),
        (
            1002,
            "ExtractionError",
            "a boundary step that only decides stores nothing",
        ),
        (
            1009,
            "DeletionError",
            "a record emptied to one-word fields is a tombstone",
        ),
    ];
    let infoflow = InfoFlow::default();
    for (seed, kind, rule) in cases {
        let report = generate(&convs, seed).expect("generate");
        let f = report
            .files
            .iter()
            .find(|f| f.name.contains(&format!("_{kind}_")))
            .unwrap_or_else(|| panic!("seed {seed} wrote no {kind} file"));
        let trace = load(&f.bytes, LoadOptions::default()).unwrap().trace;
        let roles = Roles::infer(&trace, &RoleConfig::default());
        let c = &trace.cases[0];
        let want = c.annotation.as_ref().expect("annotated");
        let got = infoflow
            .attribute_with(&trace, &roles, c)
            .expect("a verdict");
        assert_eq!(
            (got.op_id.as_str(), got.error_type),
            (want.op_id.as_str(), want.error_type),
            "seed {seed} {kind} ({rule}): {}",
            got.reason
        );
    }
}

/// Without evidence ids, the messages are found by structure (the unproduced inputs upstream
/// of memory writes), whatever their category is called.
#[test]
fn without_evidence_ids_the_messages_are_found_by_structure() {
    let convs = conversations(&TUNING_CONVERSATIONS);
    let infoflow = InfoFlow::default();
    let (mut n, mut right) = (0, 0);
    let seeds = [1001, 1002, 1004, 1005];
    let named: Vec<String> = seeds
        .iter()
        .map(|&s| Shape::draw(s).names.cat("message").to_owned())
        .collect();
    assert!(
        named.iter().any(|c| c != "message"),
        "categories {named:?}: none hides the messages"
    );
    for seed in seeds {
        for f in &generate(&convs, seed).expect("generate").files {
            let trace = load(&f.bytes, LoadOptions::default()).unwrap().trace;
            let roles = Roles::infer(&trace, &RoleConfig::default());
            let mut bare = trace.cases[0].clone();
            let want = bare.annotation.clone().expect("annotated");
            bare.evidence_ids.clear();
            n += 1;
            if let Ok(got) = infoflow.attribute_with(&trace, &roles, &bare) {
                right += usize::from(got.op_id == want.op_id);
            }
        }
    }
    assert!(
        right * 10 >= n * 8,
        "{right} of {n} right without evidence ids"
    );
}
