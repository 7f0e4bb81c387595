//! `format::stepwise::StepLoad`: a load in bounded steps gives what `format::load` gives, for
//! good files and bad ones, and is split into many steps where it can be. Both check each record
//! once and leave duplicate and dangling ids to the index: a file with any kind of bad record is
//! still refused.

use memtrace::format::limits::{check, Limits, Scan};
use memtrace::format::stepwise::StepLoad;
use memtrace::format::{load, synth, Format, FormatError, LoadOptions, Loaded};

const FIXTURE: &[u8] = include_bytes!("fixtures/smartcomment/locomo/locomo_locomo-1.json");
const DEMO: &[u8] = include_bytes!("../www/demo.json");
const OTLP: &[u8] = include_bytes!("fixtures/otlp/mem0_genai_eval.jsonl");
const BARE: &[u8] = include_bytes!("fixtures/smartcomment/mem0_bare.json");

/// Steps `bytes` to the end with `budget`; the result and the number of steps.
fn stepped(bytes: &[u8], opts: LoadOptions, budget: usize) -> (Result<Loaded, FormatError>, usize) {
    let mut s = StepLoad::new(bytes, opts);
    let mut last = s.progress();
    for n in 1.. {
        if let Some(r) = s.step(budget) {
            assert!(s.step(budget).is_none(), "a second result after the first");
            return (r, n);
        }
        assert!(s.progress() >= last, "progress went back");
        last = s.progress();
    }
    unreachable!()
}

fn same(bytes: &[u8], opts: LoadOptions, budget: usize) -> usize {
    let (got, steps) = stepped(bytes, opts, budget);
    let want = load(bytes, opts);
    match (got, want) {
        (Ok(g), Ok(w)) => {
            assert_eq!(g.format, w.format);
            assert_eq!(g.problems, w.problems);
            assert!(
                g.trace == w.trace,
                "the stepped trace differs (budget {budget})"
            );
        }
        (Err(g), Err(w)) => assert_eq!(g, w),
        (g, w) => panic!("stepped {:?} vs load {:?}", g.map(|_| ()), w.map(|_| ())),
    }
    steps
}

#[test]
fn good_files_give_the_same_trace_at_any_budget() {
    let gen = synth::bytes(&synth::Options {
        nodes: 400,
        seed: 5,
    });
    for bytes in [FIXTURE, DEMO, BARE, gen.as_slice()] {
        for budget in [1, 700, 64 * 1024, usize::MAX] {
            same(bytes, LoadOptions::default(), budget);
        }
    }
}

#[test]
fn a_large_file_is_split_into_many_steps() {
    let gen = synth::bytes(&synth::Options {
        nodes: 2000,
        seed: 6,
    });
    let budget = 16 * 1024;
    let steps = same(&gen, LoadOptions::default(), budget);
    // Two passes over the bytes (limits, parse), each about `budget` bytes a step.
    assert!(
        steps > 3 * gen.len() / budget / 2,
        "{steps} steps for {} bytes",
        gen.len()
    );
    let cases = load(&gen, LoadOptions::default())
        .unwrap()
        .trace
        .cases
        .len();
    assert!(cases > 0, "the generated trace has failures to find");
}

