//! `memtrace optimize`: prompt optimization from attributions. With `--conversations` it runs the
//! closed loop (memory system → judge → attribute → optimize, round by round, resumable from its
//! state file); with trace files it runs one optimization step over their attributed failures.
//! Results are exported with `--export` and the loop's page is written as `optimize.html`.
//!
//! The loop's output folder: `loop-state.json` (resumable state), the exports, `optimize.html`,
//! `settings.txt` (each tuned setting's versions) and `rounds/round-<r>.json`: round r's run, every
//! question's verdict (a `memtrace-run` file; `memtrace compare rounds/round-0.json
//! rounds/round-2.json` sets two side by side).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context};
use clap::ValueEnum;
use memtrace::attribution::InfoFlow;
use memtrace::format::load;
use memtrace::optimize::compare::RunFile;
use memtrace::optimize::export::ExportFormat;
use memtrace::optimize::gather::{versions, Gathered};
use memtrace::optimize::settings::SettingVersion;
use memtrace::optimize::targets::default_selection;
use memtrace::optimize::{
    estimate, export, step, History, OptimizeConfig, Progress, PromptVersion,
};
use memtrace::provider::{ChatRequest, ChatResponse, Llm, ProviderError, Script, ScriptedLlm};
use memtrace::text::diff::unified;
use memtrace_memsys::closed_loop::{advance, keep, LoopConfig, LoopState, Phase};
use memtrace_memsys::simulated::SimulatedLlm;
use memtrace_memsys::{Conversation, Prompts};
use memtrace_native::llm::{CliLlm, ProviderArgs};

/// Export formats of the optimized prompts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportChoice {
    /// `update_results.json`: every version keyed `<name>@<version>` (MemTrace's format).
    #[value(name = "update_results")]
    UpdateResults,
    /// `mem0_config.json`: Mem0 config keys `custom_fact_extraction_prompt`, `custom_update_memory_prompt`.
    #[value(name = "mem0")]
    Mem0,
    /// `prompts/<name>@<version>.txt` (+ `.diff`, `versions.json`).
    #[value(name = "text")]
    Text,
}

/// Who runs the reference memory system in the loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SystemChoice {
    /// The simulated provider (rule-based, offline; not an LLM).
    Simulated,
    /// The provider given by the LLM options.
    Provider,
}

#[derive(clap::Args)]
#[command(
    after_help = "Export formats (--export):\n  update_results  update_results.json, keys `<name>@<version>`\n  mem0            mem0_config.json, keys `custom_fact_extraction_prompt`, `custom_update_memory_prompt`\n  text            prompts/<name>@<version>.txt, .diff and versions.json\nEach version carries its version, parent, score, cost and diff."
)]
pub struct Args {
    /// Attributed trace files: one optimization step over their failures (no loop).
    files: Vec<PathBuf>,
    /// LoCoMo-format conversations (a file, a JSON list, or a folder): run the closed loop.
    #[arg(long, value_name = "PATH")]
    conversations: Option<PathBuf>,
    /// Training conversations, 0-based positions (comma separated).
    #[arg(long, value_delimiter = ',', default_value = "0")]
    train: Vec<usize>,
    /// Held-out conversations, evaluated every round.
    #[arg(long, value_delimiter = ',')]
    heldout: Vec<usize>,
    /// Optimization rounds (the loop evaluates rounds + 1 times).
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Units retrieved per question at the start (the memory system's `top_k`).
    #[arg(long, default_value_t = 10)]
    top_k: usize,
    /// Settings the loop tunes besides the prompts (`top_k`, `similar_k`; `none`: prompts only).
    #[arg(long, value_delimiter = ',', default_value = "top_k")]
    tune: Vec<String>,
    /// Only questions of these LoCoMo categories (1..=5).
    #[arg(long, value_delimiter = ',')]
    categories: Vec<u8>,
    /// Who runs the memory system.
    #[arg(long, value_enum, default_value = "simulated")]
    system: SystemChoice,
    /// Judge answers with the system's LLM (default: the normalized-token rule).
    #[arg(long)]
    judge_with_llm: bool,
    /// The loop's state file (resumed when it exists). Default: OUT/loop-state.json.
    #[arg(long, value_name = "FILE")]
    state: Option<PathBuf>,
    /// Stop after this many loop steps (resume later with the same state file).
    #[arg(long)]
    max_steps: Option<usize>,
    /// Output folder.
    #[arg(long, default_value = "optimize-out")]
    out: PathBuf,
    /// Export format(s).
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "update_results"
    )]
    export: Vec<ExportChoice>,
    /// Answer optimizer calls from a local script file (ScriptedLlm format) instead of the provider.
    #[arg(long, value_name = "FILE")]
    optimizer_script: Option<PathBuf>,
    /// Print the estimate of calls, tokens and cost, then stop (single step only).
    #[arg(long)]
    estimate_only: bool,
    /// Seed of the feedback shuffle.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Feedbacks folded per aggregation call.
    #[arg(long, default_value_t = 4)]
    batch_size: usize,
    #[command(flatten)]
    size: crate::rules::SizeArgs,
    #[command(flatten)]
    provider: ProviderArgs,
}

