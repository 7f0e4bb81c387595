//! `memtrace report FILE… --out DIR`: the diagnostic report of the failures in trace files
//! (attributed with the information-flow method), as `report.html` and `report.md`. With
//! `--llm-summary` the provider writes a summary of the patterns; otherwise they are rule-based.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use memtrace::attribution::InfoFlow;
use memtrace::report::{self, html, markdown};
use memtrace_native::llm::ProviderArgs;

#[derive(clap::Args)]
pub struct Args {
    /// Trace files.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Output folder for report.html and report.md.
    #[arg(long, default_value = ".")]
    out: PathBuf,
    /// The report's title.
    #[arg(long, default_value = "memtrace diagnostic report")]
    title: String,
    /// Ask the provider for a summary of the patterns.
    #[arg(long)]
    llm_summary: bool,
    #[command(flatten)]
    provider: ProviderArgs,
    #[command(flatten)]
    rules: crate::rules::RuleArgs,
}

pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let infoflow = InfoFlow::default();
    let mut cases = Vec::new();
    for path in &args.files {
        for input in crate::input::read(path, &args.rules)? {
            let mut atts = Vec::new();
            for case in &input.trace.cases {
                match infoflow.attribute(&input.trace, case) {
                    Ok(a) => atts.push(a),
                    Err(e) => eprintln!("{}: {e}", input.name),
                }
            }
            let name = input.name.rsplit('/').next().unwrap_or(&input.name);
            cases.extend(report::cases_from(name, &input.trace, &atts));
        }
    }
    let mut r = report::build(&args.title, cases);
    if args.llm_summary {
        let llm = args.provider.build()?;
        futures_executor::block_on(report::add_llm_summary(&llm, &mut r))?;
    }
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    for (name, text) in [
        ("report.html", html::render(&r)),
        ("report.md", markdown::render(&r)),
    ] {
        let p = args.out.join(name);
        std::fs::write(&p, text).with_context(|| format!("cannot write {}", p.display()))?;
    }
    println!(
        "{} failures: {:?}; wrote {}/report.html and report.md",
        r.cases.len(),
        r.by_type,
        args.out.display()
    );
    Ok(ExitCode::SUCCESS)
}
