//! `memtrace start-points FILE… [--k 8] [--json]`: per failed case, the ranked start messages
//! and their recall@k against the gold evidence, then the mean.

use std::path::PathBuf;
use std::process::ExitCode;

use memtrace::algo::{evaluate_start_points, StartPointOptions};

#[derive(clap::Args)]
pub struct Args {
    /// Trace files in any readable format (`-`: standard input).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Start points per case (recall is measured at this k).
    #[arg(long, default_value_t = 8)]
    k: usize,
    /// Candidates per retriever = k × multiplier, before fusion.
    #[arg(long, default_value_t = 2)]
    multiplier: usize,
    /// Print one JSON object per file.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    rules: crate::rules::RuleArgs,
}

pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let opts = StartPointOptions {
        limit: args.k,
        multiplier: args.multiplier,
        ..StartPointOptions::default()
    };
    let mut recalls = Vec::new();
    let inputs = args
        .files
        .iter()
        .map(|path| crate::input::read(path, &args.rules))
        .collect::<anyhow::Result<Vec<_>>>()?;
    for input in inputs.iter().flatten() {
        let report = evaluate_start_points(&input.trace, &opts);
        recalls.extend(report.cases.iter().filter_map(|c| c.recall));
        if args.json {
            let mut v = serde_json::to_value(&report)?;
            v["file"] = input.name.clone().into();
            println!("{}", serde_json::to_string(&v)?);
            continue;
        }
        println!("{}", input.name);
        for c in &report.cases {
            let recall = c.recall.map_or_else(
                || "n/a (no gold evidence)".to_owned(),
                |r| format!("{r:.3}"),
            );
            println!("  {}  recall@{} {recall}", c.query_id, report.k);
            for (i, id) in c.start_points.iter().enumerate() {
                let gold = if c.evidence_ids.contains(id) {
                    "  <- gold"
                } else {
                    ""
                };
                println!("    {:>2}. {id}{gold}", i + 1);
            }
        }
    }
    if !args.json {
        match recalls.len() {
            0 => println!("mean recall@{}: n/a (no case with gold evidence)", args.k),
            n => println!(
                "mean recall@{} over {n} cases: {:.3}",
                args.k,
                recalls.iter().sum::<f64>() / n as f64
            ),
        }
    }
    Ok(ExitCode::SUCCESS)
}
