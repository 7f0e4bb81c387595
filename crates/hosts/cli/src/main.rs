//! `memtrace`: the native command line. File I/O and printing live here; the work is the core's.

mod attribute;
mod bench_gen;
mod compare;
mod convert;
mod decisive;
mod eval;
mod gen;
mod info;
mod input;
mod obfuscate;
mod optimize;
mod progress;
mod report;
mod roles;
mod rules;
mod search;
mod start_points;
mod story;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "memtrace",
    version,
    about = "Why did the memory system answer wrongly?"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print a summary of each trace file: format, sessions, operations, variables, edges, failures.
    Info(info::Args),
    /// Attribute each failed case of a trace to its earliest decisive faulty operation.
    Attribute(attribute::Args),
    /// Score a method against the annotations of MemTraceBench-format files.
    Eval(eval::Args),
    /// Search variable values: BM25 ranking, or every regex match; hits with ids and snippets.
    Search(search::Args),
    /// Rank start messages for each failed case and measure recall@k against the gold evidence.
    StartPoints(start_points::Args),
    /// Send one chat request with the LLM options (checks provider settings; used by tests).
    #[command(hide = true)]
    LlmPing(memtrace_native::llm::PingArgs),
    /// Benchmarks: `bench gen` writes MemTraceBench files with injected, verified faults.
    Bench(bench_gen::BenchArgs),
    /// Regenerate the demo trace (household robot, simulated LLM).
    Demo(bench_gen::DemoArgs),
    /// Set two runs side by side (e.g. two rounds of `optimize`): fixed / broken / still failing.
    Compare(compare::Args),
    /// Write any readable trace (OTLP, Langfuse, smartcomment) as smartcomment JSON.
    Convert(convert::Args),
    /// Replace every name a user chose (ops, spans, variables, sessions, categories, metadata
    /// keys, comments) by a stable token, values kept, in the file's own format.
    Obfuscate(obfuscate::Args),
    /// Write a synthetic smartcomment trace of about N variables (deterministic per seed).
    Gen(gen::Args),
    /// Optimize prompts from attributed failures: one step over trace files, or the closed loop
    /// over conversations; export as update_results, mem0 or text.
    Optimize(Box<optimize::Args>),
    /// Write the diagnostic report (HTML and Markdown) of the failures in trace files.
    Report(report::Args),
    /// Print each op name's pipeline role (inferred from what its ops read and write), count and reason.
    Roles(roles::Args),
    /// Print each failed case's story: its decisive path from the evidence to the judge, the
    /// decisive op marked, the answer's words and version diffs shown.
    Story(story::Args),
    /// Print a shell completion script: `memtrace completions bash > /etc/bash_completion.d/memtrace`
    /// (bash, zsh, fish, elvish, powershell).
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

/// A reader that stops reading (`memtrace story FILE | head`) ends the output quietly, as Unix
/// tools do, not with `println!`'s panic on the closed pipe.
fn quiet_on_closed_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or_default();
        if message.starts_with("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(0);
        }
        default(info);
    }));
}

fn main() -> ExitCode {
    quiet_on_closed_pipe();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Info(args) => info::run(&args),
        Command::Attribute(args) => attribute::run(&args),
        Command::Eval(args) => eval::run(&args),
        Command::Search(args) => search::run(&args),
        Command::StartPoints(args) => start_points::run(&args),
        Command::LlmPing(args) => memtrace_native::llm::ping(&args).map(|()| ExitCode::SUCCESS),
        Command::Bench(args) => bench_gen::run_bench(&args),
        Command::Demo(args) => bench_gen::run_demo(&args),
        Command::Compare(args) => compare::run(&args),
        Command::Convert(args) => convert::run(&args),
        Command::Gen(args) => gen::run(&args),
        Command::Obfuscate(args) => obfuscate::run(&args),
        Command::Optimize(args) => optimize::run(&args),
        Command::Report(args) => report::run(&args),
        Command::Roles(args) => roles::run(&args),
        Command::Story(args) => story::run(&args),
        Command::Completions { shell } => {
            use clap::CommandFactory;
            let mut cmd = Cli::command();
            clap_complete::generate(shell, &mut cmd, "memtrace", &mut std::io::stdout());
            Ok(ExitCode::SUCCESS)
        }
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            print_error(&e);
            ExitCode::from(memtrace_cli::EXIT_ERROR)
        }
    }
}

/// Prints a command's error on stderr; a file over the size limit also says how to raise it
/// (`--max-bytes`).
fn print_error(e: &anyhow::Error) {
    use memtrace::format::{FormatError, FormatErrorKind, LoadOption};
    use memtrace::session::SessionError;
    let format_error = e.chain().find_map(|cause| {
        cause
            .downcast_ref::<FormatError>()
            .or_else(|| match cause.downcast_ref::<SessionError>() {
                Some(SessionError::Format { error, .. } | SessionError::Bundle { error, .. }) => {
                    Some(error)
                }
                _ => None,
            })
    });
    match format_error.filter(|f| f.kind() == FormatErrorKind::TooLarge) {
        Some(f) => {
            let hint = f.hint(|option| match option {
                LoadOption::Lenient => "--lenient".to_owned(),
                LoadOption::Format => "--format smartcomment|otlp|langfuse".to_owned(),
                LoadOption::MaxBytes(n) => format!("--max-bytes {}", memtrace_cli::size_flag(n)),
            });
            let (first, rest) = hint.split_at(hint.chars().next().map_or(0, char::len_utf8));
            eprintln!("error: {e:#} {}{rest}.", first.to_uppercase());
        }
        None => eprintln!("error: {e:#}"),
    }
}

/// The exit status of a command that ran: 1 when `failures` (failed cases found and
/// `--fail-on-failures` given), else 0.
fn failures_code(failures: bool) -> ExitCode {
    ExitCode::from(u8::from(failures))
}
