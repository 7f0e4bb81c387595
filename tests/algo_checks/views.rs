//! Checks of search, start points and the agent renderings.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a failed unwrap is a failed test

use memtrace::algo::render::{
    flat_log_blocks, render_flat_log, render_op_xml, render_preview, render_value,
    render_value_hits, FlatLog,
};
use memtrace::algo::start_points::{message_vars, start_point_query, EmbeddingRetriever};
use memtrace::algo::{
    evaluate_start_points, reciprocal_rank_fusion, start_points, AlgoError, GraphIndex,
    MessageIndex, RegexOptions, SearchIndex, StartPointOptions,
};

use super::{graphs, op, strs, var};
use crate::common::TraceBuilder;

pub fn bm25_search_ranks_with_offsets() {
    let t = graphs::memory();
    let ix = SearchIndex::build(&t);
    let hits = ix.bm25("pasta with PESTO", 3);
    let top = hits.first().expect("a hit");
    assert_eq!(
        top.id, "U1:D1:4@1",
        "the only text with both rare terms wins: {hits:?}"
    );
    assert_eq!(hits[1].id, "facts-4@1", "{hits:?}");
    let text = ix.text(top.var).unwrap();
    let found: String = text
        .chars()
        .skip(top.start)
        .take(top.end - top.start)
        .collect();
    assert_eq!(found.to_lowercase(), "pasta");
    assert!(top.snippet.contains("pasta"));
    assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
    assert!(ix.bm25("zzz", 5).is_empty());
}

pub fn regex_search_reports_char_offsets() {
    let t = graphs::memory();
    let ix = SearchIndex::build(&t);
    let opts = RegexOptions {
        case_insensitive: true,
        max_hits: 10,
        context_chars: 5,
        literal: false,
    };
    let hits = ix.regex("r.sum.", &opts).unwrap();
    assert_eq!(hits.len(), 1);
    let h = &hits[0];
    assert_eq!(h.id, "U1:D1:3@1");
    let text = ix.text(h.var).unwrap();
    let found: String = text.chars().skip(h.start).take(h.end - h.start).collect();
    assert_eq!(found, "résumé");
    assert!(
        h.snippet.starts_with('…') && h.snippet.contains("résumé"),
        "{}",
        h.snippet
    );
    let capped = ix
        .regex(
            "memory",
            &RegexOptions {
                max_hits: 2,
                ..opts.clone()
            },
        )
        .unwrap();
    assert_eq!(capped.len(), 2);
    let lit = ix
        .regex(
            "<facts>",
            &RegexOptions {
                literal: true,
                ..opts
            },
        )
        .unwrap();
    assert_eq!(
        lit.iter().map(|h| h.id.as_str()).collect::<Vec<_>>(),
        vec!["fact-extraction-prompt@1"]
    );
}

pub fn start_points_find_the_evidence() {
    let t = graphs::memory();
    let msgs: Vec<String> = message_vars(&t)
        .iter()
        .map(|&v| t.var(v).full_node_id.clone())
        .collect();
    assert_eq!(
        msgs,
        strs(&["U1:D1:1@1", "U1:D1:2@1", "U1:D1:3@1", "U1:D1:4@1"])
    );
    let opts = StartPointOptions {
        limit: 2,
        ..StartPointOptions::default()
    };
    let ix = MessageIndex::build(&t, &opts);
    let case = &t.cases[0];
    let q = start_point_query(case);
    assert_eq!(q, "When did Mel go camping?\nJune 2023");
    let sp = start_points(&ix, &q, &opts, &[]);
    assert_eq!(sp.len(), 2);
    assert_eq!(t.var(sp[0].0).full_node_id, "U1:D1:1@1");
    assert!(sp[0].1 > sp[1].1);
    // A third retriever (e.g. embeddings) is fused like the other two: each list holds
    // limit × multiplier candidates, and scores are Σ 1 / (60 + rank).
    let m4 = t.var_by_id("U1:D1:4@1").unwrap();
    let m3 = t.var_by_id("U1:D1:3@1").unwrap();
    let dense = EmbeddingRetriever {
        messages: vec![(m3, vec![0.6, 0.8]), (m4, vec![1.0, 0.0])],
        queries: [(q.clone(), vec![1.0, 0.0])].into_iter().collect(),
    };
    let with_dense = start_points(&ix, &q, &opts, &[&dense]);
    let lists = vec![
        ix.bm25_ranking(&q, 4),
        ix.ngram_ranking(&q, 4),
        vec![m4, m3],
    ];
    let mut expected = reciprocal_rank_fusion(&lists, 60.0);
    expected.truncate(2);
    assert_eq!(with_dense, expected);
    let m4_score = |list: &[(memtrace::model::VarIx, f64)]| {
        list.iter().find(|p| p.0 == m4).map_or(0.0, |p| p.1)
    };
    let alone = reciprocal_rank_fusion(&lists[..2], 60.0);
    assert!(m4_score(&reciprocal_rank_fusion(&lists, 60.0)) > m4_score(&alone));
    let report = evaluate_start_points(&t, &opts);
    assert_eq!(report.cases.len(), 1);
    assert_eq!(report.cases[0].recall, Some(1.0));
    assert_eq!(report.mean, Some(1.0));
}

