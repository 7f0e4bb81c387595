//! The three prompts an optimizer may rewrite (plus the judge's), and the requests built from
//! them. Layouts are documented in [`crate::simulated`].

use serde::{Deserialize, Serialize};

use super::simulated as purpose;
use memtrace::provider::{ChatMessage, ChatRequest, ChatRole};

/// The prompts' variable names (the core's, which exports key them).
pub use memtrace::optimize::prompt_names::{FACT_EXTRACTION, QUESTION_ANSWERING, UPDATE_DECISION};

/// The prompts the pipeline runs with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Prompts {
    pub fact_extraction: String,
    pub update_decision: String,
    pub question_answering: String,
    pub judge: String,
}

impl Default for Prompts {
    fn default() -> Self {
        Self {
            fact_extraction: "You are a Personal Information Organizer. Extract the distinct personal facts stated in the conversation (preferences, plans, relationships, events, possessions, jobs) as short standalone sentences in the third person that name the speaker. Skip greetings and questions. Return JSON: {\"facts\": [\"...\"]}.".into(),
            update_decision: "You are a smart memory manager. Compare each new fact with the old memory and choose one event per item: ADD (new information), UPDATE (the fact refines or corrects a memory; keep its id and write the richer text), DELETE (the fact retracts a memory), NONE (already known). Return JSON: {\"memory\": [{\"id\": \"...\", \"text\": \"...\", \"event\": \"...\", \"old_memory\": \"...\"}]}.".into(),
            question_answering: "Answer the question using only the memories below.\nQuestion: $question\nMemories:\n$context".into(),
            judge: "Label the generated answer as CORRECT or WRONG. It is CORRECT when it refers to the same thing, date or entity as the gold answer, even if longer or worded differently.\nQuestion: $question\nGold answer: $gold\nGenerated answer: $prediction\nReturn JSON: {\"label\": \"CORRECT\" | \"WRONG\"}.".into(),
        }
    }
}

fn chat(purpose: &str, system: Option<&str>, user: String) -> ChatRequest {
    let mut messages = Vec::new();
    if let Some(s) = system {
        messages.push(ChatMessage::text(ChatRole::System, s));
    }
    messages.push(ChatMessage::text(ChatRole::User, user));
    ChatRequest {
        messages,
        purpose: purpose.to_owned(),
        temperature: Some(0.0),
        ..ChatRequest::default()
    }
}

/// Fills `$name` placeholders; a missing placeholder is appended as `Label: value`.
fn fill(template: &str, slots: &[(&str, &str, &str)]) -> String {
    let mut out = template.to_owned();
    for (key, label, value) in slots {
        let ph = format!("${key}");
        if out.contains(&ph) {
            out = out.replace(&ph, value);
        } else {
            out = format!("{out}\n{label}: {value}");
        }
    }
    out
}

/// The fact-extraction request for a few messages (`(speaker, text)`).
/// `earlier` is the message before them, given as context only.
pub fn extraction_request(
    p: &Prompts,
    date: &str,
    speakers: &[&str],
    earlier: Option<(&str, &str)>,
    messages: &[(&str, &str)],
) -> ChatRequest {
    let lines: Vec<String> = messages.iter().map(|(s, t)| format!("{s}: {t}")).collect();
    let earlier = earlier
        .map(|(s, t)| format!("Earlier message (context only): {s}: {t}\n"))
        .unwrap_or_default();
    let user = format!(
        "Date: {date}\nSpeakers: {}\n{earlier}Conversation:\n{}",
        speakers.join(", "),
        lines.join("\n")
    );
    chat(purpose::EXTRACT, Some(&p.fact_extraction), user)
}

/// The update-decision task text (old memories as `[{id, text}]` JSON, facts as JSON list).
pub fn update_task(old: &serde_json::Value, facts: &[String]) -> String {
    format!(
        "Old memory:\n{old}\nNew facts:\n{}",
        serde_json::Value::from(facts.to_vec())
    )
}

/// The update-decision request.
pub fn update_request(p: &Prompts, task: &str) -> ChatRequest {
    chat(purpose::UPDATE, Some(&p.update_decision), task.to_owned())
}

/// The deletion-check request (same prompt, DELETE events only).
pub fn delete_request(p: &Prompts, task: &str) -> ChatRequest {
    let system = format!(
        "{}\nNow list only the DELETE events: old memories the new facts retract.",
        p.update_decision
    );
    chat(purpose::DELETE, Some(&system), task.to_owned())
}

/// The answering request for a question and its formatted context.
pub fn answer_request(p: &Prompts, question: &str, context: &str) -> ChatRequest {
    chat(
        purpose::ANSWER,
        None,
        fill(
            &p.question_answering,
            &[
                ("question", "Question", question),
                ("context", "Memories", &format!("\n{context}")),
            ],
        ),
    )
}

/// The judging request.
pub fn judge_request(p: &Prompts, question: &str, gold: &str, prediction: &str) -> ChatRequest {
    let user = fill(
        &p.judge,
        &[
            ("question", "Question", question),
            ("gold", "Gold answer", gold),
            ("prediction", "Generated answer", prediction),
        ],
    );
    chat(purpose::JUDGE, None, user)
}

/// Mem0's context block: `### Memory i:` / `Memory: …` / `Time: …`.
pub fn build_context(units: &[(String, String)]) -> String {
    units
        .iter()
        .enumerate()
        .map(|(i, (memory, time))| format!("### Memory {}:\nMemory: {memory}\nTime: {time}", i + 1))
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// The text between the first `{` and the last `}` (LLMs wrap JSON in code fences).
pub fn strip_code_block(raw: &str) -> String {
    let t = raw.trim();
    let t = t
        .strip_prefix("```json")
        .or_else(|| t.strip_prefix("```"))
        .unwrap_or(t);
    let t = t.strip_suffix("```").unwrap_or(t);
    t.trim().to_owned()
}
