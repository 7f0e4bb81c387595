#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed expectation should panic
//! Agents whose memory is a tool, exported by real packages (tests/fixtures/otel/README.md):
//! OpenLLMetry's `traceloop-sdk` (workflow / task / agent / tool spans with
//! `traceloop.entity.input|output`) and the GenAI memory conventions (`execute_tool`,
//! `update_memory` / `search_memory` with `gen_ai.memory.*`, set with the real
//! opentelemetry-sdk). Both run one script: facts extracted and stored, the question answered
//! through a `search_memory` tool call ("Mochi", though memory says "Miso"), an LLM judge.

#[path = "common/formats.rs"]
mod formats;

use formats::load_ok;
use memtrace::format::conventions;
use memtrace::model::{OpIx, Trace};

const TRACELOOP_PB: &[u8] = include_bytes!("fixtures/otel/traceloop_traces.pb");
const TRACELOOP_JSON: &str = include_str!("fixtures/otel/traceloop_traces.json");
const TRACELOOP_SNAKE: &str = include_str!("fixtures/otel/traceloop_traces_snake.json");
const TRACELOOP_GZ: &[u8] = include_bytes!("fixtures/otel/traceloop_traces.pb.gz");
const MEMORY_PB: &[u8] = include_bytes!("fixtures/otel/genai_memory_traces.pb");
const MEMORY_JSON: &str = include_str!("fixtures/otel/genai_memory_traces.json");
const MEMORY_ZST: &[u8] = include_bytes!("fixtures/otel/genai_memory_traces.pb.zst");

fn ops_of(t: &Trace, category: &str) -> Vec<OpIx> {
    (0..t.ops.len() as u32)
        .map(OpIx)
        .filter(|o| t.ops[o.get()].category == category)
        .collect()
}

/// Values `op` reads and writes.
fn read_by(t: &Trace, op: OpIx) -> Vec<&str> {
    let ins = &t.flow.op_inputs[op.get()];
    ins.iter().map(|v| t.vars[v.get()].value.as_str()).collect()
}

fn made_by(t: &Trace, op: OpIx) -> Vec<(String, String)> {
    t.flow
        .op_produced(op)
        .map(|v| (t.vars[v.get()].name.clone(), t.vars[v.get()].value.clone()))
        .collect()
}

/// The op that writes a variable named `name`.
fn writer(t: &Trace, name: &str) -> OpIx {
    (0..t.ops.len() as u32)
        .map(OpIx)
        .find(|&o| made_by(t, o).iter().any(|(n, _)| n == name))
        .unwrap_or_else(|| panic!("nobody writes {name}"))
}

fn contains(values: &[&str], needle: &str) -> bool {
    values.iter().any(|v| v.contains(needle))
}

const FACT: &str = "Adopted a cat named Miso in March 2023";

