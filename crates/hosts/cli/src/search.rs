//! `memtrace search FILE QUERY [--regex] [--ignore-case] [--limit N] [--json]`: a trace, or each
//! trace of a project bundle the page saved (its hits under the trace's name).

use std::path::PathBuf;
use std::process::ExitCode;

use memtrace::algo::{RegexOptions, SearchIndex};

#[derive(clap::Args)]
pub struct Args {
    /// A trace file in any readable format, or a project bundle saved by the page: each of its
    /// traces is searched (`-`: standard input).
    file: PathBuf,
    /// Words to rank variables by (BM25), or a regular expression with --regex.
    query: String,
    /// Treat QUERY as a regular expression and list every match.
    #[arg(long)]
    regex: bool,
    /// Match the regex without regard to case.
    #[arg(long, short = 'i')]
    ignore_case: bool,
    /// Most hits to show.
    #[arg(long, default_value_t = 20)]
    limit: usize,
    /// Print the hits as one JSON array.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    read: crate::rules::ReadArgs,
}

pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let rules = crate::rules::RuleArgs {
        read: args.read,
        ..crate::rules::RuleArgs::default()
    };
    let inputs = crate::input::read(&args.file, &rules)?;
    let several = inputs.len() > 1;
    let mut all = Vec::new();
    for input in &inputs {
        let index = SearchIndex::build(&input.trace);
        let hits = if args.regex {
            let opts = RegexOptions {
                case_insensitive: args.ignore_case,
                max_hits: args.limit,
                context_chars: 60,
                literal: false,
            };
            index.regex(&args.query, &opts)?
        } else {
            index.bm25(&args.query, args.limit)
        };
        if args.json {
            // A bundle's hits name their trace; a plain file's are the hits alone.
            for h in hits {
                let mut v = serde_json::to_value(&h)?;
                if let (true, Some(o)) = (several, v.as_object_mut()) {
                    o.insert("trace".into(), input.name.clone().into());
                }
                all.push(v);
            }
            continue;
        }
        if several {
            println!("== {}", input.name);
        }
        if hits.is_empty() {
            println!("no hits");
        }
        for h in &hits {
            println!(
                "{:<48} {:>7.3}  [{}..{}]  {}",
                h.id, h.score, h.start, h.end, h.snippet
            );
        }
    }
    if args.json {
        println!("{}", serde_json::to_string(&all)?);
    }
    Ok(ExitCode::SUCCESS)
}
