//! Info-flow on what an answer op did with what it read (tests/data/lab's langmem shapes): two
//! search results holding one half of the gold answer each, or one stating the gold date in
//! another form, were enough to answer from, even when the evidence never said it in words.
//! Hand-built traces.

#![allow(clippy::unwrap_used)]

mod common;

use common::{
    assert_blames, blame, chat_answer, cozy_case, cozy_store, extracted, failed, jon_dances,
    search_op, TraceBuilder,
};
use memtrace::model::{ErrorType, FailureCase};
use memtrace::Trace;

/// The question's session: a search (its store not traced: it reads only the query) hands on
/// `also` and `results` as a list; the answer op reads the list and says `said`. Returns the
/// question's id.
fn asked(
    b: &mut TraceBuilder,
    question: &str,
    results: &[&str],
    also: &[&str],
    said: &str,
) -> String {
    b.session("q1");
    let query = b.var("question-1", 1, "input", question);
    let items: Vec<_> = (results.iter().enumerate())
        .map(|(i, r)| serde_json::json!({"key": i.to_string(), "value": {"content": r}}))
        .collect();
    let found = b.var(
        "results-1",
        1,
        "llm_output",
        &serde_json::Value::from(items).to_string(),
    );
    let mut handed: Vec<&str> = also.to_vec();
    handed.push(&found);
    b.op("op-search-1", "search", "search", &[&query], &[], &handed);
    chat_answer(
        b,
        "op-answer-1",
        &format!("Question: {question}"),
        &[&found],
        said,
    );
    query
}

/// The answer op is blamed for a response error.
fn blames_the_answer(t: &Trace, c: &FailureCase) {
    assert_blames(&blame(t, c), "op-answer-1", ErrorType::ResponseError);
}

#[test]
fn search_results_that_together_hold_the_gold_answer_were_enough_to_answer() {
    let mut b = TraceBuilder::new();
    let m = cozy_store(&mut b, &[]);
    let other = jon_dances(&mut b);
    // The search (its store not traced: it reads only the query) hands on another fact, and
    // both of the case's as a list of results: "cozy" in one, "comfortable" in the other. The
    // answer read the list and refused all the same.
    b.session("q1");
    let question = "What did Gina want her customers to feel in her store?";
    let query = b.var("question-1", 1, "input", question);
    let results = serde_json::json!([
        {"key": "a", "value": {"content": "Gina made the store comfortable for customers."}},
        {"key": "b", "value": {"content": "Gina wanted the store to make customers feel cozy."}},
    ]);
    let found = b.var("results-1", 1, "llm_output", &results.to_string());
    search_op(&mut b, &query, &[&other, &found]);
    chat_answer(
        &mut b,
        "op-answer-1",
        &format!("Question: {question}"),
        &[&found],
        "The memories do not say.",
    );
    let t = b.build();
    let c = cozy_case(&query, question, &m);
    assert_blames(&blame(&t, &c), "op-answer-1", ErrorType::ResponseError);
}

#[test]
fn a_search_result_stating_the_gold_date_in_another_form_was_enough_to_answer() {
    let mut b = TraceBuilder::new();
    // Told on a Monday as "last Friday"; the extraction dates it ("on 11 August 2023"), the
    // gold answer as the conversation gives it ("the Friday before 14 August 2023").
    let said = "Caroline: I went to a pride parade last Friday and it was awesome.";
    let stored = "Caroline went to a pride parade on 11 August 2023 and it was awesome.";
    let (m, _) = extracted(
        &mut b,
        ("op-extract", 1),
        ("U1:D5:3", said, "2023-08-14T14:24:00"),
        &[stored],
    );
    let vaguer = "Caroline went to a pride parade a few weeks ago.";
    let (_, other) = extracted(
        &mut b,
        ("op-extract-2", 2),
        (
            "U1:D2:1",
            "I love a pride parade, a few weeks ago I went to one.",
            "2023-07-15T13:51:00",
        ),
        &[vaguer],
    );
    // The search hands on both; the answer took the vaguer one.
    let question = "When did Caroline attend a pride parade in August?";
    let query = asked(&mut b, question, &[vaguer, stored], &[&other], vaguer);
    let c = failed(
        &query,
        question,
        "The Friday before 14 August 2023",
        vaguer,
        &m,
    );
    blames_the_answer(&b.build(), &c);
}

#[test]
fn an_answer_that_read_the_gold_answer_is_blamed_though_the_evidence_never_said_it() {
    let mut b = TraceBuilder::new();
    // The evidence shows a photograph (the gold answer is what it shows, not a word of the
    // turn); its extraction keeps only the rest. The search finds the place in words (neither
    // its store nor the message it was learned from is traced).
    let said = "Here's a picture of my family. They motivate me and remind me why I'm doing this.";
    let (m, _) = extracted(
        &mut b,
        ("op-extract", 1),
        ("U1:D9:4", said, "2023-05-25T13:24:00"),
        &["John's family motivates John."],
    );
    let question = "Does John live close to a beach or the mountains?";
    let place = "John shared a photograph of their fam at the beach near their place.";
    let said = "The memories do not say.";
    let query = asked(&mut b, question, &[place], &[], said);
    blames_the_answer(&b.build(), &failed(&query, question, "beach", said, &m));
}

