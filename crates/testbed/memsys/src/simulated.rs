//! The simulated provider: a deterministic, offline, rule-based stand-in for an LLM that does
//! the reference memory system's five tasks, so the app and the tests work with no key.
//! **It is not a language model**; every reply it gives says so in `model`.
//!
//! It reads the request by [`ChatRequest::purpose`] (one of the constants below) and acts by
//! rule on the text. The instruction text (the system message, or what precedes `Question:`)
//! switches a few behaviours, so a rewritten prompt changes what it does:
//!
//! | task | the instruction mentions | effect |
//! |---|---|---|
//! | extract | the word `date`/`dates` | relative dates are kept and resolved (`yesterday` → `(7 May 2023)`); otherwise they are dropped |
//! | extract | `include questions` | questions become facts too (skipped by default) |
//! | extract | `every detail` | short sentences (2 content words) are kept (default needs 3) |
//! | extract | `only the user` | only the first speaker's lines are read |
//! | extract | `one fact per sentence` | each statement is its own fact (default: one fact per message) |
//! | update | `richer`, `merge` or `combine` | UPDATE appends the new fact to the old text (else replaces it) |
//! | delete | `never delete` | nothing is deleted |
//! | answer | `concise` or `short` | the answer is the best sentence of the best memory (default: the two best memories) |
//! | answer | `don't know` | "I don't know." when no memory shares a word with the question |
//! | answer | `timestamp` | "When" answers end with the memory's date |
//!
//! Request layouts (built by [`crate::prompts`]):
//! - extract: system = instructions; user = `Date: 8 May 2023`, `Speakers: A, B`, optionally
//!   `Earlier message (context only): Name: text`, then `Conversation:` and one `Name: text`
//!   line per message. Reply `{"facts": [...]}`. A fact answering a question asked just
//!   before ends with `(in reply to: …)`.
//! - note: as extract; reply `{"notes": [{content, keywords, context, tags}]}`, one note per
//!   fact (keywords: its first five content words; tags: the speaker and its first keyword).
//! - update / delete: system = instructions; user = `Old memory:` + a JSON list of
//!   `{id, text}`, then `New facts:` + a JSON list of strings. Reply `{"memory": [{id, text,
//!   event, old_memory?}]}` (Mem0's format).
//! - answer: one user message with the instructions, `Question: …` and `### Memory i:` blocks
//!   (`Memory: …`, `Time: …`). Reply: the answer text.
//! - judge: one user message with `Question:`, `Gold answer:` and `Generated answer:` lines.
//!   Reply `{"label": "CORRECT" | "WRONG"}` by the normalized-token rule.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};

use super::text::{self, Date};
use memtrace::provider::{ChatRequest, ChatResponse, ChatRole, Llm, ProviderError, Usage};

/// `purpose` of a fact-extraction request.
pub const EXTRACT: &str = "memsys.extract";
/// `purpose` of an A-Mem note construction (extraction, each fact a note with keywords,
/// context and tags).
pub const NOTE: &str = "memsys.note";
/// `purpose` of a memory-update decision.
pub const UPDATE: &str = "memsys.update";
/// `purpose` of a deletion check.
pub const DELETE: &str = "memsys.delete";
/// `purpose` of answering a question from memories.
pub const ANSWER: &str = "memsys.answer";
/// `purpose` of judging an answer against the gold answer.
pub const JUDGE: &str = "memsys.judge";

/// The model name every simulated reply carries.
pub const MODEL: &str = "simulated (rule-based stand-in, not an LLM)";

/// The simulated provider. Stateless and deterministic.
#[derive(Debug, Clone, Copy, Default)]
pub struct SimulatedLlm;

impl Llm for SimulatedLlm {
    async fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, ProviderError> {
        self.respond(req)
    }
}

