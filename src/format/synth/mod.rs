//! Synthetic smartcomment traces of any size, deterministic per seed, for benchmarks and tests.
//!
//! The shape follows the Mem0 pipeline in `MemBase` graphs: sessions of messages → fact
//! extraction → memory units added, updated (new versions) and deleted (tombstones) →
//! retrieval of memory units for a question → answering → an LLM judge whose `judge_score`
//! is `0.0` for about one question in four (so failure cases appear).
//!
//! [`write`] streams the file: it runs the generator once per record list (nodes, edges,
//! operations, sessions) and serializes each record as it is made, so memory stays small
//! whatever the size.

use std::io::{self, Write};

use serde_json::{json, Map, Value};

mod output;

use output::{Collect, List, ListWriter, Sink};

use super::FormatError;
use crate::model::{EdgeRecord, GraphMeta, NodeRecord, OpRecord, SessionRecord, Trace, Unset};
use crate::util::rng::SplitMix64;

/// What to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// About how many variable nodes (the generator stops after the session that reaches it).
    pub nodes: usize,
    pub seed: u64,
}

/// The draws the generator needs beyond [`SplitMix64`]'s: a word of a list, a 32-hex id.
trait Draw {
    fn pick<'a>(&mut self, list: &[&'a str]) -> &'a str;
    fn hex32(&mut self) -> String;
}

impl Draw for SplitMix64 {
    fn pick<'a>(&mut self, list: &[&'a str]) -> &'a str {
        list.get(self.below(list.len()))
            .copied()
            .unwrap_or_default()
    }
    fn hex32(&mut self) -> String {
        format!("{:016x}{:016x}", self.next_u64(), self.next_u64())
    }
}

const NAMES: [&str; 8] = [
    "Caroline", "Melanie", "Jon", "Gina", "Ravi", "Aiko", "Tomas", "Leila",
];
const VERBS: [&str; 8] = [
    "likes",
    "visited",
    "started learning",
    "adopted",
    "is planning",
    "finished",
    "joined",
    "painted",
];
const THINGS: [&str; 12] = [
    "hiking in the Alps",
    "a rescue dog named Max",
    "the pottery class",
    "a trip to Lisbon",
    "salsa dancing",
    "a community garden",
    "the violin",
    "a marathon in May",
    "a book club",
    "sunset landscapes",
    "a LGBTQ support group",
    "a bakery downtown",
];
const PROMPTS: [(&str, &str); 4] = [
    (
        "fact-extraction-system-prompt",
        "You are a Personal Information Organizer. Extract facts about the user as JSON.",
    ),
    (
        "memory-update-decision-prompt",
        "You are a smart memory manager. Decide ADD, UPDATE, DELETE or NONE for each fact.",
    ),
    (
        "question-answering-prompt",
        "Answer the question using only the memories given.",
    ),
    (
        "judge_prompt:locomo-judge",
        "Is the prediction correct with respect to the gold answers? Answer CORRECT or WRONG.",
    ),
];

struct Gen<'s, S: Sink> {
    rng: SplitMix64,
    sink: &'s mut S,
    meta: GraphMeta,
    clock_ms: u64,
    session: String,
    nodes: usize,
    lineno: i64,
    prompts: Vec<String>,
    /// Live memory units: (id, latest version, its `full_node_id`, text); deleted ones are removed.
    units: Vec<(String, u32, String, String)>,
}

fn py_str(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
}

impl<'s, S: Sink> Gen<'s, S> {
    fn new(seed: u64, sink: &'s mut S, meta: &GraphMeta) -> Self {
        Gen {
            rng: SplitMix64::new(seed),
            sink,
            meta: meta.clone(),
            clock_ms: 0,
            session: String::new(),
            nodes: 0,
            lineno: 0,
            prompts: Vec::new(),
            units: Vec::new(),
        }
    }

    fn stamp(&mut self) -> String {
        self.clock_ms += 1 + self.rng.below(40) as u64;
        super::time::format_nanos(1_704_067_200_000_000_000 + self.clock_ms * 1_000_000)
    }

    fn node(
        &mut self,
        name: &str,
        class: Option<&str>,
        version: u32,
        value: String,
        category: &str,
        metadata: Value,
    ) -> io::Result<String> {
        self.lineno = 100 + i64::try_from(self.rng.below(400)).unwrap_or(0);
        let mut r = NodeRecord {
            created_at: self.stamp(),
            filename: "/srv/memsys/synthetic.py".into(),
            lineno: self.lineno,
            name: name.to_owned(),
            version,
            value,
            category: category.to_owned(),
            graph_id: self.meta.graph_id.clone(),
            user_id: self.meta.user_id.clone(),
            class_name: class.map(str::to_owned),
            project_id: self.meta.project_id.clone(),
            session_id: self.session.clone(),
            metadata,
            ..NodeRecord::blank()
        };
        r.fill_computed();
        self.nodes += 1;
        self.sink.node(&r)?;
        Ok(r.full_node_id)
    }

