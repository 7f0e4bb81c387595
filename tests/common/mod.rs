//! Builders for hand-made traces in tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)] // test helpers

use memtrace::model::{EdgeRecord, FailureCase, NodeRecord, OpRecord, SessionRecord};
use memtrace::Trace;

/// Builds a trace record by record; every record gets the next tick of a fake clock, unless a
/// time is given.
#[derive(Default)]
pub struct TraceBuilder {
    trace: Trace,
    tick: u32,
    /// The time of the next op, when [`TraceBuilder::at`] set one.
    pinned: Option<String>,
    edges: u32,
    pub session: String,
}

/// The time string of tick `t`.
pub fn time(t: u32) -> String {
    format!("2024-01-01 00:{:02}:{:02}.000", t / 60, t % 60)
}

impl TraceBuilder {
    pub fn new() -> Self {
        let mut b = TraceBuilder {
            session: "s1".into(),
            ..Default::default()
        };
        b.trace.meta.graph_id = "graph-test".into();
        b
    }

    fn next_time(&mut self) -> String {
        self.tick += 1;
        time(self.tick)
    }

    /// Switches to (and records) a session.
    pub fn session(&mut self, id: &str) -> &mut Self {
        id.clone_into(&mut self.session);
        let created_at = self.next_time();
        let rec: SessionRecord = serde_json::from_value(serde_json::json!({
            "created_at": created_at, "filename": "t.py", "lineno": 1, "session_id": id,
        }))
        .unwrap();
        self.trace.sessions.push(rec);
        self
    }

    /// Adds a variable version; returns its `full_node_id` (`name@version`).
    pub fn var(&mut self, name: &str, version: u32, category: &str, value: &str) -> String {
        let created_at = self.next_time();
        self.var_at(name, version, category, value, &created_at)
    }

    /// Adds a variable version with an explicit time.
    pub fn var_at(
        &mut self,
        name: &str,
        version: u32,
        category: &str,
        value: &str,
        created_at: &str,
    ) -> String {
        let mut rec = NodeRecord {
            created_at: created_at.to_owned(),
            filename: "t.py".into(),
            lineno: 1,
            name: name.into(),
            version,
            value: value.into(),
            category: category.into(),
            graph_id: "graph-test".into(),
            session_id: self.session.clone(),
            ..NodeRecord::blank()
        };
        rec.fill_computed();
        let id = rec.full_node_id.clone();
        self.trace.vars.push(rec);
        id
    }

    /// Stamps the next op with `created_at` instead of the clock's next tick.
    pub fn at(&mut self, created_at: &str) -> &mut Self {
        self.pinned = Some(created_at.to_owned());
        self
    }

    /// Adds an op whose edges run from each input to each intermediate (or to each output when
    /// there are no intermediates) and from each intermediate to each output.
    pub fn op(
        &mut self,
        op_id: &str,
        name: &str,
        category: &str,
        inputs: &[&str],
        mids: &[&str],
        outputs: &[&str],
    ) {
        let created_at = match self.pinned.take() {
            Some(t) => t,
            None => self.next_time(),
        };
        let record = serde_json::json!({
            "created_at": created_at, "filename": "t.py", "lineno": 1, "op_id": op_id,
            "op_name": name, "category": category, "session_id": self.session,
            "comment": format!("does {name}"),
        });
        let first: &[&str] = if mids.is_empty() { outputs } else { mids };
        let mut pairs: Vec<(&str, &str)> = Vec::new();
        for &i in inputs {
            for &t in first {
                pairs.push((i, t));
            }
        }
        if !mids.is_empty() {
            for &m in mids {
                for &t in outputs {
                    pairs.push((m, t));
                }
            }
        }
        self.push_op(record, &pairs);
    }

    /// Adds an op with exactly these (source, target) edges.
    pub fn op_pairs(&mut self, op_id: &str, name: &str, category: &str, pairs: &[(&str, &str)]) {
        let created_at = self.next_time();
        let record = serde_json::json!({
            "created_at": created_at, "filename": "t.py", "lineno": 1, "op_id": op_id,
            "op_name": name, "category": category, "session_id": self.session,
        });
        self.push_op(record, pairs);
    }

