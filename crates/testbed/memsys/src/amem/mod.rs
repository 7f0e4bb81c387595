//! A-Mem (agentic memory, Xu et al. 2025), recorded under the names of A-Mem's
//! `AgenticMemorySystem`: per message pair, `amem.add_note` (category `note_construction`, LLM:
//! `analyze_content`) writes one note per fact — `memory-note-<id>` (category `memory_note`)
//! with content, keywords, context and tags; `amem.generate_links` (category
//! `link_generation`) links each new note to its nearest notes (a new version of the new note);
//! `amem.process_memory` (category `memory_evolution`, LLM) lets the new notes evolve their
//! neighbours: it rewrites a neighbour's content, context and tags (a new version of an
//! existing note); `amem.consolidate_memories` (category `consolidation`, LLM) removes the
//! notes the new ones supersede (a tombstone version). Per question `amem.search_agentic`
//! returns the top-k notes by similarity plus the notes they link to.
//!
//! Faults, one per error type: extraction (the note construction drops or garbles the
//! answer), update (the evolution overwrites the notes holding it), deletion (the consolidation
//! removes them), retrieval (the search leaves them out, linked neighbours included), response.

mod evolve;

use std::collections::BTreeSet;

use serde_json::{json, Value};

use memtrace_record::{OpSpec, Render, Scope, Var, VarSpec};

use super::fault::{garble, holds, Fault};
use super::forced::at_pair;
use super::locomo::Turn;
use super::prompts::{self, Prompts};
use super::record::{
    construction_session, llm_var, message_var_as, parse_list, prompt_var, role_of, unit_id,
};
use super::search::Search;
use super::store::Unit;
use super::text::Date;
use super::{Job, MemsysError, Run};
use crate::simulated;
use evolve::Step;
use memtrace::provider::Llm;
use memtrace::util::json::str_list;

/// The note-construction instructions (A-Mem's `analyze_content`, shortened).
pub const NOTE_PROMPT: &str = "Generate a structured analysis of the conversation: for each distinct personal fact (events, plans, preferences, relationships, possessions, jobs) write a note whose content is a short third-person sentence naming the speaker, with its keywords, a one-sentence context and tags. Resolve relative dates. Skip greetings and questions. Return JSON: {\"notes\": [{\"content\": \"...\", \"keywords\": [...], \"context\": \"...\", \"tags\": [...]}]}.";
/// The memory-evolution instructions (A-Mem's evolution prompt, shortened).
pub const EVOLUTION_PROMPT: &str = "You are an AI memory evolution agent. Compare each new memory note with its nearest neighbour notes and decide whether a neighbour should evolve: UPDATE it when the new note refines or corrects it (keep its id and write the updated content), NONE otherwise. Return JSON: {\"memory\": [{\"id\": \"...\", \"text\": \"...\", \"event\": \"...\", \"old_memory\": \"...\"}]}.";
/// The consolidation instructions.
pub const CONSOLIDATION_PROMPT: &str = "You consolidate an agentic memory. A neighbour note that a new note supersedes or retracts is removed.";

/// Links a new note gets at most.
const MAX_LINKS: usize = 3;

/// One note, as A-Mem's `MemoryNote` holds it.
#[derive(Debug, Clone, Default)]
struct Note {
    id: String,
    content: String,
    keywords: Vec<String>,
    context: String,
    tags: Vec<String>,
    links: Vec<String>,
    timestamp: String,
    history: Vec<String>,
}

impl Note {
    fn value(&self) -> Value {
        json!({"id": self.id, "content": self.content, "keywords": self.keywords,
            "context": self.context, "tags": self.tags, "category": "Uncategorized",
            "links": self.links, "timestamp": self.timestamp,
            "evolution_history": self.history})
    }
}

struct Builder<'a, L> {
    job: &'a Job<'a, L>,
    notes: Vec<Note>,
    note_prompt: Option<Var>,
    evolution_prompt: Option<Var>,
}

