//! Traces in other languages: a Chinese and a German memory system. Search finds a word of the
//! trace, and info-flow attributes the failure, as it does for English (the tokenizer splits by
//! Unicode rules; Chinese gives character bigrams). Hand-built, Mem0-shaped.

#![allow(clippy::unwrap_used)]

mod common;

use common::{ask, case, message, unit, TraceBuilder};
use memtrace::algo::SearchIndex;
use memtrace::attribution::InfoFlow;
use memtrace::model::ErrorType;

const SAID: &str = "2023-05-08T13:56:00";

/// A message, an extraction that wrote `stored` from it, a search that found the unit, an
/// answer. Returns the trace's verdict op and type, and the search hits' ids for `word`.
fn run(
    said: &str,
    stored: &str,
    question: &str,
    gold: &str,
    answer: &str,
    word: &str,
) -> (String, ErrorType, Vec<String>) {
    let mut b = TraceBuilder::new();
    let m = message(&mut b, "U1:D1:1", said, SAID);
    let u = unit(&mut b, "memory-unit-1", 1, Some(stored));
    b.op("op-extract", "memory.add", "extraction", &[&m], &[], &[&u]);
    ask(
        &mut b,
        ("op-search", "memory.search"),
        question,
        &[&u],
        answer,
        false,
    );
    let t = b.build();
    let hits = SearchIndex::build(&t).bm25(word, 5);
    let a = InfoFlow::default()
        .attribute(&t, &case(question, gold, answer, &m))
        .unwrap();
    (
        a.op_id,
        a.error_type,
        hits.into_iter().map(|h| h.id).collect(),
    )
}

#[test]
fn a_chinese_trace_is_searched_and_attributed() {
    // The extraction kept the class but lost the city: an ExtractionError.
    let (op, kind, hits) = run(
        "我上周六在北京参加了一个陶艺课，做了一个碗。",
        "用户参加了一个陶艺课。",
        "卡罗琳在哪个城市上了陶艺课？",
        "北京",
        "我不知道。",
        "陶艺",
    );
    assert_eq!(
        (op.as_str(), kind),
        ("op-extract", ErrorType::ExtractionError)
    );
    assert!(hits.iter().any(|h| h.starts_with("U1:D1:1")), "{hits:?}");
    // The same memory keeping the city holds the answer: the answer op is blamed.
    let (op, kind, _) = run(
        "我上周六在北京参加了一个陶艺课，做了一个碗。",
        "用户上周六在北京参加了陶艺课。",
        "卡罗琳在哪个城市上了陶艺课？",
        "北京",
        "上海",
        "北京",
    );
    assert_eq!((op.as_str(), kind), ("op-answer", ErrorType::ResponseError));
}

#[test]
fn a_german_trace_is_searched_and_attributed() {
    let (op, kind, hits) = run(
        "Ich bin letzten Monat nach München gezogen, wegen der neuen Stelle.",
        "Der Nutzer ist letzten Monat umgezogen.",
        "Wohin ist Caroline gezogen?",
        "München",
        "Das weiß ich nicht.",
        "MÜNCHEN",
    );
    assert_eq!(
        (op.as_str(), kind),
        ("op-extract", ErrorType::ExtractionError)
    );
    assert!(hits.iter().any(|h| h.starts_with("U1:D1:1")), "{hits:?}");
}