    /// A variable named `class:str:<32 random hex>`, shaped like smartcomment's default identity.
    fn text(&mut self, class: &str, text: &str, category: &str) -> io::Result<String> {
        let name = format!("str:{}", self.rng.hex32());
        self.node(&name, Some(class), 1, py_str(text), category, json!({}))
    }

    fn op(&mut self, name: &str, category: &str, edges: &[(&str, &str)]) -> io::Result<()> {
        let op_id = format!("op-{}", self.rng.hex32());
        let created_at = self.stamp();
        let r = OpRecord {
            created_at: created_at.clone(),
            filename: "/srv/memsys/synthetic.py".into(),
            lineno: 7,
            op_id: op_id.clone(),
            op_name: name.to_owned(),
            comment: String::new(),
            category: category.to_owned(),
            graph_id: self.meta.graph_id.clone(),
            user_id: self.meta.user_id.clone(),
            project_id: self.meta.project_id.clone(),
            session_id: self.session.clone(),
            metadata: json!({}),
            trigger_point: "/srv/memsys/synthetic.py:7".into(),
            extra: Map::new(),
            unset: Unset::default(),
        };
        self.sink.op(&r)?;
        for (s, t) in edges {
            let e = EdgeRecord {
                created_at: created_at.clone(),
                filename: "/srv/memsys/synthetic.py".into(),
                lineno: 9,
                edge_id: format!("edge-{}", self.rng.hex32()),
                graph_id: self.meta.graph_id.clone(),
                user_id: self.meta.user_id.clone(),
                project_id: self.meta.project_id.clone(),
                session_id: self.session.clone(),
                op_id: op_id.clone(),
                category: category.to_owned(),
                source_full_node_id: (*s).to_owned(),
                target_full_node_id: (*t).to_owned(),
                comment: String::new(),
                metadata: json!({}),
                trigger_point: "/srv/memsys/synthetic.py:9".into(),
                extra: Map::new(),
                unset: Unset::default(),
            };
            self.sink.edge(&e)?;
        }
        Ok(())
    }

    fn session(&mut self, id: String, category: &str) -> io::Result<()> {
        let r = SessionRecord {
            created_at: self.stamp(),
            filename: "/srv/memsys/synthetic.py".into(),
            lineno: 3,
            session_id: id.clone(),
            session_name: None,
            graph_id: self.meta.graph_id.clone(),
            user_id: self.meta.user_id.clone(),
            project_id: self.meta.project_id.clone(),
            comment: String::new(),
            category: category.to_owned(),
            metadata: json!({}),
            trigger_point: "/srv/memsys/synthetic.py:3".into(),
            extra: Map::new(),
            unset: Unset::default(),
        };
        self.session = id;
        self.sink.session(&r)
    }

    fn fact(&mut self) -> String {
        let who = self.rng.pick(&NAMES);
        format!(
            "{who} {} {}.",
            self.rng.pick(&VERBS),
            self.rng.pick(&THINGS)
        )
    }

    fn run(&mut self, target: usize) -> io::Result<()> {
        self.session("session-prompts".into(), "setup")?;
        for (name, text) in PROMPTS {
            let p = self.node(name, None, 1, py_str(text), "prompt", json!({}))?;
            self.prompts.push(p);
        }
        let mut k = 0usize;
        while self.nodes < target {
            k += 1;
            let said = self.construction(k)?;
            self.evaluation(k, &said)?;
        }
        Ok(())
    }

