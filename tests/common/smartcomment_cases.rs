// Test bodies shared by the native suite (`format_smartcomment.rs`) and the browser suite
// (`format_browser.rs`): `smartcomment_cases!(test)` / `smartcomment_cases!(wasm_bindgen_test)`.

#[allow(unused_macros)]
macro_rules! smartcomment_cases {
    ($attr:meta) => {
        use memtrace::format::{load, smartcomment, FormatError, LoadOptions};

        const FIXTURE_1: &[u8] = include_bytes!("fixtures/smartcomment/locomo/locomo_locomo-1.json");
        const FIXTURE_2: &[u8] = include_bytes!("fixtures/smartcomment/locomo/locomo_locomo-2.json");
        const DEMO: &[u8] = include_bytes!("../www/demo.json");

        fn strict(bytes: &[u8]) -> Result<memtrace::Loaded, FormatError> {
            load(bytes, LoadOptions::default())
        }

        /// The fixture with one JSON edit applied, re-serialized.
        fn edited(edit: impl FnOnce(&mut serde_json::Value)) -> Vec<u8> {
            let mut v: serde_json::Value = serde_json::from_slice(FIXTURE_2).unwrap();
            edit(&mut v);
            serde_json::to_vec_pretty(&v).unwrap()
        }

        #[$attr]
        fn fixtures_load_with_the_counts_their_readme_states() {
            // sessions, operations, variables (nodes), edges, annotations, failures
            for (bytes, want) in [(FIXTURE_1, (6, 107, 417, 673, 6)), (FIXTURE_2, (5, 99, 362, 569, 3))] {
                let t = strict(bytes).unwrap().trace;
                let got = (t.sessions.len(), t.ops.len(), t.vars.len(), t.edges.len(), t.cases.len());
                assert_eq!(got, want);
                assert!(t.cases.iter().all(|c| c.annotation.is_some() && c.judge_score == Some(0.0)));
            }
            let s = strict(FIXTURE_1).unwrap().trace.summary("smartcomment");
            assert_eq!(s.annotations_by_type.get("ResponseError"), Some(&2));
            assert_eq!(s.annotations_by_type.get("DeletionError"), Some(&1));
        }

        #[$attr]
        fn writing_what_we_read_gives_the_same_bytes() {
            for bytes in [FIXTURE_1, FIXTURE_2, DEMO] {
                let t = strict(bytes).unwrap().trace;
                let out = smartcomment::write(&t).unwrap();
                let a: serde_json::Value = serde_json::from_slice(bytes).unwrap();
                let b: serde_json::Value = serde_json::from_slice(&out).unwrap();
                assert_eq!(a, b, "JSON values differ after a round trip");
                assert!(out == bytes, "bytes differ after a round trip");
                let again = strict(&out).unwrap().trace;
                assert_eq!(again, t, "parse → write → parse changed the model");
            }
        }

        #[$attr]
        fn unknown_keys_survive_the_round_trip() {
            let bytes = edited(|v| {
                v["x_top"] = serde_json::json!({"keep": [1, 2]});
                v["data"]["x_data"] = serde_json::json!("d");
                v["data"]["nodes"][0]["x_node"] = serde_json::json!(null);
                v["data"]["edges"][3]["x_edge"] = serde_json::json!(1.5);
                v["data"]["operations"][1]["x_op"] = serde_json::json!(true);
                v["data"]["sessions"][0]["x_session"] = serde_json::json!("s");
                v["data"]["annotations"][0]["x_ann"] = serde_json::json!({"a": "b"});
            });
            let t = strict(&bytes).unwrap().trace;
            let out = smartcomment::write(&t).unwrap();
            let a: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
            let b: serde_json::Value = serde_json::from_slice(&out).unwrap();
            assert_eq!(a, b);
        }

        #[$attr]
        fn bipartite_roles_follow_in_degree_inside_each_op() {
            let t = strict(FIXTURE_1).unwrap().trace;
            let judge = t.ops.iter().position(|o| o.op_name == "llm-judge").unwrap();
            let name = |v: &memtrace::model::VarIx| t.var(*v).class_name.clone().unwrap_or_default();
            let ins: Vec<String> = t.flow.op_inputs[judge].iter().map(name).collect();
            let mids: Vec<String> = t.flow.op_intermediates[judge].iter().map(name).collect();
            let outs: Vec<String> = t.flow.op_outputs[judge].iter().map(name).collect();
            assert!(ins.contains(&"query".to_owned()) && ins.contains(&"prediction".to_owned()), "{ins:?}");
            assert_eq!(mids, ["judge_response"]);
            assert_eq!(outs, ["judge_score"]);
            // A mutation: the deletion op reads version 1 of a unit and produces version 2.
            let del = t.ops.iter().position(|o| o.category == "deletion").unwrap();
            let unit_versions: Vec<u32> = t.flow.op_vars(memtrace::model::OpIx(del as u32))
                .map(|(v, _)| t.var(v))
                .filter(|r| r.name.starts_with("memory-unit-"))
                .map(|r| r.version)
                .collect();
            assert!(unit_versions.contains(&1) && unit_versions.contains(&2), "{unit_versions:?}");
        }

        #[$attr]
        fn failures_without_annotations_come_from_zero_judge_scores() {
            let bytes = edited(|v| {
                v["data"].as_object_mut().unwrap().remove("annotations");
            });
            let t = strict(&bytes).unwrap().trace;
            assert_eq!(t.cases.len(), 3);
            for c in &t.cases {
                assert!(c.annotation.is_none());
                assert!(c.query_id.starts_with("query:"), "{}", c.query_id);
                assert!(!c.golden_answers.is_empty() && !c.prediction.is_empty(), "{c:?}");
                assert!(c.evidence_ids.iter().all(|e| t.var_by_id(e).is_some()), "{:?}", c.evidence_ids);
                assert!(c.answer_op.is_some() && c.judge_op.is_some());
            }
        }

        #[$attr]
        fn truncated_json_names_line_and_column() {
            let cut = &FIXTURE_2[..FIXTURE_2.len() / 2];
            let e = strict(cut).unwrap_err();
            assert!(matches!(e, FormatError::Json { .. }), "{e:?}");
            let msg = e.to_string();
            assert!(msg.contains("line ") && msg.contains("column") && msg.contains("truncated"), "{msg}");
        }

        #[$attr]
        fn a_field_of_the_wrong_type_names_its_path() {
            let bytes = edited(|v| v["data"]["nodes"][7]["version"] = serde_json::json!("two"));
            let e = strict(&bytes).unwrap_err();
            assert!(e.to_string().contains("data.nodes[7].version"), "{e}");
        }

        #[$attr]
        fn a_dangling_reference_names_path_and_id() {
            let bytes = edited(|v| v["data"]["edges"][5]["source_full_node_id"] = serde_json::json!("ghost@1"));
            let e = strict(&bytes).unwrap_err();
            assert!(matches!(e, FormatError::Dangling { .. }), "{e:?}");
            let msg = e.to_string();
            assert!(msg.contains("data.edges[5].source_full_node_id") && msg.contains("ghost@1"), "{msg}");
        }

        #[$attr]
        fn a_trace_indexed_first_finds_the_cases_load_finds_and_refuses_what_load_refuses() {
            let indexed = |b: &[u8]| memtrace::format::load_indexed(b, LoadOptions::default());
            for bytes in [FIXTURE_1, FIXTURE_2, DEMO] {
                let later = indexed(bytes).unwrap();
                assert!(later.problems().is_empty());
                let later = later.find_cases().trace;
                assert!(!later.cases.is_empty());
                assert_eq!(later, strict(bytes).unwrap().trace);
            }
            // What only finding the cases read (the annotations) is refused before they are found.
            let typo = edited(|v| v["data"]["annotations"][0]["final_error_type"] = serde_json::json!("TypoError"));
            let ghost = edited(|v| v["data"]["annotations"][1]["final_op_id"] = serde_json::json!("op-ghost"));
            for (bytes, path) in [(typo, "data.annotations[0].final_error_type"), (ghost, "data.annotations[1].final_op_id")] {
                let e = indexed(&bytes).unwrap_err().to_string();
                assert!(e.contains(path), "{e}");
                assert_eq!(e, strict(&bytes).unwrap_err().to_string());
            }
        }

        #[$attr]
        fn a_duplicate_id_names_both_places() {
            let bytes = edited(|v| {
                let op = v["data"]["operations"][0].clone();
                v["data"]["operations"].as_array_mut().unwrap().push(op);
            });
            let e = strict(&bytes).unwrap_err();
            let msg = e.to_string();
            assert!(msg.contains("data.operations[99].op_id") && msg.contains("data.operations[0]"), "{msg}");
        }

        #[$attr]
        fn a_cycle_is_reported_not_looped_on() {
            // Make a retrieval output feed back into the extraction op that (indirectly) produced it.
            let bytes = edited(|v| {
                let edges = v["data"]["edges"].as_array().unwrap().clone();
                let first = edges[0].clone();
                let judge_out = edges.iter().rev().find(|e| e["category"] == "evaluation").unwrap().clone();
                let mut back = first.clone();
                back["edge_id"] = serde_json::json!("edge-cycle");
                back["source_full_node_id"] = judge_out["target_full_node_id"].clone();
                back["target_full_node_id"] = first["source_full_node_id"].clone();
                let mut fwd = judge_out.clone();
                fwd["edge_id"] = serde_json::json!("edge-cycle-2");
                fwd["source_full_node_id"] = first["target_full_node_id"].clone();
                v["data"]["edges"].as_array_mut().unwrap().extend([back, fwd]);
            });
            let e = strict(&bytes).unwrap_err();
            assert!(matches!(e, FormatError::Cycle { .. }), "{e:?}");
            assert!(e.location().starts_with("data.nodes["), "{e}");
            let lenient = load(&bytes, LoadOptions { lenient: true, ..LoadOptions::default() }).unwrap();
            assert!(lenient.problems.iter().any(|p| matches!(p, FormatError::Cycle { .. })));
        }

        #[$attr]
        fn a_bad_timestamp_names_its_path() {
            let bytes = edited(|v| v["data"]["operations"][4]["created_at"] = serde_json::json!("last tuesday"));
            let e = strict(&bytes).unwrap_err();
            assert!(e.to_string().contains("data.operations[4].created_at") && e.to_string().contains("last tuesday"), "{e}");
        }

        #[$attr]
        fn a_file_that_is_not_a_trace_says_what_is_read() {
            for bytes in [&b"hello"[..], b"", b"{\"a\": 1}", b"[1, 2, 3]"] {
                let e = strict(bytes).unwrap_err();
                assert!(matches!(e, FormatError::Unknown { .. }), "{e:?}");
                assert!(e.to_string().contains("smartcomment"), "{e}");
            }
        }

        #[$attr]
        fn lenient_mode_keeps_what_is_valid_and_lists_the_rest() {
            let bytes = edited(|v| {
                v["data"]["edges"][5]["op_id"] = serde_json::json!("op-missing");
                v["data"]["edges"][9]["target_full_node_id"] = serde_json::json!("nowhere@3");
                v["data"]["nodes"][2]["created_at"] = serde_json::json!("??");
            });
            assert!(strict(&bytes).is_err());
            let l = load(&bytes, LoadOptions { lenient: true, ..LoadOptions::default() }).unwrap();
            assert_eq!(l.problems.len(), 3, "{:?}", l.problems);
            assert_eq!(l.trace.edges.len(), 569 - 2);
            assert_eq!(l.trace.vars.len(), 362);
        }
    };
}
