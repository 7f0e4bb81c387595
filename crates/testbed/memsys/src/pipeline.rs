//! Memory construction, Mem0-style, recorded with MemBase's conventions: per message pair,
//! extract facts (LLM); find similar units and decide ADD / UPDATE / NONE (LLM); check for
//! retracted units and delete them (LLM).

use serde_json::{json, Value};

use memtrace_record::{OpSpec, Render, Scope, Var, VarSpec};

use super::fault::{holds, Fault};
use super::forced::{
    at_pair, drop_facts, force_deletions, force_unit_deletions, force_update_where,
};
use super::locomo::{Conversation, Turn};
use super::prompts::{self, Prompts};
use super::record::{
    construction_session, deletion_op, llm_var, message_var_as, parse_list, prompt_var, role_of,
    unit_id,
};
use super::store::Unit;
use super::{Config, Job, MemsysError, Run};
use memtrace::provider::Llm;

fn unit_value(id: &str, memory: Option<&str>, timestamp: &str, deleted: bool) -> Value {
    if deleted {
        json!({"id": id, "memory": null, "timestamp": timestamp, "deleted": true})
    } else {
        json!({"id": id, "memory": memory, "timestamp": timestamp})
    }
}

fn message_var(op: &Scope, conv: &Conversation, t: &Turn, timestamp: &str) -> Var {
    let role = role_of(conv, t);
    let content = format!(
        "{}\nBelow is this message's metadata:\nSpeaker Name: {}\nSpeaker Role: {role}\n",
        t.text, t.speaker
    );
    message_var_as(
        op,
        conv,
        t,
        timestamp,
        &content,
        "An input message fed into the memory pipeline; it triggers fact extraction.",
    )
}

/// Builds the memory of `conv`, recording every step, with `faults` injected.
///
/// # Errors
/// The provider's error, if a call fails.
pub(super) async fn construct<L: Llm>(job: &Job<'_, L>, run: &mut Run) -> Result<(), MemsysError> {
    let &Job {
        llm,
        conv,
        prompts,
        cfg,
        faults,
        ..
    } = job;
    let mut pair_no = 0;
    for session in &conv.sessions {
        let date = session
            .date()
            .map(super::text::Date::long)
            .unwrap_or_default();
        let scope = construction_session(job.rec, conv, session);
        let mut i = 0;
        while i < session.turns.len() {
            let end = (i + 2).min(session.turns.len());
            let turns = &session.turns[i..end];
            let earlier = i.checked_sub(1).and_then(|k| session.turns.get(k));
            let msgs: Vec<Value> = turns
                .iter()
                .map(|t| json!({"role": role_of(conv, t), "name": t.speaker, "content": t.text}))
                .collect();
            run.spans.open(
                "mem0.Memory.add",
                &json!({"messages": msgs, "user_id": conv.user_id()}),
                &Value::Null,
            );
            step(
                llm,
                conv,
                prompts,
                cfg,
                faults,
                &scope,
                earlier,
                turns,
                &session.timestamp,
                &date,
                pair_no,
                run,
            )
            .await?;
            run.spans.close_with_results();
            pair_no += 1;
            i = end;
        }
    }
    Ok(())
}

