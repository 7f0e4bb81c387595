//! `memtrace`: the native command line. File I/O and printing live here; the work is the core's.

mod info;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "memtrace", version, about = "Why did the memory system answer wrongly?")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print a summary of each trace file: format, sessions, operations, variables, edges, failures.
    Info(info::Args),
    /// Send one chat request with the LLM options (checks provider settings; used by tests).
    #[command(hide = true)]
    LlmPing(memtrace_cli::llm::PingArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Info(args) => info::run(&args),
        Command::LlmPing(args) => memtrace_cli::llm::ping(&args).map(|()| ExitCode::SUCCESS),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
