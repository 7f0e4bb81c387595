//! `memtrace eval DIR --method M [--limit N] [--json] [--cache FILE]`: accuracy against
//! annotations (in the file, or in a `<name>.annotations.json` sidecar beside it; traces may be
//! `.json`/`.jsonl`, gzip- or zstd-compressed: `<name>.jsonl.gz`), cost per case, and recall@k of the start points. `--method A,B` runs both on the
//! same cases and adds a per-case table of tokens and calls with the input-token ratio A / B.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use memtrace::attribution::eval::{markdown, run_file, score, token_table, Scored};
use memtrace::attribution::infoflow::turns::Turn;
use memtrace::attribution::{Attribution, InfoFlow, RoleConfig, Roles};
use memtrace::format::sidecar;
use memtrace::model::FailureCase;

use crate::attribute::MethodArgs;

#[derive(clap::Args)]
pub struct Args {
    /// A folder of MemTraceBench-format files (or one file).
    dir: PathBuf,
    /// At most this many cases.
    #[arg(long)]
    limit: Option<usize>,
    /// Print the MemTrace run-file JSON instead of the Markdown table.
    #[arg(long)]
    json: bool,
    /// Per-case cache (JSON Lines): cases already in it are not attributed again, so a rerun resumes.
    #[arg(long)]
    cache: Option<PathBuf>,
    /// Give the attributor the annotations' evidence ids (the oracle figure: users' traces have
    /// none). By default they are dropped and the attributor finds the turns itself.
    #[arg(long)]
    with_evidence: bool,
    /// The default (kept so older scripts run): evidence ids are dropped.
    #[arg(long, hide = true, conflicts_with = "with_evidence")]
    no_evidence: bool,
    /// Split name written into the run file.
    #[arg(long, default_value = "memtrace")]
    split: String,
    #[command(flatten)]
    method: MethodArgs,
    #[command(flatten)]
    rules: crate::rules::RuleArgs,
}

fn files_of(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    if dir.as_os_str() == "-" || dir.is_file() {
        return Ok(vec![dir.to_path_buf()]);
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot list {}", dir.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name().is_some_and(|n| {
                let n = n.to_string_lossy();
                let ext = sidecar::trace_extension(&n);
                matches!(ext.as_deref(), Some("json" | "jsonl")) && !sidecar::is_sidecar(&n)
            })
        })
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

/// Start-point recall@8 over turns: the share of the case's evidence values that hold one of
/// the eight turns ranked first for it with no evidence ids ([`InfoFlow::case_turns`]); `None`
/// without gold evidence.
pub(crate) fn turn_recall(
    t: &memtrace::model::Trace,
    roles: &Roles,
    case: &FailureCase,
) -> Option<f64> {
    recall_of(t, case, &blind_turns(t, roles, case)?, 8)
}

/// The turns ranked for `case` with its evidence ids put aside, best first.
pub(crate) fn blind_turns(
    t: &memtrace::model::Trace,
    roles: &Roles,
    case: &FailureCase,
) -> Option<Vec<Turn>> {
    let mut blind = case.clone();
    blind.evidence_ids.clear();
    InfoFlow::default().case_turns(t, roles, &blind).ok()
}

/// The share of the case's evidence values that hold one of the first `k` of `turns`; `None`
/// without gold evidence.
pub(crate) fn recall_of(
    t: &memtrace::model::Trace,
    case: &FailureCase,
    turns: &[Turn],
    k: usize,
) -> Option<f64> {
    let gold: Vec<_> = case
        .evidence_ids
        .iter()
        .filter_map(|id| t.var_by_id(id))
        .collect();
    if gold.is_empty() {
        return None;
    }
    let top = &turns[..k.min(turns.len())];
    let hit = gold
        .iter()
        .filter(|g| top.iter().any(|x| x.var == **g || x.also.contains(g)))
        .count();
    Some(hit as f64 / gold.len() as f64)
}

/// One method's run over the files.
struct Evaluated {
    method: String,
    scored: Vec<Scored>,
    names: Vec<String>,
    recalls: Vec<f64>,
}

