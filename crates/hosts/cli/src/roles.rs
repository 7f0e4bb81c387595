//! `memtrace roles FILE [--json] [--role NAME=ROLE …]`: each op name's pipeline role, how many
//! ops have it, and why (inferred from what the ops read and write; names only break ties).

use std::path::PathBuf;
use std::process::ExitCode;

use memtrace::attribution::{RoleConfig, Roles};

#[derive(clap::Args)]
pub struct Args {
    /// A trace file (any readable format), or a project bundle saved by the page (`-`: stdin).
    file: PathBuf,
    /// One JSON object per op name.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    roles: RoleArgs,
}

/// The roles a command reads a trace with: the bundle's overrides and `--role` specs.
#[derive(clap::Args)]
pub struct RoleArgs {
    /// Set an op name's role, over what structure says (repeatable).
    #[arg(long = "role", value_name = "NAME=ROLE")]
    roles: Vec<String>,
    #[command(flatten)]
    read: crate::rules::ReadArgs,
}

impl RoleArgs {
    /// The trace in `file` (any readable format, or the trace on screen in a bundle the page
    /// saved) and the roles config: the bundle's overrides, with `--role NAME=ROLE` specs on top.
    pub fn load(&self, file: &std::path::Path) -> anyhow::Result<(memtrace::Trace, RoleConfig)> {
        let rules = crate::rules::RuleArgs {
            read: self.read,
            ..crate::rules::RuleArgs::default()
        };
        let input = crate::input::read_one(file, &rules, &self.roles)?;
        Ok((input.trace, input.roles))
    }
}

pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let (trace, cfg) = args.roles.load(&args.file)?;
    let names = Roles::infer(&trace, &cfg).by_name(&trace);
    if args.json {
        for n in &names {
            println!("{}", serde_json::to_string(n)?);
        }
        return Ok(ExitCode::SUCCESS);
    }
    let width = names.iter().map(|n| n.op_name.len()).max().unwrap_or(0);
    for n in &names {
        let others: Vec<String> = n
            .other_roles
            .iter()
            .map(|(r, c)| format!("{r} ×{c}"))
            .collect();
        let others = if others.is_empty() {
            String::new()
        } else {
            format!(" (also {})", others.join(", "))
        };
        println!(
            "{:width$}  {:10} ×{:<5} {:9} {}{others}",
            n.op_name,
            n.role.as_str(),
            n.count,
            format!(
                "[{}]",
                serde_json::to_value(n.basis)?.as_str().unwrap_or("")
            ),
            n.reason,
        );
    }
    Ok(ExitCode::SUCCESS)
}