impl SimulatedLlm {
    /// Answers one request synchronously.
    ///
    /// # Errors
    /// [`ProviderError::BadResponse`] for a purpose it does not simulate.
    pub fn respond(self, req: &ChatRequest) -> Result<ChatResponse, ProviderError> {
        let system: String = req
            .messages
            .iter()
            .filter(|m| m.role == ChatRole::System)
            .map(|m| m.content.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        let user: String = req
            .messages
            .iter()
            .filter(|m| m.role == ChatRole::User)
            .map(|m| m.content.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        let content = match req.purpose.as_str() {
            EXTRACT => extract(&system, &user).to_string(),
            NOTE => notes(&system, &user).to_string(),
            UPDATE => update(&system, &user).to_string(),
            DELETE => delete(&system, &user).to_string(),
            ANSWER => answer(&system, &user),
            JUDGE => judge(&user).to_string(),
            other => {
                return Err(ProviderError::BadResponse(format!(
                    "the simulated provider only does {EXTRACT}, {NOTE}, {UPDATE}, {DELETE}, {ANSWER} and {JUDGE}; this request's purpose is {other:?}. Use a real provider for it."
                )))
            }
        };
        let usage = Usage {
            input_tokens: ((system.len() + user.len()) / 4) as u64,
            output_tokens: (content.len() / 4) as u64,
        };
        Ok(ChatResponse {
            content,
            tool_calls: Vec::new(),
            usage,
            model: MODEL.to_owned(),
            usage_estimated: false,
        })
    }
}

fn words(instructions: &str) -> BTreeSet<String> {
    text::tokens(instructions).into_iter().collect()
}

fn line_after<'a>(text: &'a str, label: &str) -> Option<&'a str> {
    text.lines()
        .find_map(|l| l.trim().strip_prefix(label))
        .map(str::trim)
}

// ---------------------------------------------------------------- extraction

fn extract(system: &str, user: &str) -> Value {
    let lower = system.to_lowercase();
    let w = words(system);
    let keep_dates = w.contains("date") || w.contains("dates");
    let include_questions = lower.contains("include questions");
    let min_terms = if lower.contains("every detail") { 2 } else { 3 };
    let only_user = lower.contains("only the user");
    let per_sentence = lower.contains("one fact per sentence");
    let date = line_after(user, "Date:").and_then(Date::parse);
    let speakers: Vec<String> = line_after(user, "Speakers:")
        .map(|s| {
            s.split(',')
                .map(|x| x.trim().to_owned())
                .filter(|x| !x.is_empty())
                .collect()
        })
        .unwrap_or_default();
    let body = user.split_once("Conversation:").map_or(user, |(_, b)| b);
    let mut facts = Vec::new();
    let mut last_question: Option<String> = line_after(user, "Earlier message (context only):")
        .and_then(|l| {
            let (who, said) = l.split_once(": ")?;
            let q = sentences(said)
                .into_iter()
                .rev()
                .find(|x| x.ends_with('?'))?;
            Some(third_person(
                &q,
                who.trim(),
                speakers
                    .iter()
                    .find(|s| s.as_str() != who.trim())
                    .map(String::as_str),
            ))
        });
    for line in body.lines() {
        let Some((speaker, said)) = line.split_once(": ") else {
            continue;
        };
        let speaker = speaker.trim();
        if speaker.is_empty() || speaker.contains(' ') && !speakers.iter().any(|s| s == speaker) {
            continue;
        }
        if only_user && speakers.first().is_some_and(|s| s != speaker) {
            continue;
        }
        let other = speakers.iter().find(|s| *s != speaker).cloned();
        let mut mine: Vec<String> = Vec::new();
        let mut asked = None;
        for sentence in sentences(said) {
            if sentence.ends_with('?') && !include_questions {
                asked = Some(third_person(&sentence, speaker, other.as_deref()));
                continue;
            }
            let mut fact = match sentence.strip_prefix("[shares ") {
                Some(rest) => format!("{speaker} shared {}.", rest.trim_end_matches(']').trim()),
                None => third_person(&sentence, speaker, other.as_deref()),
            };
            fact = dates(&fact, date, keep_dates);
            if text::content_terms(&fact).len() < min_terms {
                continue;
            }
            let first = fact.split_whitespace().next().unwrap_or("").to_lowercase();
            let follows = [
                "it", "it's", "they", "this", "that", "these", "those", "he", "she", "there",
                "which",
            ]
            .contains(&first.as_str());
            match mine.last_mut() {
                Some(prev) if follows || !per_sentence => {
                    prev.push(' ');
                    prev.push_str(&fact);
                }
                _ => mine.push(fact),
            }
        }
        if let (Some(q), Some(first)) = (last_question.take(), mine.first_mut()) {
            first.push_str(" (in reply to: ");
            first.push_str(&q);
            first.push(')');
        }
        if let Some(q) = asked {
            last_question = Some(q);
        }
        for mut fact in mine {
            if !fact.contains(speaker) {
                fact = format!("{speaker} mentioned: {fact}");
            }
            if !facts.contains(&fact) {
                facts.push(fact);
            }
        }
    }
    json!({ "facts": facts })
}

