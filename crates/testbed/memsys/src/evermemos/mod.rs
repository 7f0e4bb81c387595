//! EverMemOS, recorded as MemBase records its `EverMemOSLayer`: every message enters the
//! `message-buffer` (`memory_system.message_buffer_update`, category `update`); an
//! `evermemos.boundary_detection` op (category `boundary_detection`) decides when the buffered
//! messages close an episode; `memory_system.finalize_memory_unit` (category `initialization`)
//! makes the memory unit `memory-unit-<event_id>` from the raw messages;
//! `memory_system.extract_memory` (category `extraction`, LLM) writes the episode narrative
//! into it. A user profile per speaker (`profile-<name>`) is then updated over time by
//! `memory_system.update_profile` (category `update`, LLM). Per question,
//! `memory_system.hybrid_retrieval` fuses BM25 and a dense stand-in by reciprocal rank, and
//! `memory_system.agentic_final_rerank` reranks the candidates and keeps the top k.
//!
//! Simplifications (see `docs/memsys-families.md`): boundaries are detected by EverMemOS's
//! hard rules only (a time gap — a new session — or a message limit), not by an LLM; stable
//! attributes (likes, jobs, …) go to the profile only and events to the episode, so the profile
//! is the one place those facts live; no event log or foresight.
//!
//! Faults: extraction (the episode drops or garbles the answer), update (the profile update
//! overwrites the answer), retrieval (the reranker leaves it out), response. EverMemOS never
//! deletes a memory unit, so it cannot have a DeletionError.

mod profile;
mod retrieve;

pub(super) use retrieve::retrieve;

use serde_json::{json, Value};

use memtrace_record::{sha1_hex, OpSpec, Render, Scope, Var, VarSpec};

use super::fault::holds_whole;
use super::forced::drop_facts_where;
use super::locomo::Turn;
use super::prompts::{self, Prompts};
use super::record::{
    buffer_var, construction_session, finalization_session, llm_var, message_var_as, parse_list,
    prompt_var, role_of, turn_pairs,
};
use super::store::Unit;
use super::text::Date;
use super::{Job, MemsysError, Run};
use memtrace::provider::Llm;

/// The episode-extraction instructions (EverMemOS's episode extractor, shortened).
pub const EPISODE_PROMPT: &str = "You are an episodic memory extractor. Rewrite the conversation segment as a third-person narrative of what happened: one short sentence per event, plan or experience, naming the speaker. Resolve relative dates to absolute dates. Skip greetings and questions. Return JSON: {\"facts\": [\"...\"]}.";
/// The profile-update instructions (EverMemOS's profile extractor, shortened).
pub const PROFILE_PROMPT: &str = "You are a personal profile extraction expert. Compare each new statement about the person with their current profile items and choose one event per item: ADD (a new attribute), UPDATE (it refines or corrects an item; keep its id), NONE (already known). Return JSON: {\"memory\": [{\"id\": \"...\", \"text\": \"...\", \"event\": \"...\", \"old_memory\": \"...\"}]}.";
/// Messages after which a segment is closed even without a time gap.
const MAX_SEGMENT: usize = 6;
/// Word beginnings that mark a stable attribute (preferences, work, plans, identity): such
/// facts go to the profile, not to the episode.
const PROFILE_CUES: [&str; 16] = [
    "lov", "like", "enjoy", "favo", "passion", "dream", "career", "job", "work", "hobb", "prefer",
    "identif", "interest", "want", "plan", "goal",
];

fn is_profile_fact(fact: &str) -> bool {
    fact.split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .any(|w| PROFILE_CUES.iter().any(|c| w.starts_with(c)))
}

/// One buffered message.
#[derive(Debug, Clone)]
struct Buffered {
    turn: Turn,
    session: usize,
    pair: usize,
    timestamp: String,
    date: String,
}

fn buffer_value(buffer: &[Buffered]) -> Value {
    Value::from(
        buffer
            .iter()
            .map(|b| json!({"speaker_name": b.turn.speaker, "content": b.turn.text, "timestamp": b.timestamp}))
            .collect::<Vec<_>>(),
    )
}