fn evaluate(args: &Args, method_args: &MethodArgs, files: &[PathBuf]) -> anyhow::Result<Evaluated> {
    let runner = method_args.runner()?;
    let method = runner.method;
    let variant = if method_args.hint_infoflow {
        "+hint"
    } else {
        ""
    };
    let cached = read_cache(args.cache.as_ref());
    let mut cache_out = match &args.cache {
        Some(p) => Some(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .with_context(|| format!("cannot open the cache {}", p.display()))?,
        ),
        None => None,
    };
    let mut scored = Vec::new();
    let mut names = Vec::new();
    let mut recalls = Vec::new();
    for path in files {
        if args.limit.is_some_and(|n| scored.len() >= n) {
            break;
        }
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let bytes = crate::input::bytes(path, args.rules.read.size.max_file_bytes())?;
        let mut trace =
            crate::input::load_reporting(&bytes, args.rules.read, &path.display().to_string())?
                .trace;
        let side = path.with_file_name(sidecar::sidecar_name(&name));
        if side.is_file() {
            let bytes =
                std::fs::read(&side).with_context(|| format!("cannot read {}", side.display()))?;
            sidecar::attach(&mut trace, &bytes).with_context(|| side.display().to_string())?;
        }
        args.rules.apply(&mut trace, &[], &[])?;
        names.push(name.clone());
        let room = args.limit.map_or(usize::MAX, |n| n - scored.len());
        let annotated: Vec<FailureCase> = trace
            .cases
            .iter()
            .filter(|c| c.annotation.is_some())
            .take(room)
            .cloned()
            .collect();
        if !annotated.is_empty() {
            let roles = Roles::infer(&trace, &RoleConfig::default());
            recalls.extend(
                annotated
                    .iter()
                    .filter_map(|c| turn_recall(&trace, &roles, c)),
            );
        }
        if !args.with_evidence {
            for c in &mut trace.cases {
                c.evidence_ids.clear();
            }
        }
        let cases: Vec<FailureCase> = annotated
            .into_iter()
            .map(|mut c| {
                if !args.with_evidence {
                    c.evidence_ids.clear();
                }
                c
            })
            .collect();
        let key = |case: &FailureCase| format!("{method}{variant}|{name}|{}", case.query_id);
        let todo: Vec<FailureCase> = cases
            .iter()
            .filter(|c| !cached.contains_key(&key(c)))
            .cloned()
            .collect();
        let mut fresh: BTreeMap<String, Result<Attribution, String>> = BTreeMap::new();
        let rows = runner.attribute(&trace, &RoleConfig::default(), &todo, false)?;
        runner.progress.clear();
        for (case, row) in todo.iter().zip(rows) {
            let result = row.result().cloned().map_err(str::to_owned);
            match &result {
                Ok(a) => eprintln!(
                    "{name} {}: {} input tokens, {} output tokens, {} LLM calls, {} ms",
                    case.query_id,
                    a.cost.input_tokens,
                    a.cost.output_tokens,
                    a.cost.llm_calls,
                    a.cost.wall_ms
                ),
                Err(e) => eprintln!("{name} {}: not attributed: {e}", case.query_id),
            }
            if let (Ok(a), Some(out)) = (&result, cache_out.as_mut()) {
                writeln!(out, "{}", serde_json::to_string(&(key(case), a))?)?;
            }
            fresh.insert(case.query_id.clone(), result);
        }
        for case in cases {
            let result = match cached.get(&key(&case)) {
                Some(hit) => Ok(hit.clone()),
                None => fresh
                    .remove(&case.query_id)
                    .unwrap_or_else(|| Err("case vanished".to_owned())),
            };
            let (result, error) = match result {
                Ok(a) => (Some(a), None),
                Err(e) => (None, Some(e)),
            };
            scored.push(Scored {
                file: name.clone(),
                case,
                result,
                error,
            });
        }
    }
    Ok(Evaluated {
        method: method.to_owned(),
        scored,
        names,
        recalls,
    })
}

pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let files = files_of(&args.dir)?;
    if crate::decisive::is_method(&args.method.method) {
        return crate::decisive::eval(&files, args.limit, args.json, args.rules.read.options());
    }
    let methods: Vec<&str> = args
        .method
        .method
        .split(',')
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .collect();
    if methods.len() > 1 {
        return compare(args, &methods, &files);
    }
    let Evaluated {
        method,
        scored,
        names,
        recalls,
    } = evaluate(args, &args.method, &files)?;
    let method = method.as_str();
    let report = score(method, &scored);
    let k = 8;
    let ids = if args.with_evidence {
        "with evidence ids"
    } else {
        "without evidence ids"
    };
    let mean_recall = if recalls.is_empty() {
        None
    } else {
        Some(recalls.iter().sum::<f64>() / recalls.len() as f64)
    };
    if args.json {
        let mut file = run_file(&args.split, &names, &scored, &report);
        file["metrics"][format!("start_point_recall_at_{k}")] = serde_json::json!(mean_recall);
        file["metrics"]["evidence_ids"] = serde_json::json!(args.with_evidence);
        println!("{}", serde_json::to_string_pretty(&file)?);
    } else {
        println!("scored {ids}\n");
        print!("{}", markdown(&report));
        if let Some(r) = mean_recall {
            println!(
                "start points (without evidence ids): turn recall@{k} {:.1}% over {} cases with gold evidence",
                100.0 * r,
                recalls.len()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs each method on the same cases; prints each one's accuracy and a per-case table of
/// tokens and calls with each method's input tokens against the last one's.
fn compare(args: &Args, methods: &[&str], files: &[PathBuf]) -> anyhow::Result<ExitCode> {
    let mut runs = Vec::new();
    for m in methods {
        let mut method_args = args.method.clone();
        (*m).clone_into(&mut method_args.method);
        runs.push(evaluate(args, &method_args, files)?);
    }
    let views: Vec<(&str, &[Scored])> = runs
        .iter()
        .map(|r| (r.method.as_str(), r.scored.as_slice()))
        .collect();
    let (table, ratios) = token_table(&views);
    if args.json {
        let run_files: Vec<serde_json::Value> = runs
            .iter()
            .map(|r| {
                run_file(
                    &args.split,
                    &r.names,
                    &r.scored,
                    &score(&r.method, &r.scored),
                )
            })
            .collect();
        let out = serde_json::json!({"runs": run_files, "input_token_ratios": ratios});
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(ExitCode::SUCCESS);
    }
    for r in &runs {
        println!("{}", markdown(&score(&r.method, &r.scored)));
    }
    println!("tokens per case\n\n{table}");
    for r in &ratios {
        match r.ratio {
            Some(x) => println!(
                "input-token ratio {} / {}: {x:.3} ({} / {} input tokens over {} cases)",
                r.method, r.baseline, r.input_tokens, r.baseline_input_tokens, r.cases
            ),
            None => println!(
                "input-token ratio {} / {}: undefined ({} sent no input tokens)",
                r.method, r.baseline, r.baseline
            ),
        }
    }
    Ok(ExitCode::SUCCESS)
}