/// The optimizer: the provider, or a local script.
enum Optimizer {
    Provider(CliLlm),
    Script(ScriptedLlm),
}

impl Llm for Optimizer {
    async fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, ProviderError> {
        match self {
            Self::Provider(p) => p.chat(req).await,
            Self::Script(s) => s.chat(req).await,
        }
    }
}

fn read_json(path: &Path) -> anyhow::Result<serde_json::Value> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    serde_json::from_slice(&bytes).with_context(|| format!("{} is not JSON", path.display()))
}

/// Conversations from a file (one object or a list) or every `*.json` in a folder, by name.
fn read_conversations(path: &Path) -> anyhow::Result<Vec<Conversation>> {
    let mut values = Vec::new();
    if path.is_dir() {
        let mut files: Vec<PathBuf> = std::fs::read_dir(path)
            .with_context(|| format!("cannot read {}", path.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        for f in files {
            let stem = f
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or("")
                .to_owned();
            values.push((Some(stem), read_json(&f)?));
        }
    } else {
        let bytes =
            std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        return memtrace_memsys::locomo::parse_conversations(&bytes)
            .with_context(|| path.display().to_string());
    }
    if values.is_empty() {
        bail!("{} holds no LoCoMo conversation", path.display());
    }
    values
        .into_iter()
        .enumerate()
        .map(|(i, (stem, v))| {
            let index = stem.map_or(i + 1, |s| memtrace_memsys::locomo::sample_index(&s, i + 1));
            Conversation::from_json(&v, index)
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
        })
        .collect()
}

fn print_progress(p: &Progress) {
    eprintln!(
        "  {} {}/{} · calls {} · tokens in {} out {}",
        p.stage,
        p.done,
        p.total,
        p.meter.calls,
        p.meter.usage.input_tokens,
        p.meter.usage.output_tokens
    );
}

fn write_exports(
    out: &Path,
    versions: &[PromptVersion],
    settings: &[SettingVersion],
    formats: &[ExportChoice],
) -> anyhow::Result<()> {
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    for f in formats {
        let format = match f {
            ExportChoice::UpdateResults => ExportFormat::UpdateResults,
            ExportChoice::Mem0 => ExportFormat::Mem0,
            ExportChoice::Text => ExportFormat::Text,
        };
        let mut files = export::files(versions, format);
        if format == ExportFormat::UpdateResults && !settings.is_empty() {
            let results = export::with_settings(export::update_results(versions), settings);
            files = vec![(
                "update_results.json".into(),
                serde_json::to_string_pretty(&results)?,
            )];
        }
        for (name, text) in files {
            let path = out.join(name);
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("cannot create {}", dir.display()))?;
            }
            write(&path, &text)?;
        }
    }
    Ok(())
}