pub fn op_xml_has_roles_ids_values_and_escapes() {
    let t = graphs::memory();
    let page = render_op_xml(&t, t.op_by_id("op-e1").unwrap(), 10_000, 0).unwrap();
    assert_eq!(page.pages, 1);
    let x = &page.text;
    assert!(
        x.starts_with("<operation id=\"op-e1\" name=\"extract_facts\" category=\"extraction\""),
        "{x}"
    );
    assert!(x.contains("<comment>does extract_facts</comment>"));
    assert!(x.contains("<variable role=\"input\" id=\"U1:D1:1@1\" category=\"message\">"));
    assert!(x.contains("<variable role=\"output\" id=\"facts-1@1\" category=\"facts\">"));
    assert!(x.contains("Use &lt;facts&gt; tags &amp; be brief."), "{x}");
    assert!(x.contains("camping with my kids"));
    assert!(x.ends_with("</operation>"));
    let r = render_op_xml(&t, t.op_by_id("op-r").unwrap(), 10_000, 0).unwrap();
    assert!(r
        .text
        .contains("role=\"intermediate\" id=\"raw-response@1\""));
    assert_eq!(
        render_op_xml(&t, t.op_by_id("op-e1").unwrap(), 10_000, 0).unwrap(),
        page,
        "deterministic"
    );
}

pub fn renders_stay_within_budget_on_every_page() {
    let t = graphs::memory();
    let budget = 300;
    let e1 = t.op_by_id("op-e1").unwrap();
    let first = render_op_xml(&t, e1, budget, 0).unwrap();
    assert!(first.pages > 1, "a small budget must paginate");
    let mut all = String::new();
    for p in 0..first.pages {
        let page = render_op_xml(&t, e1, budget, p).unwrap();
        assert!(
            page.text.chars().count() <= budget,
            "page {p} has {} chars",
            page.text.chars().count()
        );
        all.push_str(&page.text);
    }
    for needle in [
        "id=\"U1:D1:1@1\"",
        "id=\"facts-1@1\"",
        "id=\"fact-extraction-prompt@1\"",
    ] {
        assert!(all.contains(needle), "{needle} missing across pages");
    }
    let log = render_flat_log(&t, budget, 0).unwrap();
    for p in 0..log.pages {
        assert!(render_flat_log(&t, budget, p).unwrap().text.chars().count() <= budget);
    }
    assert!(matches!(
        render_flat_log(&t, budget, log.pages),
        Err(AlgoError::PageOutOfRange { .. })
    ));
}

pub fn preview_has_no_values() {
    let t = graphs::memory();
    let page = render_preview(&t, var(&t, "memory-unit-1@2"), 10_000, 0).unwrap();
    let x = &page.text;
    assert!(x.starts_with("<node id=\"memory-unit-1@2\""), "{x}");
    assert!(x.contains("previous=\"memory-unit-1@1\" next=\"memory-unit-1@3\""));
    assert!(x.contains("<produced-by op=\"op-u2\""));
    assert!(x.contains("<read-by op=\"op-d1\""));
    assert!(
        x.contains("id=\"facts-2@1\""),
        "the op's other variables are listed"
    );
    assert!(!x.contains("adoption"), "no values in a preview: {x}");
    let op_page = render_preview(&t, op(&t, "op-e1"), 10_000, 0).unwrap();
    assert!(op_page.text.contains("role=\"input\" id=\"U1:D1:1@1\""));
    assert!(!op_page.text.contains("camping"));
}

