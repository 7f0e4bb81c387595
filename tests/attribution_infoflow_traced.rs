//! Info-flow on the shapes real libraries' traces take (tests/data/lab): two questions answered
//! with the same words are one variable of two versions, the answer is found by the question
//! it was asked after; a retrieval whose tracer captured no content is still where the
//! information was lost; a relative date the memory resolved ("last month" stored as
//! "December 2022") needs no other message holding the gold words; a gold answer a paraphrase
//! split over two extracted facts is still held; a fact told of another speaker than the one
//! asked about does not hold it; where one model client makes every call and memory is not
//! traced (OTel GenAI), another question's answer that read the fact shows it was there to be
//! found. Hand-built traces.

#![allow(clippy::unwrap_used)]

mod common;

use common::{
    assert_blames, blame, chat_answer, cozy_case, cozy_store, extracted, failed, jon_dances,
    message, unit, TraceBuilder,
};
use memtrace::attribution::roles::Basis;
use memtrace::attribution::{OpRole, RoleConfig, Roles};
use memtrace::model::{ErrorType, FailureCase};
use memtrace::Trace;

/// A question asked in a session of its own: its search (reading the query, returning
/// `found`), and an answer op reading a prompt that quotes the question and `found`.
fn ask(b: &mut TraceBuilder, n: u32, question: &str, found: &str, answer_version: u32) -> String {
    b.session(&format!("q{n}"));
    let query = b.var(&format!("question-{n}"), 1, "input", question);
    b.op(
        &format!("op-search-{n}"),
        "search",
        "search",
        &[&query],
        &[],
        &[found],
    );
    let prompt = format!("Memories: (see above)\nQuestion: {question}\nAnswer briefly.");
    let prompt = b.var(&format!("prompt-{n}"), 1, "llm_input", &prompt);
    let answer = b.var(
        "answer",
        answer_version,
        "llm_output",
        "The memories do not say.",
    );
    b.op(
        &format!("op-answer-{n}"),
        "chat",
        "llm",
        &[&prompt, found],
        &[],
        &[&answer],
    );
    query
}

#[test]
fn an_answer_shared_by_two_questions_is_found_by_the_question_it_followed() {
    let mut b = TraceBuilder::new();
    let m1 = message(
        &mut b,
        "U1:D1:1",
        "I went to a pottery workshop on Friday.",
        "2023-05-01T10:00:00",
    );
    let m2 = message(
        &mut b,
        "U1:D1:2",
        "I used to go horseback riding with my dad.",
        "2023-05-01T10:01:00",
    );
    let pottery = unit(
        &mut b,
        "memory-unit-a",
        1,
        Some("Caroline attended a pottery workshop."),
    );
    let horses = unit(
        &mut b,
        "memory-unit-b",
        1,
        Some("Caroline used to go horseback riding with her dad."),
    );
    b.op("op-extract-1", "add", "add", &[&m1], &[], &[&pottery]);
    b.op("op-extract-2", "add", "add", &[&m2], &[], &[&horses]);
    // The first question gets the right memory and still says it does not know.
    ask(&mut b, 1, "What workshop did Caroline attend?", &pottery, 1);
    // The second gets the wrong one: its search lost the memory that answers it.
    let q2 = ask(&mut b, 2, "What did Caroline do with her dad?", &pottery, 2);
    let t = b.build();
    let c = failed(
        &q2,
        "What did Caroline do with her dad?",
        "horseback riding",
        "The memories do not say.",
        &m2,
    );
    assert_blames(&blame(&t, &c), "op-search-2", ErrorType::RetrievalError);
}

#[test]
fn a_search_traced_without_content_is_where_the_memory_was_not_passed_on() {
    let mut b = TraceBuilder::new();
    let m = message(
        &mut b,
        "U1:D1:1",
        "I found a rainbow sidewalk on my walk.",
        "2023-05-01T10:00:00",
    );
    let found = unit(
        &mut b,
        "memory-unit-a",
        1,
        Some("Caroline found a rainbow sidewalk on a walk."),
    );
    let other = unit(&mut b, "memory-unit-b", 1, Some("Caroline likes painting."));
    b.op("op-extract-1", "add", "add", &[&m], &[], &[&found]);
    b.op("op-extract-2", "add", "add", &[&m], &[], &[&other]);
    b.session("q1");
    let question = "What did Caroline find on her walk?";
    let query = b.var("question-1", 1, "input", question);
    // An embedding call whose span holds no text: it reads nothing, writes only its status.
    let none = b.var("COMMENT:NONE", 1, "sentinel", "NONE");
    let status = b.var("status-embed", 1, "status", "OK");
    b.op(
        "op-embed",
        "embeddings",
        "embedding",
        &[&none],
        &[],
        &[&status],
    );
    let prompt = format!("Memories: Caroline likes painting.\nQuestion: {question}");
    chat_answer(
        &mut b,
        "op-answer",
        &prompt,
        &[&other],
        "She likes painting.",
    );
    let t = b.build();
    let c = failed(
        &query,
        question,
        "a rainbow sidewalk",
        "She likes painting.",
        &m,
    );
    assert_blames(&blame(&t, &c), "op-embed", ErrorType::RetrievalError);
}