#[test]
fn bad_files_give_the_same_error() {
    let fixture = std::str::from_utf8(FIXTURE).unwrap();
    let first_node = fixture.find("\"nodes\"").unwrap();
    let mut bad: Vec<Vec<u8>> = [
        "",
        "   ",
        "[]",
        "{}",
        r#"{"graph_id":"g"}"#,
        r#"{"graph_id":"g","data":{"nodes":[],}}"#,
        r#"{"graph_id":"g","data":{"nodes":[1]}}"#,
        r#"{"graph_id":"g","data":{"nodes":[]}} x"#,
        r#"{"graph_id":"g","data":{"nodes":[]},}"#,
        r#"{"graph_id":7,"data":{"nodes":[]}}"#,
        r#"{"graph_id":"g","data":{"nodes":[{"full_node_id":"a"},]}}"#,
        r#"{"graph_id":"g","data":{"nodes":[{"full_node_id":"a"}"#,
        r#"{"graph_id":"g","data":{"edges":[{"edge_id":"e","source_node_id":"nope"}]}}"#,
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    // Cut in the middle of the records; a wrong type deep in a record.
    bad.push(FIXTURE[..first_node + 5000].to_vec());
    bad.push(
        fixture
            .replacen("\"full_node_id\"", "\"full_node_id\": 5, \"x\"", 3)
            .into_bytes(),
    );
    bad.push(format!("{}1{}", "[".repeat(200), "]".repeat(200)).into_bytes());
    for bytes in &bad {
        for budget in [1, 100, usize::MAX] {
            same(bytes, LoadOptions::default(), budget);
        }
    }
}

#[test]
fn odd_but_valid_files_give_the_same_trace() {
    let fixture = std::str::from_utf8(FIXTURE).unwrap();
    let odd = [
        // A byte order mark, and data's keys twice (the later list replaces the earlier).
        format!("\u{feff}{fixture}"),
        fixture.replacen("\"data\": {", "\"data\": {\"nodes\": [{\"full_node_id\": \"dropped\"}], \"x_extra\": [1,{\"a\":null}],", 1),
        // Whitespace everywhere JSON allows it, and the top-level keys after data.
        r#" { "data" : { "nodes" : [ ] , "edges" : [ ] } , "graph_id" : "g" } "#.to_owned(),
        r#"{"graph_id":"g","data":{}}"#.to_owned(),
    ];
    for bytes in &odd {
        for budget in [1, 50, usize::MAX] {
            same(bytes.as_bytes(), LoadOptions::default(), budget);
        }
    }
}

#[test]
fn other_formats_and_lenient_loads_are_one_step_with_the_same_result() {
    let lenient = LoadOptions {
        lenient: true,
        ..LoadOptions::default()
    };
    same(OTLP, LoadOptions::default(), 100);
    same(FIXTURE, lenient, 100);
    let forced = LoadOptions {
        format: Some(Format::Otlp),
        lenient: false,
        ..Default::default()
    };
    same(FIXTURE, forced, 100);
}

#[test]
fn the_limits_pass_in_pieces_refuses_what_the_whole_pass_refuses() {
    let l = Limits {
        max_file_bytes: 1000,
        max_depth: 3,
        max_string_bytes: 5,
    };
    for input in [
        &br#"{"a":[1,{"b":"12345"}]}"#[..],
        b"{\n [[[1]]]}",
        br#"{"a":"12\"3456"}"#,
        &[b' '; 1001],
    ] {
        let mut s = Scan::default();
        let got = loop {
            match s.step(input, &l, 1) {
                Ok(true) => break Ok(()),
                Ok(false) => {}
                Err(e) => break Err(e),
            }
        };
        assert_eq!(got, check(input, &l), "{}", String::from_utf8_lossy(input));
    }
}

#[test]
fn records_that_fail_validation_give_the_same_error() {
    type Edit = fn(&mut serde_json::Value);
    let demo: serde_json::Value = serde_json::from_slice(DEMO).unwrap();
    let edits: [(&str, Edit); 11] = [
        ("a duplicate node id", |d| {
            d["nodes"][3] = d["nodes"][1].clone();
        }),
        ("a duplicate op id", |d| {
            d["operations"][2]["op_id"] = d["operations"][0]["op_id"].clone();
        }),
        ("a duplicate edge id", |d| {
            d["edges"][5]["edge_id"] = d["edges"][4]["edge_id"].clone();
        }),
        ("a dangling edge source", |d| {
            d["edges"][2]["source_full_node_id"] = "nowhere@1".into();
        }),
        ("a dangling edge target", |d| {
            d["edges"][3]["target_full_node_id"] = "nowhere@2".into();
        }),
        ("a dangling annotation op", |d| {
            d["annotations"][1]["final_op_id"] = "op-nowhere".into();
        }),
        ("a dangling edge op", |d| {
            d["edges"][2]["op_id"] = "op-nowhere".into();
        }),
        ("a dangling session", |d| {
            d["nodes"][4]["session_id"] = "s-nowhere".into();
        }),
        ("a bad timestamp", |d| {
            d["edges"][7]["created_at"] = "yesterday".into();
        }),
        ("a dangling annotation", |d| {
            d["annotations"][0]["query_id"] = "query:nowhere@1".into();
        }),
        ("an unknown error type", |d| {
            d["annotations"][0]["final_error_type"] = "TypoError".into();
        }),
    ];
    for (what, edit) in edits {
        let mut bad = demo.clone();
        edit(&mut bad["data"]);
        let bytes = serde_json::to_vec(&bad).unwrap();
        assert!(
            load(&bytes, LoadOptions::default()).is_err(),
            "{what}: load accepts it"
        );
        for budget in [1, 700, 64 * 1024] {
            same(&bytes, LoadOptions::default(), budget);
        }
    }
}
