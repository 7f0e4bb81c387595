//! `memtrace info FILE… [--json]`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use memtrace::format::{load, LoadOptions};

#[derive(clap::Args)]
pub struct Args {
    /// Trace files (smartcomment / MemTraceBench JSON).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Print one JSON object per file instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let mut failed = false;
    for path in &args.files {
        let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        match load(&bytes, LoadOptions::default()) {
            Ok(loaded) => {
                let s = loaded.trace.summary(loaded.format.as_str());
                if args.json {
                    let mut v = serde_json::to_value(&s)?;
                    v["file"] = path.display().to_string().into();
                    println!("{}", serde_json::to_string(&v)?);
                } else {
                    println!("{}", path.display());
                    println!("  format      {}", s.format);
                    println!("  graph       {}", s.graph_id);
                    println!("  sessions    {}", s.sessions);
                    println!("  operations  {}", s.operations);
                    println!("  variables   {}", s.variables);
                    println!("  edges       {}", s.edges);
                    println!("  failures    {}", s.failures);
                    let by_type: Vec<String> =
                        s.annotations_by_type.iter().map(|(k, n)| format!("{k} {n}")).collect();
                    println!("  annotations {} ({})", s.annotations, by_type.join(", "));
                }
            }
            Err(e) => {
                failed = true;
                eprintln!("error: {}: {e}", path.display());
            }
        }
    }
    Ok(if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}
