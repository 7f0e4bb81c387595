//! The diagnostic report of the demo's attributed failures: counts per type and stage, top ops,
//! rule-based patterns, an LLM summary through a scripted provider; HTML escapes trace text and
//! is self-contained; Markdown tables stay intact. Writes `tests/e2e/artifacts/report.html` for
//! the browser e2e test.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed expectation should panic

use memtrace::attribution::InfoFlow;
use memtrace::format::{load, LoadOptions};
use memtrace::provider::{Script, ScriptedLlm};
use memtrace::report::{self, html, markdown};

fn demo_report() -> report::Report {
    let t = load(include_bytes!("../www/demo.json"), LoadOptions::default())
        .unwrap()
        .trace;
    let infoflow = InfoFlow::default();
    let atts: Vec<_> = t
        .cases
        .iter()
        .map(|c| infoflow.attribute(&t, c).unwrap())
        .collect();
    let mut cases = report::cases_from("demo.json", &t, &atts);
    // Trace text is data: it must come out escaped.
    cases[0].query = "<script>alert(1)</script> & \"quotes\" | pipe".into();
    report::build("memtrace diagnostic report: demo", cases)
}

#[test]
fn counts_and_patterns() {
    let r = demo_report();
    let n = r.cases.len();
    assert!(n >= 5);
    assert_eq!(r.by_type.values().sum::<usize>(), n);
    assert_eq!(r.by_stage.values().sum::<usize>(), n);
    assert_eq!(r.top_ops.iter().map(|(_, k)| k).sum::<usize>(), n);
    assert!(r.top_ops.windows(2).all(|w| w[0].1 >= w[1].1));
    for (t, k) in &r.by_type {
        assert!(
            r.patterns
                .iter()
                .any(|p| p.starts_with(&format!("{t}: {k} of {n}"))),
            "{:?}",
            r.patterns
        );
    }
    println!(
        "by type {:?}\nby stage {:?}\ntop ops {:?}",
        r.by_type, r.by_stage, r.top_ops
    );
}

#[test]
fn html_is_self_contained_and_escaped_and_markdown_keeps_tables() {
    let mut r = demo_report();
    let llm = ScriptedLlm::new(serde_json::from_str::<Script>(r#"{"steps": [{"match_last": "TASK: summarize", "reply": {"text": "- Most failures start at extraction <b>."}}], "fallback": "error"}"#).unwrap());
    futures_executor::block_on(report::add_llm_summary(&llm, &mut r)).unwrap();
    let req = &llm.requests()[0];
    assert!(req.messages[1].content.contains("<<<BEGIN case 1>>>"));
    let page = html::render(&r);
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(
        !page.contains("<script")
            && page.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quotes&quot;")
    );
    assert!(
        page.contains("extraction &lt;b&gt;."),
        "the LLM summary is escaped too"
    );
    assert!(
        !page.contains("http://")
            || page.matches("http://").count()
                == page.matches("http://www.w3.org/2000/svg").count(),
        "no external resource"
    );
    assert_eq!(page.matches("<svg").count(), 3);
    assert_eq!(page.matches("<tr>").count(), r.cases.len() + 1);
    let md = markdown::render(&r);
    assert!(md.contains("\\| pipe"));
    let case_rows = md.lines().filter(|l| l.starts_with("| demo.json")).count();
    assert_eq!(case_rows, r.cases.len());
    assert!(md.contains("Summary (LLM-written)"));
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("report.html"), &page).unwrap();
    std::fs::write(dir.join("report.md"), &md).unwrap();
}
