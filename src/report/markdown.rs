//! The report as Markdown (table cells escaped).

use std::fmt::Write as _;

use super::Report;

fn cell(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace(['\n', '\r'], " ")
}

/// Renders `report` as Markdown.
pub fn render(report: &Report) -> String {
    let mut out = format!(
        "# {}\n\n{} attributed failures.\n\n",
        cell(&report.title),
        report.cases.len()
    );
    out.push_str("## Patterns\n\n");
    if let Some(s) = &report.summary {
        let _ = writeln!(out, "Summary (LLM-written):\n\n{s}\n");
    }
    for p in &report.patterns {
        let _ = writeln!(out, "- {p}");
    }
    out.push_str("\n## Failures per error type\n\n| error type | failures |\n|---|---:|\n");
    for (k, n) in &report.by_type {
        let _ = writeln!(out, "| {} | {n} |", cell(k));
    }
    out.push_str("\n## Failures per stage\n\n| stage | failures |\n|---|---:|\n");
    for (k, n) in &report.by_stage {
        let _ = writeln!(out, "| {} | {n} |", cell(k));
    }
    out.push_str("\n## Operations that fail most\n\n| operation | failures |\n|---|---:|\n");
    for (k, n) in &report.top_ops {
        let _ = writeln!(out, "| {} | {n} |", cell(k));
    }
    out.push_str("\n## Cases\n\n| source | question | gold | prediction | error type | operation | reason |\n|---|---|---|---|---|---|---|\n");
    for c in &report.cases {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} (`{}`) | {} |",
            cell(&c.source),
            cell(&c.query),
            cell(&c.golden_answers.join("; ")),
            cell(&c.prediction),
            c.error_type,
            cell(&c.op_name),
            cell(&c.op_id),
            cell(&c.reason)
        );
    }
    out
}