    /// One conversation session: messages, extraction, memory adds / updates / deletions.
    /// Returns (message name, fact) of each message.
    fn construction(&mut self, k: usize) -> io::Result<Vec<(String, String)>> {
        let prompts = self.prompts.clone();
        let mut units = std::mem::take(&mut self.units);
        self.session(format!("session-{k}"), "memory_construction")?;
        let mut said = Vec::new();
        for j in 1..=(2 + self.rng.below(4)) {
            let fact = self.fact();
            let speaker = self.rng.pick(&NAMES);
            let content = json!({"content": format!("{speaker}: {fact}"), "name": speaker, "role": "user", "timestamp": self.stamp()});
            let msg = self.node(
                &format!("U1:D{k}:{j}"),
                None,
                1,
                serde_json::to_string_pretty(&content).unwrap_or_default(),
                "message",
                json!({"dia_id": format!("D{k}:{j}")}),
            )?;
            let raw = self.text(
                "raw_fact_extraction_response",
                &format!("{{\"facts\": [\"{fact}\"]}}"),
                "llm_response",
            )?;
            let facts = self.text("extracted_facts", &fact, "llm_response")?;
            self.op(
                "memory_system.extract_facts",
                "extraction",
                &[(&msg, &raw), (&prompts[0], &raw), (&raw, &facts)],
            )?;
            said.push((format!("U1:D{k}:{j}"), fact.clone()));

            let action = self.text("update_action", "{'event': 'ADD'}", "llm_response")?;
            let mut edges: Vec<(String, String)> = vec![
                (facts.clone(), action.clone()),
                (prompts[1].clone(), action.clone()),
            ];
            let update = !units.is_empty() && self.rng.chance(30);
            if update {
                let u = self.rng.below(units.len());
                let (id, v, prev, _) = units[u].clone();
                let next = self.node(
                    &format!("memory-unit-{id}"),
                    None,
                    v + 1,
                    py_str(&fact),
                    "memory_entry",
                    json!({}),
                )?;
                edges.push((prev, next.clone()));
                edges.push((action.clone(), next.clone()));
                units[u] = (id, v + 1, next, fact.clone());
            } else {
                let id = self.rng.hex32();
                let unit = self.node(
                    &format!("memory-unit-{id}"),
                    None,
                    1,
                    py_str(&fact),
                    "memory_entry",
                    json!({}),
                )?;
                edges.push((action.clone(), unit.clone()));
                units.push((id, 1, unit, fact.clone()));
            }
            let refs: Vec<(&str, &str)> = edges
                .iter()
                .map(|(a, b)| (a.as_str(), b.as_str()))
                .collect();
            self.op("memory_system.update_memory_decision", "update", &refs)?;

            if units.len() > 3 && self.rng.chance(8) {
                let u = self.rng.below(units.len());
                let (id, v, prev, _) = units.swap_remove(u);
                let del = self.text("delete_action", "{'event': 'DELETE'}", "llm_response")?;
                let tomb = self.node(
                    &format!("memory-unit-{id}"),
                    None,
                    v + 1,
                    format!("{{'id': '{id}', 'memory': None, 'deleted': True}}"),
                    "memory_entry",
                    json!({}),
                )?;
                self.op(
                    "memory_system.delete_memory",
                    "deletion",
                    &[
                        (&facts, &del),
                        (&prompts[1], &del),
                        (&prev, &tomb),
                        (&del, &tomb),
                    ],
                )?;
            }
        }

        self.units = units;
        Ok(said)
    }

    /// Questions about one session: retrieval, answer, judge (score 0.0 for about one in four).
    fn evaluation(&mut self, k: usize, said: &[(String, String)]) -> io::Result<()> {
        let prompts = self.prompts.clone();
        let units = std::mem::take(&mut self.units);
        self.session(format!("session-{k}-evaluation"), "memory_evaluation")?;
        for q in 1..=(1 + self.rng.below(2)) {
            let (evidence, fact) = said[self.rng.below(said.len())].clone();
            let query = self.node(
                &format!("locomo-qa-{k}-{q}"),
                Some("query"),
                1,
                py_str(&format!("What about {fact}")),
                "message & query",
                json!({"evidence": [evidence]}),
            )?;
            let mut edges = Vec::new();
            let mut context_in = vec![query.clone(), prompts[2].clone()];
            for _ in 0..units.len().min(5) {
                let (_, _, unit, _) = &units[self.rng.below(units.len())];
                if !context_in.contains(unit) {
                    edges.push((query.clone(), unit.clone()));
                    context_in.push(unit.clone());
                }
            }
            if !edges.is_empty() {
                let refs: Vec<(&str, &str)> = edges
                    .iter()
                    .map(|(a, b)| (a.as_str(), b.as_str()))
                    .collect();
                self.op("memory_system.search_vector_store", "retrieval", &refs)?;
            }
            let context = self.text(
                "context",
                &format!("Memories about: {fact}"),
                "memory_context",
            )?;
            let wrong = self.rng.chance(25);
            let answer = if wrong {
                "I do not know.".to_owned()
            } else {
                fact.clone()
            };
            let prediction = self.text("prediction", &answer, "llm_response")?;
            let mut qa: Vec<(&str, &str)> = context_in
                .iter()
                .map(|c| (c.as_str(), context.as_str()))
                .collect();
            qa.push((&context, &prediction));
            self.op("question-answering", "evaluation", &qa)?;
            let gold_name = format!("list:{}", self.rng.hex32());
            let gold = self.node(
                &gold_name,
                Some("golden_answers"),
                1,
                format!("[{}]", py_str(&fact)),
                "golden_answers",
                json!({}),
            )?;
            let response = self.text(
                "judge_response",
                if wrong { "WRONG" } else { "CORRECT" },
                "llm_response",
            )?;
            let score_name = format!("float:{}", self.rng.hex32());
            let score = self.node(
                &score_name,
                Some("judge_score"),
                1,
                if wrong { "0.0".into() } else { "1.0".into() },
                "variable",
                json!({}),
            )?;
            self.op(
                "llm-judge",
                "evaluation",
                &[
                    (&query, &response),
                    (&gold, &response),
                    (&prompts[3], &response),
                    (&prediction, &response),
                    (&response, &score),
                ],
            )?;
        }
        self.units = units;
        Ok(())
    }
}