    /// Adds op `record` and an edge per (source, target) pair, at the op's time.
    fn push_op(&mut self, record: serde_json::Value, pairs: &[(&str, &str)]) {
        let rec: OpRecord = serde_json::from_value(record).unwrap();
        for (s, t) in pairs {
            self.edges += 1;
            let edge: EdgeRecord = serde_json::from_value(serde_json::json!({
                "created_at": rec.created_at, "filename": "t.py", "lineno": 1,
                "edge_id": format!("edge-{}", self.edges), "op_id": rec.op_id,
                "source_full_node_id": s, "target_full_node_id": t, "session_id": self.session,
            }))
            .unwrap();
            self.trace.edges.push(edge);
        }
        self.trace.ops.push(rec);
    }

    /// Indexes and returns the trace.
    pub fn build(self) -> Trace {
        let mut t = self.trace;
        t.reindex().unwrap();
        t
    }

    /// The records without indexing.
    pub fn raw(self) -> Trace {
        self.trace
    }
}

/// A message variable (`U1:D1:1`-style name) said at `timestamp`.
pub fn message(b: &mut TraceBuilder, name: &str, text: &str, timestamp: &str) -> String {
    let value = serde_json::json!({"content": text, "timestamp": timestamp});
    b.var(name, 1, "message", &value.to_string())
}

/// A Mem0-shaped memory unit version holding `memory` (`None`: the deletion tombstone).
pub fn unit(b: &mut TraceBuilder, name: &str, version: u32, memory: Option<&str>) -> String {
    let value = match memory {
        Some(m) => {
            serde_json::json!({"id": name, "memory": m, "timestamp": "2023-04-02T10:00:00"})
        }
        None => serde_json::json!({"id": name, "memory": null, "deleted": true}),
    };
    b.var(name, version, "memory_entry", &value.to_string())
}

/// The question `query:q1` and its retrieval op (`retrieval`: op id and name) handing `units`
/// to the answer op `op-answer`, which answers `prediction:q1` with a QA prompt (and a
/// `context:q1` intermediate when `context`). Returns the query's and prediction's ids.
pub fn ask(
    b: &mut TraceBuilder,
    (retrieval_id, retrieval): (&str, &str),
    question: &str,
    units: &[&str],
    prediction: &str,
    context: bool,
) -> (String, String) {
    let query = b.var("query:q1", 1, "message & query", question);
    b.op(retrieval_id, retrieval, "retrieval", &[&query], &[], units);
    let prompt = b.var("qa-prompt", 1, "prompt", "Answer from the memories.");
    let mids: Vec<String> = if context {
        vec![b.var("context:q1", 1, "memory_context", "the memories")]
    } else {
        Vec::new()
    };
    let pred = b.var("prediction:q1", 1, "llm_response", prediction);
    let mut inputs: Vec<&str> = units.to_vec();
    inputs.extend([query.as_str(), prompt.as_str()]);
    let mids: Vec<&str> = mids.iter().map(String::as_str).collect();
    b.op(
        "op-answer",
        "question-answering",
        "evaluation",
        &inputs,
        &mids,
        &[&pred],
    );
    (query, pred)
}

/// The failed case of [`ask`]'s question: `prediction` instead of `gold`, from `evidence`.
pub fn case(question: &str, gold: &str, prediction: &str, evidence: &str) -> FailureCase {
    FailureCase {
        query_id: "query:q1@1".into(),
        query: question.into(),
        golden_answers: vec![gold.into()],
        prediction: prediction.into(),
        prediction_id: Some("prediction:q1@1".into()),
        evidence_ids: vec![evidence.into()],
        judge_score: Some(0.0),
        annotation: None,
        answer_op: Some("op-answer".into()),
        judge_op: None,
    }
}

/// A failure case of `question` (its query variable `query`), gold `gold`, answered
/// `prediction` (`answer@1`), its evidence the message `evidence`.
pub fn failed(
    query: &str,
    question: &str,
    gold: &str,
    prediction: &str,
    evidence: &str,
) -> FailureCase {
    FailureCase {
        query_id: query.into(),
        query: question.into(),
        golden_answers: vec![gold.into()],
        prediction: prediction.into(),
        prediction_id: Some("answer@1".into()),
        evidence_ids: vec![evidence.into()],
        judge_score: Some(0.0),
        annotation: None,
        answer_op: None,
        judge_op: None,
    }
}

