//! `scripts/bench`: times the graph engine on generated Mem0-style traces of 10k, 100k and 1M
//! nodes (variables + operations) and prints a table plus the 1M / 100k cost ratio.
//!
//! The generator is deliberately tiny and seeded (an LCG), so runs are comparable; it makes per
//! turn a message, an extraction op (raw response as intermediate, facts as output), an update
//! op that adds a memory unit or writes a new version of an existing one (sometimes a
//! tombstone), and every 20 turns a question: a retrieval op that links the query to 5 unit
//! versions and an answer op reading them.
#![allow(clippy::cast_sign_loss)]

use std::time::Instant;

use cpu_time::ThreadTime;

use memtrace::algo::{
    backward_slice, forward_impact, GraphIndex, MessageIndex, NodeRef, SearchIndex,
    StartPointOptions,
};
use memtrace::model::{EdgeRecord, NodeRecord, OpRecord, Unset};
use memtrace::Trace;
use serde_json::{Map, Value};

const WORDS: [&str; 32] = [
    "camping", "june", "lake", "kids", "painting", "sunset", "adoption", "agency", "charity",
    "race", "mental", "health", "support", "group", "school", "speech", "pottery", "museum",
    "guitar", "concert", "hiking", "beach", "birthday", "dinner", "recipe", "garden", "puppy",
    "book", "movie", "trip", "paris", "work",
];

struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

struct Gen {
    t: Trace,
    rng: Lcg,
    ms: u64,
    edges: u64,
}

impl Gen {
    fn time(&mut self) -> String {
        self.ms += 1;
        let (s, ms) = (self.ms / 1000, self.ms % 1000);
        format!(
            "2024-01-01 {:02}:{:02}:{:02}.{ms:03}",
            s / 3600,
            s / 60 % 60,
            s % 60
        )
    }

