//! `scripts/bench`: where the time of one load goes. Times each stage of `format::load` on a
//! generated smartcomment trace (default 70,000 variables ≈ 130 MB, the size of
//! `scripts/bench --browser`), each against `serde_json::from_slice::<serde_json::Value>` of the
//! same bytes measured in the same run. Thread CPU time, median of 3.
//!
//! Usage: `bench_stages [NODES]`.

use cpu_time::ThreadTime;

use memtrace::algo::GraphIndex;
use memtrace::attribution::{RoleConfig, Roles};
use memtrace::format::{detect, limits, load, smartcomment, synth, validate, LoadOptions};
use memtrace::model::Flow;

/// Median thread CPU time of `f` over 3 runs, in ms, and its last result.
fn time<T>(mut f: impl FnMut() -> T) -> (f64, T) {
    let mut times = Vec::new();
    let mut out = None;
    for _ in 0..3 {
        drop(out.take());
        let t = ThreadTime::now();
        out = Some(f());
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    (times[1], out.unwrap_or_else(f))
}

fn main() {
    let nodes: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(70_000);
    let bytes = synth::bytes(&synth::Options { nodes, seed: 1 });
    let (base, _) = time(|| serde_json::from_slice::<serde_json::Value>(&bytes).ok());
    let mut rows: Vec<(&str, f64)> = Vec::new();
    let mut after: Vec<(&str, f64)> = Vec::new();
    let (t, _) = time(|| limits::check(&bytes, &limits::Limits::default()).is_ok());
    rows.push(("limits::check (size, depth, string length)", t));
    let (t, _) = time(|| detect(&bytes).ok());
    rows.push(("detect (format from the keys)", t));
    let (t, parts) = time(|| smartcomment::parse(&bytes));
    rows.push(("smartcomment::parse (bytes → records)", t));
    let Ok(mut parts) = parts else {
        eprintln!("bench_stages: the generated trace does not parse");
        std::process::exit(1);
    };
    let (t, _) = time(|| validate(&mut parts, false).is_ok());
    rows.push(("validate (computed fields, ids, references)", t));
    let mut trace = parts.into_trace();
    let (t, flow) = time(|| Flow::build(&trace));
    rows.push(("Flow::build (bipartite index)", t));
    trace.flow = flow.unwrap_or_default();
    let (t, _) = time(|| trace.detect(&[], &[]).map(|d| d.cases.len()));
    rows.push(("failure detection (no rules)", t));
    let (total, loaded) = time(|| load(&bytes, LoadOptions::default()));
    // After a load, not part of it: what the page builds next for its first story view, on the
    // loaded trace (its failures are the roles' anchors).
    let Ok(loaded) = loaded else {
        eprintln!("bench_stages: the generated trace does not load");
        std::process::exit(1);
    };
    let trace = loaded.trace;
    let (t, _) = time(|| GraphIndex::build(&trace).is_ok());
    after.push(("GraphIndex::build (story, slices)", t));
    let (t, _) = time(|| Roles::infer(&trace, &RoleConfig::default()));
    after.push(("Roles::infer (op roles)", t));
    let failures = trace.cases.len();

    println!(
        "{:.1} MB smartcomment, {nodes} generated variables, {failures} failures",
        bytes.len() as f64 / 1e6
    );
    println!();
    println!("| stage | time | ratio to serde_json::Value |");
    println!("|---|---|---|");
    for (name, t) in &rows {
        println!("| {name} | {t:.0} ms | {:.2}× |", t / base);
    }
    let sum: f64 = rows.iter().map(|r| r.1).sum();
    println!("| sum of stages | {sum:.0} ms | {:.2}× |", sum / base);
    println!(
        "| `format::load` whole | {total:.0} ms | {:.2}× |",
        total / base
    );
    for (name, t) in &after {
        println!("| after the load: {name} | {t:.0} ms | {:.2}× |", t / base);
    }
    println!("| baseline: `serde_json::from_slice::<Value>` | {base:.0} ms | 1.00× |");
}