/// A message said at `at` and the model reply of `facts` an op (`op`, reply `n`) extracted
/// from it, as Mem0's `{"memory": [{id, text}]}`. Returns the message's and the reply's ids.
pub fn extracted(
    b: &mut TraceBuilder,
    (op, n): (&str, u32),
    (name, said, at): (&str, &str, &str),
    facts: &[&str],
) -> (String, String) {
    let m = message(b, name, said, at);
    let items: Vec<_> = facts
        .iter()
        .enumerate()
        .map(|(i, f)| serde_json::json!({"id": i.to_string(), "text": f}))
        .collect();
    let value = serde_json::json!({ "memory": items });
    let reply = b.var(&format!("reply-{n}"), 1, "llm_output", &value.to_string());
    b.op(op, "chat", "llm", &[&m], &[], &[&reply]);
    (m, reply)
}

/// Gina's words ("cozy and comfortable"), extracted (op `op-extract`, reply 1) as two facts,
/// "cozy" in one and "comfortable" in the other (a paraphrase split them), then `more`. The
/// message's id.
pub fn cozy_store(b: &mut TraceBuilder, more: &[&str]) -> String {
    let said = "I wanted my customers to feel cozy and comfortable in the store.";
    let mut facts = vec![
        "Gina wanted the store to make customers feel cozy.",
        "Gina made the store comfortable for customers.",
    ];
    facts.extend_from_slice(more);
    let at = ("U1:D3:6", said, "2023-05-01T10:00:00");
    extracted(b, ("op-extract", 1), at, &facts).0
}

/// The case of `question` asked as `query`: its gold answer "cozy and comfortable" (from
/// message `m`, [`cozy_store`]), not given.
pub fn cozy_case(query: &str, question: &str, m: &str) -> FailureCase {
    let refused = "The memories do not say.";
    failed(query, question, "cozy and comfortable", refused, m)
}

/// The extraction op `op-extract` (named `name`), which read `read` and wrote `wrote`.
pub fn extract_op(b: &mut TraceBuilder, name: &str, read: &[&str], wrote: &[&str]) {
    b.op("op-extract", name, "extraction", read, &[], wrote);
}

/// The search op `op-search-1` (`search`) of `query`, handing on `found`.
pub fn search_op(b: &mut TraceBuilder, query: &str, found: &[&str]) {
    b.op("op-search-1", "search", "search", &[query], &[], found);
}

/// Jon's unrelated words, extracted (op `op-extract-2`, reply 2) as one fact: what a search
/// hands on instead. The reply's id.
pub fn jon_dances(b: &mut TraceBuilder) -> String {
    let at = ("U1:D3:9", "I'm practicing dance.", "2023-05-01T10:05:00");
    extracted(b, ("op-extract-2", 2), at, &["Jon is practicing dance."]).1
}

/// Info-flow's verdict on case `c` of `t`: the op it blames, the error type, why.
pub fn blame(t: &Trace, c: &FailureCase) -> (String, memtrace::model::ErrorType, String) {
    let a = memtrace::attribution::InfoFlow::default()
        .attribute(t, c)
        .unwrap();
    (a.op_id, a.error_type, a.reason)
}

/// Asserts `verdict` (the op blamed, the error type, why) blames `op` with `kind`, saying why
/// when it does not; returns why.
pub fn assert_blames(
    verdict: &(String, memtrace::model::ErrorType, String),
    op: &str,
    kind: memtrace::model::ErrorType,
) -> String {
    let (blamed, blamed_kind, reason) = verdict;
    assert_eq!((blamed.as_str(), *blamed_kind), (op, kind), "{reason}");
    reason.clone()
}

/// An LLM op `op_id` (`chat`) that read a prompt (variable `prompt-1`, the text `prompt`) and
/// the variables `read`, and answered `said` (variable `answer`, version 1).
pub fn chat_answer(b: &mut TraceBuilder, op_id: &str, prompt: &str, read: &[&str], said: &str) {
    let prompt = b.var("prompt-1", 1, "llm_input", prompt);
    let answer = b.var("answer", 1, "llm_output", said);
    let mut inputs = vec![prompt.as_str()];
    inputs.extend_from_slice(read);
    b.op(op_id, "chat", "llm", &inputs, &[], &[&answer]);
}
