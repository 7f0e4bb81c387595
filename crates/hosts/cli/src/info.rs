//! `memtrace info FILE… [--json] [--failed-if RULE]… [--annotations FILE]`; a FILE may be a
//! project bundle saved by the page.

use std::path::PathBuf;
use std::process::ExitCode;

use memtrace::model::Detection;

use crate::input::Input;

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
                // What the instrumentation wrote, from the file itself (not for bundles), for
                // the formats that have conventions: a smartcomment file is not read again.
                let spans =
                    inputs.len() == 1 && inputs[0].format != memtrace::format::Format::Smartcomment;
                let conv = spans
                    .then(|| std::fs::read(path).ok())
                    .flatten()
                    .map(|b| memtrace::format::conventions(&b, max_bytes));
                for input in &inputs {
                    print(input, conv.as_ref(), args.json)?;
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

fn print(
    input: &Input,
    conv: Option<&memtrace::format::Conventions>,
    json: bool,
) -> anyhow::Result<()> {
    let d = input.detection()?;
    let s = input.trace.summary(input.format.as_str());
    if json {
        let mut v = serde_json::to_value(&s)?;
        v["file"] = input.name.clone().into();
        v["questions"] = d.questions.into();
        v["found_by"] = serde_json::to_value(&d.found_by)?;
        if let Some(c) = conv.filter(|_| input.format != memtrace::format::Format::Smartcomment) {
            v["conventions"] = serde_json::to_value(c)?;
        }
        if d.cases.is_empty() {
            v["looked_for"] = looked_for_json(&d);
        }
        println!("{}", serde_json::to_string(&v)?);
        return Ok(());
    }
    println!("{}", input.name);
    println!("  format      {}", s.format);
    if let Some(c) = conv.filter(|_| input.format != memtrace::format::Format::Smartcomment) {
        println!("  conventions {}", c.line());
    }
    println!("  graph       {}", s.graph_id);
    println!("  sessions    {}", s.sessions);
    println!("  operations  {}", s.operations);
    println!("  variables   {}", s.variables);
    println!("  edges       {}", s.edges);
    println!("  questions   {}", d.questions);
    println!("  failures    {}", s.failures);
    let by_type: Vec<String> = s
        .annotations_by_type
        .iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
    println!("  annotations {} ({})", s.annotations, by_type.join(", "));
    if d.cases.is_empty() {
        print_looked_for(&d);
    }
    Ok(())
}

fn looked_for_json(d: &Detection) -> serde_json::Value {
    serde_json::json!({
        "rules": d.rules,
        "unused_judges": d.unused_judges,
        "suggestion": d.suggestion,
    })
}

fn print_looked_for(d: &Detection) {
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
