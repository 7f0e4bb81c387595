//! `memtrace start-points FILE… [--k 8] [--json]`: per failed case, the ranked start messages
//! and their recall@k against the gold evidence, then the turns info-flow starts from when it
//! has no evidence ids — located inside whatever value they entered in (a prompt, a state span)
//! — and their recall@k; then the means.

use std::path::PathBuf;
use std::process::ExitCode;

use memtrace::algo::{evaluate_start_points, StartPointOptions};
use memtrace::attribution::infoflow::turns::Turn;
use memtrace::attribution::{RoleConfig, Roles};
use memtrace::model::Trace;
use memtrace::text::{one_line, shorten};

#[derive(clap::Args)]
pub struct Args {
    /// Trace files in any readable format (`-`: standard input).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Start points per case (recall is measured at this k).
    #[arg(long, default_value_t = 8)]
    k: usize,
    /// Candidates per retriever = k × multiplier, before fusion.
    #[arg(long, default_value_t = 2)]
    multiplier: usize,
    /// Print one JSON object per file.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    rules: crate::rules::RuleArgs,
}

pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let opts = StartPointOptions {
        limit: args.k,
        multiplier: args.multiplier,
        ..StartPointOptions::default()
    };
    let (mut recalls, mut turn_recalls) = (Vec::new(), Vec::new());
    let inputs = args
        .files
        .iter()
        .map(|path| crate::input::read(path, &args.rules))
        .collect::<anyhow::Result<Vec<_>>>()?;
    for input in inputs.iter().flatten() {
        let report = evaluate_start_points(&input.trace, &opts);
        recalls.extend(report.cases.iter().filter_map(|c| c.recall));
        let roles = Roles::infer(&input.trace, &RoleConfig::default());
        // Each case's turns, ranked once: shown, and scored against its named evidence.
        let (turns, turn_recall): (Vec<Vec<TurnRow>>, Vec<Option<f64>>) = input
            .trace
            .cases
            .iter()
            .map(|c| {
                let found = crate::eval::blind_turns(&input.trace, &roles, c).unwrap_or_default();
                (
                    turn_rows(&input.trace, &found, args.k),
                    crate::eval::recall_of(&input.trace, c, &found, args.k),
                )
            })
            .unzip();
        turn_recalls.extend(turn_recall.iter().flatten());
        if args.json {
            let mut v = serde_json::to_value(&report)?;
            v["file"] = input.name.clone().into();
            for (i, case) in input.trace.cases.iter().enumerate() {
                let Some(row) = v["cases"].as_array_mut().and_then(|cs| {
                    cs.iter_mut()
                        .find(|r| r["query_id"] == case.query_id.as_str())
                }) else {
                    continue;
                };
                row["turns"] = serde_json::to_value(&turns[i])?;
                row["turn_recall"] = serde_json::to_value(turn_recall[i])?;
            }
            println!("{}", serde_json::to_string(&v)?);
            continue;
        }
        println!("{}", input.name);
        for c in &report.cases {
            let recall = c.recall.map_or_else(
                || "n/a (no gold evidence)".to_owned(),
                |r| format!("{r:.3}"),
            );
            println!("  {}  recall@{} {recall}", c.query_id, report.k);
            for (i, id) in c.start_points.iter().enumerate() {
                let gold = if c.evidence_ids.contains(id) {
                    "  <- gold"
                } else {
                    ""
                };
                println!("    {:>2}. {id}{gold}", i + 1);
            }
            let Some(at) = input
                .trace
                .cases
                .iter()
                .position(|x| x.query_id == c.query_id)
            else {
                continue;
            };
            let recall = turn_recall[at]
                .map_or_else(String::new, |r| format!(", recall@{} {r:.3}", report.k));
            println!("  turns found without evidence ids{recall}:");
            for (i, t) in turns[at].iter().enumerate() {
                println!(
                    "    {:>2}. {} [{}..{}] {:.2}  {}",
                    i + 1,
                    t.node,
                    t.start,
                    t.end,
                    t.score,
                    t.text
                );
            }
        }
    }
    if !args.json {
        match recalls.len() {
            0 => println!("mean recall@{}: n/a (no case with gold evidence)", args.k),
            n => println!(
                "mean recall@{} over {n} cases: {:.3}",
                args.k,
                recalls.iter().sum::<f64>() / n as f64
            ),
        }
        if !turn_recalls.is_empty() {
            println!(
                "mean turn recall@{} (without evidence ids) over {} cases: {:.3}",
                args.k,
                turn_recalls.len(),
                turn_recalls.iter().sum::<f64>() / turn_recalls.len() as f64
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A turn info-flow starts from: the value it entered in, where in that value's text (bytes),
/// how well it matches the case, and its words on one line.
#[derive(serde::Serialize)]
struct TurnRow {
    node: String,
    start: usize,
    end: usize,
    score: f64,
    text: String,
}

/// The first `k` of a case's ranked turns as rows.
fn turn_rows(t: &Trace, turns: &[Turn], k: usize) -> Vec<TurnRow> {
    turns
        .iter()
        .take(k)
        .map(|x| TurnRow {
            node: t.var(x.var).full_node_id.clone(),
            start: x.range.start,
            end: x.range.end,
            score: x.score,
            text: shorten(&one_line(&x.text), 120),
        })
        .collect()
}
