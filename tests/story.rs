//! The failure story of each of the demo's cases: a chain from the evidence to the judge whose
//! cards are the trace's own nodes and text, with the verdict's op marked once.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed expectation should panic

use std::collections::BTreeSet;

use memtrace::algo::text::var_text;
use memtrace::attribution::{InfoFlow, OpRole, RoleConfig, Roles};
use memtrace::format::{load, LoadOptions};
use memtrace::model::ErrorType;
use memtrace::story::{story, CardKind};

const DEMO: &[u8] = include_bytes!("../www/demo.json");

#[test]
fn each_case_reads_from_evidence_to_judge_with_its_verdict_marked() {
    let t = load(DEMO, LoadOptions::default()).unwrap().trace;
    let roles = Roles::infer(&t, &RoleConfig::default());
    let mut types = BTreeSet::new();
    let mut diffs = 0;
    for case in &t.cases {
        let v = InfoFlow::default()
            .attribute_with(&t, &roles, case)
            .unwrap();
        let s = story(&t, case, Some(&v), &roles);
        let decisive: Vec<_> = s.cards.iter().filter(|c| c.decisive.is_some()).collect();
        assert_eq!(decisive.len(), 1, "{}: one decisive card", case.query_id);
        assert_eq!(decisive[0].id, v.op_id);
        assert_eq!(
            decisive[0].decisive.as_ref().unwrap().error_type,
            v.error_type
        );
        types.insert(v.error_type);

        // Evidence first, the answer op on the chain, the judge (or the answer) last.
        if !case.evidence_ids.is_empty() {
            assert_eq!(s.cards[0].kind, CardKind::Evidence, "{}", case.query_id);
            assert!(case.evidence_ids.contains(&s.cards[0].id));
        }
        let answer = case.answer_op.as_deref().unwrap();
        assert!(
            s.cards.iter().any(|c| c.id == answer),
            "{}: answer card",
            case.query_id
        );
        let last = s.cards.last().unwrap();
        assert!(
            matches!(last.role, Some(OpRole::Judge | OpRole::Response)),
            "{}: ends with {:?}",
            case.query_id,
            last.role
        );

        // Every card is a node of the trace and shows its own text.
        let mut ids = BTreeSet::new();
        for c in &s.cards {
            assert!(ids.insert(c.id.clone()), "{} twice", c.id);
            let shown: String = c.text.iter().map(|x| x.text.as_str()).collect();
            let shown = shown.trim_start_matches("… ").trim_end_matches(" …");
            if c.kind == CardKind::Op {
                assert!(t.op_by_id(&c.id).is_some(), "{}", c.id);
            } else {
                let var = t.var_by_id(&c.id).unwrap();
                let raw = var_text(t.var(var));
                for w in shown.split_whitespace().filter(|w| *w != "·") {
                    assert!(raw.contains(w), "{}: {w:?} not in {raw}", c.id);
                }
            }
            if c.diff.is_some() {
                diffs += 1;
            }
        }
        // The prediction is what the case says.
        assert_eq!(s.prediction, case.prediction);
        // Groups hang on cards that exist and never repeat a card.
        for g in &s.groups {
            assert!(g.after < s.cards.len());
            assert!(g.ids.iter().all(|id| !ids.contains(id)), "{}", g.label);
            assert!(g.label.starts_with(&format!("+{} ", g.ids.len())));
        }
    }
    assert!(
        types.len() >= 4,
        "the demo covers the error types: {types:?}"
    );
    assert!(diffs >= 1, "an update or deletion shows a version diff");
}

