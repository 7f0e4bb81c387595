//! The closed loop's page: accuracy per round on training and held-out conversations as an
//! inline SVG chart, and each prompt edit with its diff and lineage (the failed cases and the
//! aggregated feedback that caused it). Self-contained, every text escaped.

use std::fmt::Write as _;

use memtrace::optimize::PromptVersion;
use memtrace::report::html::escape;
use memtrace::text::diff::{word_changes, ChangeTag};

use super::LoopState;

/// Grouped bars per round: train (green) and held-out (blue), 0–100 %.
pub fn accuracy_chart_svg(series: &[(usize, f64, Option<f64>)]) -> String {
    let (h, top, left, group) = (220usize, 20usize, 40usize, 60usize);
    let width = left + group * series.len().max(1) + 120;
    let mut s = format!("<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"accuracy-chart\" width=\"{width}\" height=\"{}\" role=\"img\" aria-label=\"accuracy per round\">", h + top + 30);
    for pct in [0usize, 50, 100] {
        let y = top + h - h * pct / 100;
        let _ = write!(s, "<line x1=\"{left}\" x2=\"{}\" y1=\"{y}\" y2=\"{y}\" stroke=\"#ddd\"/><text x=\"0\" y=\"{}\" font-size=\"11\">{pct}%</text>", width - 110, y + 4);
    }
    #[allow(clippy::cast_sign_loss)] // clamped to 0..=1 first
    let bar = |a: f64| (a.clamp(0.0, 1.0) * h as f64).round() as usize;
    for (i, (round, train, held)) in series.iter().enumerate() {
        let x = left + 8 + i * group;
        let t = bar(*train);
        let _ = write!(s, "<rect class=\"train\" x=\"{x}\" y=\"{}\" width=\"20\" height=\"{t}\" fill=\"#4a7\"><title>round {round} train {:.1}%</title></rect>", top + h - t, train * 100.0);
        if let Some(hv) = held {
            let b = bar(*hv);
            let _ = write!(s, "<rect class=\"heldout\" x=\"{}\" y=\"{}\" width=\"20\" height=\"{b}\" fill=\"#47a\"><title>round {round} held-out {:.1}%</title></rect>", x + 22, top + h - b, hv * 100.0);
        }
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{}\" font-size=\"11\">r{round}</text>",
            x + 10,
            top + h + 16
        );
    }
    let lx = width - 100;
    let _ = write!(s, "<rect x=\"{lx}\" y=\"{top}\" width=\"10\" height=\"10\" fill=\"#4a7\"/><text x=\"{}\" y=\"{}\" font-size=\"11\">train</text><rect x=\"{lx}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"#47a\"/><text x=\"{}\" y=\"{}\" font-size=\"11\">held-out</text></svg>", lx + 14, top + 9, top + 16, lx + 14, top + 25);
    s
}

const CSS: &str = "body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:70rem;color:#222;padding:0 1rem}table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:.3rem .5rem;text-align:left;vertical-align:top}pre{background:#f6f6f6;padding:.6rem;overflow:auto;font-size:.8rem;white-space:pre-wrap}.add{color:#186a2e}.del{color:#a11}ins{background:#dfd;text-decoration:none}del{background:#fdd}";

fn parent_value<'a>(state: &'a LoopState, v: &PromptVersion) -> &'a str {
    state
        .versions
        .iter()
        .find(|p| p.name == v.name && Some(p.version) == v.parent)
        .map_or("", |p| p.value.as_str())
}

fn diff_html(diff: &str) -> String {
    diff.lines()
        .map(|l| {
            let class = if l.starts_with('+') && !l.starts_with("+++") {
                " class=\"add\""
            } else if l.starts_with('-') && !l.starts_with("---") {
                " class=\"del\""
            } else {
                ""
            };
            format!("<span{class}>{}</span>", escape(l))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// An inline word diff: removed words in `<del>`, added words in `<ins>`.
pub fn word_diff_html(old: &str, new: &str) -> String {
    word_changes(old, new)
        .into_iter()
        .map(|(tag, v)| {
            let text = escape(v);
            match tag {
                ChangeTag::Delete => format!("<del>{text}</del>"),
                ChangeTag::Insert => format!("<ins>{text}</ins>"),
                ChangeTag::Equal => text,
            }
        })
        .collect()
}

/// The loop as a self-contained HTML page.
pub fn loop_html(state: &LoopState) -> String {
    let mut out = format!("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>memtrace optimization</title><style>{CSS}</style></head><body>\n<h1>Prompt optimization: accuracy per round</h1>\n");
    out.push_str(&accuracy_chart_svg(&state.series()));
    out.push_str("\n<table id=\"rounds\"><tr><th>round</th><th>train</th><th>held-out</th><th>failures by type</th><th>not optimizable</th><th>optimizer calls</th><th>tokens in/out</th></tr>\n");
    for r in &state.rounds {
        let types: Vec<String> = r.by_type.iter().map(|(k, v)| format!("{k} {v}")).collect();
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}/{}</td><td>{}/{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}/{}</td></tr>",
            r.round, r.train.right, r.train.total, r.heldout.right, r.heldout.total, escape(&types.join(", ")),
            r.not_optimizable, r.meter.calls, r.meter.usage.input_tokens, r.meter.usage.output_tokens
        );
    }
    out.push_str("</table>\n<h2>Prompt versions</h2>\n");
    for v in state.versions.iter().filter(|v| v.parent.is_some()) {
        let _ = writeln!(
            out,
            "<section class=\"version\"><h3>{}@{} (from @{}, round {})</h3><p>Score when used: {}. Cost: {}.</p><p>Caused by {} failed case(s): <code>{}</code></p><p>Aggregated feedback:</p><pre>{}</pre><p>Rationale:</p><pre>{}</pre><p>Change:</p><pre class=\"words\">{}</pre><pre class=\"diff\">{}</pre></section>",
            escape(&v.name), v.version, v.parent.unwrap_or(0), v.round.map_or("-".into(), |r| r.to_string()),
            v.score.map_or("not yet run".into(), |s| format!("{:.1} %", s * 100.0)),
            v.cost_usd.map_or("no price for the model".into(), |c| format!("${c:.6}")),
            v.cases.len(), escape(&v.cases.join(", ")), escape(&v.feedback), escape(&v.rationale), word_diff_html(parent_value(state, v), &v.value), diff_html(&v.diff)
        );
    }
    out.push_str("</body></html>\n");
    out
}
