//! `memtrace`: the native command line. File I/O and printing live here; the work is the core's.

mod bench_gen;
mod info;

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
    /// Benchmarks: `bench gen` writes MemTraceBench files with injected, verified faults.
    Bench(bench_gen::BenchArgs),
    /// Regenerate the demo trace (household robot, simulated LLM).
    Demo(bench_gen::DemoArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Info(args) => info::run(&args),
        Command::Bench(args) => bench_gen::run_bench(&args),
        Command::Demo(args) => bench_gen::run_demo(&args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
