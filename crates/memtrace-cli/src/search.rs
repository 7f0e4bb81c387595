//! `memtrace search FILE QUERY [--regex] [--ignore-case] [--limit N] [--json]`.

use std::path::PathBuf;
use std::process::ExitCode;

use memtrace::algo::{RegexOptions, SearchIndex};

#[derive(clap::Args)]
pub struct Args {
    /// A trace file in any readable format (`-`: standard input).
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
    let bytes = crate::input::bytes(&args.file)?;
    let name = format!("cannot load {}", args.file.display());
    let trace = crate::input::load_reporting(&bytes, args.read, &name)?.trace;
    let index = SearchIndex::build(&trace);
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
        println!("{}", serde_json::to_string(&hits)?);
    } else if hits.is_empty() {
        println!("no hits");
    } else {
        for h in &hits {
            println!(
                "{:<48} {:>7.3}  [{}..{}]  {}",
                h.id, h.score, h.start, h.end, h.snippet
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
