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
use memtrace::format::{load, LoadOptions};
use memtrace::memsys::random_shape::{generate, Shape};
use memtrace::memsys::Conversation;

const TUNING: Range<u64> = 1000..1100;
const HELD_OUT: Range<u64> = 2000..2100;
const TUNING_CONVERSATIONS: [usize; 3] = [26, 30, 41];
const HELD_OUT_CONVERSATIONS: [usize; 4] = [42, 43, 47, 49];

/// Held-out floors: the first measurement (issue 39, before any attribution change) minus a
/// small margin. Measured: tuning 562 cases, op-id 0.215 type 0.327, without evidence ids
/// op-id 0.036 type 0.069; held-out 546 cases, op-id 0.273 type 0.352, without evidence ids
/// op-id 0.057 type 0.079; memory errors only (judge errors out): tuning op-id 0.262 of 462,
/// held-out 0.334 of 446.
const FLOOR_OP: f64 = 0.25;
const FLOOR_TYPE: f64 = 0.33;
const FLOOR_OP_NO_EVIDENCE: f64 = 0.04;

fn conversations(which: &[usize]) -> Vec<Conversation> {
    let all = common::conversations(&common::locomo_dir());
    let number = |c: &Conversation| {
        memtrace::memsys::locomo::LOCOMO10
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
}
