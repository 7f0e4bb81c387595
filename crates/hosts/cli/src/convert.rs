//! `memtrace convert FILE --to smartcomment -o OUT`: any readable trace as smartcomment JSON.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};
use memtrace::format::{smartcomment, Format};

#[derive(clap::Args)]
pub struct Args {
    /// The trace to read (smartcomment, OTLP JSON / JSON Lines, Langfuse export).
    file: PathBuf,
    /// Output format; only `smartcomment` is written.
    #[arg(long, default_value = "smartcomment")]
    to: String,
    /// Where to write; `-` for standard output.
    #[arg(short, long)]
    output: PathBuf,
    #[command(flatten)]
    read: crate::rules::ReadArgs,
}

pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    if Format::parse(&args.to) != Ok(Format::Smartcomment) {
        bail!(
            "cannot write {:?}: `convert` writes smartcomment only (--to smartcomment)",
            args.to
        );
    }
    let path = &args.file;
    let bytes = crate::input::bytes(path, args.read.size.max_file_bytes())?;
    let name = format!("{} is not a readable trace", path.display());
    let loaded = crate::input::load_reporting(&bytes, args.read, &name)?;
    let out = smartcomment::write(&loaded.trace).context("cannot serialize the trace")?;
    if args.output.as_os_str() == "-" {
        use std::io::Write;
        std::io::stdout()
            .write_all(&out)
            .context("cannot write to standard output")?;
    } else {
        std::fs::write(&args.output, &out)
            .with_context(|| format!("cannot write {}", args.output.display()))?;
        let s = loaded.trace.summary(loaded.format.as_str());
        eprintln!(
            "{} ({}) -> {}: {} sessions, {} operations, {} variables, {} edges, {} failures",
            path.display(),
            s.format,
            args.output.display(),
            s.sessions,
            s.operations,
            s.variables,
            s.edges,
            s.failures
        );
    }
    Ok(ExitCode::SUCCESS)
}
