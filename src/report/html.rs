//! The report as one self-contained HTML page: inline CSS, bar charts as inline SVG, no script,
//! every piece of trace text escaped.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::Report;

/// Escapes text for HTML content and attribute values.
pub use crate::text::escape_markup as escape;

const CSS: &str = "body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:70rem;color:#222;padding:0 1rem}h1{font-size:1.6rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ddd}table{border-collapse:collapse;width:100%;font-size:.9rem}td,th{border:1px solid #ddd;padding:.3rem .5rem;vertical-align:top;text-align:left}th{background:#f4f4f4}.charts{display:flex;flex-wrap:wrap;gap:2rem}code{font-size:.8rem;color:#555}.summary{white-space:pre-wrap;background:#f8f8f8;padding:.8rem;border-left:3px solid #4a7}";

/// A horizontal bar chart of `rows` as inline SVG.
pub fn bar_chart(title: &str, rows: &[(String, usize)]) -> String {
    let max = rows.iter().map(|(_, n)| *n).max().unwrap_or(0).max(1);
    let height = 28 + rows.len() * 24;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"520\" height=\"{height}\" role=\"img\" aria-label=\"{}\"><text x=\"0\" y=\"16\" font-size=\"14\" font-weight=\"bold\">{}</text>",
        escape(title),
        escape(title)
    );
    for (i, (label, n)) in rows.iter().enumerate() {
        let y = 28 + i * 24;
        let w = *n * 220 / max;
        let short = crate::text::fit(label, 38);
        let _ = write!(
            s,
            "<text x=\"0\" y=\"{}\" font-size=\"12\"><title>{}</title>{}</text><rect x=\"250\" y=\"{}\" width=\"{w}\" height=\"16\" fill=\"#4a7\"/><text x=\"{}\" y=\"{}\" font-size=\"12\">{n}</text>",
            y + 13,
            escape(label),
            escape(&short),
            y + 2,
            255 + w,
            y + 13
        );
    }
    s.push_str("</svg>");
    s
}

fn rows(m: &BTreeMap<String, usize>) -> Vec<(String, usize)> {
    m.iter().map(|(k, v)| (k.clone(), *v)).collect()
}

/// Renders `report` as a self-contained HTML page.
pub fn render(report: &Report) -> String {
    let title = escape(&report.title);
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title><style>{CSS}</style></head><body>\n<h1>{title}</h1>\n<p id=\"count\">{} attributed failures.</p>\n",
        report.cases.len()
    );
    out.push_str("<h2>Patterns</h2>\n");
    if let Some(s) = &report.summary {
        let _ = writeln!(
            out,
            "<p>Summary (LLM-written):</p><div class=\"summary\">{}</div>",
            escape(s)
        );
    }
    out.push_str("<ul id=\"patterns\">");
    for p in &report.patterns {
        let _ = write!(out, "<li>{}</li>", escape(p));
    }
    out.push_str("</ul>\n<h2>Counts</h2>\n<div class=\"charts\">");
    out.push_str(&bar_chart(
        "Failures per error type",
        &rows(&report.by_type),
    ));
    out.push_str(&bar_chart("Failures per stage", &rows(&report.by_stage)));
    out.push_str(&bar_chart(
        "Operations that fail most",
        &report.top_ops.iter().take(8).cloned().collect::<Vec<_>>(),
    ));
    out.push_str("</div>\n<h2>Cases</h2>\n<table id=\"cases\"><tr><th>source</th><th>question</th><th>gold</th><th>prediction</th><th>error type</th><th>operation</th><th>reason</th></tr>\n");
    for c in &report.cases {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}<br><code>{}</code></td><td>{}</td></tr>",
            escape(&c.source), escape(&c.query), escape(&c.golden_answers.join("; ")), escape(&c.prediction),
            c.error_type, escape(&c.op_name), escape(&c.op_id), escape(&c.reason)
        );
    }
    out.push_str("</table>\n</body></html>\n");
    out
}