/// A-Mem's note construction: each extracted fact becomes a note's content, with keywords
/// (its first five distinct content words), a one-line context and tags.
fn notes(system: &str, user: &str) -> Value {
    let speakers: Vec<&str> = line_after(user, "Speakers:")
        .map(|s| s.split(',').map(str::trim).collect())
        .unwrap_or_default();
    let facts = extract(system, user)["facts"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let notes: Vec<Value> = facts
        .iter()
        .filter_map(Value::as_str)
        .map(|fact| {
            let mut keywords: Vec<String> = Vec::new();
            for t in text::tokens(fact) {
                if t.len() > 3 && !text::is_stop(&t) && !keywords.contains(&t) {
                    keywords.push(t);
                }
            }
            keywords.truncate(5);
            let who = speakers
                .iter()
                .find(|s| !s.is_empty() && fact.contains(*s))
                .copied()
                .unwrap_or("the speakers");
            let topic = keywords
                .iter()
                .take(3)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ");
            let mut tags = vec![who.to_lowercase()];
            tags.extend(keywords.first().cloned());
            json!({"content": fact, "keywords": keywords,
                "context": format!("A conversation in which {who} talks about {topic}."),
                "tags": tags})
        })
        .collect();
    json!({ "notes": notes })
}

/// Splits after `.`, `!` or `?` followed by a space.
fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        cur.push(c);
        let end =
            matches!(c, '.' | '!' | '?') && chars.get(i + 1).is_none_or(|n| n.is_whitespace());
        if end {
            let s = cur.trim().to_owned();
            if !s.is_empty() {
                out.push(s);
            }
            cur.clear();
        }
    }
    let s = cur.trim().to_owned();
    if !s.is_empty() {
        out.push(s);
    }
    out
}

fn third_person(sentence: &str, speaker: &str, other: Option<&str>) -> String {
    let other = other.unwrap_or("the other speaker");
    let mut out = Vec::new();
    for raw in sentence.replace('\u{2019}', "'").split_whitespace() {
        let start = raw.find(|c: char| c.is_alphanumeric()).unwrap_or(raw.len());
        let end = raw
            .char_indices()
            .rfind(|(_, c)| c.is_alphanumeric() || *c == '\'')
            .map_or(start, |(i, c)| i + c.len_utf8())
            .max(start);
        let (pre, word, post) = (&raw[..start], &raw[start..end], &raw[end..]);
        let rep = match word.to_lowercase().as_str() {
            "i" | "me" | "myself" => speaker.to_owned(),
            "i'm" => format!("{speaker} is"),
            "i've" => format!("{speaker} has"),
            "i'll" => format!("{speaker} will"),
            "i'd" => format!("{speaker} would"),
            "my" | "mine" => format!("{speaker}'s"),
            "you" | "yourself" => other.to_owned(),
            "your" | "yours" => format!("{other}'s"),
            "you're" => format!("{other} is"),
            "you've" => format!("{other} has"),
            _ => word.to_owned(),
        };
        out.push(format!("{pre}{rep}{post}"));
    }
    out.join(" ")
}

/// Relative date phrases, longest first, and how to resolve them from the session date.
const RELATIVE: &[(&str, i64, &str)] = &[
    ("a few days ago", -3, "a few days before"),
    ("last weekend", -7, "the weekend before"),
    ("this weekend", 0, "the weekend of"),
    ("last night", -1, "day"),
    ("last week", -7, "the week before"),
    ("next week", 7, "the week after"),
    ("last month", -1, "month"),
    ("next month", 1, "month"),
    ("last year", -1, "year"),
    ("this year", 0, "year"),
    ("yesterday", -1, "day"),
    ("tomorrow", 1, "day"),
    ("today", 0, "day"),
    ("tonight", 0, "day"),
];