impl<L: Llm> Builder<'_, L> {
    fn note_mut(&mut self, id: &str) -> Option<&mut Note> {
        self.notes.iter_mut().find(|n| n.id == id)
    }

    /// One message pair: construct its notes, link them, evolve and consolidate neighbours.
    async fn pair(
        &mut self,
        scope: &Scope,
        turns: &[Turn],
        (timestamp, date): (&str, &str),
        pair: usize,
        run: &mut Run,
    ) -> Result<(), MemsysError> {
        let new = self
            .construct(scope, turns, timestamp, date, pair, run)
            .await?;
        if new.is_empty() {
            return Ok(());
        }
        run.pairs_with_facts.insert(pair);
        let neighbours = self.link(scope, &new, run);
        let faults = self.job.faults;
        let updates = at_pair(faults, pair, Fault::update_at);
        if let Some(step) = Step::new(run, scope, (&new, &neighbours), updates) {
            self.evolve(&step, run).await?;
        }
        let deletions = at_pair(faults, pair, Fault::deletion_at);
        let Some(step) = Step::new(run, scope, (&new, &neighbours), deletions) else {
            return Ok(());
        };
        self.consolidate(&step, run).await
    }

    /// `amem.add_note`: the LLM writes one note per fact; returns the new notes' ids.
    async fn construct(
        &mut self,
        scope: &Scope,
        turns: &[Turn],
        timestamp: &str,
        date: &str,
        pair: usize,
        run: &mut Run,
    ) -> Result<Vec<String>, MemsysError> {
        let speakers = [
            self.job.conv.speaker_a.as_str(),
            self.job.conv.speaker_b.as_str(),
        ];
        let msgs: Vec<(&str, &str)> = turns
            .iter()
            .map(|t| (t.speaker.as_str(), t.text.as_str()))
            .collect();
        let p = Prompts {
            fact_extraction: NOTE_PROMPT.to_owned(),
            ..Prompts::default()
        };
        let mut req = prompts::extraction_request(&p, date, &speakers, None, &msgs);
        simulated::NOTE.clone_into(&mut req.purpose);
        let resp = run.chat(self.job.llm, &req).await?;
        let mut raw_text = resp.content.clone();
        let mut drafts = parse_list(&prompts::strip_code_block(&raw_text), "notes");
        let op = scope.op(
            OpSpec::new("amem.add_note", "note_construction")
                .comment("Construct memory notes from the conversation: an LLM analyses the content into notes with keywords, context and tags.")
                .meta("llm_model", json!(resp.model)),
        );
        for (k, f) in self.job.faults.iter().enumerate() {
            let Some((p, answer, garbled)) = f.extraction_at() else {
                continue;
            };
            let hit = |d: &Value| holds(d["content"].as_str().unwrap_or_default(), answer);
            if p != pair || !drafts.iter().any(hit) {
                continue;
            }
            drafts = drafts
                .into_iter()
                .filter_map(|d| {
                    if !hit(&d) {
                        Some(d)
                    } else if garbled {
                        let gb = |v: &Value| garble(v.as_str().unwrap_or_default(), answer);
                        let list = |v: &Value| -> Vec<String> {
                            str_list(v).iter().map(|s| garble(s, answer)).collect()
                        };
                        Some(
                            json!({"content": gb(&d["content"]), "keywords": list(&d["keywords"]),
                            "context": gb(&d["context"]), "tags": list(&d["tags"])}),
                        )
                    } else {
                        None
                    }
                })
                .collect();
            // The fault is the LLM's: its reply is what it would have said.
            raw_text = json!({ "notes": drafts }).to_string();
            run.applied[k] = Some(op.id().to_owned());
        }
        let span = run.spans.llm(
            "amem.analyze_content",
            &req,
            &raw_text,
            &resp.model,
            resp.usage,
        );
        run.spans.tie(op.id(), &span);
        let msg_vars: Vec<Var> = turns
            .iter()
            .map(|t| {
                message_var_as(
                    &op,
                    self.job.conv,
                    t,
                    timestamp,
                    &t.text,
                    "An input message fed into the agentic memory; notes are constructed from it.",
                )
            })
            .collect();
        let template = self
            .note_prompt
            .get_or_insert_with(|| {
                prompt_var(
                    scope,
                    "note-construction-prompt",
                    NOTE_PROMPT,
                    "note_construction",
                    "The note construction (content analysis) prompt.",
                )
            })
            .clone();
        let raw = llm_var(
            &op,
            "raw_note_construction_response",
            json!(raw_text),
            "A raw note construction response from an LLM.",
        );
        let mut inputs: Vec<&Var> = msg_vars.iter().collect();
        inputs.push(&template);
        op.io(
            &inputs,
            &[&raw],
            "The LLM analyses the messages into notes.",
        );
        let parsed = llm_var(
            &op,
            "note_attributes",
            Value::from(drafts.clone()),
            "The notes' content, keywords, context and tags parsed from the response.",
        );
        op.link(
            &raw,
            &parsed,
            "The response is parsed into note attributes.",
        );
        let mut ids = Vec::new();
        for d in &drafts {
            let content = d["content"].as_str().unwrap_or_default().to_owned();
            if content.is_empty() {
                continue;
            }
            let id = unit_id(self.job.cfg.seed, pair, &content);
            if run.store.get(&id).is_some() {
                continue;
            }
            let note = Note {
                id: id.clone(),
                content: content.clone(),
                keywords: str_list(&d["keywords"]),
                context: d["context"].as_str().unwrap_or_default().to_owned(),
                tags: str_list(&d["tags"]),
                timestamp: timestamp.to_owned(),
                ..Note::default()
            };
            let var = op.var(
                VarSpec::named(&format!("memory-note-{id}"), note.value())
                    .render(Render::Json)
                    .category("memory_note")
                    .comment("A memory note of the agentic memory."),
            );
            op.link(
                &parsed,
                &var,
                &format!("A new memory note '{id}' is constructed."),
            );
            run.spans.write(
                "amem.memories.add",
                &json!({"id": id, "document": content, "metadata": {"keywords": note.keywords, "context": note.context, "tags": note.tags}}),
                &[json!({"id": id, "memory": content, "event": "ADD"})],
            );
            run.store.add(Unit {
                id: id.clone(),
                text: content,
                timestamp: timestamp.to_owned(),
                deleted: false,
                var,
            });
            self.notes.push(note);
            ids.push(id);
        }
        Ok(ids)
    }

    /// `amem.generate_links`: each new note links to its nearest older notes (a new version
    /// of the new note). Returns the neighbours' ids, nearest first.
    fn link(&mut self, scope: &Scope, new: &[String], run: &mut Run) -> Vec<String> {
        let fresh: BTreeSet<&String> = new.iter().collect();
        let mut all: Vec<String> = Vec::new();
        let mut op: Option<Scope> = None;
        for id in new {
            let Some(u) = run.store.get(id).cloned() else {
                continue;
            };
            let near: Vec<Unit> = run
                .store
                .search(&u.text, MAX_LINKS + new.len())
                .into_iter()
                .filter_map(|(i, _)| run.store.units().get(i).cloned())
                .filter(|n| !fresh.contains(&n.id))
                .take(MAX_LINKS)
                .collect();
            let docs: Vec<(String, String, f64)> = near
                .iter()
                .map(|n| (n.id.clone(), n.text.clone(), 0.0))
                .collect();
            run.spans
                .retriever("amem.find_related_memories", &u.text, &docs);
            if near.is_empty() {
                continue;
            }
            let op = op.get_or_insert_with(|| {
                scope.op(OpSpec::new("amem.generate_links", "link_generation")
                    .comment("Link each new memory note to its nearest existing notes.")
                    .meta("max_links", json!(MAX_LINKS)))
            });
            let links: Vec<String> = near.iter().map(|n| n.id.clone()).collect();
            let Some(note) = self.note_mut(id) else {
                continue;
            };
            note.links.clone_from(&links);
            let value = note.value();
            let vars: Vec<&Var> = near.iter().map(|n| &n.var).collect();
            let var = op.mutate(
                &u.var,
                &value,
                Render::Json,
                &vars,
                &format!(
                    "The note '{id}' is linked to {} nearest notes.",
                    links.len()
                ),
            );
            run.store.update(id, &u.text, var);
            run.links.insert(id.clone(), links.clone());
            for l in links {
                if !all.contains(&l) {
                    all.push(l);
                }
            }
        }
        all
    }
}