#[test]
fn a_relative_date_memory_resolved_needs_no_message_holding_the_gold_words() {
    let mut b = TraceBuilder::new();
    // An earlier message holds the gold words about something else; its reader kept none.
    let car = b.var(
        "U1:D1:1",
        1,
        "message",
        "I donated my old car on 30 December 2022.",
    );
    let car_fact = unit(
        &mut b,
        "memory-unit-a",
        1,
        Some("Maria volunteers at a shelter."),
    );
    b.op("op-extract-1", "add", "add", &[&car], &[], &[&car_fact]);
    // The evidence says "last month"; the extraction resolved it.
    let said = b.var(
        "U1:D1:2",
        1,
        "message",
        "I took this photo at the beach last month.",
    );
    let beach = unit(
        &mut b,
        "memory-unit-b",
        1,
        Some("Maria went to the beach in December 2022."),
    );
    b.op("op-extract-2", "add", "add", &[&said], &[], &[&beach]);
    let question = "When did Maria go to the beach?";
    let query = ask(&mut b, 1, question, &car_fact, 1);
    let t = b.build();
    let c = failed(
        &query,
        question,
        "December 2022",
        "The memories do not say.",
        &said,
    );
    assert_blames(&blame(&t, &c), "op-search-1", ErrorType::RetrievalError);
}

#[test]
fn a_gold_answer_split_over_two_extracted_facts_is_still_held() {
    let mut b = TraceBuilder::new();
    // One reply of facts: "cozy" in one, "comfortable" in the next (a paraphrase split it).
    let m = cozy_store(&mut b, &["Gina found a new supplier."]);
    // The replies are the memory: the answer reads the ones the search returned.
    let other = jon_dances(&mut b);
    let question = "What did Gina want her customers to feel in her store?";
    let query = ask(&mut b, 1, question, &other, 1);
    let t = b.build();
    let c = cozy_case(&query, question, &m);
    assert_blames(&blame(&t, &c), "op-search-1", ErrorType::RetrievalError);
}

#[test]
fn a_fact_told_of_another_speaker_does_not_hold_the_answer() {
    let mut b = TraceBuilder::new();
    let said = "user: Caroline: I was out walking in my neighborhood when I came across a \
                rainbow sidewalk.\nassistant: Melanie: Wow, that sounds so vibrant!";
    // The extraction kept the words but told them of Melanie.
    let (m, _) = extracted(
        &mut b,
        ("op-extract", 1),
        ("U1:D14:23", said, "2023-05-01T10:00:00"),
        &["Melanie was out walking in the neighborhood and came across a rainbow sidewalk."],
    );
    let (_, other) = extracted(
        &mut b,
        ("op-extract-2", 2),
        ("U1:D14:25", "I painted a lake.", "2023-05-01T10:05:00"),
        &["Caroline painted a lake."],
    );
    let question = "What did Caroline find in her neighborhood during her walk?";
    let query = ask(&mut b, 1, question, &other, 1);
    let t = b.build();
    let c = failed(
        &query,
        question,
        "a rainbow sidewalk",
        "A lake painting.",
        &m,
    );
    let reason = assert_blames(&blame(&t, &c), "op-extract", ErrorType::ExtractionError);
    assert!(reason.contains("Melanie"), "{reason}");
}

