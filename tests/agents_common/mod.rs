//! Scripted conversations for the LLM attribution methods, generated from a trace and a case so
//! every tool is exercised, with one malformed call each. The same scripts drive the in-process
//! [`ScriptedLlm`](memtrace::provider::ScriptedLlm) and the local LLM server
//! (`tests/llm_server/scripts/agent_<method>.json`, written from locomo_locomo-2's first case).

#![allow(dead_code)] // each test file uses a part

use memtrace::attribution::obstrace::FlatLog;
use memtrace::model::{FailureCase, Trace};
use serde_json::{json, Value};

/// The fixture the committed server scripts are written from.
pub const SCRIPT_FIXTURE: &[u8] =
    include_bytes!("../fixtures/smartcomment/locomo/locomo_locomo-2.json");

fn call(id: &str, name: &str, args: &Value) -> Value {
    json!({"id": id, "name": name, "arguments": args.to_string()})
}

fn tools(i: usize, calls: &[Value]) -> Value {
    json!({"index": i, "reply": {"tool_calls": calls}})
}

fn text(i: usize, t: &str) -> Value {
    json!({"index": i, "reply": {"text": t}})
}

fn verdict(case: &FailureCase) -> (String, String) {
    let ann = case.annotation.as_ref().expect("an annotated case");
    (ann.error_type.as_str().to_owned(), ann.op_id.clone())
}

/// A graphtrace conversation: initialize, a malformed call, explore (twice: preview and full),
/// view a value by regex and by window, edit the frontier, finish a node, view the history, an
/// invalid verdict, then the valid one.
pub fn graphtrace(trace: &Trace, case: &FailureCase) -> Value {
    let (ty, op) = verdict(case);
    let node = case
        .evidence_ids
        .first()
        .cloned()
        .unwrap_or_else(|| case.query_id.clone());
    // A word the node's value holds, so the regex view has hits.
    let value = trace
        .var_by_id(&node)
        .map(|v| trace.var(v).value.clone())
        .unwrap_or_default();
    let word = value
        .split(|c: char| !c.is_alphanumeric())
        .find(|w| w.len() > 5)
        .unwrap_or("the")
        .to_owned();
    let added = trace
        .flow
        .op_produced(trace.op_by_id(&op).unwrap())
        .next()
        .map_or_else(
            || case.query_id.clone(),
            |v| trace.var(v).full_node_id.clone(),
        );
    let steps = vec![
        tools(
            0,
            &[call("c0", "initialize", &json!({"mode": "start_points"}))],
        ),
        json!({"index": 1, "reply": {"tool_calls": [{"id": "c1", "name": "explore_frontier", "arguments": "{\"page\": "}]}}),
        tools(
            2,
            &[call("c2", "explore_frontier", &json!({"preview": true}))],
        ),
        tools(3, &[call("c3", "explore_frontier", &json!({}))]),
        tools(
            4,
            &[call(
                "c4",
                "view_value",
                &json!({"node_id": node, "pattern": regex_escape(&word), "context": 60}),
            )],
        ),
        tools(
            5,
            &[call(
                "c5",
                "view_value",
                &json!({"node_id": node, "start": 0}),
            )],
        ),
        tools(
            6,
            &[call(
                "c6",
                "edit_frontier",
                &json!({"add": [added], "remove": [node], "discovered_by": op}),
            )],
        ),
        tools(
            7,
            &[call(
                "c7",
                "finish_node",
                &json!({"node_id": case.query_id, "outcome": "the answer lacks the evidence"}),
            )],
        ),
        tools(8, &[call("c8", "view_history", &json!({}))]),
        tools(
            9,
            &[call(
                "c9",
                "finish_exploration",
                &json!({"error_type": "Typo", "op_id": op, "reason": "x"}),
            )],
        ),
        tools(
            10,
            &[call(
                "c10",
                "finish_exploration",
                &json!({"error_type": ty, "op_id": op, "reason": "the evidence is lost at this op"}),
            )],
        ),
    ];
    json!({"steps": steps, "fallback": "error"})
}

/// Where op `op` stands in the flat log of `trace` (the order the agents read ops in).
fn log_position(trace: &Trace, op: &str) -> Option<usize> {
    FlatLog::build(trace)
        .ops
        .iter()
        .position(|&(o, _)| trace.op(o).op_id == op)
}

