//! `memtrace attribute FILE [--case QUERY_ID] --method M [--json]`: the verdict per failed case.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context};
use memtrace::attribution::{Attribution, InfoFlow};
use memtrace::format::{load, LoadOptions};
use memtrace::Trace;

#[derive(clap::Args)]
pub struct Args {
    /// A trace file.
    file: PathBuf,
    /// Only this case (its query id, e.g. `query:locomo-qa-1-7@1`).
    #[arg(long)]
    case: Option<String>,
    /// Attribution method: infoflow (no LLM).
    #[arg(long, default_value = "infoflow")]
    method: String,
    /// One JSON object per case.
    #[arg(long)]
    json: bool,
}

/// Attributes the cases of a loaded trace with `method`; `None` entries are errors.
pub fn attribute_cases(
    trace: &Trace,
    method: &str,
    only: Option<&str>,
) -> anyhow::Result<Vec<(memtrace::model::FailureCase, Result<Attribution, String>)>> {
    if method != "infoflow" {
        bail!("unknown method {method:?}; available: infoflow");
    }
    let attributor = InfoFlow::default();
    let mut out = Vec::new();
    for case in trace
        .cases
        .iter()
        .filter(|c| only.is_none_or(|q| c.query_id == q))
    {
        let started = Instant::now();
        let result = attributor.attribute(trace, case).map(|mut a| {
            a.cost.wall_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
            a
        });
        out.push((case.clone(), result.map_err(|e| e.to_string())));
    }
    Ok(out)
}

pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let bytes = std::fs::read(&args.file)
        .with_context(|| format!("cannot read {}", args.file.display()))?;
    let trace = load(&bytes, LoadOptions::default())
        .with_context(|| args.file.display().to_string())?
        .trace;
    let results = attribute_cases(&trace, &args.method, args.case.as_deref())?;
    if results.is_empty() {
        match &args.case {
            Some(q) => bail!(
                "no failed case with query id {q:?} in {}",
                args.file.display()
            ),
            None => println!("{}: no failed cases", args.file.display()),
        }
    }
    for (case, result) in &results {
        if args.json {
            let v = match result {
                Ok(a) => serde_json::to_value(a)?,
                Err(e) => serde_json::json!({"case_id": case.query_id, "error": e}),
            };
            println!("{}", serde_json::to_string(&v)?);
            continue;
        }
        println!("{}  {}", case.query_id, case.query);
        match result {
            Ok(a) => {
                println!(
                    "  verdict   {} at {} ({})",
                    a.error_type, a.op_name, a.op_id
                );
                println!("  reason    {}", a.reason);
                println!("  confidence {:.2}", a.confidence);
                if let Some(ann) = &case.annotation {
                    let agree = if ann.op_id == a.op_id && ann.error_type == a.error_type {
                        "agrees"
                    } else {
                        "DIFFERS"
                    };
                    println!("  annotation {} at {} — {agree}", ann.error_type, ann.op_id);
                }
            }
            Err(e) => println!("  not attributed: {e}"),
        }
    }
    Ok(ExitCode::SUCCESS)
}