fn dates(fact: &str, date: Option<Date>, keep: bool) -> String {
    let lower = fact.to_ascii_lowercase();
    for &(phrase, offset, how) in RELATIVE {
        let Some(at) = find_word(&lower, phrase) else {
            continue;
        };
        if !keep {
            let mut s = format!("{}{}", &fact[..at], &fact[at + phrase.len()..]);
            s = s
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .replace(" .", ".")
                .replace(" ,", ",")
                .replace(" !", "!");
            return s;
        }
        let Some(d) = date else {
            return fact.to_owned();
        };
        let resolved = match how {
            "day" => d.plus_days(offset).long(),
            "month" => d.plus_months(offset).month_year(),
            "year" => (d.year + offset).to_string(),
            prefix => format!("{prefix} {}", d.long()),
        };
        let end = at + phrase.len();
        return format!("{} ({resolved}){}", &fact[..end], &fact[end..]);
    }
    fact.to_owned()
}

fn find_word(hay: &str, needle: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = hay[from..].find(needle) {
        let at = from + i;
        let before = hay[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_alphanumeric());
        let after = hay[at + needle.len()..]
            .chars()
            .next()
            .is_none_or(|c| !c.is_alphanumeric());
        if before && after {
            return Some(at);
        }
        from = at + needle.len();
    }
    None
}

// ---------------------------------------------------------------- update / delete