/// An obstrace conversation: inspect, a malformed call, grep (plain and regex), a window, one
/// operation, then the verdict.
pub fn obstrace(trace: &Trace, case: &FailureCase) -> Value {
    let (ty, op) = verdict(case);
    let index = log_position(trace, &op).unwrap_or(0);
    let steps = vec![
        tools(0, &[call("c0", "inspect_trace", &json!({}))]),
        tools(1, &[call("c1", "grep_everything", &json!({}))]),
        tools(
            2,
            &[call(
                "c2",
                "grep_log",
                &json!({"pattern": "question-answering", "max_matches": 3}),
            )],
        ),
        tools(
            3,
            &[call(
                "c3",
                "grep_log",
                &json!({"pattern": "memory[-_]unit", "regex": true, "context": 40}),
            )],
        ),
        tools(
            4,
            &[call(
                "c4",
                "view_window",
                &json!({"start": 0, "length": 2000}),
            )],
        ),
        tools(5, &[call("c5", "view_operation", &json!({"index": index}))]),
        tools(
            6,
            &[call(
                "c6",
                "final_answer",
                &json!({"error_type": ty, "op_id": op, "reason": "seen in the log"}),
            )],
        ),
    ];
    json!({"steps": steps, "fallback": "error"})
}

/// All-at-once: prose without JSON, then an invalid label, then the verdict.
pub fn all_at_once(case: &FailureCase) -> Value {
    let (ty, op) = verdict(case);
    let good = json!({"error_type": ty, "op_id": op, "reason": "from the whole log"}).to_string();
    json!({"steps": [
        text(0, "I think retrieval went wrong."),
        text(1, &json!({"error_type": "Wrong", "op_id": op, "reason": "?"}).to_string()),
        text(2, &good),
    ], "fallback": "error"})
}

/// Step-by-step: a malformed first reply, "not faulty" until the annotated op, then faulty.
pub fn step_by_step(trace: &Trace, case: &FailureCase) -> Value {
    let (ty, op) = verdict(case);
    let target = log_position(trace, &op).unwrap();
    let mut steps = vec![text(0, "maybe")];
    for i in 0..target {
        steps.push(text(i + 1, r#"{"faulty": false, "reason": "fine"}"#));
    }
    steps.push(text(
        target + 1,
        &json!({"faulty": true, "error_type": ty, "reason": "here"}).to_string(),
    ));
    json!({"steps": steps, "fallback": "error"})
}

/// Binary search: halves chosen toward the annotated op (one malformed reply first), then the type.
pub fn binary_search(trace: &Trace, case: &FailureCase) -> Value {
    let (ty, op) = verdict(case);
    let target = log_position(trace, &op).unwrap();
    let mut steps = vec![text(0, r#"{"half": "middle"}"#)];
    let (mut lo, mut hi, mut n) = (0usize, FlatLog::build(trace).ops.len(), 1usize);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        let first = target < mid;
        let half = if first { "first" } else { "second" };
        steps.push(text(n, &json!({"half": half, "reason": "."}).to_string()));
        if first {
            hi = mid;
        } else {
            lo = mid;
        }
        n += 1;
    }
    steps.push(text(
        n,
        &json!({"error_type": ty, "reason": "this step"}).to_string(),
    ));
    json!({"steps": steps, "fallback": "error"})
}

/// `script` without its malformed and invalid replies (steps re-indexed): the conversation a
/// well-behaved model would have, used to compare token costs fairly.
pub fn clean(script: &Value, drop: &[usize]) -> Value {
    let steps: Vec<Value> = script["steps"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .filter(|(i, _)| !drop.contains(i))
        .enumerate()
        .map(|(n, (_, s))| {
            let mut s = s.clone();
            s["index"] = json!(n);
            s
        })
        .collect();
    json!({"steps": steps, "fallback": "error"})
}

/// The steps of each script that are deliberate mistakes (malformed call, invalid verdict) or
/// extra views (the preview).
pub fn mistakes(method: &str) -> &'static [usize] {
    match method {
        "graphtrace" => &[1, 2, 9],
        "obstrace" => &[1],
        "all-at-once" => &[0, 1],
        _ => &[0],
    }
}

/// The script of `method` for `case`.
pub fn script(method: &str, trace: &Trace, case: &FailureCase) -> Value {
    match method {
        "graphtrace" => graphtrace(trace, case),
        "obstrace" => obstrace(trace, case),
        "all-at-once" => all_at_once(case),
        "step-by-step" => step_by_step(trace, case),
        "binary-search" => binary_search(trace, case),
        other => panic!("no script for {other}"),
    }
}

/// The LLM methods.
pub const LLM_METHODS: [&str; 5] = [
    "graphtrace",
    "obstrace",
    "all-at-once",
    "step-by-step",
    "binary-search",
];

/// The tools each agent method must have used in its scripted conversation.
pub fn expected_tools(method: &str) -> &'static [&'static str] {
    match method {
        "graphtrace" => &[
            "initialize",
            "explore_frontier",
            "view_value",
            "edit_frontier",
            "finish_node",
            "view_history",
            "finish_exploration",
        ],
        "obstrace" => &[
            "inspect_trace",
            "grep_log",
            "view_window",
            "view_operation",
            "final_answer",
        ],
        _ => &[],
    }
}

fn regex_escape(s: &str) -> String {
    s.chars().filter(|c| c.is_alphanumeric()).collect()
}