fn meta(seed: u64) -> GraphMeta {
    let mut rng = SplitMix64::new(seed ^ 0x5EED);
    GraphMeta {
        graph_id: format!("graph-{}", rng.hex32()),
        user_id: Value::String("synthetic-1".into()),
        project_id: Value::String("Mem0".into()),
        strict: true,
        created_at: "2024-01-01 00:00:00.000".into(),
        metadata: json!({"trace_source": "memtrace synthetic generator", "seed": seed}),
        ..GraphMeta::default()
    }
}

/// Streams a synthetic trace as smartcomment JSON (compact, one record per line).
///
/// # Errors
/// Only the writer's.
///
/// # Complexity
/// O(N) time (four generator passes), O(memory units) space.
pub fn write<W: Write>(opts: &Options, out: &mut W) -> io::Result<()> {
    let meta = meta(opts.seed);
    let head = serde_json::to_string(&meta).map_err(io::Error::other)?;
    let head = head.strip_suffix('}').unwrap_or(&head);
    out.write_all(head.as_bytes())?;
    out.write_all(b",\"data\":{")?;
    for (i, (list, key)) in [
        (List::Nodes, "nodes"),
        (List::Edges, "edges"),
        (List::Operations, "operations"),
        (List::Sessions, "sessions"),
    ]
    .into_iter()
    .enumerate()
    {
        if i > 0 {
            out.write_all(b",")?;
        }
        writeln!(out, "\"{key}\":[")?;
        let mut sink = ListWriter {
            out: &mut *out,
            list,
            first: true,
        };
        Gen::new(opts.seed, &mut sink, &meta).run(opts.nodes)?;
        out.write_all(b"\n]")?;
    }
    out.write_all(b"}}\n")
}

/// The synthetic trace as bytes (see [`write`]).
pub fn bytes(opts: &Options) -> Vec<u8> {
    let mut out = Vec::with_capacity(opts.nodes * 700);
    // Writing to a Vec cannot fail.
    let _ = write(opts, &mut out);
    out
}

/// The synthetic trace in memory, indexed (one generator pass, no JSON).
///
/// # Errors
/// Only if the generator broke its own invariants (a test would catch it).
pub fn trace(opts: &Options) -> Result<Trace, FormatError> {
    let meta = meta(opts.seed);
    let mut c = Collect::default();
    Gen::new(opts.seed, &mut c, &meta)
        .run(opts.nodes)
        .map_err(|e| FormatError::Unknown {
            reason: e.to_string(),
        })?;
    let mut t = Trace {
        meta,
        sessions: c.sessions,
        vars: c.nodes,
        ops: c.ops,
        edges: c.edges,
        ..Trace::default()
    };
    t.reindex()?;
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{load, LoadOptions};

    #[test]
    fn same_seed_same_bytes_and_it_loads_with_failures() {
        let opts = Options {
            nodes: 400,
            seed: 7,
        };
        let a = bytes(&opts);
        assert_eq!(a, bytes(&opts));
        assert_ne!(
            a,
            bytes(&Options {
                nodes: 400,
                seed: 8
            })
        );
        let loaded = load(&a, LoadOptions::default()).unwrap();
        let t = &loaded.trace;
        assert!((400..520).contains(&t.vars.len()), "{} nodes", t.vars.len());
        assert!(!t.cases.is_empty(), "some judge scores are 0");
        assert!(t.cases.len() < t.ops.iter().filter(|o| o.op_name == "llm-judge").count());
        assert!(
            t.vars
                .iter()
                .any(|v| v.name.starts_with("memory-unit-") && v.version > 1),
            "update chains"
        );
        let in_memory = trace(&opts).unwrap();
        assert_eq!(in_memory.vars.len(), t.vars.len());
        assert_eq!(in_memory.edges.len(), t.edges.len());
    }
}