#[test]
fn gold_words_are_marked_and_a_changed_version_shows_what_went() {
    let t = load(DEMO, LoadOptions::default()).unwrap().trace;
    let roles = Roles::infer(&t, &RoleConfig::default());
    let mut marked = 0;
    let mut removed = 0;
    for case in &t.cases {
        let v = InfoFlow::default()
            .attribute_with(&t, &roles, case)
            .unwrap();
        let s = story(&t, case, Some(&v), &roles);
        let ev = s.cards.iter().find(|c| c.kind == CardKind::Evidence);
        if ev.is_some_and(|c| c.text.iter().any(|x| x.mark)) {
            marked += 1;
        }
        if matches!(
            v.error_type,
            ErrorType::UpdateError | ErrorType::DeletionError
        ) {
            let changed = s.cards.iter().filter_map(|c| c.diff.as_ref()).any(|d| {
                d.iter()
                    .any(|p| p.change == "removed" && !p.text.trim().is_empty())
            });
            removed += usize::from(changed);
        }
    }
    assert!(
        marked * 2 >= t.cases.len(),
        "{marked} of {} evidence cards mark the answer",
        t.cases.len()
    );
    assert!(
        removed >= 1,
        "an update or deletion's diff shows removed words"
    );
}

#[test]
fn without_a_verdict_the_chain_still_runs_to_the_answer() {
    let t = load(DEMO, LoadOptions::default()).unwrap().trace;
    let roles = Roles::infer(&t, &RoleConfig::default());
    let case = &t.cases[0];
    let s = story(&t, case, None, &roles);
    assert!(s.cards.iter().all(|c| c.decisive.is_none()));
    assert!(s
        .cards
        .iter()
        .any(|c| Some(c.id.as_str()) == case.answer_op.as_deref()));
}

#[test]
fn a_change_across_words_reads_as_one_removed_and_one_added_run() {
    use memtrace::text::diff::word_diff;
    let d = word_diff(
        "Mom drinks chamomile tea at night",
        "Mom drinks  black coffee at night",
    );
    let parts: Vec<(&str, &str)> = d.iter().map(|p| (p.change, p.text.as_str())).collect();
    assert_eq!(
        parts,
        [
            ("same", "Mom drinks "),
            ("removed", "chamomile tea"),
            ("added", "black coffee"),
            ("same", " at night"),
        ]
    );
    assert!(word_diff("same text", "same text")
        .iter()
        .all(|p| p.change == "same"));
}

/// On real libraries' traces without evidence ids (the lab, one tuning file per library), the
/// evidence cards are the turns found for the case — each a stretch of the value it entered,
/// shown once, not the whole prompt — and the decisive card's role is the one its verdict names.
#[test]
fn a_real_librarys_story_shows_the_turn_and_a_role_that_fits_the_verdict() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/lab");
    let mut turns = 0;
    for file in [
        "agno/openinference/26",
        "graphiti/openinference/26",
        "langmem/openinference/41",
        "mem0ai/openinference/30",
        "mem0v1/openinference/26",
    ] {
        let path = root.join(format!("{file}.jsonl.gz"));
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut t = load(&bytes, LoadOptions::default()).unwrap().trace;
        let truth = std::fs::read(root.join(format!("{file}.annotations.json"))).unwrap();
        memtrace::format::sidecar::attach(&mut t, &truth).unwrap();
        let roles = Roles::infer(&t, &RoleConfig::default());
        assert!(!t.cases.is_empty(), "{file}: no cases");
        for case in &mut t.cases {
            case.evidence_ids.clear();
        }
        for case in &t.cases {
            let Ok(v) = InfoFlow::default().attribute_with(&t, &roles, case) else {
                continue;
            };
            let s = story(&t, case, Some(&v), &roles);
            let id = format!("{file} {}", case.query_id);
            let decisive = s.cards.iter().find(|c| c.decisive.is_some()).unwrap();
            assert_eq!(decisive.role, OpRole::of_error(v.error_type), "{id}");
            let evidence: Vec<_> = s
                .cards
                .iter()
                .filter(|c| c.kind == CardKind::Evidence)
                .collect();
            assert!(
                evidence.len() <= 2,
                "{id}: {} evidence cards",
                evidence.len()
            );
            for c in evidence {
                let shown: String = c.text.iter().map(|x| x.text.as_str()).collect();
                let raw = var_text(t.var(t.var_by_id(&c.id).unwrap()));
                assert!(c.title.starts_with("turn in "), "{id}: {}", c.title);
                assert!(
                    shown.len() * 2 < raw.len() || shown.len() < 400,
                    "{id}: the card shows the value, not a turn: {shown}"
                );
                turns += 1;
            }
        }
    }
    assert!(turns >= 20, "only {turns} turn cards");
}