/// Builds A-Mem's memory of `conv` with `faults` injected.
///
/// # Errors
/// The provider's error, if a call fails.
pub(super) async fn construct<L: Llm>(job: &Job<'_, L>, run: &mut Run) -> Result<(), MemsysError> {
    let conv = job.conv;
    let mut b = Builder {
        job,
        notes: Vec::new(),
        note_prompt: None,
        evolution_prompt: None,
    };
    let mut pair_no = 0;
    for session in &conv.sessions {
        let date = session.date().map(Date::long).unwrap_or_default();
        let scope = construction_session(job.rec, conv, session);
        for turns in session.turns.chunks(2) {
            let msgs: Vec<Value> = turns
                .iter()
                .map(|t| json!({"role": role_of(conv, t), "name": t.speaker, "content": t.text}))
                .collect();
            run.spans.open(
                "AgenticMemorySystem.add_note",
                &json!({"messages": msgs, "time": session.timestamp}),
                &Value::Null,
            );
            b.pair(&scope, turns, (&session.timestamp, &date), pair_no, run)
                .await?;
            run.spans.close_with_results();
            pair_no += 1;
        }
    }
    Ok(())
}

/// A-Mem's `search_agentic`: the top-k notes by similarity, then the notes they link to.
pub(super) fn retrieve(s: &Search, run: &mut Run) -> Vec<Unit> {
    let cfg = s.cfg;
    let op = s.scope.op(
        OpSpec::new("amem.search_agentic", "retrieval")
            .comment(&format!(
                "A task query searches the agentic memory for the top-{} notes and the notes they link to.",
                cfg.top_k
            ))
            .meta("k", json!(cfg.top_k))
            .meta("embedding_model", json!("bm25-lexical")),
    );
    let mut hits = s.nearest_top_k(run, op.id());
    let hidden = s.hidden();
    let linked: Vec<String> = hits
        .iter()
        .flat_map(|(u, _)| run.links.get(&u.id).cloned().unwrap_or_default())
        .collect();
    let mut extra = 0;
    for id in linked {
        if extra == cfg.top_k / 2 {
            break;
        }
        let Some(u) = run.store.get(&id).filter(|u| !u.deleted).cloned() else {
            continue;
        };
        if hits.iter().any(|(h, _)| h.id == u.id) {
            continue;
        }
        if let Some((k, _)) = hidden.iter().find(|(_, a)| holds(&u.text, a)) {
            run.applied[*k] = Some(op.id().to_owned());
            continue;
        }
        hits.push((u, 0.0));
        extra += 1;
    }
    s.link_hits(run, &op, "amem.retriever.search", hits)
}