/// A speaker's profile: its items and its unit in the store.
#[derive(Debug, Clone, Default)]
struct Profile {
    speaker: String,
    items: Vec<String>,
}

impl Profile {
    fn id(&self) -> String {
        format!("profile-{}", self.speaker)
    }
    fn value(&self) -> Value {
        json!({"user_name": self.speaker, "profile": self.items})
    }
}

struct Builder<'a, L> {
    job: &'a Job<'a, L>,
    buffer: Vec<Buffered>,
    profiles: Vec<Profile>,
    segments: usize,
    episode_prompt: Option<Var>,
    profile_prompt: Option<Var>,
}

impl<L: Llm> Builder<'_, L> {
    fn buffer_var(&self, scope: &Scope) -> Var {
        buffer_var(scope, buffer_value(&self.buffer))
    }

    async fn message(
        &mut self,
        scope: &Scope,
        item: Buffered,
        run: &mut Run,
    ) -> Result<(), MemsysError> {
        let raw = message_var_as(
            scope,
            self.job.conv,
            &item.turn,
            &item.timestamp,
            &item.turn.text,
            "An input message fed into the memory pipeline. It triggers the memory system to extract valuable information that is worth storing in the memory store.",
        );
        let before = self.buffer_var(scope);
        let gap = self
            .buffer
            .last()
            .is_some_and(|b| b.session != item.session);
        self.buffer.push(item);
        let op = scope.op(OpSpec::new("memory_system.message_buffer_update", "update")
            .comment("Add a new input message into the current message buffer."));
        let buffer = op.mutate(
            &before,
            &buffer_value(&self.buffer),
            Render::Json,
            &[&raw],
            "Add a new input message into the current message buffer.",
        );
        if self.buffer.len() < 2 {
            return Ok(());
        }
        let history = self.buffer.len() - 1;
        let end = gap || history >= MAX_SEGMENT;
        let op = scope.op(
            OpSpec::new("evermemos.boundary_detection", "boundary_detection")
                .comment("Decide whether the buffered history closes an episode before the new message (time gap or message limit).")
                .meta("hard_message_limit", json!(MAX_SEGMENT)),
        );
        let reason = if gap {
            "The new message starts a new conversation session: the time gap closes the episode."
        } else if end {
            "The buffered history reached the message limit."
        } else {
            "The new message continues the current topic."
        };
        let result = op.var(
            VarSpec::content(
                "boundary_detection_result",
                json!({"should_end": end, "reasoning": reason}),
            )
            .render(Render::Json)
            .category("llm_response")
            .comment("The boundary detection result."),
        );
        op.io(
            &[&buffer],
            &[&result],
            "The boundary of the buffered messages is detected.",
        );
        if !end {
            return Ok(());
        }
        let segment: Vec<Buffered> = self.buffer.drain(..history).collect();
        let temp = op.var(
            VarSpec::content("temporary_variable", buffer_value(&segment))
                .render(Render::Json)
                .category("temporary_variable")
                .comment(
                    "A temporary memory unit candidate holding the messages of the closed episode.",
                ),
        );
        op.io(
            &[&buffer, &result],
            &[&temp],
            "The history messages form a memory unit candidate.",
        );
        self.segment(scope, &segment, &temp, run).await?;
        let reset = scope.op(
            OpSpec::new("memory_system.message_buffer_update", "update")
                .comment("After the current memory unit is extracted, the memory system resets the message buffer by keeping only the newest message."),
        );
        reset.mutate(
            &buffer,
            &buffer_value(&self.buffer),
            Render::Json,
            &[],
            "The message buffer keeps only the newest message.",
        );
        Ok(())
    }

    /// A closed segment: finalize its unit, extract its episode, update the profiles.
    async fn segment(
        &mut self,
        scope: &Scope,
        seg: &[Buffered],
        temp: &Var,
        run: &mut Run,
    ) -> Result<(), MemsysError> {
        let (Some(first), Some(last)) = (seg.first(), seg.last()) else {
            return Ok(());
        };
        let event_id = sha1_hex(
            format!(
                "{}:{}:{}",
                self.job.cfg.seed, self.segments, first.turn.dia_id
            )
            .as_bytes(),
        )
        .get(..24)
        .unwrap_or_default()
        .to_owned();
        self.segments += 1;
        let name = format!("memory-unit-{event_id}");
        let mut unit = json!({"event_id": event_id, "original_data": buffer_value(seg), "timestamp": last.timestamp,
            "episode": null, "subject": null, "summary": null, "foresights": null, "event_log": null});
        let op = scope.op(
            OpSpec::new("memory_system.finalize_memory_unit", "initialization")
                .comment("The memory system finalizes the temporary memory unit candidate into a concrete memory unit by assigning a unique event identifier."),
        );
        let var = op.var(
            VarSpec::named(&name, unit.clone())
                .render(Render::Json)
                .category("memory_entry")
                .comment(
                    "An initial memory-unit created from the temporary memory unit candidate.",
                ),
        );
        op.io(
            &[temp],
            &[&var],
            "The candidate becomes an initial memory unit.",
        );

        // Episode extraction.
        let speakers = [
            self.job.conv.speaker_a.as_str(),
            self.job.conv.speaker_b.as_str(),
        ];
        let msgs: Vec<(&str, &str)> = seg
            .iter()
            .map(|b| (b.turn.speaker.as_str(), b.turn.text.as_str()))
            .collect();
        let p = Prompts {
            fact_extraction: EPISODE_PROMPT.to_owned(),
            ..Prompts::default()
        };
        let req = prompts::extraction_request(&p, &last.date, &speakers, None, &msgs);
        let resp = run.chat(self.job.llm, &req).await?;
        let op = scope.op(
            OpSpec::new("memory_system.extract_memory", "extraction")
                .comment("Run the memory-extraction stage on the initial memory-unit: extract an episode-level narrative memory.")
                .meta("llm_model", json!(resp.model)),
        );
        let mut raw_text = resp.content.clone();
        let facts: Vec<String> = parse_list(&prompts::strip_code_block(&raw_text), "facts")
            .iter()
            .filter_map(|f| f.as_str().map(str::to_owned))
            .collect();
        let (profile_facts, mut events): (Vec<String>, Vec<String>) =
            facts.into_iter().partition(|f| is_profile_fact(f));
        let pairs: Vec<usize> = seg.iter().map(|b| b.pair).collect();
        let mut faulted = false;
        for (k, f) in self.job.faults.iter().enumerate() {
            let Some((pair, answer, garbled)) = f.extraction_at() else {
                continue;
            };
            if pairs.contains(&pair) && events.iter().any(|e| holds_whole(e, answer)) {
                events = drop_facts_where(events, answer, garbled, holds_whole);
                run.applied[k] = Some(op.id().to_owned());
                faulted = true;
            }
        }
        if faulted {
            // The fault is the LLM's: its reply is what it would have said.
            let all: Vec<&String> = events.iter().chain(&profile_facts).collect();
            raw_text = json!({ "facts": all }).to_string();
        }
        let template = self
            .episode_prompt
            .get_or_insert_with(|| {
                prompt_var(
                    scope,
                    "episode-extraction-prompt-template",
                    EPISODE_PROMPT,
                    "extraction",
                    "The episode extraction prompt template.",
                )
            })
            .clone();
        let filled = op.var(
            VarSpec::content(
                "episode_extraction_prompt",
                json!(req
                    .messages
                    .iter()
                    .map(|m| m.content.as_str())
                    .collect::<Vec<_>>()
                    .join("\n")),
            )
            .category("prompt")
            .comment("The episode extraction prompt filled with the segment's messages."),
        );
        op.io(
            &[&template, &var],
            &[&filled],
            "The segment's messages are inserted into the episode extraction prompt.",
        );
        let raw = llm_var(
            &op,
            "raw_episode_extraction_response",
            json!(raw_text),
            "A raw episode extraction response from an LLM.",
        );
        op.link(&filled, &raw, "The LLM extracts the episode.");
        let span = run.spans.llm(
            "episode_extraction",
            &req,
            &raw_text,
            &resp.model,
            resp.usage,
        );
        run.spans.tie(op.id(), &span);
        let episode = events.join(" ");
        let subject = events
            .first()
            .map(|e| e.split_whitespace().take(6).collect::<Vec<_>>().join(" "))
            .unwrap_or_default();
        let mem = llm_var(
            &op,
            "episode_memory",
            json!({"episode": episode, "subject": subject}),
            "The episode memory parsed from the LLM's response.",
        );
        op.link(&raw, &mem, "The response is parsed into an episode memory.");
        unit["episode"] = json!(episode);
        unit["subject"] = json!(subject);
        unit["summary"] = json!(episode.chars().take(200).collect::<String>() + "...");
        let var = op.mutate(&var, &unit, Render::Json, &[&mem], "The memory system refines the initial memory-unit by writing the extracted episode back into it.");
        if let Some(o) = unit.as_object_mut() {
            o.remove("original_data");
        }
        let var = op.mutate(&var, &unit, Render::Json, &[], "The raw original data is removed: the final memory unit is placed into the memory store.");
        let text = format!("{subject}: {episode}");
        run.spans.write(
            "memcell_store.save",
            &json!({"event_id": event_id, "subject": subject, "episode": episode}),
            &[json!({"id": event_id, "memory": text, "event": "ADD"})],
        );
        run.store.add(Unit {
            id: event_id,
            text,
            timestamp: last.timestamp.clone(),
            deleted: false,
            var: var.clone(),
        });
        self.update_profiles(scope, (&var, &raw), &profile_facts, last, run)
            .await
    }
}

