//! `memtrace gen --nodes N --seed S [-o OUT]`: a synthetic smartcomment trace.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use memtrace::format::synth;

#[derive(clap::Args)]
pub struct Args {
    /// About how many variable nodes to generate.
    #[arg(long, default_value_t = 1000)]
    nodes: usize,
    /// Seed: the same seed and size give the same bytes.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Where to write; standard output when absent.
    #[arg(short, long)]
    output: Option<PathBuf>,
}

pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let opts = synth::Options {
        nodes: args.nodes,
        seed: args.seed,
    };
    let Some(path) = &args.output else {
        let mut w = std::io::BufWriter::new(std::io::stdout().lock());
        synth::write(&opts, &mut w).context("cannot write to standard output")?;
        w.flush().context("cannot write to standard output")?;
        return Ok(ExitCode::SUCCESS);
    };
    let file =
        std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
    synth::write(&opts, &mut w).with_context(|| format!("cannot write {}", path.display()))?;
    w.flush()
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(ExitCode::SUCCESS)
}
