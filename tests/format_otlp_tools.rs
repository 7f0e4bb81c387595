#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed expectation should panic
//! GenAI `execute_tool` spans with children (the genai_memory fixture, written with the real
//! opentelemetry-sdk, tests/fixtures/otel/README.md): the tool is an op at its end reading its
//! arguments and what its children found, writing its result, which the next model call reads.

#[path = "common/formats.rs"]
mod formats;

use formats::load_ok;
use memtrace::model::{OpIx, Trace};

const MEMORY_PB: &[u8] = include_bytes!("fixtures/otel/genai_memory_traces.pb");

fn values(t: &Trace, vars: impl Iterator<Item = memtrace::model::VarIx>) -> Vec<String> {
    vars.map(|v| t.vars[v.get()].value.clone()).collect()
}

fn tools(t: &Trace) -> Vec<OpIx> {
    (0..t.ops.len() as u32)
        .map(OpIx)
        .filter(|o| t.ops[o.get()].category == "tool")
        .collect()
}

#[test]
fn a_tool_with_children_reads_its_arguments_and_writes_its_result() {
    let t = load_ok(MEMORY_PB).trace;
    let tools = tools(&t);
    assert_eq!(tools.len(), 3, "two stores and one search: {:?}", t.ops);
    let search = *tools
        .iter()
        .find(|&&o| {
            values(&t, t.flow.op_inputs[o.get()].iter().copied())
                .iter()
                .any(|v| v.contains(r#""arguments":{"query":"name of the user's cat"}"#))
        })
        .expect("the search tool reads its arguments, as the call that asked for them");
    let result = r#"[{"id": "mem-1", "memory": "Adopted a cat named Miso in March 2023"}]"#;
    assert_eq!(values(&t, t.flow.op_produced(search)), [result]);
    // Its children are scopes of its work, not a stop of the data flow: it reads the
    // document its memory search found, and the next model call reads its result.
    let doc = t.vars.iter().position(|v| v.name == "mem-1").unwrap();
    assert!(t.flow.op_inputs[search.get()]
        .iter()
        .any(|v| v.get() == doc));
    let result_var = t.flow.op_produced(search).next().unwrap();
    let answer = t
        .vars
        .iter()
        .position(|v| v.value == "Your cat is named Mochi.")
        .unwrap();
    let answer_op = t.flow.producers[answer][0];
    assert!(t.flow.op_inputs[answer_op.get()].contains(&result_var));
    // Each store tool writes its own result after its memory write.
    for o in tools.iter().filter(|&&o| o != search) {
        let out = values(&t, t.flow.op_produced(*o));
        assert!(
            out.len() == 1 && out[0].contains(r#""stored": true"#),
            "{out:?}"
        );
    }
}
