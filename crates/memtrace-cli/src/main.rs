//! `memtrace`: the native command line. File I/O and printing live here; the work is the core's.

mod convert;
mod gen;
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
    /// Write any readable trace (OTLP, Langfuse, smartcomment) as smartcomment JSON.
    Convert(convert::Args),
    /// Write a synthetic smartcomment trace of about N variables (deterministic per seed).
    Gen(gen::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Info(args) => info::run(&args),
        Command::Convert(args) => convert::run(&args),
        Command::Gen(args) => gen::run(&args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
