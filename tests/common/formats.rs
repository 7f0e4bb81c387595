//! Helpers shared by the format tests; they run natively and in the browser.
#![allow(dead_code, clippy::expect_used)] // helpers of tests; not every test file uses each

use memtrace::format::{load, Format, FormatError, LoadOptions, Loaded};
use memtrace::model::{OpIx, Trace, VarIx};
use serde_json::Value;

pub fn load_ok(bytes: &[u8]) -> Loaded {
    load(bytes, LoadOptions::default()).unwrap_or_else(|e| panic!("expected to load: {e}"))
}

pub fn load_err(bytes: &[u8]) -> FormatError {
    match load(bytes, LoadOptions::default()) {
        Ok(l) => panic!("expected an error, loaded {} ops", l.trace.ops.len()),
        Err(e) => e,
    }
}

pub fn load_as(bytes: &[u8], format: Format) -> Result<Loaded, FormatError> {
    load(
        bytes,
        LoadOptions {
            format: Some(format),
            lenient: false,
            ..Default::default()
        },
    )
}

pub fn load_lenient(bytes: &[u8]) -> Loaded {
    load(
        bytes,
        LoadOptions {
            format: None,
            lenient: true,
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| panic!("lenient load failed: {e}"))
}

/// Weakly connected components of the bipartite graph (variables + operations).
pub fn components(t: &Trace) -> usize {
    fn find(p: &mut [usize], mut x: usize) -> usize {
        while p[x] != x {
            p[x] = p[p[x]];
            x = p[x];
        }
        x
    }
    let nv = t.vars.len();
    let mut parent: Vec<usize> = (0..nv + t.ops.len()).collect();
    for &(s, d, o) in &t.flow.edge_ends {
        for v in [s, d] {
            let (a, b) = (find(&mut parent, v.get()), find(&mut parent, nv + o.get()));
            parent[a] = b;
        }
    }
    (0..parent.len())
        .filter(|&x| find(&mut parent, x) == x)
        .count()
}

/// The `nth` operation (file order) with this name.
pub fn op_named(t: &Trace, name: &str, nth: usize) -> OpIx {
    let i = t
        .ops
        .iter()
        .enumerate()
        .filter(|(_, o)| o.op_name == name)
        .nth(nth)
        .map(|(i, _)| i);
    OpIx(i.unwrap_or_else(|| panic!("no op #{nth} named {name}")) as u32)
}

pub fn var(t: &Trace, id: &str) -> VarIx {
    t.var_by_id(id)
        .unwrap_or_else(|| panic!("no variable {id}"))
}

pub fn reads(t: &Trace, op: OpIx, v: VarIx) -> bool {
    t.flow.op_inputs[op.get()].contains(&v)
}

pub fn produces(t: &Trace, op: OpIx, v: VarIx) -> bool {
    t.flow.op_produced(op).any(|x| x == v)
}

/// The variable `op` produced whose value contains `needle`.
pub fn produced_with(t: &Trace, op: OpIx, needle: &str) -> VarIx {
    t.flow
        .op_produced(op)
        .find(|&v| t.var(v).value.contains(needle))
        .unwrap_or_else(|| panic!("op {} produced nothing with {needle:?}", t.op(op).op_name))
}

/// Replaces the value at a JSON pointer in a JSON document.
pub fn edit(json: &str, pointer: &str, value: Value) -> String {
    let mut doc: Value = serde_json::from_str(json).expect("valid JSON");
    *doc.pointer_mut(pointer)
        .unwrap_or_else(|| panic!("no {pointer}")) = value;
    serde_json::to_string(&doc).expect("serializable")
}

/// Replaces the value at a JSON pointer in line `line` (0-based) of a JSON Lines file.
pub fn edit_line(jsonl: &str, line: usize, pointer: &str, value: Value) -> Vec<u8> {
    let mut lines: Vec<String> = jsonl.lines().map(str::to_owned).collect();
    lines[line] = edit(&lines[line], pointer, value);
    (lines.join("\n") + "\n").into_bytes()
}