/// Builds EverMemOS's memory of `conv` with `faults` injected.
///
/// # Errors
/// The provider's error, if a call fails.
pub(super) async fn construct<L: Llm>(job: &Job<'_, L>, run: &mut Run) -> Result<(), MemsysError> {
    let conv = job.conv;
    let mut b = Builder {
        job,
        buffer: Vec::new(),
        profiles: Vec::new(),
        segments: 0,
        episode_prompt: None,
        profile_prompt: None,
    };
    for (session, pairs) in conv.sessions.iter().zip(turn_pairs(conv)) {
        let scope = construction_session(job.rec, conv, session);
        let date = session.date().map(Date::long).unwrap_or_default();
        for (t, pair) in session.turns.iter().zip(pairs) {
            let item = Buffered {
                turn: t.clone(),
                session: session.number,
                pair,
                timestamp: session.timestamp.clone(),
                date: date.clone(),
            };
            let msg = json!({"role": role_of(conv, t), "name": t.speaker, "content": t.text, "timestamp": session.timestamp});
            run.spans.open(
                "EverMemOSLayer.add_message",
                &json!({ "messages": [msg] }),
                &Value::Null,
            );
            b.message(&scope, item, run).await?;
            run.spans.close(None);
        }
    }
    let fin = finalization_session(job.rec);
    if !b.buffer.is_empty() {
        let buffer = b.buffer_var(&fin);
        let seg = std::mem::take(&mut b.buffer);
        let op = fin.op(OpSpec::new("memory_system.message_buffer_update", "update")
            .comment("Flush the remaining buffered messages into a last memory unit candidate."));
        let temp = op.var(
            VarSpec::content("temporary_variable", buffer_value(&seg))
                .render(Render::Json)
                .category("temporary_variable")
                .comment("A temporary memory unit candidate holding the remaining messages."),
        );
        op.io(
            &[&buffer],
            &[&temp],
            "The remaining messages form a memory unit candidate.",
        );
        op.mutate(
            &buffer,
            &buffer_value(&b.buffer),
            Render::Json,
            &[],
            "The message buffer is cleared.",
        );
        run.spans
            .open("EverMemOSLayer.flush", &Value::Null, &Value::Null);
        b.segment(&fin, &seg, &temp, run).await?;
        run.spans.close(None);
    }
    Ok(())
}
