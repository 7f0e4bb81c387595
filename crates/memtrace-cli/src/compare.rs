//! `memtrace compare A B`: two runs side by side. A run is a `memtrace-run` file, every
//! question's verdict (the closed loop writes one per round: `OUT/rounds/round-<r>.json`);
//! questions are aligned by id and counted as fixed, broken, still failing and still right.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use memtrace::optimize::compare::{compare, Change, RunFile, Verdict};

#[derive(clap::Args)]
pub struct Args {
    /// The run before (a `memtrace-run` file, e.g. optimize-out/rounds/round-0.json).
    a: PathBuf,
    /// The run after.
    b: PathBuf,
    /// Print the comparison as JSON.
    #[arg(long)]
    json: bool,
    /// Also list the questions still right.
    #[arg(long)]
    all: bool,
}

fn read(path: &Path) -> anyhow::Result<RunFile> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    RunFile::parse(&bytes).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

fn side(v: Option<&Verdict>) -> String {
    let Some(v) = v else {
        return "(not in this run)".into();
    };
    let mut out = format!(
        "{} {:?}",
        if v.correct { "right" } else { "wrong" },
        v.prediction.chars().take(80).collect::<String>()
    );
    if let Some(t) = &v.error_type {
        let _ = write!(out, " [{t}");
        if let Some(op) = &v.op_name {
            let _ = write!(out, " at {op}");
        }
        out.push(']');
    }
    out
}

pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let (a, b) = (read(&args.a)?, read(&args.b)?);
    let c = compare(&a.verdicts, &b.verdicts);
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "a": a.name, "b": b.name, "counts": c.counts, "by_type": c.by_type, "rows": c.rows,
            }))?
        );
        return Ok(ExitCode::SUCCESS);
    }
    println!("A: {} ({} questions)", a.name, a.verdicts.len());
    println!("B: {} ({} questions)", b.name, b.verdicts.len());
    println!("{}", c.summary());
    if !c.by_type.is_empty() {
        let types: Vec<String> = c
            .by_type
            .iter()
            .map(|(t, (x, y))| format!("{t} {x} → {y}"))
            .collect();
        println!("wrong answers by type (A → B): {}", types.join(", "));
    }
    for row in &c.rows {
        if row.change == Change::StillRight && !args.all {
            continue;
        }
        let q = row
            .a
            .as_ref()
            .or(row.b.as_ref())
            .map_or("", |v| v.question.as_str());
        println!("\n{:<13} {} {q}", row.change.label(), row.question_id);
        println!("  A: {}", side(row.a.as_ref()));
        println!("  B: {}", side(row.b.as_ref()));
    }
    Ok(ExitCode::SUCCESS)
}
