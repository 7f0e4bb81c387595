//! Every `memtrace …` command line in the code blocks of README.md (its 30-second examples) and
//! docs/usage.md (every command) names a real subcommand and only flags that subcommand has: each
//! is checked against `memtrace SUBCOMMAND --help`, so a renamed or dropped flag fails here
//! instead of in a user's shell.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::process::Command;

/// The `memtrace` command lines of `file`'s fenced code blocks (continuations joined).
fn command_lines(file: &str) -> Vec<String> {
    let text = std::fs::read_to_string(common::repo_root().join(file)).unwrap();
    let (mut inside, mut out, mut pending) = (false, Vec::new(), String::new());
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            inside = !inside;
            continue;
        }
        if !inside {
            continue;
        }
        let code = line.split(" # ").next().unwrap_or("").trim_end();
        pending.push_str(code.trim_end_matches('\\'));
        if code.ends_with('\\') {
            continue;
        }
        let full = std::mem::take(&mut pending);
        if let Some(at) = full.find("memtrace ") {
            let before = &full[..at];
            if before.trim().is_empty() || before.ends_with("| ") {
                out.push(full[at..].to_owned());
            }
        }
    }
    out
}

fn help(subcommand: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_memtrace"))
        .args(subcommand)
        .arg("--help")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "memtrace {subcommand:?} --help failed"
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn readme_command_lines_use_real_subcommands_and_flags() {
    check_command_lines("README.md", 5);
}

#[test]
fn usage_command_lines_use_real_subcommands_and_flags() {
    check_command_lines("docs/usage.md", 15);
}

/// Checks each command line of `file` (at least `min` of them) against `memtrace … --help`.
fn check_command_lines(file: &str, min: usize) {
    let lines = command_lines(file);
    assert!(
        lines.len() >= min,
        "{file}: found only {} command lines",
        lines.len()
    );
    for line in &lines {
        let words: Vec<&str> = line.split_whitespace().skip(1).collect();
        // Subcommands are the leading lower-case words (`bench gen`), up to a flag or an argument.
        let mut subs: Vec<&str> = words
            .iter()
            .take_while(|w| {
                !w.starts_with('-') && w.chars().all(|c| c.is_ascii_lowercase() || c == '-')
            })
            .copied()
            .take(2)
            .collect();
        // Keep only the words that really are subcommands (`info trace.json` has one).
        while subs.len() > 1 && !help(&subs[..1]).contains(&format!("  {}", subs[1])) {
            subs.pop();
        }
        let text = help(&subs);
        for flag in words.iter().filter(|w| w.starts_with("--")) {
            let flag = flag.split('=').next().unwrap();
            let listed = [" ", "\n", "=", ","]
                .iter()
                .any(|end| text.contains(&format!("{flag}{end}")));
            assert!(
                listed,
                "{file} line `{line}`: `memtrace {}` has no {flag}",
                subs.join(" ")
            );
        }
    }
}