fn memories_and_facts(user: &str) -> (Vec<(String, String)>, Vec<String>) {
    let old = user.split_once("Old memory:").map_or("", |(_, r)| {
        r.split_once("New facts:").map_or(r, |(a, _)| a)
    });
    let facts = user.split_once("New facts:").map_or("", |(_, r)| r);
    let old: Vec<(String, String)> = serde_json::from_str::<Vec<Value>>(old.trim())
        .unwrap_or_default()
        .iter()
        .map(|m| {
            (
                m["id"].as_str().unwrap_or_default().to_owned(),
                m["text"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    let facts = serde_json::from_str::<Vec<String>>(facts.trim()).unwrap_or_default();
    (old, facts)
}

const CORRECTION: &[&str] = &["actually", "switched", "changed", "instead", "now"];
const RETRACTION: &[&str] = &[
    "no longer",
    "anymore",
    "stopped",
    "quit",
    "gave up",
    "not anymore",
];

fn has_cue(fact: &str, cues: &[&str]) -> bool {
    let lower = fact.to_lowercase();
    cues.iter().any(|c| find_word(&lower, c).is_some())
}

fn update(system: &str, user: &str) -> Value {
    let lower = system.to_lowercase();
    let merge = ["richer", "merge", "combine"]
        .iter()
        .any(|w| lower.contains(w));
    let (old, facts) = memories_and_facts(user);
    let mut events: BTreeMap<usize, Value> = BTreeMap::new();
    let mut added = Vec::new();
    let old_terms: Vec<BTreeSet<String>> = old.iter().map(|(_, t)| text::term_set(t)).collect();
    for fact in &facts {
        let f = text::term_set(fact);
        let best = old_terms
            .iter()
            .enumerate()
            .filter(|(i, _)| !events.contains_key(i))
            .map(|(i, o)| (i, text::overlap(&f, o)))
            .fold(None, |acc: Option<(usize, f64)>, x| match acc {
                Some(a) if a.1 >= x.1 => Some(a),
                _ => Some(x),
            });
        let (i, sim) = best.unwrap_or((usize::MAX, 0.0));
        let Some((id, old_text)) = old.get(i) else {
            added.push(fact.clone());
            continue;
        };
        if has_cue(fact, RETRACTION) {
            added.push(fact.clone());
        } else if sim >= 0.9 {
            // Already known: NONE.
        } else if has_cue(fact, CORRECTION) && sim >= 0.34 {
            events.insert(
                i,
                json!({"id": id, "text": fact, "event": "UPDATE", "old_memory": old_text}),
            );
        } else if jaccard(&f, &old_terms[i]) >= 0.5 && old_text.split_whitespace().count() < 60 {
            let text = if merge {
                format!("{old_text} {fact}")
            } else {
                fact.clone()
            };
            events.insert(
                i,
                json!({"id": id, "text": text, "event": "UPDATE", "old_memory": old_text}),
            );
        } else {
            added.push(fact.clone());
        }
    }
    let mut memory = Vec::new();
    for (i, (id, text)) in old.iter().enumerate() {
        memory.push(
            events
                .remove(&i)
                .unwrap_or_else(|| json!({"id": id, "text": text, "event": "NONE"})),
        );
    }
    let next = old
        .iter()
        .filter_map(|(id, _)| id.parse::<usize>().ok())
        .max()
        .map_or(0, |m| m + 1);
    for (k, fact) in added.into_iter().enumerate() {
        memory.push(json!({"id": (next + k).to_string(), "text": fact, "event": "ADD"}));
    }
    json!({ "memory": memory })
}

fn jaccard(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    let union = a.union(b).count();
    if union == 0 {
        0.0
    } else {
        a.intersection(b).count() as f64 / union as f64
    }
}

fn delete(system: &str, user: &str) -> Value {
    if system.to_lowercase().contains("never delete") {
        return json!({ "memory": [] });
    }
    let (old, facts) = memories_and_facts(user);
    let mut out = Vec::new();
    let mut gone = BTreeSet::new();
    for fact in facts.iter().filter(|f| has_cue(f, RETRACTION)) {
        let f = text::term_set(fact);
        let best = old
            .iter()
            .filter(|(id, _)| !gone.contains(id))
            .map(|(id, t)| (id, t, text::overlap(&f, &text::term_set(t))))
            .fold(None, |acc: Option<(&String, &String, f64)>, x| match acc {
                Some(a) if a.2 >= x.2 => Some(a),
                _ => Some(x),
            });
        if let Some((id, t, sim)) = best {
            if sim >= 0.4 {
                gone.insert(id.clone());
                out.push(json!({"id": id, "text": t, "event": "DELETE"}));
            }
        }
    }
    json!({ "memory": out })
}

// ---------------------------------------------------------------- answer / judge

fn answer(system: &str, user: &str) -> String {
    let all = format!("{system}\n{user}");
    let instructions = all.split("Question:").next().unwrap_or("").to_lowercase();
    let question = line_after(&all, "Question:").unwrap_or("").to_owned();
    let mut memories: Vec<(String, String)> = Vec::new();
    for block in all.split("### Memory").skip(1) {
        let text = line_after(block, "Memory:").unwrap_or("").to_owned();
        let time = line_after(block, "Time:").unwrap_or("").to_owned();
        memories.push((text, time));
    }
    let q = text::term_set(&question);
    let n = memories.len().max(1) as f64;
    let sets: Vec<BTreeSet<String>> = memories.iter().map(|(t, _)| text::term_set(t)).collect();
    let idf =
        |t: &String| (1.0 + n / sets.iter().filter(|s| s.contains(t)).count().max(1) as f64).ln();
    let score = |s: &BTreeSet<String>| q.intersection(s).map(idf).sum::<f64>();
    let mut ranked: Vec<(usize, f64)> = sets
        .iter()
        .enumerate()
        .map(|(i, s)| (i, score(s)))
        .collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let Some(&(i, top)) = ranked.first() else {
        return "I don't know.".to_owned();
    };
    if top <= 0.0 && instructions.contains("don't know") {
        return "I don't know.".to_owned();
    }
    let Some((text, time)) = memories.get(i) else {
        return "I don't know.".to_owned();
    };
    let concise = instructions.contains("concise") || instructions.contains("short");
    let mut out = text.clone();
    if concise {
        if let Some(best) = sentences(text).into_iter().max_by(|a, b| {
            score(&text::term_set(a))
                .total_cmp(&score(&text::term_set(b)))
                .then(b.len().cmp(&a.len()))
        }) {
            out = best;
        }
    } else if let Some((second, _)) = ranked
        .get(1)
        .filter(|(_, s)| *s > 0.0)
        .and_then(|(j, _)| memories.get(*j))
    {
        out = format!("{out} {second}");
    }
    if instructions.contains("timestamp") && question.to_lowercase().starts_with("when") {
        if let Some(d) = Date::parse(time) {
            out = format!("{out} ({})", d.long());
        }
    }
    out
}

fn judge(user: &str) -> Value {
    let gold = line_after(user, "Gold answer:").unwrap_or("");
    let generated = line_after(user, "Generated answer:").unwrap_or("");
    let right = text::judge_rule(generated, gold);
    json!({ "label": if right { "CORRECT" } else { "WRONG" } })
}

#[cfg(test)]
mod tests;
