//! Renaming is a no-op for attribution: every shipped family, as smartcomment and as OTLP, passed
//! through `memtrace obfuscate` (op, span, variable and category names, metadata keys and comments
//! replaced by stable tokens, values kept) scores within one point of the named trace, op-id and
//! type, on held-out seed 11 (issue 39). Reads `tests/data/locomo/` and fails when it is absent.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed expectation should panic

mod common {
    include!("common/locomo.rs");
}

use memtrace::attribution::InfoFlow;
use memtrace::format::obfuscate::obfuscate;
use memtrace::format::{load, sidecar, LoadOptions};
use memtrace_memsys::bench::{generate, BenchFile, BenchFormat, BenchOptions};
use memtrace_memsys::simulated::SimulatedLlm;
use memtrace_memsys::System;

const SEED: u64 = 11;

/// `(cases, op-id right, type right)` of info-flow on `bytes`, with the file's annotations.
fn score(bytes: &[u8], f: &BenchFile) -> (usize, usize, usize) {
    let mut t = load(bytes, LoadOptions::default()).unwrap().trace;
    if let Some(side) = &f.sidecar {
        sidecar::attach(&mut t, side).unwrap();
    }
    let method = InfoFlow::default();
    let (mut n, mut op, mut ty) = (0, 0, 0);
    for c in &t.cases {
        let want = c.annotation.as_ref().expect("annotated");
        n += 1;
        if let Ok(got) = method.attribute(&t, c) {
            op += usize::from(got.op_id == want.op_id);
            ty += usize::from(got.error_type == want.error_type);
        }
    }
    (n, op, ty)
}

fn check(system: System, format: BenchFormat) {
    let convs = common::conversations(&common::locomo_dir());
    let opts = BenchOptions {
        per_type: 20,
        seed: SEED,
        system,
        format,
        ..BenchOptions::default()
    };
    let files = futures_executor::block_on(generate(&SimulatedLlm, &convs, &opts))
        .expect("generate")
        .files;
    let (mut named, mut renamed) = ((0, 0, 0), (0, 0, 0));
    for f in &files {
        let hidden = obfuscate(&f.bytes, SEED).expect("obfuscate").bytes;
        assert_ne!(hidden, f.bytes, "{}: obfuscate changed nothing", f.name);
        let a = score(&f.bytes, f);
        let b = score(&hidden, f);
        named = (named.0 + a.0, named.1 + a.1, named.2 + a.2);
        renamed = (renamed.0 + b.0, renamed.1 + b.1, renamed.2 + b.2);
    }
    let share = |k: usize, n: usize| k as f64 / n as f64;
    let (n, m) = (named.0, renamed.0);
    println!(
        "{system:?} {format:?}: named op-id {:.3} type {:.3}; renamed op-id {:.3} type {:.3} ({n} cases)",
        share(named.1, n),
        share(named.2, n),
        share(renamed.1, m),
        share(renamed.2, m)
    );
    assert!(n >= 40, "{system:?} {format:?}: only {n} cases");
    assert_eq!(n, m, "{system:?} {format:?}: renamed trace lost cases");
    assert!(
        (share(named.1, n) - share(renamed.1, n)).abs() <= 0.01
            && (share(named.2, n) - share(renamed.2, n)).abs() <= 0.01,
        "{system:?} {format:?}: renaming moved the score by more than a point"
    );
}

#[test]
fn renamed_families_score_as_named_smartcomment() {
    for system in [System::Mem0, System::NaiveRag, System::AMem] {
        check(system, BenchFormat::Smartcomment);
    }
}

/// EverMemOS smartcomment, renamed: a prompt is found by structure (`Trace::is_prompt`), not by
/// its category, so the buffer's readers are not mistaken for extraction.
#[test]
fn renamed_evermemos_smartcomment_scores_as_named() {
    check(System::EverMemOs, BenchFormat::Smartcomment);
}

#[test]
fn renamed_families_score_as_named_otlp() {
    for system in [
        System::Mem0,
        System::NaiveRag,
        System::EverMemOs,
        System::AMem,
    ] {
        check(system, BenchFormat::Otlp);
    }
}
