//! `memtrace compare A B`: two runs side by side. A run is a `memtrace-run` file, every
//! question's verdict (the closed loop writes one per round: `OUT/rounds/round-<r>.json`), or
//! any trace (each of its questions, failures attributed by info-flow); questions are aligned by
//! id (by text when two traces share no id) and counted as fixed, broken, still failing and
//! still right.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use memtrace::attribution::{RoleConfig, Roles};
use memtrace::optimize::compare::{compare, AnsweredQuestion, Change, RunFile};
use memtrace::optimize::trace_run::{align_by_text, run_of_trace};

use crate::rules::ReadArgs;

#[derive(clap::Args)]
pub struct Args {
    /// The run before: a `memtrace-run` file (e.g. optimize-out/rounds/round-0.json) or a trace
    /// in any readable format.
    a: PathBuf,
    /// The run after (a run file or a trace of the same conversations).
    b: PathBuf,
    /// Print the comparison as JSON.
    #[arg(long)]
    json: bool,
    /// Also list the questions still right.
    #[arg(long)]
    all: bool,
    #[command(flatten)]
    read: ReadArgs,
}

/// A run file as it is, or a trace as a run.
fn read(path: &Path, read: ReadArgs) -> anyhow::Result<RunFile> {
    let bytes = crate::input::bytes(path, read.size.max_file_bytes())?;
    if let Ok(run) = RunFile::parse(&bytes) {
        return Ok(run);
    }
    let name = path.display().to_string();
    let trace = crate::input::load_reporting(&bytes, read, &name)
        .with_context(|| {
            format!("{name}: not a run file (rounds/round-<r>.json of `memtrace optimize`) and not a readable trace")
        })?
        .trace;
    let roles = Roles::infer(&trace, &RoleConfig::default());
    Ok(run_of_trace(&name, &trace, &roles))
}

fn side(v: Option<&AnsweredQuestion>) -> String {
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
    let (mut a, mut b) = (read(&args.a, args.read)?, read(&args.b, args.read)?);
    align_by_text(&mut a, &mut b);
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
