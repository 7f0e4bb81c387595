//! Decisive sets (issue #17) on the command line: `memtrace attribute FILE --decisive-set
//! [--budget N]` prints each failure's set and its replays; `memtrace eval DIR --method
//! decisive-set` scores the sets against the annotated ones (exact-set match, precision,
//! recall, median replays). Replays run the reference memory system's pipeline through the
//! simulated provider (a rule-based stand-in; other providers' answers are not in its layout).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use futures_executor::block_on;
use memtrace::attribution::{RoleConfig, Roles};
use memtrace::format::{load, LoadOptions};
use memtrace::model::FailureCase;
use memtrace::Trace;
use memtrace_memsys::decisive::{annotated_set, score_sets};
use memtrace_memsys::replay::{decisive_set, DecisiveSet};
use memtrace_memsys::simulated::SimulatedLlm;

/// Replays per case when `eval` runs the search.
pub const EVAL_BUDGET: usize = 64;

/// `--method` names that mean this search.
pub fn is_method(name: &str) -> bool {
    matches!(name, "decisive-set" | "all-causes")
}

/// The decisive set of `case` (simulated provider); a failed replay becomes an error line.
pub fn find(
    trace: &Trace,
    roles: &Roles,
    case: &FailureCase,
    budget: usize,
) -> anyhow::Result<DecisiveSet> {
    block_on(decisive_set(&SimulatedLlm, trace, roles, case, budget))
        .with_context(|| format!("the replay of {} failed", case.query_id))
}

/// Prints a set and its replays under a case's verdict.
pub fn print(set: &DecisiveSet) {
    let outcome = serde_json::to_value(set.outcome)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    println!("  decisive set {outcome}: {}", set.detail);
    for op in &set.ops {
        println!("    op  {op}");
    }
    for (i, r) in set.replays.iter().enumerate() {
        let what = if r.rescued { "rescued" } else { "not rescued" };
        let answer = r
            .answer
            .as_deref()
            .map(|a| format!(" — {a:.80}"))
            .unwrap_or_default();
        println!(
            "    replay {:>2}  repaired [{}]: {what}{answer}",
            i + 1,
            r.repaired.join(", ")
        );
    }
}

/// `eval --method decisive-set` over `files`: prints the set scores.
///
/// # Errors
/// An unreadable or invalid file, or a failed replay.
pub fn eval(
    files: &[PathBuf],
    limit: Option<usize>,
    json: bool,
    options: LoadOptions,
) -> anyhow::Result<ExitCode> {
    let mut pairs = Vec::new();
    let mut sizes = std::collections::BTreeMap::<usize, usize>::new();
    'files: for path in files {
        let bytes = crate::input::bytes(path, options.limits.max_file_bytes)?;
        let trace = load(&bytes, options)
            .with_context(|| path.display().to_string())?
            .trace;
        let roles = Roles::infer(&trace, &RoleConfig::default());
        for case in trace.cases.iter().filter(|c| c.annotation.is_some()) {
            if limit.is_some_and(|n| pairs.len() >= n) {
                break 'files;
            }
            let Some(want) = annotated_set(&trace, case) else {
                continue;
            };
            *sizes.entry(want.len()).or_insert(0) += 1;
            pairs.push((want, find(&trace, &roles, case, EVAL_BUDGET)?));
        }
    }
    let s = score_sets(&pairs);
    if json {
        println!("{}", serde_json::to_string(&s)?);
        return Ok(ExitCode::SUCCESS);
    }
    let sizes: Vec<String> = sizes.iter().map(|(k, n)| format!("{n} of {k}")).collect();
    println!(
        "decisive sets over {} annotated cases (sets: {})",
        s.cases,
        sizes.join(", ")
    );
    println!("  exact-set match  {:.3}", s.exact);
    println!("  set precision    {:.3}", s.precision);
    println!("  set recall       {:.3}", s.recall);
    println!(
        "  median replays   {:.1} per case (budget {EVAL_BUDGET})",
        s.median_replays
    );
    println!("  not replayable   {}", s.not_replayable);
    Ok(ExitCode::SUCCESS)
}
