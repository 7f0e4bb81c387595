//! `memtrace obfuscate FILE [-o OUT] [--seed N]`: the trace with every name a user chose replaced
//! by a stable token, values kept, in its own format (see `memtrace::format::obfuscate`).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use memtrace::format::obfuscate::obfuscate;

#[derive(clap::Args)]
pub struct Args {
    /// The trace to rename (smartcomment, OTLP JSON / JSON Lines, Langfuse export).
    file: PathBuf,
    /// Where to write; standard output when left out.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Seed of the tokens: the same seed gives the same token for the same name.
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let path = &args.file;
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let out = obfuscate(&bytes, args.seed).with_context(|| path.display().to_string())?;
    match &args.output {
        Some(o) if o.as_os_str() != "-" => {
            std::fs::write(o, &out.bytes)
                .with_context(|| format!("cannot write {}", o.display()))?;
            eprintln!(
                "{}: {} names replaced ({}), written to {}",
                path.display(),
                out.names.len(),
                out.format.map_or("?", |f| f.as_str()),
                o.display()
            );
        }
        _ => std::io::stdout().write_all(&out.bytes)?,
    }
    Ok(ExitCode::SUCCESS)
}