/// The OTel GenAI shape of a Mem0 run: one model client (`chat`) extracts, updates the memory
/// and answers; the store itself is not traced, so what memory holds is the update call's
/// output, quoted into later answer prompts; every prompt is an `llm_input`, the questions too
/// (each read by the agent span and by its answer call); the query embeddings hold no text.
/// Question 1 is answered from the fact; question 2 (the failed one) is not.
fn genai_shaped() -> (Trace, FailureCase) {
    let mut b = TraceBuilder::new();
    let said = "Caroline: I used to go horseback riding with my dad.";
    let extract_prompt = b.var(
        "prompt-extract",
        1,
        "llm_input",
        &format!("Extract facts from the new messages.\nNew Messages: {said}"),
    );
    let facts = b.var(
        "facts",
        1,
        "llm_output",
        r#"{"facts": ["Caroline used to go horseback riding with her dad"]}"#,
    );
    b.op(
        "op-extract",
        "chat",
        "llm",
        &[&extract_prompt],
        &[],
        &[&facts],
    );
    let update_prompt = b.var(
        "prompt-update",
        1,
        "llm_input",
        "Compare the new facts with the memory and decide ADD, UPDATE or DELETE.",
    );
    let memory = b.var(
        "memory-list",
        1,
        "llm_output",
        r#"{"memory": [{"id": "0", "text": "Caroline used to go horseback riding with her dad", "event": "ADD"}]}"#,
    );
    b.op(
        "op-update",
        "chat",
        "llm",
        &[&update_prompt, &facts],
        &[],
        &[&memory],
    );
    let none = b.var("COMMENT:NONE", 1, "sentinel", "NONE");
    let question = |b: &mut TraceBuilder, n: u32, q: &str, context: Option<&str>, a: &str| {
        b.session(&format!("q{n}"));
        let query = b.var(&format!("query-{n}"), 1, "llm_input", q);
        let status = b.var(&format!("status-{n}"), 1, "status", "UNSET");
        b.op(
            &format!("op-embed-{n}"),
            "embeddings",
            "embedding",
            &[&none],
            &[],
            &[&status],
        );
        let shown = context.map_or("(none)", |_| {
            "Caroline used to go horseback riding with her dad"
        });
        let prompt = b.var(
            &format!("prompt-answer-{n}"),
            1,
            "llm_input",
            &format!("Memories: {shown}\nQuestion: {q}"),
        );
        let answer = b.var(&format!("answer-{n}"), 1, "llm_output", a);
        let mut inputs = vec![prompt.as_str(), query.as_str()];
        inputs.extend(context);
        b.op(
            &format!("op-answer-{n}"),
            "chat",
            "llm",
            &inputs,
            &[],
            &[&answer],
        );
        let reply = b.var(&format!("agent-output-{n}"), 1, "llm_output", a);
        b.op(
            &format!("op-agent-{n}"),
            "invoke_agent",
            "agent",
            &[&query],
            &[],
            &[&reply],
        );
        (query, answer)
    };
    question(
        &mut b,
        1,
        "What did Caroline do with her dad as a child?",
        Some(&memory),
        "She rode horses with her dad.",
    );
    let (query, answer) = question(
        &mut b,
        2,
        "What activity did Caroline use to do with her dad?",
        None,
        "The memories do not say.",
    );
    let t = b.build();
    let mut c = failed(
        &query,
        "What activity did Caroline use to do with her dad?",
        "horseback riding",
        "The memories do not say.",
        &extract_prompt,
    );
    c.prediction_id = Some(answer);
    // The failed case anchors the roles, as detection's cases do.
    let mut t = t;
    t.cases = vec![c.clone()];
    (t, c)
}

#[test]
fn one_model_client_s_prompts_are_no_questions_and_another_question_s_answer_is_a_response() {
    let (t, _) = genai_shaped();
    let roles = Roles::infer(&t, &RoleConfig::default());
    let role = |id: &str| roles.role(t.op_by_id(id).unwrap());
    // The prompts only the model client reads are not questions: the calls reading them are
    // judged by what they read and write (the extraction reads the messages), not as answers
    // to other questions (structure says nothing of the update here: no memory is traced).
    let get = |id: &str| roles.get(t.op_by_id(id).unwrap()).unwrap().clone();
    assert_eq!(
        role("op-extract"),
        OpRole::Extraction,
        "{:?}",
        get("op-extract")
    );
    assert_ne!(
        get("op-update").basis,
        Basis::Structure,
        "{:?}",
        get("op-update")
    );
    // Question 1 is read by the agent span and the model call, as the failed question is: the
    // call answers it, by structure.
    let a = get("op-answer-1");
    assert_eq!(
        (a.role, a.basis),
        (OpRole::Response, Basis::Structure),
        "{a:?}"
    );
}

#[test]
fn a_fact_another_question_was_answered_from_was_there_to_be_found() {
    let (t, c) = genai_shaped();
    let reason = assert_blames(&blame(&t, &c), "op-embed-2", ErrorType::RetrievalError);
    assert!(reason.contains("another question"), "{reason}");
}