/// `rounds/round-<r>.json`: each round's verdicts as a run file.
fn write_rounds(out: &Path, state: &LoopState) -> anyhow::Result<()> {
    let dir = out.join("rounds");
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for r in &state.rounds {
        let name = format!("round {}{}", r.round, keep::settings_label(&r.settings));
        let file = RunFile::new(name, r.verdicts.clone());
        write(
            &dir.join(format!("round-{}.json", r.round)),
            &serde_json::to_string_pretty(&file)?,
        )?;
    }
    Ok(())
}

fn write(path: &Path, text: &str) -> anyhow::Result<()> {
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let optimizer = match &args.optimizer_script {
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("cannot read {}", p.display()))?;
            Optimizer::Script(ScriptedLlm::new(
                Script::from_json(&text).map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?,
            ))
        }
        None => Optimizer::Provider(args.provider.build()?),
    };
    let model = args.provider.model.clone().unwrap_or_default();
    let prices = args.provider.price_table()?;
    let opt_cfg = OptimizeConfig {
        seed: args.seed,
        batch_size: args.batch_size,
        concurrency: args.provider.concurrency,
        ..OptimizeConfig::default()
    };
    match (&args.conversations, args.files.is_empty()) {
        (Some(path), true) => run_loop(args, path, &optimizer, opt_cfg, model, prices),
        (None, false) => run_once(args, &optimizer, &opt_cfg, &model, &prices),
        _ => bail!("give either trace files (one optimization step) or --conversations (the closed loop), not both or neither"),
    }
}

fn run_loop(
    args: &Args,
    path: &Path,
    optimizer: &Optimizer,
    opt_cfg: OptimizeConfig,
    model: String,
    prices: memtrace::provider::PriceTable,
) -> anyhow::Result<ExitCode> {
    let convs = read_conversations(path)?;
    let state_path = args
        .state
        .clone()
        .unwrap_or_else(|| args.out.join("loop-state.json"));
    let mut state: LoopState = if state_path.exists() {
        eprintln!("resuming from {}", state_path.display());
        serde_json::from_value(read_json(&state_path)?)
            .with_context(|| format!("{} is not a loop state", state_path.display()))?
    } else {
        memtrace::session::Setup::check_split(&args.train, &args.heldout, convs.len())
            .map_err(|e| anyhow::anyhow!("--train / --heldout: {e} ({})", path.display()))?;
        let mut cfg = LoopConfig {
            rounds: args.rounds,
            train: args.train.clone(),
            heldout: args.heldout.clone(),
            categories: args.categories.clone(),
            optimize: opt_cfg,
            selection: default_selection(),
            infoflow: InfoFlow::default(),
            model,
            prices,
            settings: args.tune.iter().filter(|t| *t != "none").cloned().collect(),
            ..LoopConfig::default()
        };
        cfg.memsys.judge_with_llm = args.judge_with_llm;
        cfg.memsys.top_k = args.top_k;
        LoopState::new(cfg, Prompts::default())?
    };
    let system = match args.system {
        SystemChoice::Simulated => None,
        SystemChoice::Provider => Some(args.provider.build()?),
    };
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let mut steps = 0;
    while state.phase != Phase::Done && args.max_steps.is_none_or(|m| steps < m) {
        eprintln!("{:?}", state.phase);
        if let Phase::Optimize { .. } = state.phase {
            let e = estimate::estimate(
                &memtrace_memsys::closed_loop::prompt_values(&state.prompts),
                &state.pending,
                &state.history,
                &state.config.optimize,
                &state.config.prices,
                &state.config.model,
            );
            eprintln!(
                "  estimate: {} calls (at most {}), tokens in {} out {}, cost {}",
                e.feedback_calls + e.aggregate_calls + e.update_calls,
                e.max_calls,
                e.usage.input_tokens,
                e.usage.output_tokens,
                e.cost_usd
                    .map_or("unknown (no price for the model)".into(), |c| format!(
                        "${c:.4}"
                    ))
            );
        }
        let result = match &system {
            None => futures_executor::block_on(advance(
                &mut state,
                &convs,
                &SimulatedLlm,
                optimizer,
                &mut print_progress,
            )),
            Some(s) => futures_executor::block_on(advance(
                &mut state,
                &convs,
                s,
                optimizer,
                &mut print_progress,
            )),
        };
        result?;
        write(&state_path, &serde_json::to_string_pretty(&state)?)?;
        steps += 1;
    }
    println!("{}", state.chart_text());
    println!("series {}", state.series_json());
    let history = keep::settings_text(&state);
    print!("{history}");
    for r in &state.rounds {
        if let Some(why) = &r.rejected {
            println!("round {} rejected: {why}", r.round);
        }
    }
    write(&args.out.join("settings.txt"), &history)?;
    write_rounds(&args.out, &state)?;
    write_exports(
        &args.out,
        &state.versions,
        &state.setting_versions,
        &args.export,
    )?;
    write(
        &args.out.join("optimize.html"),
        &memtrace_memsys::closed_loop::page::loop_html(&state),
    )?;
    eprintln!(
        "wrote {} (state {})",
        args.out.display(),
        state_path.display()
    );
    Ok(ExitCode::SUCCESS)
}