/// The data flow both agents must show: the extraction's fact stored as memory unit `mem-1`,
/// found by the memory search as document `mem-1`, read by the answering call; one judged
/// question, failed.
fn memory_flow(t: &Trace, which: &str) {
    assert_eq!(ops_of(t, "llm").len(), 4, "{which}: 4 chat completions");
    let store = writer(t, "memory-unit-mem-1");
    assert!(
        contains(&read_by(t, store), FACT),
        "{which}: store reads the fact"
    );
    let mem = &t.vars[t
        .vars
        .iter()
        .position(|v| v.name == "memory-unit-mem-1")
        .unwrap()];
    assert_eq!(mem.value, FACT, "{which}");
    let search = writer(t, "mem-1");
    assert!(
        read_by(t, search).contains(&FACT),
        "{which}: the search reads memory unit mem-1: {:?}",
        read_by(t, search)
    );
    assert!(
        contains(&read_by(t, search), "name of the user's cat"),
        "{which}"
    );
    let named = |v: &str| t.vars.iter().find(|x| x.value == v).map(|x| x.name.clone());
    let answer = writer(t, &named("Your cat is named Mochi.").unwrap());
    let answer_reads = read_by(t, answer);
    assert!(contains(
        &made_by(t, answer)
            .iter()
            .map(|(_, v)| v.as_str())
            .collect::<Vec<_>>(),
        "Mochi"
    ));
    let doc = t.vars.iter().position(|v| v.name == "mem-1").unwrap();
    // Directly, or through the result of the tool that found it.
    let reads_doc = |v: &memtrace::model::VarIx| {
        v.get() == doc
            || t.flow.producers[v.get()]
                .iter()
                .any(|p| t.flow.op_inputs[p.get()].iter().any(|x| x.get() == doc))
    };
    assert!(
        t.flow.op_inputs[answer.get()].iter().any(reads_doc),
        "{which}: the answer reads the found document: {answer_reads:?}"
    );
    assert_eq!(t.cases.len(), 1, "{which}: one failed question");
    assert_eq!(t.cases[0].query, "What is the name of my cat?", "{which}");
    assert!(t.cases[0].prediction.contains("Mochi"), "{which}");
}

