//! `memtrace info FILE… [--json] [--failed-if RULE]… [--annotations FILE]`; a FILE may be a
//! project bundle saved by the page.

use std::path::PathBuf;
use std::process::ExitCode;

use memtrace::session::{self, Info, LookedFor};

#[derive(clap::Args)]
pub struct Args {
    /// Trace files (smartcomment / MemTraceBench JSON, OTLP, Langfuse; `-`: standard input).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Print one JSON object per file instead of text.
    #[arg(long)]
    json: bool,
    /// Exit with status 1 when any file has failed cases (0: none; 2: a file did not load).
    #[arg(long)]
    fail_on_failures: bool,
    #[command(flatten)]
    rules: crate::rules::RuleArgs,
}

pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let (mut failed, mut found) = (false, false);
    let max_bytes = args.rules.read.size.max_file_bytes();
    for path in &args.files {
        match crate::input::read(path, &args.rules) {
            Ok(inputs) => {
                // What the instrumentation wrote, from the file itself (not for bundles).
                let raw = (inputs.len() == 1)
                    .then(|| std::fs::read(path).ok())
                    .flatten();
                for input in &inputs {
                    let info = session::info(
                        &input.name,
                        &input.trace,
                        input.format,
                        input.detection.as_ref(),
                        raw.as_deref(),
                        max_bytes,
                    )?;
                    print(&info, args.json)?;
                    found |= !input.trace.cases.is_empty();
                }
            }
            Err(e) => {
                failed = true;
                crate::print_error(&e);
            }
        }
    }
    Ok(if failed {
        ExitCode::from(memtrace_cli::EXIT_ERROR)
    } else {
        crate::failures_code(args.fail_on_failures && found)
    })
}

fn print(info: &Info, json: bool) -> anyhow::Result<()> {
    if json {
        println!("{}", serde_json::to_string(info)?);
        return Ok(());
    }
    let s = &info.summary;
    println!("{}", info.file);
    println!("  format      {}", s.format);
    if let Some(c) = &info.conventions {
        println!("  conventions {}", c.line());
    }
    println!("  graph       {}", s.graph_id);
    println!("  sessions    {}", s.sessions);
    println!("  operations  {}", s.operations);
    println!("  variables   {}", s.variables);
    println!("  edges       {}", s.edges);
    println!("  questions   {}", info.questions);
    println!("  failures    {}", s.failures);
    let by_type: Vec<String> = s
        .annotations_by_type
        .iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
    println!("  annotations {} ({})", s.annotations, by_type.join(", "));
    if let Some(d) = &info.looked_for {
        print_looked_for(d);
    }
    Ok(())
}

fn print_looked_for(d: &LookedFor) {
    println!("  no failed question found. Looked for, in this order (docs/failures.md):");
    for (k, r) in d.rules.iter().enumerate() {
        println!(
            "    {}. {:<17} judged {} question(s), {} failed: {}",
            k + 1,
            r.rule,
            r.judged,
            r.failed,
            r.looks_for
        );
    }
    if d.unused_judges.is_empty() {
        println!("  judge-like ops seen: none");
    } else {
        println!(
            "  judge-like ops seen: {}, none counted:",
            d.unused_judges.len()
        );
        for u in d.unused_judges.iter().take(10) {
            println!("    {} ({}): {}", u.op_name, u.op_id, u.why);
        }
    }
    println!(
        "  if your traces judge answers some other way, add a rule: {}",
        d.suggestion
    );
    println!("  (repeatable; also on attribute, eval, report and start-points)");
}