#[test]
fn an_answer_linked_to_a_whole_reply_read_only_the_items_its_prompt_quotes() {
    let mut b = TraceBuilder::new();
    // One extraction reply holds the answer-bearing fact and another the answer repeats.
    let said = "John: Improving education and infrastructure matters most to me in policymaking.";
    let kept = "Improving education and infrastructure is particularly interesting to John.";
    let other = "John is considering going into policymaking because of his degree.";
    let (m, reply) = extracted(
        &mut b,
        ("op-extract-1", 1),
        ("U1:D5:2", said, "2023-04-02T09:36:00"),
        &[other, kept],
    );
    // The search embeds the question (its results are not traced); the answer op is linked to
    // the whole reply (a tracer inferring links from leaves), but its prompt quotes one item.
    b.session("q1");
    let question = "What areas is John particularly interested in for policymaking?";
    let query = b.var("question-1", 1, "input", question);
    let vector = b.var("embedding-1", 1, "output", "[0.08, 0.0, -0.08]");
    b.op(
        "op-embed-1",
        "embed",
        "embedding",
        &[&query],
        &[],
        &[&vector],
    );
    let prompt = format!("Memories:\n- 9:36 am on 2 April, 2023: {other}\n\nQuestion: {question}");
    let prompt = b.var("prompt-1", 1, "llm_input", &prompt);
    let said = "John is considering policymaking because of his degree.";
    let answer = b.var("answer", 1, "llm_output", said);
    b.op(
        "op-answer-1",
        "chat",
        "llm",
        &[&prompt, &reply, &query],
        &[],
        &[&answer],
    );
    let t = b.build();
    let c = failed(&query, question, "education and infrastructure", said, &m);
    assert_blames(&blame(&t, &c), "op-embed-1", ErrorType::RetrievalError);
}

/// A message holding the gold answer, its fact stored in memory units, a search that hands on
/// only `found`, and an answer op that reads its prompt alone: the question and `listed`,
/// one line each (more than a paragraph's worth), as a prompt lists memories.
fn prompted(
    (said, day): (&str, &str),
    facts: &[&str],
    listed: &[&str],
    (question, gold): (&str, &str),
) -> (String, ErrorType, String) {
    let mut b = TraceBuilder::new();
    let m = common::message(&mut b, "U1:D1:1", said, day);
    let reply = serde_json::json!({ "facts": facts }).to_string();
    let reply = b.var("reply-1", 1, "llm_output", &reply);
    let units: Vec<String> = (facts.iter().enumerate())
        .map(|(i, f)| common::unit(&mut b, &format!("unit-{i}"), 1, Some(f)))
        .collect();
    let mut out: Vec<&str> = vec![&reply];
    out.extend(units.iter().map(String::as_str));
    b.op("op-extract", "chat", "llm", &[&m], &[], &out);
    b.session("q1");
    let query = b.var("query:q1", 1, "input", question);
    let other = common::unit(
        &mut b,
        "unit-other",
        1,
        Some("John loves family game nights."),
    );
    // The search reads the store and hands on another unit.
    let mut read: Vec<&str> = vec![&query];
    read.extend(units.iter().map(String::as_str));
    b.op("op-search", "search", "retrieval", &read, &[], &[&other]);
    let lines = (listed.iter())
        .map(|line| format!("- 6:10 pm on 22 December, 2022: {line}\n"))
        .collect::<Vec<_>>()
        .concat();
    let text = format!(
        "Answer from the memories below.\n\nMemories:\n{lines}\nQuestion: {question}\nAnswer:"
    );
    let prompt = b.var("prompt-1", 1, "llm_input", &text);
    let answer = b.var("prediction:q1", 1, "llm_output", "The memories do not say.");
    b.op(
        "op-answer",
        "chat",
        "llm",
        &[&prompt, &query],
        &[],
        &[&answer],
    );
    let c = common::case(question, gold, "The memories do not say.", &m);
    blame(&b.build(), &c)
}

#[test]
fn a_prompt_s_memory_lines_each_holding_half_the_gold_answer_were_enough_to_answer() {
    // One unit holds both halves; the prompt lists them on lines of their own.
    let halves = [
        "Gina wants customers to feel cozy in the store.",
        "Gina made the store comfortable for customers.",
    ];
    let facts = [halves.join(" ")];
    let facts: Vec<&str> = facts.iter().map(String::as_str).collect();
    let filler = "John and his family love climbing, sliding and playing games together.";
    let listed = [
        halves[0], filler, filler, filler, halves[1], filler, filler, filler, filler,
    ];
    let question = "What did Gina want her customers to feel in her store?";
    let said = "I want my customers to feel cozy and comfortable in the store.";
    assert_blames(
        &prompted(
            (said, "2023-02-01T10:00:00"),
            &facts,
            &listed,
            (question, "cozy and comfortable"),
        ),
        "op-answer",
        ErrorType::ResponseError,
    );
}

#[test]
fn a_prompt_s_memory_dated_like_the_gold_answer_does_not_answer_when_it_is_another_event() {
    let facts = ["Maria took a photo at the beach in December 2022."];
    let filler = "John and his family love climbing, sliding and playing games together.";
    let listed = [filler; 9];
    let question = "When did Maria go to the beach?";
    let said = "I took it at the beach last month.";
    assert_blames(
        &prompted(
            (said, "2023-01-01T10:00:00"),
            &facts,
            &listed,
            (question, "December 2022"),
        ),
        "op-search",
        ErrorType::RetrievalError,
    );
}