#[test]
fn openllmetry_tool_and_task_spans_carry_their_inputs_and_outputs() {
    let loaded = load_ok(TRACELOOP_PB);
    assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
    let t = &loaded.trace;
    memory_flow(t, "traceloop");
    // Tool spans: two stores and the search, each reading its argument and writing its result.
    let tools = ops_of(t, "tool");
    assert_eq!(tools.len(), 3, "{:?}", t.ops);
    for o in tools {
        assert!(
            !read_by(t, o).is_empty() && !made_by(t, o).is_empty(),
            "{:?}",
            t.ops[o.get()]
        );
    }
    // The store tool reads the extraction call's reply, the fact inside it.
    let store = writer(t, "memory-unit-mem-1");
    assert!(
        contains(&read_by(t, store), r#"{"facts": ["#),
        "{:?}",
        read_by(t, store)
    );
    // The judge task (a chain) reads the question, gold and answer it was called with.
    let judge = ops_of(t, "chain");
    assert_eq!(judge.len(), 1);
    assert!(contains(&read_by(t, judge[0]), "Your cat is named Mochi."));
}

#[test]
fn genai_memory_ops_are_memory_unit_versions_keyed_by_record_id() {
    let loaded = load_ok(MEMORY_PB);
    assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
    let t = &loaded.trace;
    memory_flow(t, "genai_memory");
    let units: Vec<&str> = t
        .vars
        .iter()
        .filter(|v| v.name.starts_with("memory-unit-"))
        .map(|v| v.name.as_str())
        .collect();
    assert_eq!(units, ["memory-unit-mem-1", "memory-unit-mem-2"]);
    assert_eq!(
        ops_of(t, "retrieval").len(),
        1,
        "search_memory is a retrieval"
    );
    // The memory write reads the fact it stores and the extraction reply the fact came from.
    let store = writer(t, "memory-unit-mem-2");
    let read = read_by(t, store);
    assert!(contains(&read, "Works as a nurse in Leeds"), "{read:?}");
    assert!(contains(&read, r#"{"facts": ["#), "{read:?}");
}

#[test]
fn every_encoding_of_the_agent_exports_loads_to_one_graph() {
    let graph = |b: &[u8]| {
        let t = load_ok(b).trace;
        String::from_utf8(memtrace::format::smartcomment::write(&t).unwrap()).unwrap()
    };
    let pb = graph(TRACELOOP_PB);
    assert_eq!(pb, graph(TRACELOOP_JSON.as_bytes()));
    assert_eq!(pb, graph(TRACELOOP_SNAKE.as_bytes()));
    assert_eq!(pb, graph(TRACELOOP_GZ));
    assert_eq!(graph(MEMORY_PB), graph(MEMORY_JSON.as_bytes()));
    assert_eq!(graph(MEMORY_PB), graph(MEMORY_ZST));
}

#[test]
fn conventions_name_openllmetry_and_the_genai_memory_ops() {
    let tl = conventions(TRACELOOP_PB, memtrace::format::limits::MAX_FILE_BYTES);
    assert!(
        tl.recognized.iter().any(|r| r.starts_with("OpenLLMetry")),
        "{tl:?}"
    );
    assert_eq!(
        (tl.llm_calls, tl.tool_calls, tl.tool_spans, tl.memory_ops),
        (4, 1, 3, 0)
    );
    assert!(tl
        .line()
        .contains("4 LLM calls, 1 tool calls (3 tool spans), 0 memory ops"));
    let gm = conventions(MEMORY_PB, memtrace::format::limits::MAX_FILE_BYTES);
    assert!(
        gm.recognized.iter().any(|r| r == "GenAI semconv on spans"),
        "{gm:?}"
    );
    // Two update_memory spans and one search_memory span; three execute_tool spans.
    assert_eq!(
        (gm.llm_calls, gm.tool_spans, gm.memory_ops),
        (4, 3, 3),
        "{gm:?}"
    );
}

#[path = "common/otlp_build.rs"]
mod otlp_build;

/// Written here, not by a package: openinference-instrumentation-openai writes `llm.prompts.*`
/// / `llm.choices.*` only for the completions API, which the local LLM server does not serve.
#[test]
fn completions_api_prompts_and_choices_and_prompt_spans_are_read() {
    let t = otlp_build::trace(&[
        otlp_build::span(
            "render",
            None,
            (0, 5),
            &[
                ("openinference.span.kind", "PROMPT"),
                ("input.value", "cat"),
                ("output.value", "Q: name of the cat? A:"),
            ],
        ),
        otlp_build::span(
            "complete",
            None,
            (10, 20),
            &[
                ("openinference.span.kind", "LLM"),
                ("llm.prompts.0.prompt.text", "Q: name of the cat? A:"),
                ("llm.choices.0.completion.text", "Miso"),
            ],
        ),
        otlp_build::span(
            "update",
            None,
            (30, 31),
            &[
                ("gen_ai.operation.name", "update_memory"),
                ("gen_ai.memory.id", "mem-9"),
            ],
        ),
    ]);
    let cat = |c: &str| ops_of(&t, c);
    assert_eq!(
        (cat("chain").len(), cat("llm").len()),
        (1, 1),
        "PROMPT is a chain"
    );
    let llm = cat("llm")[0];
    assert_eq!(read_by(&t, llm), ["Q: name of the cat? A:"]);
    assert!(made_by(&t, llm).iter().any(|(_, v)| v == "Miso"));
    assert!(
        read_by(&t, llm).len() == 1
            && t.flow.op_inputs[llm.get()][0]
                == t.flow.op_produced(cat("chain")[0]).next().unwrap(),
        "the completion reads the rendered prompt"
    );
    assert!(
        !t.vars.iter().any(|v| v.name.starts_with("memory-unit-")),
        "an update without its (opt-in) content makes no version, and no deletion"
    );
}

/// Written here, not by a package (no Langfuse SDK export among the fixtures yet): the
/// Langfuse-over-OTel attributes `langfuse.observation.type|input|output` give the span its
/// kind, input and output, and the answer reads what the search found.
#[test]
fn langfuse_observation_attributes_are_the_spans_kind_input_and_output() {
    let t = otlp_build::trace(&[
        otlp_build::span(
            "search",
            None,
            (0, 5),
            &[
                ("langfuse.observation.type", "retriever"),
                ("langfuse.observation.input", "name of the user's cat"),
                (
                    "langfuse.observation.output",
                    r#"["Adopted a cat named Miso in March 2023"]"#,
                ),
            ],
        ),
        otlp_build::span(
            "answer",
            None,
            (10, 20),
            &[
                ("langfuse.observation.type", "generation"),
                (
                    "langfuse.observation.input",
                    r#"[{"role": "user", "content": "Memory: Adopted a cat named Miso in March 2023. What is the name of my cat?"}]"#,
                ),
                ("langfuse.observation.output", "Your cat is named Mochi."),
            ],
        ),
    ]);
    let (search, answer) = (ops_of(&t, "retrieval"), ops_of(&t, "llm"));
    assert_eq!((search.len(), answer.len()), (1, 1), "{:?}", t.ops);
    assert!(contains(&read_by(&t, search[0]), "name of the user's cat"));
    assert!(made_by(&t, answer[0])
        .iter()
        .any(|(_, v)| v.contains("Mochi")));
    let found: Vec<_> = t.flow.op_produced(search[0]).collect();
    assert!(
        t.flow.op_inputs[answer[0].get()]
            .iter()
            .any(|v| found.contains(v)),
        "the answer reads the search's output: {:?}",
        read_by(&t, answer[0])
    );
}

fn pairs(a: &[(String, String)]) -> Vec<(&str, &str)> {
    a.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

/// Written here, in the shape Agno's MemoryManager and openinference-instrumentation-agno give
/// (tests/data/lab/agno holds the real ones): a reply with two tool calls is two values, and the
/// tool span that ran each call reads that value, not a copy of its own.
#[test]
fn each_tool_call_is_a_value_the_tool_span_that_ran_it_reads() {
    let call = |i: usize, k: &str, v: &str| {
        (
            format!("llm.output_messages.0.message.tool_calls.{i}.tool_call.function.{k}"),
            v.to_owned(),
        )
    };
    let mut llm: Vec<(String, String)> = vec![
        ("openinference.span.kind".into(), "LLM".into()),
        ("llm.input_messages.0.message.role".into(), "system".into()),
        (
            "llm.input_messages.0.message.content".into(),
            "ID: m-1\nMemory: Went to the support group on 7 May 2023".into(),
        ),
        (
            "llm.output_messages.0.message.role".into(),
            "assistant".into(),
        ),
    ];
    llm.push(call(0, "name", "add_memory"));
    llm.push(call(
        0,
        "arguments",
        r#"{"memory": "Likes painting lake sunrises", "topics": null}"#,
    ));
    llm.push(call(1, "name", "update_memory"));
    llm.push(call(
        1,
        "arguments",
        r#"{"memory_id": "m-1", "memory": "Went to the support group on 16 May 2023"}"#,
    ));
    let tool = |name: &str, args: &str| {
        vec![
            ("openinference.span.kind".to_owned(), "TOOL".to_owned()),
            ("tool.name".to_owned(), name.to_owned()),
            ("input.value".to_owned(), args.to_owned()),
            ("output.value".to_owned(), "done".to_owned()),
        ]
    };
    let add = tool(
        "add_memory",
        r#"{"memory":"Likes painting lake sunrises","topics":null}"#,
    );
    let update = tool(
        "update_memory",
        r#"{"memory_id":"m-1","memory":"Went to the support group on 16 May 2023"}"#,
    );
    let t = otlp_build::trace(&[
        otlp_build::span("OpenAIChat.invoke", None, (0, 5), &pairs(&llm)),
        otlp_build::span("add_memory", None, (10, 11), &pairs(&add)),
        otlp_build::span("update_memory", None, (12, 13), &pairs(&update)),
    ]);
    let model = ops_of(&t, "llm")[0];
    let calls: Vec<_> = t.flow.op_produced(model).collect();
    assert_eq!(calls.len(), 2, "{:?}", made_by(&t, model));
    let tools = ops_of(&t, "tool");
    assert_eq!(tools.len(), 2);
    for (tool, call) in tools.iter().zip(&calls) {
        assert_eq!(
            t.flow.op_inputs[tool.get()],
            vec![*call],
            "{:?}",
            read_by(&t, *tool)
        );
    }
}