#[allow(clippy::too_many_arguments, clippy::too_many_lines)] // one pipeline step, read top to bottom
async fn step<L: Llm>(
    llm: &L,
    conv: &Conversation,
    prompts: &Prompts,
    cfg: &Config,
    faults: &[Fault],
    scope: &Scope,
    earlier: Option<&Turn>,
    turns: &[Turn],
    timestamp: &str,
    date: &str,
    pair: usize,
    run: &mut Run,
) -> Result<(), MemsysError> {
    // 1. Extraction.
    let speakers = [conv.speaker_a.as_str(), conv.speaker_b.as_str()];
    let msgs: Vec<(&str, &str)> = turns
        .iter()
        .map(|t| (t.speaker.as_str(), t.text.as_str()))
        .collect();
    let context = earlier.map(|t| (t.speaker.as_str(), t.text.as_str()));
    let req = prompts::extraction_request(prompts, date, &speakers, context, &msgs);
    let resp = run.chat(llm, &req).await?;
    let mut raw_text = resp.content.clone();
    let mut cleaned = prompts::strip_code_block(&resp.content);
    let mut facts: Vec<String> = parse_list(&cleaned, "facts")
        .iter()
        .filter_map(|f| f.as_str().map(str::to_owned))
        .collect();
    let op = scope.op(OpSpec::new("memory_system.extract_facts", "extraction")
        .comment("Extract facts from a conversation snippet using an LLM.")
        .meta("llm_model", json!(resp.model)));
    for (k, f) in faults.iter().enumerate() {
        let Some((p, answer, garbled)) = f.extraction_at() else {
            continue;
        };
        if p == pair && facts.iter().any(|x| holds(x, answer)) {
            facts = drop_facts(facts, answer, garbled);
            // The fault is the LLM's: its reply is what it would have said.
            raw_text = json!({ "facts": facts }).to_string();
            cleaned.clone_from(&raw_text);
            run.applied[k] = Some(op.id().to_owned());
        }
    }
    let span = run.spans.llm(
        "mem0.extract_facts",
        &req,
        &raw_text,
        &resp.model,
        resp.usage,
    );
    run.spans.tie(op.id(), &span);
    let msg_vars: Vec<Var> = earlier
        .into_iter()
        .chain(turns)
        .map(|t| message_var(&op, conv, t, timestamp))
        .collect();
    let p_extract = prompt_var(
        scope,
        prompts::FACT_EXTRACTION,
        &prompts.fact_extraction,
        "extraction",
        "A fact extraction system prompt.",
    );
    let raw = llm_var(
        &op,
        "raw_fact_extraction_response",
        json!(raw_text),
        "A raw fact extraction response from an LLM.",
    );
    let clean = llm_var(
        &op,
        "fact_extraction_response_with_code_block_removing",
        json!(cleaned),
        "A post-processed response.",
    );
    let facts_var = llm_var(
        &op,
        "extracted_facts",
        json!(facts),
        "A list of extracted facts parsed with `json.loads`.",
    );
    let mut inputs: Vec<&Var> = msg_vars.iter().collect();
    inputs.push(&p_extract);
    op.io(
        &inputs,
        &[&raw],
        "The LLM extracts facts from the messages given the extraction prompt.",
    );
    op.link(
        &raw,
        &clean,
        "Code blocks are removed from the raw response.",
    );
    op.link(
        &clean,
        &facts_var,
        &format!("The LLM extracts {} facts.", facts.len()),
    );
    if !facts.is_empty() {
        run.pairs_with_facts.insert(pair);
    }

    // 2. Update decision.
    let op = scope.op(
        OpSpec::new("memory_system.update_memory_decision", "update")
            .comment("Decide how to update the memory store using an LLM.")
            .meta("llm_model", json!(resp.model)),
    );
    if facts.is_empty() {
        let action = llm_var(
            &op,
            "update_action",
            json!({"memory": []}),
            "Memory update actions generated by an LLM.",
        );
        op.link(
            &facts_var,
            &action,
            "No facts are extracted, so the memory update actions are empty.",
        );
        return Ok(());
    }
    let mut similar: Vec<usize> = Vec::new();
    for f in &facts {
        for (i, _) in run.store.search(f, cfg.similar_k) {
            if !similar.contains(&i) {
                similar.push(i);
            }
        }
    }
    let updates = at_pair(faults, pair, Fault::update_at);
    // An update fault's targets: its anchored unit, else every unit holding its answer.
    let hit = |k: usize, u: &Unit, answer: &str| match faults.get(k).and_then(Fault::unit) {
        Some(id) => u.id == id,
        None => holds(&u.text, answer),
    };
    for &(k, answer) in &updates {
        let targets = run
            .store
            .units()
            .iter()
            .enumerate()
            .filter(|(_, u)| !u.deleted && hit(k, u, answer))
            .map(|(i, _)| i);
        for i in targets.collect::<Vec<_>>() {
            if !similar.contains(&i) {
                similar.push(i);
            }
        }
    }
    let old_units: Vec<Unit> = similar
        .iter()
        .filter_map(|&i| run.store.units().get(i).cloned())
        .collect();
    let old_json: Vec<Value> = old_units
        .iter()
        .enumerate()
        .map(|(k, u)| json!({"id": k.to_string(), "text": u.text}))
        .collect();
    let task = prompts::update_task(&Value::from(old_json), &facts);
    let req = prompts::update_request(prompts, &task);
    let resp = run.chat(llm, &req).await?;
    let mut raw_text = resp.content.clone();
    let mut cleaned = prompts::strip_code_block(&resp.content);
    let mut events = parse_list(&cleaned, "memory");
    for &(k, answer) in &updates {
        let old_texts = old_units.iter().map(|u| u.text.as_str());
        let picks = |local: usize, _: &str| old_units.get(local).is_some_and(|u| hit(k, u, answer));
        if force_update_where(&mut events, old_texts, &facts, answer, picks) {
            run.applied[k] = Some(op.id().to_owned());
        }
        // The fault is the LLM's: its reply is what it would have said.
        raw_text = json!({ "memory": events }).to_string();
        cleaned.clone_from(&raw_text);
    }
    let span = run.spans.llm(
        "mem0.update_memory_decision",
        &req,
        &raw_text,
        &resp.model,
        resp.usage,
    );
    run.spans.tie(op.id(), &span);
    let listed: Vec<Value> = old_units
        .iter()
        .enumerate()
        .map(|(k, u)| json!({"id": k.to_string(), "memory_id": u.id, "text": u.text}))
        .collect();
    let existing = op.var(
        VarSpec::content("existing_memories", Value::from(listed))
            .category("similar_memories")
            .comment(
                "The existing memories similar to the new facts, merged into the update task.",
            ),
    );
    let old_vars: Vec<&Var> = old_units.iter().map(|u| &u.var).collect();
    if !old_vars.is_empty() {
        op.io(
            &old_vars,
            &[&existing],
            "Similar existing memories are found for the new facts.",
        );
    }
    let p_update = prompt_var(
        scope,
        prompts::UPDATE_DECISION,
        &prompts.update_decision,
        "update",
        "The memory update decision prompt template.",
    );
    let task_var = op.var(
        VarSpec::content("memory_update_task_instruction", json!(task))
            .category("prompt")
            .comment("A concrete memory update task."),
    );
    op.io(
        &[&facts_var, &existing, &p_update],
        &[&task_var],
        "Inserted into the concrete memory update task.",
    );
    let raw = llm_var(
        &op,
        "raw_memory_update_decision",
        json!(raw_text),
        "A raw memory update decision from an LLM.",
    );
    op.link(
        &task_var,
        &raw,
        "The LLM generates a memory update decision.",
    );
    let clean = llm_var(
        &op,
        "memory_update_decision_with_code_block_removing",
        json!(cleaned),
        "A post-processed decision.",
    );
    op.link(
        &raw,
        &clean,
        "Code blocks are removed from the raw response.",
    );
    let action = op.var(
        VarSpec::content("update_action", json!({"memory": events}))
            .render(Render::Json)
            .category("llm_response")
            .comment("Memory update actions generated by an LLM."),
    );
    op.link(
        &clean,
        &action,
        &format!("The LLM generates {} memory update actions.", events.len()),
    );
    for e in &events {
        let text = e["text"].as_str().unwrap_or_default();
        let local = e["id"].as_str().unwrap_or_default();
        let target = local
            .parse::<usize>()
            .ok()
            .and_then(|k| old_units.get(k))
            .and_then(|u| run.store.get(&u.id))
            .cloned();
        match e["event"].as_str().unwrap_or_default() {
            "ADD" if !text.is_empty() => {
                let id = unit_id(cfg.seed, pair, text);
                if run.store.get(&id).is_some() {
                    continue;
                }
                let var = op.var(
                    VarSpec::named(
                        &format!("memory-unit-{id}"),
                        unit_value(&id, Some(text), timestamp, false),
                    )
                    .render(Render::Json)
                    .category("memory_entry")
                    .comment("A memory unit in the memory system."),
                );
                op.link(
                    &action,
                    &var,
                    &format!("A new memory entry '{id}' is created."),
                );
                run.spans.write(
                    "mem0.vector_store.insert",
                    &json!({"id": id, "data": text}),
                    &[json!({"id": id, "memory": text, "event": "ADD"})],
                );
                run.store.add(Unit {
                    id,
                    text: text.to_owned(),
                    timestamp: timestamp.to_owned(),
                    deleted: false,
                    var,
                });
            }
            "UPDATE" if !text.is_empty() => {
                let Some(u) = target.filter(|u| !u.deleted && u.text != text) else {
                    continue;
                };
                let var = op.mutate(
                    &u.var,
                    &unit_value(&u.id, Some(text), &u.timestamp, false),
                    Render::Json,
                    &[&action],
                    &format!("An existing memory unit '{}' is updated.", u.id),
                );
                run.spans.write(
                    "mem0.vector_store.update",
                    &json!({"id": u.id, "data": text}),
                    &[json!({"id": u.id, "memory": text, "event": "UPDATE", "previous_memory": u.text})],
                );
                run.store.update(&u.id, text, var);
            }
            _ => {}
        }
    }

    // 3. Deletion check.
    let del_req = prompts::delete_request(prompts, &task);
    let resp = run.chat(llm, &del_req).await?;
    let mut doomed: Vec<Unit> = Vec::new();
    for e in parse_list(&prompts::strip_code_block(&resp.content), "memory") {
        let local = e["id"].as_str().and_then(|k| k.parse::<usize>().ok());
        if e["event"].as_str() == Some("DELETE") {
            if let Some(u) = local
                .and_then(|k| old_units.get(k))
                .and_then(|u| run.store.get(&u.id))
                .filter(|u| !u.deleted)
            {
                doomed.push(u.clone());
            }
        }
    }
    let (anchored, by_answer): (Vec<_>, Vec<_>) = at_pair(faults, pair, Fault::deletion_at)
        .into_iter()
        .partition(|(k, _)| faults.get(*k).and_then(Fault::unit).is_some());
    let mut fault_ix = force_deletions(&by_answer, run.store.units(), &mut doomed);
    let anchored: Vec<(usize, &str)> = anchored
        .iter()
        .filter_map(|(k, _)| Some((*k, faults.get(*k)?.unit()?)))
        .collect();
    fault_ix.extend(force_unit_deletions(
        &anchored,
        run.store.units(),
        &mut doomed,
    ));
    let said: Vec<Value> = doomed
        .iter()
        .enumerate()
        .map(|(k, u)| json!({"id": k.to_string(), "text": u.text, "event": "DELETE"}))
        .collect();
    let Some(op) = deletion_op(
        run,
        scope,
        ("mem0.delete_memory", &del_req, &resp),
        &said,
        fault_ix,
        !doomed.is_empty(),
        OpSpec::new("memory_system.delete_memory", "deletion")
            .comment("Decide with an LLM whether an existing memory is retracted by the new facts, and delete it from the memory store.")
            .meta("llm_model", json!(resp.model)),
    ) else {
        return Ok(());
    };
    let del = op.var(
        VarSpec::content("delete_action", json!({"memory": said}))
            .render(Render::Json)
            .category("llm_response")
            .comment("A memory deletion decision generated by an LLM."),
    );
    op.io(
        &[&facts_var, &p_update],
        &[&del],
        "The LLM compares the new facts with the existing memory.",
    );
    let marker = op.var(
        VarSpec::content("delete_marker", json!("DELETED"))
            .category("marker")
            .comment("It marks the memory unit is deleted successfully."),
    );
    for u in doomed {
        let var = op.mutate(
            &u.var,
            &unit_value(&u.id, None, timestamp, true),
            Render::Json,
            &[&del],
            &format!("The memory unit '{}' is deleted (tombstone version).", u.id),
        );
        op.link(
            &u.var,
            &marker,
            &format!("The memory unit '{}' is deleted successfully.", u.id),
        );
        run.spans.write(
            "mem0.vector_store.delete",
            &json!({"id": u.id}),
            &[json!({"id": u.id, "memory": u.text, "event": "DELETE"})],
        );
        run.store.delete(&u.id, var);
    }
    Ok(())
}
