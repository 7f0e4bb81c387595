//! `memtrace eval DIR --method M [--limit N] [--json] [--cache FILE]`: accuracy against annotations.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use memtrace::attribution::eval::{markdown, run_file, score, Scored};
use memtrace::attribution::Attribution;
use memtrace::format::{load, LoadOptions};

#[derive(clap::Args)]
pub struct Args {
    /// A folder of MemTraceBench-format files (or one file).
    dir: PathBuf,
    /// Attribution method: infoflow.
    #[arg(long, default_value = "infoflow")]
    method: String,
    /// At most this many cases.
    #[arg(long)]
    limit: Option<usize>,
    /// Print the MemTrace run-file JSON instead of the Markdown table.
    #[arg(long)]
    json: bool,
    /// Per-case cache (JSON Lines): cases already in it are not attributed again, so a rerun resumes.
    #[arg(long)]
    cache: Option<PathBuf>,
    /// Split name written into the run file.
    #[arg(long, default_value = "memtrace")]
    split: String,
}

fn files_of(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    if dir.is_file() {
        return Ok(vec![dir.to_path_buf()]);
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot list {}", dir.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    Ok(files)
}

fn read_cache(path: Option<&PathBuf>) -> BTreeMap<String, Attribution> {
    let Some(text) = path.and_then(|p| std::fs::read_to_string(p).ok()) else {
        return BTreeMap::new();
    };
    text.lines()
        .filter_map(|l| serde_json::from_str::<(String, Attribution)>(l).ok())
        .collect()
}

pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let files = files_of(&args.dir)?;
    let cached = read_cache(args.cache.as_ref());
    let mut cache_out = match &args.cache {
        Some(p) => Some(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)?,
        ),
        None => None,
    };
    let mut scored = Vec::new();
    let mut names = Vec::new();
    'files: for path in &files {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let bytes = std::fs::read(path)?;
        let trace = load(&bytes, LoadOptions::default())
            .with_context(|| path.display().to_string())?
            .trace;
        names.push(name.clone());
        for case in trace.cases.iter().filter(|c| c.annotation.is_some()) {
            if args.limit.is_some_and(|n| scored.len() >= n) {
                break 'files;
            }
            let key = format!("{}|{name}|{}", args.method, case.query_id);
            let result = if let Some(hit) = cached.get(&key) {
                Ok(hit.clone())
            } else {
                let one =
                    crate::attribute::attribute_cases(&trace, &args.method, Some(&case.query_id))?;
                let r = one
                    .into_iter()
                    .next()
                    .map_or_else(|| Err("case vanished".to_owned()), |(_, r)| r);
                if let (Ok(a), Some(out)) = (&r, cache_out.as_mut()) {
                    writeln!(out, "{}", serde_json::to_string(&(&key, a))?)?;
                }
                r
            };
            let (result, error) = match result {
                Ok(a) => (Some(a), None),
                Err(e) => (None, Some(e)),
            };
            scored.push(Scored {
                file: name.clone(),
                case: case.clone(),
                result,
                error,
            });
        }
    }
    let report = score(&args.method, &scored);
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&run_file(&args.split, &names, &scored, &report))?
        );
    } else {
        print!("{}", markdown(&report));
    }
    Ok(ExitCode::SUCCESS)
}
