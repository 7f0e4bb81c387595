#![no_main]
//! The agents' tool-argument parsing: a model's tool call (any name, any argument text) is
//! checked against the offered tools, and a well-formed one runs on a synthetic trace's failure
//! case through graphtrace's and obstrace's toolboxes and the verdict validator. Nothing may panic.

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use memtrace::attribution::agent::{validate_verdict, Toolbox};
use memtrace::attribution::graphtrace::GraphTools;
use memtrace::attribution::GraphTrace;
use memtrace::format::synth;
use memtrace::model::Trace;
use memtrace::provider::tools::check_tool_call;
use memtrace::provider::ToolCall;

fn trace() -> &'static Trace {
    static T: OnceLock<Trace> = OnceLock::new();
    T.get_or_init(|| {
        synth::trace(&synth::Options {
            nodes: 300,
            seed: 7,
        })
        .expect("the synthetic trace loads")
    })
}

fuzz_target!(|data: &[u8]| {
    let t = trace();
    let Some(case) = t.cases.first() else { return };
    let settings = GraphTrace::default();
    let mut tools = GraphTools::new(t, case, &settings);
    let specs = tools.specs();
    let (pick, rest) = data.split_first().map_or((0, &[][..]), |(p, r)| (*p, r));
    let arguments = String::from_utf8_lossy(rest).into_owned();
    let name = specs
        .get(usize::from(pick) % (specs.len() + 1))
        .map_or_else(|| arguments.chars().take(12).collect(), |s| s.name.clone());
    let call = ToolCall {
        id: "c".into(),
        name: name.clone(),
        arguments,
    };
    if let Ok(args) = check_tool_call(&call, &specs) {
        let _ = tools.call(&name, &args);
        let _ = validate_verdict(t, &args);
    }
});
