//! `memtrace bench gen …` (MemTraceBench files with injected, verified faults) and
//! `memtrace demo --out FILE` (the page's demo trace). Both run the reference memory system
//! with the simulated provider: a rule-based stand-in, not an LLM.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context};
use memtrace_memsys::bench::{generate, BenchFormat, BenchOptions};
use memtrace_memsys::simulated::SimulatedLlm;
use memtrace_memsys::{demo, locomo, Conversation, System};

#[derive(clap::Args)]
pub struct BenchArgs {
    #[command(subcommand)]
    command: BenchCommand,
}

#[derive(clap::Subcommand)]
enum BenchCommand {
    /// Generate MemTraceBench files from LoCoMo conversations with one verified fault per
    /// annotated question, balanced over the five error types (simulated LLM).
    Gen(GenArgs),
}

#[derive(clap::Args)]
pub struct GenArgs {
    /// Folder of LoCoMo conversation files (`26.json`, …).
    #[arg(long)]
    conversations: PathBuf,
    /// Cases wanted per error type.
    #[arg(long, default_value_t = 20)]
    per_type: usize,
    /// Seed: the same seed writes the same files.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Sessions per generated file.
    #[arg(long, default_value_t = 3)]
    sessions_per_file: usize,
    /// Output folder (created if missing).
    #[arg(long)]
    out: PathBuf,
    /// File format: smartcomment (MemTraceBench JSON) or otlp (OTLP JSON Lines as an
    /// instrumented app emits them, plus `<name>.annotations.json` ground truth).
    #[arg(long, default_value = "smartcomment", value_parser = parse_format)]
    format: BenchFormat,
    /// Memory system: mem0, naiverag, evermemos, amem, or random (a topology, names and
    /// faults drawn from --seed; smartcomment only; one file per error type the shape has).
    #[arg(long, default_value = "mem0", value_parser = parse_system)]
    system: SystemArg,
    /// Faults per annotated case: 1, or 2–3 for multi-fault cases (mem0, smartcomment; then
    /// --per-type is the cases wanted in all and each annotation lists its set of ops).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=3))]
    faults: u8,
}

fn parse_format(s: &str) -> Result<BenchFormat, String> {
    match s.to_ascii_lowercase().as_str() {
        "smartcomment" | "memtracebench" | "json" => Ok(BenchFormat::Smartcomment),
        "otlp" | "jsonl" => Ok(BenchFormat::Otlp),
        _ => Err(format!("unknown format {s:?}; use smartcomment or otlp")),
    }
}

/// A reference memory system, or a random shape drawn from the seed.
#[derive(Clone, Copy)]
enum SystemArg {
    Fixed(System),
    Random,
}

fn parse_system(s: &str) -> Result<SystemArg, String> {
    if s.eq_ignore_ascii_case("random") {
        return Ok(SystemArg::Random);
    }
    System::parse(s).map(SystemArg::Fixed).ok_or_else(|| {
        format!(
            "unknown memory system {s:?}; use one of: {}, random",
            System::ALL.map(System::name).join(", ")
        )
    })
}

#[derive(clap::Args)]
pub struct DemoArgs {
    /// Where to write the demo trace (the page embeds `www/demo.json`).
    #[arg(long, default_value = "www/demo.json")]
    out: PathBuf,
    /// Seed of the demo's ids and fault choices.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// Reads every `*.json` LoCoMo conversation in `dir`, sorted by name.
fn read_conversations(dir: &Path) -> anyhow::Result<Vec<Conversation>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read the conversations folder {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    if files.is_empty() {
        bail!(
            "{} holds no *.json LoCoMo conversation files",
            dir.display()
        );
    }
    let mut out = Vec::new();
    for (i, path) in files.iter().enumerate() {
        let bytes =
            std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        let v: serde_json::Value = serde_json::from_slice(&bytes)
            .with_context(|| format!("{} is not JSON", path.display()))?;
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        out.push(
            Conversation::from_json(&v, locomo::sample_index(stem, i + 1))
                .with_context(|| format!("in {}", path.display()))?,
        );
    }
    Ok(out)
}

pub fn run_bench(args: &BenchArgs) -> anyhow::Result<ExitCode> {
    let BenchCommand::Gen(a) = &args.command;
    let convs = read_conversations(&a.conversations)?;
    let system = match a.system {
        SystemArg::Fixed(s) => s,
        SystemArg::Random => return run_random(a, &convs),
    };
    let opts = BenchOptions {
        per_type: a.per_type,
        seed: a.seed,
        sessions_per_file: a.sessions_per_file,
        system,
        format: a.format,
        faults: usize::from(a.faults),
        source: "memtrace bench gen: reference memory system over LoCoMo with the SIMULATED provider (rule-based stand-in, not an LLM)".into(),
        ..BenchOptions::default()
    };
    eprintln!(
        "generating {} traces with the simulated provider (rule-based, not an LLM) over {} conversations…",
        system.layer_type(),
        convs.len()
    );
    let report = futures_executor::block_on(generate(&SimulatedLlm, &convs, &opts))
        .context("benchmark generation failed")?;
    write_files(&a.out, &report.files)?;
    print_report(&report, &a.out);
    let kinds = system.error_types();
    let short = if a.faults > 1 {
        report.kept < a.per_type
    } else {
        kinds
            .iter()
            .any(|t| report.per_type.get(t).copied().unwrap_or(0) < a.per_type)
    };
    if short {
        eprintln!("warning: fewer than {} cases for some error type; add conversations or lower --per-type", a.per_type);
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

pub fn run_demo(args: &DemoArgs) -> anyhow::Result<ExitCode> {
    let bytes = futures_executor::block_on(demo::generate(&SimulatedLlm, args.seed))
        .context("demo generation failed")?;
    if let Some(dir) = args.out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    std::fs::write(&args.out, &bytes)
        .with_context(|| format!("cannot write {}", args.out.display()))?;
    println!(
        "wrote {} ({} bytes; simulated provider)",
        args.out.display(),
        bytes.len()
    );
    Ok(ExitCode::SUCCESS)
}

fn print_report(report: &memtrace_memsys::bench::BenchReport, out: &Path) {
    println!(
        "{} files, {} annotated cases ({} faults planned) in {}",
        report.files.len(),
        report.kept,
        report.planned,
        out.display()
    );
    for (t, n) in &report.per_type {
        println!("  {t}: {n}");
    }
}

fn write_files(out: &Path, files: &[memtrace_memsys::bench::BenchFile]) -> anyhow::Result<()> {
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    for f in files {
        let path = out.join(&f.name);
        std::fs::write(&path, &f.bytes)
            .with_context(|| format!("cannot write {}", path.display()))?;
        if let Some(sidecar) = &f.sidecar {
            let path = out.join(memtrace::format::sidecar::sidecar_name(&f.name));
            std::fs::write(&path, sidecar)
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
    }
    Ok(())
}

/// `bench gen --system random`: one shape drawn from the seed, a file per error type it has.
fn run_random(a: &GenArgs, convs: &[Conversation]) -> anyhow::Result<ExitCode> {
    if a.format != BenchFormat::Smartcomment || a.faults != 1 {
        bail!("--system random writes single-fault smartcomment files only");
    }
    let shape = memtrace_memsys::random_shape::Shape::draw(a.seed);
    eprintln!("random shape of seed {}: {}", a.seed, shape.describe());
    let report = memtrace_memsys::random_shape::generate(convs, a.seed)
        .context("benchmark generation failed")?;
    write_files(&a.out, &report.files)?;
    print_report(&report, &a.out);
    Ok(if report.files.is_empty() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