    fn sentence(&mut self, n: usize) -> String {
        (0..n)
            .map(|_| WORDS[self.rng.below(WORDS.len())])
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn var(&mut self, name: String, version: u32, category: &str, value: String) -> String {
        let mut rec = NodeRecord {
            created_at: self.time(),
            filename: "gen.py".into(),
            lineno: 1,
            name,
            version,
            value,
            category: category.into(),
            graph_id: "graph-bench".into(),
            session_id: "s".into(),
            ..NodeRecord::blank()
        };
        rec.fill_computed();
        let id = rec.full_node_id.clone();
        self.t.vars.push(rec);
        id
    }

    fn op(&mut self, name: &str, category: &str, pairs: &[(&str, &str)]) {
        let op_id = format!("op-{:032x}", self.t.ops.len());
        let created_at = self.time();
        for (s, d) in pairs {
            self.edges += 1;
            self.t.edges.push(EdgeRecord {
                created_at: created_at.clone(),
                filename: "gen.py".into(),
                lineno: 1,
                edge_id: format!("edge-{:032x}", self.edges),
                graph_id: String::new(),
                user_id: Value::Null,
                project_id: Value::Null,
                session_id: "s".into(),
                op_id: op_id.clone(),
                category: String::new(),
                source_full_node_id: (*s).to_owned(),
                target_full_node_id: (*d).to_owned(),
                comment: String::new(),
                metadata: Value::Object(Map::new()),
                trigger_point: String::new(),
                extra: Map::new(),
                unset: Unset::default(),
            });
        }
        self.t.ops.push(OpRecord {
            created_at,
            filename: "gen.py".into(),
            lineno: 1,
            op_id,
            op_name: name.into(),
            comment: String::new(),
            category: category.into(),
            graph_id: String::new(),
            user_id: Value::Null,
            project_id: Value::Null,
            session_id: "s".into(),
            metadata: Value::Object(Map::new()),
            trigger_point: String::new(),
            extra: Map::new(),
            unset: Unset::default(),
        });
    }
}

/// A trace of at least `nodes` variables + operations; returns it and its last prediction id.
#[allow(clippy::too_many_lines)] // one generator loop, read top to bottom
fn generate(nodes: usize, seed: u64) -> (Trace, String) {
    let mut g = Gen {
        t: Trace::default(),
        rng: Lcg(seed),
        ms: 0,
        edges: 0,
    };
    let prompt = g.var(
        "fact-extraction-prompt".into(),
        1,
        "prompt",
        "'Extract facts.'".into(),
    );
    let qa_prompt = g.var("qa-prompt".into(), 1, "prompt", "'Answer.'".into());
    // Latest version id of each live unit.
    let mut units: Vec<(usize, u32)> = Vec::new();
    let unit_id = |k: usize, v: u32| format!("memory-unit-{k}@{v}");
    let mut last_prediction = String::new();
    let mut turn = 0usize;
    let mut next_unit = 0usize;
    while g.t.vars.len() + g.t.ops.len() < nodes {
        turn += 1;
        let text = g.sentence(12);
        let content = serde_json::json!({"content": text, "role": "user"}).to_string();
        let msg = g.var(format!("U:{turn}"), 1, "message", content);
        let fact = g.sentence(6);
        let raw = g.var(
            format!("raw:{turn}"),
            1,
            "llm_response",
            format!("'{fact}'"),
        );
        let facts = g.var(format!("facts:{turn}"), 1, "facts", format!("['{fact}']"));
        g.op(
            "extract_facts",
            "extraction",
            &[(&prompt, &raw), (&msg, &raw), (&raw, &facts)],
        );
        if units.is_empty() || g.rng.below(3) == 0 {
            let k = next_unit;
            next_unit += 1;
            let u = g.var(
                format!("memory-unit-{k}"),
                1,
                "memory_entry",
                format!("{{'memory': '{fact}'}}"),
            );
            g.op("update_memory", "update", &[(&facts, &u)]);
            units.push((k, 1));
        } else {
            let i = g.rng.below(units.len());
            let (k, v) = units[i];
            let prev = unit_id(k, v);
            let deleting = g.rng.below(10) == 0;
            let value = if deleting {
                "{'memory': None, 'deleted': True}".to_owned()
            } else {
                format!("{{'memory': '{fact}'}}")
            };
            let next = g.var(format!("memory-unit-{k}"), v + 1, "memory_entry", value);
            let (name, cat) = if deleting {
                ("delete_memory", "deletion")
            } else {
                ("update_memory", "update")
            };
            g.op(name, cat, &[(&facts, &next), (&prev, &next)]);
            units[i] = (k, v + 1);
            if deleting {
                units.swap_remove(i);
            }
        }
        if turn % 20 == 0 && !units.is_empty() {
            let text_q = g.sentence(5);
            let q = g.var(
                format!("query:{turn}"),
                1,
                "message & query",
                format!("'{text_q}'"),
            );
            let picked: Vec<String> = (0..5)
                .map(|_| units[g.rng.below(units.len())])
                .map(|(k, v)| unit_id(k, v))
                .collect();
            let pairs: Vec<(&str, &str)> =
                picked.iter().map(|u| (q.as_str(), u.as_str())).collect();
            g.op("search", "retrieval", &pairs);
            let text_ctx = g.sentence(20);
            let ctx = g.var(
                format!("context:{turn}"),
                1,
                "memory_context",
                format!("'{text_ctx}'"),
            );
            let text_pred = g.sentence(4);
            let pred = g.var(
                format!("prediction:{turn}"),
                1,
                "prediction",
                format!("'{text_pred}'"),
            );
            let mut pairs: Vec<(&str, &str)> =
                picked.iter().map(|u| (u.as_str(), ctx.as_str())).collect();
            pairs.extend([
                (q.as_str(), pred.as_str()),
                (ctx.as_str(), pred.as_str()),
                (qa_prompt.as_str(), pred.as_str()),
            ]);
            g.op("question-answering", "evaluation", &pairs);
            last_prediction = pred;
        }
    }
    (g.t, last_prediction)
}

/// Best (minimum) thread CPU time of `runs` calls, in milliseconds.
fn best_ms(runs: usize, mut f: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let t = ThreadTime::now();
            f();
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[0]
}

struct Row {
    nodes: usize,
    edges: usize,
    reindex_ms: f64,
    index_ms: f64,
    slice_ms: f64,
    slice_nodes: usize,
    impact_ms: f64,
    impact_nodes: usize,
    wide_slice_ms: f64,
    wide_slice_nodes: usize,
    bm25_index_ms: f64,
    bm25_query_ms: f64,
    start_points_ms: f64,
}

fn measure(target: usize) -> anyhow::Result<Row> {
    let (mut trace, prediction) = generate(target, 7);
    let t = ThreadTime::now();
    trace.reindex()?;
    let reindex_ms = t.elapsed().as_secs_f64() * 1e3;
    let t = ThreadTime::now();
    let g = GraphIndex::build(&trace)?;
    let index_ms = t.elapsed().as_secs_f64() * 1e3;
    let seed = NodeRef::Var(
        trace
            .var_by_id(&prediction)
            .ok_or_else(|| anyhow::anyhow!("no prediction"))?,
    );
    let mut slice_nodes = 0;
    let slice_ms = best_ms(9, || slice_nodes = backward_slice(&g, &[seed]).len());
    // Worst cases: the extraction prompt feeds every extraction, so its impact is nearly the
    // whole graph; the backward slice of all predictions together covers most of it.
    let prompt = NodeRef::Var(
        trace
            .var_by_id("fact-extraction-prompt@1")
            .ok_or_else(|| anyhow::anyhow!("no prompt"))?,
    );
    let mut impact_nodes = 0;
    let impact_ms = best_ms(9, || impact_nodes = forward_impact(&g, &[prompt]).len());
    let predictions: Vec<NodeRef> = (0..trace.vars.len() as u32)
        .map(memtrace::model::VarIx)
        .filter(|&v| trace.var(v).category == "prediction")
        .map(NodeRef::Var)
        .collect();
    let mut wide_slice_nodes = 0;
    let wide_slice_ms = best_ms(9, || {
        wide_slice_nodes = backward_slice(&g, &predictions).len();
    });
    let t = ThreadTime::now();
    let search = SearchIndex::build(&trace);
    let bm25_index_ms = t.elapsed().as_secs_f64() * 1e3;
    let queries = [
        "camping in june",
        "charity race mental health",
        "adoption agency",
        "pottery museum trip",
    ];
    let bm25_query_ms = best_ms(9, || {
        for q in queries {
            std::hint::black_box(search.bm25(q, 10));
        }
    }) / queries.len() as f64;
    let opts = StartPointOptions::default();
    let messages = MessageIndex::build(&trace, &opts);
    let start_points_ms = best_ms(5, || {
        std::hint::black_box(memtrace::algo::start_points(
            &messages,
            "When did they go camping?\nJune",
            &opts,
            &[],
        ));
    });
    Ok(Row {
        nodes: trace.vars.len() + trace.ops.len(),
        edges: trace.edges.len(),
        reindex_ms,
        index_ms,
        slice_ms,
        slice_nodes,
        impact_ms,
        impact_nodes,
        wide_slice_ms,
        wide_slice_nodes,
        bm25_index_ms,
        bm25_query_ms,
        start_points_ms,
    })
}

fn main() -> anyhow::Result<()> {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "load average at start: {}",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    let sizes = if sizes.is_empty() {
        vec![10_000, 100_000, 1_000_000]
    } else {
        sizes
    };
    println!("thread CPU time in ms (queries: best of repeated runs); total_s = wall clock of the row; *_n = nodes reached");
    println!(
        "{:>9} {:>9} {:>9} {:>9} {:>8} {:>7} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8}",
        "nodes",
        "edges",
        "reindex",
        "index",
        "slice",
        "slice_n",
        "slice_all",
        "all_n",
        "impact",
        "impact_n",
        "bm25_idx",
        "bm25_q",
        "start_pt",
        "total_s"
    );
    let mut rows = Vec::new();
    for n in sizes {
        let started = Instant::now();
        let r = measure(n)?;
        println!(
            "{:>9} {:>9} {:>9.1} {:>9.1} {:>8.3} {:>7} {:>9.3} {:>9} {:>9.3} {:>9} {:>9.1} {:>9.3} {:>8.3} {:>8.1}",
            r.nodes, r.edges, r.reindex_ms, r.index_ms, r.slice_ms, r.slice_nodes, r.wide_slice_ms, r.wide_slice_nodes,
            r.impact_ms, r.impact_nodes, r.bm25_index_ms, r.bm25_query_ms, r.start_points_ms,
            started.elapsed().as_secs_f64()
        );
        rows.push(r);
    }
    let find = |n: usize| rows.iter().find(|r| r.nodes >= n && r.nodes < n + n / 10);
    if let (Some(a), Some(b)) = (find(100_000), find(1_000_000)) {
        let ratio = |x: f64, y: f64| if x > 0.0 { y / x } else { f64::NAN };
        println!(
            "ratio 1M/100k: nodes {:.1}, index {:.1}, slice {:.1} (nodes {:.1}), slice_all {:.1} (nodes {:.1}), \
             impact {:.1} (nodes {:.1}), bm25 index {:.1}, bm25 query {:.1}",
            ratio(a.nodes as f64, b.nodes as f64),
            ratio(a.index_ms, b.index_ms),
            ratio(a.slice_ms, b.slice_ms),
            ratio(a.slice_nodes as f64, b.slice_nodes as f64),
            ratio(a.wide_slice_ms, b.wide_slice_ms),
            ratio(a.wide_slice_nodes as f64, b.wide_slice_nodes as f64),
            ratio(a.impact_ms, b.impact_ms),
            ratio(a.impact_nodes as f64, b.impact_nodes as f64),
            ratio(a.bm25_index_ms, b.bm25_index_ms),
            ratio(a.bm25_query_ms, b.bm25_query_ms),
        );
    }
    Ok(())
}