fn run_once(
    args: &Args,
    optimizer: &Optimizer,
    cfg: &OptimizeConfig,
    model: &str,
    prices: &memtrace::provider::PriceTable,
) -> anyhow::Result<ExitCode> {
    let sel = default_selection();
    let infoflow = InfoFlow::default();
    let mut gathered = Gathered::default();
    for path in &args.files {
        let options = args.size.options();
        let bytes = crate::input::bytes(path, options.limits.max_file_bytes)?;
        let trace = load(&bytes, options)
            .with_context(|| path.display().to_string())?
            .trace;
        let verdicts: Vec<_> = trace
            .cases
            .iter()
            .filter_map(|case| infoflow.attribute(&trace, case).ok())
            .collect();
        gathered.add(&trace, &verdicts, &sel, cfg.render_chars);
    }
    for n in &gathered.not_optimizable {
        eprintln!("{}: not optimizable ({})", n.case_id, n.why);
    }
    let Gathered {
        values,
        failures,
        not_optimizable,
    } = gathered;
    let not_optimizable = not_optimizable.len();
    let mut history = History::new(cfg.history_len);
    let e = estimate::estimate(&values, &failures, &history, cfg, prices, model);
    eprintln!("{} failures on {} targets ({not_optimizable} not optimizable); estimate: {} calls (at most {}), tokens in {} out {}, cost {}", failures.len(), values.len(), e.feedback_calls + e.aggregate_calls + e.update_calls, e.max_calls, e.usage.input_tokens, e.usage.output_tokens, e.cost_usd.map_or("unknown".into(), |c| format!("${c:.4}")));
    if args.estimate_only {
        return Ok(ExitCode::SUCCESS);
    }
    let out = futures_executor::block_on(step(
        optimizer,
        &values,
        &failures,
        &mut history,
        cfg,
        &mut print_progress,
    ))?;
    let cost = prices.cost_usd(model, out.meter.usage);
    let versions = versions(&values, &out, cost);
    for ed in out
        .edits
        .iter()
        .filter(|e| e.accepted && e.new_value != e.old_value)
    {
        println!(
            "{}: edited ({} rejected attempts)\n{}",
            ed.target,
            ed.rejected.len(),
            unified(&ed.target, &ed.old_value, &ed.new_value)
        );
    }
    write_exports(&args.out, &versions, &[], &args.export)?;
    eprintln!("wrote {}", args.out.display());
    Ok(ExitCode::SUCCESS)
}