pub fn value_window_and_hits() {
    let t = graphs::memory();
    let m3 = t.var_by_id("U1:D1:3@1").unwrap();
    let ix = SearchIndex::build(&t);
    let text = ix.text(m3).unwrap().to_owned();
    let first = render_value(&t, m3, 0, 200, 0).unwrap();
    assert!(first.pages > 1);
    let mut body = String::new();
    for p in 0..first.pages {
        let page = render_value(&t, m3, 0, 200, p).unwrap();
        assert!(page.text.chars().count() <= 200);
        let start = page.text.find('\n').unwrap() + 1;
        let end = page.text.find("\n</value>").unwrap();
        body.push_str(&page.text[start..end]);
    }
    assert_eq!(body, text);
    let from = render_value(&t, m3, 20, 10_000, 0).unwrap();
    assert!(from
        .text
        .contains(&text.chars().skip(20).collect::<String>()));
    assert!(from.text.contains("from=\"20\""));
    let opts = RegexOptions {
        context_chars: 4,
        ..RegexOptions::default()
    };
    let hits = render_value_hits(&t, m3, "sun\\w+", &opts, 10_000, 0).unwrap();
    assert!(hits.text.contains("count=\"1\""), "{}", hits.text);
    assert!(hits.text.contains("d a [[sunset]] ove"), "{}", hits.text);
}

pub fn flat_log_is_time_ordered_without_ids() {
    let t = graphs::memory();
    let blocks = flat_log_blocks(&t).unwrap();
    assert_eq!(blocks.len(), t.ops.len());
    let names: Vec<&str> = blocks
        .iter()
        .map(|b| b.lines().next().unwrap().split(' ').nth(1).unwrap())
        .collect();
    assert_eq!(
        names[..3],
        ["extract_facts", "update_memory", "extract_facts"]
    );
    assert_eq!(names.last(), Some(&"llm-judge"));
    let all = blocks.concat();
    assert!(!all.contains("op-"), "no op ids");
    assert!(!all.contains("@1"), "no node ids");
    assert!(all.contains("### input (message):"));
    assert!(all.contains("### intermediate (llm_response):\n<ctx>painted</ctx>"));
    assert!(all.contains("I do not know"));
    let log = FlatLog::build(&t).unwrap();
    assert_eq!(log.text, all);
    let opts = RegexOptions {
        case_insensitive: true,
        context_chars: 3,
        ..RegexOptions::default()
    };
    let hits = log.grep("RÉSUMÉ", &opts).unwrap();
    assert_eq!(hits.len(), 1);
    let h = &hits[0];
    assert_eq!(log.window(h.start, h.end - h.start), "résumé");
    assert_eq!(
        log.ops[h.block],
        t.op_by_id("op-e3").unwrap(),
        "the match is in the extraction of m3"
    );
    assert_eq!(h.snippet, "…→ résumé. T…");
    let all_hits = log
        .grep("(?m)^## extract_facts", &RegexOptions::default())
        .unwrap();
    let blocks: Vec<usize> = all_hits.iter().map(|h| h.block).collect();
    assert_eq!(
        blocks,
        vec![0, 2, 5, 7],
        "one header per extraction, in log order"
    );
    assert_eq!(log.char_len(), all.chars().count());
}

pub fn errors_are_typed() {
    let mut b = TraceBuilder::new();
    b.var("a", 1, "x", "'1'");
    let raw = b.raw();
    assert!(matches!(
        GraphIndex::build(&raw),
        Err(AlgoError::Stale { .. })
    ));
    let t = graphs::memory();
    let ix = SearchIndex::build(&t);
    let err = ix.regex("(unclosed", &RegexOptions::default()).unwrap_err();
    assert!(err.to_string().contains("(unclosed"), "{err}");
    let err = render_op_xml(&t, t.op_by_id("op-e1").unwrap(), 10_000, 3).unwrap_err();
    assert_eq!(err, AlgoError::PageOutOfRange { page: 3, pages: 1 });
}
